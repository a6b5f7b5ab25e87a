"""Finding Node and a way to strip types: a missing, too old or broken `node` (fakes here),
and no `typescript` package where one is needed, each end the run with a clear
CODE_RUN_FAILED that names what to install; the package is found from a configured path or
the Node installation, never from the working directory (a planted `node_modules/typescript`
or `node` there is never loaded); `runtime_for` builds a runtime for every language a host
can offer."""

from __future__ import annotations

import asyncio
import os
import re
import stat
from pathlib import Path
from typing import Any

import pytest

from codegen._support.program_lookup import find_program
from codegen.codemode.calls.cancellation import AbortController
from codegen.codemode.calls.execution import ToolCall
from codegen.codemode.calls.results import ErrorCode
from codegen.codemode.presentation.languages import RUN_CODE_FLAVORS
from codegen.codemode.registry import ToolRegistry
from codegen.codemode.run_code.code_runtime import Bindings, CodeRunFailed
from codegen.codemode.run_code.run_limits import RuntimeLimits
from codegen.codemode.runtimes.by_language import (
    RUNTIMES,
    RuntimeUnavailableError,
    create_runtime,
    runtime_for,
)
from codegen.codemode.runtimes.node_probe import (
    NodeUnavailable,
    find_typescript,
    permission_flag,
    probe_node,
    strips_types,
)
from codegen.codemode.runtimes.python import PythonRuntime
from codegen.codemode.runtimes.typescript import TypeScriptRuntime
from codegen.codemode.runtimes.typescript_package import (
    global_folders,
    native_compiler,
    platform_package,
)
from support.codemode_helpers import run
from support.sandbox_checks import staged
from support.typescript_nodes import ROOT, SETUPS, TYPESCRIPT, TYPESCRIPT7, WHEEL_NODE


def fake_node(directory: Path, says: str, status: int = 0) -> str:
    """An executable `node` that prints `says` for `--version`."""
    path = directory / "node"
    path.write_text(f"#!/bin/sh\necho '{says}'\nexit {status}\n")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return str(path)


def failure_of(runtime: TypeScriptRuntime) -> CodeRunFailed:
    async def attempt() -> CodeRunFailed:
        try:
            await runtime.run("return 1", Bindings((), _never), AbortController().signal)
        except CodeRunFailed as failure:
            return failure
        finally:
            await runtime.aclose()
        raise AssertionError("the run succeeded")

    return asyncio.run(attempt())


async def _never(name: str, arguments: Any) -> Any:
    raise AssertionError("no tool is called")


def test_a_too_old_node_names_the_version_needed(tmp_path: Path) -> None:
    node = fake_node(tmp_path, "v18.19.0")
    failure = failure_of(TypeScriptRuntime(node=node, sandbox="none"))
    assert failure.kind == "worker-exit"
    assert "need Node.js 20.12 or newer" in failure.message
    assert f"{node} is 18.19.0" in failure.message
    assert "https://nodejs.org" in failure.message


def test_the_registry_reports_code_run_failed_for_a_too_old_node(tmp_path: Path) -> None:
    registry = ToolRegistry(mode="code")
    registry.mount_runtime(TypeScriptRuntime(node=fake_node(tmp_path, "v20.11.1")))
    call = ToolCall("run_code", {"code": "return 1", "description": "Try"}, "run")
    result = run(registry.execute(call))
    assert result.code == ErrorCode.CODE_RUN_FAILED
    assert "Node.js 20.12 or newer" in result.content and "is 20.11.1" in result.content


def test_a_missing_node_says_how_to_install_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    failure = failure_of(TypeScriptRuntime(sandbox="none"))
    assert "there is no `node` on PATH" in failure.message
    assert "install Node.js 22.13 or newer, which strips types itself" in failure.message
    failure = failure_of(TypeScriptRuntime(node=str(tmp_path / "nowhere"), sandbox="none"))
    assert "is not an executable" in failure.message


