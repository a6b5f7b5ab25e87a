"""The secret that seals the cache's files (`seal`): the user's, never a repository's.

A cache folder may come with a repository, and a well-formed shard in it could say anything
about what a tool compiles to; only compiling the tool again could tell. So each shard
carries a code only the holder of this key can make, and the key lives where a repository
cannot put it: `CODEGEN_CACHE_KEY` (any secret text; CI jobs that share a cache folder
share it as a secret), else a file in the user's own cache folder
(`$XDG_CACHE_HOME/codegen/cache.key`, else `$HOME/.cache/codegen/cache.key`, else under the
account's home), made on first use with 32 random bytes written as hexadecimal text.

Either way the key is the SHA-256 of the secret text (surrounding white space left out), so
`CODEGEN_CACHE_KEY="$(cat ~/.cache/codegen/cache.key)"` gives another machine this one's key.

The file is only ever a regular file of this uid that nobody else can read or write, opened
without following a symbolic link; anything else is refused (`NoCacheKey`) rather than
trusted or replaced. It is made atomically: written to a temporary file (`O_EXCL`, mode
0600) in a folder of mode 0700, then hard-linked to its name, which fails if another process
got there first; that process's key is then read and used.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from collections.abc import Mapping
from dataclasses import dataclass

ENVIRONMENT = "CODEGEN_CACHE_KEY"
KEY_FILE = "cache.key"
MAX_SECRET_BYTES = 4096
"""Largest key file read: a secret is short, and a bound keeps a wrong file from costing."""
_ID_MESSAGE = b"codegen cache key id"
_NO_HARD_LINKS = frozenset(
    getattr(errno, name)
    for name in ("EPERM", "EOPNOTSUPP", "ENOTSUP", "ENOSYS", "EXDEV", "EMLINK")
    if hasattr(errno, name)
)
_READ_FLAGS = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
_CREATE_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
_CLOEXEC = getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0)


class NoCacheKey(Exception):
    """No key could be found or made: the message says why, and how to give one."""


@dataclass(frozen=True)
class CacheKey:
    """The HMAC-SHA256 key (`secret`, 32 bytes) and its public `name`: 16 hexadecimal
    digits derived from it, written beside each seal, so a file sealed under another key is
    told apart from one changed after it was written (the name reveals nothing of the key)."""

    secret: bytes
    name: str

    @staticmethod
    def of(text: bytes) -> CacheKey:
        import hashlib  # here, like `seal`'s `hmac`: the shares path of `codegen sdk` needs
        import hmac  # neither, and imports this module

        secret = hashlib.sha256(text.strip()).digest()
        return CacheKey(secret, hmac.digest(secret, _ID_MESSAGE, "sha256").hex()[:16])


def user_cache_key(environ: Mapping[str, str] | None = None) -> CacheKey:
    """This user's cache key: `CODEGEN_CACHE_KEY` when set (and not empty), else the key
    file's, made now if there is none. `NoCacheKey` when neither can be had."""
    environ = os.environ if environ is None else environ
    given = environ.get(ENVIRONMENT, "")
    if given.strip():
        return CacheKey.of(given.encode("utf-8", "surrogateescape"))
    path = key_file_path(environ)
    if path is None:
        raise NoCacheKey(
            "there is no home folder to keep a cache key in (HOME and XDG_CACHE_HOME are "
            f"not absolute paths, and the account has no home); set {ENVIRONMENT} to a secret"
        )
    for _ in range(2):  # lost a race to make it: the winner's key is there to read
        text = _read_key_file(path)
        if text is None:
            text = _made_key_file(path)
        if text is not None:
            return CacheKey.of(text)
    raise NoCacheKey(f"the cache key {path} appeared and vanished; run again")


def key_file_path(environ: Mapping[str, str]) -> str | None:
    """Where the user's key file is: only absolute folders count (a relative one would be
    the working folder's, which a repository fills); None when no home is known."""
    configured = environ.get("XDG_CACHE_HOME", "")
    if os.path.isabs(configured):
        return os.path.join(configured, "codegen", KEY_FILE)
    home = environ.get("HOME", "")
    if not os.path.isabs(home):
        home = _account_home()
    if not os.path.isabs(home):
        return None
    return os.path.join(home, ".cache", "codegen", KEY_FILE)


