"""Talking to a real `codegen serve` as clients do: its config file, a bounded `anyio` run, a
serve process whose stderr is read as it comes, one over HTTP on a free loopback port, and a
`run_code` call through the MCP SDK's HTTP client. Shared by the serve tests."""

from __future__ import annotations

import json
import os
import queue
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, TypeVar

import anyio
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

from conftest import ROOT

TIME = shutil.which("mcp-server-time") or str(Path(sys.executable).parent / "mcp-server-time")


DEADLINE = 180.0
"""Seconds for one session: generous, the machine is shared."""


T = TypeVar("T")


def run(function: Callable[[], Awaitable[T]], deadline: float = DEADLINE) -> T:
    async def bounded() -> T:
        with anyio.fail_after(deadline):
            return await function()

    return anyio.run(bounded)


def write_config(folder: Path, servers: dict[str, Any], **settings: Any) -> Path:
    """`servers.json` in `folder`: the servers, and `settings` as its "codegen" object."""
    path = folder / "servers.json"
    document: dict[str, Any] = {"mcpServers": servers}
    if settings:
        document["codegen"] = settings
    path.write_text(json.dumps(document, indent=2))
    return path


def text_of(result: Any) -> str:
    return "\n".join(block.text for block in result.content if block.type == "text")


def environment(folder: Path, **extra: str) -> dict[str, str]:
    return {
        "PATH": os.environ.get("PATH", ""),
        "PYTHONPATH": str(ROOT),
        "XDG_CONFIG_HOME": str(folder / "xdg"),
        "HOME": str(folder),
        **extra,
    }


class Serve:
    """A `codegen serve` process whose stderr lines are collected as they come."""

    def __init__(self, *args: str, cwd: Path, env: dict[str, str]) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-m", "codegen", "serve", *args],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=cwd,
            env=env,
        )
        self.lines: list[str] = []
        self._queue: queue.Queue[str | None] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.process.stderr is not None
        for raw in self.process.stderr:
            self._queue.put(raw.decode(errors="replace").rstrip("\n"))
        self._queue.put(None)

    def wait_for(self, pattern: str, seconds: float = 120.0) -> re.Match[str]:
        deadline = time.monotonic() + seconds
        for line in self.lines:
            if (found := re.search(pattern, line)) is not None:
                return found
        while time.monotonic() < deadline:
            try:
                line = self._queue.get(timeout=0.5)
            except queue.Empty:
                continue
            if line is None:
                break
            self.lines.append(line)
            if (found := re.search(pattern, line)) is not None:
                return found
        raise AssertionError(f"no line matches {pattern!r}: {self.lines}")

    def stop(self, how: int = signal.SIGTERM) -> int:
        if self.process.poll() is None:
            self.process.send_signal(how)
        code = self.process.wait(timeout=60)
        while (line := self._queue.get(timeout=10)) is not None:
            self.lines.append(line)
        return code

    def kill(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()

    @property
    def stderr(self) -> str:
        return "\n".join(self.lines)


def http_serve(folder: Path, *flags: str, **extra: str) -> tuple[Serve, str, str | None]:
    """A serve over HTTP on a free loopback port: (serve, url, token it printed)."""
    config = write_config(folder, {"time": {"command": TIME}})
    serve = Serve(
        "--config",
        str(config),
        "--http",
        "127.0.0.1:0",
        *flags,
        cwd=folder,
        env=environment(folder, **extra),
    )
    url = serve.wait_for(r"listening on (http://\S+)").group(1)
    said = serve.wait_for(r"clients send").string
    token = re.search(r"Bearer ([A-Za-z0-9_\-]{20,})", said)
    return serve, url, token.group(1) if token else None


async def client_call(url: str, token: str | None, program: str) -> Any:
    headers = {"Authorization": f"Bearer {token}"} if token else None
    http = create_mcp_http_client(headers=headers)
    async with Client(streamable_http_client(url, http_client=http), cache=None) as client:
        names = [tool.name for tool in (await client.list_tools()).tools]
        result = await client.call_tool("run_code", {"code": program, "description": "Probe"})
        return names, result.structured_content
