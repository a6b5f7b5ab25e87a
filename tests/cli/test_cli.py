"""The command line: output format, exit codes, and never a traceback."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from codegen.cli import main
from codegen.errors import UsageError
from conftest import CORPUS, FIXTURES, ROOT, SCHEMAS

INVALID = sorted((FIXTURES / "invalid").glob("*.json"))


def run_cli(*args: str, stdin: bytes | None = None) -> subprocess.CompletedProcess[str]:
    """The real `python -m codegen`, in a subprocess, from the repository root."""
    return subprocess.run(
        [sys.executable, "-m", "codegen", *args],
        input=stdin,
        capture_output=True,
        cwd=ROOT,
        check=False,
        env={**os.environ, "PYTHONIOENCODING": "utf-8"},
    )


@pytest.mark.parametrize("path", INVALID, ids=[p.stem for p in INVALID])
def test_invalid_inputs_exit_1_with_pinned_diagnostics(
    path: Path, golden: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    relative = path.relative_to(ROOT).as_posix()
    cwd = os.getcwd()
    os.chdir(ROOT)
    try:
        status = main(["validate", relative])
    finally:
        os.chdir(cwd)
    out, err = capsys.readouterr()
    assert status == 1
    assert "Traceback" not in out + err
    lines = out.splitlines()
    assert lines and all(line.startswith(relative + ":") for line in lines)
    assert out + "# " + err == golden("diagnostics", "txt")


def test_valid_sources_exit_0() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "codegen", "validate", "schemas"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    counted = re.fullmatch(r"(\d+) tools: 0 errors, (\d+) warnings", result.stderr.strip())
    assert counted is not None, result.stderr
    warnings = sum(": warning: " in line for line in result.stdout.splitlines())
    assert int(counted.group(2)) == warnings > 0, result.stdout


def test_quiet_prints_errors_only(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["validate", "--quiet", str(SCHEMAS / "degraded.json")]) == 0
    out, err = capsys.readouterr()
    assert out == "" and "3 warnings" in err


def test_namespace_flag(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["validate", str(CORPUS)]) == 1
    capsys.readouterr()
    assert main(["validate", "--namespace", str(CORPUS)]) == 0
    assert "486 tools: 0 errors" in capsys.readouterr().err


def test_namespace_from_stdin_needs_a_server_name() -> None:
    tool = b'{"name": "echo", "inputSchema": {"type": "object"}}'
    dump = b'{"server": "mcp-servers/everything", "tools": [' + tool + b"]}"
    result = run_cli("sdk", "--lang", "typescript", "--namespace", "-", stdin=dump)
    assert result.returncode == 0, result.stderr
    assert b"everything__echo: EverythingEchoArgs" in result.stdout
    result = run_cli("validate", "--namespace", "-", stdin=b"[" + tool + b"]")
    assert result.returncode == 1
    assert result.stdout.decode().startswith("<stdin>:: error: --namespace cannot derive")


@pytest.mark.parametrize(
    "args, message",
    [
        ([], "usage"),
        (["validate"], "the following arguments are required"),
        (["validate", "--format", "xml", "x.json"], "invalid choice"),
        (["nope"], "invalid choice"),
        (["validate", "does/not/exist.json"], "no such file or directory"),
    ],
)
def test_usage_errors_exit_2(args: list[str], message: str) -> None:
    result = run_cli(*args)
    assert result.returncode == 2
    stderr = result.stderr.decode()
    assert message in stderr and "Traceback" not in stderr


def test_stdin_source() -> None:
    result = run_cli("validate", "-", stdin=b'{"name": "x", "inputSchema": {"type": 3}}')
    assert result.returncode == 1
    assert result.stdout.decode().startswith("<stdin>:/inputSchema/type: error:")


def test_internal_errors_exit_2_without_traceback(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import codegen.engine

    def explode(*args: Any, **kwargs: Any) -> None:
        raise RuntimeError("boom")

    monkeypatch.setattr(codegen.engine, "compile_sources", explode)
    assert main(["validate", str(SCHEMAS / "empty.json")]) == 2
    err = capsys.readouterr().err
    assert "internal error: RuntimeError: boom" in err and "report" in err
    assert "Traceback" not in err


@pytest.mark.parametrize(
    ("module", "expected"),
    [
        (
            "wordllama",
            "needs the Python package 'wordllama', which is not installed: pip install 'tool-codegen[search]'",
        ),
        (
            "mcp.client",
            "needs the Python package 'mcp', which is not installed: pip install 'tool-codegen[serve]'",
        ),
        (
            "jinja2",
            "the Python package 'jinja2' is missing, though codegen depends on it: reinstall",
        ),
    ],
)
def test_a_missing_package_is_named_with_what_installs_it(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], module: str, expected: str
) -> None:
    import codegen.engine

    def explode(*args: Any, **kwargs: Any) -> None:
        raise ModuleNotFoundError(f"No module named {module!r}", name=module)

    monkeypatch.setattr(codegen.engine, "compile_sources", explode)
    assert main(["validate", str(SCHEMAS / "empty.json")]) == 2
    err = capsys.readouterr().err
    assert expected in err
    assert "bug in codegen" not in err and "Traceback" not in err


def test_an_internal_error_names_what_failed_inside_exception_groups(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Task groups wrap what they raise ("unhandled errors in a TaskGroup", which names
    nothing): the message names every innermost exception, with the notes added on its way
    out (which upstream); a usage error or Ctrl-C inside is reported as itself."""
    import codegen.engine

    def raising(error: BaseException) -> Any:
        def explode(*args: Any, **kwargs: Any) -> None:
            raise error

        return explode

    bad = ValueError("a tool's schema is\nnot an object")
    serving = ExceptionGroup("unhandled errors in a TaskGroup", [bad, KeyError("name")])
    serving.add_note('while serving the upstream "hostile" (python hostile.py)')
    nested = ExceptionGroup("unhandled errors in a TaskGroup", [serving])
    monkeypatch.setattr(codegen.engine, "compile_sources", raising(nested))
    assert main(["validate", str(SCHEMAS / "empty.json")]) == 2
    err = capsys.readouterr().err
    where = '(while serving the upstream "hostile" (python hostile.py))'
    assert err.splitlines()[0] == (
        f"codegen: internal error: 2 failures: ValueError: a tool's schema is not an object "
        f"{where}; KeyError: 'name' {where}"
    )
    assert "This is a bug in codegen" in err
    assert "ExceptionGroup" not in err and "TaskGroup" not in err and "Traceback" not in err

    lone = BaseExceptionGroup("unhandled errors in a TaskGroup", [RuntimeError("boom")])
    monkeypatch.setattr(codegen.engine, "compile_sources", raising(lone))
    assert main(["validate", str(SCHEMAS / "empty.json")]) == 2
    assert "codegen: internal error: RuntimeError: boom\n" in capsys.readouterr().err

    usage = ExceptionGroup("unhandled errors in a TaskGroup", [UsageError("serve: --http: no")])
    monkeypatch.setattr(codegen.engine, "compile_sources", raising(usage))
    assert main(["validate", str(SCHEMAS / "empty.json")]) == 2
    assert capsys.readouterr().err == "codegen: serve: --http: no\n"

    stopped = BaseExceptionGroup("unhandled errors in a TaskGroup", [KeyboardInterrupt()])
    monkeypatch.setattr(codegen.engine, "compile_sources", raising(stopped))
    assert main(["validate", str(SCHEMAS / "empty.json")]) == 130
    assert capsys.readouterr().err == "codegen: interrupted\n"


