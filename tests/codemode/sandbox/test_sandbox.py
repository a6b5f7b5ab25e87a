"""run_code programs are contained by the operating system, in Python and in TypeScript, one
suite: hostile programs under `auto` (and under each sandbox by name), each refused or
contained, ending with the right kind, leaving no process and no file descriptor behind.
Under each sandbox a program sees only its interpreter (Python, or Node and its libraries)
and a private /tmp; the host's environment, processes, descriptors, files and network are
out of reach.

Each check both languages share is one test, parametrized by `language` (the program, and
what its outcome must show, are that language's; TypeScript strips types with TypeScript 5
on Node 20, and every set-up of `typescript_nodes.SETUPS` must start under every sandbox).
What only one language has follows: Python's fork and `setsid` children and its interpreter
choice; and, for TypeScript, the defects fixed for the Python runtime that stay fixed on the
shared host (no leftover process after a killed host, no leaked descriptor after cancelling
at any point, a drained stderr that explains an early exit, forged messages refused).

`scripts/test` installs bubblewrap, so on CI `auto` is bubblewrap; the `namespaces` sandbox
is forced by the setting. A sandbox that cannot start here fails these tests (nothing is
skipped): the suite is meant to run where run_code does.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psutil
import pytest

from codegen.codemode.calls.cancellation import AbortController
from codegen.codemode.run_code.code_runtime import Bindings, CodeRunFailed, RunOutput
from codegen.codemode.run_code.run_limits import RuntimeLimits
from codegen.codemode.runtimes.python import PythonRuntime
from codegen.codemode.sandbox.launchers import SandboxUnavailable, launcher
from support.cancel_points import cancel_at_every_point
from support.descriptors import leaked_since, open_descriptors
from support.processes import TS_WORKER_MARK, left_processes
from support.sandbox_checks import (
    BINDINGS,
    SANDBOXES,
    SECRET,
    assert_no_process_left,
    host_secret,  # noqa: F401  (an autouse fixture: it must be in the module)
    python_for,
    staged,
    text_of,
)
from support.typescript_nodes import ROOT, SETUPS, WHEEL_NODE
from support.typescript_nodes import runtime as typescript_runtime


@dataclass(frozen=True)
class Language:
    """A language programs are run in: Python, or TypeScript with one of `SETUPS`."""

    name: str
    setup: str | None = None

    @property
    def id(self) -> str:
        return self.name if self.setup in (None, "transpile") else f"{self.name}-{self.setup}"

    def runtime(
        self, limits: RuntimeLimits | None = None, sandbox: str = "auto", **more: Any
    ) -> Any:
        limits = limits or RuntimeLimits(timeout=30)
        if self.setup is None:
            return PythonRuntime(limits, python=python_for(sandbox), sandbox=sandbox, **more)
        return typescript_runtime(self.setup, limits, sandbox=sandbox, **more)


PYTHON = Language("python")
TYPESCRIPT = Language("typescript", "transpile")
LANGUAGES = [PYTHON, TYPESCRIPT]
EVERY_SETUP = [PYTHON, *(Language("typescript", setup) for setup in SETUPS)]


def languages(slow: tuple[str, ...] = ()) -> list[Any]:
    """Both languages as parameters, marked slow for the ones in `slow`."""
    return [
        pytest.param(
            language,
            id=language.id,
            marks=[pytest.mark.slow] if language.name in slow else [],
        )
        for language in LANGUAGES
    ]


async def run_program(
    language: Language, program: str, sandbox: str, limits: RuntimeLimits | None
) -> RunOutput | CodeRunFailed:
    runtime = language.runtime(limits, sandbox, spare=False)
    try:
        return await runtime.run(program, BINDINGS, AbortController().signal)  # type: ignore[no-any-return]
    except CodeRunFailed as failure:
        return failure
    finally:
        await runtime.aclose()


def run(
    language: Language, program: str, sandbox: str = "auto", limits: RuntimeLimits | None = None
) -> Any:
    outcome = asyncio.run(run_program(language, program, sandbox, limits))
    assert_no_process_left()
    return outcome


# --- what both languages are kept from -------------------------------------------------------

STARTS = {
    "python": (
        "import os\n"
        "etc = os.listdir('/etc') if os.path.isdir('/etc') else []\n"
        "return [os.getuid(), sorted(os.listdir('/')), etc, os.getcwd()]"
    ),
    "typescript": """
