"""End to end, with no model and no network, in Python and in TypeScript: a `code`-mode
registry over a small file toolset on a temporary directory, the real runtime of the
language, the assembled system prompt and wire schemas in that language's flavor, and the
transcript of programs a model could write in it. All three are pinned in
`snapshots/codemode/` per language; the TypeScript transcript is the same whichever way the
program's types are stripped (`typescript_nodes.SETUPS`)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from codegen.codemode.calls.execution import ToolCall
from codegen.codemode.presentation.prompt import PromptSection
from codegen.codemode.registry import ToolRegistry, ToolSpec
from codegen.codemode.run_code.run_limits import RuntimeLimits
from codegen.codemode.runtimes.python import PythonRuntime
from support.codemode_helpers import run
from support.typescript_nodes import SETUPS
from support.typescript_nodes import runtime as typescript_runtime

PATH = {"type": "string", "description": "A path relative to the workspace root"}


def file_tools(root: Path) -> list[ToolSpec]:
    def resolve(relative: str) -> Path:
        target = (root / relative).resolve()
        if target != root and root not in target.parents:
            raise PermissionError(f"{relative} is outside the workspace")
        return target

    async def read_file(args: Any, context: Any) -> Any:
        path = resolve(args["path"])
        if not path.is_file():
            raise FileNotFoundError(f"no file {args['path']}")
        return {"path": args["path"], "content": path.read_text()}

    async def write_file(args: Any, context: Any) -> Any:
        path = resolve(args["path"])
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(args["content"])
        return {"path": args["path"], "bytes": len(args["content"].encode())}

    async def list_directory(args: Any, context: Any) -> Any:
        path = resolve(args.get("path", "."))
        return {"entries": sorted(p.name + ("/" if p.is_dir() else "") for p in path.iterdir())}

    async def search_files(args: Any, context: Any) -> Any:
        return {
            "matches": sorted(
                p.relative_to(root).as_posix()
                for p in root.rglob("*")
                if p.is_file() and args["text"] in p.read_text()
            )
        }

    safe = lambda args: True  # noqa: E731 - read-only tools may overlap
    return [
        ToolSpec(
            "read_file",
            "Read a text file.",
            {
                "type": "object",
                "properties": {"path": PATH},
                "required": ["path"],
                "additionalProperties": False,
            },
            {
                "type": "object",
                "properties": {"path": {"type": "string"}, "content": {"type": "string"}},
                "required": ["path", "content"],
                "additionalProperties": False,
            },
            handler=read_file,
            is_concurrency_safe=safe,
        ),
        ToolSpec(
            "write_file",
            "Create or replace a text file.",
            {
                "type": "object",
                "properties": {"path": PATH, "content": {"type": "string"}},
                "required": ["path", "content"],
                "additionalProperties": False,
            },
            {
                "type": "object",
                "properties": {"path": {"type": "string"}, "bytes": {"type": "integer"}},
                "required": ["path", "bytes"],
                "additionalProperties": False,
            },
            handler=write_file,
        ),
        ToolSpec(
            "list_directory",
            "List a directory; directories end with '/'.",
            {
                "type": "object",
                "properties": {"path": {**PATH, "default": "."}},
                "additionalProperties": False,
            },
            {
                "type": "object",
                "properties": {"entries": {"type": "array", "items": {"type": "string"}}},
                "required": ["entries"],
                "additionalProperties": False,
            },
            handler=list_directory,
            is_concurrency_safe=safe,
        ),
        ToolSpec(
            "search-files",
            "Find files whose text contains a string.",
            {
                "type": "object",
                "properties": {"text": {"type": "string", "minLength": 1}},
                "required": ["text"],
                "additionalProperties": False,
            },
            {
                "type": "object",
                "properties": {"matches": {"type": "array", "items": {"type": "string"}}},
                "required": ["matches"],
                "additionalProperties": False,
            },
            handler=search_files,
            is_concurrency_safe=safe,
        ),
    ]


PYTHON_PROGRAMS = [
    (
        "Write two notes",
        """
await tools.write_file(path="notes/a.txt", content="alpha\\nbeta")
await tools.write_file(path="notes/b.txt", content="beta\\ngamma")
print("wrote two notes")
""",
    ),
    (
        "Read both notes at once",
        """
import asyncio
a, b = await asyncio.gather(
    tools.read_file(path="notes/a.txt"),
    tools.read_file(path="notes/b.txt"),
)
lines = a["content"].splitlines() + b["content"].splitlines()
return {"lines": len(lines), "unique": sorted(set(lines))}
""",
    ),
    (
        "Search with the hyphenated tool",
        """
found = await tools["search-files"](text="beta")
print(f"{len(found['matches'])} files mention beta")
return found["matches"]
""",
    ),
    (
        "Recover from a missing file",
        """
try:
    await tools.read_file(path="notes/missing.txt")
except ToolCallError as error:
    print(f"{error.tool_name} failed: {error}")
listing = await tools.list_directory(path="notes")
return listing["entries"]
""",
    ),
    (
        "Refuse a path outside the workspace",
        """
try:
    await tools.read_file(path="../outside.txt")
except ToolCallError as error:
    return str(error)
""",
    ),
    (
        "Make an invalid call",
        """
await tools.write_file(path="x.txt")
""",
    ),
    (
        "Return nothing",
        """
total = 0
for i in range(10):
    total += i
""",
    ),
]


TYPESCRIPT_PROGRAMS = [
    (
        "Write two notes",
        """