def test_help_documents_exit_codes() -> None:
    result = run_cli("--help")
    assert result.returncode == 0
    text = result.stdout.decode()
    assert "exit status" in text and "2  bad usage" in text


# --- what a new user runs into --------------------------------------------------------------


def cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    status = main(list(args))
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err
    return status, out, err


def test_an_empty_directory_is_an_error_not_an_empty_sdk(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "tools").mkdir()
    (tmp_path / "tools" / "notes.txt").write_text("not a definition")
    for command in (["sdk", "--lang", "python"], ["build", "-o", str(tmp_path / "out")]):
        status, out, err = cli(capsys, command[0], str(tmp_path / "tools"), *command[1:])
        assert status == 1 and out == ""
        assert f"{tmp_path / 'tools'}:: error: no .json, .jsonl, .yaml or .yml files" in err
    assert not (tmp_path / "out").exists()
    # A file whose tool list is empty is no SDK either.
    (tmp_path / "none.json").write_text('{"tools": []}')
    status, out, err = cli(capsys, "sdk", str(tmp_path / "none.json"), "--lang", "typescript")
    assert (status, out) == (1, "")
    assert err == f"{tmp_path / 'none.json'}:: error: no tool definitions found\n"
    # ...but one side of a diff may hold nothing: every tool is then added.
    (tmp_path / "new.json").write_text(
        '{"tools": [{"name": "a", "inputSchema": {"type": "object"}}]}'
    )
    status, out, _ = cli(capsys, "diff", str(tmp_path / "tools"), str(tmp_path / "new.json"))
    assert status == 0 and "a" in out