@pytest.mark.parametrize(
    "says, status", [("hello", 0), ("", 3), ("v22", 0)], ids=["garbage", "fails", "no minor"]
)
def test_a_node_that_does_not_answer_its_version_is_refused(
    tmp_path: Path, says: str, status: int
) -> None:
    failure = failure_of(TypeScriptRuntime(node=fake_node(tmp_path, says, status), sandbox="none"))
    assert "is not a usable Node.js" in failure.message


def test_an_old_node_without_the_typescript_package_says_what_to_install(tmp_path: Path) -> None:
    node = fake_node(tmp_path, "v20.19.0")
    with pytest.raises(NodeUnavailable) as raised:
        probe_node(node, None)
    message = str(raised.value)
    assert f"Node 20.19.0 ({node}) cannot strip types itself (that needs 22.13 or newer)" in message
    assert "npm install -g typescript" in message and "typescript=" in message
    with pytest.raises(NodeUnavailable, match="holds no `typescript` package"):
        probe_node(node, str(tmp_path))
    with pytest.raises(NodeUnavailable, match="cannot strip types itself"):
        probe_node(node, TYPESCRIPT, "node")


def node_install(prefix: Path, version: str) -> str:
    """A Node installation (`<prefix>/bin/node`) whose global packages hold `typescript`."""
    (prefix / "bin").mkdir(parents=True)
    (prefix / "lib" / "node_modules").mkdir(parents=True)
    os.symlink(os.path.realpath(TYPESCRIPT), prefix / "lib" / "node_modules" / "typescript")
    return fake_node(prefix / "bin", version)


def test_the_typescript_package_comes_from_the_configuration_or_the_installation(
    tmp_path: Path,
) -> None:
    real = os.path.realpath(TYPESCRIPT)
    bare = fake_node(tmp_path, "v20.19.0")
    assert find_typescript(TYPESCRIPT, bare) == real
    assert find_typescript(str(ROOT), bare) == real  # a directory holding node_modules
    assert find_typescript(None, bare) is None
    installed = node_install(tmp_path / "prefix", "v20.19.0")
    assert find_typescript(None, installed) == real
    assert probe_node(installed, None).typescript.directory == real  # type: ignore[union-attr]
    assert probe_node(installed, None, "typescript").stripper == real
    assert probe_node(WHEEL_NODE, None).stripper == "node"
    assert probe_node(WHEEL_NODE, TYPESCRIPT, "typescript").typescript.directory == real  # type: ignore[union-attr]


PLANTED = """module.exports = {
  ScriptTarget: {}, ModuleKind: {}, DiagnosticCategory: {},
  transpileModule() { return { outputText: "(async function () { return 'planted'; })", diagnostics: [], sourceMapText: "{}" }; },
};
require("fs").writeFileSync(process.env.PLANTED_MARK || "/tmp/codegen-planted-ran", "ran");
"""


def test_a_planted_typescript_package_in_the_working_directory_is_never_loaded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """MCP clients start servers in the user's workspace, which a cloned repository
    controls: its `node_modules/typescript` (in the folder or a parent) and a `node` in it
    (reached through a relative PATH entry) must never be used."""
    workspace = tmp_path / "repo" / "sub"
    workspace.mkdir(parents=True)
    package = tmp_path / "repo" / "node_modules" / "typescript"
    package.mkdir(parents=True)
    (package / "package.json").write_text('{"name": "typescript", "main": "index.js"}')
    (package / "index.js").write_text(PLANTED)
    fake_node(workspace, "v24.0.0")
    monkeypatch.chdir(workspace)
    monkeypatch.setenv("PATH", f".:{os.environ['PATH']}")
    system = os.path.realpath(SETUPS["transpile"]["node"])
    with pytest.raises(NodeUnavailable) as raised:
        probe_node(system, None, "typescript")
    assert "needs the `typescript` package" in str(raised.value)
    assert find_program("node") not in (None, str(workspace / "node"), "./node")
    failure = failure_of(TypeScriptRuntime(node=system, stripper="typescript", sandbox="none"))
    assert "npm install -g typescript" in failure.message