const fs = await import("node:fs");
const etc = fs.existsSync("/etc") ? fs.readdirSync("/etc") : [];
return [process.getuid(), fs.readdirSync("/").sort(), etc, process.cwd(), process.pid];
""",
}


@pytest.mark.parametrize("language", EVERY_SETUP, ids=lambda language: language.id)
@pytest.mark.parametrize("sandbox", SANDBOXES)
def test_every_sandbox_starts_here(sandbox: str, language: Language) -> None:
    """As the sandbox's uid (65534), in its private /tmp, with none of the host's top
    folders but the ones the language's own programs live in (Node under /root with
    pyenv); a TypeScript worker is pid 2 of its own namespace."""
    if language.name == "python":
        chosen = PythonRuntime(python=python_for(sandbox), sandbox=sandbox)._make_launcher()
        assert chosen.mode == ("bubblewrap" if sandbox == "auto" else sandbox)
    outcome = run(language, STARTS[language.name], sandbox)
    assert isinstance(outcome, RunOutput), text_of(outcome)
    uid, top, etc, cwd, *pid = outcome.result
    assert uid == 65534 and cwd == "/tmp"
    forbidden = {"home", "var", "bin", "sbin", "srv", "opt", "boot"}
    if language.setup is not None:
        assert pid == [2]
        needed = {
            os.path.realpath(path).split("/")[1]
            for key, path in SETUPS[language.setup].items()
            if key in ("node", "typescript") and path and sandbox != "bubblewrap"
        }
        forbidden = (forbidden | {"root"}) - needed
    assert not forbidden & set(top), top
    assert set(etc) <= {"ld.so.cache"}, etc


@pytest.mark.parametrize("language", languages())
def test_a_sandbox_that_cannot_start_fails_the_run_clearly(
    language: Language, monkeypatch: pytest.MonkeyPatch
) -> None:
    from codegen.codemode.sandbox import launchers as module

    node = SETUPS["transpile"]["node"]
    monkeypatch.setenv("PATH", "/nonexistent")
    module._launcher.cache_clear()
    try:
        if language.name == "python":
            with pytest.raises(SandboxUnavailable, match="bwrap"):
                module.launcher("bubblewrap", sys.executable)
            outcome = run(language, "return 1", "bubblewrap")
        else:
            try:
                outcome = asyncio.run(
                    typescript_runtime(
                        "transpile", node=node, sandbox="bubblewrap", spare=False
                    ).run("return 1", BINDINGS, AbortController().signal)
                )
            except CodeRunFailed as failure:
                outcome = failure
    finally:
        module._launcher.cache_clear()
    assert isinstance(outcome, CodeRunFailed) and outcome.kind == "worker-exit"
    assert "apt-get install bubblewrap" in str(outcome)


def _refused(outcome: Any) -> None:
    assert isinstance(outcome, CodeRunFailed) and outcome.kind == "exception"
    assert "FileNotFoundError" in str(outcome) or "PermissionError" in str(outcome)


NO_PROGRAMS: dict[str, list[tuple[str, Callable[[Any], bool | None]]]] = {
    "python": [
        (
            "import posix\nreturn posix.system('echo escaped > /tmp/x')",
            lambda outcome: isinstance(outcome, RunOutput) and outcome.result != 0,
        ),
        (
            "import posix\nposix.posix_spawn('/bin/sh', ['sh', '-c', 'true'], {})\n",
            lambda outcome: _refused(outcome) or True,
        ),
    ],
    "typescript": [
        (
            """
