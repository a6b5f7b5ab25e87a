"""The user's say over what programs do, end to end: a real MCP client (the SDK's) against
`codegen serve` fronting an upstream with annotated tools (`fixtures/mcp/annotated_notes.py`,
which records every call that reaches it), in both protocol eras (2025-11-25's
`elicitation/create`, 2026-07-28's `input_required` rounds) and both languages.

A read-only and an idempotent tool run unasked; a destructive one is asked about: accepted it
runs (and "for the rest of the session" asks once), declined it never reaches the upstream and
the program gets a `ToolCallError` it can catch; a client without elicitation gets a refusal
naming the setting that allows the call. A failing call that is not idempotent is made once.
The audit log has a line for every call.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from mcp import Client, StdioServerParameters, stdio_client, types

from codegen.serve.approval import CLIENT, ClientApproval, ClientLink
from conftest import ROOT
from support.serve_clients import run, text_of
from support.typescript_nodes import TYPESCRIPT7, node, staged_options

pytestmark = pytest.mark.slow

NOTES = ROOT / "tests" / "fixtures" / "mcp" / "annotated_notes.py"

PYTHON_PROGRAM = """\
print(await tools.notes__read_note({"name": "a"}))
for number in range(2):
    try:
        print(await tools.notes__delete_note({"name": f"n{number}"}))
    except ToolCallError as error:
        print(f"refused: {error}")
print(await tools.notes__tag_note({"name": "a", "tag": "x"}))
try:
    await tools.notes__send_note({"name": "a", "to": "b"})
except ToolCallError as error:
    print(f"send failed: {error}")
return "done"
"""

TYPESCRIPT_PROGRAM = """\
console.log(await tools.notes__read_note({ name: "a" }));
for (const number of [0, 1]) {
  try {
    console.log(await tools.notes__delete_note({ name: `n${number}` }));
  } catch (error) {
    console.log(`refused: ${(error as Error).message}`);
  }
}
console.log(await tools.notes__tag_note({ name: "a", tag: "x" }));
try {
  await tools.notes__send_note({ name: "a", to: "b" });
} catch (error) {
  console.log(`send failed: ${(error as Error).message}`);
}
return "done";
"""


def setup(folder: Path) -> tuple[Path, Path, Path]:
    """The config, the upstream's call record and the audit log."""
    calls = folder / "calls.jsonl"
    calls.touch()
    audit = folder / "audit.jsonl"
    config = folder / "servers.json"
    config.write_text(
        json.dumps(
            {
                "mcpServers": {
                    "notes": {
                        "command": sys.executable,
                        "args": [str(NOTES)],
                        "env": {"CALLS_FILE": str(calls)},
                    }
                },
                "codegen": {"description_budget": 65536, "audit_log": str(audit)},
            }
        )
    )
    return config, calls, audit


def parameters(config: Path, language: str) -> StdioServerParameters:
    """serve in `language`; TypeScript on Node 20 with TypeScript 7 (what `npm install
    typescript` gives), both where the sandbox's uid can reach them, Node first in PATH."""
    path = os.environ.get("PATH", "")
    extra: list[str] = []
    if language == "typescript":
        found = staged_options({"node": node(20), "typescript": TYPESCRIPT7})
        assert os.path.basename(found["node"]) == "node"
        path = f"{os.path.dirname(found['node'])}:{path}"
        extra = ["--typescript", found["typescript"]]
    return StdioServerParameters(
        command=sys.executable,
        args=["-m", "codegen", "serve", "--config", str(config), "--lang", language, *extra],
        env={"PATH": path, "PYTHONPATH": str(ROOT)},
    )


def session(
    folder: Path, language: str, mode: str, answer: str | None, remember: bool = False
) -> tuple[Any, list[str], list[dict[str, Any]], list[dict[str, Any]], str]:
    """One run of the program: its result, the forms the user was shown, what reached the
    upstream, the audit log's lines and serve's stderr."""
    config, calls, audit = setup(folder)
    asked: list[str] = []

    async def elicit(context: Any, params: Any) -> Any:
        asked.append(params.message)
        assert params.requested_schema["properties"]["remember"]["type"] == "boolean"
        if answer == "accept":
            return types.ElicitResult(action="accept", content={"remember": remember})
        return types.ElicitResult(action=answer)  # type: ignore[arg-type]

    program = PYTHON_PROGRAM if language == "python" else TYPESCRIPT_PROGRAM
    errors = folder / "serve.stderr"

    async def talk() -> Any:
        with errors.open("w") as errlog:
            async with Client(
                stdio_client(parameters(config, language), errlog=errlog),
                mode=mode,  # type: ignore[arg-type]
                elicitation_callback=elicit if answer is not None else None,
                cache=None,
            ) as client:
                return await client.call_tool(
                    "run_code", {"code": program, "description": "Tidy the notes"}
                )

    result = run(talk)
    seen = [json.loads(line) for line in calls.read_text().splitlines()]
    logged = [json.loads(line) for line in audit.read_text().splitlines()]
    return result, asked, seen, logged, errors.read_text()


def reached(seen: list[dict[str, Any]], tool: str) -> list[str]:
    return [call["arguments"]["name"] for call in seen if call["tool"] == tool]


