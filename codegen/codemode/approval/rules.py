"""The user's policy for calls programs make: rules `allow | ask | deny`, and the defaults.

A rule names any of: a tool (its exact namespaced name, or a glob: `github__delete_*`), a
server (the namespace before `__`), an annotation class (`hints.CLASSES`, or `any`); a rule
that names several matches a tool that fits them all. The first rule that matches decides.
With none, the defaults: a read-only tool is allowed, one that says `destructiveHint: true`
is asked about, the rest are allowed, or asked about when they state no hint at all and
`ask_unannotated` is set (what the MCP defaults suggest: an unannotated tool may be
destructive).

`deny` applies to every call; `ask` to calls from programs (a client asks about a model's
own direct calls itself, as it does for any MCP tool).
"""

from __future__ import annotations

import fnmatch
import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

from .hints import CLASSES, ToolHints

Action = Literal["allow", "ask", "deny"]
ACTIONS: tuple[Action, ...] = ("allow", "ask", "deny")
RULE_KEYS = ("tool", "server", "class", "action")
POLICY_KEYS = ("rules", "ask_unannotated")


@dataclass(frozen=True, slots=True)
class Rule:
    action: Action
    tool: str | None = None
    server: str | None = None
    hint_class: str | None = None
    """An annotation class, or `any`."""

    def matches(self, name: str, hints: ToolHints) -> bool:
        if self.tool is not None and not fnmatch.fnmatchcase(name, self.tool):
            return False
        if self.server is not None and name.split("__", 1)[0] != self.server:
            return False
        return self.hint_class in (None, "any") or self.hint_class in hints.classes

    def describe(self) -> str:
        parts = [
            f"{key} {json.dumps(value, ensure_ascii=False)}"
            for key, value in (
                ("tool", self.tool),
                ("server", self.server),
                ("class", self.hint_class),
            )
            if value is not None
        ]
        return " and ".join(parts)


@dataclass(frozen=True, slots=True)
class Verdict:
    action: Action
    because: str
    """Why, in words a user can act on: the rule that matched, or the default."""


@dataclass(frozen=True, slots=True)
class Policy:
    rules: tuple[Rule, ...] = ()
    ask_unannotated: bool = False

    def decide(self, name: str, hints: ToolHints) -> Verdict:
        for number, rule in enumerate(self.rules, 1):
            if rule.matches(name, hints):
                return Verdict(rule.action, f"policy rule {number}: {rule.describe()}")
        if hints.read_only:
            return Verdict("allow", "readOnlyHint: true")
        if "destructive" in hints.classes:
            return Verdict("ask", "destructiveHint: true")
        if not hints.annotated and self.ask_unannotated:
            return Verdict("ask", "no annotations, and ask_unannotated is set")
        return Verdict("allow", "the default for a tool that is not destructive")

    def describe(self) -> list[str]:
        """The rules in force, a line each, for serve to print at start."""
        lines = [
            f"rule {number}: {rule.action} {rule.describe()}"
            for number, rule in enumerate(self.rules, 1)
        ]
        unannotated = "ask" if self.ask_unannotated else "allow"
        lines.append(
            "then: allow read-only tools, ask before destructive ones, "
            f"{unannotated} tools without annotations, allow the rest"
        )
        return lines


DEFAULT_POLICY = Policy()

Fail = Callable[[str, str], Exception]
"""Makes the error for (JSON pointer, what is wrong)."""


def parse_policy(value: Any, pointer: str, fail: Fail) -> Policy:
    """A `policy` setting: `{"rules": [...], "ask_unannotated": false}`."""
    if not isinstance(value, dict):
        raise fail(pointer, f"expected an object with {' and '.join(POLICY_KEYS)}")
    for key in value:
        if key not in POLICY_KEYS:
            raise fail(f"{pointer}/{key}", f"unknown key {key!r} (known: {', '.join(POLICY_KEYS)})")
    ask_unannotated = value.get("ask_unannotated", False)
    if not isinstance(ask_unannotated, bool):
        raise fail(f"{pointer}/ask_unannotated", "expected true or false")
    rules = value.get("rules", [])
    if not isinstance(rules, list):
        raise fail(f"{pointer}/rules", "expected a list of rules")
    parsed = tuple(
        parse_rule(rule, f"{pointer}/rules/{index}", fail) for index, rule in enumerate(rules)
    )
    return Policy(parsed, ask_unannotated)


def parse_rule(value: Any, pointer: str, fail: Fail) -> Rule:
    if not isinstance(value, dict):
        raise fail(pointer, 'expected an object such as {"tool": "github__*", "action": "ask"}')
    for key in value:
        if key not in RULE_KEYS:
            raise fail(f"{pointer}/{key}", f"unknown key {key!r} (known: {', '.join(RULE_KEYS)})")
    action = value.get("action")
    if action not in ACTIONS:
        raise fail(f"{pointer}/action", f"expected one of {', '.join(ACTIONS)}, not {action!r}")
    named: dict[str, str] = {}
    for key in ("tool", "server", "class"):
        if key in value:
            text = value[key]
            if not isinstance(text, str) or not text:
                raise fail(f"{pointer}/{key}", "expected a non-empty string")
            named[key] = text
    if not named:
        raise fail(pointer, "a rule names a tool, a server or a class (or several)")
    known = (*CLASSES, "any")
    if "class" in named and named["class"] not in known:
        raise fail(
            f"{pointer}/class", f"unknown class {named['class']!r} (known: {', '.join(known)})"
        )
    if "server" in named and "__" in named["server"]:
        raise fail(f"{pointer}/server", "a server is a namespace, the part before `__`")
    return Rule(action, named.get("tool"), named.get("server"), named.get("class"))
