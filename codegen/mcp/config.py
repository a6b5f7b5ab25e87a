"""The MCP client config codegen reads: the upstream servers and `serve`'s settings.

`codegen serve --config` fronts the servers of such a file and `codegen harvest --config`
lists their tools, both through this one reader, so a file means the same to both. The
upstream list is the format MCP clients already use, so a client's own config moves over
unchanged: `{"mcpServers": {"name": {"command": ..., "args": [...], "env": {...}}}}` for
servers started over stdio, `{"url": ..., "headers": {...}}` for streamable HTTP ones; the
settings go in a `"codegen"` object beside it, and other top-level keys of a client's file
are ignored. The same table may live in a `pyproject.toml` named with `--config`, as
`[tool.codegen.serve]` (`mcpServers` beside the settings). Per upstream, `allow` / `deny`
list tool names (the server's own names) and `concurrency_safe` maps a tool name to whether
programs may run its calls in parallel.

Only files the user names are read (`--config`, else the user-level `USER_CONFIG`): MCP
clients start servers in the user's workspace, which a cloned repository controls, so
nothing is ever taken from the working folder or its parents. The settings hold no way to
turn the sandbox off: that is `--sandbox none` on the command line, announced at start.

`${VAR}` and `${VAR:-default}` in `command`, `args`, `env`, `cwd`, `url` and `headers` are
replaced from the environment, as MCP clients do, so a shared file keeps secrets out; an
unset variable without a default is an error.

Every problem is an `InvalidInputError` (exit 1) naming the file and the JSON pointer of the
value, so a typo never silently changes what is served. Prefixes are derived from the
server names by the `--namespace` rule (`codegen.load.namespaces`); two names that derive the
same prefix are an error. `serve_config.schema.json` beside this module says the same of a
JSON config for editors (a top-level `"$schema"` key is ignored here); a test holds it to
this reader.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping, Set
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .._support.user_files import read_toml
from ..errors import Diagnostic, InvalidInputError, UsageError, escape_pointer_token
from ..load import json_text, namespaces

UPSTREAM_MESSAGE = 16 * 1024 * 1024
"""Bytes one message from an upstream may have (a tool's result, a page of its tools) unless
the config's `limits.upstream_message` says otherwise: a bigger one is an error to the
request it answers, never read whole. Here, not beside the connection code, so reading a
config (`serve --print-config-example`, a plan) needs no MCP SDK."""

MODES = ("code", "both")
CHECK_PROGRAMS = ("refuse", "warn", "off")
"""What the check of a program before it runs does (`codemode.checks`): refuse a run with a
definite mistake, only warn of it in the result, or no check."""
SDK_PLACES = ("description", "instructions")
"""Where the SDK section goes: `run_code`'s description (every client shows tool
descriptions to the model) or the server's `instructions` (shown only by some clients)."""

SERVER_KEYS = (
    "command",
    "args",
    "env",
    "cwd",
    "url",
    "headers",
    "type",
    "disabled",
    "allow",
    "deny",
    "concurrency_safe",
    "description",
)
SETTING_KEYS = (
    "mode",
    "lang",
    "sdk",
    "http",
    "sandbox",
    "typescript",
    "limits",
    "http_token",
    "http_allowed_hosts",
    "http_allowed_origins",
    "http_limits",
    "description_budget",
    "result_tokens",
    "check_programs",
    "policy",
    "ask_timeout",
    "audit_log",
    "audit_arguments",
)
TABLE_KEYS = ("mcpServers", *SETTING_KEYS)
SETTINGS_KEY = "codegen"
"""The settings' object in a JSON config, beside `mcpServers`."""
SANDBOXES = ("auto", "bubblewrap", "namespaces")
"""What a config may choose; no isolation is only ever a command-line act."""
LIMIT_KEYS = {
    "timeout": "seconds",
    "cpu_seconds": "count",
    "memory": "size",
    "output": "size",
    "arguments": "size",
    "processes": "count",
    "concurrent_runs": "count",
    "upstream_message": "size",
}
"""The `limits` a config may set: a number of seconds, a count, or a size (bytes, or a
string such as "256MiB")."""
HTTP_LIMIT_KEYS = {
    "header_timeout": "seconds",
    "idle_timeout": "seconds",
    "body_timeout": "seconds",
    "body": "size",
    "connections": "count",
}
"""The `http_limits` a config may set (`--http-KEY` on the command line): how long a
connection may take to send a request head, stay idle between requests, and send a body;
how large a body may be; how many connections may be open (`serve.http_limits`)."""
TRANSPORT_TYPES = {
    "stdio": "stdio",
    "http": "http",
    "streamable-http": "http",
    "streamableHttp": "http",
}

