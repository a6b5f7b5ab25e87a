"""Programs checked before they run (TypeScript): a definite mistake in a call of a tool is
certain, with the program's own line and tool names and help; what a checker cannot know
(a name found by search, `any`, a value read from a result, anything computed or spread) is
never certain; a checker that times out or crashes gives an outcome that says so, never a
refusal.

Both compilers the checker runs on are tested, each in the default sandbox: TypeScript 5
(its compiler API in Node) and TypeScript 7 (its native `tsc --api`, driven by the
package's client). The suites (`program_suites.py`: a natural program per corpus tool, and
wrong programs of every kind on the same tools) run through both."""

from __future__ import annotations

import asyncio
import collections
import os
import signal
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest

from codegen.codemode import ToolCall, ToolRegistry, ToolSpec
from codegen.codemode.calls.cancellation import AbortSignal
from codegen.codemode.checkers.typescript_checker import TypeScriptChecker
from codegen.codemode.checkers.typescript_server import (
    CheckerUnavailable,
    Compiler,
    find_compiler,
)
from codegen.codemode.checks.outcome import CheckLimits, CheckOutcome
from codegen.codemode.checks.typescript_declarations import (
    TOOLS_TYPE,
    NotCheckable,
    checkable_declarations,
)
from codegen.codemode.run_code.code_runtime import Bindings, RunOutput
from codegen.codemode.sandbox.launchers import children
from codegen.engine import compile_definitions
from codegen.load.definitions import ToolDefinition
from codegen.render.sections.typescript import render_typescript_section_sdk
from support.program_suites import WRONG_KINDS, corpus_catalog, natural_programs, wrong_programs
from support.typescript_nodes import TYPESCRIPT, TYPESCRIPT7, node, staged_options

COMPILERS = {"typescript5": (TYPESCRIPT, 20), "typescript7": (TYPESCRIPT7, 24)}
"""Each compiler the checker runs on: its package, and the Node major that runs it (20:
`--experimental-permission`; 24: `--permission`)."""


def compiler(name: str) -> Compiler:
    """The compiler, where the sandbox's uid on a root host can reach it."""
    package, major = COMPILERS[name]
    found = staged_options({"node": node(major), "typescript": package})
    return find_compiler(found["node"], found["typescript"])


def catalog_text(definitions: list[ToolDefinition]) -> str:
    compiled = compile_definitions(definitions)
    assert compiled.catalog is not None
    return render_typescript_section_sdk(compiled.catalog)


ITEM = {
    "type": "object",
    "properties": {"id": {"type": "string"}, "size": {"type": "number"}},
    "required": ["id"],
    "additionalProperties": False,
}
NOTE_SCHEMA = {
    "type": "object",
    "properties": {
        "title": {"type": "string"},
        "count": {"type": "integer"},
        "ratio": {"type": "number"},
        "mode": {"enum": ["fast", "slow"]},
        "point": {"type": "array", "prefixItems": [{"type": "number"}, {"type": "number"}]},
        "items": {"type": "array", "items": ITEM},
        "filter": {
            "type": "object",
            "properties": {"tag": {"type": "string"}, "level": {"enum": [1, 2, 3]}},
            "required": ["tag"],
        },
    },
    "required": ["title"],
    "additionalProperties": False,
}
OUTPUT = {"type": "object", "properties": {"id": {"type": "string"}}, "required": ["id"]}
NOTES = catalog_text(
    [
        ToolDefinition("make_note", "Make a note.", NOTE_SCHEMA, OUTPUT),
        ToolDefinition("get-note", "One note.", NOTE_SCHEMA),
        ToolDefinition(
            "list_notes",
            "All notes.",
            {"type": "object", "properties": {"limit": {"type": "integer"}}},
        ),
    ]
)


@pytest.fixture(scope="module", params=sorted(COMPILERS))
def notes_checker(request: pytest.FixtureRequest) -> Iterator[TypeScriptChecker]:
    checker = TypeScriptChecker(
        NOTES, CheckLimits(timeout=20.0, start_timeout=60.0), compiler(request.param)
    )
    yield checker
    checker.close()


def checked(checker: TypeScriptChecker, program: str) -> CheckOutcome:
    outcome = checker.check_now(program)
    assert outcome.status == "checked", outcome.note
    return outcome


# --- each kind of mistake ---------------------------------------------------------------------

