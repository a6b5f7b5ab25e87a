"""What a run does with its check: the mode decides, the texts say what was found.

- `refuse`: a definite mistake stops the run before its first call; the failure's message
  lists each one as `line N: message` with its help (the closest tools, or the tool's
  declaration). Anything less than certain lets the run go on and says nothing (a checker
  that timed out or failed: a note in the result).
- `warn`: the run goes on; everything found goes with its result.
- `off`: nothing is checked.
"""

from __future__ import annotations

from collections.abc import Sequence

from .outcome import CheckMode, CheckOutcome, ProgramDiagnostic

SHOWN = 10
"""Diagnostics a message lists in full; the others are counted."""
NOTE_CHARACTERS = 4000
"""Longest note a run's result carries."""


def refusal(outcome: CheckOutcome | None, mode: CheckMode) -> str | None:
    """The message of a refused run, or None when the run goes on."""
    if outcome is None or mode != "refuse" or outcome.status != "checked":
        return None
    mistakes = outcome.refusing
    if not mistakes:
        return None
    count = f"{len(mistakes)} definite mistake{'s' * (len(mistakes) != 1)}"
    head = (
        f"the program was not run: checked against the tools' declarations, it has {count}, "
        "and no tool was called. Fix them and run it again."
    )
    return "\n".join([head, *_listed(mistakes)])


def note(outcome: CheckOutcome | None, mode: CheckMode) -> str:
    """What a run that went on carries of its check ("" for nothing): under `warn`, every
    diagnostic; in either mode, why a program was not checked (a checker that timed out or
    failed). Under `refuse`, what is not certain is left out: a run that passed says nothing."""
    if outcome is None or mode == "off":
        return ""
    if outcome.status in ("timeout", "crashed"):
        return outcome.note
    found = outcome.diagnostics if mode == "warn" else ()
    if not found:
        return ""
    count = f"{len(found)} possible mistake{'s' * (len(found) != 1)}"
    text = "\n".join([f"the check before the run found {count}:", *_listed(found)])
    if len(text) > NOTE_CHARACTERS:
        text = text[: NOTE_CHARACTERS - 4].rstrip() + " ..."
    return text


def _listed(found: Sequence[ProgramDiagnostic]) -> list[str]:
    lines: list[str] = []
    helped: set[str] = set()
    for each in sorted(found, key=lambda d: (d.line, d.column))[:SHOWN]:
        lines.append(f"line {each.line}: {each.message}")
        if each.help and each.help not in helped:
            helped.add(each.help)
            lines.extend("  " + line for line in each.help.split("\n"))
    if len(found) > SHOWN:
        lines.append(f"(and {len(found) - SHOWN} more)")
    return lines
