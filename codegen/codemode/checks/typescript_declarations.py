"""The TypeScript section turned into ambient declarations a checker can hold a program
against, and each tool's declaration for the help of a wrong call.

The section (`render/sections/typescript.py`) is already a valid declarations file of
`tools` and `ToolCallError`; a program also sees what the worker gives it besides, so the
checkable text adds:

- `tools` as an interface, `TOOLS_TYPE`, rather than a type literal: the checker's messages
  then name it in one word (which the messages say as `tools`) instead of spelling out every
  tool;
- `catalog` (discovery), as the worker implements it;
- the Node globals a program may use (`console`, timers, `process`, `Buffer`, `URL`,
  `TextEncoder`, ...), loosely typed: what a program does with them is not this check's
  business, only its calls of tools are;
- `declare module "*"`: `await import("node:fs")` is any module.

A text without `declare const tools: {...}` and `ToolCallError` is not a section, and is
refused (`NotCheckable`).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

TOOLS_TYPE = "CodegenTools"
"""The interface `tools` is declared with (`typescript_check_server.js` finds the tools by
it)."""

OPENING = "declare const tools: {"
CLOSING = "};"

CATALOG = """\
declare const catalog: {
 search(
  query: string | readonly string[],
  options?: number | { k?: number; server?: string | null },
 ): Promise<{
  readonly names: string[];
  readonly matched: number;
  readonly cut: boolean;
  readonly text: string;
  toString(): string;
 }>;
 describe(name: string): Promise<string>;
 servers(): Promise<{ name: string; summary: string; tools: number }[]>;
 names(server?: string | null): Promise<string[]>;
};
"""
"""`catalog` as the worker makes it (`typescript_worker.js`, `makeCatalog`)."""

GLOBALS = """\
declare const console: {
 log(...data: any[]): void;
 info(...data: any[]): void;
 warn(...data: any[]): void;
 error(...data: any[]): void;
 debug(...data: any[]): void;
 trace(...data: any[]): void;
 dir(item?: any, options?: any): void;
 table(data: any, columns?: string[]): void;
 time(label?: string): void;
 timeEnd(label?: string): void;
 timeLog(label?: string, ...data: any[]): void;
 count(label?: string): void;
 assert(condition?: boolean, ...data: any[]): void;
 group(...data: any[]): void;
 groupEnd(): void;
};
declare function setTimeout(callback: (...args: any[]) => void, ms?: number, ...args: any[]): any;
declare function clearTimeout(id?: any): void;
declare function setInterval(callback: (...args: any[]) => void, ms?: number, ...args: any[]): any;
declare function clearInterval(id?: any): void;
declare function setImmediate(callback: (...args: any[]) => void, ...args: any[]): any;
declare function clearImmediate(id?: any): void;
declare function queueMicrotask(callback: () => void): void;
declare function structuredClone<T>(value: T, options?: any): T;
declare function atob(data: string): string;
declare function btoa(data: string): string;
declare const process: any;
declare const Buffer: any;
declare const URL: any;
declare const URLSearchParams: any;
declare const TextEncoder: any;
declare const TextDecoder: any;
declare const AbortController: any;
declare const AbortSignal: any;
declare const performance: any;
declare const crypto: any;
declare const fetch: any;
declare const Blob: any;
declare module "*";
"""
"""What Node gives every program besides the ECMAScript library, loosely typed."""

_MEMBER = re.compile(r'^ (?P<key>"(?:[^"\\]|\\.)*"|[A-Za-z_$][\w$]*)\(')
_DECLARED = re.compile(r"^(?:interface|type) (?P<name>[A-Za-z_$][\w$]*)", re.MULTILINE)


class NotCheckable(ValueError):
    """The text is not a TypeScript section (no `declare const tools: {...}` or
    `ToolCallError`)."""


@dataclass(frozen=True, slots=True)
class ToolDeclaration:
    name: str
    call: str
    """How a program calls it: `tools.get_file` or `tools["get-file"]`."""
    declaration: str
    """Its member as the section shows it, then the named types it uses: a wrong call's
    help."""


@dataclass(frozen=True, slots=True)
class CheckableDeclarations:
    text: str
    """What the checker reads (`declarations.d.ts`)."""
    tools: tuple[ToolDeclaration, ...]

    def by_name(self) -> dict[str, ToolDeclaration]:
        return {each.name: each for each in self.tools}

    def calls(self) -> dict[str, str]:
        return {each.name: each.call for each in self.tools}


def checkable_declarations(section: str) -> CheckableDeclarations:
    """The checkable declarations of a TypeScript section's SDK text (what `describe` and the
    full section show); `NotCheckable` for any other text."""
    lines = section.split("\n")
    try:
        opening = lines.index(OPENING)
        closing = lines.index(CLOSING, opening)
    except ValueError:
        raise NotCheckable(f"no `{OPENING} ... {CLOSING}` block") from None
    if not any(line.startswith("declare class ToolCallError ") for line in lines[:opening]):
        raise NotCheckable("no `declare class ToolCallError`")
    named = _named_blocks(lines[closing + 1 :])
    if TOOLS_TYPE in named:
        raise NotCheckable(f"the section declares {TOOLS_TYPE} itself")
    members = _members(lines[opening + 1 : closing])
    tools = tuple(
        ToolDeclaration(name, _call(name), _with_types(text, named)) for name, text in members
    )
    checkable = [
        *lines[:opening],
        f"interface {TOOLS_TYPE} {{",
        *lines[opening + 1 : closing],
        "}",
        f"declare const tools: {TOOLS_TYPE};",
        *lines[closing + 1 :],
    ]
    extra = GLOBALS if "declare const catalog" in section else CATALOG + GLOBALS
    return CheckableDeclarations("\n".join(checkable).rstrip("\n") + "\n" + extra, tools)


def _call(name: str) -> str:
    plain = re.fullmatch(r"[A-Za-z_$][\w$]*", name) is not None
    return f"tools.{name}" if plain else f"tools[{json.dumps(name, ensure_ascii=False)}]"


def _members(lines: list[str]) -> list[tuple[str, str]]:
    """(tool name, its lines) for each member of the `tools` block: the comment lines above
    it, its head, and for an argument object written out, its lines up to ` }): ...`."""
    found: list[tuple[str, str]] = []
    above: list[str] = []
    index = 0
    while index < len(lines):
        line = lines[index]
        head = _MEMBER.match(line)
        if head is None:
            above = [*above, line] if line.startswith(" //") else []
            index += 1
            continue
        key = head.group("key")
        name = json.loads(key) if key.startswith('"') else key
        end = index
        if line.rstrip().endswith("(args: {"):
            while end + 1 < len(lines) and not lines[end + 1].startswith(" }"):
                end += 1
            end += 1
        found.append((name, "\n".join([*above, *lines[index : end + 1]])))
        above = []
        index = end + 1
    return found


def _named_blocks(lines: list[str]) -> dict[str, str]:
    """Each named type after the `tools` block: its comment lines, then its declaration."""
    blocks: dict[str, str] = {}
    above: list[str] = []
    index = 0
    while index < len(lines):
        line = lines[index]
        declared = _DECLARED.match(line)
        if declared is None:
            above = [*above, line] if line.startswith("//") else []
            index += 1
            continue
        end = index
        if line.rstrip().endswith("{"):
            while end + 1 < len(lines) and lines[end + 1] != "}":
                end += 1
            end += 1
        blocks[declared.group("name")] = "\n".join([*above, *lines[index : end + 1]])
        above = []
        index = end + 1
    return blocks


DECLARATION_LIMIT = 1500
"""Characters of a tool's declaration a wrong call's help shows."""


def _with_types(member: str, named: dict[str, str]) -> str:
    """The member, then the named types it uses and the ones those use, in the order first
    needed, while they fit in `DECLARATION_LIMIT`."""
    parts = [member]
    size = len(member)
    seen: set[str] = set()
    queue = _mentioned(member, named)
    while queue:
        name = queue.pop(0)
        if name in seen:
            continue
        seen.add(name)
        text = named[name]
        if size + len(text) + 1 > DECLARATION_LIMIT:
            break
        parts.append(text)
        size += len(text) + 1
        queue += [other for other in _mentioned(text, named) if other not in seen]
    return "\n".join(parts)


_WORD = re.compile(r"[A-Za-z_$][\w$]*")


def _mentioned(text: str, named: dict[str, str]) -> list[str]:
    code = "\n".join(
        line.split(" //")[0] for line in text.split("\n") if not line.lstrip().startswith("//")
    )
    found: list[str] = []
    for word in _WORD.findall(code):
        if word in named and word not in found:
            found.append(word)
    return found
