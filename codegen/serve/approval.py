"""Asking the user through the MCP client when the policy says `ask` (serve's approval
service, `ToolRegistry.set_approval_service`).

Each `tools/call` sets `CLIENT` to the client it came from (the run's calls inherit it): who
it is, and how to ask it. A handshake-era client (2025-11-25 and before) that declared
elicitation is asked with an `elicitation/create` request related to the call; a 2026-07-28
client, by an `input_required` result of its `tools/call` (`rounds.py`). Either way the form
shows the server, the tool, the run's description, why it is asked and the exact arguments
(pretty-printed, cut to fit), and offers to allow the tool for the rest of the session.
Accept runs the call; decline, cancel and no answer within `timeout` refuse it, and the
program gets a `ToolCallError` saying which. A client that cannot be asked gets a refusal
that names the setting that allows the call: nothing runs silently.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any

from ..codemode.calls.execution import Execution
from ..codemode.calls.hooks import Answer, ApprovalService

ASK_TIMEOUT = 120.0
"""Seconds the user has to answer (the run's clock stands still meanwhile)."""
ARGUMENTS_SHOWN = 2000
"""Characters of the pretty-printed arguments a form shows; the rest is cut, and said."""

Ask = Callable[[str, dict[str, Any]], Awaitable[Any]]
"""Sends a form (message, requested schema) to the client; its `ElicitResult`."""


@dataclass
class ClientLink:
    """The client of the `tools/call` being served."""

    name: str | None
    session: object
    """What the client's "for the rest of the session" grants are kept under."""
    ask: Ask | None
    why_not: str = ""
    """Why it cannot be asked (when `ask` is None)."""
    description: str | None = None
    """The run's description, as the model gave it."""


CLIENT: ContextVar[ClientLink | None] = ContextVar("codegen_serve_client", default=None)


def approval_form(
    execution: Execution, reason: str | None, description: str | None
) -> tuple[str, dict[str, Any]]:
    """The form's message and requested schema."""
    name = execution.name
    server, _, tool = name.partition("__") if "__" in name else ("", "", name)
    shown = json.dumps(execution.arguments, indent=2, ensure_ascii=False, sort_keys=True)
    if len(shown) > ARGUMENTS_SHOWN:
        cut = len(shown) - ARGUMENTS_SHOWN
        shown = shown[:ARGUMENTS_SHOWN] + f"\n... ({cut} more characters not shown)"
    lines = [f"A program wants to call {name}" + (f" ({reason})." if reason else ".")]
    if server:
        lines.append(f"Server: {server}    Tool: {tool}")
    if description:
        lines.append(f"The program: {description}")
    lines += ["Arguments:", shown, "", "Accept to run this call, decline to refuse it."]
    schema = {
        "type": "object",
        "properties": {
            "remember": {
                "type": "boolean",
                "title": f"Also allow {name} for the rest of this session",
                "default": False,
            }
        },
    }
    return "\n".join(lines), schema


@dataclass
class ClientApproval(ApprovalService):
    timeout: float = ASK_TIMEOUT
    grants: dict[int, tuple[object, set[str]]] = field(default_factory=dict)
    """Tools allowed for the rest of a session, by the session's identity (the session
    object is held with them, so its identity is not reused while they are kept)."""

    async def request(self, execution: Execution, reason: str | None) -> Answer:
        name = execution.name
        link = CLIENT.get()
        if link is None:
            return Answer(
                "unavailable", f'the call to "{name}" needs approval and no client can be asked'
            )
        granted = self.grants.get(id(link.session))
        if granted is not None and name in granted[1]:
            return Answer("allowed-for-session", "allowed for the rest of the session earlier")
        if link.ask is None:
            allow = json.dumps({"tool": name, "action": "allow"})
            return Answer(
                "unavailable",
                f'the call to "{name}" needs the user\'s approval ({reason}), and this client '
                f"cannot be asked ({link.why_not}); to allow it without asking, add {allow} "
                'to the "rules" of "policy" in the serve config',
            )
        message, schema = approval_form(execution, reason, link.description)
        try:
            # `asyncio.timeout`, not `wait_for`: on Python 3.11 `wait_for` returns the answer
            # when the run is cancelled just as it arrives, and the cancelled call would run
            async with asyncio.timeout(self.timeout):
                result = await link.ask(message, schema)
        except TimeoutError:
            return Answer(
                "timed-out",
                f'nobody answered the request to approve the call to "{name}" within '
                f"{self.timeout:g} seconds; it was not run",
            )
        except Exception as error:  # the client failed to answer, or went away
            return Answer("unavailable", f'asking the user to approve "{name}" failed: {error}')
        action = getattr(result, "action", None)
        content = getattr(result, "content", None) or {}
        if action == "accept":
            if content.get("remember") is True:
                self.grants.setdefault(id(link.session), (link.session, set()))[1].add(name)
                return Answer("allowed-for-session")
            return Answer("allowed-once")
        if action == "decline":
            return Answer("rejected", f'the user declined the call to "{name}"; it was not run')
        return Answer(
            "cancelled", f'the user cancelled the request to approve "{name}"; it was not run'
        )


def client_link(ctx: Any, tool: str, arguments: dict[str, Any]) -> ClientLink:
    """Who sent this `tools/call` and how to ask them (`ClientLink.ask`; on 2026-07-28 the
    call's `RoundRun` supplies it)."""
    from mcp_types.version import MODERN_PROTOCOL_VERSIONS

    from ..codemode.run_code.definition import RUN_CODE

    session = ctx.session
    params = getattr(session, "client_params", None)
    name = getattr(getattr(params, "client_info", None), "name", None)
    description = arguments.get("description") if tool == RUN_CODE else None
    link = ClientLink(
        name if isinstance(name, str) else None,
        session,
        None,
        description=description if isinstance(description, str) else None,
    )
    capabilities = getattr(session, "client_capabilities", None)
    elicitation = getattr(capabilities, "elicitation", None)
    if elicitation is None:
        link.why_not = "it does not support MCP elicitation"
        return link
    if getattr(elicitation, "form", None) is None and getattr(elicitation, "url", None) is not None:
        link.why_not = "it supports URL elicitation only, not forms"
        return link
    if ctx.protocol_version in MODERN_PROTOCOL_VERSIONS:
        link.ask = _asked_by_rounds
        return link

    async def ask(message: str, schema: dict[str, Any]) -> Any:
        return await session.elicit_form(message, schema, related_request_id=ctx.request_id)

    link.ask = ask
    return link


async def _asked_by_rounds(message: str, schema: dict[str, Any]) -> Any:
    """A placeholder: on 2026-07-28 the run's `RoundRun.ask` takes its place."""
    raise RuntimeError("a 2026-07-28 call asks through its rounds")
