"""The model-facing SDK sections Code Mode puts in a prompt: `framing` wraps the run_code
instructions around them; `python` (a `.pyi` stub) and `typescript` (`declare const tools`)
render them; `short_names` places the short type names and `dittos` the repeated field
comments, tool by tool in catalog order."""