const fs = await import("node:fs");
return ["/bin/sh", "/usr/bin/env", "/usr/bin/python3"].filter((path) => fs.existsSync(path));
""",
            lambda outcome: isinstance(outcome, RunOutput) and outcome.result == [],
        ),
    ],
}


@pytest.mark.parametrize("language", languages())
@pytest.mark.parametrize("sandbox", SANDBOXES)
def test_no_shell_and_no_programs(sandbox: str, language: Language) -> None:
    """Python: `system` fails and `posix_spawn` of a shell is refused; TypeScript: no shell,
    `env` or Python is there to start."""
    for program, contained in NO_PROGRAMS[language.name]:
        outcome = run(language, program, sandbox)
        assert contained(outcome), text_of(outcome)


def environments_program(language: Language) -> str:
    """Every process's environment the program can read, its host's and its parent's
    too, the pids it sees, and its own environment."""
    if language.name == "python":
        return (
            "import os\n"
            "seen = []\n"
            "for pid in os.listdir('/proc'):\n"
            "    if pid.isdigit():\n"
            "        try:\n"
            "            seen.append(open(f'/proc/{pid}/environ', 'rb').read().decode('latin-1'))\n"
            "        except OSError as error:\n"
            "            seen.append(str(error))\n"
            f"for pid in ({os.getpid()}, os.getppid()):\n"
            "    try:\n"
            "        seen.append(open(f'/proc/{pid}/environ', 'rb').read().decode('latin-1'))\n"
            "    except OSError as error:\n"
            "        seen.append(str(error))\n"
            "pids = sorted(int(p) for p in os.listdir('/proc') if p.isdigit())\n"
            "return [seen, pids, dict(os.environ)]\n"
        )
    return f"""
const fs = await import("node:fs");
const seen: string[] = [];
const pids = fs.readdirSync("/proc").filter((name) => /^[0-9]+$/.test(name)).map(Number);
for (const pid of [...pids, {os.getpid()}, process.ppid]) {{
  try {{
    seen.push(fs.readFileSync(`/proc/${{pid}}/environ`, "latin1"));
  }} catch (error) {{
    seen.push(String(error));
  }}
}}
return [seen, pids.sort((a, b) => a - b), {{ ...process.env }}];
"""


@pytest.mark.parametrize("language", languages())
@pytest.mark.parametrize("sandbox", SANDBOXES)
def test_host_environment_and_processes_are_unreachable(sandbox: str, language: Language) -> None:
    outcome = run(language, environments_program(language), sandbox)
    assert isinstance(outcome, RunOutput), text_of(outcome)
    assert SECRET not in text_of(outcome)
    _, pids, environment = outcome.result
    assert max(pids) < 10, pids  # only the sandbox's own processes
    assert "CODEGEN_HOST_SECRET" not in environment


def descriptors_program(language: Language) -> str:
    """The host's descriptors (through its /proc) the program could open for writing."""
    host = os.getpid()
    if language.name == "python":
        return (
            "opened = []\n"
            "for fd in range(64):\n"
            "    try:\n"
            f"        open(f'/proc/{host}/fd/{{fd}}', 'wb').close()\n"
            "        opened.append(fd)\n"
            "    except OSError:\n"
            "        pass\n"
            "return opened\n"
        )
    return f"""
const fs = await import("node:fs");
const opened: number[] = [];
for (let fd = 0; fd < 64; fd++) {{
  try {{
    fs.closeSync(fs.openSync(`/proc/{host}/fd/${{fd}}`, "w"));
    opened.push(fd);
  }} catch {{}}
}}
return opened;
"""


