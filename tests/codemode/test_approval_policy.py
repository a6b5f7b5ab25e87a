"""The user's policy over the calls programs make, in the library: MCP annotations read
strictly, rules `allow | ask | deny` by tool, glob, server and annotation class, the
defaults (read-only allowed, destructive asked, unannotated allowed unless asked for), the
registry's approval service as the one path for every `ask`, the run's clock stopped while
the user decides, and the audit log."""

from __future__ import annotations

import asyncio
import json
import os
import stat
from pathlib import Path
from typing import Any

import pytest

from codegen.codemode.approval.audit import AuditLog, AuditLogError, AuditSettings
from codegen.codemode.approval.hints import ToolHints
from codegen.codemode.approval.rules import DEFAULT_POLICY, Policy, Rule, parse_policy
from codegen.codemode.calls.execution import ToolCall
from codegen.codemode.calls.hooks import Answer, ApprovalService
from codegen.codemode.calls.results import ErrorCode, ToolResult
from codegen.codemode.registry import ToolRegistry, ToolSpec
from codegen.codemode.run_code.run_limits import RuntimeLimits
from codegen.codemode.runtimes.python import PythonRuntime
from support.codemode_helpers import run

READ_ONLY = {"readOnlyHint": True}
DESTRUCTIVE = {"readOnlyHint": False, "destructiveHint": True}
IDEMPOTENT = {"destructiveHint": False, "idempotentHint": True}


# --- hints and rules ----------------------------------------------------------------------


def test_hints_count_only_exact_booleans() -> None:
    assert ToolHints.of(READ_ONLY).classes == {"read-only"}
    assert ToolHints.of(DESTRUCTIVE).classes == {"destructive"}
    # destructiveHint means nothing for a read-only tool (MCP)
    assert ToolHints.of({"readOnlyHint": True, "destructiveHint": True}).classes == {"read-only"}
    assert ToolHints.of(IDEMPOTENT).classes == {"idempotent"}
    assert ToolHints.of({"openWorldHint": True}).classes == {"open-world"}
    for nothing in (None, {}, [], "x", {"readOnlyHint": "true"}, {"destructiveHint": 1}):
        assert ToolHints.of(nothing).classes == {"unannotated"}, nothing
    assert ToolHints.of({"readOnlyHint": True, "idempotentHint": True}).classes == {"read-only"}


def test_the_defaults() -> None:
    decide = DEFAULT_POLICY.decide
    assert decide("a__read", ToolHints.of(READ_ONLY)).action == "allow"
    verdict = decide("a__delete", ToolHints.of(DESTRUCTIVE))
    assert (verdict.action, verdict.because) == ("ask", "destructiveHint: true")
    assert decide("a__tag", ToolHints.of(IDEMPOTENT)).action == "allow"
    assert decide("a__plain", ToolHints.of(None)).action == "allow"
    asking = Policy(ask_unannotated=True)
    assert asking.decide("a__plain", ToolHints.of(None)).action == "ask"
    assert asking.decide("a__tag", ToolHints.of(IDEMPOTENT)).action == "allow"


def test_the_first_matching_rule_decides() -> None:
    policy = parse_policy(
        {
            "rules": [
                {"tool": "github__delete_*", "action": "deny"},
                {"server": "github", "class": "destructive", "action": "allow"},
                {"server": "slack", "action": "ask"},
                {"class": "any", "tool": "*__send*", "action": "ask"},
            ]
        },
        "/policy",
        lambda at, message: ValueError(at, message),
    )
    hints = ToolHints.of(DESTRUCTIVE)
    verdict = policy.decide("github__delete_repo", hints)
    assert verdict.action == "deny" and verdict.because.startswith("policy rule 1: tool")
    assert policy.decide("github__close_issue", hints).action == "allow"
    assert policy.decide("github__close_issue", ToolHints.of(None)).action == "allow"  # default
    assert policy.decide("slack__read", ToolHints.of(READ_ONLY)).action == "ask"
    assert policy.decide("mail__send_mail", ToolHints.of(READ_ONLY)).action == "ask"
    assert policy.decide("mail__read", ToolHints.of(DESTRUCTIVE)).action == "ask"  # default
    # names are matched exactly, case and all
    assert policy.decide("GitHub__delete_repo", hints).action == "ask"
    lines = policy.describe()
    assert lines[0] == 'rule 1: deny tool "github__delete_*"'
    assert lines[1] == 'rule 2: allow server "github" and class "destructive"'
    assert lines[-1].startswith("then: allow read-only tools, ask before destructive ones")


