"""Helpers shared by the benchmarks."""

from __future__ import annotations

from collections.abc import Sequence

from codegen import ir
from codegen._support.recursion_limit import deep_recursion
from codegen.ir_build.builder import SchemaInput, build_catalog
from codegen.load.definitions import ToolDefinition
from codegen.normalize import normalize_schema
from codegen.validate.checks import draft_of


def build_without_validation(definitions: Sequence[ToolDefinition]) -> ir.Catalog:
    """Normalize and build, skipping meta-schema validation: the work a peer's `compile()`
    or `generate()` does (they check no meta-schema), for a like-for-like comparison."""
    inputs = []
    with deep_recursion():
        for tool in definitions:
            draft = draft_of(tool.input_schema)[0]
            output = (
                normalize_schema(tool.output_schema, draft_of(tool.output_schema)[0], tool.dialect)
                if tool.output_schema is not None
                else None
            )
            inputs.append(
                SchemaInput(
                    name=tool.name,
                    description=tool.description,
                    title=tool.title,
                    source=tool.source,
                    input=normalize_schema(tool.input_schema, draft, tool.dialect),
                    input_pointer=tool.input_pointer,
                    output=output,
                    output_pointer=tool.output_pointer,
                    annotations=tool.annotations,
                    raw_input=tool.input_schema,
                    raw_output=tool.output_schema,
                )
            )
        return build_catalog(inputs)[0]
