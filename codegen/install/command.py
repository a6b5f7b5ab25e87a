"""`codegen install CLIENT`: write, or update, the entry that makes a client start `codegen
serve` (or reach a running `serve --http`).

Idempotent: when the file already holds the entry as it would be written, nothing is
touched and the command says so. Nothing else in the file changes (`documents.py`); an entry
of the same name that is not ours is left alone unless `--force`. `--dry-run` prints the
unified diff and writes nothing (an update prints it too, after writing); `--print` prints
the entry as the client's file would hold it. A real change is written atomically
(`_support/atomic_write.py`), through a symbolic link to its target, after the file as it
was is copied beside it (`FILE.codegen-backup-YYYYMMDD-HHMMSS`, the same permissions). Exit
1 for a file that is not a JSON object (left as it was), 2 for bad usage or a file that
cannot be read or written.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import shlex
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .._support.user_files import display_path
from ..errors import CodegenError, UsageError
from .clients import CLIENTS, PROJECT, USER, Client, Places, config_file, needs_installed_client
from .documents import read_document, render, unified_diff, with_entry
from .entries import Entry, http_entry, stdio_entry

DEFAULT_NAME = "codegen"
TOKEN_VARIABLE = "CODEGEN_SERVE_TOKEN"
"""The variable `serve --http` takes its token from, so one variable serves both ends."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("client", choices=tuple(CLIENTS), metavar="CLIENT", help=_clients_help())
    parser.add_argument(
        "--scope",
        choices=(USER, PROJECT),
        help="user: every project of yours (default); project: the current folder's file",
    )
    parser.add_argument(
        "--name",
        default=DEFAULT_NAME,
        help=f"the server's name in the file (default: {DEFAULT_NAME})",
    )
    parser.add_argument(
        "--config",
        metavar="FILE",
        help="the servers serve fronts, written as an absolute path (default: "
        "~/.config/codegen/serve.json, the file serve reads without --config)",
    )
    parser.add_argument(
        "--http",
        metavar="URL",
        help="reach a running `codegen serve --http` at URL (http://HOST:PORT/mcp) instead",
    )
    parser.add_argument(
        "--token-env",
        metavar="VAR",
        default=TOKEN_VARIABLE,
        help=f"with --http: the variable the client reads the token from (default: {TOKEN_VARIABLE})",
    )
    parser.add_argument(
        "--token-literal",
        action="store_true",
        help="with --http: write the token itself (the value of --token-env now) into the file",
    )
    parser.add_argument(
        "--file", metavar="FILE", help="this config file instead of the client's own"
    )
    parser.add_argument(
        "--force", action="store_true", help="replace a server of that name that is not codegen's"
    )
    shown = parser.add_mutually_exclusive_group()
    shown.add_argument("--dry-run", action="store_true", help="print the diff; write nothing")
    shown.add_argument(
        "--print",
        action="store_true",
        help="print the entry as the file would hold it; read nothing",
    )


def _clients_help() -> str:
    return (
        ", ".join(CLIENTS) + " (json: the common mcpServers format, printed or merged into --file)"
    )


@dataclass(frozen=True, slots=True)
class Target:
    """The file an install changes."""

    path: Path
    """Where it is written: a symbolic link's target, so the link stays."""
    display: str
    """How messages name it: as the user would (the link, not its target)."""
    where: str
    """The client and scope, in words."""


def run_install(args: argparse.Namespace) -> int:
    client = CLIENTS[args.client]
    _check(args, client)
    entry, secret = _entry(args, client)
    if args.print or (client.name == "json" and args.file is None):
        snippet: dict[str, Any] = {client.servers_key: {args.name: entry.value}}
        if entry.input is not None:
            snippet["inputs"] = [entry.input]
        sys.stdout.write(json.dumps(snippet, indent=2, ensure_ascii=False) + "\n")
        return 0
    target = _target(args, client)
    before = _read(target.path, target.display)
    hint = f"codegen install {client.name} --print shows the entry to add by hand"
    document, layout = read_document(before, target.display, hint)
    changed = with_entry(
        document, client.servers_key, args.name, entry, target.display, args.http, args.force
    )
    name = json.dumps(args.name, ensure_ascii=False)
    if changed == document:
        _say(f"{target.display} already has {name} as it would be written; nothing changed")
        return 0
    after = render(changed, layout)
    diff = _hidden(unified_diff(target.display, before, after), secret)
    if args.dry_run:
        sys.stdout.write(diff)
        _say(f"dry run: {target.display} would change as shown; nothing written")
        return 0
    _write(target, before, after, secret is not None)
    if args.name in document.get(client.servers_key, {}):
        sys.stdout.write(diff)
        _say(f"updated {name} in {target.display} ({target.where}): {_runs(entry)}")
    else:
        _say(f"added {name} to {target.display} ({target.where}): {_runs(entry)}")
    if secret is not None:
        _say(
            f"warning: the token itself is in {target.display} (--token-literal): whoever can "
            "read the file can run programs through serve"
        )
    for warning in [] if args.http else _warnings(entry):
        _say(f"warning: {warning}")
    _say(f"next: {client.after}")
    return 0


