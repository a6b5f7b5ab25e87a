"""A Python snippet run in fresh interpreters under several hash seeds, for the tests that
pin output as byte-identical across `PYTHONHASHSEED`s."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

from conftest import ROOT

SEEDS = ("0", "1", "4242")


def outputs(script: str, seeds: Sequence[str] = SEEDS, home: Path | None = None) -> list[str]:
    """What `script` prints under each of `seeds`, run from the repository root (`HOME` set
    to `home` when given: no cache of the user's to fall back on)."""
    found = []
    for seed in seeds:
        env = {**os.environ, "PYTHONHASHSEED": seed}
        if home is not None:
            env["HOME"] = str(home)
        run = subprocess.run(
            [sys.executable, "-c", script],
            capture_output=True,
            text=True,
            check=True,
            env=env,
            cwd=ROOT,
        )
        found.append(run.stdout)
    return found
