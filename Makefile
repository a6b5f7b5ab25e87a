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

# Everything CI runs, plus lint and the type check of the package itself.
check: lint typecheck test

lint:
	$(PYTHON) -m ruff check codegen tests
	$(PYTHON) -m ruff format --check codegen

typecheck:
	$(PYTHON) -m mypy codegen

# Rewrite the golden files under snapshots/ after an intended change; review the diff.
snap:
	$(PYTHON) -m pytest tests --snapshot-update -q
