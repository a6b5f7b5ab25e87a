"""TypeScript users' view: the generated declarations are modules that live side by side in
one project, and `mcp-bind.ts` binds their `Tools` to an MCP client.

- Several generated files (two servers, and two files that declare the same names) compile
  in one strict project, imported by name, with `mcp-bind.ts`; wrong calls fail.
- `mcp-bind.ts` against a fake client: what a call resolves to or rejects with, what is
  sent, and what never calls a tool.
- End to end: the harvested `@modelcontextprotocol/server-everything` tools called through
  the official SDK's `Client` over stdio; the README example run as written (a stand-in
  `npx` on PATH starts the locally installed server).

Every program is compiled by the pinned `tsc` (strict, plus the stricter options a project
may turn on) and run by Node. Missing Node packages fail the test with the command that
installs them; they are never skipped. Every server started here must be gone afterwards.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from codegen.cli import main
from codegen.render.typescript.runtime import BIND_MODULE, bind_module_text
from conftest import ROOT
from support.processes import running
from support.readme_examples import NPX, fenced, section
from support.tsc import NODE_MODULES, NPM_HINT, node

TSC = NODE_MODULES / "typescript" / "bin" / "tsc"
EVERYTHING = NODE_MODULES / ".bin" / "mcp-server-everything"
CORPUS = ROOT / "tests" / "corpus" / "mcp"
EXAMPLE_HEADING = "### Calling tools from TypeScript"
DEADLINE = 120.0
"""Seconds for one compile or one program run: generous, the machine is shared."""

COMPILER_OPTIONS: dict[str, Any] = {
    "strict": True,
    "target": "es2022",
    "module": "nodenext",
    "moduleResolution": "nodenext",
    "lib": ["es2022", "dom"],
    "types": [],
    "outDir": "out",
    "exactOptionalPropertyTypes": True,
    "noUncheckedIndexedAccess": True,
    "noImplicitOverride": True,
    "noPropertyAccessFromIndexSignature": True,
    "noImplicitReturns": True,
    "noUnusedLocals": True,
    "noUnusedParameters": True,
    "verbatimModuleSyntax": True,
    "isolatedModules": True,
    "erasableSyntaxOnly": True,
    "forceConsistentCasingInFileNames": True,
}
"""`--strict` and the stricter options a project may add; no `skipLibCheck`, so the
generated declarations are checked as part of the project."""

NODE_SHIM = """\
// What the programs use of Node's types (no @types/node): `process.argv`, and the two
// modules the MCP SDK's stdio transport names.
declare const process: { readonly argv: readonly string[] };
declare module "node:child_process" {
  export type IOType = "overlapped" | "pipe" | "ignore" | "inherit";
}
declare module "node:stream" {
  export class Stream {}
}
"""


def npm_package(name: str) -> None:
    if not (NODE_MODULES / name / "package.json").is_file():
        pytest.fail(f"node_modules/{name} is missing; {NPM_HINT}")


def project(directory: Path, sources: dict[str, str], *, emit: bool = True) -> Path:
    """A TypeScript ES-module project in `directory`: `sources`, `mcp-bind.ts`, the shim for
    Node's types, and the repository's `node_modules`; compiled with `tsc`, which must
    report nothing. Returns the output directory."""
    node()  # fails with the install command when Node or typescript is missing
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "node_modules").symlink_to(NODE_MODULES, target_is_directory=True)
    (directory / "package.json").write_text('{"type": "module"}\n', encoding="utf-8")
    files = {BIND_MODULE: bind_module_text(), "node-shim.d.ts": NODE_SHIM, **sources}
    for name, text in files.items():
        (directory / name).write_text(text, encoding="utf-8")
    options = {**COMPILER_OPTIONS, "noEmit": not emit}
    config = {"compilerOptions": options, "files": sorted(files)}
    (directory / "tsconfig.json").write_text(json.dumps(config, indent=1), encoding="utf-8")
    compiled = subprocess.run(
        [node(), str(TSC), "-p", "tsconfig.json"],
        cwd=directory,
        capture_output=True,
        text=True,
        timeout=DEADLINE,
        check=False,
    )
    assert compiled.returncode == 0, compiled.stdout + compiled.stderr
    assert compiled.stdout == "", compiled.stdout
    return directory / "out"


def run_program(script: Path, env: dict[str, str] | None = None) -> str:
    ran = subprocess.run(
        [node(), str(script)],
        cwd=script.parent,
        capture_output=True,
        text=True,
        timeout=DEADLINE,
        env=env,
        check=False,
    )
    assert ran.returncode == 0, ran.stdout + ran.stderr
    return ran.stdout


def declarations(source: Path, output: Path) -> str:
    assert main(["sdk", str(source), "--lang", "typescript", "-q", "-o", str(output)]) == 0
    return output.read_text(encoding="utf-8")


def assert_gone(pids: list[int]) -> None:
    """Every pid ends within a few seconds; one left behind is killed, then reported."""
    deadline = time.monotonic() + 30
    while any(running(pid) for pid in pids) and time.monotonic() < deadline:
        time.sleep(0.05)
    left = [pid for pid in pids if running(pid)]
    for pid in left:
        os.kill(pid, signal.SIGKILL)
    assert not left, "server processes left running"


# --- the module -------------------------------------------------------------------------


def test_the_binding_ships_with_the_templates() -> None:
    """`mcp-bind.ts` is in `templates/` (the wheel's `codegen/templates/`) and `python -m`
    prints it as is."""
    text = bind_module_text()
    assert text == (ROOT / "templates" / "typescript" / BIND_MODULE).read_text(encoding="utf-8")
    assert text.isascii() and text.endswith("}\n") and not text.endswith("\n\n")
    assert not re.search(r"^\s*import\b", text, re.MULTILINE), "the binding imports nothing"
    printed = subprocess.run(
        [sys.executable, "-m", "codegen.render.typescript.runtime"],
        cwd=ROOT,
        capture_output=True,
        timeout=60,
        check=True,
    )
    assert printed.stdout.decode("ascii") == text


# --- several generated files in one project ---------------------------------------------

SIDE_BY_SIDE = """\
import type { GetSumArgs, JsonValue, ToolName, Tools as Everything } from "./everything.js";
import type { ToolCallError as MemoryError, Tools as Memory } from "./memory.js";
import type * as Playwright from "./playwright.js";
import type * as AllCaps from "./playwright-allcaps.js";
import { bind, ToolCallError, type ToolClient } from "./mcp-bind.js";

declare const client: ToolClient;
const everything = bind<Everything>(client);
const memory = bind<Memory>(client);
const playwright = bind<Playwright.Tools>(client);
const allcaps = bind<AllCaps.Tools>(client);

export async function use(): Promise<JsonValue[]> {
  const args: GetSumArgs = { a: 2, b: 3 };
  const names: ToolName[] = ["echo", "get-sum"];
  const weather = await everything["get-structured-content"]({ location: "Chicago" });
  const degrees: number = weather.temperature;
  const graph = await memory.read_graph({});
  const entities: string[] = graph.entities.map((entity) => entity.name);
  const size: Playwright.BrowserResizeArgs = { width: 800, height: 600 };
  const same: AllCaps.BrowserResizeArgs = size;
  await playwright.browser_resize(size);
  await allcaps.browser_resize(same);
  const failed = (error: MemoryError): string => error.toolName;
  try {
    await everything.echo({ message: "hi" });
  } catch (error) {
    if (error instanceof ToolCallError) names.push("echo");
  }
  return [await everything["get-sum"](args), degrees, entities, names, failed.length];
}

// @ts-expect-error no such tool
void everything.ech({ message: "hi" });
// @ts-expect-error an argument of the wrong type
void everything["get-sum"]({ a: "2", b: 3 });
// @ts-expect-error a required argument missing
void everything.echo({});
// @ts-expect-error a value outside the enum
void everything["get-structured-content"]({ location: "Paris" });
// @ts-expect-error another server's tool
void memory.echo({ message: "hi" });
// @ts-expect-error the tools are read-only
everything.echo = everything.echo;
// @ts-expect-error a result is what the output schema says
void everything["get-structured-content"]({ location: "Chicago" }).then((w) => w.temperature.at(0));
"""

NO_VALUES = """\
// @ts-expect-error the declarations hold no value: `tools` comes from bind
import { tools } from "./everything.js";

export const unused: unknown = tools;
"""


@pytest.mark.slow
def test_generated_files_are_modules_side_by_side(tmp_path: Path) -> None:
    """Four generated files in one strict project, two of them declaring the same names
    (`BrowserResizeArgs`, and every file `JsonValue`, `ToolName`, `Tools`), imported by name
    and bound to one client; before, as global scripts, they clashed (`Duplicate identifier
    'JsonValue'`, `Cannot redeclare block-scoped variable 'tools'`) and `import type`
    failed with TS2306. Each wrong call under `@ts-expect-error` must be an error."""
    sources = {
        f"{name}.d.ts": declarations(CORPUS / f"{name}.json", tmp_path / f"{name}.d.ts")
        for name in ("everything", "memory", "playwright", "playwright-allcaps")
    }
    for text in sources.values():
        assert "declare const" not in text and "declare class" not in text
    sources |= {"main.ts": SIDE_BY_SIDE, "values.ts": NO_VALUES}
    project(tmp_path / "project", sources, emit=False)


# --- mcp-bind.ts against a fake client ----------------------------------------------------

FAKE_CLIENT = """\
import {
  bind,
  callTool,
  ToolCallError,
  type ToolCallParams,
  type UntypedTools,
} from "./mcp-bind.js";

class McpError extends Error {
  override name = "McpError";
}

const abort = new Error("This operation was aborted");
abort.name = "AbortError";

const replies: { [name: string]: () => unknown } = {
  structured: () => ({ content: [{ type: "text", text: "{}" }], structuredContent: { a: 1 } }),
  text: () => ({ content: [{ type: "text", text: "one" }, { type: "text", text: "two" }] }),
  blocks: () => ({
    content: [{ type: "text", text: "t" }, { type: "image", data: "AA==", mimeType: "image/png" }],
  }),
  empty: () => ({ content: [] }),
  "null-structured": () => ({ content: [{ type: "text", text: "x" }], structuredContent: null }),
  "error-text": () => ({
    isError: true,
    content: [{ type: "text", text: "bad" }, { type: "image", data: "" }, { type: "text", text: "worse" }],
  }),
  "error-structured": () => ({ isError: true, content: [], structuredContent: { why: "no" } }),
  "error-silent": () => ({ isError: true, content: [] }),
  "mcp-error": () => {
    throw new McpError("MCP error -32001: Request timed out");
  },
  "type-error": () => {
    throw new TypeError("boom");
  },
  "thrown-string": () => {
    throw "oops";
  },
  "not-a-result": () => ({ toolResult: 1 }),
  "not-an-object": () => 5,
  task: () => ({ resultType: "task", content: [] }),
  "odd-block": () => ({ content: [{ type: "text", text: "a" }, 7] }),
  aborted: () => {
    throw abort;
  },
};

const calls: { name: string; arguments: unknown; count: number; options: unknown }[] = [];
const client = {
  async callTool(params: ToolCallParams, ...rest: unknown[]): Promise<unknown> {
    calls.push({ name: params.name, arguments: params.arguments, count: 1 + rest.length, options: rest[1] });
    const reply = replies[params.name];
    if (reply === undefined) throw new McpError(`MCP error -32602: Tool ${params.name} not found`);
    return reply();
  },
};

function describe(value: unknown): unknown {
  if (value instanceof Error) return `${value.name}: ${value.message}`;
  return value === undefined ? "(none)" : value;
}

async function outcome(run: () => Promise<unknown>): Promise<unknown> {
  try {
    return { value: await run() };
  } catch (error) {
    if (error instanceof ToolCallError) {
      return {
        error: String(error),
        toolName: error.toolName,
        isError: error instanceof Error,
        cause: describe(error.cause),
      };
    }
    if (error === abort) return { error: "the client's own error" };
    return { error: describe(error) };
  }
}

const tools = bind(client);
const out: { [label: string]: unknown } = {};
for (const name of Object.keys(replies)) {
  if (name !== "aborted") out[name] = await outcome(() => tools[name]!({}));
}
out["unknown"] = await outcome(() => tools["no-such-tool"]!({}));
const aborted = bind(client, { signal: { aborted: true } });
out["aborted"] = await outcome(() => aborted["aborted"]!({}));
out["aborted but a tool error"] = await outcome(() => aborted["error-text"]!({}));

const sent = { a: 1 };
const pending = tools["get-sum"]!(sent);
sent.a = 2;
await outcome(() => pending);
const loose = tools["text"] as (args?: unknown) => Promise<unknown>;
await loose();
await loose(null);
out["array arguments"] = await outcome(() => loose([1]));
out["string arguments"] = await outcome(() => loose("a=1"));
await bind(client, { timeout: 5 })["text"]!({ b: true });
out["sent"] = calls.slice(-4).map((call) => [call.name, call.arguments, call.count, call.options]);

const before = calls.length;
const probes: { [label: string]: unknown } = {
  then: typeof (tools as { then?: unknown }).then,
  awaited: (await Promise.resolve(tools)) === tools,
  json: JSON.stringify(tools),
  string: String(tools),
  constructor: (tools as object).constructor === Object,
  iterator: Symbol.iterator in tools,
  stable: tools["echo"] === tools["echo"],
  keys: Object.keys(tools),
};
try {
  (tools as { [name: string]: unknown })["echo"] = 1;
  probes["assign"] = "allowed";
} catch (error) {
  probes["assign"] = error instanceof TypeError;
}
probes["calls"] = calls.length - before;
out["probes"] = probes;

out["callTool"] = await outcome(() => callTool(client, "text", { c: 3 }));
const untyped: UntypedTools = tools;
out["untyped"] = typeof untyped["anything"];
for (const target of [{}, null, 5]) {
  try {
    bind(target as never);
    out[`bind ${JSON.stringify(target)}`] = "bound";
  } catch (error) {
    out[`bind ${JSON.stringify(target)}`] = describe(error);
  }
}
const made = new ToolCallError("x", "m");
out["made"] = [made.name, made.toolName, made.message, "cause" in made, made instanceof ToolCallError];
console.log(JSON.stringify(out));
"""


def _failure(name: str, message: str, cause: Any = "(none)") -> dict[str, Any]:
    return {
        "error": f"ToolCallError: {message}",
        "toolName": name,
        "isError": True,
        "cause": cause,
    }


@pytest.mark.slow
def test_bind_semantics_with_a_fake_client(tmp_path: Path) -> None:
    """As `codegen.client.bind`: structured content, else the text, else the blocks, else
    null; a tool's error and a client's failure reject with `ToolCallError` (the client's
    error its `cause`), except a call its signal aborted. Arguments are one object, copied
    when the call starts; options reach every call. Probing the bound object (`await`,
    `JSON.stringify`, `String`, symbols, assignment) never calls a tool."""
    out = project(tmp_path, {"fake.ts": FAKE_CLIENT})
    seen = json.loads(run_program(out / "fake.js"))
    mcp_error = "McpError: MCP error -32001: Request timed out"
    assert seen == {
        "structured": {"value": {"a": 1}},
        "text": {"value": "one\ntwo"},
        "blocks": {
            "value": [
                {"type": "text", "text": "t"},
                {"type": "image", "data": "AA==", "mimeType": "image/png"},
            ]
        },
        "empty": {"value": None},
        "null-structured": {"value": "x"},
        "error-text": _failure("error-text", "bad\nworse"),
        "error-structured": _failure("error-structured", '{"why":"no"}'),
        "error-silent": _failure("error-silent", "the tool reported an error without a message"),
        "mcp-error": _failure("mcp-error", "MCP error -32001: Request timed out", mcp_error),
        "type-error": _failure("type-error", "TypeError: boom", "TypeError: boom"),
        "thrown-string": _failure("thrown-string", "oops", "oops"),
        "not-a-result": _failure("not-a-result", "expected a tool result, got an object"),
        "not-an-object": _failure("not-an-object", "expected a tool result, got a number"),
        "task": _failure("task", 'expected a tool result, got "task"'),
        "odd-block": _failure("odd-block", "not an MCP content block: a number"),
        "unknown": _failure(
            "no-such-tool",
            "MCP error -32602: Tool no-such-tool not found",
            "McpError: MCP error -32602: Tool no-such-tool not found",
        ),
        "aborted": {"error": "the client's own error"},
        "aborted but a tool error": _failure("error-text", "bad\nworse"),
        "array arguments": {
            "error": 'TypeError: tools["text"]: arguments must be an object of JSON values, '
            "got an array"
        },
        "string arguments": {
            "error": 'TypeError: tools["text"]: arguments must be an object of JSON values, '
            "got a string"
        },
        "sent": [
            ["get-sum", {"a": 1}, 1, None],
            ["text", {}, 1, None],
            ["text", {}, 1, None],
            ["text", {"b": True}, 3, {"timeout": 5}],
        ],
        "probes": {
            "then": "undefined",
            "awaited": True,
            "json": "{}",
            "string": "[object BoundTools]",
            "constructor": True,
            "iterator": False,
            "stable": True,
            "keys": [],
            "assign": True,
            "calls": 0,
        },
        "callTool": {"value": "one\ntwo"},
        "untyped": "function",
        "bind {}": "TypeError: bind: expected an MCP client (with callTool), got an object",
        "bind null": "TypeError: bind: expected an MCP client (with callTool), got null",
        "bind 5": "TypeError: bind: expected an MCP client (with callTool), got a number",
        "made": ["ToolCallError", "x", "m", False, True],
    }


# --- end to end: @modelcontextprotocol/server-everything --------------------------------

END_TO_END = """\
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

import type { Tools } from "./everything.js";
import type { Tools as Memory } from "./memory.js";
import { bind, ToolCallError, type UntypedTools } from "./mcp-bind.js";

const server = process.argv[2]!;
const transport = new StdioClientTransport({ command: server, args: ["stdio"], stderr: "ignore" });
const client = new Client({ name: "codegen-test", version: "1.0.0" });
await client.connect(transport);
const seen: { [label: string]: unknown } = { pid: transport.pid };

async function failure(run: () => Promise<unknown>): Promise<unknown> {
  try {
    return { resolved: await run() };
  } catch (error) {
    if (!(error instanceof ToolCallError)) throw error;
    return [error.toolName, error.message, error.cause instanceof Error];
  }
}

try {
  const tools = bind<Tools>(client);
  seen["echo"] = await tools.echo({ message: "hello" });
  seen["sum"] = await tools["get-sum"]({ a: 2, b: 3 });
  const weather = await tools["get-structured-content"]({ location: "Chicago" });
  seen["weather"] = [Object.keys(weather).sort(), typeof weather.temperature];
  seen["image"] = await tools["get-tiny-image"]({});
  seen["bad argument"] = await failure(() => tools["get-sum"]({ a: "two" as unknown as number, b: 3 }));
  seen["tool error"] = await failure(() => tools["get-resource-reference"]({ resourceId: 1.5 }));
  const untyped = tools as unknown as UntypedTools;
  seen["unknown"] = await failure(() => untyped["no-such-tool"]!({}));
  // Request options reach the client: a call past its timeout fails on the client's side.
  const hurried = bind<Tools>(client, { timeout: 100 });
  seen["timeout"] = await failure(() =>
    hurried["trigger-long-running-operation"]({ duration: 5, steps: 5 }),
  );
  // A second generated file's binding on the same client: its tools are not this server's.
  const memory = bind<Memory>(client);
  seen["other server"] = await failure(() => memory.read_graph({}));
} finally {
  await client.close();
}
console.log(JSON.stringify(seen));
"""


@pytest.fixture(scope="module")
def harvested(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The server's tools, harvested from the running server."""
    npm_package("@modelcontextprotocol/sdk")
    assert EVERYTHING.exists(), f"@modelcontextprotocol/server-everything is missing; {NPM_HINT}"
    path = tmp_path_factory.mktemp("everything") / "everything.json"
    status = main(
        ["harvest", "--mcp", "-q", "-o", str(path), "--timeout", "60", "--", str(EVERYTHING)]
    )
    assert status == 0
    return path


@pytest.mark.slow
def test_end_to_end_with_server_everything(harvested: Path, tmp_path: Path) -> None:
    """The harvested tools' declarations and a second server's, compiled with a program that
    calls the real server through the SDK's `Client` over stdio: results decoded, failures
    rejected with `ToolCallError` naming the tool (the server reports an unknown name as a
    tool error; a client's timeout is the error's `cause`), and the server gone
    afterwards."""
    sources = {
        "everything.d.ts": declarations(harvested, tmp_path / "everything.d.ts"),
        "memory.d.ts": declarations(CORPUS / "memory.json", tmp_path / "memory.d.ts"),
        "main.ts": END_TO_END,
    }
    out = project(tmp_path / "project", sources)
    ran = subprocess.run(
        [node(), str(out / "main.js"), str(EVERYTHING)],
        cwd=out,
        capture_output=True,
        text=True,
        timeout=DEADLINE,
        check=False,
    )
    assert ran.returncode == 0, ran.stdout + ran.stderr
    seen = json.loads(ran.stdout)
    assert_gone([seen.pop("pid")])
    image = seen.pop("image")
    assert [block["type"] for block in image] == ["text", "image", "text"]
    assert image[1]["mimeType"] == "image/png" and image[1]["data"]
    tool, message, _ = seen.pop("bad argument")
    assert tool == "get-sum" and "Invalid arguments for tool get-sum" in message
    assert seen == {
        "echo": "Echo: hello",
        "sum": "The sum of 2 and 3 is 5.",
        "weather": [["conditions", "humidity", "temperature"], "number"],
        "tool error": [
            "get-resource-reference",
            "Invalid resourceId: 1.5. Must be a finite positive integer.",
            False,
        ],
        "unknown": ["no-such-tool", "MCP error -32602: Tool no-such-tool not found", False],
        "other server": ["read_graph", "MCP error -32602: Tool read_graph not found", False],
        "timeout": ["trigger-long-running-operation", "MCP error -32001: Request timed out", True],
    }


# --- the README example -----------------------------------------------------------------


def example_text() -> str:
    """README.md's section on calling tools from TypeScript, up to the next heading."""
    return section(EXAMPLE_HEADING, r"^##")


@pytest.mark.slow
def test_the_readme_example_runs_and_type_checks(tmp_path: Path) -> None:
    """The README's commands run as written (harvest, generate, copy the binding), its
    program compiles under the strict options and prints what the README says."""
    npm_package("@modelcontextprotocol/sdk")
    assert EVERYTHING.exists(), f"@modelcontextprotocol/server-everything is missing; {NPM_HINT}"
    markdown = example_text()
    (shell,), (program,), (expected,) = (fenced(markdown, lang) for lang in ("sh", "ts", "text"))
    shim = tmp_path / "bin"
    shim.mkdir()
    pids = tmp_path / "pids"
    (shim / "npx").write_text(
        NPX.format(pids=shlex.quote(str(pids)), server=shlex.quote(str(EVERYTHING)))
    )
    (shim / "npx").chmod(0o755)
    path = [str(shim), str(Path(sys.executable).parent), os.environ["PATH"]]
    env = {**os.environ, "PATH": os.pathsep.join(path)}
    work = tmp_path / "example"
    work.mkdir()
    try:
        commands = subprocess.run(
            ["/bin/sh", "-eu", "-c", shell.replace("python3 ", f"{shlex.quote(sys.executable)} ")],
            cwd=work,
            env=env,
            capture_output=True,
            text=True,
            timeout=DEADLINE,
            check=False,
        )
        assert commands.returncode == 0, commands.stderr
        assert (work / BIND_MODULE).read_text(encoding="utf-8") == bind_module_text()
        generated = (work / "everything.d.ts").read_text(encoding="utf-8")
        out = project(work, {"everything.d.ts": generated, "example.ts": program})
        assert run_program(out / "example.js", env) == expected
    finally:
        if pids.exists():
            assert_gone([int(word) for word in pids.read_text().split()])
    assert len(pids.read_text().split()) == 2  # harvest, then the program
