"""The Python run_code worker: runs one program in a fresh process.

Started by `runtimes.python` as `python -I -c <this file> READ_FD WRITE_FD [HOST_PID]`; it
needs the standard library only. On Linux the kernel kills the worker when its parent dies
(PR_SET_PDEATHSIG); given HOST_PID (what `getppid()` must return), a worker whose host died
before that was set exits at once. Messages are JSON lines on two pipes. From the host:
`start` (program, tool names, limits), then `result` for each call. To the host: `ready`
(started and waiting for its program), `log` (a printed line), `call` (a tool call: id, name,
arguments), `discover` (a question to `catalog`: id, op, arguments; answered like a call),
and finally `done` (with the returned value, if any) or `error` (kind and message).

The program runs as the body of an `async def`, so top-level `await` and `return` work, with
exactly three names bound: `tools`, `catalog` (discovery: `discover` messages the host
answers like calls) and `ToolCallError`. Calls start as soon as they are made
(like JavaScript promises), so `asyncio.gather` overlaps them and a call that is never
awaited still reaches the host. The worker itself is no security boundary (refusing
`os.fork` and friends only catches mistakes); the sandbox it is started in is (see
`sandbox/launchers.py`): there it also sets RLIMIT_NPROC, RLIMIT_FSIZE and RLIMIT_NOFILE.
The worker's event loop waits with `poll`, not epoll: its sandbox refuses epoll (each
watch counts against a per-user quota an unprivileged host shares, see `seccomp.EPOLL`).
On Linux it makes itself non-dumpable, so no other process of its uid without the
capabilities of its user namespace (the program's own children) can read its memory.
"""

from __future__ import annotations

import asyncio
import builtins
import io
import json
import math
import os
import selectors
import sys
import tokenize
from typing import Any


class ToolCallError(Exception):
    """A tool call failed; `tool_name` names the tool, the message says why."""

    def __init__(self, tool_name: str, message: str) -> None:
        super().__init__(message)
        self.tool_name = tool_name
        self.message = message

    def __reduce__(self) -> Any:
        return (ToolCallError, (self.tool_name, self.message))


class _Channel:
    def __init__(self, read_fd: int, write_fd: int) -> None:
        self.read_fd = read_fd
        self.write_fd = write_fd
        self.partial: list[bytes] = []
        """The pieces of a line not finished yet: each byte is copied once, when it ends."""
        self.pending: dict[int, asyncio.Future[Any]] = {}
        self.next_id = 0
        self.argument_bytes = 0
        """The largest arguments a call may carry (0: no limit); the host refuses more."""

    def send(self, message: dict[str, Any]) -> None:
        self.send_text(json.dumps(message, ensure_ascii=False, allow_nan=False))

    def request(self, kind: str, args: str, **fields: str) -> asyncio.Future[Any]:
        """Ask the host (`kind`: a tool `call` or a `discover` question) with a fresh id, the
        `fields` and `args` (JSON text); the future its answer settles."""
        future = asyncio.get_event_loop().create_future()
        self.next_id += 1
        self.pending[self.next_id] = future
        head = json.dumps({"type": kind, "id": self.next_id, **fields}, ensure_ascii=False)
        self.send_text(head[:-1] + ', "args": ' + args + "}")
        return future

    def send_text(self, text: str) -> None:
        data = _utf8(text + "\n")
        view = memoryview(data)
        while view:
            written = os.write(self.write_fd, view)
            view = view[written:]

    def feed(self, chunk: bytes) -> list[bytes]:
        """The lines `chunk` completes; only the new chunk is searched, so reading a message
        costs time linear in its size, however it is split."""
        lines: list[bytes] = []
        start = 0
        end = chunk.find(b"\n")
        while end >= 0:
            if self.partial:
                self.partial.append(chunk[start:end])
                lines.append(b"".join(self.partial))
                self.partial = []
            else:
                lines.append(chunk[start:end])
            start = end + 1
            end = chunk.find(b"\n", start)
        if start < len(chunk):
            self.partial.append(chunk[start:])
        return lines

    def on_readable(self) -> None:
        chunk = os.read(self.read_fd, 65536)
        if not chunk:
            asyncio.get_event_loop().remove_reader(self.read_fd)
            for future in self.pending.values():
                if not future.done():
                    future.set_exception(ToolCallError("?", "the host closed the channel"))
            return
        for line in self.feed(chunk):
            message = json.loads(line)
            waiting = self.pending.pop(message["id"], None)
            if waiting is None or waiting.done():
                continue
            if message["ok"]:
                waiting.set_result(message.get("value"))
            else:
                waiting.set_exception(ToolCallError(message["name"], message["message"]))


