"""The checker processes that type-check run_code programs before they run: `ty server`
for Python (`python_checker.py`) and the `typescript` package's compiler in Node for
TypeScript (`typescript_checker.py`, `typescript_server.py`, `typescript_check_server.js`),
each kept warm per tool set in the runtime's sandbox and spoken to over LSP framing
(`lsp.py`). What they return, and what a run does with it, is `codemode.checks`'; the
registry finds these by module name (`checks.checkers.FACTORIES`), so nothing in `codemode`
imports this layer."""
