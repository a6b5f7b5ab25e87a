"""run_code programs are contained by the operating system: hostile programs under `auto`
(and under each sandbox by name), each refused or contained, ending with the right kind,
leaving no process and no file descriptor behind.

`scripts/test` installs bubblewrap, so on CI `auto` is bubblewrap; the `namespaces` sandbox
is forced by the setting. A sandbox that cannot start here fails these tests (nothing is
skipped): the suite is meant to run where run_code does.
"""

from __future__ import annotations

import asyncio
import os
import socket
import sys
from pathlib import Path
from typing import Any

import pytest
from sandbox_checks import (
    BINDINGS,
    SANDBOXES,
    SECRET,
    assert_no_process_left,
    host_secret,  # noqa: F401  (an autouse fixture: it must be in the module)
    python_for,
    text_of,
)

from codegen.codemode.calls.cancellation import AbortController
from codegen.codemode.run_code.code_runtime import CodeRunFailed, RunOutput
from codegen.codemode.runtimes.python import PythonRuntime, RuntimeLimits
from codegen.codemode.sandbox.launchers import SandboxUnavailable, launcher


async def run_program(
    program: str, sandbox: str = "auto", limits: RuntimeLimits | None = None
) -> RunOutput | CodeRunFailed:
    runtime = PythonRuntime(
        limits or RuntimeLimits(timeout=30),
        python=python_for(sandbox),
        sandbox=sandbox,
        spare=False,
    )
    try:
        return await runtime.run(program, BINDINGS, AbortController().signal)
    except CodeRunFailed as failure:
        return failure
    finally:
        await runtime.aclose()


def run(program: str, sandbox: str = "auto", limits: RuntimeLimits | None = None) -> Any:
    outcome = asyncio.run(run_program(program, sandbox, limits))
    assert_no_process_left()
    return outcome


@pytest.mark.parametrize("sandbox", SANDBOXES)
def test_every_sandbox_starts_here(sandbox: str) -> None:
    chosen = PythonRuntime(python=python_for(sandbox), sandbox=sandbox)._make_launcher()
    assert chosen.mode == ("bubblewrap" if sandbox == "auto" else sandbox)
    program = (
        "import os\n"
        "etc = os.listdir('/etc') if os.path.isdir('/etc') else []\n"
        "return [os.getuid(), sorted(os.listdir('/')), etc, os.getcwd()]"
    )
    outcome = run(program, sandbox)
    assert isinstance(outcome, RunOutput), text_of(outcome)
    uid, top, etc, cwd = outcome.result
    assert uid == 65534 and cwd == "/tmp"
    assert not {"home", "var", "bin", "sbin", "srv", "opt", "boot"} & set(top), top
    assert set(etc) <= {"ld.so.cache"}, etc