def _target(args: argparse.Namespace, client: Client) -> Target:
    """The file `--file` names, else the client's own for the scope (whose folder must
    exist where it is the application's own)."""
    if args.file is not None:
        path = Path(args.file)
        where = client.title
    else:
        scope = args.scope or client.scopes[0]
        path = Path(config_file(client, scope, Places.here()))
        where = f"{client.title}, {scope} scope"
        if needs_installed_client(client, scope) and not path.parent.is_dir():
            raise UsageError(
                f"install: {client.title} keeps its servers in {display_path(path)}, but "
                f"{path.parent} does not exist: is {client.title} installed here? (start it "
                "once, or name the file with --file)"
            )
    written = Path(os.path.realpath(path)) if path.is_symlink() else path
    return Target(written, display_path(path), where)


def _check(args: argparse.Namespace, client: Client) -> None:
    """Options that contradict each other or the client, refused before anything is read."""
    if not args.name.strip():
        raise UsageError("install: --name: expected a name")
    if args.http is None and (args.token_literal or args.token_env != TOKEN_VARIABLE):
        raise UsageError("install: --token-env and --token-literal go with --http")
    if args.http is not None:
        if client.token is None:
            raise UsageError(f"install: {client.no_http}")
        if args.config is not None:
            raise UsageError(
                "install: --config names the servers of a serve the client starts; with --http, "
                "the serve at URL already has its own"
            )
        if not args.http.startswith(("http://", "https://")):
            raise UsageError(
                f"install: --http: expected an http:// or https:// URL, got {args.http!r}"
            )
    if args.scope is not None:
        if args.file is not None:
            raise UsageError("install: --scope and --file both say where: give one")
        if args.scope not in client.scopes:
            raise UsageError(f"install: {client.name} has no {args.scope} scope")
    if client.name == "json" and args.file is None and args.dry_run:
        raise UsageError("install: json has no file of its own: name one with --file")


def _entry(args: argparse.Namespace, client: Client) -> tuple[Entry, str | None]:
    """The entry, and the secret it holds, if `--token-literal` put one in it."""
    if args.http is not None:
        secret = None
        if args.token_literal:
            secret = os.environ.get(args.token_env) or None
            if secret is None:
                raise UsageError(
                    f"install: --token-literal writes the value of ${args.token_env}, which is "
                    "not set"
                )
        return http_entry(client, args.http, args.name, args.token_env, secret), secret
    from .program import serve_program

    config = _config_path(args.config)
    return stdio_entry(client, serve_program(), config), None


def _config_path(given: str | None) -> str:
    """`--config` made absolute (the client starts serve in a folder of its choosing), else
    the user-level config serve reads without one, written out so the entry says it."""
    if given is not None:
        return os.path.abspath(os.path.expanduser(given))
    from ..mcp.config import user_config

    found = user_config()
    if found is None:
        raise UsageError("install: no home folder is known: name serve's config with --config")
    return str(found)


def _read(path: Path, display: str) -> bytes | None:
    """The file's bytes; None when there is none yet."""
    try:
        return path.read_bytes()
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise UsageError(f"install: {display}: cannot read: {exc.strerror or exc}") from None


def _write(target: Target, before: bytes | None, after: bytes, secret: bool) -> None:
    """`after` into the file, atomically, after a copy of `before` beside it; refused when
    the file changed since it was read (a client saving its own settings meanwhile)."""
    from .._support.atomic_write import write_bytes

    if _read(target.path, target.display) != before:
        raise UsageError(f"install: {target.display} changed while install ran: run it again")
    if before is not None:
        backup = _backup_path(target.path)
        write_bytes(backup, before, new_mode=target.path.stat().st_mode & 0o777)
        _say(f"the file as it was: {display_path(backup)}")
    write_bytes(target.path, after, new_mode=0o600 if secret else None)


def _backup_path(path: Path) -> Path:
    stamp = time.strftime("%Y%m%d-%H%M%S")
    candidate = path.with_name(f"{path.name}.codegen-backup-{stamp}")
    number = 1
    while candidate.exists():
        number += 1
        candidate = path.with_name(f"{path.name}.codegen-backup-{stamp}-{number}")
    return candidate


def _runs(entry: Entry) -> str:
    """What the client will start or reach, in words."""
    value = entry.value
    if "url" in value:
        return f"reaches {value['url']}"
    return "runs " + shlex.join([value["command"], *value["args"]])


def _warnings(entry: Entry) -> list[str]:
    """What would keep the entry's serve from starting, found now rather than in a client's
    log: no config at the path, a config that does not load, no MCP SDK."""
    from ..mcp.config import load_servers_file

    found = []
    args = entry.value["args"]
    config = Path(args[args.index("--config") + 1])
    if not config.is_file():
        found.append(
            f"{config} does not exist yet: serve fails to start until it does "
            "(codegen serve --print-config-example shows one)"
        )
    else:
        try:
            load_servers_file(config, str(config))
        except CodegenError as error:
            found.append(f"serve could not start with this config now: {error}")
    if importlib.util.find_spec("mcp") is None:
        found.append(
            "codegen serve needs the MCP SDK, which this environment lacks: install codegen "
            "with its serve extra ('tool-codegen[serve]')"
        )
    return found


def _hidden(text: str, secret: str | None) -> str:
    """`text` with a literal token shown as a placeholder: a diff is for reading, and the
    terminal and its scrollback are no place for the secret."""
    return text if secret is None else text.replace(secret, "<the token>")


def _say(line: str) -> None:
    sys.stderr.write(f"codegen install: {line}\n")
