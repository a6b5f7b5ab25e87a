"""`[tool.codegen]` is read the same way by every command: `workflow.config.HONOURED_BY` says
which command reads which key, and here each (key, command) pair it lists is shown to change
what the command does, with the command line winning over the table."""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from codegen.cli import COMMANDS, main
from codegen.workflow import config

TOOL = {
    "name": "read_file",
    "description": "Read a file.",
    "inputSchema": {
        "type": "object",
        "properties": {"path": {"type": "string"}},
        "required": ["path"],
    },
}
ECHO = {"name": "echo", "inputSchema": {"type": "object"}}
PING = {"name": "ping", "inputSchema": {"type": "object"}}


class Project:
    """A repository as the current directory: `tools/` and a `pyproject.toml` table."""

    def __init__(self, root: Path, capsys: pytest.CaptureFixture[str]) -> None:
        self.root = root
        self.capsys = capsys

    def table(self, text: str) -> None:
        (self.root / "pyproject.toml").write_text(
            f'[project]\nname = "demo"\n\n[tool.codegen]\n{text}'
        )

    def tools(self, **files: list[dict[str, object]]) -> None:
        """`tools/NAME.json` for each file, as a dump of server NAME."""
        folder = self.root / "tools"
        folder.mkdir(exist_ok=True)
        for name, tools in files.items():
            (folder / f"{name}.json").write_text(json.dumps({"server": name, "tools": tools}))

    def run(self, *args: str) -> tuple[int, str, str]:
        status = main(list(args))
        out, err = self.capsys.readouterr()
        assert "Traceback" not in out + err
        return status, out, err

    def git(self, *args: str) -> None:
        subprocess.run(
            ["git", *args],
            cwd=self.root,
            check=True,
            capture_output=True,
            env={
                **os.environ,
                "GIT_AUTHOR_NAME": "t",
                "GIT_AUTHOR_EMAIL": "t@example.invalid",
                "GIT_COMMITTER_NAME": "t",
                "GIT_COMMITTER_EMAIL": "t@example.invalid",
                "GIT_CONFIG_GLOBAL": os.devnull,
            },
        )

    def commit(self) -> None:
        if not (self.root / ".git").exists():
            self.git("init", "-q", "-b", "main")
        self.git("add", "-A")
        self.git("commit", "-q", "-m", "state")


