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
    from .calls.cancellation import AbortController
    from .calls.execution import ToolCall, ToolContext
    from .calls.hooks import Accept, Allow, ApprovalService, Ask, Block, Deny
    from .calls.results import ErrorCode, ToolResult
    from .calls.scopes import Scope
    from .calls.specs import CodeModeError, ToolSpec
    from .presentation.prompt import PromptSection
    from .registry import ToolRegistry
    from .run_code.run_limits import RuntimeLimits
    from .runtimes.by_language import runtime_for
    from .runtimes.python import PythonRuntime
    from .runtimes.typescript import TypeScriptRuntime

_LOCATIONS = {
    "AbortController": "calls.cancellation",
    "Accept": "calls.hooks",
    "Allow": "calls.hooks",
    "ApprovalService": "calls.hooks",
    "Ask": "calls.hooks",
    "Block": "calls.hooks",
    "CodeModeError": "calls.specs",
    "Deny": "calls.hooks",
    "ErrorCode": "calls.results",
    "PromptSection": "presentation.prompt",
    "PythonRuntime": "runtimes.python",
    "RuntimeLimits": "run_code.run_limits",
    "Scope": "calls.scopes",
    "ToolCall": "calls.execution",
    "ToolContext": "calls.execution",
    "ToolRegistry": "registry",
    "ToolResult": "calls.results",
    "ToolSpec": "calls.specs",
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