def _account_home() -> str:
    """This uid's home folder in the password database ("" when it has none)."""
    try:
        import pwd
    except ImportError:  # no password database on this system
        return ""
    try:
        return pwd.getpwuid(os.getuid()).pw_dir
    except KeyError:
        return ""


def _read_key_file(path: str) -> bytes | None:
    """The key file's secret text; None when there is no key file yet."""
    remedy = f"remove it (a new key is made), or set {ENVIRONMENT} to a secret"
    try:
        descriptor = os.open(path, _READ_FLAGS | _CLOEXEC)
    except (FileNotFoundError, NotADirectoryError):  # making it says what is in the way
        return None
    except OSError as error:
        if error.errno == errno.ELOOP:
            link = "is a symbolic link, which is never followed"
            raise NoCacheKey(f"the cache key {path} {link}; {remedy}") from None
        reason = error.strerror or error
        raise NoCacheKey(f"cannot read the cache key {path} ({reason}); {remedy}") from None
    try:
        problem = _unfit(os.fstat(descriptor))
        if problem is not None:
            raise NoCacheKey(f"the cache key {path} {problem}; {remedy}")
        text = os.read(descriptor, MAX_SECRET_BYTES + 1)
    except OSError as error:
        reason = error.strerror or error
        raise NoCacheKey(f"cannot read the cache key {path} ({reason}); {remedy}") from None
    finally:
        os.close(descriptor)
    if not text.strip():
        raise NoCacheKey(f"the cache key {path} is empty; {remedy}")
    if len(text) > MAX_SECRET_BYTES:
        raise NoCacheKey(f"the cache key {path} is larger than {MAX_SECRET_BYTES} bytes; {remedy}")
    return text


def _unfit(status: os.stat_result) -> str | None:
    """What makes a file unfit to hold the key: anything but a regular file of this uid
    that only its owner can read or write (as for an SSH private key)."""
    if not stat.S_ISREG(status.st_mode):
        return "is not a regular file"
    if not hasattr(os, "geteuid"):  # no uids or modes to check on this system
        return None
    if status.st_uid != os.geteuid():
        return "belongs to another user"
    if status.st_mode & 0o077:
        mode = stat.S_IMODE(status.st_mode)
        return f"is open to other users (mode {mode:04o}: `chmod 600` it)"
    return None


def _made_key_file(path: str) -> bytes | None:
    """A new key file's secret text; None when another process made the file first."""
    folder = os.path.dirname(path)
    text = os.urandom(32).hex().encode("ascii") + b"\n"
    temporary = os.path.join(folder, f".{KEY_FILE}.{os.urandom(6).hex()}.tmp")
    try:
        os.makedirs(folder, mode=0o700, exist_ok=True)
        _write_new(temporary, text)
        try:
            os.link(temporary, path)
        except FileExistsError:
            return None
        except OSError as error:
            if error.errno not in _NO_HARD_LINKS:
                raise
            try:  # no hard links on this file system: create the file itself, exclusively
                _write_new(path, text)
            except FileExistsError:
                return None
    except OSError as error:
        raise NoCacheKey(
            f"cannot make the cache key {path} ({error.strerror or error}); make {folder} "
            f"writable, or set {ENVIRONMENT} to a secret"
        ) from None
    finally:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
    return text


def _write_new(path: str, data: bytes) -> None:
    """Create `path` (never through a link, never over a file) readable by its owner only,
    holding `data`, flushed to the disk so a crash cannot leave it empty."""
    descriptor = os.open(path, _CREATE_FLAGS | _CLOEXEC, 0o600)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(descriptor, view) :]
        os.fsync(descriptor)
    except BaseException:
        os.close(descriptor)
        os.unlink(path)
        raise
    os.close(descriptor)
