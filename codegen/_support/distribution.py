"""The distribution this package is installed from, and the other one that shares its name.

The package imports as `codegen`, but it is published as `tool-codegen`: the name `codegen`
on the public package index belongs to another project, which also installs a top-level
`codegen` package. Versions are therefore looked up by the distribution name, never by the
import name (which would report the other project's version when both are installed).
"""

from __future__ import annotations

DISTRIBUTION = "tool-codegen"
"""The name `pip install` takes."""

CLASHING = "codegen"
"""Another project's distribution that installs a package of the same import name."""


def _version(name: str) -> str | None:
    """The installed version of the distribution `name`, or None when it is not installed."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(name)
    except PackageNotFoundError:
        return None


def installed_version() -> str:
    """This distribution's version, or `0+unknown` when it runs from a source tree."""
    return _version(DISTRIBUTION) or "0+unknown"


def clash() -> str | None:
    """A warning when the other `codegen` distribution is installed in this environment too:
    both write the same `codegen/` folder, so whichever was installed last has overwritten
    files of the other."""
    other = _version(CLASHING)
    if other is None:
        return None
    return (
        f"the distribution {CLASHING!r} {other} (another project) is installed beside "
        f"{DISTRIBUTION!r}; both install the package `codegen`, so one has overwritten the "
        f"other's files: uninstall both and reinstall {DISTRIBUTION!r} alone, or keep each in "
        "its own virtual environment (pipx and uvx do that)"
    )
