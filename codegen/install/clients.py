"""The MCP clients `codegen install` knows: where each keeps its servers, per scope and
operating system, the key they sit under, and how it spells a variable from the environment.

The locations are the clients' own (their documentation): Claude Code's project servers in
the project's `.mcp.json` and the user's in `~/.claude.json` (`$CLAUDE_CONFIG_DIR` when set),
Claude Desktop's in `claude_desktop_config.json` in its application folder, Cursor's in
`.cursor/mcp.json` of the project or the home folder, VS Code's in `.vscode/mcp.json` of the
project or `mcp.json` in the user folder of its default profile, under `servers`. Paths are
computed for a given platform and environment, so every operating system's are testable on
any.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import PurePath, PurePosixPath, PureWindowsPath

from ..errors import UsageError

USER, PROJECT = "user", "project"

DOLLAR, ENV, INPUT = "${VAR}", "${env:VAR}", "${input:ID}"
"""How a client reads the token of an HTTP entry: `${VAR}` or `${env:VAR}` from its
environment, or `${input:ID}`, a value it asks for once and keeps in its secret storage."""


@dataclass(frozen=True, slots=True)
class Client:
    name: str
    """As the command line spells it."""
    title: str
    servers_key: str
    """The top-level key of its servers: `mcpServers`, or VS Code's `servers`."""
    scopes: tuple[str, ...]
    """`user` first, the default: the entry names this machine's paths, and a project's
    file is often shared."""
    stdio_type: bool
    """Whether its stdio entries carry `"type": "stdio"` (the client writes them so)."""
    http_type: bool
    """Whether its HTTP entries carry `"type": "http"` (else the `url` says it)."""
    token: str | None
    """How its HTTP entries name the token (`DOLLAR`, `ENV`, `INPUT`); None: it takes no
    HTTP entries from its file."""
    no_http: str = ""
    """Why not, when `token` is None."""
    after: str = ""
    """What to do next, once the file is written."""


CLIENTS: dict[str, Client] = {
    client.name: client
    for client in (
        Client(
            "claude-code",
            "Claude Code",
            "mcpServers",
            (USER, PROJECT),
            stdio_type=True,
            http_type=True,
            token=DOLLAR,
            after="Claude Code starts it in its next session; a project's .mcp.json servers "
            "wait for your approval there",
        ),
        Client(
            "claude-desktop",
            "Claude Desktop",
            "mcpServers",
            (USER,),
            stdio_type=False,
            http_type=False,
            token=None,
            no_http="Claude Desktop starts only local (stdio) servers from "
            "claude_desktop_config.json and connects to remote ones through Settings > "
            "Connectors: install without --http, so it starts codegen serve itself",
            after="restart Claude Desktop to start it",
        ),
        Client(
            "cursor",
            "Cursor",
            "mcpServers",
            (USER, PROJECT),
            stdio_type=False,
            http_type=False,
            token=ENV,
            after="Cursor lists it in its MCP settings",
        ),
        Client(
            "vscode",
            "VS Code",
            "servers",
            (USER, PROJECT),
            stdio_type=True,
            http_type=True,
            token=INPUT,
            after="start it from VS Code's list of MCP servers",
        ),
        Client(
            "json",
            "an MCP client",
            "mcpServers",
            (),
            stdio_type=False,
            http_type=True,
            token=DOLLAR,
            after="the client reads it when it next starts (an HTTP entry's ${VAR} needs a "
            "client that expands it)",
        ),
    )
}
"""Every client, in the order help lists them. `json` is the common `mcpServers` format:
printed, or merged into the file `--file` names."""


@dataclass(frozen=True, slots=True)
class Places:
    """Where things are on one machine: what the locations are computed from."""

    platform: str
    """`sys.platform`: `linux`, `darwin`, `win32`."""
    home: str
    cwd: str
    environ: Mapping[str, str]

    @classmethod
    def here(cls) -> Places:
        import sys

        return cls(sys.platform, home_folder(), os.getcwd(), os.environ)

    def path(self, *parts: str) -> PurePath:
        """Parts joined as this platform's paths are."""
        kind = PureWindowsPath if self.platform == "win32" else PurePosixPath
        return kind(*parts)

    def absolute(self, name: str) -> str | None:
        """The environment variable `name` when it holds an absolute path, else None (a
        relative one would name a folder in the working directory)."""
        value = self.environ.get(name, "")
        return value if value and self.path(value).is_absolute() else None


def home_folder() -> str:
    """The user's home: `$HOME` (`%USERPROFILE%` on Windows) when absolute, else the
    account's."""
    home = os.path.expanduser("~")
    if os.path.isabs(home):
        return home
    import pwd

    try:
        return pwd.getpwuid(os.getuid()).pw_dir
    except KeyError:
        raise UsageError("install: no home folder is known: name the file with --file") from None


def config_file(client: Client, scope: str, places: Places) -> PurePath:
    """The file where `client` keeps the servers of `scope`."""
    if client.name == "claude-code":
        if scope == PROJECT:
            return places.path(places.cwd, ".mcp.json")
        return places.path(places.absolute("CLAUDE_CONFIG_DIR") or places.home, ".claude.json")
    if client.name == "claude-desktop":
        return places.path(str(application_folder(places)), "Claude", "claude_desktop_config.json")
    if client.name == "cursor":
        base = places.cwd if scope == PROJECT else places.home
        return places.path(base, ".cursor", "mcp.json")
    if client.name == "vscode":
        if scope == PROJECT:
            return places.path(places.cwd, ".vscode", "mcp.json")
        return places.path(str(application_folder(places)), "Code", "User", "mcp.json")
    raise UsageError(f"install: {client.name} has no file of its own: name one with --file")


def application_folder(places: Places) -> PurePath:
    """Where desktop applications keep their settings: `%APPDATA%` on Windows,
    `~/Library/Application Support` on macOS, `$XDG_CONFIG_HOME` or `~/.config` elsewhere."""
    if places.platform == "win32":
        roaming = places.absolute("APPDATA")
        return places.path(roaming) if roaming else places.path(places.home, "AppData", "Roaming")
    if places.platform == "darwin":
        return places.path(places.home, "Library", "Application Support")
    configured = places.absolute("XDG_CONFIG_HOME")
    return places.path(configured) if configured else places.path(places.home, ".config")


def needs_installed_client(client: Client, scope: str) -> bool:
    """Whether the file's folder must exist already: a user-level file in an application's
    own folder, which is there once the application has run (a missing one is a client not
    installed here, or installed elsewhere)."""
    return scope == USER and client.name in ("claude-desktop", "cursor", "vscode")
