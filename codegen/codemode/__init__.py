"""Code Mode: the model gets one tool, `run_code`, and writes a program against the SDK.

This subpackage consumes the renderers; nothing in the generation pipeline imports it. A
host builds a `ToolRegistry` of `ToolSpec`s, mounts a code runtime (`PythonRuntime`,
`TypeScriptRuntime`, or `runtime_for(language)`), offers
the model `wire_schemas()` and `assemble_prompt()`, and runs each call the model makes with
`execute(ToolCall(...))`. `docs/codemode.md` is the guide. The names below are imported
lazily, so `codegen prompt` does not load the runtime.

The modules read top down: `specs`, `scopes`, `execution`, `policy` and `results` are data;
`executor` runs one call through every policy; `bridge` runs a program and sends its calls
back through the executor; `registry` assembles them all.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._support.lazy_exports import lazy_exports

if TYPE_CHECKING:
    from .execution import ToolCall, ToolContext
    from .policy import Accept, Allow, ApprovalService, Ask, Block, Deny
    from .prompt import PromptSection
    from .registry import ToolRegistry
    from .results import ErrorCode, ToolResult
    from .run_limits import RuntimeLimits
    from .runtimes.by_language import runtime_for
    from .runtimes.python import PythonRuntime
    from .runtimes.typescript import TypeScriptRuntime
    from .scopes import Scope
    from .signals import AbortController
    from .specs import CodeModeError, ToolSpec

_LOCATIONS = {
    "AbortController": "signals",
    "Accept": "policy",
    "Allow": "policy",
    "ApprovalService": "policy",
    "Ask": "policy",
    "Block": "policy",
    "CodeModeError": "specs",
    "Deny": "policy",
    "ErrorCode": "results",
    "PromptSection": "prompt",
    "PythonRuntime": "runtimes.python",
    "RuntimeLimits": "run_limits",
    "Scope": "scopes",
    "ToolCall": "execution",
    "ToolContext": "execution",
    "ToolRegistry": "registry",
    "ToolResult": "results",
    "ToolSpec": "specs",
    "TypeScriptRuntime": "runtimes.typescript",
    "runtime_for": "runtimes.by_language",
}

__all__ = [
    "AbortController",
    "Accept",
    "Allow",
    "ApprovalService",
    "Ask",
    "Block",
    "CodeModeError",
    "Deny",
    "ErrorCode",
    "PromptSection",
    "PythonRuntime",
    "RuntimeLimits",
    "Scope",
    "ToolCall",
    "ToolContext",
    "ToolRegistry",
    "ToolResult",
    "ToolSpec",
    "TypeScriptRuntime",
    "runtime_for",
]


__getattr__, __dir__ = lazy_exports(__name__, globals(), _LOCATIONS, __all__)
