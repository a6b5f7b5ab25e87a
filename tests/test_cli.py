"""The command line: output format, exit codes, and never a traceback."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from codegen.cli import main
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
    assert result.stderr.strip().endswith("errors, 7 warnings") or "0 errors" in result.stderr


def test_quiet_prints_errors_only(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["validate", "--quiet", str(SCHEMAS / "degraded.json")]) == 0
    out, err = capsys.readouterr()
    assert out == "" and "6 warnings" in err


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
    import codegen.pipeline

    def explode(*args: Any, **kwargs: Any) -> None:
        raise RuntimeError("boom")

    monkeypatch.setattr(codegen.pipeline, "compile_sources", explode)
    assert main(["validate", str(SCHEMAS / "empty.json")]) == 2
    err = capsys.readouterr().err
    assert "internal error: RuntimeError: boom" in err and "report" in err
    assert "Traceback" not in err


def test_help_documents_exit_codes() -> None:
    result = run_cli("--help")
    assert result.returncode == 0
    text = result.stdout.decode()
    assert "exit status" in text and "2  bad usage" in text