_VARIABLE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")


@dataclass(frozen=True, slots=True)
class Upstream:
    """One upstream server as configured."""

    name: str
    """The key in `mcpServers`, as written."""
    prefix: str
    """`prefix__tool` names its tools (derived from `name`)."""
    pointer: str
    """JSON pointer of its entry, for messages."""
    command: tuple[str, ...] = ()
    """Program and arguments (stdio); empty for a URL upstream."""
    env: tuple[tuple[str, str], ...] = ()
    cwd: str | None = None
    url: str | None = None
    headers: tuple[tuple[str, str], ...] = ()
    allow: frozenset[str] | None = None
    deny: frozenset[str] = frozenset()
    concurrency_safe: tuple[tuple[str, bool], ...] = ()
    description: str = ""
    """One line on what the server is for: its entry in the server index a model reads
    when the tools are too many to list."""
    shown: str = ""
    """The command or URL as written, `${VAR}`s unexpanded: what messages show, so a secret
    passed through the environment is never printed."""

    @property
    def label(self) -> str:
        """How messages name it: `"time" (mcp-server-time)`."""
        return f"{json.dumps(self.name, ensure_ascii=False)} ({self.shown})"

    def admits(self, tool: str) -> bool:
        return tool not in self.deny and (self.allow is None or tool in self.allow)

    def unlisted(self, listed: Set[Any]) -> list[str]:
        """Warnings for the `allow` / `deny` entries that name no tool of `listed` (the
        names the server lists)."""
        return [
            f"{key} names {unknown!r}, which the server does not list"
            for key, names in (("allow", self.allow or frozenset()), ("deny", self.deny))
            for unknown in sorted(names - listed)
        ]


@dataclass(frozen=True, slots=True)
class ServeSettings:
    """The settings that are not upstreams; None where the source leaves one out."""

    mode: str | None = None
    lang: str | None = None
    sdk: str | None = None
    http: str | None = None
    sandbox: str | None = None
    typescript: str | None = None
    limits: tuple[tuple[str, float], ...] = ()
    """`LIMIT_KEYS` names and their values (sizes in bytes)."""
    http_token: str | None = None
    http_allowed_hosts: tuple[str, ...] = ()
    http_allowed_origins: tuple[str, ...] = ()
    http_limits: tuple[tuple[str, float], ...] = ()
    """`HTTP_LIMIT_KEYS` names and their values (sizes in bytes)."""
    description_budget: int | None = None
    """UTF-16 code units the SDK text given up front may take (`codemode.tiers`)."""
    result_tokens: int | None = None
    """`o200k_base` tokens a run's result may take before it is cut (`codemode.fitting`)."""
    check_programs: str | None = None
    """`refuse`, `warn` or `off`: what the check of a program before it runs does."""
    policy: tuple[str, str, Any] | None = None
    """The `policy` object as written, with its source and JSON pointer: serve reads it with
    Code Mode's rule parser (`codemode.approval.rules.parse_policy`)."""
    ask_timeout: float | None = None
    """Seconds the user has to answer an approval request."""
    audit_log: str | None = None
    """The audit log's absolute path."""
    audit_arguments: bool | None = None
    """Whether the audit log records the arguments themselves (they carry secrets)."""