@pytest.mark.parametrize("language", languages())
@pytest.mark.parametrize("sandbox", SANDBOXES)
def test_host_file_descriptors_are_unreachable(sandbox: str, language: Language) -> None:
    outcome = run(language, descriptors_program(language), sandbox)
    assert isinstance(outcome, RunOutput) and outcome.result == [], text_of(outcome)


def connect_program(language: Language, port: int) -> str:
    if language.name == "python":
        return (
            "import socket\n"
            "try:\n"
            f"    socket.create_connection(('127.0.0.1', {port}), timeout=3)\n"
            "    return 'connected'\n"
            "except OSError as error:\n"
            "    return type(error).__name__\n"
        )
    return f"""
const net = await import("node:net");
return await new Promise((resolve) => {{
  const socket = net.connect({port}, "127.0.0.1", () => resolve("connected"));
  socket.on("error", (error: any) => resolve(error.code));
  setTimeout(() => resolve("timed out"), 3000);
}});
"""


@pytest.mark.parametrize("language", languages(slow=("typescript",)))
@pytest.mark.parametrize("sandbox", SANDBOXES)
def test_no_network_to_the_host(sandbox: str, language: Language) -> None:
    listener = socket.create_server(("127.0.0.1", 0))
    listener.settimeout(0.5)
    port = listener.getsockname()[1]
    try:
        outcome = run(language, connect_program(language, port), sandbox)
        with pytest.raises(TimeoutError):
            listener.accept()
    finally:
        listener.close()
    assert isinstance(outcome, RunOutput) and outcome.result != "connected", text_of(outcome)


def files_program(language: Language, targets: list[str], secret: str) -> str:
    """Write each of `targets`, read `secret`, write and read back a file in /tmp: what
    happened to each, by path, and `read` and `tmp`."""
    if language.name == "python":
        return (
            "results = {}\n"
            f"for path in ({', '.join(repr(t) for t in targets)}):\n"
            "    try:\n"
            "        with open(path, 'w') as file:\n"
            "            file.write('escaped')\n"
            "        results[path] = 'written'\n"
            "    except OSError as error:\n"
            "        results[path] = type(error).__name__\n"
            "try:\n"
            f"    results['read'] = open({secret!r}).read()\n"
            "except OSError as error:\n"
            "    results['read'] = type(error).__name__\n"
            "open('/tmp/scratch', 'w').write('ok')\n"
            "results['tmp'] = open('/tmp/scratch').read()\n"
            "return results\n"
        )
    return f"""
const fs = await import("node:fs");
const results: Record<string, string> = {{}};
for (const path of [{", ".join(json.dumps(t) for t in targets)}]) {{
  try {{
    fs.writeFileSync(path, "escaped");
    results[path] = "written";
  }} catch (error: any) {{
    results[path] = error.code;
  }}
}}
try {{
  results.read = fs.readFileSync({json.dumps(secret)}, "utf8");
}} catch (error: any) {{
  results.read = error.code;
}}
fs.writeFileSync("/tmp/scratch", "ok");
results.tmp = fs.readFileSync("/tmp/scratch", "utf8");
return results;
"""


@pytest.mark.parametrize("language", languages())
@pytest.mark.parametrize("sandbox", SANDBOXES)
def test_host_files_are_out_of_reach(sandbox: str, language: Language, tmp_path: Path) -> None:
    """Not the test's folder, not the language's own library folder (the standard library;
    the `typescript` package), not /usr/lib, not the root; the host's secret file is not
    read; the private /tmp is writable."""
    secret_file = tmp_path / "secret.txt"
    secret_file.write_text(SECRET)
    target = tmp_path / "written.txt"
    if language.name == "python":
        library = Path(os.__file__).parent / "codegen-sandbox-write-test"
        others = ["/usr/lib/codegen-test", "/x"]
    else:
        library = ROOT / "node_modules" / "typescript" / "codegen-sandbox-write-test"
        others = ["/usr/lib/x", "/x"]
    program = files_program(language, [str(target), str(library), *others], str(secret_file))
    outcome = run(language, program, sandbox)
    assert isinstance(outcome, RunOutput), text_of(outcome)
    results = outcome.result
    assert results.pop("tmp") == "ok"  # the private working directory is writable
    assert "written" not in results.values() and SECRET not in text_of(outcome), results
    assert not target.exists() and not library.exists()