FIRST = 'await tools.make_note({ title: "first" });\n'
MISTAKES = [
    ("unknown-tool", 'await tools.make_nots({ title: "x" });', "closest: tools.make_note"),
    ("unknown-tool", 'await tools["get-nope"]({ title: "x" });', 'closest: tools["get-note"]'),
    ("missing-argument", "await tools.make_note({ count: 1 });", "make_note(args: {"),
    ("missing-argument", "await tools.make_note();", "make_note(args: {"),
    ("missing-argument", 'await tools.make_note({ title: "x", items: [{}] });', "interface Items"),
    ("unknown-argument", 'await tools.make_note({ title: "x", colour: "red" });', "make_note("),
    ("wrong-type", "await tools.make_note({ title: 42 });", "title: string"),
    ("wrong-type", 'await tools.make_note({ title: "x", count: "many" });', "count?: number"),
    ("wrong-type", 'await tools.make_note({ title: "x", items: [{ id: 5 }] });', "interface Items"),
    ("wrong-type", "await tools.make_note({ title: null });", "title: string"),
    ("wrong-type", 'await tools.make_note("x");', "make_note(args: {"),
    ("not-allowed-value", 'await tools.make_note({ title: "x", mode: "medium" });', "mode?:"),
    (
        "not-allowed-value",
        'await tools["get-note"]({ title: "x", mode: "medium" });',
        '"get-note"(',
    ),
    (
        "not-allowed-value",
        'await tools.make_note({ title: "x", filter: { tag: "a", level: 7 } });',
        "interface Filter",
    ),
    ("arity", 'await tools.make_note({ title: "x" }, 2);', "make_note(args: {"),
]


@pytest.mark.parametrize(("kind", "line", "help_text"), MISTAKES)
def test_each_kind_of_mistake_is_certain_on_its_line_with_help(
    notes_checker: TypeScriptChecker, kind: str, line: str, help_text: str
) -> None:
    outcome = checked(notes_checker, FIRST + line + "\nreturn 1;\n")
    assert [(d.line, d.kind) for d in outcome.refusing] == [(2, kind)], outcome.diagnostics
    (mistake,) = outcome.refusing
    assert help_text in mistake.help
    assert mistake.column > 0
    assert TOOLS_TYPE not in mistake.message
    if kind != "unknown-tool":
        assert "tools.make_note" in mistake.message or 'tools["get-note"]' in mistake.message


def test_the_messages_name_the_call_the_argument_and_the_value(
    notes_checker: TypeScriptChecker,
) -> None:
    cases = {
        'await tools.make_nots({ title: "x" })': "`tools` has no tool `make_nots`",
        'await tools.make_note({ titel: "x" })': "`tools.make_note` has no argument `titel`; did you mean `title`?",
        "await tools.make_note({ count: 1 })": "`tools.make_note`: missing argument `title`",
        'await tools.make_note({ title: "x", count: "many" })': (
            "`tools.make_note`: the argument `count` is \"many\": Type 'string' is not "
            "assignable to type 'number'."
        ),
        'await tools.make_note({ title: "x", items: [{ id: "a" }, { id: 5 }] })': (
            "`tools.make_note`: the argument `items[1].id` is 5:"
        ),
        "await tools.make_note()": "`tools.make_note()` passes no arguments, and the tool requires some",
        'await tools.make_note({ title: "x" }, {})': "`tools.make_note` takes one object of arguments, not 2",
    }
    for program, message in cases.items():
        (mistake,) = checked(notes_checker, program).refusing
        assert mistake.message.startswith(message), (program, mistake.message)


def test_lines_and_columns_are_the_programs_own(notes_checker: TypeScriptChecker) -> None:
    program = 'const text = `\nline "😀"\n`;\nconst face = "😀";  await tools.make_note({ title: text, mode: "no" });\n'
    (mistake,) = checked(notes_checker, program).refusing
    assert (mistake.line, mistake.kind) == (4, "not-allowed-value")
    prefix = 'const face = "😀";  await tools.make_note({ title: text, '
    assert mistake.column == len(prefix) + 1  # in characters, the emoji one


def test_a_program_that_is_not_text_is_not_checked(notes_checker: TypeScriptChecker) -> None:
    outcome = notes_checker.check_now('await tools.make_nots({ title: "\ud800" });')
    assert (outcome.status, outcome.refusing) == ("skipped", ())
    assert outcome.note == "the program was not checked: it is not UTF-8 text"


# --- what is never certain ---------------------------------------------------------------------