@dataclass(frozen=True, slots=True)
class ServeConfig:
    source: str
    upstreams: tuple[Upstream, ...]
    settings: ServeSettings = ServeSettings()


def _problem(source: str, pointer: str, message: str) -> InvalidInputError:
    return InvalidInputError((Diagnostic(source, pointer, message),))


def _kind(value: Any) -> str:
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    if isinstance(value, dict):
        return "an object"
    return "null" if value is None else type(value).__name__


class _Reader:
    """Checks values of one source, raising at the first problem with its pointer."""

    def __init__(self, source: str, environ: Mapping[str, str]) -> None:
        self.source = source
        self.environ = environ

    def fail(self, pointer: str, message: str) -> InvalidInputError:
        return _problem(self.source, pointer, message)

    def string(self, value: Any, pointer: str, *, expand: bool = False) -> str:
        if not isinstance(value, str) or not value:
            shown = "an empty string" if value == "" else _kind(value)
            raise self.fail(pointer, f"expected a non-empty string, got {shown}")
        return self.expand(value, pointer) if expand else value

    def expand(self, text: str, pointer: str) -> str:
        def substitute(match: re.Match[str]) -> str:
            name, default = match.group(1), match.group(2)
            if name in self.environ:
                return self.environ[name]
            if default is not None:
                return default
            raise self.fail(
                pointer, f"environment variable {name} is not set (write ${{{name}:-default}})"
            )

        return _VARIABLE.sub(substitute, text)

    def strings(self, value: Any, pointer: str, *, expand: bool = False) -> list[str]:
        if not isinstance(value, list):
            raise self.fail(pointer, f"expected an array of strings, got {_kind(value)}")
        result = []
        for index, item in enumerate(value):
            if not isinstance(item, str):
                raise self.fail(f"{pointer}/{index}", f"expected a string, got {_kind(item)}")
            result.append(self.expand(item, f"{pointer}/{index}") if expand else item)
        return result

    def string_map(self, value: Any, pointer: str) -> tuple[tuple[str, str], ...]:
        if not isinstance(value, dict):
            raise self.fail(pointer, f"expected an object of strings, got {_kind(value)}")
        pairs = []
        for key, item in value.items():
            where = f"{pointer}/{escape_pointer_token(key)}"
            if not isinstance(item, str):
                raise self.fail(where, f"expected a string, got {_kind(item)}")
            pairs.append((key, self.expand(item, where)))
        return tuple(pairs)

    def choice(self, value: Any, pointer: str, known: tuple[str, ...]) -> str:
        text = self.string(value, pointer)
        if text not in known:
            raise self.fail(
                pointer, f"unknown value {text!r} (known: {', '.join(map(repr, known))})"
            )
        return text


def parse_servers(
    servers: Any, source: str, pointer: str, environ: Mapping[str, str] | None = None
) -> tuple[Upstream, ...]:
    """The `mcpServers` object: one `Upstream` per entry that is not `disabled`, in the
    order written."""
    reader = _Reader(source, os.environ if environ is None else environ)
    if not isinstance(servers, dict):
        raise reader.fail(pointer, f"expected an object of servers, got {_kind(servers)}")
    upstreams: list[Upstream] = []
    owners: dict[str, str] = {}
    for name, entry in servers.items():
        where = f"{pointer}/{escape_pointer_token(name)}"
        upstream = _parse_server(reader, name, entry, where)
        if upstream is None:
            continue
        if upstream.prefix in owners:
            raise reader.fail(
                where,
                f"server {json.dumps(name)} derives the tool prefix {upstream.prefix!r}, like "
                f"{json.dumps(owners[upstream.prefix])}: rename one of them",
            )
        owners[upstream.prefix] = name
        upstreams.append(upstream)
    if not upstreams:
        raise reader.fail(
            pointer,
            "no upstream servers to serve (every entry is disabled)"
            if servers
            else "no upstream servers: add at least one entry",
        )
    return tuple(upstreams)


