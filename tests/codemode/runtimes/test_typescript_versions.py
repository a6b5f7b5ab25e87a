"""The TypeScript runtime on every Node it supports (20, 22 and 24, pinned: see
`typescript_nodes.py`) with every way it strips types there: TypeScript 5's
`transpileModule` in the worker, TypeScript 7's native `tsc` in a sandbox of its own before
the worker (what `npm install typescript` installs today) and Node's own
`module.stripTypeScriptTypes` (Node 22.13 and newer). Each runs in the default sandbox:
`check()` (what `codegen serve` runs at start), then programs with types, a tool call, logs,
an error's line and a syntax error's line. TypeScript 7's compile step is held to the run's
limits in every sandbox and leaves nothing behind."""

from __future__ import annotations

import asyncio
import os
import re
from pathlib import Path
from typing import Any

import pytest

from codegen.codemode.calls.cancellation import AbortController
from codegen.codemode.run_code.code_runtime import Bindings, CodeRunFailed, RunOutput
from codegen.codemode.run_code.run_limits import RuntimeLimits
from codegen.codemode.runtimes.native_emit import (
    GLOBALS,
    PROGRAM_HEAD,
    PROGRAM_TAIL,
    compiler_image,
)
from codegen.codemode.runtimes.node_probe import NodeUnavailable, probe_node
from codegen.codemode.runtimes.typescript import WORKER
from support.processes import TSC_MARK, left_processes
from support.typescript_nodes import MATRIX, STRIPPERS, TYPESCRIPT, TYPESCRIPT7, node, runtime_with

PROGRAM = """interface Row { id: number; name: string }
type Page = { rows: Row[] };
const page = (await tools.list_rows({ limit: 2 })) as Page;
console.log(`rows: ${page.rows.length}`);
function names<T extends Row>(rows: T[]): string[] {
  return rows.map((row) => row.name);
}
return names(page.rows);
"""


async def list_rows(name: str, arguments: Any) -> Any:
    assert name == "list_rows" and arguments == {"limit": 2}
    return {"rows": [{"id": 1, "name": "a"}, {"id": 2, "name": "b"}]}


BINDINGS = Bindings(("list_rows",), list_rows)


async def outcomes(
    options: dict[str, Any], programs: list[str], limits: RuntimeLimits | None = None
) -> list[RunOutput | str]:
    """`check()` (unless `limits` are the test's), then each program's output, or its
    failure as `kind: message`."""
    mounted = runtime_with(options, limits)
    results: list[RunOutput | str] = []
    try:
        if limits is None:
            await mounted.check()
        for program in programs:
            try:
                results.append(await mounted.run(program, BINDINGS, AbortController().signal))
            except CodeRunFailed as failure:
                results.append(f"{failure.kind}: {failure.message}")
    finally:
        await mounted.aclose()
    return results


@pytest.mark.parametrize(("major", "stripper"), MATRIX, ids=[f"node{m}-{s}" for m, s in MATRIX])
def test_every_node_runs_programs_with_every_way_of_stripping_types(
    major: int, stripper: str
) -> None:
    options = {"node": node(major), **STRIPPERS[stripper]}
    typed, failing, broken = asyncio.run(
        outcomes(
            options,
            [
                PROGRAM,
                "const a: number = 1;\n\nthrow new RangeError(`boom ${a}`);",
                "let a = 1;\nlet b = ;",
            ],
        )
    )
    assert isinstance(typed, RunOutput), typed
    assert typed.result == ["a", "b"] and typed.logs == ["rows: 2"]
    assert failing == "exception: RangeError: boom 1\n  at line 3 of the program", failing
    assert isinstance(broken, str) and broken.startswith("exception: SyntaxError"), broken
    assert re.search(r"\(line 2\b", broken), broken


@pytest.mark.parametrize("stripper", ["transpile", "emit"])
def test_both_typescript_compilers_compile_enums(stripper: str) -> None:
    """Unlike Node's own stripping (erasable syntax only), TypeScript 5 and 7 compile enums
    and namespaces."""
    options = {"node": node(20), **STRIPPERS[stripper]}
    [output] = asyncio.run(outcomes(options, ["enum Color { Red, Green }\nreturn Color.Green"]))
    assert isinstance(output, RunOutput) and output.result == 1, output