@pytest.mark.parametrize(
    "value, pointer, fragment",
    [
        ([], "/policy", "expected an object"),
        ({"rule": []}, "/policy/rule", "unknown key 'rule'"),
        ({"ask_unannotated": "yes"}, "/policy/ask_unannotated", "true or false"),
        ({"rules": {}}, "/policy/rules", "a list of rules"),
        ({"rules": ["x"]}, "/policy/rules/0", "expected an object"),
        ({"rules": [{"tool": "a"}]}, "/policy/rules/0/action", "one of allow, ask, deny"),
        ({"rules": [{"action": "allow"}]}, "/policy/rules/0", "names a tool, a server"),
        ({"rules": [{"tool": "", "action": "allow"}]}, "/policy/rules/0/tool", "non-empty"),
        (
            {"rules": [{"class": "dangerous", "action": "ask"}]},
            "/policy/rules/0/class",
            "unknown class 'dangerous'",
        ),
        ({"rules": [{"server": "a__b", "action": "ask"}]}, "/policy/rules/0/server", "namespace"),
        ({"rules": [{"tool": "a", "action": "ok", "x": 1}]}, "/policy/rules/0/x", "unknown key"),
    ],
)
def test_a_bad_policy_names_its_place(value: Any, pointer: str, fragment: str) -> None:
    with pytest.raises(ValueError) as raised:
        parse_policy(value, "/policy", lambda at, message: ValueError(at, message))
    assert raised.value.args[0] == pointer and fragment in raised.value.args[1]


# --- through the registry: programs' calls -------------------------------------------------


class Answering(ApprovalService):
    """Answers every request with `outcome` after `delay` seconds; records what it saw."""

    def __init__(self, outcome: Any, delay: float = 0.0) -> None:
        self.outcome = outcome
        self.delay = delay
        self.asked: list[tuple[str, Any, str | None]] = []

    async def request(self, execution: Any, reason: str | None) -> Any:
        self.asked.append((execution.name, execution.arguments, reason))
        await asyncio.sleep(self.delay)
        return self.outcome


def notes_registry(
    policy: Policy = DEFAULT_POLICY, limits: RuntimeLimits | None = None, mode: str = "code"
) -> tuple[ToolRegistry, list[tuple[str, Any]]]:
    reached: list[tuple[str, Any]] = []

    def tool(name: str, annotations: Any) -> ToolSpec:
        async def handler(arguments: Any, context: Any) -> Any:
            reached.append((name, arguments))
            return f"{name} done"

        return ToolSpec(
            name,
            f"The {name} tool.",
            {"type": "object", "properties": {"id": {"type": "string"}}},
            handler=handler,
            annotations=annotations,
        )

    registry = ToolRegistry(mode=mode, check="off", policy=policy)  # type: ignore[arg-type]
    for spec in (
        tool("notes__read", READ_ONLY),
        tool("notes__delete", DESTRUCTIVE),
        tool("notes__tag", IDEMPOTENT),
        tool("notes__plain", None),
    ):
        registry.register(spec)
    if mode != "native":
        registry.mount_runtime(PythonRuntime(limits or RuntimeLimits(timeout=30)))
    return registry, reached


PROGRAM = """\
out = [await tools.notes__read({"id": "1"})]
try:
    out.append(await tools.notes__delete({"id": "2"}))
except ToolCallError as error:
    out.append(f"refused: {error}")
out.append(await tools.notes__plain({"id": "3"}))
return out
"""


def run_program(registry: ToolRegistry, program: str = PROGRAM) -> ToolResult:
    call = ToolCall("run_code", {"code": program, "description": "Tidy up"}, "run-1")
    result: ToolResult = run(registry.execute(call))
    return result


@pytest.mark.parametrize(
    "outcome, runs, said",
    [
        ("allowed-once", True, None),
        ("allowed-for-session", True, None),
        ("rejected", False, 'the user rejected the call to "notes__delete"'),
        ("cancelled", False, 'the user cancelled the request to approve "notes__delete"'),
        ("timed-out", False, 'nobody answered the request to approve "notes__delete"'),
        ("unavailable", False, "which is unavailable right now"),
        (Answer("unavailable", "ask the admin"), False, "ask the admin"),
    ],
)
def test_a_destructive_call_goes_to_the_approval_service(
    outcome: Any, runs: bool, said: Any
) -> None:
    registry, reached = notes_registry()
    approval = Answering(outcome)
    registry.set_approval_service(approval)
    result = run_program(registry)
    assert result.error is None, result.content
    assert approval.asked == [("notes__delete", {"id": "2"}, "destructiveHint: true")]
    names = [name for name, _ in reached]
    assert names == (
        ["notes__read", "notes__delete", "notes__plain"]
        if runs
        else ["notes__read", "notes__plain"]
    )
    if said is not None:
        assert said in result.value["result"][1]


