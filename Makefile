# Developer shortcuts. The README's two quick-start commands need none of them.
PYTHON ?= python3

.PHONY: install test check snap lint typecheck

install:
	$(PYTHON) -m pip install -e '.[test]'

test:
	$(PYTHON) -m pytest

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