await tools.write_file({ path: "notes/a.txt", content: "alpha\\nbeta" });
await tools.write_file({ path: "notes/b.txt", content: "beta\\ngamma" });
console.log("wrote two notes");
""",
    ),
    (
        "Read both notes at once",
        """
const [a, b] = await Promise.all([
  tools.read_file({ path: "notes/a.txt" }),
  tools.read_file({ path: "notes/b.txt" }),
]);
const lines: string[] = [...a.content.split("\\n"), ...b.content.split("\\n")];
return { lines: lines.length, unique: [...new Set(lines)].sort() };
""",
    ),
    (
        "Search with the hyphenated tool",
        """
const found = await tools["search-files"]({ text: "beta" });
console.log(`${found.matches.length} files mention beta`);
return found.matches;
""",
    ),
    (
        "Recover from a missing file",
        """
try {
  await tools.read_file({ path: "notes/missing.txt" });
} catch (error) {
  if (!(error instanceof ToolCallError)) throw error;
  console.log(`${error.toolName} failed: ${error.message}`);
}
const listing = await tools.list_directory({ path: "notes" });
return listing.entries;
""",
    ),
    (
        "Refuse a path outside the workspace",
        """
try {
  await tools.read_file({ path: "../outside.txt" });
} catch (error) {
  return (error as Error).message;
}
""",
    ),
    (
        "Make an invalid call",
        """
await tools.write_file({ path: "x.txt" } as any);
""",
    ),
    (
        "Fail with a type the program did not expect",
        """
type Listing = { entries: string[] };
const listing: Listing = await tools.list_directory({});
const first: string = listing.entries[5];
return first.toUpperCase();
""",
    ),
    (
        "Return nothing",
        """
let total = 0;
for (let i = 0; i < 10; i++) total += i;
""",
    ),
]


@dataclass(frozen=True)
class Language:
    """A language of the transcript: its runtime, its programs and how its files are named."""

    name: str
    setup: str | None = None
    """The TypeScript set-up (how types are stripped)."""

    @property
    def id(self) -> str:
        return self.name if self.setup is None else f"{self.name}-{self.setup}"

    @property
    def programs(self) -> list[tuple[str, str]]:
        return PYTHON_PROGRAMS if self.setup is None else TYPESCRIPT_PROGRAMS

    @property
    def fence(self) -> str:
        return "python" if self.setup is None else "ts"

    def golden_name(self, name: str) -> str:
        """`e2e-transcript`, `e2e-transcript-typescript`, ..."""
        return name if self.setup is None else f"{name}-typescript"

    def runtime(self) -> Any:
        if self.setup is None:
            return PythonRuntime(RuntimeLimits(timeout=30))
        return typescript_runtime(self.setup, RuntimeLimits(timeout=30))


PYTHON = Language("python")
TYPESCRIPTS = [Language("typescript", setup) for setup in SETUPS]


def workspace(root: Path, language: Language) -> ToolRegistry:
    root.mkdir()
    registry = ToolRegistry(mode="code")
    for spec in file_tools(root.resolve()):
        registry.register(spec)
    registry.add_section(PromptSection("intro", 10, "You help with files in a workspace."))
    registry.add_section(
        PromptSection(
            "tool:read_file", 120, "To read a file, call read_file directly.", direct_call=True
        )
    )
    registry.mount_runtime(language.runtime())
    return registry


@pytest.mark.parametrize(
    "language", [PYTHON, Language("typescript", "strip")], ids=lambda language: language.name
)
def test_system_prompt_and_wire(tmp_path: Path, golden: Any, language: Language) -> None:
    registry = workspace(tmp_path / "workspace", language)
    prompt = registry.assemble_prompt()
    assert "call read_file directly" not in prompt, "direct-call guidance is dropped"
    assert f"```{language.fence}" in prompt
    assert prompt == golden("codemode", "md", language.golden_name("e2e-system-prompt"))
    wire = json.dumps(registry.wire_schemas(), indent=2, ensure_ascii=False) + "\n"
    assert [d["name"] for d in registry.wire_schemas()] == ["run_code"]
    assert wire == golden("codemode", "json", language.golden_name("e2e-wire-schemas"))


@pytest.mark.parametrize(
    "language",
    [
        pytest.param(PYTHON, id=PYTHON.id),
        *(
            pytest.param(language, id=language.id, marks=pytest.mark.slow)
            for language in TYPESCRIPTS
        ),
    ],
)
def test_transcript(tmp_path: Path, golden: Any, language: Language) -> None:
    root = tmp_path / "workspace"
    registry = workspace(root, language)
    entries = []
    direct = run(registry.execute(ToolCall("read_file", {"path": "notes/a.txt"}, "direct")))
    entries.append(("A model calls read_file directly", None, direct))
    for index, (description, program) in enumerate(language.programs, start=1):
        call = ToolCall(
            "run_code", {"code": program.strip(), "description": description}, f"run-{index}"
        )
        entries.append((description, program.strip(), run(registry.execute(call))))
    title = "# Code Mode transcript" + ("" if language.setup is None else " (TypeScript)")
    lines = [title, ""]
    for description, program, result in entries:
        lines += [f"## {description}", ""]
        if program is not None:
            lines += [f"```{language.fence}", program, "```", ""]
        status = f"error {result.error.code}" if result.error else "ok"
        lines += [f"Result ({status}):", "", "```text", result.content, "```", ""]
    transcript = "\n".join(lines)
    assert str(root) not in transcript
    assert transcript == golden("codemode", "md", language.golden_name("e2e-transcript"))
    assert (root / "notes" / "a.txt").read_text() == "alpha\nbeta"
    assert not (root / "x.txt").exists(), "the invalid call never ran"