def _parse_server(reader: _Reader, name: str, entry: Any, where: str) -> Upstream | None:
    if not isinstance(entry, dict):
        raise reader.fail(where, f"expected an object, got {_kind(entry)}")
    for key in entry:
        if key not in SERVER_KEYS:
            raise reader.fail(
                f"{where}/{escape_pointer_token(key)}",
                f"unknown key {key!r} (known: {', '.join(SERVER_KEYS)})",
            )
    disabled = entry.get("disabled", False)
    if not isinstance(disabled, bool):
        raise reader.fail(f"{where}/disabled", f"expected a boolean, got {_kind(disabled)}")
    if disabled:
        return None
    prefix = namespaces.sanitize(name)
    if not prefix:
        raise reader.fail(
            where, f"server name {json.dumps(name)} leaves no ASCII letter or digit for a prefix"
        )
    kind = None
    if "type" in entry:
        declared = reader.string(entry["type"], f"{where}/type")
        if declared not in TRANSPORT_TYPES:
            raise reader.fail(
                f"{where}/type",
                f"unsupported transport {declared!r} (known: {', '.join(TRANSPORT_TYPES)})",
            )
        kind = TRANSPORT_TYPES[declared]
    has_command, has_url = "command" in entry, "url" in entry
    if has_command == has_url:
        raise reader.fail(
            where,
            'needs exactly one of "command" (a server started over stdio) or "url" '
            "(a streamable HTTP server)",
        )
    if kind is not None and kind != ("stdio" if has_command else "http"):
        raise reader.fail(
            f"{where}/type",
            f"type {entry['type']!r} does not match {'command' if has_command else 'url'!r}",
        )
    stdio_only = ("args", "env", "cwd") if has_url else ("headers",)
    for key in stdio_only:
        if key in entry:
            raise reader.fail(
                f"{where}/{key}",
                f"{key!r} applies only to {'stdio' if has_url else 'HTTP'} servers",
            )
    allow = entry.get("allow")
    concurrency: list[tuple[str, bool]] = []
    safe = entry.get("concurrency_safe", {})
    if not isinstance(safe, dict):
        raise reader.fail(
            f"{where}/concurrency_safe",
            f"expected an object of tool names to booleans, got {_kind(safe)}",
        )
    for tool, flag in safe.items():
        if not isinstance(flag, bool):
            raise reader.fail(
                f"{where}/concurrency_safe/{escape_pointer_token(tool)}",
                f"expected a boolean, got {_kind(flag)}",
            )
        concurrency.append((tool, flag))
    common: dict[str, Any] = {
        "name": name,
        "prefix": prefix,
        "pointer": where,
        "allow": None if allow is None else frozenset(reader.strings(allow, f"{where}/allow")),
        "deny": frozenset(reader.strings(entry.get("deny", []), f"{where}/deny")),
        "concurrency_safe": tuple(sorted(concurrency)),
        "description": ""
        if "description" not in entry
        else reader.string(entry["description"], f"{where}/description"),
    }
    if has_url:
        url = reader.string(entry["url"], f"{where}/url", expand=True)
        if not url.startswith(("http://", "https://")):
            raise reader.fail(f"{where}/url", f"expected an http:// or https:// URL, got {url!r}")
        headers = reader.string_map(entry.get("headers", {}), f"{where}/headers")
        return Upstream(url=url, headers=headers, shown=entry["url"], **common)
    command = reader.string(entry["command"], f"{where}/command", expand=True)
    arguments = reader.strings(entry.get("args", []), f"{where}/args", expand=True)
    env = reader.string_map(entry.get("env", {}), f"{where}/env")
    cwd = entry.get("cwd")
    written = [entry["command"], *(a for a in entry.get("args", []) if isinstance(a, str))]
    return Upstream(
        command=(command, *arguments),
        shown=" ".join(_one_line(part) for part in written),
        env=env,
        cwd=None if cwd is None else reader.string(cwd, f"{where}/cwd", expand=True),
        **common,
    )