NEVER_REFUSED = [
    # names found at run time
    'const name = "make_note";\nawait tools[name as string]({ title: 1 });',
    'const found = await catalog.search("note");\nawait tools[found.names[0]]({ title: 1 });',
    "for (const name of await catalog.names()) await tools[name]({});",
    'const hits = await catalog.search(["a", "b"], { k: 3, server: null });\nconsole.log(hits.text, hits.matched);',
    'const pick: string = "make_nots";\nawait tools[pick]({ anything: true });',
    # any, and values computed or read from results
    'const args: any = { count: "x" };\nawait tools.make_note(args);',
    "const raw = JSON.parse('{}');\nawait tools.make_note(raw);\nawait tools.make_note({ title: raw.t, count: raw.c });",
    'const note = await tools.make_note({ title: "x" });\nawait tools.make_note({ title: "y", count: note.id as any });',
    'const note = await tools.make_note({ title: "x" });\nawait tools.make_note({ title: "y", count: Number(note.id) });',
    'const base: Record<string, unknown> = { title: "x" };\nawait tools.make_note({ ...base });',
    "const base = {};\nawait tools.make_note({ ...base, count: 1 } as any);",
    'const key = "title";\nawait tools.make_note({ [key]: "x" });',
    'const title = "x";\nawait tools.make_note({ title });',
    'const mode = Math.random() > 0.5 ? "fast" : "slow";\nawait tools.make_note({ title: "x", mode });',
    "await tools.make_note({ title: `${1 + 1}`, count: 2 ** 3, ratio: 0.5 });",
    'await tools.make_note({ title: "x", point: [1, 2], items: [{ id: "a", size: 3 }] });',
    'await tools.make_note({ title: "x", count: undefined, filter: { tag: "t", level: 2 } });',
    'await tools.make_note({ title: "x", mode: "fast" } as const);',
    'const rest: { title?: string } = { title: "x" };\nawait tools.make_note({ title: 42, ...rest });',
    'const more: {}[] = [];\nawait tools.make_note({ title: "x" }, ...more);',
    'const item: object = { id: "a" };\nawait tools.make_note({ title: "x", items: [item as {}] } as {});',
    'const item: {} = { id: "a" };\nawait tools.make_note({ title: "x", items: [item] });',
    "await tools.list_notes();\nawait tools.list_notes({});",
    # the program's own helpers, types and names
    "async function make(title) {\n  return await tools.make_note({ title });\n}\nawait make(3);",
    "interface Opts { a: number }\nconst o: Opts = { a: 1, b: 2 };\nconsole.log(o);",
    "function twice<T>(x: T): [T, T] { return [x, x]; }\nconsole.log(twice(1));",
    "const tools2 = tools;\nconst results = await Promise.all([1, 2].map((n) => tools2.make_note({ title: String(n) })));\nreturn results.map((r) => r.id);",
    "const tools = { make_note: (a: unknown) => a };\nawait tools.make_note({ nothing: 1 });",
    "try {\n  await tools.make_note({ title: 'x' });\n} catch (error) {\n  console.log(error.message, error instanceof ToolCallError ? error.toolName : '');\n}",
    "const fs = await import(\"node:fs\");\nconsole.log(typeof fs, process.version, new URL('http://x').host);\nsetTimeout(() => {}, 1);",
    'await tools.make_note({ title: "x", point: JSON.parse("[1]") });',
    'await tools.make_note({ title: "x", mode: ("fast" as "fast" | "slow") });',
    'catalog.search("x", { k: 3, sever: "a" });',
    "return await tools.make_note({ title: 'a' }).then((r) => r.id);",
    "this is not TypeScript",
    'const text = `\n${"a"}\n`;\nawait tools.make_note({ title: text });',
]


@pytest.mark.parametrize("program", NEVER_REFUSED)
def test_what_a_checker_cannot_know_is_never_certain(
    notes_checker: TypeScriptChecker, program: str
) -> None:
    outcome = checked(notes_checker, program)
    assert outcome.refusing == (), outcome.refusing


def test_a_value_read_from_a_result_is_reported_but_not_certain(
    notes_checker: TypeScriptChecker,
) -> None:
    program = 'const note = await tools.make_note({ title: "x" });\nawait tools.make_note({ title: "y", count: note.id });'
    outcome = checked(notes_checker, program)
    (found,) = outcome.diagnostics
    assert (found.line, found.kind, found.certain) == (2, "wrong-type", False)
    assert found.message.startswith("`tools.make_note`: the argument `count` is note.id:")