def test_version_rules() -> None:
    assert not strips_types((22, 12, 0)) and strips_types((22, 13, 0))
    assert not strips_types((23, 1, 0)) and strips_types((23, 2, 0)) and strips_types((24, 0, 0))
    assert permission_flag((20, 19, 0)) == "--experimental-permission"
    assert permission_flag((22, 13, 0)) == permission_flag((24, 1, 0)) == "--permission"
    assert permission_flag((23, 4, 0)) == "--experimental-permission"


def test_an_unknown_stripper_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown stripper 'swc'"):
        TypeScriptRuntime(stripper="swc")


# --- a runtime by language ------------------------------------------------------------------


def test_every_run_code_flavor_has_a_runtime() -> None:
    assert set(RUNTIMES) == set(RUN_CODE_FLAVORS)
    for language in RUN_CODE_FLAVORS:
        runtime = runtime_for(language, RuntimeLimits(timeout=5), sandbox="none", spare=False)
        assert runtime.language == language
        assert runtime.limits.timeout == 5 and runtime.sandbox == "none"
        assert runtime.spare is False
        created = create_runtime(language, "bubblewrap")
        assert created.language == language and created.sandbox == "bubblewrap"


def test_runtime_for_passes_each_language_its_options() -> None:
    python = runtime_for("python", python="/usr/bin/python3")
    assert isinstance(python, PythonRuntime) and python.python == "/usr/bin/python3"
    typescript = runtime_for("typescript", node=WHEEL_NODE, stripper="node")
    assert isinstance(typescript, TypeScriptRuntime)
    assert (typescript.node, typescript.stripper) == (WHEEL_NODE, "node")
    with pytest.raises(TypeError):
        runtime_for("python", node="node")


@pytest.mark.parametrize("language", ["ruby", "__class__", "Python", None, 3])
def test_runtime_for_an_unknown_language_names_the_known_ones(language: Any) -> None:
    with pytest.raises(RuntimeUnavailableError) as raised:
        runtime_for(language)
    assert '(languages with a runtime: "python", "typescript")' in str(raised.value)
    with pytest.raises(RuntimeUnavailableError):
        create_runtime(language)


def test_a_mounted_typescript_runtime_runs_the_typescript_flavor() -> None:
    registry = ToolRegistry(mode="code")
    registry.mount_runtime(runtime_for("typescript", node=staged(WHEEL_NODE)))
    [definition] = registry.wire_schemas()
    assert "TypeScript program" in definition["description"]
    call = ToolCall(
        "run_code", {"code": "const n: number = 2;\nreturn n * 21", "description": "Add"}, "r"
    )
    assert run(registry.execute(call)).value == {"logs": [], "result": 42}


# --- every version a message names is true ------------------------------------------------


def _parsed(text: str) -> tuple[int, ...]:
    return tuple(int(part) for part in text.split("."))


@pytest.mark.parametrize(
    "says", ["v18.19.0", "v20.11.1", "v20.12.0", "v20.20.2", "v22.12.0", "v23.1.0", "v22.13.0"]
)
@pytest.mark.parametrize("stripper", ["auto", "node", "typescript"])
def test_every_version_a_message_names_is_true(tmp_path: Path, says: str, stripper: Any) -> None:
    """A version a message says is needed ("X or newer") is newer than the one found, and
    the version it says was found is the one found: a Node 20.20 is never told to install
    Node 20.12 or newer."""
    found = _parsed(says[1:])
    node = fake_node(tmp_path, says)
    try:
        probe_node(node, None, stripper)
    except NodeUnavailable as unavailable:
        message = str(unavailable)
    else:
        assert stripper != "typescript" and found >= (22, 13), "a Node that strips types"
        return
    for version in re.findall(r"(\d+\.\d+(?:\.\d+)?) or newer", message):
        assert found < _parsed(version), message
    for version in re.findall(r"\b(?:Node|is) (\d+\.\d+\.\d+)", message):
        assert _parsed(version) == found, message