def _one_line(part: str) -> str:
    """An argument as messages show it: as it is, or quoted when it holds spaces, quotes
    or line breaks (then one line still)."""
    if part and not re.search(r"[\s\"'\\]", part):
        return part
    return json.dumps(part, ensure_ascii=False)


def load_servers_file(path: Path, display: str) -> ServeConfig:
    """A JSON file in the MCP client format (`mcpServers`), or a `pyproject.toml` whose
    `[tool.codegen.serve]` table holds it."""
    if path.suffix == ".toml":
        config = load_table(path, display)
        if config is None:
            raise UsageError(f"{display}: has no [tool.codegen.serve] table")
        return config
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise UsageError(f"{display}: cannot read: {exc.strerror or exc}") from None
    try:
        document = json_text.loads(json_text.decode_bytes(data))
    except json_text.DecodeProblem as problem:
        raise _problem(display, problem.pointer, problem.describe()) from None
    if not isinstance(document, dict):
        raise _problem(display, "", f'expected an object with "mcpServers", got {_kind(document)}')
    if "mcpServers" not in document:
        raise _problem(display, "", 'no "mcpServers" object: which servers should be served?')
    settings = ServeSettings()
    if SETTINGS_KEY in document:
        table = document[SETTINGS_KEY]
        base = f"/{SETTINGS_KEY}"
        if not isinstance(table, dict):
            raise _problem(display, base, f"expected an object of settings, got {_kind(table)}")
        _known_keys(table, SETTING_KEYS, display, base, "setting")
        settings = parse_settings(table, display, base, _Reader(display, os.environ))
    upstreams = parse_servers(document["mcpServers"], display, "/mcpServers")
    return ServeConfig(display, upstreams, settings)


def _known_keys(
    table: dict[str, Any], known: tuple[str, ...], source: str, base: str, what: str
) -> None:
    for key in table:
        if key not in known:
            raise _problem(
                source,
                f"{base}/{escape_pointer_token(key)}",
                f"unknown {what} {key!r} (known: {', '.join(known)})",
            )


def user_config(environ: Mapping[str, str] | None = None) -> Path | None:
    """The user-level config `serve` reads when no `--config` is given:
    `$XDG_CONFIG_HOME/codegen/serve.json`, else `$HOME/.config/codegen/serve.json`; None
    when no home folder is known. Only absolute folders count (the XDG rules say a relative
    `XDG_CONFIG_HOME` is ignored): a relative one would be read from the working folder,
    where a cloned repository could plant a config whose servers serve would start. A
    relative or missing `HOME` gives way to the account's home folder."""
    environ = os.environ if environ is None else environ
    configured = environ.get("XDG_CONFIG_HOME", "")
    if os.path.isabs(configured):
        return Path(configured) / "codegen" / "serve.json"
    home = environ.get("HOME", "")
    if not os.path.isabs(home):
        home = _account_home()
    if not os.path.isabs(home):
        return None
    return Path(home) / ".config" / "codegen" / "serve.json"


def _account_home() -> str:
    """This uid's home folder in the password database ("" when it has no entry)."""
    import pwd

    try:
        return pwd.getpwuid(os.getuid()).pw_dir
    except KeyError:
        return ""


def load_table(path: Path, display: str) -> ServeConfig | None:
    """`[tool.codegen.serve]` of one `pyproject.toml`; None when it has no such table."""
    document = read_toml(path, display)
    table = document.get("tool", {}).get("codegen", {})
    if not isinstance(table, dict) or "serve" not in table:
        return None
    serve = table["serve"]
    base = "/tool/codegen/serve"
    if not isinstance(serve, dict):
        raise _problem(display, base, f"expected a table, got {_kind(serve)}")
    _known_keys(serve, TABLE_KEYS, display, base, "key")
    if "mcpServers" not in serve:
        raise _problem(display, base, "no mcpServers table: which servers should be served?")
    settings = parse_settings(serve, display, base, _Reader(display, os.environ))
    upstreams = parse_servers(serve["mcpServers"], display, f"{base}/mcpServers")
    return ServeConfig(display, upstreams, settings)


