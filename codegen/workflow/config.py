"""The `[tool.codegen]` table of `pyproject.toml`, so `codegen build` needs no arguments.

A repository that commits its generated SDKs states once where the tool definitions are and
where the outputs go; the same table then drives a developer's `codegen build`, CI's
`codegen build --check` and the pre-commit hook. The nearest `pyproject.toml` with a
`[tool.codegen]` table, from the current directory upwards, is used (a `pyproject.toml`
without the table does not stop the search, as in a monorepo where the table sits at the
root). Paths in the table are relative to the directory of that `pyproject.toml`, so the
result does not depend on where the command is run, and stay inside that directory
(`project_paths`: a cloned repository's table never writes, caches or reads elsewhere).
Every value is checked here, and a wrong one is a usage error naming its key: a typo must
not silently change what is built.
"""

from __future__ import annotations

import keyword
from collections.abc import Mapping
from pathlib import Path
from types import MappingProxyType
from typing import Any, NamedTuple

from .._support.user_files import display_path, read_toml
from ..errors import UsageError
from ..render.targets import TARGET_NAMES
from .project_paths import PATH_KEYS, check_inside_project

TABLE = "tool.codegen"

DEFAULT_MODULE = "tools"

_DEPRECATED_KEYS = {"format": "input_format"}
"""Old key: its new name. The old one still works, with a warning."""
_IGNORED_KEYS = {
    "sandbox": "a project's files never choose how run_code programs are contained (a "
    "cloned repository controls them); codegen serve takes --sandbox or its --config",
}
"""Keys that once meant something and are now ignored, with a warning saying why."""

SOURCE_COMMANDS = ("validate", "sdk", "prompt", "catalog", "build", "diff")
"""The commands that read tool definitions."""

HONOURED_BY: Mapping[str, tuple[str, ...]] = MappingProxyType(
    {
        "sources": SOURCE_COMMANDS,
        "out": ("build",),
        "languages": ("catalog", "build"),
        "module": ("build",),
        "namespace": SOURCE_COMMANDS,
        "input_format": SOURCE_COMMANDS,
        "catalogs": ("build",),
        "catalog_title": ("catalog", "build"),
        "cache": ("sdk", "build"),
        "strict": SOURCE_COMMANDS,
        "serve": ("serve",),
    }
)
"""The one place that says which keys the table has and which command each applies to. What
a source means (its files, how its records are read, how its tools are named) is the same for
every command that reads sources; `diff` takes `sources` for `--git` (OLD and NEW are always
named). `cache` serves the commands that have `--cache`; `strict` (warnings fail the run,
`workflow.strict`) every command that reports the sources' diagnostics; `languages` also
decides the language the `catalog` command spells types in, as `build` spells its catalogs
(TypeScript unless only Python is built). `serve` is the `codegen serve` table, read (`codegen.mcp.config`)
only from the file `codegen serve --config` names, never found from the working folder.
`ProjectConfig`, `Given` and `Settings` hold the other keys, in this order
(`tests/workflow/test_project_config.py` checks that they match)."""
_KEYS = tuple(HONOURED_BY)
"""The table's keys, in the order messages list them."""


class ProjectConfig(NamedTuple):
    """The table's values, paths already resolved against the table's directory; None
    where the table leaves a key out. (A named tuple, as `Given` and `Settings` are.)"""

    path: Path
    sources: tuple[Path, ...] | None = None
    out: Path | None = None
    languages: tuple[str, ...] | None = None
    module: str | None = None
    namespace: bool | None = None
    input_format: str | None = None
    catalogs: tuple[str, ...] | None = None
    """Which docs catalogs `codegen build` writes (`md`, `json`, `html`)."""
    catalog_title: str | None = None
    """The heading of the Markdown and HTML docs catalogs (`codegen catalog --title`)."""
    cache: Path | None = None
    strict: bool | None = None
    """Warnings fail the run, as errors do (`--strict`)."""
    warnings: tuple[str, ...] = ()
    """Deprecated spellings the table uses, for the command to print."""


class Given(NamedTuple):
    """What the command line says about each key of the table; None where it says
    nothing (paths as the user wrote them). (Named tuples, not dataclasses: every command
    that reads sources imports this module, and a dataclass costs a cold run a millisecond.)"""

    sources: tuple[str, ...] | None = None
    out: str | None = None
    languages: tuple[str, ...] | None = None
    module: str | None = None
    namespace: bool | None = None
    input_format: str | None = None
    catalogs: tuple[str, ...] | None = None
    catalog_title: str | None = None
    cache: str | None = None
    strict: bool | None = None