def test_typescript_7_compiles_with_its_native_tsc_in_a_sandbox_of_its_own() -> None:
    install = probe_node(node(20), TYPESCRIPT7)
    assert install.typescript is not None and install.typescript.version.startswith("7.")
    assert install.stripper == "compiled"
    assert install.tsc is not None and install.tsc.endswith("/lib/tsc")
    assert install.image(WORKER).paths == (WORKER,)  # nothing of it enters the worker's
    image = compiler_image(install.tsc, install.typescript.version)
    # its folder (the binary wants its lib.d.ts beside it) and the global types, no more
    assert image.executable == install.tsc and image.epoll  # Go's runtime waits with epoll
    assert image.paths == (os.path.dirname(install.tsc), GLOBALS)
    assert image.answer == f"Version {install.typescript.version}"
    assert "TypeScript 7." in install.describe() and "native tsc" in install.describe()
    five = probe_node(node(20), TYPESCRIPT)
    assert five.typescript is not None and five.typescript.tsc is None
    assert five.stripper == five.typescript.directory


@pytest.mark.parametrize("major", [22, 24])
def test_auto_takes_nodes_own_stripping_where_it_has_it(major: int) -> None:
    assert probe_node(node(major), TYPESCRIPT7).stripper == "node"
    assert probe_node(node(major), TYPESCRIPT7, "typescript").stripper == "compiled"
    assert probe_node(node(20), TYPESCRIPT7).stripper == "compiled"


def test_node_20_cannot_strip_types_itself_and_says_which_version_can() -> None:
    with pytest.raises(NodeUnavailable) as raised:
        probe_node(node(20), None, "node")
    message = str(raised.value)
    assert re.search(r"Node 20\.\d+\.\d+ \(.+\) cannot strip types itself", message), message
    assert "(that needs 22.13 or newer)" in message


def test_the_worker_wraps_programs_as_the_host_does_for_tsc() -> None:
    """A program `tsc` compiles on the host is wrapped as the worker wraps the ones it
    compiles itself: the same names in scope, line 1 the program's first."""
    worker = Path(WORKER).read_text(encoding="utf-8")
    [header] = re.findall(r"const HEADER = '(.*)';", worker)
    assert header.replace("\\n", "\n") == PROGRAM_HEAD
    assert 'HEADER + program + "\\n})"' in worker and PROGRAM_TAIL == "\n})"


@pytest.mark.parametrize("sandbox", ["none", "bubblewrap", "namespaces"])
def test_a_syntax_error_from_tsc_names_the_programs_line(sandbox: str) -> None:
    options = {"node": node(20), **STRIPPERS["emit"], "sandbox": sandbox}
    [at_start, at_end] = asyncio.run(outcomes(options, ["return )", "const a = {\n  b: 1,\n"]))
    assert at_start == "exception: SyntaxError: Expression expected. (line 1)", at_start
    assert isinstance(at_end, str) and at_end.startswith("exception: SyntaxError"), at_end


LONG_SUM = "const x: number = " + "+".join(["1"] * 50_000) + ";\nreturn x"
"""A program TypeScript 7's tsc takes many CPU seconds over (its time grows with the square
of this expression's length)."""

DEEP = "const x = " + "[" * 1_000_000 + "]" * 1_000_000 + ";\nreturn 1"
"""A program TypeScript 7's tsc recurses a million levels into, which takes it a gigabyte
of stack."""


@pytest.mark.slow
@pytest.mark.parametrize("sandbox", ["none", "bubblewrap", "namespaces"])
@pytest.mark.parametrize(
    ("program", "limits", "outcome"),
    [
        (LONG_SUM, RuntimeLimits(timeout=60, cpu_seconds=1), "timeout: .* more than 1 CPU seconds"),
        (
            LONG_SUM,
            RuntimeLimits(timeout=1.5, cpu_seconds=60),
            "timeout: .* longer than 1.5 seconds",
        ),
        (DEEP, RuntimeLimits(timeout=60, memory_bytes=256 * 1024 * 1024), "exception: .* 256 MB"),
    ],
    ids=["cpu", "timeout", "memory"],
)
def test_tsc_is_held_to_the_runs_limits(
    program: str, limits: RuntimeLimits, outcome: str, sandbox: str
) -> None:
    """The compiler's CPU seconds, data and the run's deadline bound it in every sandbox, the
    failure is the run's, and no compiler is left."""
    options = {"node": node(20), **STRIPPERS["emit"], "sandbox": sandbox}
    [said] = asyncio.run(outcomes(options, [program], limits))
    assert isinstance(said, str) and re.fullmatch(outcome, said), said
    assert not left_processes((TSC_MARK,))