def test_a_key_inside_an_argument_the_declarations_may_leave_open_is_not_certain(
    notes_checker: TypeScriptChecker,
) -> None:
    """The TypeScript section spells open and closed objects alike: an unknown key of the
    arguments is a mistake, one deeper down may be taken."""
    program = 'await tools.make_note({ title: "x", filter: { tag: "a", colour: 1 } });'
    (found,) = checked(notes_checker, program).diagnostics
    assert (found.kind, found.certain) == ("unknown-argument", False)
    assert found.message.startswith("`tools.make_note`: the argument `filter` has no key `colour`")


def test_tools_the_program_names_itself_are_not_the_declared_ones(
    notes_checker: TypeScriptChecker,
) -> None:
    program = "function run(tools: any) {\n  return tools.make_nots({});\n}\nawait tools.make_nots({ title: 'x' });"
    assert checked(notes_checker, program).refusing == ()


# --- the declarations ----------------------------------------------------------------------------


def test_the_declarations_declare_tools_as_an_interface_with_catalog_and_node_globals() -> None:
    made = checkable_declarations(NOTES)
    assert f"interface {TOOLS_TYPE} {{" in made.text
    assert f"declare const tools: {TOOLS_TYPE};" in made.text
    assert "declare const tools: {" not in made.text
    assert "declare const catalog: {" in made.text and "declare const console:" in made.text
    assert [t.name for t in made.tools] == ["get-note", "list_notes", "make_note"]
    assert made.calls() == {
        "get-note": 'tools["get-note"]',
        "list_notes": "tools.list_notes",
        "make_note": "tools.make_note",
    }
    declaration = made.by_name()["make_note"].declaration
    assert declaration.startswith(" // Make a note.\n make_note(args: {")
    assert "}): Promise<MakeNoteOutput>" in declaration
    assert "interface MakeNoteOutput" in declaration and "interface Items" in declaration


def test_a_text_that_is_not_a_section_is_refused() -> None:
    with pytest.raises(NotCheckable):
        checkable_declarations("declare const x: number;\n")
    with pytest.raises(NotCheckable):
        checkable_declarations("declare const tools: {\n};\n")


@pytest.mark.parametrize("name", sorted(COMPILERS))
def test_declarations_the_compiler_cannot_read_leave_programs_unchecked(name: str) -> None:
    broken = NOTES.replace(
        " list_notes(args: { limit?: number }): Promise<JsonValue>",
        " list_notes(args: { limit?: }): Promise<",
    )
    checker = TypeScriptChecker(broken, CheckLimits(start_timeout=60.0), compiler(name))
    try:
        outcome = checker.check_now("await tools.make_nots({});")
        assert outcome.status == "skipped"
        assert outcome.note.startswith("the program was not checked: the declarations do not parse")
        assert checker.check_now("return 1").status == "skipped"
    finally:
        checker.close()


def test_no_typescript_package_means_no_checker(tmp_path: Any) -> None:
    with pytest.raises(CheckerUnavailable, match="the `typescript` package"):
        find_compiler(node(20), str(tmp_path))


# --- a checker that fails -------------------------------------------------------------------------

PERMUTATIONS = (
    "type Perm<T, U = T> = [T] extends [never] ? [] : T extends U ? [T, ...Perm<Exclude<U, T>>] : never;\n"
    "type P = Perm<'a' | 'b' | 'c' | 'd' | 'e' | 'f' | 'g' | 'h' | 'i' | 'j' | 'k' | 'l'>;\n"
    "const p: P = ['z'];\n"
    "await tools.make_nots({});\n"
)
"""A type whose every permutation the compiler builds: minutes, and gigabytes."""
HUGE_UNION = (
    "type D = '0' | '1' | '2' | '3' | '4' | '5' | '6' | '7' | '8' | '9';\n"
    "type N = `${D}${D}${D}${D}${D}`;\n"
    "type M = `${N}${N}`;\n"
    "const x: M = '1';\n"
)
DEEP = (
    "type Deep<T, N extends unknown[] = []> = N['length'] extends 5000 ? T : Deep<{ v: T }, [...N, 0]>;\n"
    "const d: Deep<string> = 'x' as any;\n"
    "let e: Deep<number> = d;\n"
)


