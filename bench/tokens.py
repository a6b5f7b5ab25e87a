"""The offline `o200k_base` token counter of the benchmarks: `tests/support/o200k.py`, which the
tests use too (the vocabulary rebuilt from the project's pinned npm `tiktoken` package and
checked against the SHA-256 tiktoken pins for the official file; its cache in `bench/.cache/`).
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from support.o200k import O200K_SHA256, o200k_counter

__all__ = ["O200K_SHA256", "o200k_counter"]
