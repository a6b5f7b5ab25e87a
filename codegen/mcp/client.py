"""Bind a generated Python SDK to something that really calls tools.

A generated SDK only declares `Tools`; outside Code Mode nothing implements it. `bind`
returns an object that does, forwarding every call to an MCP session (`mcp.ClientSession`
or `mcp.Client`, anything with an async `call_tool(name, arguments)`) or to a plain async
callable `(name, arguments) -> value`:

    tools: Tools = bind(client, everything_tools)
    await tools.echo({"message": "hi"})
    await tools["get-sum"]({"a": 2, "b": 3})

Names are checked so a typo fails before anything is sent, against the first of: `names=`,
the SDK's `ToolName`, the server's own `tools/list` (read once, on the first call); a plain
callable without names is not checked. An MCP result becomes a plain value (the structured
content, the text, or the content blocks as JSON dicts) and every failure of a call becomes
`ToolCallError`: with `sdk=`, one class that is both the SDK's `ToolCallError` and ours.
A plain callable's own exceptions become `ToolCallError` too (the original as `__cause__`),
so a failed tool looks the same whatever it was called through.

`mcp` is an optional dependency, so nothing here imports it until a session needs it.
"""

from __future__ import annotations

import difflib
import inspect
import json
import threading
from collections.abc import Iterable, Mapping
from types import ModuleType
from typing import Any, Literal, Never, NoReturn, get_args, get_origin

from .listing import EndlessListing, list_tools, typed_pages
from .listing import field as _field

__all__ = ["ToolCallError", "UnknownToolError", "bind"]

_LISTED_IN_FULL = 20
"""Up to this many known names, an unknown-name error lists them all; beyond, the closest."""


class ToolCallError(Exception):
    """A tool call failed: `tool_name` names the tool, `message` (also `str()`) says why."""

    def __init__(self, tool_name: str, message: str) -> None:
        super().__init__(message)
        self.tool_name = tool_name
        self.message = message

    def __reduce__(self) -> tuple[Any, ...]:
        # The default would call `__init__(message)`, one argument short.
        return (type(self), (self.tool_name, self.message))


class UnknownToolError(AttributeError, KeyError):
    """No tool has this name. Both an AttributeError (`tools.name`, so `hasattr` and
    `getattr(tools, name, default)` work) and a KeyError (`tools["name"]`)."""

    def __init__(self, tool_name: str, known: Iterable[str], source: str) -> None:
        self.tool_name = tool_name
        self.known = tuple(sorted(known))
        self.message = _unknown_message(tool_name, self.known, source)
        super().__init__(self.message)

    def __str__(self) -> str:
        # KeyError's own `__str__` would show the message as a quoted repr.
        return self.message

    def __reduce__(self) -> tuple[Any, ...]:
        return (_unknown_from_message, (self.tool_name, self.known, self.message))


def _unknown_from_message(tool_name: str, known: tuple[str, ...], message: str) -> UnknownToolError:
    error = UnknownToolError.__new__(UnknownToolError)
    AttributeError.__init__(error, message)
    error.tool_name, error.known, error.message = tool_name, known, message
    return error


def _unknown_message(name: str, known: tuple[str, ...], source: str) -> str:
    """Readable whatever the catalog's size: every name when few, else the closest ones."""
    text = f"unknown tool {name!r}"
    if not known:
        return f"{text}: no tools are known (from {source})"
    close = difflib.get_close_matches(name, known, n=5, cutoff=0.6)
    if close:
        quoted = list(map(repr, close))
        either = " or ".join(filter(None, [", ".join(quoted[:-1]), quoted[-1]]))
        text += f" (did you mean {either}?)"
    if len(known) <= _LISTED_IN_FULL:
        return f"{text}. Known tools (from {source}): {', '.join(map(repr, known))}"
    if close:
        return f"{text}; {len(known)} tools are known (from {source}), dir(tools) lists them"
    return (
        f"{text}; none of the {len(known)} known tools (from {source}) is close, "
        "dir(tools) lists them"
    )