BIG_FILE = {
    "python": (
        "data = b'x' * (1 << 20)\n"
        "with open('/tmp/big', 'wb') as file:\n"
        "    for _ in range(200):\n"
        "        file.write(data)\n"
        "return 'wrote 200 MB'\n"
    ),
    "typescript": """
const fs = await import("node:fs");
const block = Buffer.alloc(1 << 20, 120);
const fd = fs.openSync("/tmp/big", "w");
for (let i = 0; i < 200; i++) fs.writeSync(fd, block);
return "wrote 200 MB";
""",
}


@pytest.mark.parametrize("language", languages())
@pytest.mark.parametrize("sandbox", SANDBOXES)
def test_file_size_is_limited(sandbox: str, language: Language) -> None:
    outcome = run(language, BIG_FILE[language.name], sandbox)
    assert isinstance(outcome, CodeRunFailed), text_of(outcome)
    assert outcome.kind in ("exception", "worker-exit"), text_of(outcome)


SEQUENTIAL = {
    "python": (PYTHON, 100, False),
    "typescript": (Language("typescript", "strip"), 60, True),
}
"""Per language: the runtime, how many runs (enough to see a leak that one run in 50 makes
twice over), and whether a first run (and a close) comes
before the descriptors are counted (Node's first start opens what it keeps)."""


@pytest.mark.slow
@pytest.mark.parametrize("language", languages())
def test_many_runs_leave_no_descriptor_and_no_process(language: Language) -> None:
    runs_with, count, warm = SEQUENTIAL[language.name]

    async def many() -> list[Any]:
        runtime = runs_with.runtime(RuntimeLimits(timeout=30))
        try:
            if warm:
                await runtime.run("return 0", BINDINGS, AbortController().signal)
                await runtime.aclose()
            before = open_descriptors()
            outcomes = []
            for index in range(count):
                try:
                    outcomes.append(
                        await runtime.run(f"return {index}", BINDINGS, AbortController().signal)
                    )
                except CodeRunFailed as failure:
                    outcomes.append(failure)
            await runtime.aclose()
            assert not leaked_since(before)
            return outcomes
        finally:
            await runtime.aclose()

    outcomes = asyncio.run(many())
    assert [o.result for o in outcomes if isinstance(o, RunOutput)] == list(range(count))
    assert_no_process_left()


CONCURRENT = {
    "python": (PYTHON, 50, "r = await tools.echo({'x': 1})\nreturn r['args']['x']"),
    "typescript": (
        Language("typescript", "strip"),
        12,
        "const r = await tools.echo({ x: 1 });\nreturn r.args.x;",
    ),
}
"""Per language: the runtime, how many runs at once, and the program each runs."""


@pytest.mark.parametrize("language", languages(slow=("python",)))
def test_concurrent_sandboxed_runs(language: Language) -> None:
    runs_with, count, program = CONCURRENT[language.name]

    async def together() -> list[Any]:
        runtime = runs_with.runtime(RuntimeLimits(timeout=120))
        before = open_descriptors()
        try:
            outcomes = await asyncio.gather(
                *(runtime.run(program, BINDINGS, AbortController().signal) for _ in range(count)),
                return_exceptions=True,
            )
        finally:
            await runtime.aclose()
        assert not leaked_since(before)
        return outcomes

    outcomes = asyncio.run(together())
    failures = [o for o in outcomes if not isinstance(o, RunOutput)]
    assert not failures, failures[:3]
    assert all(o.result == 1 for o in outcomes)
    assert_no_process_left()


