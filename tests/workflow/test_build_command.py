"""`codegen build`: every output in one step, `--check` for CI, `[tool.codegen]`, the
pre-commit hook, and progress only on a terminal."""

from __future__ import annotations

import io
import json
import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from codegen._support.progress import reporting
from codegen.cli import main
from codegen.codemode.presentation.languages import render_sdk_section
from codegen.engine import compile_sources
from codegen.render.catalog import render_catalog
from codegen.render.python.sdk import render_python_sdk
from codegen.render.typescript.sdk import render_typescript_sdk
from codegen.workflow.progress import Console, Progress
from conftest import ROOT, SCHEMAS

ALL_FILES = (
    "tools.py",
    "tools.d.ts",
    "tools.prompt.python.md",
    "tools.prompt.typescript.md",
    "tools.catalog.md",
    "tools.catalog.json",
    "tools.catalog.html",
)

TOOL = {
    "name": "read_file",
    "description": "Read a file.",
    "inputSchema": {
        "type": "object",
        "properties": {"path": {"type": "string"}},
        "required": ["path"],
    },
}


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    status = main(list(args))
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err
    return status, out, err


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A repository with tool definitions under `tools/`, as the current directory."""
    (tmp_path / "tools").mkdir()
    (tmp_path / "tools" / "files.json").write_text(json.dumps({"tools": [TOOL]}))
    shutil.copy(SCHEMAS / "enum_const.json", tmp_path / "tools" / "enums.json")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def configure(root: Path, table: str) -> None:
    (root / "pyproject.toml").write_text(f'[project]\nname = "demo"\n\n[tool.codegen]\n{table}')


def test_build_writes_every_output_as_the_renderers_produce_it(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    status, out, err = run(capsys, "build", "tools", "-o", "out")
    assert status == 0 and out == ""
    assert err.splitlines() == [f"wrote out/{name}" for name in ALL_FILES]
    catalog = compile_sources(["tools"]).catalog
    assert catalog is not None
    expected = {
        "tools.py": render_python_sdk(catalog),
        "tools.d.ts": render_typescript_sdk(catalog),
        "tools.prompt.python.md": render_sdk_section(catalog, "python"),
        "tools.prompt.typescript.md": render_sdk_section(catalog, "typescript"),
        "tools.catalog.md": render_catalog(catalog, "md", "typescript"),
        "tools.catalog.json": render_catalog(catalog, "json", "typescript"),
        "tools.catalog.html": render_catalog(catalog, "html", "typescript"),
    }
    assert sorted(p.name for p in (project / "out").iterdir()) == sorted(expected)
    for name, text in expected.items():
        assert (project / "out" / name).read_bytes() == text.encode("utf-8"), name


def test_unchanged_files_are_not_touched(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run(capsys, "build", "tools", "-o", "out")[0] == 0
    stamps = {p.name: p.stat().st_mtime_ns for p in (project / "out").iterdir()}
    for path in (project / "out").iterdir():
        os.utime(path, ns=(1_000_000_000, 1_000_000_000))
    status, _, err = run(capsys, "build", "tools", "-o", "out")
    assert status == 0
    assert err.splitlines() == [f"unchanged out/{name}" for name in ALL_FILES]
    assert all(p.stat().st_mtime_ns == 1_000_000_000 for p in (project / "out").iterdir())
    assert stamps.keys() == {p.name for p in (project / "out").iterdir()}
    # One changed tool rewrites only the files that depend on it (here: all of them, and
    # nothing else appears in the directory).
    files = project / "tools" / "files.json"
    files.write_text(files.read_text().replace("Read a file.", "Read one file."))
    status, _, err = run(capsys, "build", "tools", "-o", "out")
    assert status == 0 and "wrote out/tools.py" in err.splitlines()


def test_languages_and_module_name(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    status, _, err = run(
        capsys, "build", "tools", "-o", "out", "--lang", "python", "--module", "api"
    )
    assert status == 0 and "wrote out/api.py" in err
    names = sorted(p.name for p in (project / "out").iterdir())
    assert names == [
        "api.catalog.html",
        "api.catalog.json",
        "api.catalog.md",
        "api.prompt.python.md",
        "api.py",
    ]
    catalog = compile_sources(["tools"]).catalog
    assert catalog is not None
    # With only the Python SDK, the catalog spells types in Python.
    assert (project / "out" / "api.catalog.md").read_text() == render_catalog(
        catalog, "md", "python"
    )
    status, _, err = run(capsys, "build", "tools", "-o", "out2", "--lang", "typescript,python")
    assert status == 0 and err.splitlines()[0] == "wrote out2/tools.py"
    assert len(list((project / "out2").iterdir())) == 7


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--lang", "rust"], "unknown language 'rust' (known: python, typescript)"),
        (["--lang", ""], "unknown language ''"),
        (["--module", "my-tools"], "'my-tools' is not a valid Python module name"),
        (["--module", "class"], "'class' is not a valid Python module name"),
    ],
)
def test_bad_options_are_usage_errors(
    project: Path, capsys: pytest.CaptureFixture[str], args: list[str], message: str
) -> None:
    status, _, err = run(capsys, "build", "tools", "-o", "out", *args)
    assert status == 2
    assert message in err
    assert not (project / "out").exists()


def test_invalid_sources_write_nothing(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = dict(TOOL, inputSchema={"type": "object", "properties": {"x": {"type": "strin"}}})
    (project / "tools" / "bad.json").write_text(json.dumps([bad]))
    status, out, err = run(capsys, "build", "tools", "-o", "out")
    assert status == 1 and out == ""
    first = err.splitlines()[0]
    assert first.startswith("tools/bad.json:/0/inputSchema/properties/x/type: error: ")
    assert "nothing written" in err
    assert not (project / "out").exists()
    assert run(capsys, "build", "tools", "-o", "out", "--check")[0] == 1


def test_check_passes_when_current_and_prints_a_diff_otherwise(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Nothing built yet: every file would be created.
    status, out, err = run(capsys, "build", "tools", "-o", "out", "--check")
    assert status == 1
    assert not (project / "out").exists()
    for name in ALL_FILES:
        assert f"--- a/out/{name}\n+++ b/out/{name}\n" in out
        assert f"missing out/{name}" in err

    assert run(capsys, "build", "tools", "-o", "out")[0] == 0
    status, out, err = run(capsys, "build", "tools", "-o", "out", "--check")
    assert (status, out) == (0, "")
    assert "all 7 generated files are up to date" in err

    before = {p.name: p.read_bytes() for p in (project / "out").iterdir()}
    files = project / "tools" / "files.json"
    files.write_text(files.read_text().replace("Read a file.", "Read one file."))
    status, out, err = run(capsys, "build", "tools", "-o", "out", "--check")
    assert status == 1
    assert "--- a/out/tools.py\n+++ b/out/tools.py\n@@ " in out
    assert '-        """Read a file."""\n+        """Read one file."""\n' in out
    assert "outdated out/tools.py" in err
    assert "of 7 generated files are out of date" in err
    assert {p.name: p.read_bytes() for p in (project / "out").iterdir()} == before

    # The diff is a real patch: applying it makes the check pass.
    applied = subprocess.run(
        ["git", "apply", "-"], input=out, text=True, cwd=project, capture_output=True, check=False
    )
    assert applied.returncode == 0, applied.stderr
    assert run(capsys, "build", "tools", "-o", "out", "--check")[0] == 0


def test_check_never_reads_an_output_through_a_symbolic_link(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A repository's `out/tools.py` may be a link to a developer's file: `--check` must not
    print that file's text in its diff (a CI log), and `build` replaces the link by the
    output, leaving the file it pointed at alone."""
    secret = project.parent / f"{project.name}-secret.txt"
    secret.write_text("SECRET-TOKEN\n")
    (project / "out").mkdir()
    (project / "out" / "tools.py").symlink_to(secret)
    status, out, err = run(capsys, "build", "tools", "-o", "out", "--check")
    assert status == 2
    assert "SECRET-TOKEN" not in out + err
    assert "out/tools.py: is a symbolic link, not an output file" in err
    assert run(capsys, "build", "tools", "-o", "out")[0] == 0
    assert not (project / "out" / "tools.py").is_symlink()
    assert secret.read_text() == "SECRET-TOKEN\n"
    assert run(capsys, "build", "tools", "-o", "out", "--check")[0] == 0