MAX_DEPTH = 256
"""Containers a value may nest (`[[1]]` nests 2); the host refuses deeper values too."""


def _check_json(value: Any) -> None:
    """Refuse anything that does not survive a JSON round trip exactly; linear, and the
    path is spelled only for the value refused."""
    pending: list[tuple[Any, Any, int]] = [(value, None, 0)]
    while pending:
        item, where, depth = pending.pop()
        kind = type(item)
        if item is None or kind is bool or kind is str or kind is int:
            continue
        if isinstance(item, float):
            if not math.isfinite(item):
                raise TypeError(f"{_path(where)}: {item!r} is not a finite number")
            continue
        if isinstance(item, bool | str | int):
            continue  # a subclass: it encodes as its base type
        if not isinstance(item, list | dict):
            raise TypeError(f"{_path(where)}: {type(item).__name__} is not a JSON value")
        if depth >= MAX_DEPTH:
            raise TypeError(f"{_path(where)}: nested too deeply (more than {MAX_DEPTH} levels)")
        if isinstance(item, dict):
            for key in item:
                if not isinstance(key, str):
                    raise TypeError(f"{_path(where)}: key {key!r} is not a string")
            values, keys = list(item.values()), list(item)
        else:
            values = item
            keys = None
        if _all_plain(values):
            continue  # checked in bulk, at C speed
        # children pushed last first: the first bad value in document order is the one told
        for index in range(len(values) - 1, -1, -1):
            child = values[index]
            if type(child) not in _PLAIN:
                pending.append((child, (where, index if keys is None else keys[index]), depth + 1))


_PLAIN = frozenset({int, str, bool, type(None)})


def _all_plain(values: Any) -> bool:
    """Every value a plain scalar or a finite float (checked in bulk)."""
    types = set(map(type, values))
    if types <= _PLAIN:
        return True
    if types <= {int, float, bool}:
        try:
            return all(map(math.isfinite, values))
        except OverflowError:
            return False
    return False


def _path(where: Any) -> str:
    pieces: list[str] = []
    while where is not None:
        where, key = where
        pieces.append(f"[{key}]" if isinstance(key, int) else f".{key}")
    return "$" + "".join(reversed(pieces))


class SearchHits(str):
    """What `catalog.search` returns: the hits as text, one line per tool (print it), with
    `names` (best first), `matched` (how many tools matched) and `cut` (whether more
    matched than are shown)."""

    names: list[str]
    matched: int
    cut: bool

    def __new__(cls, answer: dict[str, Any]) -> SearchHits:
        hits = super().__new__(cls, answer["text"])
        hits.names = list(answer["names"])
        hits.matched = answer["matched"]
        hits.cut = answer["cut"]
        return hits


class _Catalog:
    """The tools, found from inside a program: `search`, `describe`, `servers`, `names`.
    A name of its own beside `tools`, so no tool can shadow it and it shadows no tool."""

    __slots__ = ("_channel",)
    _channel: _Channel

    def __init__(self, channel: _Channel) -> None:
        object.__setattr__(self, "_channel", channel)

    async def search(
        self, query: str | list[str], k: int = 8, server: str | None = None
    ) -> SearchHits:
        """The tools that best match `query` (or a list of queries, one per step of a
        task), at most `k`, from one `server` or all."""
        return SearchHits(await self._ask("search", {"query": query, "k": k, "server": server}))

    async def describe(self, name: str) -> str:
        """The tool's declaration as the SDK writes it, with the types it uses."""
        text: str = await self._ask("describe", {"name": name})
        return text

    async def servers(self) -> list[dict[str, Any]]:
        """Each server: `name` (the prefix of its tools' names), `summary`, `tools`."""
        found: list[dict[str, Any]] = await self._ask("servers", {})
        return found

    async def names(self, server: str | None = None) -> list[str]:
        """The tool names of one server (every tool's without one)."""
        found: list[str] = await self._ask("names", {"server": server})
        return found

    def _ask(self, op: str, args: dict[str, Any]) -> asyncio.Future[Any]:
        _check_json(args)
        encoded = json.dumps(args, ensure_ascii=False, allow_nan=False)
        return self._channel.request("discover", encoded, op=op)

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("catalog is read-only")

    def __repr__(self) -> str:
        return (
            "<catalog: search(query, k=8, server=None), describe(name), servers(), names(server)>"
        )