def test_without_an_approval_service_an_ask_is_refused_saying_so() -> None:
    registry, reached = notes_registry()
    result = run_program(registry)
    refusal = result.value["result"][1]
    assert refusal.startswith('refused: the call to "notes__delete" needs approval')
    assert "no approval service is set" in refusal
    assert [name for name, _ in reached] == ["notes__read", "notes__plain"]


def test_deny_refuses_direct_calls_too_and_ask_only_programs() -> None:
    policy = Policy((Rule("deny", tool="notes__pla*"),))
    registry, reached = notes_registry(policy, mode="both")
    approval = Answering("rejected")
    registry.set_approval_service(approval)
    denied = run(registry.execute(ToolCall("notes__plain", {"id": "x"}, "d-1")))
    assert denied.code == ErrorCode.DENIED
    assert denied.content == (
        'Error: the policy denies calls to "notes__plain" (policy rule 1: tool "notes__pla*")'
    )
    # the model's own direct call is its client's to ask about
    direct = run(registry.execute(ToolCall("notes__delete", {"id": "y"}, "d-2")))
    assert direct.error is None and approval.asked == []
    assert reached == [("notes__delete", {"id": "y"})]


def test_the_runs_clock_stands_still_while_the_user_decides() -> None:
    registry, reached = notes_registry(limits=RuntimeLimits(timeout=2, cpu_seconds=2))
    registry.set_approval_service(Answering("allowed-once", delay=4.0))
    result = run_program(registry)
    assert result.error is None, result.content
    assert [name for name, _ in reached] == ["notes__read", "notes__delete", "notes__plain"]
    # the clock runs again once the answer is in: a program that outlasts it still ends
    late = run_program(registry, "import time\nwhile True:\n    time.sleep(0.05)")
    assert late.error is not None and late.error.kind == "timeout", late.content


def test_the_audit_log_has_a_line_per_call(tmp_path: Path) -> None:
    registry, _ = notes_registry()
    registry.set_approval_service(Answering("rejected"))
    path = tmp_path / "audit.jsonl"
    audit = AuditLog(AuditSettings(path), client=lambda: "a client")
    registry.add_observer(audit)
    run_program(registry)
    audit.close()
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    assert [(line["tool"], line["decision"], line["outcome"]) for line in lines] == [
        ("notes__read", "allowed", "ok"),
        ("notes__delete", "asked-declined", "DENIED"),
        ("notes__plain", "allowed", "ok"),
        ("run_code", "allowed", "ok"),
    ]
    delete = lines[1]
    assert delete["answer"] == "rejected" and delete["because"] == "destructiveHint: true"
    assert delete["run"] == "run-1" and delete["client"] == "a client"
    assert delete["server"] == "notes" and "arguments" not in delete
    expected = __import__("hashlib").sha256(b'{"id":"2"}').hexdigest()
    assert delete["arguments_sha256"] == expected
    assert all(line["duration_ms"] >= 0 and line["result_bytes"] > 0 for line in lines)


def test_the_audit_log_keeps_arguments_only_when_asked_and_rotates(tmp_path: Path) -> None:
    path = tmp_path / "audit.jsonl"
    audit = AuditLog(AuditSettings(path, arguments=True, max_bytes=2000, backups=2))
    for number in range(30):
        audit.write({"n": number, "arguments": {"secret": "x" * 100}})
    audit.close()
    kept = [path, path.with_name("audit.jsonl.1"), path.with_name("audit.jsonl.2")]
    assert all(each.exists() for each in kept)
    assert not path.with_name("audit.jsonl.3").exists()
    numbers = [
        json.loads(line)["n"] for each in reversed(kept) for line in each.read_text().splitlines()
    ]
    assert numbers == list(range(numbers[0], 30))  # the newest lines, in order, none torn
    assert all(each.stat().st_size <= 2000 for each in kept)


def test_the_audit_log_is_never_opened_through_a_link_or_a_fifo(tmp_path: Path) -> None:
    target = tmp_path / "elsewhere"
    target.write_text("")
    link = tmp_path / "audit.jsonl"
    link.symlink_to(target)
    with pytest.raises(AuditLogError, match="symbolic link"):
        AuditLog(AuditSettings(link))
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    with pytest.raises(AuditLogError):
        AuditLog(AuditSettings(fifo))
    folder = tmp_path / "folder"
    folder.mkdir()
    with pytest.raises(AuditLogError):
        AuditLog(AuditSettings(folder))