def test_a_node_new_enough_to_run_the_worker_is_told_the_one_command_that_fixes_it(
    tmp_path: Path,
) -> None:
    node = fake_node(tmp_path, "v20.20.2")
    with pytest.raises(NodeUnavailable) as raised:
        probe_node(node, None)
    message = str(raised.value)
    assert "20.12" not in message, message
    assert "run `npm install -g typescript`" in message
    assert f"looked for {tmp_path.parent / 'lib' / 'node_modules' / 'typescript'}" in message


# --- TypeScript 7 ------------------------------------------------------------------------


def typescript_7(folder: Path, version: str = "7.0.2") -> Path:
    """A `typescript` 7 package in `folder/node_modules`, without its platform binary."""
    package = folder / "node_modules" / "typescript"
    package.mkdir(parents=True)
    (package / "package.json").write_text(f'{{"name": "typescript", "version": "{version}"}}')
    return package


def test_typescript_7_without_its_platform_binary_says_what_is_missing(tmp_path: Path) -> None:
    package = typescript_7(tmp_path)
    with pytest.raises(NodeUnavailable) as raised:
        probe_node(WHEEL_NODE, str(package), "typescript")
    message = str(raised.value)
    assert f"the `typescript` package in {package} is 7.0.2, a native compiler" in message
    assert f"{platform_package()} 7.0.2" in message and "npm install -g typescript" in message


def test_typescript_7_finds_its_binary_nested_or_beside_it(tmp_path: Path) -> None:
    """Where Node's resolution from the package would find the platform package: in the
    package's own node_modules, or in the node_modules holding it; of the same version."""
    package = typescript_7(tmp_path)
    scope, name = platform_package().split("/")
    binary = Path(TYPESCRIPT7).resolve().parent / scope / name / "lib" / "tsc"
    beside = tmp_path / "node_modules" / scope / name
    (beside / "lib").mkdir(parents=True)
    (beside / "package.json").write_text(f'{{"name": "{scope}/{name}", "version": "7.0.1"}}')
    os.symlink(binary, beside / "lib" / "tsc")
    assert native_compiler(package, "7.0.2") is None  # another version's binary
    (beside / "package.json").write_text(f'{{"name": "{scope}/{name}", "version": "7.0.2"}}')
    assert native_compiler(package, "7.0.2") == os.path.realpath(binary)
    nested = package / "node_modules" / scope / name
    (nested / "lib").mkdir(parents=True)
    (nested / "package.json").write_text(f'{{"name": "{scope}/{name}", "version": "7.0.2"}}')
    (nested / "lib" / "tsc").write_text("#!/bin/sh\n")
    assert native_compiler(package, "7.0.2") == os.path.realpath(binary)  # not executable
    (nested / "lib" / "tsc").chmod(0o755)
    assert native_compiler(package, "7.0.2") == str(nested / "lib" / "tsc")  # nested first


def test_global_packages_are_looked_for_where_npm_puts_them() -> None:
    """`<prefix>/lib/node_modules` for `node` as PATH names it and as its real path; for a
    Node in /usr also /usr/local, where Debian's npm installs global packages."""
    assert global_folders("/usr/bin/node", "/usr/bin/node") == [
        Path("/usr/lib/node_modules"),
        Path("/usr/local/lib/node_modules"),
    ]
    assert global_folders(
        "/opt/homebrew/bin/node", "/opt/homebrew/Cellar/node/24.1.0/bin/node"
    ) == [
        Path("/opt/homebrew/lib/node_modules"),
        Path("/opt/homebrew/Cellar/node/24.1.0/lib/node_modules"),
    ]
