"""Helpers the tests share (not tests themselves): checks, strategies, sandboxed hosts,
Node setups, process sweeps. `tests/` is on `sys.path` (conftest.py lives there), so a
test imports them as `from support.sdk_checks import ...`."""
