"""`--strict`: warnings fail a run as errors do.

A warning says a definition lost something on the way (a keyword no SDK can express, a
built-in tool skipped, a `$ref` not followed), and a CI job wants that to fail the check,
not scroll by. Under `--strict` (or `strict = true` in `[tool.codegen]`, which `--no-strict`
overrides) every command that reports the sources' diagnostics treats their warnings as it
treats errors: they are printed even under `--quiet`, the exit status is 1 and nothing is
written.
"""

from __future__ import annotations

from collections.abc import Iterable

from ..errors import Diagnostic


def strict_failure(
    command: str, diagnostics: Iterable[Diagnostic], strict: bool, writes: bool = True
) -> str | None:
    """Why `command` fails under `--strict` (its warnings, counted), or None when it does
    not: not strict, or no warning. `writes`: the command would have written something."""
    if not strict:
        return None
    warnings = sum(1 for diagnostic in diagnostics if not diagnostic.is_error)
    if not warnings:
        return None
    verb = "counts" if warnings == 1 else "count"
    nothing = "; nothing written" if writes else ""
    return (
        f"{command}: --strict: {warnings} warning{'s' * (warnings != 1)} {verb} as errors{nothing}"
    )
