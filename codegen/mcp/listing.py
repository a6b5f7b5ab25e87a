"""A server's whole tool list, page by page (`tools/list` with cursors).

`list_tools(fetch)` reads pages until the server sends no cursor, and stops a pagination
that never ends: a cursor sent twice, or more than `MAX_LIST_PAGES` pages. `raw_pages(session)`
fetches each tool as the plain JSON the server sent (reduced to `TOOL_KEYS`, in a fixed
order: what `harvest` writes and `serve` mounts); `typed_pages(session)` goes through the
session's own `list_tools`, for objects that only have that (the SDK binding reads names).
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any

MAX_LIST_PAGES = 1000
"""`tools/list` pages read before a server's pagination is declared endless (a repeated
cursor is caught at once; this stops one that invents new cursors forever)."""

TOOL_KEYS = ("name", "title", "description", "inputSchema", "outputSchema", "annotations")
"""The keys of a tool that are kept, in the order they are written (the `ToolDefinition`
fields, MCP spelling). Display and transport metadata (`icons`, `_meta`, `execution`) are
left out: they describe this server instance, not the tool's interface."""

Page = tuple[list[Any], str | None]
"""A page's tools and the cursor of the next page (None: the last page)."""
Fetch = Callable[[str | None], Awaitable[Page]]


class EndlessListing(Exception):
    """The server's pagination never ends; the message says how it showed."""


@dataclass(frozen=True, slots=True)
class Listing:
    tools: tuple[Any, ...]
    pages: int


def tool_record(raw: Mapping[str, Any]) -> dict[str, Any]:
    """One tool as the server sent it, reduced to `TOOL_KEYS` in their fixed order."""
    return {key: raw[key] for key in TOOL_KEYS if key in raw}


async def list_tools(fetch: Fetch, on_page: Callable[[int, int], None] | None = None) -> Listing:
    """Every page from `fetch(cursor)`; `on_page(page, tools so far)` before each fetch."""
    tools: list[Any] = []
    seen: set[str] = set()
    cursor: str | None = None
    for page in range(1, MAX_LIST_PAGES + 1):
        if on_page is not None:
            on_page(page, len(tools))
        found, cursor = await fetch(cursor)
        tools.extend(found)
        if not cursor:
            return Listing(tuple(tools), page)
        if cursor in seen:
            raise EndlessListing(
                f"the server sent the cursor {cursor!r} twice; its list never ends"
            )
        seen.add(cursor)
    raise EndlessListing(f"the server's tool list did not end within {MAX_LIST_PAGES} pages")


def raw_pages(session: Any) -> Fetch:
    """Pages of plain tool records from an `mcp` `ClientSession` (`send_request`)."""
    from mcp import types
    from pydantic import BaseModel, ConfigDict, Field

    class RawPage(BaseModel):
        """One page with every tool kept as the JSON the server sent (the SDK has already
        checked it against the protocol's schema)."""

        model_config = ConfigDict(extra="ignore")
        tools: list[dict[str, Any]]
        next_cursor: str | None = Field(default=None, alias="nextCursor")

    async def fetch(cursor: str | None) -> Page:
        params = types.PaginatedRequestParams(cursor=cursor) if cursor else None
        page = await session.send_request(types.ListToolsRequest(params=params), RawPage)
        return [tool_record(tool) for tool in page.tools], page.next_cursor

    return fetch


def typed_pages(session: Any) -> Fetch:
    """Pages from a session's own `list_tools`: `ClientSession` takes `params=` (1.x
    deprecates `cursor=`), `mcp.Client` takes `cursor=`. Tools as the session returns them."""

    async def fetch(cursor: str | None) -> Page:
        if cursor is None:
            page = await session.list_tools()
        else:
            parameters: Mapping[str, Any]
            try:
                parameters = inspect.signature(session.list_tools).parameters
            except (TypeError, ValueError):  # no signature to read: `cursor=`, as `Client`
                parameters = {}
            if "params" in parameters:
                from mcp import types

                params = types.PaginatedRequestParams(cursor=cursor)
                page = await session.list_tools(params=params)
            else:
                page = await session.list_tools(cursor=cursor)
        tools = field(page, "tools") or []
        return list(tools), field(page, "next_cursor", "nextCursor") or None

    return fetch


def field(value: Any, *keys: str) -> Any:
    """A field of an MCP object or of its JSON form, under any of its spellings (2.x
    snake_case attributes, 1.x camelCase attributes, JSON keys)."""
    for key in keys:
        if isinstance(value, Mapping):
            if key in value:
                return value[key]
        elif hasattr(value, key):
            return getattr(value, key)
    return None
