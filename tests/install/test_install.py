"""`codegen install CLIENT`: each client's file and entry, the merge that changes one entry
and nothing else (idempotent, a dry-run diff, a backup, broken and foreign content refused),
the README's commands as written, and the written entry started exactly as a client starts
it, with an empty environment but HOME, answering MCP."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import mcp.client.stdio
import pytest
from mcp import Client, StdioServerParameters, stdio_client

from codegen.cli import main
from codegen.install.clients import CLIENTS, Places, config_file
from codegen.install.documents import comment_at, layout_of, read_document, render, with_entry
from codegen.install.entries import Entry, is_ours, updated
from codegen.install.program import serve_program
from conftest import ROOT
from support.readme_examples import fenced, section

CHANGING = ROOT / "tests" / "fixtures" / "serve" / "changing_server.py"
README_HEADING = "### Installing it into a client: `codegen install`"
URL = "http://127.0.0.1:8765/mcp"


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A home folder of its own, the working folder a project beside it."""
    home, project = tmp_path / "home", tmp_path / "project"
    home.mkdir()
    project.mkdir()
    monkeypatch.setenv("HOME", str(home))
    for name in ("XDG_CONFIG_HOME", "CLAUDE_CONFIG_DIR", "CODEGEN_SERVE_TOKEN"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.chdir(project)
    return home


def install(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    status = main(["install", *args])
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err
    return status, out, err


def serve_config(home: Path) -> str:
    """The user-level config serve reads without --config, as install writes it."""
    return str(home / ".config" / "codegen" / "serve.json")


def snapshot(folder: Path) -> dict[str, tuple[bytes, int]]:
    """Every file under `folder`: its bytes and modification time."""
    return {
        str(path): (path.read_bytes(), path.stat().st_mtime_ns)
        for path in sorted(folder.rglob("*"))
        if path.is_file()
    }


# --- where each client keeps its servers -------------------------------------------------

LINUX, MAC, WINDOWS = "linux", "darwin", "win32"
APPDATA = {"APPDATA": r"C:\Users\me\AppData\Roaming"}


@pytest.mark.parametrize(
    ("client", "scope", "platform", "environ", "expected"),
    [
        ("claude-code", "user", LINUX, {}, "/h/.claude.json"),
        ("claude-code", "user", LINUX, {"CLAUDE_CONFIG_DIR": "/c"}, "/c/.claude.json"),
        ("claude-code", "user", LINUX, {"CLAUDE_CONFIG_DIR": "rel"}, "/h/.claude.json"),
        ("claude-code", "project", LINUX, {}, "/p/.mcp.json"),
        ("claude-code", "user", WINDOWS, {}, r"C:\Users\me\.claude.json"),
        ("claude-desktop", "user", LINUX, {}, "/h/.config/Claude/claude_desktop_config.json"),
        ("claude-desktop", "user", LINUX, {"XDG_CONFIG_HOME": "/x"}, "/x/Claude/claude_desktop_config.json"),
        ("claude-desktop", "user", LINUX, {"XDG_CONFIG_HOME": "x"}, "/h/.config/Claude/claude_desktop_config.json"),
        ("claude-desktop", "user", MAC, {}, "/h/Library/Application Support/Claude/claude_desktop_config.json"),
        ("claude-desktop", "user", WINDOWS, APPDATA, r"C:\Users\me\AppData\Roaming\Claude\claude_desktop_config.json"),
        ("claude-desktop", "user", WINDOWS, {}, r"C:\Users\me\AppData\Roaming\Claude\claude_desktop_config.json"),
        ("cursor", "user", LINUX, {}, "/h/.cursor/mcp.json"),
        ("cursor", "project", LINUX, {}, "/p/.cursor/mcp.json"),
        ("cursor", "user", WINDOWS, {}, r"C:\Users\me\.cursor\mcp.json"),
        ("vscode", "user", LINUX, {}, "/h/.config/Code/User/mcp.json"),
        ("vscode", "user", MAC, {}, "/h/Library/Application Support/Code/User/mcp.json"),
        ("vscode", "user", WINDOWS, APPDATA, r"C:\Users\me\AppData\Roaming\Code\User\mcp.json"),
        ("vscode", "project", LINUX, {}, "/p/.vscode/mcp.json"),
        ("vscode", "project", WINDOWS, {}, r"C:\work\p\.vscode\mcp.json"),
    ],
)  # fmt: skip
def test_each_client_keeps_its_servers_where_its_documentation_says(
    client: str, scope: str, platform: str, environ: dict[str, str], expected: str
) -> None:
    home, cwd = (r"C:\Users\me", r"C:\work\p") if platform == WINDOWS else ("/h", "/p")
    places = Places(platform, home, cwd, environ)
    assert str(config_file(CLIENTS[client], scope, places)) == expected


# --- the entry -----------------------------------------------------------------------------


def test_the_entry_runs_this_codegen_by_absolute_paths(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The script this installation put beside its Python, `serve`, and the config: the
    one named (made absolute), else the user-level one serve reads without --config."""
    (program,) = serve_program()
    assert os.path.isabs(program) and os.access(program, os.X_OK)
    assert Path(program).name == "codegen"
    assert install(capsys, "claude-code", "--scope", "project")[0] == 0
    written = json.loads(Path(".mcp.json").read_text())
    assert written == {
        "mcpServers": {
            "codegen": {
                "type": "stdio",
                "command": program,
                "args": ["serve", "--config", serve_config(home)],
            }
        }
    }
    status, _, err = install(capsys, "claude-code", "--scope", "project", "--config", "s.json")
    assert status == 0 and "updated" in err
    written = json.loads(Path(".mcp.json").read_text())
    assert written["mcpServers"]["codegen"]["args"] == [
        "serve",
        "--config",
        str(Path.cwd() / "s.json"),
    ]


def test_without_a_script_the_entry_runs_python_with_dash_m(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    class Installed:
        files = ()

    monkeypatch.setattr("importlib.metadata.distribution", lambda name: Installed())
    assert serve_program() == (os.path.abspath(sys.executable), "-m", "codegen")


def test_codegen_that_is_not_installed_is_not_written_into_a_client(
    home: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from importlib.metadata import PackageNotFoundError

    def missing(name: str) -> Any:
        raise PackageNotFoundError(name)

    monkeypatch.setattr("importlib.metadata.distribution", missing)
    status, _, err = install(capsys, "claude-code", "--scope", "project")
    assert status == 2 and "tool-codegen is not installed" in err
    assert not Path(".mcp.json").exists()


@pytest.mark.parametrize(
    ("client", "key", "stdio_type"),
    [
        ("claude-code", "mcpServers", True),
        ("claude-desktop", "mcpServers", False),
        ("cursor", "mcpServers", False),
        ("vscode", "servers", True),
        ("json", "mcpServers", False),
    ],
)
def test_each_client_gets_the_entry_in_its_own_format(
    home: Path, capsys: pytest.CaptureFixture[str], client: str, key: str, stdio_type: bool
) -> None:
    status, out, _ = install(capsys, client, "--print")
    assert status == 0
    (entry,) = json.loads(out)[key].values()
    assert ("type" in entry) is stdio_type and entry.get("type", "stdio") == "stdio"
    assert entry["args"] == ["serve", "--config", serve_config(home)]
    assert not any(home.rglob("*")), "--print reads and writes nothing"


@pytest.mark.parametrize(
    ("client", "header", "extra"),
    [
        ("claude-code", "Bearer ${CODEGEN_SERVE_TOKEN}", {"type": "http"}),
        ("cursor", "Bearer ${env:CODEGEN_SERVE_TOKEN}", {}),
        ("vscode", "Bearer ${input:codegen-token}", {"type": "http"}),
        ("json", "Bearer ${CODEGEN_SERVE_TOKEN}", {"type": "http"}),
    ],
)
def test_an_http_entry_names_the_token_as_the_client_reads_it(
    home: Path, capsys: pytest.CaptureFixture[str], client: str, header: str, extra: dict[str, str]
) -> None:
    status, out, _ = install(capsys, client, "--http", URL, "--print")
    assert status == 0
    printed = json.loads(out)
    (entry,) = printed["servers" if client == "vscode" else "mcpServers"].values()
    assert entry == {**extra, "url": URL, "headers": {"Authorization": header}}
    if client == "vscode":  # asked for once, kept in VS Code's secret storage
        (asked,) = printed["inputs"]
        assert asked["id"] == "codegen-token" and asked["password"] is True
        assert asked["type"] == "promptString"


def test_the_token_variable_is_the_users_choice(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    status, out, _ = install(capsys, "cursor", "--http", URL, "--token-env", "MY_TOKEN", "--print")
    assert status == 0
    entry = json.loads(out)["mcpServers"]["codegen"]
    assert entry["headers"] == {"Authorization": "Bearer ${env:MY_TOKEN}"}


def test_claude_desktop_takes_no_http_entry_from_its_file(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (home / ".config" / "Claude").mkdir(parents=True)
    status, _, err = install(capsys, "claude-desktop", "--http", URL)
    assert status == 2 and "Settings > Connectors" in err
    assert not any(home.rglob("*.json"))


def test_a_literal_token_is_written_only_when_asked_and_never_shown(
    home: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    status, _, err = install(
        capsys, "claude-code", "--scope", "project", "--http", URL, "--token-literal"
    )
    assert status == 2 and "$CODEGEN_SERVE_TOKEN, which is not set" in err
    monkeypatch.setenv("CODEGEN_SERVE_TOKEN", "s3cr3t-token")
    args = ("claude-code", "--scope", "project", "--http", URL, "--token-literal")
    status, out, _ = install(capsys, *args, "--dry-run")
    assert status == 0 and "s3cr3t" not in out and "Bearer <the token>" in out
    status, out, err = install(capsys, *args)
    assert status == 0 and "s3cr3t" not in out + err and "the token itself is in .mcp.json" in err
    entry = json.loads(Path(".mcp.json").read_text())["mcpServers"]["codegen"]
    assert entry["headers"] == {"Authorization": "Bearer s3cr3t-token"}
    assert Path(".mcp.json").stat().st_mode & 0o777 == 0o600, "a new file holding a secret"


# --- the file: idempotent, a diff, a backup, nothing else touched ------------------------


def test_installing_twice_changes_nothing_the_second_time(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for args in (
        ("claude-code", "--scope", "project"),
        ("vscode", "--scope", "project", "--http", URL),
    ):
        assert install(capsys, *args)[0] == 0
        before = snapshot(Path.cwd())
        status, out, err = install(capsys, *args)
        assert status == 0 and out == ""
        assert "as it would be written; nothing changed" in err
        assert snapshot(Path.cwd()) == before, "not even a backup"


def test_a_dry_run_prints_the_diff_and_writes_nothing(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    status, out, err = install(capsys, "claude-code", "--scope", "project", "--dry-run")
    assert status == 0 and "nothing written" in err
    assert out.startswith("--- /dev/null\n+++ .mcp.json\n@@ -0,0 +1,13 @@\n+{\n")
    assert not any(Path.cwd().iterdir())
    original = '{\n  "mcpServers": {\n    "time": {\n      "command": "uvx"\n    }\n  }\n}\n'
    Path(".mcp.json").write_text(original)
    before = snapshot(Path.cwd())
    status, out, _ = install(capsys, "claude-code", "--scope", "project", "--dry-run")
    assert status == 0 and out.startswith("--- .mcp.json\n+++ .mcp.json\n")
    assert '       "command": "uvx"\n+    },\n+    "codegen": {\n+      "type": "stdio",\n' in out
    assert snapshot(Path.cwd()) == before


LAYOUTS = {
    "two spaces": ("  ", "\n", True, b""),
    "four spaces, no final newline": ("    ", "\n", False, b""),
    "tabs, CRLF, byte order mark": ("\t", "\r\n", True, b"\xef\xbb\xbf"),
}


@pytest.mark.parametrize("layout", LAYOUTS.values(), ids=LAYOUTS)
def test_everything_else_in_the_file_is_kept_as_it_was(
    home: Path, capsys: pytest.CaptureFixture[str], layout: tuple[str, str, bool, bytes]
) -> None:
    """Other servers, unknown keys and their order, the indent, line endings, final newline
    and byte order mark: the new text is the old one's layout with one entry more."""
    indent, newline, final, bom = layout
    document = {
        "numStartups": 3,
        "mcpServers": {"time": {"command": "uvx", "args": ["mcp-server-time"], "x": [1.5, None]}},
        "projects": {"/p": {"allowedTools": [], "é": "\u2028"}},
    }

    def laid_out(value: Any) -> bytes:
        text = json.dumps(value, indent=indent, ensure_ascii=False) + ("\n" if final else "")
        return bom + text.replace("\n", newline).encode()

    Path(".claude.json").write_bytes(laid_out(document))
    status, _, _ = install(capsys, "claude-code", "--file", ".claude.json")
    assert status == 0
    document["mcpServers"]["codegen"] = {  # type: ignore[index]
        "type": "stdio",
        "command": serve_program()[0],
        "args": ["serve", "--config", serve_config(home)],
    }
    assert Path(".claude.json").read_bytes() == laid_out(document)


def test_a_one_line_file_is_laid_out_with_two_spaces() -> None:
    assert layout_of('{"mcpServers": {}}').indent == "  "
    document, layout = read_document(b'{"a": {"b": 1}}', "f.json", "")
    assert render(document, layout) == b'{\n  "a": {\n    "b": 1\n  }\n}'


def test_an_update_keeps_what_the_user_added_and_backs_up_the_file(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    old = {
        "mcpServers": {
            "codegen": {
                "command": "/old/venv/bin/codegen",
                "env": {"PATH": "/usr/local/bin:/usr/bin"},
                "args": ["serve", "--config", "/old/serve.json"],
                "disabled": False,
            },
            "time": {"command": "uvx", "args": ["mcp-server-time"]},
        }
    }
    path = Path(".mcp.json")
    path.write_text(json.dumps(old, indent=2))
    path.chmod(0o640)
    status, out, err = install(capsys, "claude-code", "--scope", "project")
    assert status == 0 and 'updated "codegen" in .mcp.json' in err
    assert out.startswith("--- .mcp.json\n+++ .mcp.json\n")
    assert '-        "/old/serve.json"\n' in out and '-      "command": "/old/venv' in out
    entry = json.loads(path.read_text())["mcpServers"]["codegen"]
    assert list(entry) == ["command", "env", "args", "disabled", "type"]
    assert entry["env"] == {"PATH": "/usr/local/bin:/usr/bin"} and entry["disabled"] is False
    assert entry["args"] == ["serve", "--config", serve_config(home)]
    (backup,) = Path.cwd().glob(".mcp.json.codegen-backup-*")
    assert json.loads(backup.read_text()) == old and f"the file as it was: {backup.name}" in err
    assert backup.stat().st_mode & 0o777 == 0o640 == path.stat().st_mode & 0o777


def test_an_update_across_transports_drops_the_other_transports_keys() -> None:
    stdio = {"type": "stdio", "command": "/c", "args": ["serve"], "env": {}, "timeout": 5}
    http = {"url": URL, "headers": {"Authorization": "Bearer ${T}"}}
    assert updated(stdio, http) == {"timeout": 5, **http}
    assert updated({**http, "headers": {"authorization": "old", "X-A": "1"}}, http) == {
        "url": URL,
        "headers": {"X-A": "1", "Authorization": "Bearer ${T}"},
    }
    assert updated({"type": "http", **http}, {"command": "/c", "args": []}) == {
        "command": "/c",
        "args": [],
    }


def test_the_vscode_input_is_added_once_beside_the_users_own(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    mine = {"type": "promptString", "id": "github-pat", "password": True}
    Path(".vscode").mkdir()
    Path(".vscode/mcp.json").write_text(json.dumps({"inputs": [mine], "servers": {}}))
    for _ in range(2):
        assert install(capsys, "vscode", "--scope", "project", "--http", URL)[0] == 0
    written = json.loads(Path(".vscode/mcp.json").read_text())
    assert list(written) == ["inputs", "servers"]
    assert [item["id"] for item in written["inputs"]] == ["github-pat", "codegen-token"]


def test_a_symbolic_link_keeps_pointing_at_its_target(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (home / "dotfiles").mkdir()
    (home / "dotfiles" / "claude.json").write_text("{}\n")
    (home / ".claude.json").symlink_to(home / "dotfiles" / "claude.json")
    assert install(capsys, "claude-code")[0] == 0
    assert (home / ".claude.json").is_symlink()
    assert "codegen" in json.loads((home / "dotfiles" / "claude.json").read_text())["mcpServers"]
    assert [p.name for p in (home / "dotfiles").glob("*.codegen-backup-*")] != []


BROKEN = {
    "a trailing comma": (
        b'{"mcpServers": {"a": {},}}',
        "error: invalid JSON: Expecting property name",
    ),
    "a comment": (b'{\n\t// mine\n\t"servers": {}\n}\n', "error: a comment at line 2 column 2"),
    "a duplicate key": (b'{"mcpServers": {}, "mcpServers": {}}', 'duplicate key "mcpServers"'),
    "invalid UTF-8": (b'{"a": "\xff"}', "invalid UTF-8"),
    "an array": (b"[]", "expected a JSON object, got an array"),
    "servers not an object": (b'{"mcpServers": []}', ":/mcpServers: error: expected an object"),
}


@pytest.mark.parametrize("content", BROKEN.values(), ids=BROKEN)
def test_a_file_that_is_not_a_json_object_is_refused_and_left_as_it_was(
    home: Path, capsys: pytest.CaptureFixture[str], content: tuple[bytes, str]
) -> None:
    data, message = content
    Path("mcp.json").write_bytes(data)
    before = snapshot(Path.cwd())
    status, out, err = install(capsys, "json", "--file", "mcp.json")
    assert status == 1 and out == ""
    assert err.startswith("codegen: mcp.json:") and message in err
    assert snapshot(Path.cwd()) == before


def test_a_comment_is_found_outside_strings_only() -> None:
    assert comment_at('{"url": "http://h/*x*/", "a": "\\"//"}') is None
    assert comment_at('{"a": 1} // note') == (1, 10)
    assert comment_at('{\n  /* note */\n "a": 1}') == (2, 3)


@pytest.mark.parametrize(
    ("entry", "ours"),
    [
        ({"command": "/v/bin/codegen", "args": ["serve"]}, True),
        ({"command": "C:\\v\\Scripts\\codegen.exe", "args": ["serve", "--config", "c"]}, True),
        ({"command": "/usr/bin/python3", "args": ["-m", "codegen", "serve"]}, True),
        ({"command": "uvx", "args": ["--from", "tool-codegen[serve]", "codegen", "serve"]}, True),
        ({"url": URL}, True),
        ({"command": "/v/bin/codegen", "args": ["sdk", "x"]}, False),
        ({"command": "npx", "args": ["-y", "serve"]}, False),
        ({"url": "http://127.0.0.1:9/mcp"}, False),
        ("a string", False),
    ],
)
def test_an_entry_is_ours_when_it_runs_codegen_serve_or_names_the_url(
    entry: Any, ours: bool
) -> None:
    assert is_ours(entry, URL) is ours


def test_a_server_of_that_name_that_is_not_ours_is_replaced_only_with_force(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    Path(".mcp.json").write_text('{"mcpServers": {"codegen": {"command": "npx", "args": ["x"]}}}')
    before = snapshot(Path.cwd())
    status, _, err = install(capsys, "claude-code", "--scope", "project")
    assert status == 2 and 'already has a server named "codegen" that is not codegen serve' in err
    assert '(command "npx")' in err and snapshot(Path.cwd()) == before
    assert install(capsys, "claude-code", "--scope", "project", "--name", "cg")[0] == 0
    assert install(capsys, "claude-code", "--scope", "project", "--force")[0] == 0
    servers = json.loads(Path(".mcp.json").read_text())["mcpServers"]
    assert list(servers) == ["codegen", "cg"] and servers["codegen"] == servers["cg"]


def test_the_merge_copies_and_never_changes_what_it_was_given() -> None:
    document = {"mcpServers": {"a": {"command": "x"}}, "z": 1}
    frozen = json.dumps(document)
    changed = with_entry(document, "mcpServers", "b", Entry({"command": "y"}), "f")
    assert json.dumps(document) == frozen
    assert changed == {"mcpServers": {"a": {"command": "x"}, "b": {"command": "y"}}, "z": 1}


def test_a_client_that_has_not_run_here_is_named_not_guessed(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for client, folder in (
        ("claude-desktop", ".config/Claude"),
        ("vscode", ".config/Code/User"),
        ("cursor", ".cursor"),
    ):
        status, _, err = install(capsys, client)
        assert status == 2 and f"{home / folder} does not exist" in err
        (home / folder).mkdir(parents=True)
        assert install(capsys, client)[0] == 0


def test_it_warns_of_what_would_keep_serve_from_starting(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    status, _, err = install(capsys, "claude-code", "--scope", "project")
    assert status == 0 and f"warning: {serve_config(home)} does not exist yet" in err
    Path("servers.json").write_text('{"mcpServers": {}}')
    status, _, err = install(
        capsys, "claude-code", "--scope", "project", "--config", "servers.json"
    )
    assert status == 0 and "warning: serve could not start with this config now" in err
    assert "no upstream servers" in err


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["cursor", "--token-env", "X"], "--token-env and --token-literal go with --http"),
        (["cursor", "--http", URL, "--config", "c.json"], "with --http, the serve at URL"),
        (["cursor", "--http", "127.0.0.1:8765"], "expected an http:// or https:// URL"),
        (["claude-desktop", "--scope", "project"], "claude-desktop has no project scope"),
        (["cursor", "--scope", "user", "--file", "f.json"], "--scope and --file both say where"),
        (["json", "--dry-run"], "json has no file of its own"),
        (["cursor", "--dry-run", "--print"], "not allowed with argument"),
        (["zed"], "invalid choice: 'zed'"),
        (["cursor", "--name", " "], "--name: expected a name"),
    ],
)
def test_usage_errors_exit_2_and_touch_nothing(
    home: Path, capsys: pytest.CaptureFixture[str], args: list[str], message: str
) -> None:
    status, _, err = install(capsys, *args)
    assert status == 2 and message in err
    assert not any(home.parent.rglob("*.json"))


# --- the README, as written --------------------------------------------------------------


def run_readme_install_commands(markdown: str, folder: Path) -> None:
    """Every command of the section's first `sh` block, run by the shell from a project
    folder with a home of its own, must succeed and write what its comment says."""
    commands = fenced(markdown, "sh")[0]
    home, project = folder / "home", folder / "project"
    for made in (home / ".config" / "Claude", home / ".cursor", project):
        made.mkdir(parents=True)
    (home / "servers.json").write_text(json.dumps({"mcpServers": {"time": {"command": "uvx"}}}))
    path = os.pathsep.join([os.path.dirname(sys.executable), "/usr/bin", "/bin"])
    env = {"HOME": str(home), "PATH": path, "LANG": "C.UTF-8"}
    printed = []
    for line in commands.splitlines():
        command = line.split(" #")[0].strip()
        if not command:
            continue
        assert command.startswith("codegen install "), line
        done = subprocess.run(
            ["/bin/sh", "-euc", command], cwd=project, env=env, capture_output=True, text=True
        )
        assert done.returncode == 0, f"{command}\n{done.stderr}"
        printed.append(done.stdout)

    program = serve_program()[0]
    stdio = {"command": program, "args": ["serve", "--config", serve_config(home)]}
    claude_code = json.loads((home / ".claude.json").read_text())["mcpServers"]["codegen"]
    assert claude_code == {"type": "stdio", **stdio}
    project_file = json.loads((project / ".mcp.json").read_text())["mcpServers"]["codegen"]
    assert project_file == claude_code
    desktop = home / ".config" / "Claude" / "claude_desktop_config.json"
    assert json.loads(desktop.read_text())["mcpServers"]["codegen"] == {
        "command": program,
        "args": ["serve", "--config", str(home / "servers.json")],
    }
    assert json.loads((home / ".cursor" / "mcp.json").read_text())["mcpServers"]["codegen"] == stdio
    vscode = json.loads((project / ".vscode" / "mcp.json").read_text())
    assert vscode["servers"]["codegen"]["headers"] == {
        "Authorization": "Bearer ${input:codegen-token}"
    }
    assert printed[0].startswith("--- /dev/null\n+++ ") and ".claude.json" in printed[0]
    assert json.loads(printed[-1]) == {"mcpServers": {"codegen": stdio}}


def test_the_readme_install_commands_run_as_written(tmp_path: Path) -> None:
    run_readme_install_commands(section(README_HEADING, r"^##"), tmp_path)


# --- end to end: the entry started as a client starts it ---------------------------------


@pytest.mark.slow
def test_the_written_entry_starts_serve_as_a_client_would(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`codegen install claude-code --scope project` in a project, then its entry's command
    and arguments started with nothing in the environment but HOME (no PATH, no virtual
    environment), in the project folder: it answers MCP, lists run_code, and runs a program
    that calls the upstream of the user-level config."""
    home, project = tmp_path / "home", tmp_path / "project"
    project.mkdir()
    config = Path(serve_config(home))
    config.parent.mkdir(parents=True)
    upstream = {"command": sys.executable, "args": [str(CHANGING)]}
    config.write_text(json.dumps({"mcpServers": {"changing": upstream}}))
    codegen = Path(sys.executable).parent / "codegen"
    command = [str(codegen), "install", "claude-code", "--scope", "project"]
    done = subprocess.run(
        command,
        cwd=project,
        env={"HOME": str(home), "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    assert "warning" not in done.stderr, done.stderr
    entry = json.loads((project / ".mcp.json").read_text())["mcpServers"]["codegen"]
    assert entry["type"] == "stdio" and os.path.isabs(entry["command"])

    monkeypatch.setattr(mcp.client.stdio, "get_default_environment", dict)
    parameters = StdioServerParameters(
        command=entry["command"], args=entry["args"], env={"HOME": str(home)}, cwd=project
    )

    async def session() -> tuple[list[str], Any]:
        with anyio.fail_after(180), (tmp_path / "stderr").open("w") as errlog:
            async with Client(stdio_client(parameters, errlog=errlog), cache=None) as client:
                names = [tool.name for tool in (await client.list_tools()).tools]
                code = "return await tools.changing__touch({})"
                result = await client.call_tool("run_code", {"code": code, "description": "Touch"})
                return names, result.structured_content

    names, result = anyio.run(session)
    stderr = (tmp_path / "stderr").read_text()
    assert names == ["run_code"], stderr
    assert result == {"logs": [], "result": "ok"}, stderr
    assert f"{shlex.quote(sys.executable)} {CHANGING}" in stderr  # the upstream it started
