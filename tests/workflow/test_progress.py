"""Progress of a long run: drawn on stderr when it is a terminal (a pseudo-terminal here),
never when it is piped, never for a small input, never under `--quiet`; the bytes a command
writes are the same either way. In shares, only the parent reports, and it counts the
children's blocks from their results files."""

from __future__ import annotations

import json
import os
import pty
import select
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

import pytest

from codegen._support import progress
from codegen.incremental import shares
from codegen.workflow.progress import LONG_RUN, Progress
from conftest import ROOT

ERASE = "\r\x1b[K"


def write_tools(path: Path, count: int) -> Path:
    tools = [
        {
            "name": f"tool_{index:05d}",
            "description": f"Tool number {index}.",
            "inputSchema": {
                "type": "object",
                "properties": {"path": {"type": "string"}, "depth": {"type": "integer"}},
                "required": ["path"],
            },
        }
        for index in range(count)
    ]
    path.write_text(json.dumps({"tools": tools}))
    return path


def run(args: Sequence[str], *, terminal: bool, cwd: Path) -> tuple[int, bytes, str]:
    """`python -m codegen ARGS`: stdout piped, stderr a pseudo-terminal or a pipe."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "200"}
    command = [sys.executable, "-m", "codegen", *args]
    if not terminal:
        done = subprocess.run(command, capture_output=True, cwd=cwd, env=env, timeout=600)
        return done.returncode, done.stdout, done.stderr.decode()
    controller, device = pty.openpty()
    with subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=device, cwd=cwd, env=env
    ) as process:
        os.close(device)
        assert process.stdout is not None
        out, err = bytearray(), bytearray()
        streams = {process.stdout.fileno(): out, controller: err}
        while streams:
            ready, _, _ = select.select(list(streams), [], [], 600)
            assert ready, "codegen did not finish"
            for fd in ready:
                try:
                    chunk = os.read(fd, 1 << 16)
                except OSError:  # the terminal's last writer closed it
                    chunk = b""
                if chunk:
                    streams[fd].extend(chunk)
                else:
                    del streams[fd]
        status = process.wait()
    os.close(controller)
    return status, bytes(out), err.decode().replace("\r\n", "\n")


COMMANDS = [
    ("sdk", "--lang", "python"),
    ("sdk", "--lang", "typescript", "--jobs", "2"),
    ("sdk", "--lang", "python", "--jobs", "1"),
    ("validate",),
    ("catalog", "--format", "json"),
    ("prompt", "--lang", "python"),
]


@pytest.mark.parametrize("command", COMMANDS, ids=[" ".join(c) for c in COMMANDS])
def test_a_long_run_shows_progress_on_a_terminal_and_nothing_when_piped(
    command: tuple[str, ...], tmp_path: Path
) -> None:
    source = write_tools(tmp_path / "tools.json", LONG_RUN + 200)
    args = [command[0], str(source), *command[1:]]
    status, shown_out, shown_err = run(args, terminal=True, cwd=tmp_path)
    assert status == 0, shown_err
    assert ERASE in shown_err
    assert f"of {LONG_RUN + 200:,}" in shown_err
    assert "(100%)" in shown_err
    status, piped_out, piped_err = run(args, terminal=False, cwd=tmp_path)
    assert status == 0, piped_err
    assert "\r" not in piped_err and "\x1b" not in piped_err
    assert shown_out == piped_out
    # The progress line is erased before anything else is printed: what is left once the
    # line's drawings (the pieces without a line break) are taken out is the piped stderr.
    assert "".join(piece for piece in shown_err.split(ERASE) if "\n" in piece) == piped_err


def test_a_small_run_and_quiet_show_nothing_on_a_terminal(tmp_path: Path) -> None:
    small = write_tools(tmp_path / "small.json", 50)
    status, _, err = run(["sdk", str(small), "--lang", "python"], terminal=True, cwd=tmp_path)
    assert (status, err) == (0, "")
    large = write_tools(tmp_path / "large.json", LONG_RUN)
    for flags in (["--quiet"], ["--no-progress"]):
        status, _, err = run(
            ["sdk", str(large), "--lang", "python", *flags], terminal=True, cwd=tmp_path
        )
        assert (status, err) == (0, ""), flags
    # --progress draws when stderr is no terminal, and --quiet does not overrule it.
    status, _, err = run(
        ["validate", str(large), "--quiet", "--progress"], terminal=False, cwd=tmp_path
    )
    assert status == 0 and ERASE in err and f"of {LONG_RUN:,}" in err


def test_build_and_diff_show_their_steps(tmp_path: Path) -> None:
    source = write_tools(tmp_path / "tools.json", LONG_RUN)
    status, _, err = run(["build", str(source), "-o", "out"], terminal=True, cwd=tmp_path)
    assert status == 0, err
    assert "tools.py (1/7): rendering python: " in err
    assert "wrote out/tools.py\n" in err.replace(ERASE, "")
    status, _, err = run(
        ["diff", str(source), str(source), "--format", "json"], terminal=True, cwd=tmp_path
    )
    assert status == 0, err
    assert f"new ({source}): checking tools: " in err
    assert f"comparing tools: {LONG_RUN:,} of {LONG_RUN:,} (100%)" in err


# --- the reporter: counted in the parent only ---------------------------------------------


class Recorder:
    """A reporter that appends the pid of each call to a file, so a call from any process
    (a forked child shares the file) would be seen."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.file = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND)

    def begin(self, label: str, total: int) -> None:
        pass

    def advance(self, count: int) -> None:
        os.write(self.file, f"{os.getpid()} {count}\n".encode())

    def clear(self) -> None:
        pass

    def calls(self) -> list[tuple[int, int]]:
        os.close(self.file)
        lines = self.path.read_text().splitlines()
        return [(int(pid), int(count)) for pid, count in map(str.split, lines)]


