"""Run the `codegen` CLI once with a timer around each pipeline stage; print the times as JSON.

Used by `bench_endtoend.py` as a child process (one fresh interpreter per run, like the
CLI itself):

    python bench/cli_stages.py sdk FILE --lang python -q -o OUT

The stages are the functions the CLI calls for them, wrapped in this process only (the
package carries no instrumentation): `load.decode_document` (read + strict decode),
`load.tools_from` (recognising the tool records), `pipeline.check_schema` (meta-schema
validation), `pipeline.normalize_schema`, `pipeline.build_catalog` (the IR), the render
target's `render` (lazy imports of the renderer and its templates included) and
`write.write_text`. `imports` is the time to import the CLI and the modules wrapped here;
`other` is the rest of `cli.main` (argument parsing, uniqueness checks, sorting diagnostics,
freeing what a stage leaves). Each stage is timed in wall-clock and in CPU seconds of this
process (`stages`, `cpu`); on a shared machine the CPU time is the steadier of the two.
Wrapping adds a few microseconds per call (about 6,000 calls for a 3,000-tool catalog).
"""

from __future__ import annotations

import dataclasses
import json
import sys
import time
from collections.abc import Callable
from typing import Any

STAGES = ("imports", "decode", "extract", "validate", "normalize", "build", "render", "write")


def main() -> None:
    times = dict.fromkeys(STAGES, 0.0)
    cpu = dict.fromkeys(STAGES, 0.0)
    start, start_cpu = time.perf_counter(), time.process_time()
    import codegen._support.atomic_write as write
    import codegen.cli as cli
    import codegen.load.sources as load
    import codegen.pipeline as pipeline
    import codegen.render.targets as targets

    times["imports"] = time.perf_counter() - start
    cpu["imports"] = time.process_time() - start_cpu

    def timed(stage: str, function: Callable[..., Any]) -> Callable[..., Any]:
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            began, began_cpu = time.perf_counter(), time.process_time()
            try:
                return function(*args, **kwargs)
            finally:
                times[stage] += time.perf_counter() - began
                cpu[stage] += time.process_time() - began_cpu

        return wrapper

    for module, name, stage in (
        (load, "decode_document", "decode"),
        (load, "tools_from", "extract"),
        (pipeline, "check_schema", "validate"),
        (pipeline, "normalize_schema", "normalize"),
        (pipeline, "build_catalog", "build"),
        (write, "write_text", "write"),
    ):
        if not hasattr(module, name):
            raise SystemExit(f"cli_stages: {module.__name__}.{name} is gone; update the stages")
        setattr(module, name, timed(stage, getattr(module, name)))
    target_of = targets.target

    def target(language: str) -> Any:
        found = target_of(language)
        return dataclasses.replace(found, render=timed("render", found.render))

    targets.target = target
    began, began_cpu = time.perf_counter(), time.process_time()
    status = cli.main(sys.argv[1:])
    main_seconds = time.perf_counter() - began
    main_cpu = time.process_time() - began_cpu
    times["other"] = main_seconds - sum(v for k, v in times.items() if k != "imports")
    cpu["other"] = main_cpu - sum(v for k, v in cpu.items() if k != "imports")
    print(json.dumps({"status": status, "stages": times, "cpu": cpu}))


if __name__ == "__main__":
    main()