_SDK_ERRORS: dict[type[BaseException], type[ToolCallError]] = {}
_SDK_ERRORS_LOCK = threading.Lock()


def _sdk_error_class(base: type[BaseException]) -> type[ToolCallError]:
    """One class per SDK error class that both `except` clauses catch. It has its own
    `__init__`: the two parents' would not chain (the SDK's calls `super().__init__(message)`,
    which would reach ours with one argument)."""
    if issubclass(base, ToolCallError):
        return base
    with _SDK_ERRORS_LOCK:
        cls = _SDK_ERRORS.get(base)
        if cls is None:

            def __init__(self: ToolCallError, tool_name: str, message: str) -> None:
                Exception.__init__(self, message)
                self.tool_name = tool_name
                self.message = message

            def __reduce__(self: ToolCallError) -> tuple[Any, ...]:
                return (_rebuild_sdk_error, (base, self.tool_name, self.message))

            namespace = {
                "__init__": __init__,
                "__reduce__": __reduce__,
                "__doc__": base.__doc__,
                # Tracebacks name the class the caller catches.
                "__module__": base.__module__,
                "__qualname__": base.__qualname__,
            }
            cls = type(base.__name__, (base, ToolCallError), namespace)
            _SDK_ERRORS[base] = cls
        return cls


def _rebuild_sdk_error(base: type[BaseException], tool_name: str, message: str) -> ToolCallError:
    return _sdk_error_class(base)(tool_name, message)


def _sdk_names(sdk: ModuleType) -> frozenset[str] | None:
    """`typing.get_args(sdk.ToolName)`; None when the SDK predates `ToolName`."""
    alias = getattr(sdk, "ToolName", None)
    if alias is None:
        return None
    alias = getattr(alias, "__value__", alias)  # a `type ToolName = ...` statement
    if alias is Never or alias is NoReturn:
        return frozenset()
    names = get_args(alias) if get_origin(alias) is Literal else ()
    if not names or not all(isinstance(name, str) for name in names):
        raise TypeError(f"bind: {sdk.__name__}.ToolName is not a Literal of tool names")
    return frozenset(names)


def _block_json(block: Any) -> dict[str, Any]:
    if isinstance(block, Mapping):
        return dict(block)
    dump = getattr(block, "model_dump", None)
    if callable(dump):
        value = dump(mode="json", by_alias=True, exclude_none=True)
        if isinstance(value, dict):
            return value
    raise TypeError(f"not an MCP content block: {type(block).__name__}")


def _texts(content: list[Any]) -> list[str] | None:
    """The text of every block, or None when any block is not text."""
    texts: list[str] = []
    for block in content:
        text = _field(block, "text")
        if _field(block, "type") != "text" or not isinstance(text, str):
            return None
        texts.append(text)
    return texts


def _decode(name: str, result: Any, error: type[ToolCallError]) -> Any:
    """A `CallToolResult` as the value the SDK declares, or its error raised."""
    kind = _field(result, "result_type", "resultType")
    has_content = "content" in result if isinstance(result, Mapping) else hasattr(result, "content")
    if (kind is not None and kind != "complete") or not has_content:
        shown = f" ({kind!r})" if kind is not None else ""
        raise error(name, f"expected a tool result, got {type(result).__name__}{shown}")
    content = list(_field(result, "content") or ())
    structured = _field(result, "structured_content", "structuredContent")
    if _field(result, "is_error", "isError"):
        said = [text for block in content if isinstance(text := _field(block, "text"), str)]
        if said:
            raise error(name, "\n".join(said))
        if structured is not None:
            raise error(name, json.dumps(structured, ensure_ascii=False))
        raise error(name, "the tool reported an error without a message")
    if structured is not None:
        return structured
    if not content:
        return None
    texts = _texts(content)
    if texts is not None:
        return "\n".join(texts)
    try:
        return [_block_json(block) for block in content]
    except TypeError as exc:
        raise error(name, str(exc)) from exc