class Settings(NamedTuple):
    """What one command runs with: each key from the command line, else from the table when
    `HONOURED_BY` says the command reads that key, else its default (None where the command
    decides: no sources, no output directory, every language or catalog). Paths from the
    table are shown as `display_path` shows them."""

    command: str
    config: ProjectConfig | None
    sources: tuple[str, ...] = ()
    out: str | None = None
    languages: tuple[str, ...] | None = None
    module: str = DEFAULT_MODULE
    namespace: bool = False
    input_format: str = "auto"
    catalogs: tuple[str, ...] | None = None
    catalog_title: str | None = None
    cache: str | None = None
    strict: bool = False


_GIVEN_KEYS = Given._fields


def settings_for(command: str, given: Given, config: ProjectConfig | None) -> Settings:
    """Merge the command line over the table for `command`: the command line wins; the table
    fills in only the keys `HONOURED_BY` gives the command."""
    values: dict[str, Any] = {}
    for key in _GIVEN_KEYS:
        value = getattr(given, key)
        if value is None and config is not None and command in HONOURED_BY[key]:
            value = _shown(_inside_project(config, key, getattr(config, key)))
        if value is not None:
            values[key] = value
    return Settings(command, config, **values)


def _inside_project(config: ProjectConfig, key: str, value: Any) -> Any:
    """A table's value, once every path in it is inside the project
    (`project_paths.check_inside_project`); only values a command takes are checked, so a
    path the command line replaces never is."""
    if key in PATH_KEYS and value is not None:
        for path in value if isinstance(value, tuple) else (value,):
            check_inside_project(config.path, key, path)
    return value


def catalog_language(languages: tuple[str, ...] | None) -> str:
    """The language a docs catalog spells types in: TypeScript unless only Python is built
    (`build`'s catalogs and the `catalog` command alike)."""
    return "python" if languages is not None and "typescript" not in languages else "typescript"


def project_settings(command: str, given: Given, start: Path | None = None) -> Settings:
    """`settings_for` with the nearest `[tool.codegen]` table (`find_config`)."""
    return settings_for(command, given, find_config(start))


def _shown(value: Any) -> Any:
    """A table's value as a command takes it: paths as `display_path` shows them."""
    if isinstance(value, Path):
        return display_path(value)
    if isinstance(value, tuple) and value and isinstance(value[0], Path):
        return tuple(display_path(path) for path in value)
    return value


def find_config(start: Path | None = None) -> ProjectConfig | None:
    """The nearest `[tool.codegen]` table from `start` (default: the current directory)
    upwards, or None when there is none."""
    directory = (start or Path.cwd()).resolve()
    for folder in (directory, *directory.parents):
        candidate = folder / "pyproject.toml"
        if candidate.is_file():
            config = load_config(candidate)
            if config is not None:
                return config
    return None


def load_config(path: Path) -> ProjectConfig | None:
    """The `[tool.codegen]` table of one `pyproject.toml`; None when it has no such table."""
    document = read_toml(path)
    tool = document.get("tool")
    if not isinstance(tool, dict) or "codegen" not in tool:
        return None
    table = tool["codegen"]
    if not isinstance(table, dict):
        raise UsageError(f"{path}: [{TABLE}] must be a table, not {_kind(table)}")
    return parse_table(table, path)


def parse_table(table: dict[str, Any], path: Path) -> ProjectConfig:
    """Check every key and value of the table; the first problem is a `UsageError`."""
    warnings = []
    for key in table:
        if key in _DEPRECATED_KEYS:
            new_key = _DEPRECATED_KEYS[key]
            if new_key in table:
                raise UsageError(
                    f"{path}: [{TABLE}] {key!r} and {new_key!r} both given; keep {new_key!r}"
                )
            warnings.append(
                f"{path}: warning: [{TABLE}] {key!r} is deprecated; name it {new_key!r}"
            )
        elif key in _IGNORED_KEYS:
            warnings.append(f"{path}: warning: [{TABLE}] {key!r} is ignored: {_IGNORED_KEYS[key]}")
        elif key not in _KEYS:
            known = ", ".join(_KEYS)
            raise UsageError(f"{path}: [{TABLE}] unknown key {key!r} (known: {known})")
    base = path.parent
    sources = table.get("sources")
    out = table.get("out")
    languages = table.get("languages")
    module = table.get("module")
    namespace = table.get("namespace")
    fmt_key = "format" if "format" in table else "input_format"
    fmt = table.get(fmt_key)
    catalogs = table.get("catalogs")
    catalog_title = table.get("catalog_title")
    cache = table.get("cache")
    strict = table.get("strict")
    return ProjectConfig(
        path=path,
        sources=(
            None
            if sources is None
            else tuple(base / s for s in _strings(sources, "sources", path, nonempty=True))
        ),
        out=None if out is None else base / _string(out, "out", path),
        languages=(
            None
            if languages is None
            else parse_languages(_strings(languages, "languages", path, nonempty=True), path)
        ),
        module=None if module is None else check_module(_string(module, "module", path), path),
        namespace=None if namespace is None else _boolean(namespace, "namespace", path),
        input_format=(
            None if fmt is None else check_format(_string(fmt, fmt_key, path), path, fmt_key)
        ),
        catalogs=(
            None
            if catalogs is None
            else parse_catalogs(_strings(catalogs, "catalogs", path, nonempty=False), path)
        ),
        catalog_title=(
            None if catalog_title is None else _string(catalog_title, "catalog_title", path)
        ),
        cache=None if cache is None else base / _string(cache, "cache", path),
        strict=None if strict is None else _boolean(strict, "strict", path),
        warnings=tuple(warnings),
    )