def test_quiet_and_verbose(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    status, out, err = run(capsys, "build", "tools", "-o", "out", "--quiet")
    assert (status, out, err) == (0, "", "")
    status, _, err = run(capsys, "build", "tools", "-o", "out", "--verbose")
    assert status == 0
    assert "compiled 2 tools in" in err and "unchanged out/tools.py" in err
    status, _, err = run(capsys, "build", "tools", "-o", "out", "--quiet", "--verbose")
    assert status == 2 and "not allowed with argument" in err


def test_pyproject_table_drives_a_build_without_arguments(
    project: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    configure(
        project,
        'sources = ["tools"]\nout = "generated"\nlanguages = ["typescript"]\n'
        'module = "agent_tools"\nnamespace = true\ninput_format = "auto"\n',
    )
    # Run from a subdirectory: the table's paths are relative to the pyproject.toml.
    (project / "src" / "deep").mkdir(parents=True)
    monkeypatch.chdir(project / "src" / "deep")
    status, _, err = run(capsys, "build", "-v")
    assert status == 0, err
    # Paths outside the current directory are shown absolute.
    assert f"using [tool.codegen] from {project.as_posix()}/pyproject.toml" in err
    written = sorted(p.name for p in (project / "generated").iterdir())
    assert written == [
        "agent_tools.catalog.html",
        "agent_tools.catalog.json",
        "agent_tools.catalog.md",
        "agent_tools.d.ts",
        "agent_tools.prompt.typescript.md",
    ]
    declarations = (project / "generated" / "agent_tools.d.ts").read_text()
    assert "files__read_file: FilesReadFileArgs" in declarations  # namespace = true
    assert f"wrote {project.as_posix()}/generated/agent_tools.d.ts" in err

    # Command-line arguments win over the table.
    monkeypatch.chdir(project)
    status, _, err = run(capsys, "build", "--module", "other", "--lang", "python", "--no-namespace")
    assert status == 0, err
    assert (project / "generated" / "other.py").exists()
    assert "files__read_file" not in (project / "generated" / "other.py").read_text()
    status, _, err = run(capsys, "build", "tools/files.json", "-o", "elsewhere")
    assert status == 0
    assert sorted(p.name for p in (project / "elsewhere").iterdir()) == [
        "agent_tools.catalog.html",
        "agent_tools.catalog.json",
        "agent_tools.catalog.md",
        "agent_tools.d.ts",
        "agent_tools.prompt.typescript.md",
    ]


def test_nearest_table_wins_and_tableless_pyprojects_are_skipped(
    project: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    configure(project, 'sources = ["tools"]\nout = "out"\n')
    package = project / "package"
    package.mkdir()
    (package / "pyproject.toml").write_text('[project]\nname = "inner"\n')  # no table
    monkeypatch.chdir(package)
    assert run(capsys, "build", "-q")[0] == 0
    assert (project / "out" / "tools.py").exists()


def test_missing_settings_are_usage_errors(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    status, _, err = run(capsys, "build", "-o", "out")
    assert status == 2 and "no sources" in err
    status, _, err = run(capsys, "build", "tools")
    assert status == 2 and "no output directory" in err


@pytest.mark.parametrize(
    ("table", "key", "message"),
    [
        (
            'sources = "tools"\nout = "out"\n',
            "sources",
            "expected an array of non-empty strings, got a string",
        ),
        ('sources = ["tools", 3]\nout = "out"\n', "sources", "entry 1 is an integer"),
        ('sources = []\nout = "out"\n', "sources", "expected at least one entry"),
        ('sources = ["tools"]\nout = 1\n', "out", "expected a non-empty string, got an integer"),
        (
            'sources = ["tools"]\nout = "out"\nlanguages = ["go"]\n',
            "languages",
            "unknown language 'go'",
        ),
        ('sources = ["tools"]\nout = "out"\nlanguages = "python"\n', "languages", "got a string"),
        (
            'sources = ["tools"]\nout = "out"\nmodule = "a.b"\n',
            "module",
            "not a valid Python module name",
        ),
        (
            'sources = ["tools"]\nout = "out"\nnamespace = "yes"\n',
            "namespace",
            "expected a boolean, got a string",
        ),
        (
            'sources = ["tools"]\nout = "out"\ninput_format = "xml"\n',
            "input_format",
            "unknown input format 'xml'",
        ),
        ('sources = ["tools"]\nout = "out"\noutput = "x"\n', "output", "unknown key 'output'"),
        (
            'sources = ["tools"]\nout = "out"\ncatalogs = ["pdf"]\n',
            "catalogs",
            "unknown catalog format 'pdf' (known: md, json, html)",
        ),
        (
            'sources = ["tools"]\nout = "out"\nformat = "mcp"\ninput_format = "mcp"\n',
            "'format' and 'input_format' both given",
            "keep 'input_format'",
        ),
    ],
)
def test_a_bad_table_is_a_usage_error_naming_the_key(
    project: Path, capsys: pytest.CaptureFixture[str], table: str, key: str, message: str
) -> None:
    configure(project, table)
    status, out, err = run(capsys, "build")
    assert status == 2 and out == ""
    assert "pyproject.toml: [tool.codegen]" in err
    assert key in err and message in err
    assert not (project / "out").exists()


def test_invalid_toml_and_a_non_table_are_usage_errors(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (project / "pyproject.toml").write_text("[tool.codegen\n")
    status, _, err = run(capsys, "build")
    assert status == 2 and "pyproject.toml: invalid TOML" in err
    (project / "pyproject.toml").write_text('[tool]\ncodegen = "yes"\n')
    status, _, err = run(capsys, "build")
    assert status == 2 and "[tool.codegen] must be a table, not a string" in err


def test_help_documents_the_exit_codes(capsys: pytest.CaptureFixture[str]) -> None:
    for command in ("build", "harvest", "diff"):
        with pytest.raises(SystemExit):
            main([command, "--help"])
        out = capsys.readouterr().out
        assert "exit status:" in out and "2  bad usage" in out, command


def test_pre_commit_hook_checks_a_configured_repository(tmp_path: Path) -> None:
    """The hook's entry, run as pre-commit would, in a sample repository."""
    hooks = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())
    hook = next(h for h in hooks if h["id"] == "codegen-check")
    assert hook["language"] == "python" and hook["pass_filenames"] is False
    assert hook.get("always_run") or "json" in hook["files"]
    entry = shlex.split(hook["entry"])
    assert entry[0] == "codegen"
    command = [sys.executable, "-m", "codegen", *entry[1:]]

    (tmp_path / "definitions").mkdir()
    (tmp_path / "definitions" / "files.yaml").write_text(yaml.safe_dump({"tools": [TOOL]}))
    configure(tmp_path, 'sources = ["definitions"]\nout = "sdk"\nmodule = "tools"\n')
    env = {**os.environ, "PYTHONIOENCODING": "utf-8"}

    def hook_run() -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            command, cwd=tmp_path, capture_output=True, text=True, check=False, env=env, timeout=60
        )

    build = subprocess.run(
        [sys.executable, "-m", "codegen", "build"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=False,
        env=env,
        timeout=60,
    )
    assert build.returncode == 0, build.stderr
    current = hook_run()
    assert (current.returncode, current.stdout) == (0, ""), current.stderr

    definitions = tmp_path / "definitions" / "files.yaml"
    definitions.write_text(definitions.read_text().replace("Read a file.", "Read any file."))
    stale = hook_run()
    assert stale.returncode == 1
    assert "--- a/sdk/tools.py\n+++ b/sdk/tools.py\n" in stale.stdout
    assert '+        """Read any file."""' in stale.stdout
    assert "Traceback" not in stale.stderr


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_progress_draws_only_on_a_terminal() -> None:
    terminal = _Terminal()
    progress = Progress(terminal, interval=0)
    progress.update("compiling 3000 tools")
    progress.update("rendering tools.py (1/6)")
    progress.clear()
    assert terminal.getvalue() == (
        "\r\x1b[Kcompiling 3000 tools\r\x1b[Krendering tools.py (1/6)\r\x1b[K"
    )
    log = io.StringIO()
    quiet = Progress(log, interval=0)
    quiet.update("compiling")
    quiet.clear()
    assert log.getvalue() == ""

    # A console draws the run's line (the command line attaches one only on a terminal
    # without --quiet); messages erase it first. Without one, nothing is drawn.
    terminal = _Terminal()
    with reporting(Progress(terminal)):
        console = Console(stream=terminal)
    console.progress.update("working", force=True)
    console.note("wrote out/tools.py")
    assert terminal.getvalue() == "\r\x1b[Kworking\r\x1b[Kwrote out/tools.py\n"
    terminal = _Terminal()
    console = Console(quiet=True, stream=terminal)
    console.progress.update("working", force=True)
    console.note("wrote out/tools.py")
    console.error("boom")
    assert terminal.getvalue() == "boom\n"


def test_progress_is_throttled() -> None:
    terminal = _Terminal()
    progress = Progress(terminal, interval=3600)
    for index in range(1000):
        progress.update(f"comparing tools: {index}/1000")
    assert terminal.getvalue() == "\r\x1b[Kcomparing tools: 0/1000"


def test_a_large_catalog_builds_quickly(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    tools: list[dict[str, Any]] = [
        dict(TOOL, name=f"tool_{index:04d}", description=f"Tool number {index}.")
        for index in range(1500)
    ]
    (tmp_path / "big.json").write_text(json.dumps({"tools": tools}))
    monkeypatch.chdir(tmp_path)
    status, _, err = run(capsys, "build", "big.json", "-o", "out", "-q")
    assert (status, err) == (0, "")
    assert (tmp_path / "out" / "tools.py").read_text().count("class Tool") >= 1500


def test_a_sandbox_key_in_the_table_is_ignored_with_a_warning(tmp_path: Path) -> None:
    """A cloned repository controls its pyproject.toml: it never turns a sandbox off."""
    from codegen.workflow.config import load_config

    path = tmp_path / "pyproject.toml"
    path.write_text('[tool.codegen]\nsandbox = "none"\n')
    config = load_config(path)
    assert config is not None and not hasattr(config, "sandbox")
    assert config.warnings == (
        f"{path}: warning: [tool.codegen] 'sandbox' is ignored: a project's files never "
        "choose how run_code programs are contained (a cloned repository controls them); "
        "codegen serve takes --sandbox or its --config",
    )


def test_catalogs_setting_chooses_the_docs_catalogs(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """All three catalogs by default; `--catalogs` or `catalogs = [...]` picks some or none."""
    status, _, err = run(capsys, "build", "tools", "-o", "out", "--catalogs", "html,md")
    assert status == 0, err
    assert sorted(p.name for p in (project / "out").glob("*.catalog.*")) == [
        "tools.catalog.html",
        "tools.catalog.md",
    ]
    html = (project / "out" / "tools.catalog.html").read_text()
    assert html.startswith("<!DOCTYPE html>") and "read_file" in html
    status, _, err = run(capsys, "build", "tools", "-o", "none", "--catalogs", "")
    assert status == 0, err
    assert not list((project / "none").glob("*.catalog.*"))
    configure(project, 'sources = ["tools"]\nout = "table"\ncatalogs = ["json"]\n')
    status, _, err = run(capsys, "build")
    assert status == 0, err
    assert [p.name for p in (project / "table").glob("*.catalog.*")] == ["tools.catalog.json"]
    status, _, err = run(capsys, "build", "--catalogs", "pdf")
    assert status == 2 and "unknown catalog format 'pdf'" in err


def test_the_old_format_key_and_flag_still_work_with_a_warning(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    configure(project, 'sources = ["tools"]\nout = "out"\nformat = "mcp"\n')
    status, _, err = run(capsys, "build")
    assert status == 0, err
    assert "[tool.codegen] 'format' is deprecated; name it 'input_format'" in err
    status, _, err = run(capsys, "build", "--format", "mcp", "-q")
    assert status == 0
    assert (
        err
        == "codegen build: warning: --format for the input format is deprecated; use --input-format mcp\n"
    )
    status, _, err = run(capsys, "build", "--input-format", "openai", "-q")
    assert status == 1 and "not a tool in the 'openai' format" in err
