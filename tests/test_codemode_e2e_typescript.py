"""End to end in TypeScript, with no model and no network: the file toolset of
`test_codemode_e2e.py` in a `code`-mode registry with the real TypeScript runtime, the
assembled system prompt and wire schemas in the TypeScript flavor, and the transcript of
programs a model could write. All three are pinned in `snapshots/codemode/`; the transcript
is the same whichever way the program's types are stripped."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from codegen.codemode.calls.execution import ToolCall
from codegen.codemode.presentation.prompt import PromptSection
from codegen.codemode.registry import ToolRegistry
from codegen.codemode.run_code.run_limits import RuntimeLimits
from codemode_helpers import run
from test_codemode_e2e import file_tools
from typescript_nodes import SETUPS, runtime

PROGRAMS = [
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


def workspace(root: Path, setup: str) -> ToolRegistry:
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
    registry.mount_runtime(runtime(setup, RuntimeLimits(timeout=30)))
    return registry


def test_system_prompt_and_wire(tmp_path: Path, golden: Any) -> None:
    import json

    registry = workspace(tmp_path / "workspace", "strip")
    prompt = registry.assemble_prompt()
    assert "```ts" in prompt and "call read_file directly" not in prompt
    assert prompt == golden("codemode", "md", "e2e-system-prompt-typescript")
    wire = json.dumps(registry.wire_schemas(), indent=2, ensure_ascii=False) + "\n"
    assert [d["name"] for d in registry.wire_schemas()] == ["run_code"]
    assert wire == golden("codemode", "json", "e2e-wire-schemas-typescript")


def transcript(root: Path, setup: str) -> str:
    registry = workspace(root, setup)
    entries = []
    direct = run(registry.execute(ToolCall("read_file", {"path": "notes/a.txt"}, "direct")))
    entries.append(("A model calls read_file directly", None, direct))
    for index, (description, program) in enumerate(PROGRAMS, start=1):
        call = ToolCall(
            "run_code", {"code": program.strip(), "description": description}, f"run-{index}"
        )
        entries.append((description, program.strip(), run(registry.execute(call))))
    lines = ["# Code Mode transcript (TypeScript)", ""]
    for description, program, result in entries:
        lines += [f"## {description}", ""]
        if program is not None:
            lines += ["```ts", program, "```", ""]
        status = f"error {result.error.code}" if result.error else "ok"
        lines += [f"Result ({status}):", "", "```text", result.content, "```", ""]
    text = "\n".join(lines)
    assert str(root) not in text
    assert (root / "notes" / "a.txt").read_text() == "alpha\nbeta"
    assert not (root / "x.txt").exists(), "the invalid call never ran"
    return text


@pytest.mark.slow
@pytest.mark.parametrize("setup", list(SETUPS))
def test_transcript(tmp_path: Path, golden: Any, setup: str) -> None:
    text = transcript(tmp_path / "workspace", setup)
    assert text == golden("codemode", "md", "e2e-transcript-typescript")