def test_a_file_in_no_known_format_is_an_error_naming_the_formats(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    package = tmp_path / "package.json"
    package.write_text('{"name": "demo", "version": "1.0.0", "dependencies": {}}')
    status, out, err = cli(capsys, "validate", str(package))
    assert status == 1
    assert out == (
        f"{package}:: error: not a tool definition in any known format "
        "(mcp, openai, anthropic, bfcl, tooluniverse): an object with keys "
        "'dependencies', 'name', 'version'\n"
    )
    assert err == "0 tools: 1 error, 0 warnings\n"
    # A bare MCP tool (a name, a description, no schema) is still a tool that takes nothing.
    bare = tmp_path / "bare.json"
    bare.write_text('{"name": "ping", "description": "Ping.", "_meta": {}}')
    status, out, _ = cli(capsys, "validate", str(bare))
    assert status == 0 and "no inputSchema; the tool takes an empty object" in out


def test_bfcl_json_lines_with_input_schema_keys_are_detected(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """BFCL's dialect under Anthropic's key: recognised by a type only BFCL spells, at the
    root or deeper, so the records compile instead of failing meta-schema validation."""
    records = [
        {
            "name": "convert",
            "description": "Convert.",
            "input_schema": {
                "type": "dict",
                "properties": {"amount": {"type": "float"}},
                "required": ["amount"],
            },
        },
        {
            "name": "average",
            "description": "Average.",
            "input_schema": {
                "type": "object",
                "properties": {
                    "values": {"type": "array", "items": {"type": "float"}},
                    "mode": {"type": "string", "enum": [{"type": "dict"}], "optional": True},
                },
            },
        },
        {
            "name": "plain",
            "description": "An Anthropic tool.",
            "input_schema": {"type": "object", "properties": {"type": {"type": "string"}}},
        },
    ]
    source = tmp_path / "bfcl.jsonl"
    source.write_text("".join(json.dumps(record) + "\n" for record in records))
    status, out, err = cli(capsys, "validate", str(source))
    assert (status, out) == (0, ""), out
    assert err == "3 tools: 0 errors, 0 warnings\n"
    status, out, _ = cli(capsys, "sdk", str(source), "--lang", "python")
    assert status == 0
    assert "    amount: float\n" in out
    assert "    values: NotRequired[SequenceNotStr[float]]\n" in out
    # An Anthropic tool with a JSON-Schema mistake stays Anthropic and its error says so.
    source.write_text(
        json.dumps(
            {"name": "x", "input_schema": {"type": "object", "properties": {"n": {"type": 5}}}}
        )
    )
    status, out, _ = cli(capsys, "validate", str(source))
    assert status == 1 and "/input_schema/properties/n/type: error:" in out


def test_duplicate_names_suggest_namespace_only_when_it_would_help(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    tool = '{"name": "echo", "inputSchema": {"type": "object"}}'
    (tmp_path / "a.json").write_text(f'{{"tools": [{tool}]}}')
    (tmp_path / "b.json").write_text(f'{{"tools": [{tool}]}}')
    (tmp_path / "twice.json").write_text(f'{{"tools": [{tool}, {tool}]}}')
    hint = "--namespace prefixes each tool name"
    status, out, _ = cli(capsys, "validate", str(tmp_path / "a.json"), str(tmp_path / "b.json"))
    assert status == 1 and hint in out
    status, out, _ = cli(capsys, "validate", "--namespace", str(tmp_path / "twice.json"))
    assert status == 1
    assert 'duplicate tool name "twice__echo": also defined at' in out
    assert hint not in out


@pytest.mark.parametrize("command", ["validate", "sdk", "prompt", "catalog", "build", "diff"])
def test_input_format_is_spelled_the_same_on_every_command(command: str) -> None:
    result = run_cli(command, "--help")
    assert result.returncode == 0
    assert "--input-format {auto,mcp,openai,anthropic,bfcl,tooluniverse}" in " ".join(
        result.stdout.decode().split()
    )


def test_format_names_the_output_format_and_the_old_input_spelling_warns(
    capsys: pytest.CaptureFixture[str],
) -> None:
    source = str(SCHEMAS / "openai_tools.json")
    status, out, err = cli(
        capsys, "catalog", source, "--format", "json", "--input-format", "openai"
    )
    assert status == 0 and out.startswith("{") and err == ""
    status, new_out, err = cli(
        capsys, "sdk", source, "--lang", "python", "--input-format", "openai"
    )
    assert status == 0 and err == ""
    status, old_out, err = cli(capsys, "sdk", source, "--lang", "python", "--format", "openai")
    assert status == 0 and old_out == new_out
    assert err == (
        "codegen sdk: warning: --format for the input format is deprecated; "
        "use --input-format openai\n"
    )
    status, _, err = cli(capsys, "catalog", source, "--format", "openai")
    assert status == 2 and "invalid choice: 'openai'" in err


def test_version_names_the_distribution_and_warns_of_the_other_codegen(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The import name `codegen` is shared with another project's distribution: versions
    are read by distribution name, and `--version` warns when both are installed."""
    import importlib.metadata

    from codegen.cli import main

    installed = {"tool-codegen": "1.2.3", "codegen": "0.10.0"}

    def version(name: str) -> str:
        if name not in installed:
            raise importlib.metadata.PackageNotFoundError(name)
        return installed[name]

    monkeypatch.setattr(importlib.metadata, "version", version)
    assert main(["--version"]) == 0
    out, err = capsys.readouterr()
    assert out == "codegen 1.2.3 (tool-codegen)\n"
    assert "'codegen' 0.10.0 (another project) is installed beside 'tool-codegen'" in err
    del installed["codegen"]
    assert main(["--version"]) == 0
    out, err = capsys.readouterr()
    assert out == "codegen 1.2.3 (tool-codegen)\n" and err == ""


QUICK_START = re.compile(
    r"## Quick start\n.*?```sh\n[^\n]*?(?P<command>codegen sdk [^\n]*)\n```\n"
    r"(?P<prose>(?:(?!```|\n#).)*)```text\n(?P<stderr>.*?)```",
    re.S,
)
"""The quick start's command, the prose after it and the stderr block that prose leads to
(nothing else may come between them)."""


def test_the_quick_start_says_which_warnings_to_expect(capsys: pytest.CaptureFixture[str]) -> None:
    """README's quick start runs on the golden cases, some of which degrade on purpose: the
    warnings it prints are the ones the README shows right below the command, so a first
    run's stderr is never a surprise."""
    found = QUICK_START.search((ROOT / "README.md").read_text(encoding="utf-8"))
    assert found is not None, "README.md's quick start shows no command with its stderr"
    argv = found["command"].split()[1:]
    cwd = os.getcwd()
    os.chdir(ROOT)
    try:
        status = main(argv)
    finally:
        os.chdir(cwd)
    out, err = capsys.readouterr()
    assert status == 0 and out
    assert err == found["stderr"]
    warnings = err.count(": warning: ")
    assert warnings == len(err.splitlines())
    number = ["no", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten"]
    number += ["eleven", "twelve", "thirteen", "fourteen", "fifteen"]
    assert f"{number[warnings]} warnings" in found["prose"]
    for case in sorted({line.split(":", 1)[0] for line in err.splitlines()}):
        assert f"`{Path(case).name}`" in found["prose"], f"README does not say why {case} warns"


def _mistyped(flag: str) -> str:
    """The flag with one letter of its name dropped, as a hurried hand types it."""
    middle = 2 + (len(flag) - 2) // 2
    return flag[:middle] + flag[middle + 1 :]


def test_a_mistyped_flag_or_choice_gets_a_did_you_mean_on_every_command() -> None:
    from codegen.cli import COMMANDS, build_parser

    for command in COMMANDS:
        parser = build_parser([command])
        subparser = next(
            action.choices[command]
            for action in parser._actions
            if isinstance(action.choices, dict) and command in action.choices
        )
        flags = sorted(
            flag
            for action in subparser._actions
            for flag in action.option_strings
            if flag.startswith("--") and flag != "--help"
        )
        assert flags, command
        for flag in flags:
            typo = _mistyped(flag)
            if any(other.startswith(typo) for other in flags):
                continue  # an abbreviation of a flag: argparse takes it
            with pytest.raises(UsageError) as raised:
                main_error([command, typo])
            assert str(raised.value) == (
                f"codegen {command}: unrecognized argument: {typo}; did you mean {flag}?"
            )
    # A command, and a choice of a flag.
    with pytest.raises(UsageError, match=r"invalid choice: 'bulid' .*; did you mean 'build'\?"):
        main_error(["bulid"])
    with pytest.raises(UsageError, match=r"; did you mean 'python'\?"):
        main_error(["sdk", "x.json", "--lang", "pyhton"])
    # Before the missing --lang is reported, the mistyped one is.
    with pytest.raises(UsageError, match=r"unrecognized argument: --lnag; did you mean --lang\?"):
        main_error(["sdk", "x.json", "--lnag", "python"])


def main_error(argv: list[str]) -> None:
    """Parse `argv` as `main` does, raising its usage error."""
    from codegen.cli import build_parser
    from codegen.cli.arguments import _parse

    _parse(build_parser(argv), argv)


STRICT_RUNS = {
    "validate": [],
    "sdk": ["--lang", "python", "-o", "{out}/tools.py"],
    "prompt": ["--lang", "typescript", "-o", "{out}/prompt.md"],
    "catalog": ["-o", "{out}/catalog.md"],
    "build": ["-o", "{out}"],
    "diff": ["{source}", "-o", "{out}/diff.md"],
}


@pytest.mark.parametrize("command", list(STRICT_RUNS))
def test_strict_makes_warnings_fail_the_run_and_write_nothing(
    command: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = str(SCHEMAS / "degraded.json")
    out = tmp_path / "out"
    args = [a.format(out=out, source=source) for a in STRICT_RUNS[command]]
    if command != "build":
        out.mkdir()
    status, stdout, err = cli(capsys, command, source, *args, "--strict", "--quiet")
    assert status == 1
    assert "points to nothing" in stdout + err  # shown under --quiet: it fails the run
    assert "--strict: " in err and " as errors" in err
    assert not out.exists() or not any(out.iterdir())
    if command != "validate":
        assert stdout == ""
    status, _, err = cli(capsys, command, source, *args)
    assert status == 0, err
    assert any(out.iterdir()) == (command != "validate")