def test_a_sandbox_that_cannot_start_fails_the_run_clearly(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", "/nonexistent")
    from codegen.codemode.sandbox import launchers as module

    module._launcher.cache_clear()
    try:
        with pytest.raises(SandboxUnavailable, match="bwrap"):
            module.launcher("bubblewrap", sys.executable)
        outcome = run("return 1", "bubblewrap")
        assert isinstance(outcome, CodeRunFailed) and outcome.kind == "worker-exit"
        assert "apt-get install bubblewrap" in str(outcome)
    finally:
        module._launcher.cache_clear()


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
        outcome = run("return 1", "auto")
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
    outcome = run(program, sandbox)
    assert isinstance(outcome, RunOutput), text_of(outcome)
    assert outcome.result[0] == "refused" and outcome.result[1] < RuntimeLimits().processes, (
        outcome.result
    )


@pytest.mark.parametrize("sandbox", SANDBOXES)
def test_no_shell_and_no_programs(sandbox: str) -> None:
    outcome = run("import posix\nreturn posix.system('echo escaped > /tmp/x')", sandbox)
    assert isinstance(outcome, RunOutput) and outcome.result != 0, text_of(outcome)
    spawn = "import posix\nposix.posix_spawn('/bin/sh', ['sh', '-c', 'true'], {})\n"
    outcome = run(spawn, sandbox)
    assert isinstance(outcome, CodeRunFailed) and outcome.kind == "exception"
    assert "FileNotFoundError" in str(outcome) or "PermissionError" in str(outcome)


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
    outcome = run(program, sandbox)  # `run` requires that no process is left
    assert isinstance(outcome, RunOutput) and outcome.result == "parent done"


@pytest.mark.parametrize("sandbox", SANDBOXES)
def test_host_environment_and_processes_are_unreachable(sandbox: str) -> None:
    program = (
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
    outcome = run(program, sandbox)
    assert isinstance(outcome, RunOutput), text_of(outcome)
    assert SECRET not in text_of(outcome)
    _, pids, environment = outcome.result
    assert max(pids) < 10, pids  # only the sandbox's own processes
    assert "CODEGEN_HOST_SECRET" not in environment


@pytest.mark.parametrize("sandbox", SANDBOXES)
def test_host_file_descriptors_are_unreachable(sandbox: str) -> None:
    host = os.getpid()
    program = (
        "opened = []\n"
        "for fd in range(64):\n"
        "    try:\n"
        f"        open(f'/proc/{host}/fd/{{fd}}', 'wb').close()\n"
        "        opened.append(fd)\n"
        "    except OSError:\n"
        "        pass\n"
        "return opened\n"
    )
    outcome = run(program, sandbox)
    assert isinstance(outcome, RunOutput) and outcome.result == [], text_of(outcome)


@pytest.mark.parametrize("sandbox", SANDBOXES)
def test_no_network_to_the_host(sandbox: str) -> None:
    listener = socket.create_server(("127.0.0.1", 0))
    listener.settimeout(0.5)
    port = listener.getsockname()[1]
    program = (
        "import socket\n"
        "try:\n"
        f"    socket.create_connection(('127.0.0.1', {port}), timeout=3)\n"
        "    return 'connected'\n"
        "except OSError as error:\n"
        "    return type(error).__name__\n"
    )
    try:
        outcome = run(program, sandbox)
        with pytest.raises(TimeoutError):
            listener.accept()
    finally:
        listener.close()
    assert isinstance(outcome, RunOutput) and outcome.result != "connected", text_of(outcome)


@pytest.mark.parametrize("sandbox", SANDBOXES)
def test_host_files_are_out_of_reach(sandbox: str, tmp_path: Path) -> None:
    secret_file = tmp_path / "secret.txt"
    secret_file.write_text(SECRET)
    target = tmp_path / "written.txt"
    library = Path(os.__file__).parent / "codegen-sandbox-write-test"
    program = (
        "results = {}\n"
        f"for path in ({str(target)!r}, {str(library)!r}, '/usr/lib/codegen-test', '/x'):\n"
        "    try:\n"
        "        with open(path, 'w') as file:\n"
        "            file.write('escaped')\n"
        "        results[path] = 'written'\n"
        "    except OSError as error:\n"
        "        results[path] = type(error).__name__\n"
        "try:\n"
        f"    results['read'] = open({str(secret_file)!r}).read()\n"
        "except OSError as error:\n"
        "    results['read'] = type(error).__name__\n"
        "open('/tmp/scratch', 'w').write('ok')\n"
        "results['tmp'] = open('/tmp/scratch').read()\n"
        "return results\n"
    )
    outcome = run(program, sandbox)
    assert isinstance(outcome, RunOutput), text_of(outcome)
    results = outcome.result
    assert results.pop("tmp") == "ok"  # the private working directory is writable
    assert "written" not in results.values() and SECRET not in text_of(outcome), results
    assert not target.exists() and not library.exists()


@pytest.mark.parametrize("sandbox", SANDBOXES)
def test_file_size_is_limited(sandbox: str) -> None:
    program = (
        "data = b'x' * (1 << 20)\n"
        "with open('/tmp/big', 'wb') as file:\n"
        "    for _ in range(200):\n"
        "        file.write(data)\n"
        "return 'wrote 200 MB'\n"
    )
    outcome = run(program, sandbox)
    assert isinstance(outcome, CodeRunFailed), text_of(outcome)
    assert outcome.kind in ("exception", "worker-exit"), text_of(outcome)


@pytest.mark.slow
def test_two_hundred_runs_leave_no_descriptor_and_no_process() -> None:
    async def many() -> list[Any]:
        runtime = PythonRuntime(RuntimeLimits(timeout=30))
        try:
            before = len(os.listdir("/proc/self/fd"))
            outcomes = []
            for index in range(200):
                try:
                    outcomes.append(
                        await runtime.run(f"return {index}", BINDINGS, AbortController().signal)
                    )
                except CodeRunFailed as failure:
                    outcomes.append(failure)
            await runtime.aclose()
            assert len(os.listdir("/proc/self/fd")) == before
            return outcomes
        finally:
            await runtime.aclose()

    outcomes = asyncio.run(many())
    assert [o.result for o in outcomes if isinstance(o, RunOutput)] == list(range(200))
    assert_no_process_left()


@pytest.mark.slow
def test_fifty_concurrent_sandboxed_runs() -> None:
    async def together() -> list[Any]:
        runtime = PythonRuntime(RuntimeLimits(timeout=120))
        before = len(os.listdir("/proc/self/fd"))
        try:
            program = "r = await tools.echo({'x': 1})\nreturn r['args']['x']"
            outcomes = await asyncio.gather(
                *(runtime.run(program, BINDINGS, AbortController().signal) for _ in range(50)),
                return_exceptions=True,
            )
        finally:
            await runtime.aclose()
        assert len(os.listdir("/proc/self/fd")) == before
        return outcomes

    outcomes = asyncio.run(together())
    failures = [o for o in outcomes if not isinstance(o, RunOutput)]
    assert not failures, failures[:3]
    assert all(o.result == 1 for o in outcomes)
    assert_no_process_left()