def parse_settings(table: dict[str, Any], source: str, base: str, reader: _Reader) -> ServeSettings:
    """The settings of a `[tool.codegen.serve]` table or a JSON config's `"codegen"` object
    (keys other than `SETTING_KEYS` and `mcpServers` are refused by the caller); a JSON
    `null` leaves its setting unset, as the example shows the ones that are by default."""

    table = {key: value for key, value in table.items() if value is not None}  # null: unset

    def where(key: str) -> str:
        return f"{base}/{key}"

    def optional(key: str, read: Any) -> Any:
        return None if key not in table else read(table[key], where(key))

    sandbox = optional("sandbox", lambda value, at: reader.string(value, at))
    if sandbox == "none":
        raise reader.fail(
            where("sandbox"),
            "a config cannot turn the sandbox off; pass --sandbox none on the command line",
        )
    if sandbox is not None:
        reader.choice(sandbox, where("sandbox"), SANDBOXES)
    http = optional("http", lambda value, at: reader.string(value, at))
    if http is not None:
        try:
            parse_address(http)
        except UsageError as error:
            raise reader.fail(where("http"), str(error)) from None
    return ServeSettings(
        mode=optional("mode", lambda value, at: reader.choice(value, at, MODES)),
        lang=optional("lang", lambda value, at: reader.string(value, at)),
        sdk=optional("sdk", lambda value, at: reader.choice(value, at, SDK_PLACES)),
        http=http,
        sandbox=sandbox,
        typescript=optional("typescript", lambda value, at: reader.string(value, at, expand=True)),
        limits=()
        if "limits" not in table
        else parse_limits(table["limits"], where("limits"), reader),
        http_token=optional("http_token", lambda value, at: reader.string(value, at, expand=True)),
        http_allowed_hosts=tuple(
            optional("http_allowed_hosts", lambda value, at: reader.strings(value, at)) or ()
        ),
        http_allowed_origins=tuple(
            optional("http_allowed_origins", lambda value, at: reader.strings(value, at)) or ()
        ),
        http_limits=()
        if "http_limits" not in table
        else parse_limits(table["http_limits"], where("http_limits"), reader, HTTP_LIMIT_KEYS),
        description_budget=optional("description_budget", _budget(reader)),
        result_tokens=optional("result_tokens", _result_tokens(reader)),
        check_programs=optional(
            "check_programs", lambda value, at: reader.choice(value, at, CHECK_PROGRAMS)
        ),
        policy=optional("policy", lambda value, at: (source, at, value)),
        ask_timeout=optional("ask_timeout", lambda value, at: _seconds(reader, value, at)),
        audit_log=optional("audit_log", lambda value, at: _absolute(reader, value, at)),
        audit_arguments=optional("audit_arguments", lambda value, at: _flag(reader, value, at)),
    )