class _Tools:
    """`tools.name(args)` and `tools["name"](args)`; a call starts at once and returns an
    awaitable. A name no tool has is still sent: the host answers with the closest tools
    by search (the worker holds names, not the index)."""

    __slots__ = ("_channel", "_names")
    _channel: _Channel

    def __init__(self, names: list[str], channel: _Channel) -> None:
        object.__setattr__(self, "_names", frozenset(names))
        object.__setattr__(self, "_channel", channel)

    def _binding(self, name: str) -> Any:
        if name == "run_code":
            raise AttributeError("run_code cannot be called from a program")
        channel = self._channel

        def call(args: Any = None, /, **kwargs: Any) -> asyncio.Future[Any]:
            if args is not None and kwargs:
                raise TypeError(f"{name}: pass one dict of arguments or keywords, not both")
            arguments = kwargs if args is None else args
            try:  # the size first: a call that is too large is refused before any walk
                encoded = json.dumps(arguments, ensure_ascii=False, allow_nan=False)
            except (TypeError, ValueError, RecursionError):
                encoded = ""  # not JSON: the check below says where
            size = len(encoded.encode("utf-8", "surrogatepass"))
            if not (channel.argument_bytes and size > channel.argument_bytes):
                _check_json(arguments)
                encoded = encoded or json.dumps(arguments, ensure_ascii=False, allow_nan=False)
                size = len(encoded.encode("utf-8", "surrogatepass"))
            if channel.argument_bytes and size > channel.argument_bytes:
                raise ToolCallError(
                    name,
                    f"the arguments are {size} bytes of JSON; a tool call may carry at most "
                    f"{channel.argument_bytes} (pass a smaller value, or split the work)",
                )
            return channel.request("call", encoded, name=name)

        call.__name__ = name
        return call

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        return self._binding(name)

    def __getitem__(self, name: str) -> Any:
        try:
            return self._binding(name)
        except AttributeError as error:
            raise KeyError(str(error)) from None

    def __contains__(self, name: object) -> bool:
        return name in self._names

    def __dir__(self) -> list[str]:
        return sorted(self._names)

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("tools is read-only")

    def __repr__(self) -> str:
        return f"<tools: {', '.join(sorted(self._names))}>"


class _Logs(io.TextIOBase):
    """stdout and stderr: every complete line goes to the host as a log."""

    def __init__(self, channel: _Channel, limit: int) -> None:
        self.channel = channel
        self.partial = ""
        self.limit = limit
        self.total = 0

    def writable(self) -> bool:
        return True

    def write(self, text: str) -> int:
        self.total += len(text.encode("utf-8", "surrogatepass"))
        if self.limit and self.total > self.limit:
            # Stop the program at once: a huge print must not travel to the host first.
            self.channel.send(
                {
                    "type": "error",
                    "kind": "output-limit",
                    "message": f"the program printed more than {self.limit} bytes",
                }
            )
            os._exit(0)
        self.partial += text
        while "\n" in self.partial:
            line, self.partial = self.partial.split("\n", 1)
            self.channel.send({"type": "log", "text": line})
        return len(text)

    def flush_partial(self) -> None:
        if self.partial:
            self.channel.send({"type": "log", "text": self.partial})
            self.partial = ""