def assert_common(result: Any, seen: list[dict[str, Any]], logged: list[dict[str, Any]]) -> str:
    """What holds whatever the user answers; the program's output."""
    assert result.is_error is False, text_of(result)
    output = text_of(result)
    assert "the note a" in output and "tagged a x" in output
    assert reached(seen, "read_note") == ["a"] and reached(seen, "tag_note") == ["a"]
    # a failing call that is not idempotent reached the upstream once, and failed once
    assert reached(seen, "send_note") == ["a"]
    assert output.count("send failed:") == 1 and "Error executing tool send_note" in output
    by_tool = {line["tool"]: line for line in logged}
    assert set(by_tool) >= {
        "run_code",
        "notes__read_note",
        "notes__delete_note",
        "notes__tag_note",
        "notes__send_note",
    }
    assert by_tool["notes__read_note"]["decision"] == "allowed"
    assert by_tool["notes__read_note"]["because"] == "readOnlyHint: true"
    assert by_tool["notes__send_note"]["outcome"] == "TOOL_FAILED"
    run_id = by_tool["run_code"]["run"]
    for line in logged:
        assert line["run"] == run_id
        assert "arguments" not in line and len(line["arguments_sha256"]) == 64
        if line["tool"] != "run_code":
            assert line["server"] == "notes"
    return output


@pytest.mark.parametrize(
    "language, mode", [("python", "legacy"), ("python", "2026-07-28"), ("typescript", "2026-07-28")]
)
def test_a_client_without_elicitation_gets_a_refusal_naming_the_setting(
    tmp_path: Path, language: str, mode: str
) -> None:
    result, asked, seen, logged, errors = session(tmp_path, language, mode, None)
    output = assert_common(result, seen, logged)
    assert asked == [] and reached(seen, "delete_note") == []
    assert output.count("refused:") == 2
    assert "cannot be asked (it does not support MCP elicitation)" in output
    assert '{"tool": "notes__delete_note", "action": "allow"}' in output
    deletes = [line for line in logged if line["tool"] == "notes__delete_note"]
    assert [line["decision"] for line in deletes] == ["denied", "denied"]
    assert all(line["outcome"] == "DENIED" for line in deletes)
    assert "then: allow read-only tools, ask before destructive ones" in errors
    assert f"audit log: {tmp_path / 'audit.jsonl'}" in errors


@pytest.mark.parametrize(
    "language, mode", [("python", "legacy"), ("python", "2026-07-28"), ("typescript", "legacy")]
)
def test_an_accepted_call_runs_and_is_asked_about_each_time(
    tmp_path: Path, language: str, mode: str
) -> None:
    result, asked, seen, logged, _ = session(tmp_path, language, mode, "accept")
    output = assert_common(result, seen, logged)
    assert reached(seen, "delete_note") == ["n0", "n1"]
    assert "deleted n0" in output and "deleted n1" in output
    assert len(asked) == 2
    form = asked[0]
    assert "notes__delete_note" in form and "destructiveHint: true" in form
    assert '"name": "n0"' in form and "Tidy the notes" in form
    deletes = [line for line in logged if line["tool"] == "notes__delete_note"]
    assert [line["decision"] for line in deletes] == ["asked-accepted"] * 2
    assert [line["answer"] for line in deletes] == ["allowed-once"] * 2


@pytest.mark.parametrize("language", ["python", "typescript"])
def test_for_the_rest_of_the_session_asks_once(tmp_path: Path, language: str) -> None:
    result, asked, seen, logged, _ = session(
        tmp_path, language, "2026-07-28", "accept", remember=True
    )
    assert_common(result, seen, logged)
    assert reached(seen, "delete_note") == ["n0", "n1"]
    assert len(asked) == 1
    answers = [line["answer"] for line in logged if line["tool"] == "notes__delete_note"]
    assert answers == ["allowed-for-session"] * 2


@pytest.mark.parametrize(
    "language, mode, answer",
    [
        ("python", "legacy", "decline"),
        ("python", "2026-07-28", "decline"),
        ("typescript", "2026-07-28", "decline"),
        ("python", "2026-07-28", "cancel"),
    ],
)
def test_a_declined_call_never_reaches_the_upstream(
    tmp_path: Path, language: str, mode: str, answer: str
) -> None:
    result, asked, seen, logged, _ = session(tmp_path, language, mode, answer)
    output = assert_common(result, seen, logged)
    assert reached(seen, "delete_note") == []
    assert len(asked) == 2 and output.count("refused:") == 2
    said = "declined the call" if answer == "decline" else "cancelled the request"
    assert said in output, output
    deletes = [line for line in logged if line["tool"] == "notes__delete_note"]
    assert [line["decision"] for line in deletes] == ["asked-declined"] * 2


@pytest.mark.parametrize("turns", range(6))
def test_a_run_cancelled_as_the_answer_arrives_stays_cancelled(turns: int) -> None:
    """A call whose run is cancelled while it waits for the user's approval is never made,
    however close to the user's answer the cancel comes (Python 3.11's `asyncio.wait_for`
    returned the answer instead of the cancellation)."""

    async def scenario() -> str:
        answer: asyncio.Future[Any] = asyncio.get_running_loop().create_future()

        async def ask(message: str, schema: dict[str, Any]) -> Any:
            return await answer

        CLIENT.set(ClientLink("client", object(), ask))
        execution = SimpleNamespace(name="notes__delete", arguments={"id": 1})
        request = ClientApproval().request(execution, "destructive")  # type: ignore[arg-type]
        task = asyncio.ensure_future(request)
        for _ in range(3):
            await asyncio.sleep(0)
        answer.set_result(SimpleNamespace(action="accept", content={}))
        for _ in range(turns):
            await asyncio.sleep(0)
        accepted = task.cancel()
        try:
            found = await task
        except asyncio.CancelledError:
            return "cancelled"
        return f"lost: {found.outcome}" if accepted else "answered before"

    assert asyncio.run(scenario()) in ("cancelled", "answered before")