# --- Python alone ----------------------------------------------------------------------------


def test_auto_is_bubblewrap_and_never_falls_back_to_a_home_made_sandbox(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Without bubblewrap, `auto` fails and says how to choose: it never takes the
    `namespaces` sandbox on its own, though that one works here."""
    from codegen.codemode.sandbox import launchers as module

    assert launcher("namespaces", sys.executable).mode == "namespaces"
    monkeypatch.setenv("PATH", "/nonexistent")
    module._launcher.cache_clear()
    try:
        with pytest.raises(SandboxUnavailable) as raised:
            launcher("auto", sys.executable)
        message = str(raised.value)
        assert "`bwrap` is not installed" in message and "apt-get install bubblewrap" in message
        assert "--sandbox namespaces" in message and "namespaces:" not in message
        outcome = run(PYTHON, "return 1", "auto")
        assert isinstance(outcome, CodeRunFailed) and outcome.kind == "worker-exit"
    finally:
        module._launcher.cache_clear()


@pytest.mark.parametrize(
    ("root", "closed", "versions", "expected"),
    [
        (True, True, ((3, 11), (3, 11)), "twin"),
        (True, True, ((3, 11), (3, 12)), None),  # another version: another language
        (True, False, ((3, 11), (3, 11)), None),  # reachable: kept
        (False, True, ((3, 11), (3, 11)), None),  # bwrap runs as the host's own uid
    ],
)
def test_a_same_version_twin_stands_in_for_an_interpreter_the_sandbox_cannot_reach(
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    root: bool,
    closed: bool,
    versions: tuple[tuple[int, int], tuple[int, int]],
    expected: str | None,
) -> None:
    from codegen.codemode.sandbox import launchers as module

    own = "/root/.pyenv/versions/3.11.7/bin/python3.11"
    twin = tmp_path / "python3.11"
    twin.write_text("")
    twin.chmod(0o755)
    monkeypatch.setattr(module, "INTERPRETER_DIRS", (str(tmp_path / "none"), str(tmp_path)))
    monkeypatch.setattr(module, "host_is_root", lambda: root)
    monkeypatch.setattr(
        module, "_unreachable_image", lambda python: "/root" if closed and python == own else None
    )
    monkeypatch.setattr(module, "_version", lambda python: versions[python != own])
    assert module.reachable_twin(own) == (str(twin) if expected else None)


@pytest.mark.slow
@pytest.mark.parametrize("sandbox", SANDBOXES)
def test_fork_loop_is_bounded_and_cleaned_up(sandbox: str) -> None:
    program = (
        "import posix, time\n"
        "forked = 0\n"
        "try:\n"
        "    for _ in range(300):\n"
        "        if posix.fork() == 0:\n"
        "            time.sleep(60)\n"
        "            posix._exit(0)\n"
        "        forked += 1\n"
        "except OSError as error:\n"
        "    return ['refused', forked, error.errno]\n"
        "return ['all', forked]\n"
    )
    outcome = run(PYTHON, program, sandbox)
    assert isinstance(outcome, RunOutput), text_of(outcome)
    assert outcome.result[0] == "refused" and outcome.result[1] < RuntimeLimits().processes, (
        outcome.result
    )


@pytest.mark.parametrize("sandbox", SANDBOXES)
def test_a_setsid_child_dies_with_the_run(sandbox: str) -> None:
    program = (
        "import os, posix, time\n"
        "if posix.fork() == 0:\n"
        "    os.setsid()\n"
        "    time.sleep(120)\n"
        "    posix._exit(0)\n"
        "return 'parent done'\n"
    )
    outcome = run(PYTHON, program, sandbox)  # `run` requires that no process is left
    assert isinstance(outcome, RunOutput) and outcome.result == "parent done"


# --- TypeScript alone: defects of the shared host, checked with the TypeScript worker -------


def test_the_stderr_tail_explains_a_worker_exit_after_a_flood() -> None:
    program = (
        "const fs = await import('node:fs');\nfs.writeSync(2, 'x'.repeat(3_000_000));"
        "\nfs.writeSync(2, '\\nlast words\\n');\nprocess.exit(3);"
    )
    outcome = run(TYPESCRIPT, program, "none")
    assert isinstance(outcome, CodeRunFailed) and outcome.kind == "worker-exit", text_of(outcome)
    assert "exited with code 3" in outcome.message and "last words" in outcome.message
    assert len(outcome.message) < 2000, "only a tail of stderr is kept"


@pytest.mark.parametrize(
    "line",
    [
        '{"type": "done", "result": NaN}',
        '{"type": "call", "id": 10000, "name": "echo", "args": ' + "[" * 300 + "]" * 300 + "}",
        '{"type": "log", "text": "\\ud800"}',
        '{"type": "call", "id": 1, "name": "echo", "args": {}}',  # the id of a pending call
    ],
    ids=["NaN", "too deep", "lone surrogate", "reused id"],
)
def test_forged_messages_are_invalid_output(line: str) -> None:
    program = (
        "tools.echo({});\nconst fs = await import('node:fs');"
        f"\nfs.writeSync(Number(process.argv[3]), {json.dumps(line + chr(10))});"
        "\nawait new Promise((resolve) => setTimeout(resolve, 3000));\nreturn 'survived';"
    )

    async def slow(name: str, arguments: Any) -> Any:
        await asyncio.sleep(10)

    async def attempt() -> Any:
        mounted = typescript_runtime(
            "strip", RuntimeLimits(timeout=30), sandbox="none", spare=False
        )
        try:
            return await mounted.run(program, Bindings(("echo",), slow), AbortController().signal)
        except CodeRunFailed as failure:
            return failure
        finally:
            await mounted.aclose()

    outcome = asyncio.run(attempt())
    assert isinstance(outcome, CodeRunFailed) and outcome.kind == "invalid-output", text_of(outcome)
    assert_no_process_left()


def test_the_worker_holds_exactly_its_channel_and_standard_descriptors() -> None:
    program = """
const fs = await import("node:fs");
const seen: Record<string, string> = {};
for (const fd of fs.readdirSync("/proc/self/fd")) {
  try {
    seen[fd] = fs.readlinkSync(`/proc/self/fd/${fd}`);
  } catch {}
}
return { fds: seen, channel: [Number(process.argv[2]), Number(process.argv[3])] };
"""
    outcome = run(TYPESCRIPT, program, "none")
    assert isinstance(outcome, RunOutput), text_of(outcome)
    fds = {int(fd): target for fd, target in outcome.result["fds"].items()}
    pipes = {fd for fd, target in fds.items() if target.startswith("pipe:")}
    channel = set(outcome.result["channel"])
    # Node's own event loop adds pipes, eventfds and epoll; none of them is the host's
    assert {2, *channel} <= pipes, fds
    assert fds[0] == fds[1] == "/dev/null"
    host = {
        os.readlink(f"/proc/self/fd/{fd}")
        for fd in os.listdir("/proc/self/fd")
        if os.path.exists(f"/proc/self/fd/{fd}")
    }
    ours = (0, 1, 2, *channel)
    leaked = {fd: t for fd, t in fds.items() if t in host - {"/dev/null"} and fd not in ours}
    assert not leaked, leaked


HOST = """
import asyncio, sys
from codegen.codemode.run_code.run_limits import RuntimeLimits
from codegen.codemode.run_code.code_runtime import Bindings
from codegen.codemode.calls.cancellation import AbortController
from codegen.codemode.runtimes.typescript import TypeScriptRuntime

async def main():
    runtime = TypeScriptRuntime(
        RuntimeLimits(timeout=600), node=sys.argv[1], stripper="node", sandbox=sys.argv[2]
    )

    async def call(name, args):
        print("running", flush=True)
        return None

    program = sys.argv[3]
    await runtime.run(program, Bindings(("ready",), call), AbortController().signal)

asyncio.run(main())
"""


@pytest.mark.slow
@pytest.mark.parametrize("sandbox", ["none", "auto"])
@pytest.mark.parametrize(
    "program",
    [
        "await tools.ready({});\nAtomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0);",
        "await tools.ready({});\nwhile (true) {}",
    ],
    ids=["blocked", "busy"],
)
def test_a_killed_host_leaves_no_worker(sandbox: str, program: str) -> None:
    host = subprocess.Popen(
        [sys.executable, "-c", HOST, staged(SETUPS["strip"]["node"]), sandbox, program],
        stdout=subprocess.PIPE,
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    try:
        assert host.stdout is not None
        assert host.stdout.readline() == b"running\n"
        workers = left_processes((TS_WORKER_MARK,))
        assert workers, "the worker runs its program"
        host.send_signal(signal.SIGKILL)
        host.wait(30)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and any(p.is_running() for p in workers):
            psutil.wait_procs(workers, timeout=0.2)
        alive = [p for p in workers if p.is_running() and p.status() != psutil.STATUS_ZOMBIE]
        assert not alive, f"workers outlived their host: {alive}"
    finally:
        host.kill()
        host.wait(30)
        for process in left_processes((TS_WORKER_MARK,)):
            with contextlib.suppress(psutil.Error):
                process.kill()


@pytest.mark.slow
def test_cancelling_runs_at_any_point_leaks_nothing(caplog: pytest.LogCaptureFixture) -> None:
    mounted = typescript_runtime("strip", RuntimeLimits(timeout=30))
    problems: list[dict[str, Any]] = []

    async def scenario() -> tuple[dict[str, str], list[int]]:
        asyncio.get_running_loop().set_exception_handler(
            lambda _, context: problems.append(context)
        )
        program = "await new Promise(() => {})"
        return await cancel_at_every_point(mounted, BINDINGS, program, 80, 0.0005)

    gc.collect()
    with caplog.at_level("ERROR", logger="asyncio"):
        before, timed_out = asyncio.run(scenario())
        gc.collect()
    leaked = leaked_since(before)
    assert not leaked, leaked
    assert timed_out == [], "cancelled runs went on until their timeout"
    assert_no_process_left()
    messages = [str(p.get("message")) for p in problems] + [r.getMessage() for r in caplog.records]
    assert messages == []


@pytest.mark.parametrize("sandbox", ("bubblewrap", "namespaces"))
def test_a_node_under_the_hosts_tmp_runs_sandboxed(sandbox: str) -> None:
    """The sandbox mounts a private `/tmp`; a Node (or checkout, or virtual environment)
    that lives under the host's `/tmp` is still bound into it, not hidden by it."""
    # a folder of its own right under /tmp: the sandbox's uid on a root host must reach it
    folder = Path(tempfile.mkdtemp(prefix="codegen-node-", dir="/tmp"))
    os.chmod(folder, 0o755)
    node = folder / "node"
    try:
        os.link(WHEEL_NODE, node)  # a hard link: a real file under /tmp, no 100 MB copy
    except OSError:
        shutil.copy2(WHEEL_NODE, node)
    mounted = typescript_runtime(
        "strip", RuntimeLimits(timeout=30), node=str(node), sandbox=sandbox
    )

    async def scenario() -> RunOutput | CodeRunFailed:
        try:
            return await mounted.run("return process.cwd()", BINDINGS, AbortController().signal)
        except CodeRunFailed as failure:
            return failure
        finally:
            await mounted.aclose()

    try:
        outcome = asyncio.run(scenario())
    finally:
        shutil.rmtree(folder)
    assert isinstance(outcome, RunOutput), text_of(outcome)
    assert outcome.result == "/tmp"