def _function_source(program: str) -> str:
    """The program as the body of `async def __program__()`: every line indented, except
    the continuation lines of multi-line strings, whose text must not change."""
    keep: set[int] = set()
    try:
        for token in tokenize.generate_tokens(io.StringIO(program).readline):
            if token.type == tokenize.STRING and token.end[0] > token.start[0]:
                keep.update(range(token.start[0] + 1, token.end[0] + 1))
    except (tokenize.TokenError, SyntaxError):
        pass  # compiling reports the syntax error, with its line
    lines = program.splitlines(keepends=True) or ["pass\n"]
    body = "".join(
        line if number in keep else "    " + line for number, line in enumerate(lines, start=1)
    )
    if not body.endswith("\n"):
        body += "\n"
    return "async def __program__():\n" + body + "    pass\n"


def _refuse_processes() -> None:
    """Starting processes would escape the run's accounting; refuse it."""

    def refuse(*args: Any, **kwargs: Any) -> Any:
        raise PermissionError("starting processes is not allowed in run_code programs")

    for name in (
        "fork",
        "forkpty",
        "vfork",
        "posix_spawn",
        "posix_spawnp",
        "system",
        "execv",
        "execve",
        "execvp",
        "execvpe",
        "execl",
        "execle",
        "execlp",
        "execlpe",
        "popen",
        "spawnv",
        "spawnve",
        "spawnvp",
        "spawnvpe",
    ):
        if hasattr(os, name):
            setattr(os, name, refuse)
    try:
        import _posixsubprocess

        _posixsubprocess.fork_exec = refuse
    except ImportError:
        pass
    subprocess = sys.modules.get("subprocess")  # asyncio imported it, with its own binding
    if subprocess is not None:
        subprocess._fork_exec = refuse  # type: ignore[attr-defined]
        subprocess._USE_POSIX_SPAWN = False  # type: ignore[attr-defined]


def _set_limits(limits: dict[str, Any]) -> None:
    try:
        import resource
    except ImportError:
        return
    cpu = limits.get("cpu_seconds")
    if cpu:
        resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))
    memory = limits.get("memory_bytes")
    if memory:
        resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    # Only in a sandbox: inside its user namespace RLIMIT_NPROC counts the sandbox's own
    # processes; outside, it would count every process of the host's user.
    processes = limits.get("processes")
    if processes:
        resource.setrlimit(resource.RLIMIT_NPROC, (processes, processes))
    file_bytes = limits.get("file_bytes")
    if file_bytes:
        resource.setrlimit(resource.RLIMIT_FSIZE, (file_bytes, file_bytes))
    descriptors = limits.get("descriptors")
    if descriptors:
        resource.setrlimit(resource.RLIMIT_NOFILE, (descriptors, descriptors))


def _utf8(text: str) -> bytes:
    """`text` as UTF-8. A program's strings may hold surrogates (`json.loads('"\\ud83d"')`,
    `"\\ud83d\\ude00"`), which UTF-8 cannot carry and the host refuses: a high and a low
    one side by side become the character they spell, a lone one U+FFFD. The JSON around
    them is unchanged: `json.dumps` leaves them inside strings."""
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        joined = text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")
        return joined.encode("utf-8")


def _cut(text: str, limit: int) -> str:
    """At most `limit` bytes of UTF-8 (0: no limit), with a note of what was cut."""
    if not limit or len(text) <= limit // 4:
        return text
    data = text.encode("utf-8", "surrogatepass")
    if len(data) <= limit:
        return text
    kept = data[: max(0, limit - 64)].decode("utf-8", "ignore")
    return f"{kept}... [cut: {len(data) - len(kept.encode('utf-8')):,} more bytes]"


def _traceback_text(error: BaseException, limit: int = 0) -> str:
    import traceback

    frames = [f for f in traceback.extract_tb(error.__traceback__) if f.filename == "<program>"]
    lines = [f"  line {(frame.lineno or 1) - 1}, in the program" for frame in frames][-20:]
    name = type(error).__name__
    try:
        said = str(error)
    except Exception:
        said = "<unprintable error>"
    text = _cut(f"{name}: {said}" if said else name, limit)
    return "\n".join(["Traceback (most recent call last):", *lines, text]) if lines else text