@pytest.fixture
def project(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> Project:
    monkeypatch.chdir(tmp_path)
    return Project(tmp_path, capsys)


# --- sources: the commands run without naming them ---------------------------------------


def _sources(project: Project, command: str) -> None:
    project.tools(files=[TOOL])
    (project.root / "src").mkdir()
    project.table('sources = ["tools"]\n')
    os.chdir(project.root / "src")  # paths in the table are relative to the pyproject.toml
    expected = {
        "validate": (),
        "sdk": ("--lang", "python"),
        "prompt": ("--lang", "python"),
        "catalog": (),
        "build": ("-o", "out"),
    }
    if command == "diff":
        os.chdir(project.root)
        project.commit()
        project.tools(files=[TOOL, PING])
        status, out, err = project.run("diff", "--git", "HEAD", "--format", "json")
        assert status == 0, err
        assert [(t["name"], t["status"]) for t in json.loads(out)["tools"]] == [("ping", "added")]
        # OLD and NEW are always named: the table gives sources to --git only.
        status, _, err = project.run("diff")
        assert status == 2 and "expected two sources, OLD and NEW" in err
        return
    status, out, err = project.run(command, *expected[command])
    assert status == 0, err
    if command == "validate":
        assert err == "1 tool: 0 errors, 0 warnings\n"
    elif command == "build":
        assert "read_file" in (project.root / "src" / "out" / "tools.py").read_text()
    else:
        assert "read_file" in out
    # Without the table, the sources are missing: a usage error that says where to name them.
    (project.root / "pyproject.toml").unlink()
    status, _, err = project.run(command, *expected[command])
    assert status == 2
    assert "sources" in err and "[tool.codegen]" in err


# --- namespace: two servers that share a tool name -----------------------------------------


NAMESPACED_ARGS = {
    "validate": ("tools",),
    "sdk": ("tools", "--lang", "typescript"),
    "prompt": ("tools", "--lang", "python"),
    "catalog": ("tools", "--format", "json"),
    "build": ("tools", "-o", "out"),
}


def _namespace(project: Project, command: str) -> None:
    project.tools(alpha=[ECHO], beta=[ECHO])
    project.table("namespace = true\n")
    if command == "diff":
        project.commit()
        project.tools(alpha=[ECHO, PING])
        status, out, err = project.run("diff", "--git", "HEAD", "tools", "--format", "json")
        assert status == 0, err
        names = [(t["name"], t["status"]) for t in json.loads(out)["tools"]]
        assert names == [("alpha__ping", "added")]
        # OLD and NEW directories are namespaced alike.
        (project.root / "old").mkdir()
        (project.root / "old" / "alpha.json").write_text(json.dumps({"tools": [ECHO]}))
        (project.root / "old" / "beta.json").write_text(json.dumps({"tools": [ECHO]}))
        status, out, err = project.run("diff", "old", "tools", "--format", "json")
        assert status == 0, err
        assert [t["name"] for t in json.loads(out)["tools"]] == ["alpha__ping"]
        status, _, err = project.run("diff", "--git", "HEAD", "tools", "--no-namespace")
        assert status == 1 and 'duplicate tool name "echo"' in err
        return
    status, out, err = project.run(command, *NAMESPACED_ARGS[command])
    assert status == 0, err
    if command == "build":
        out = (project.root / "out" / "tools.d.ts").read_text()
    if command != "validate":
        assert "alpha__echo" in out and "beta__echo" in out
    # The command line wins: without the prefixes the two tools clash.
    status, out, err = project.run(command, *NAMESPACED_ARGS[command], "--no-namespace")
    assert status == 1
    assert 'duplicate tool name "echo"' in out + err


# --- input_format: records are read as that format only ----------------------------------


def _input_format(project: Project, command: str) -> None:
    project.tools(files=[TOOL])  # MCP records
    project.table('input_format = "openai"\n')
    args = {**NAMESPACED_ARGS, "diff": ("tools", "tools")}[command]
    status, out, err = project.run(command, *args)
    assert status == 1
    assert "not a tool in the 'openai' format" in out + err
    status, _, err = project.run(command, *args, "--input-format", "auto")
    assert status == 0, err


# --- cache: per-tool results kept where the table says -----------------------------------


def _cache(project: Project, command: str) -> None:
    project.tools(files=[TOOL])
    project.table('cache = ".codegen-cache"\n')
    args = {"sdk": ("tools", "--lang", "python"), "build": ("tools", "-o", "out")}[command]
    status, _, err = project.run(command, *args)
    assert status == 0, err
    cached = project.root / ".codegen-cache"
    assert cached.is_dir() and any(cached.iterdir())
    # The command line wins.
    status, _, err = project.run(command, *args, "--cache", "other")
    assert status == 0, err
    assert any((project.root / "other").iterdir())


# --- languages, and the keys only build reads ---------------------------------------------


def _languages(project: Project, command: str) -> None:
    project.tools(files=[TOOL])
    project.table('languages = ["python"]\n')
    if command == "catalog":
        status, out, err = project.run("catalog", "tools")
        assert status == 0, err
        assert "```python\n" in out and "```ts\n" not in out
        status, out, _ = project.run("catalog", "tools", "--lang", "typescript")
        assert "```ts\n" in out and "```python\n" not in out
        return
    status, _, err = project.run("build", "tools", "-o", "out")
    assert status == 0, err
    assert (project.root / "out" / "tools.py").is_file()
    assert not (project.root / "out" / "tools.d.ts").exists()
    status, _, err = project.run("build", "tools", "-o", "out", "--lang", "typescript")
    assert status == 0 and (project.root / "out" / "tools.d.ts").is_file()


def _catalogs(project: Project, command: str) -> None:
    project.tools(files=[TOOL])
    project.table('catalogs = ["md"]\n')
    status, _, err = project.run("build", "tools", "-o", "out")
    assert status == 0, err
    written = sorted(path.name for path in (project.root / "out").iterdir())
    assert [name for name in written if ".catalog." in name] == ["tools.catalog.md"]


def _catalog_title(project: Project, command: str) -> None:
    project.tools(files=[TOOL])
    project.table('catalog_title = "Project tools"\n')
    if command == "catalog":
        status, out, err = project.run("catalog", "tools")
        assert status == 0, err
        assert out.startswith("# Project tools\n")
        status, out, _ = project.run("catalog", "tools", "--title", "Mine")
        assert out.startswith("# Mine\n")
        return
    status, _, err = project.run("build", "tools", "-o", "out")
    assert status == 0, err
    assert (project.root / "out" / "tools.catalog.md").read_text().startswith("# Project tools\n")


def _out(project: Project, command: str) -> None:
    project.tools(files=[TOOL])
    project.table('out = "generated"\n')
    status, _, err = project.run("build", "tools")
    assert status == 0, err
    assert (project.root / "generated" / "tools.py").is_file()


def _module(project: Project, command: str) -> None:
    project.tools(files=[TOOL])
    project.table('module = "agent_tools"\n')
    status, _, err = project.run("build", "tools", "-o", "out")
    assert status == 0, err
    assert (project.root / "out" / "agent_tools.py").is_file()


DEGRADED = {
    "name": "lookup",
    "inputSchema": {"type": "object", "properties": {"key": {"$ref": "#/$defs/Missing"}}},
}
"""A tool whose build warns (a `$ref` to nothing)."""


def _strict(project: Project, command: str) -> None:
    """`strict = true`: the warning fails the run and nothing is written; `--no-strict`
    (the command line wins) lets it through."""
    project.tools(files=[DEGRADED])
    project.table("strict = true\n")
    args = {**NAMESPACED_ARGS, "diff": ("tools", "tools")}[command]
    status, out, err = project.run(command, *args)
    assert status == 1, err
    assert "points to nothing" in out + err
    assert "--strict: " in err and " as errors" in err
    assert not (project.root / "out").exists()
    if command in ("sdk", "prompt", "catalog"):
        assert out == ""
    status, _, err = project.run(command, *args, "--no-strict")
    assert status == 0, err
    assert "--strict" not in err


def _serve(project: Project, command: str) -> None:
    """`codegen serve --config pyproject.toml` reads `[tool.codegen.serve]`."""
    from codegen.mcp.config import load_servers_file

    project.table('[tool.codegen.serve.mcpServers.files]\ncommand = "files-server"\n')
    loaded = load_servers_file(project.root / "pyproject.toml", "pyproject.toml")
    assert [upstream.name for upstream in loaded.upstreams] == ["files"]


SCENARIOS: dict[str, Callable[[Project, str], None]] = {
    "sources": _sources,
    "namespace": _namespace,
    "input_format": _input_format,
    "cache": _cache,
    "languages": _languages,
    "catalogs": _catalogs,
    "catalog_title": _catalog_title,
    "out": _out,
    "module": _module,
    "strict": _strict,
    "serve": _serve,
}

PAIRS = [(key, command) for key, commands in config.HONOURED_BY.items() for command in commands]


def test_every_key_of_the_table_says_which_commands_read_it() -> None:
    assert set(config.HONOURED_BY) == set(config._KEYS) == set(SCENARIOS)
    # The table's values, the command line and the merge hold the same keys, in one order.
    keys = tuple(key for key in config.HONOURED_BY if key != "serve")
    assert config.ProjectConfig._fields == ("path", *keys, "warnings")
    assert config.Given._fields == keys
    assert config.Settings._fields == ("command", "config", *keys)
    for commands in config.HONOURED_BY.values():
        assert set(commands) <= set(COMMANDS)
    # Every command that reads tool definitions reads what they mean the same way.
    for key in ("sources", "namespace", "input_format", "strict"):
        assert config.HONOURED_BY[key] == config.SOURCE_COMMANDS


@pytest.mark.parametrize(("key", "command"), PAIRS, ids=[f"{k}-{c}" for k, c in PAIRS])
def test_each_command_honours_the_keys_it_reads(key: str, command: str, project: Project) -> None:
    scenario = SCENARIOS.get(key)
    if scenario is None:
        pytest.fail(f"no scenario shows that {command} honours {key!r}: add one to SCENARIOS")
    scenario(project, command)


def test_the_table_fills_in_only_what_a_command_reads(tmp_path: Path) -> None:
    table = config.parse_table(
        {"sources": ["tools"], "namespace": True, "cache": "c", "languages": ["python"]},
        tmp_path / "pyproject.toml",
    )
    given = config.Given()
    sdk = config.settings_for("sdk", given, table)
    assert (sdk.namespace, sdk.cache, sdk.languages) == (True, (tmp_path / "c").as_posix(), None)
    prompt = config.settings_for("prompt", given, table)
    assert (prompt.namespace, prompt.cache) == (True, None)
    # The command line wins, a False as much as a value.
    assert not config.settings_for("sdk", config.Given(namespace=False), table).namespace
    assert config.settings_for("sdk", config.Given(sources=("x",)), table).sources == ("x",)
    assert config.settings_for("sdk", given, None) == config.Settings("sdk", None)


def test_a_bad_table_is_a_usage_error_for_every_command(project: Project) -> None:
    project.tools(files=[TOOL])
    project.table("namespace = 1\n")
    for args in (
        ("validate", "tools"),
        ("sdk", "tools", "--lang", "python"),
        ("catalog", "tools"),
        ("diff", "tools", "tools"),
    ):
        status, _, err = project.run(*args)
        assert status == 2
        assert "[tool.codegen] namespace: expected a boolean, got an integer" in err


def test_deprecated_keys_warn_on_every_command_unless_quiet(project: Project) -> None:
    project.tools(files=[TOOL])
    project.table('format = "mcp"\n')
    status, _, err = project.run("validate", "tools")
    assert status == 0 and "'format' is deprecated; name it 'input_format'" in err
    status, _, err = project.run("sdk", "tools", "--lang", "python", "--quiet")
    assert (status, err) == (0, "")


# --- paths: a repository's table never leads outside its project -------------------------


@pytest.fixture
def nested(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> Project:
    """A project in `repo/` beside a folder `outside/` that it must not reach."""
    (tmp_path / "repo").mkdir()
    (tmp_path / "outside").mkdir()
    monkeypatch.chdir(tmp_path / "repo")
    return Project(tmp_path / "repo", capsys)


def _leads_outside(nested: Project, how: str) -> str:
    """The value of a path key that leads to `outside/x`: as `..`, as an absolute path, or
    through a symbolic link inside the project."""
    outside = nested.root.parent / "outside"
    if how == "dotdot":
        return "../outside/x"
    if how == "absolute":
        return str(outside / "x")
    (nested.root / "link").symlink_to(outside, target_is_directory=True)
    return "link/x"


def _refused(err: str, nested: Project, key: str) -> None:
    pyproject = (nested.root / "pyproject.toml").resolve()
    assert err.startswith(f"codegen: {pyproject}: [tool.codegen] {key}: "), err
    assert f"outside the project folder {nested.root.resolve()}" in err
    assert "a path elsewhere can be given on the command line" in err


WAYS_OUT = ["dotdot", "absolute", "symlink"]


@pytest.mark.parametrize("how", WAYS_OUT)
def test_an_out_outside_the_project_is_refused_unless_given_on_the_command_line(
    how: str, nested: Project
) -> None:
    nested.tools(files=[TOOL])
    value = _leads_outside(nested, how)
    nested.table(f'sources = ["tools"]\nout = {json.dumps(value)}\n')
    for check in ((), ("--check",)):
        status, _, err = nested.run("build", *check)
        assert status == 2
        _refused(err, nested, "out")
        if how == "symlink":
            assert "leads through a symbolic link to" in err
    assert not (nested.root.parent / "outside" / "x").exists()
    # The same path named on the command line is the user's choice.
    status, _, err = nested.run("build", "-o", value)
    assert status == 0, err
    assert (nested.root.parent / "outside" / "x" / "tools.py").is_file()


@pytest.mark.parametrize("how", WAYS_OUT)
def test_a_cache_outside_the_project_is_refused_unless_given_on_the_command_line(
    how: str, nested: Project
) -> None:
    nested.tools(files=[TOOL])
    value = _leads_outside(nested, how)
    nested.table(f'sources = ["tools"]\nout = "generated"\ncache = {json.dumps(value)}\n')
    for args in (("build",), ("build", "--check"), ("sdk", "--lang", "python")):
        status, _, err = nested.run(*args)
        assert status == 2
        _refused(err, nested, "cache")
    assert not (nested.root.parent / "outside" / "x").exists()
    status, _, err = nested.run("build", "--cache", value)
    assert status == 0, err
    assert any((nested.root.parent / "outside" / "x").iterdir())


@pytest.mark.parametrize("how", WAYS_OUT)
def test_sources_outside_the_project_are_refused_unless_given_on_the_command_line(
    how: str, nested: Project
) -> None:
    """Reading is refused too: a cloned repository must not make `codegen build` read a
    developer's files and print what it makes of them (diagnostics, `--check` diffs)."""
    outside = nested.root.parent / "outside"
    (outside / "x").mkdir()
    (outside / "x" / "tools.json").write_text(json.dumps([TOOL]))
    value = _leads_outside(nested, how)
    nested.table(f'sources = [{json.dumps(value)}]\nout = "generated"\n')
    for args in (("build",), ("validate",), ("sdk", "--lang", "python")):
        status, out, err = nested.run(*args)
        assert status == 2 and "read_file" not in out
        _refused(err, nested, "sources")
    status, _, err = nested.run("build", value)
    assert status == 0, err
    assert "read_file" in (nested.root / "generated" / "tools.py").read_text()


def test_paths_inside_the_project_and_keys_a_command_does_not_take_are_accepted(
    nested: Project,
) -> None:
    nested.tools(files=[TOOL])
    (nested.root / "inner").mkdir()
    (nested.root / "inner-link").symlink_to(nested.root / "inner", target_is_directory=True)
    nested.table(
        'sources = ["./tools/../tools"]\nout = "inner-link/gen"\ncache = "."\n',
    )
    status, _, err = nested.run("build")
    assert status == 0, err
    assert (nested.root / "inner" / "gen" / "tools.py").is_file()
    # `sdk` takes no `out`, and a command line path replaces the table's: neither is checked.
    nested.table('sources = ["tools"]\nout = "../outside/x"\ncache = "../outside/c"\n')
    status, _, err = nested.run("sdk", "--lang", "python", "--cache", "c")
    assert status == 0, err
    status, _, err = nested.run("build", "-o", "gen", "--cache", "c")
    assert status == 0, err
    assert list((nested.root.parent / "outside").iterdir()) == []


def test_a_loop_of_symbolic_links_is_refused(nested: Project) -> None:
    nested.tools(files=[TOOL])
    (nested.root / "a").symlink_to(nested.root / "b")
    (nested.root / "b").symlink_to(nested.root / "a")
    nested.table('sources = ["tools"]\nout = "a"\n')
    status, _, err = nested.run("build")
    assert status == 2
    assert "[tool.codegen] out: a cannot be resolved (a loop of symbolic links)" in err
