"""The audit log: one JSON line per call, appended and written through as it ends.

Each line: `time` (UTC, ISO 8601), `run` (the run_code call a nested call belongs to),
`client`, `server` (the namespace), `tool`, `decision` (`allowed`, `asked-accepted`,
`asked-declined`, `denied`), `answer` (how an ask was answered, when one was made),
`because`, `outcome` (`ok`, or the error code), `duration_ms`, `result_bytes` and
`arguments_sha256` (a digest of the arguments as canonical JSON). The arguments
themselves only with `arguments=True`: they carry secrets.

The file is opened once, append-only, 0600, never through a symbolic link; each line is one
`write` (an append is atomic for a regular file), so a crash leaves whole lines. Past
`max_bytes` it is rotated: `FILE` becomes `FILE.1`, `FILE.1` becomes `FILE.2`, up to
`backups`. A line that cannot be written is reported once in the log and never fails the
call.
"""

from __future__ import annotations

import datetime
import errno
import hashlib
import json
import logging
import os
import stat
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..calls.execution import Execution
    from ..calls.results import ToolResult

log = logging.getLogger("codegen.codemode.audit")

MAX_BYTES = 10 * 1024 * 1024
BACKUPS = 5


class AuditLogError(Exception):
    """The log cannot be opened where the user asked (the message says why)."""


def arguments_digest(arguments: Any) -> str:
    text = json.dumps(arguments, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


@dataclass(frozen=True, slots=True)
class AuditSettings:
    path: Path
    arguments: bool = False
    max_bytes: int = MAX_BYTES
    backups: int = BACKUPS


class AuditLog:
    """An observer for `ToolRegistry.observers` that writes the audit lines."""

    def __init__(self, settings: AuditSettings, client: Any = None) -> None:
        self.settings = settings
        self.client = client
        """A callable giving the current call's client name (serve's), or None."""
        self._lock = threading.Lock()
        self._failed = False
        self._fd: int | None = _open(settings.path)

    def __call__(self, execution: Execution | None, result: ToolResult) -> None:
        if execution is None:
            return
        self.write(self.entry(execution, result))

    def entry(self, execution: Execution, result: ToolResult) -> dict[str, Any]:
        decided = execution.decided
        name = execution.name
        entry: dict[str, Any] = {
            "time": datetime.datetime.now(datetime.UTC).isoformat(timespec="milliseconds"),
            "run": execution.root_call_id if execution.nested else execution.call_id,
            "client": self.client() if self.client is not None else None,
            "server": name.split("__", 1)[0] if "__" in name else None,
            "tool": name,
            "decision": decided.decision,
            "answer": decided.answer,
            "because": decided.because,
            "outcome": "ok" if result.error is None else result.error.code.value,
            "duration_ms": round(decided.elapsed() * 1000, 1),
            "result_bytes": len(result.content.encode("utf-8", "surrogatepass")),
            "arguments_sha256": arguments_digest(execution.arguments),
        }
        if self.settings.arguments:
            entry["arguments"] = execution.arguments
        return entry

    def write(self, entry: dict[str, Any]) -> None:
        line = (json.dumps(entry, ensure_ascii=False, default=str) + "\n").encode(
            "utf-8", "surrogatepass"
        )
        with self._lock:
            try:
                if self._fd is None:
                    self._fd = _open(self.settings.path)
                if os.fstat(self._fd).st_size + len(line) > self.settings.max_bytes:
                    self._rotate()
                os.write(self._fd, line)
            except (OSError, AuditLogError) as error:
                if not self._failed:
                    self._failed = True
                    log.error("the audit log %s cannot be written: %s", self.settings.path, error)

    def _rotate(self) -> None:
        path = self.settings.path
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None
        for number in range(self.settings.backups - 1, 0, -1):
            older = path.with_name(f"{path.name}.{number}")
            if older.exists():
                os.replace(older, path.with_name(f"{path.name}.{number + 1}"))
        if self.settings.backups > 0:
            os.replace(path, path.with_name(f"{path.name}.1"))
        else:
            os.unlink(path)
        self._fd = _open(path)

    def close(self) -> None:
        with self._lock:
            if self._fd is not None:
                os.close(self._fd)
                self._fd = None


def _open(path: Path) -> int:
    flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC | os.O_NOFOLLOW | os.O_NONBLOCK
    try:
        fd = os.open(path, flags, 0o600)
    except OSError as error:
        why = (
            "it is a symbolic link"
            if error.errno == errno.ELOOP
            else (error.strerror or str(error))
        )
        raise AuditLogError(f"cannot open the audit log {path}: {why}") from None
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise AuditLogError(f"cannot use {path} as the audit log: it is not a regular file")
    return fd
