"""What the sandbox tests of both runtimes share: the sandboxes, a tool binding, the host
secret that must never reach a program, and the checks that no sandboxed process is left."""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import psutil
import pytest

from codegen.codemode.runtime import Bindings, CodeRunFailed
from processes import left_processes

SANDBOXES = ("auto", "bubblewrap", "namespaces")
SECRET = "codegen-test-secret-2f6c1d"
"""Put in the host's environment; no sandboxed program may see it."""


async def answer(name: str, arguments: Any) -> Any:
    return {"tool": name, "args": arguments}


BINDINGS = Bindings(("echo",), answer)


def assert_no_process_left() -> None:
    for _ in range(100):
        left = left_processes()
        if not left:
            return
        psutil.wait_procs(left, timeout=0.1)
    assert not left_processes(), "sandboxed processes left running"


def text_of(outcome: Any) -> str:
    if isinstance(outcome, CodeRunFailed):
        return f"{outcome.kind}: {outcome} {outcome.logs}"
    return f"{outcome.result!r} {outcome.logs}"


@pytest.fixture(autouse=True, scope="module")
def host_secret() -> Iterator[None]:
    os.environ["CODEGEN_HOST_SECRET"] = SECRET
    yield
    os.environ.pop("CODEGEN_HOST_SECRET", None)
