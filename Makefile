# Developer shortcuts. The README's two quick-start commands need none of them.
PYTHON ?= python3

.PHONY: install test fast check snap lint typecheck

install:
	$(PYTHON) -m pip install -e '.[test]'

# The whole suite, on every core (tests/conftest.py turns on pytest-xdist for directories).
test:
	$(PYTHON) -m pytest

# The daily loop: everything but the checks marked slow.
fast:
	$(PYTHON) -m pytest -m "not slow"

# The linters and the type check (scripts/test, and so CI, runs them before the suite).
check: lint typecheck test

lint:
	$(PYTHON) -m ruff check codegen tests bench
	$(PYTHON) -m ruff format --check codegen tests bench

typecheck:
	$(PYTHON) -m mypy codegen

# Rewrite the golden files under snapshots/ after an intended change (only the tests marked
# golden run); review the diff. A whole run fails on a golden file that no test uses.
snap:
	$(PYTHON) -m pytest tests -m golden --snapshot-update -q