async def _main(channel: _Channel, start: dict[str, Any]) -> Any:
    source = _function_source(start["program"])
    namespace: dict[str, Any] = {
        "__name__": "__program__",
        "__builtins__": builtins,
        "tools": _Tools(start["tools"], channel),
        "catalog": _Catalog(channel),
        "ToolCallError": ToolCallError,
    }
    code = compile(source, "<program>", "exec", dont_inherit=True)
    exec(code, namespace)
    program = namespace.pop("__program__")
    return await program()


def _die_with_host(host: int | None) -> None:
    """Linux: the kernel sends SIGKILL to this process when its parent dies
    (PR_SET_PDEATHSIG), so a host killed outright leaves no worker behind. A host that died
    before that was set has already made this process an orphan: exit at once. `host` is
    the parent's pid as this process sees it; without it, the parent seen now stands in
    (which leaves open only a host that died while the interpreter was starting)."""
    if host is None:
        host = os.getppid()
    _prctl(1, 9)  # PR_SET_PDEATHSIG, SIGKILL
    if os.getppid() != host:
        os._exit(0)


def _prctl(option: int, value: int) -> None:
    """`prctl(option, value)` on Linux; nothing elsewhere (or without ctypes)."""
    if sys.platform.startswith("linux"):
        try:
            import ctypes

            ctypes.CDLL(None, use_errno=True).prctl(option, value, 0, 0, 0)
        except (ImportError, OSError, AttributeError):
            pass


def main() -> None:
    read_fd, write_fd = int(sys.argv[1]), int(sys.argv[2])
    if len(sys.argv) > 3:  # no sandbox: see that the worker dies with its host
        _die_with_host(int(sys.argv[3]))
    _prctl(4, 0)  # PR_SET_DUMPABLE: not dumpable
    channel = _Channel(read_fd, write_fd)
    loop = asyncio.SelectorEventLoop(selectors.PollSelector())
    # Started ahead of its run (a spare), the worker says when it is ready: from here on a
    # run costs only its program.
    channel.send({"type": "ready"})
    lines: list[bytes] = []
    while not lines:
        chunk = os.read(read_fd, 65536)
        if not chunk:
            return
        lines = channel.feed(chunk)
    # Nothing but `start` can come first: no call has been made, so no result is due.
    start = json.loads(lines[0])
    limits = start.get("limits", {})
    _set_limits(limits)
    _refuse_processes()
    channel.argument_bytes = int(limits.get("argument_bytes") or 0)
    output_bytes = int(limits.get("output_bytes") or 0)
    logs = _Logs(channel, output_bytes)
    sys.stdout = sys.stderr = logs
    asyncio.set_event_loop(loop)
    loop.add_reader(read_fd, channel.on_readable)
    try:
        value = loop.run_until_complete(_main(channel, start))
        logs.flush_partial()
        if value is None:
            channel.send({"type": "done"})
            return
        try:
            _check_json(value)
        except TypeError as error:
            channel.send(
                {
                    "type": "error",
                    "kind": "invalid-output",
                    "message": f"the program returned a value that is not JSON: {error}",
                }
            )
            return
        encoded = json.dumps(value, ensure_ascii=False, allow_nan=False)
        size = len(encoded.encode("utf-8", "surrogatepass"))
        if output_bytes and logs.total + size > output_bytes:
            message = f"the program printed and returned more than {output_bytes} bytes"
            channel.send({"type": "error", "kind": "output-limit", "message": message})
            return
        channel.send_text('{"type": "done", "result": ' + encoded + "}")
    except SyntaxError as error:
        logs.flush_partial()
        where = f" (line {error.lineno - 1})" if error.lineno else ""
        channel.send(
            {"type": "error", "kind": "exception", "message": f"SyntaxError: {error.msg}{where}"}
        )
    except MemoryError:
        logs.flush_partial()
        channel.send(
            {
                "type": "error",
                "kind": "exception",
                "message": "MemoryError: the program ran out of memory",
            }
        )
    except BaseException as error:
        logs.flush_partial()
        channel.send(
            {"type": "error", "kind": "exception", "message": _traceback_text(error, output_bytes)}
        )


if __name__ == "__main__":
    main()