@pytest.mark.parametrize("name", sorted(COMPILERS))
def test_a_checker_that_times_out_says_so_and_the_next_check_starts_a_new_one(name: str) -> None:
    checker = TypeScriptChecker(NOTES, CheckLimits(timeout=1.0, start_timeout=60.0), compiler(name))
    try:
        checker.warm()
        outcome = checker.check_now(PERMUTATIONS)
        assert outcome.status == "timeout" and outcome.refusing == ()
        assert outcome.note == (
            "the program was not checked: the checker took longer than 1 s and was stopped"
        )
        assert checker.check_now("await tools.make_nots({});").refusing
        assert checker.starts == 2
    finally:
        checker.close()


@pytest.mark.parametrize("name", sorted(COMPILERS))
def test_type_level_programs_never_refuse(name: str) -> None:
    checker = TypeScriptChecker(NOTES, CheckLimits(timeout=5.0, start_timeout=60.0), compiler(name))
    try:
        for program in (HUGE_UNION, DEEP):
            outcome = checker.check_now(program)
            assert outcome.status in ("checked", "timeout") and outcome.refusing == ()
    finally:
        checker.close()


@pytest.mark.parametrize("name", sorted(COMPILERS))
def test_a_checker_that_crashes_says_so_and_the_next_check_starts_a_new_one(name: str) -> None:
    checker = TypeScriptChecker(
        NOTES, CheckLimits(timeout=60.0, start_timeout=60.0), compiler(name)
    )
    try:
        checker.warm()
        server = checker._server
        assert server is not None
        killer = threading.Timer(1.0, os.killpg, (server.process.pid, signal.SIGKILL))
        killer.start()
        outcome = checker.check_now(PERMUTATIONS)
        killer.join()
        assert outcome.status == "crashed" and outcome.refusing == ()
        assert outcome.note.startswith("the program was not checked: the checker failed (")
        assert checker.check_now("await tools.make_nots({});").refusing
    finally:
        checker.close()


@pytest.mark.parametrize("name", sorted(COMPILERS))
def test_a_checker_outlives_the_thread_that_started_it(name: str) -> None:
    """The sandbox dies with the thread that started it (PR_SET_PDEATHSIG follows the
    thread): a checker warmed in a loop's executor thread that then ends must stay warm."""
    checker = TypeScriptChecker(NOTES, CheckLimits(start_timeout=60.0), compiler(name))
    try:
        warming = threading.Thread(target=checker.warm)
        warming.start()
        warming.join()
        server = checker._server
        assert server is not None
        time.sleep(0.5)  # a parent-death signal is delivered at once; give it time to land
        assert server.process.poll() is None, "the checker died with its starting thread"
        assert checker.check_now("await tools.make_nots({});").refusing
        assert checker.starts == 1
    finally:
        checker.close()


@pytest.mark.parametrize("name", sorted(COMPILERS))
def test_the_checker_runs_in_the_sandbox(name: str) -> None:
    checker = TypeScriptChecker(NOTES, CheckLimits(start_timeout=60.0), compiler(name))
    try:
        checker.warm()
        server = checker._server
        assert server is not None
        pending, found = [server.process.pid], []
        while pending:
            pid = pending.pop()
            found.append(pid)
            pending.extend(children(pid))
        namespaces = {os.readlink(f"/proc/{pid}/ns/net") for pid in found}
        assert len(namespaces) == 2  # the launcher's (the host's) and the checker's own
        assert os.readlink("/proc/self/ns/net") in namespaces
    finally:
        checker.close()
    deadline = time.monotonic() + 10
    while any(os.path.exists(f"/proc/{pid}") and _alive(pid) for pid in found):
        assert time.monotonic() < deadline, "the checker's processes outlived it"
        time.sleep(0.05)


@pytest.mark.parametrize("name", sorted(COMPILERS))
def test_the_checker_reads_no_file_a_program_names(name: str, tmp_path: Any) -> None:
    """Even with no sandbox: a `/// <reference path>` names a file the compiler never
    reads (its words would show in the messages)."""
    planted = tmp_path / "planted.ts"
    planted.write_text("plantedSecretWord;\n")
    checker = TypeScriptChecker(NOTES, CheckLimits(sandbox="none"), compiler(name))
    try:
        program = f'/// <reference path="{planted}" />\nawait tools.make_note({{ title: 1 }});'
        outcome = checked(checker, program)
        assert [d.kind for d in outcome.diagnostics] == ["wrong-type"]
        assert "plantedSecretWord" not in repr(outcome)
    finally:
        checker.close()


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


# --- through the registry ---------------------------------------------------------------------------