def _describe(exc: BaseException) -> str:
    """The reason a session's exception gives, with MCP's error code when it has one."""
    code, message = getattr(exc, "code", None), getattr(exc, "message", None)
    if isinstance(code, int) and isinstance(message, str):  # mcp's MCPError
        return f"{message} (MCP error {code})"
    text = str(exc)
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


async def _server_names(session: Any) -> frozenset[str]:
    listed = await list_tools(typed_pages(session))
    return frozenset(name for tool in listed.tools if isinstance(name := _field(tool, "name"), str))


class BoundTool:
    """One tool of a bound SDK: calling it checks the arguments at once and returns the
    coroutine that performs the call."""

    __slots__ = ("_owner", "name")

    def __init__(self, owner: BoundTools, name: str) -> None:
        self._owner = owner
        self.name = name

    def __call__(self, args: Any = None, /, **keywords: Any) -> Any:
        label = f"tools[{self.name!r}]"
        if keywords:
            raise TypeError(
                f"{label} takes its arguments as one dict, not as keywords: "
                f"{label}({{{', '.join(repr(k) + ': ...' for k in keywords)}}})"
            )
        if args is None:  # no arguments, as in MCP and in Code Mode's runtime
            arguments: dict[str, Any] = {}
        elif isinstance(args, Mapping):
            arguments = dict(args)
            bad = next((key for key in arguments if not isinstance(key, str)), None)
            if bad is not None:
                raise TypeError(f"{label}: argument names must be strings, got {bad!r}")
        else:
            raise TypeError(
                f"{label}: arguments must be a dict of JSON values, got {type(args).__name__}"
            )
        return self._owner._call(self.name, arguments)

    def __repr__(self) -> str:
        return f"<tool {self.name!r}>"


class BoundTools:
    """What `bind` returns. It has no public attributes of its own, so no tool name is
    shadowed; names starting with `_` are never tools as attributes (the SDK's `Tools`
    has no such methods), so `copy`, `pickle`, `hasattr` and IPython never call a tool."""

    __slots__ = ("_error", "_lock", "_names", "_sdk_error", "_session", "_source", "_target")

    __iter__: None = None
    """Not iterable: `in` and `list()` would otherwise call `tools[0]`, `tools[1]`, …"""

    def __init__(
        self,
        target: Any,
        session: bool,
        names: frozenset[str] | None,
        source: str,
        error: type[ToolCallError],
        sdk_error: type[BaseException] | None,
    ) -> None:
        self._target = target
        self._session = session
        self._names = names
        self._source = source
        self._error = error
        self._sdk_error = sdk_error
        self._lock: Any = None

    def __getattr__(self, name: str) -> BoundTool:
        if name.startswith("_"):
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")
        return self._tool(name)

    def __getitem__(self, name: str) -> BoundTool:
        if not isinstance(name, str):
            raise TypeError(f"tool names are strings, got {type(name).__name__}")
        return self._tool(name)

    def _tool(self, name: str) -> BoundTool:
        if self._names is not None and name not in self._names:
            raise UnknownToolError(name, self._names, self._source)
        return BoundTool(self, name)

    def __dir__(self) -> list[str]:
        return sorted(set(super().__dir__()) | (self._names or frozenset()))

    def _ipython_key_completions_(self) -> list[str]:
        return sorted(self._names or ())

    def __repr__(self) -> str:
        target = type(self._target).__name__
        if self._names is None:
            how = "names read from the server on the first call" if self._session else "any name"
            return f"<tools via {target}: {how}>"
        shown = ", ".join(map(repr, sorted(self._names)[:5]))
        more = f", … ({len(self._names)} in all)" if len(self._names) > 5 else ""
        return f"<tools via {target}: {shown}{more}>"

    async def _known_names(self, name: str) -> frozenset[str] | None:
        """The names to check against, listing the server's tools once when needed."""
        if self._names is not None or not self._session:
            return self._names
        if not callable(getattr(self._target, "list_tools", None)):
            return None
        if self._lock is None:
            import anyio

            self._lock = anyio.Lock()
        async with self._lock:
            if self._names is None:
                try:
                    self._names = await _server_names(self._target)
                except EndlessListing as exc:
                    raise self._error(name, f"cannot list the server's tools: {exc}") from exc
                except Exception as exc:
                    raise self._error(
                        name, f"cannot list the server's tools: {_describe(exc)}"
                    ) from exc
        return self._names

    async def _call(self, name: str, arguments: dict[str, Any]) -> Any:
        known = await self._known_names(name)
        if known is not None and name not in known:
            raise UnknownToolError(name, known, self._source)
        if not self._session:
            return await self._call_function(name, arguments)
        try:
            result = await self._target.call_tool(name, arguments)
        except Exception as exc:  # cancellation is a BaseException and passes
            if isinstance(exc, self._error):
                raise
            raise self._converted(exc, name) or self._error(name, _describe(exc)) from exc
        return _decode(name, result, self._error)

    async def _call_function(self, name: str, arguments: dict[str, Any]) -> Any:
        """A call through a plain callable fails as a call through a session does: whatever
        the function raises (while called or awaited) becomes `ToolCallError`, the original
        as `__cause__`. `BaseException`s that are not `Exception`s (cancellation,
        `KeyboardInterrupt`, `SystemExit`) pass unchanged. A target that returns no
        awaitable is a mistake in the binding, not a failed tool: a `TypeError`."""
        try:
            pending = self._target(name, arguments)
            if inspect.isawaitable(pending):
                return await pending
        except Exception as exc:  # cancellation is a BaseException and passes
            if isinstance(exc, self._error):
                raise
            raise self._converted(exc, name) or self._error(name, _describe(exc)) from exc
        raise TypeError(
            f"bind: the target returned {type(pending).__name__} for {name!r}, "
            "not an awaitable; bind needs an async callable"
        )

    def _converted(self, exc: Exception, name: str) -> ToolCallError | None:
        """A ToolCallError (ours or the SDK's) as the class this binding raises; None for
        anything else."""
        kinds = (ToolCallError,) if self._sdk_error is None else (ToolCallError, self._sdk_error)
        if isinstance(exc, self._error) or not isinstance(exc, kinds):
            return None
        tool, message = getattr(exc, "tool_name", None), getattr(exc, "message", None)
        return self._error(
            tool if isinstance(tool, str) else name,
            message if isinstance(message, str) else str(exc),
        )