def _seconds(reader: _Reader, value: Any, pointer: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 < value <= 86400:
        raise reader.fail(pointer, "expected a number of seconds, more than 0, at most 86400")
    return float(value)


def _flag(reader: _Reader, value: Any, pointer: str) -> bool:
    if not isinstance(value, bool):
        raise reader.fail(pointer, f"expected true or false, got {_kind(value)}")
    return value


def _absolute(reader: _Reader, value: Any, pointer: str) -> str:
    path = reader.string(value, pointer, expand=True)
    if not os.path.isabs(path):
        raise reader.fail(
            pointer,
            "expected an absolute path (${HOME}/... works): a relative one would depend on "
            "the folder serve starts in",
        )
    return path


MIN_BUDGET = 512
"""The smallest description budget: the discovery text's essentials need about this much."""


def parse_budget(value: Any) -> int:
    """A description budget (the setting's or `--description-budget`'s): an integer number
    of UTF-16 code units, at least `MIN_BUDGET`."""
    if type(value) is not int or value < MIN_BUDGET:
        raise ValueError(
            f"expected a number of UTF-16 code units of at least {MIN_BUDGET}, got {value!r}"
        )
    return value


def _budget(reader: _Reader) -> Any:
    def read(value: Any, at: str) -> int:
        try:
            return parse_budget(value)
        except ValueError as error:
            raise reader.fail(at, str(error)) from None

    return read


MIN_RESULT_TOKENS = 1_000
MAX_RESULT_TOKENS = 1_000_000


def parse_result_tokens(value: Any) -> int:
    """A result budget (the setting's or `--result-tokens`'s): an integer number of
    `o200k_base` tokens, from `MIN_RESULT_TOKENS` to `MAX_RESULT_TOKENS`."""
    if type(value) is not int or not MIN_RESULT_TOKENS <= value <= MAX_RESULT_TOKENS:
        raise ValueError(
            f"expected a number of tokens from {MIN_RESULT_TOKENS:,} to "
            f"{MAX_RESULT_TOKENS:,}, got {value!r}"
        )
    return value


def _result_tokens(reader: _Reader) -> Any:
    def read(value: Any, at: str) -> int:
        try:
            return parse_result_tokens(value)
        except ValueError as error:
            raise reader.fail(at, str(error)) from None

    return read


def parse_limits(
    value: Any, pointer: str, reader: _Reader, known: Mapping[str, str] = LIMIT_KEYS
) -> tuple[tuple[str, float], ...]:
    """An object of limits: each key one of `known`, each value of its kind."""
    if not isinstance(value, dict):
        raise reader.fail(pointer, f"expected an object of limits, got {_kind(value)}")
    found = []
    for key, item in value.items():
        at = f"{pointer}/{escape_pointer_token(key)}"
        kind = known.get(key)
        if kind is None:
            raise reader.fail(at, f"unknown limit {key!r} (known: {', '.join(known)})")
        try:
            number = parse_limit(item, kind)
        except ValueError as error:
            raise reader.fail(at, str(error)) from None
        found.append((key, number))
    return tuple(found)


_SIZE = re.compile(r"\s*(\d+(?:\.\d+)?)\s*([KMGT]?)(i?B)?\s*", re.IGNORECASE)
_UNITS = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}
_LARGEST = 2**63


def parse_limit(value: Any, kind: str) -> float:
    """A limit's value: seconds (a positive number), a count (a positive integer) or a size
    (a positive integer of bytes, or a string such as "512KiB", "256M", "1GB": binary units)."""
    if kind == "size" and isinstance(value, str):
        match = _SIZE.fullmatch(value)
        if match is None:
            raise ValueError(f'expected a size such as 1048576 or "256MiB", got {value!r}')
        value = float(match.group(1)) * _UNITS[match.group(2).upper()]
    if isinstance(value, bool) or not isinstance(value, int | float):
        shown = {"seconds": "a number of seconds", "count": "an integer", "size": "a size"}[kind]
        raise ValueError(f"expected {shown}, got {_kind(value)}")
    if not value < _LARGEST:  # also NaN, and a float too large to be one
        raise ValueError("expected a value below 2**63 (about 9.2e18)")
    if kind != "seconds" and not float(value).is_integer():
        raise ValueError(f"expected a whole number, got {value!r}")
    if value <= 0:
        raise ValueError(f"expected a positive value, got {value!r}")
    return float(value) if kind == "seconds" else int(value)


def parse_address(text: str) -> tuple[str, int]:
    """`HOST:PORT` (`[::1]:8000` for IPv6) as (host, port)."""
    host, separator, port = text.rpartition(":")
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    if not separator or not host or not port.isdecimal() or not 0 <= int(port) <= 65535:
        raise UsageError(f"expected HOST:PORT (for example 127.0.0.1:8765), got {text!r}")
    return host, int(port)