class RecordingRuntime:
    """A TypeScript runtime that runs nothing: it records that a program got past the check."""

    language = "typescript"
    sandbox = "auto"

    def __init__(self) -> None:
        self.programs: list[str] = []

    async def run(self, program: str, bindings: Bindings, signal: AbortSignal) -> RunOutput:
        self.programs.append(program)
        return RunOutput(logs=["ran"])


@pytest.mark.parametrize("name", sorted(COMPILERS))
def test_the_registry_refuses_a_definite_mistake_before_the_runtime_sees_it(
    name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from codegen.codemode.checkers import typescript_checker

    chosen = compiler(name)
    monkeypatch.setattr(typescript_checker, "find_compiler", lambda *_: chosen)
    runtime = RecordingRuntime()
    registry = ToolRegistry(mode="code")
    registry.register(ToolSpec("make_note", "Make a note.", NOTE_SCHEMA, OUTPUT, handler=None))
    registry.mount_runtime(runtime)
    wrong = FIRST + 'await tools.make_note({ title: "x", mode: "medium" });\n'
    natural = (
        'const found = await catalog.search("note");\nawait tools[found.names[0]]({ x: 1 });\n'
    )

    async def main() -> list[Any]:
        try:
            return [
                await registry.execute(
                    ToolCall("run_code", {"description": "t", "code": code}, "c")
                )
                for code in (wrong, natural)
            ]
        finally:
            await registry.close_checkers()

    refused, ran = asyncio.run(main())
    assert refused.is_error and refused.error.kind == "check", refused.content
    assert "line 2: `tools.make_note`: the argument `mode`" in refused.content
    assert "make_note(args: {" in refused.content
    assert not ran.is_error, ran.content
    assert runtime.programs == [natural]


def test_the_registry_checks_with_the_mounted_runtimes_node_and_package() -> None:
    """No monkeypatching: the checker the registry makes runs the `node` and `typescript`
    the mounted runtime was given (neither is on PATH or installed globally here)."""
    package, major = COMPILERS["typescript7"]
    found = staged_options({"node": node(major), "typescript": package})
    runtime = RecordingRuntime()
    runtime.node = found["node"]  # type: ignore[attr-defined]
    runtime.typescript = found["typescript"]  # type: ignore[attr-defined]
    registry = ToolRegistry(mode="code")
    registry.register(ToolSpec("make_note", "Make a note.", NOTE_SCHEMA, OUTPUT, handler=None))
    registry.mount_runtime(runtime)
    wrong = FIRST + 'await tools.make_notes({ title: "x" });\n'

    async def main() -> Any:
        try:
            return await registry.execute(
                ToolCall("run_code", {"description": "t", "code": wrong}, "c")
            )
        finally:
            await registry.close_checkers()

    refused = asyncio.run(main())
    assert refused.is_error and refused.error.kind == "check", refused.content
    assert "make_note" in refused.content
    assert runtime.programs == []


# --- the suites ---------------------------------------------------------------------------------


@pytest.fixture(scope="module", params=sorted(COMPILERS))
def corpus_checker(request: pytest.FixtureRequest) -> Iterator[TypeScriptChecker]:
    section = render_typescript_section_sdk(corpus_catalog())
    checker = TypeScriptChecker(
        section, CheckLimits(timeout=20.0, start_timeout=120.0), compiler(request.param)
    )
    yield checker
    checker.close()


def test_the_natural_suite_is_never_refused(corpus_checker: TypeScriptChecker) -> None:
    programs = [p for p in natural_programs(corpus_catalog()) if p.typescript]
    assert len(programs) >= 300
    refused = []
    for program in programs:
        assert program.typescript is not None
        outcome = checked(corpus_checker, program.typescript)
        if outcome.refusing:
            refused.append((program.label, outcome.refusing))
    assert refused == []


def test_the_wrong_suite_is_caught_on_the_mistakes_line(corpus_checker: TypeScriptChecker) -> None:
    programs = [p for p in wrong_programs(corpus_catalog()) if p.typescript]
    caught: collections.Counter[str] = collections.Counter()
    total: collections.Counter[str] = collections.Counter()
    for program in programs:
        assert program.typescript is not None
        outcome = checked(corpus_checker, program.typescript)
        total[program.kind] += 1
        lines = {d.line for d in outcome.refusing}
        kinds = {d.kind for d in outcome.refusing if d.line == program.line}
        if lines == {program.line} and program.kind in kinds:
            caught[program.kind] += 1
    assert set(total) == set(WRONG_KINDS)
    for kind in WRONG_KINDS:
        assert caught[kind] >= 0.95 * total[kind], (kind, caught[kind], total[kind])