def counted_work(items: Sequence[int]) -> list[int]:
    """Work that reports as the pipeline's stages do, wherever it runs."""
    for _ in items:
        progress.advance()
    return [2 * item for item in items]


@pytest.mark.parametrize("processes", [1, 2, 3])
def test_only_the_parent_reports(processes: int, tmp_path: Path) -> None:
    """A forked child's work reports nothing (it is detached); the parent counts it."""
    recorder = Recorder(tmp_path / "calls")
    items = list(range(3_000))
    with progress.reporting(recorder):
        results = shares.map_in_shares(counted_work, items, processes)
    assert results == [2 * item for item in items]
    calls = recorder.calls()
    assert {pid for pid, _ in calls} == {os.getpid()}
    # Without a reporter the work is the same and nothing is counted.
    assert shares.map_in_shares(counted_work, items, processes) == results


@pytest.mark.parametrize("processes", [1, 2, 3])
def test_every_item_is_counted_once(processes: int, tmp_path: Path) -> None:
    """The parent's blocks as it finishes them, each child's from its results file."""
    recorder = Recorder(tmp_path / "calls")
    items = list(range(2_000))
    with progress.reporting(recorder):
        shares.map_in_shares(shares_doubled, items, processes)
    assert sum(count for _, count in recorder.calls()) == len(items)


def shares_doubled(items: Sequence[int]) -> list[int]:
    return [2 * item for item in items]


def test_the_line_is_drawn_only_for_a_long_run() -> None:
    class Terminal:
        def __init__(self) -> None:
            self.text = ""

        def write(self, text: str) -> int:
            self.text += text
            return len(text)

        def flush(self) -> None:
            pass

        def isatty(self) -> bool:
            return True

    terminal = Terminal()
    line = Progress(terminal, interval=0)  # type: ignore[arg-type]
    line.begin("reading files", 3)
    line.advance(3)
    assert terminal.text == ""
    line.begin("checking tools", LONG_RUN)
    line.advance(LONG_RUN // 2)
    line.begin("assembling the SDK", 0)
    line.phase("tools.py (1/2)")
    line.begin("rendering python", 10)
    line.advance(10)
    line.clear()
    assert terminal.text.split(ERASE) == [
        "",
        f"checking tools: 0 of {LONG_RUN:,} (0%)",
        f"checking tools: {LONG_RUN // 2:,} of {LONG_RUN:,} (50%)",
        "assembling the SDK",
        "tools.py (1/2)",
        "tools.py (1/2): rendering python: 0 of 10 (0%)",
        "tools.py (1/2): rendering python: 10 of 10 (100%)",
        "",
    ]


def test_harvest_shows_each_server_started_listed_or_failed(tmp_path: Path) -> None:
    """A harvest is long by nature (servers start): on a terminal its line always shows
    how many servers are done and what the latest one did."""
    fixtures = ROOT / "tests" / "fixtures" / "mcp"
    servers = {
        "weather": {"command": sys.executable, "args": [str(fixtures / "mcpserver_tools.py")]},
        "paged": {"command": sys.executable, "args": [str(fixtures / "paged_server.py")]},
        "broken": {"command": "codegen-no-such-server"},
    }
    config = tmp_path / "servers.json"
    config.write_text(json.dumps({"mcpServers": servers}))
    args = ["harvest", "--config", str(config), "-o", "out", "--timeout", "120"]
    status, _, err = run(args, terminal=True, cwd=tmp_path)
    assert status == 1, err
    drawn = err.split(ERASE)
    assert any(line.endswith(' · "weather": starting') for line in drawn)
    assert any(line.endswith(' · "paged": waiting for the handshake') for line in drawn)
    assert any('servers done, 1 failed · "weather": listed 3 tools' in line for line in drawn)
    assert any('"broken": failed: cannot run' in line for line in drawn)
    assert any(line.startswith("3 of 3 servers done, 1 failed · ") for line in drawn)
    status, _, piped = run(args, terminal=False, cwd=tmp_path)
    assert status == 1 and "\r" not in piped and "servers done" not in piped
    printed = "".join(piece for piece in drawn if "\n" in piece)
    assert printed.replace("wrote out/", "unchanged out/") == piped  # the second harvest