def bind(
    target: object, sdk: ModuleType | None = None, *, names: Iterable[str] | None = None
) -> Any:
    """An implementation of the SDK's `Tools` that forwards calls to `target`.

    `target` is an MCP session (`mcp.ClientSession`, `mcp.Client`: anything with an async
    `call_tool(name, arguments)`) or an async callable `(name, arguments) -> value`. `sdk`
    is the generated module: its `ToolName` gives the known names and its `ToolCallError`
    is what failures raise. Returns `Any` so `tools: Tools = bind(...)` type-checks.
    """
    session = callable(getattr(target, "call_tool", None))
    if not session and not callable(target):
        raise TypeError(
            f"bind: expected an MCP session (with call_tool) or an async callable, "
            f"got {type(target).__name__}"
        )
    error: type[ToolCallError] = ToolCallError
    base: type[BaseException] | None = None
    if sdk is not None:
        base = getattr(sdk, "ToolCallError", None)
        if not (isinstance(base, type) and issubclass(base, Exception)):
            raise TypeError(f"bind: {sdk!r} is not a generated SDK (it has no ToolCallError)")
        error = _sdk_error_class(base)
    known: frozenset[str] | None = None
    source = "the server's tools/list"
    if names is not None:
        if isinstance(names, str):
            raise TypeError("bind: names= takes an iterable of tool names, not one string")
        known = frozenset(names)
        if not all(isinstance(name, str) for name in known):
            raise TypeError("bind: names= must hold strings")
        source = "names="
    elif sdk is not None and (known := _sdk_names(sdk)) is not None:
        source = f"{sdk.__name__}.ToolName"
    return BoundTools(target, session, known, source, error, base)
