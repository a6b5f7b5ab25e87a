"""Fitting a run's output into what MCP clients accept, cutting only between whole values.

Claude Code refuses a tool result over 25,000 tokens, and a `run_code` result can be any
size. `fit_run_output` cuts it until both its texts are within a budget of `o200k_base`
tokens, and says what it cut (paths such as `$.items`, `$.data[3].text`): `estimate` counts,
`bound` is the cheap additive upper bound the `cutter` plans with, `o200k` the tokenizer
that ships with the package, `fit` the calibration between them.
"""

from .estimate import estimate_tokens
from .fit import DEFAULT_RESULT_TOKENS, MIN_BUDGET, Fitted, fit_run_output, fit_text, run_text

__all__ = [
    "DEFAULT_RESULT_TOKENS",
    "MIN_BUDGET",
    "Fitted",
    "estimate_tokens",
    "fit_run_output",
    "fit_text",
    "run_text",
]