def parse_languages(
    names: list[str] | tuple[str, ...], where: Path | None = None
) -> tuple[str, ...]:
    """Known SDK languages in output order, duplicates removed."""
    for name in names:
        if name not in TARGET_NAMES:
            known = ", ".join(TARGET_NAMES)
            raise UsageError(
                f"{_where(where, 'languages')}unknown language {name!r} (known: {known})"
            )
    if not names:
        raise UsageError(f"{_where(where, 'languages')}at least one language is needed")
    return tuple(language for language in TARGET_NAMES if language in names)


def check_module(name: str, where: Path | None = None) -> str:
    """The module name becomes `NAME.py`, so it must be importable: an identifier that is
    not a keyword."""
    if not name.isidentifier() or keyword.iskeyword(name):
        raise UsageError(
            f"{_where(where, 'module')}{name!r} is not a valid Python module name "
            "(an identifier that is not a keyword)"
        )
    return name


def check_format(name: str, where: Path | None = None, key: str = "input_format") -> str:
    from ..load.formats import INPUT_FORMATS

    known = ("auto", *INPUT_FORMATS)
    if name not in known:
        raise UsageError(
            f"{_where(where, key)}unknown input format {name!r} (known: {', '.join(known)})"
        )
    return name


def parse_catalogs(
    names: list[str] | tuple[str, ...], where: Path | None = None
) -> tuple[str, ...]:
    """Known catalog formats in output order, duplicates removed; none is allowed (no
    catalogs written)."""
    from ..render.catalog import CATALOG_FORMATS  # not at import: every command reads the table

    for name in names:
        if name not in CATALOG_FORMATS:
            known = ", ".join(CATALOG_FORMATS)
            raise UsageError(
                f"{_where(where, 'catalogs')}unknown catalog format {name!r} (known: {known})"
            )
    return tuple(fmt for fmt in CATALOG_FORMATS if fmt in names)


def _where(path: Path | None, key: str) -> str:
    return f"{path}: [{TABLE}] {key}: " if path is not None else ""


def _kind(value: Any) -> str:
    names = {bool: "a boolean", int: "an integer", float: "a float", str: "a string"}
    for kind, name in names.items():
        if type(value) is kind:
            return name
    if isinstance(value, list):
        return "an array"
    if isinstance(value, dict):
        return "a table"
    return f"a {type(value).__name__}"


def _string(value: Any, key: str, path: Path) -> str:
    if not isinstance(value, str) or not value:
        raise UsageError(
            f"{path}: [{TABLE}] {key}: expected a non-empty string, got {_kind(value)}"
        )
    return value


def _strings(value: Any, key: str, path: Path, *, nonempty: bool) -> list[str]:
    if not isinstance(value, list):
        raise UsageError(
            f"{path}: [{TABLE}] {key}: expected an array of non-empty strings, got {_kind(value)}"
        )
    for index, item in enumerate(value):
        if not isinstance(item, str) or not item:
            got = "an empty string" if item == "" else _kind(item)
            raise UsageError(
                f"{path}: [{TABLE}] {key}: expected an array of non-empty strings, "
                f"entry {index} is {got}"
            )
    if nonempty and not value:
        raise UsageError(f"{path}: [{TABLE}] {key}: expected at least one entry")
    return list(value)


def _boolean(value: Any, key: str, path: Path) -> bool:
    if not isinstance(value, bool):
        raise UsageError(f"{path}: [{TABLE}] {key}: expected a boolean, got {_kind(value)}")
    return value
