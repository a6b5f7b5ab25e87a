"""The `run_code` transport: the one tool a model calls under Code Mode.

Its definition depends on the program language only through the two texts of that
language's flavor (the tool description and the `code` parameter description); the input
and output shapes are the same for every language.
"""

from __future__ import annotations

import copy
from typing import Any

from ..presentation.languages import run_code_flavor

RUN_CODE = "run_code"
"""The reserved name of the transport tool."""

DESCRIPTION_PARAMETER = (
    "What the program does, in five to ten words of active voice; shown to the user while "
    'it runs. For example: "Count open issues by label", "Read the config and list its '
    'keys", "Compare the weather in three cities".'
)

OUTPUT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "logs": {
            "type": "array",
            "items": {"type": "string"},
            "description": "Lines the program printed, in order.",
        },
        "result": {"description": "The JSON value the program returned, if it returned one."},
        "cut": {
            "type": "string",
            "description": "What was cut to fit what clients accept, if anything was: the "
            "logs and the result keep their start, and stay valid JSON.",
        },
        "check": {
            "type": "string",
            "description": "What the check before the run found and did not refuse the run "
            "for, if anything, or why the program was not checked.",
        },
    },
    "required": ["logs"],
    "additionalProperties": False,
}


def run_code_tool(language: str | None, checked: bool = True) -> dict[str, Any]:
    """The `run_code` definition (`name`, `description`, `inputSchema`, `outputSchema`) in
    the flavor of `language`; `None` (no code runtime: offline harvesting) gives the
    TypeScript flavor. `checked`: the description says programs are checked before they
    run (a registry's `check` is not `off`). An unknown language raises
    `UnknownLanguageError`."""
    flavor = run_code_flavor(language)
    return {
        "name": RUN_CODE,
        "description": flavor.described(checked),
        "inputSchema": {
            "type": "object",
            "properties": {
                "code": {"type": "string", "description": flavor.code},
                "description": {"type": "string", "description": DESCRIPTION_PARAMETER},
            },
            "required": ["code", "description"],
            "additionalProperties": False,
        },
        "outputSchema": copy.deepcopy(OUTPUT_SCHEMA),
    }


IN_SYSTEM_PROMPT = "described in the system prompt"
"""The phrase of every flavor's description that `with_sdk` rewrites."""


def with_sdk(definition: dict[str, Any], section: str) -> dict[str, Any]:
    """The `run_code` definition carrying the SDK section in its own description, for hosts
    whose clients show tool descriptions but no system prompt text of the server's."""
    description = definition["description"]
    if description.count(IN_SYSTEM_PROMPT) != 1:
        raise ValueError("the run_code description does not point at the system prompt once")
    text = description.replace(IN_SYSTEM_PROMPT, "described below")
    return {**definition, "description": f"{text}\n\n{section}"}
