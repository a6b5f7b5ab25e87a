"""A/B: what each standard-library stand-in on the cold path is worth, one at a time.

Run by hand from the repository root (`npm ci` gives the `json2ts` peer of the target):

    python bench/bench_coldstart_ab.py [--runs N] [--site-runs N] [--importtime-runs N]
        [--modes clean,site] [--work DIR] [--markdown FILE]

(about 8 minutes with the defaults on the 2-core machine: 50 rounds in mode `clean`, 20 in
mode `site`, 5 `-X importtime` runs of everything in each).

The cold path of `codegen sdk` on a small catalog does without five standard ways of doing
things, each replaced by home-made code only to start faster:

1. `tempfile`: atomic writes make their own temporary file (`_support/atomic_write.py`);
2. `shutil`: argparse's formatters are sized by `cli.arguments._columns`, not `get_terminal_size`;
3. `urllib`: meta-schema references are joined by `meta_schema._joined`, and percent
   escapes are decoded with `urllib.parse.unquote` imported only when there is one
   (`normalize/refs.py`, `ir_build/refs.py`);
4. `pathlib`: sources, templates, meta-schemas and outputs go through `os.path`;
5. `jinja`: the SDK, section and prompt templates are laid out by `render/jinja_subset.py`.

Variant A is `codegen/` and `templates/` of the working tree, copied once (so every variant
is the same snapshot, whatever else is being edited) to `WORK/_snapshot`. Each other variant
is a copy of that snapshot, `WORK/<variant>/`, with one stand-in replaced by the standard
way (the edits are the `EDITS` table below, each an exact text found exactly once, so a
change to the tree makes this script fail loudly rather than time something else); variant
`all-but-jinja` has the edits of the four standard-library stand-ins at once, `all` every
edit. Every copy is compiled to bytecode first (as a wheel install leaves it) and the
children write none.

Every measurement is a fresh child running what the installed `codegen` script runs, with
the copy alone on `PYTHONPATH` (`PYTHONSAFEPATH`, and the children run in a scratch
directory, so neither the checkout nor an editable install can be imported instead; each
variant's `codegen.__file__` is checked once per interpreter). Commands, on a one-tool
catalog (the first tool of `schemas/nested_objects.json`, as `bench_coldstart.py`):

- `sdk ONE --lang python -q` and `sdk ONE --lang typescript -q` (output to a pipe);
- `sdk ONE --lang python -q -o OUT` (the atomic write; `OUT` is deleted before each run, as
  an unchanged file would not be written at all);
- `sdk schemas --lang python -q` (the bundled catalogs, for the README's 150 ms target);
- peers, for the README's targets: `json2ts --no-format` on the tool's input schema (the
  one-tool target is at most 0.5x its median) and the floor `python -c pass`.

Rounds (`--runs`; `--site-runs` in mode `site`) run every (variant, command) pair once, in
an order shuffled per round (fixed seed), after one warm-up each. Wall time of the whole
process (and the child's CPU time, user + system); the tables give median, p10 and p90, B's
median minus A's (ms and %), and the median of the per-round paired differences with a
bootstrap 95% interval. Every output of every run (stdout, or the written file) must be
byte-identical to variant A's.
`-X importtime`: `--importtime-runs` runs of each command per variant; the modules a
variant imports that A does not (and the reverse), each with its median self time, and
their sum (added minus dropped).

Interpreters (`--modes`): `clean` is a virtual environment made in `WORK/venv` whose only
`.pth` file puts this interpreter's site-packages on `sys.path` (so jinja2, jiter and
`jsonschema_specifications` are found) without running the `.pth` files kept there; `site`
is this interpreter as it is. On a machine whose site-packages hold a `.pth` that imports
something at start-up (a CA-injecting `certifi` hook imports `importlib.resources`, so
`pathlib`, `tempfile`, `shutil` and `urllib.parse` before any of our code), `site` shows what
the stand-ins are worth there and `clean` what they are worth on an interpreter without it.
The verdicts are taken from the first mode listed.

Verdict per stand-in: a one-tool command "shows" the stand-in when the median of the
per-round differences B - A is at least 1 ms or 2% of A's median and its bootstrap 95%
interval lies above zero, in wall time or in CPU time (a single-threaded start-up's CPU
time is its wall time on an idle machine); the stand-in is kept when a majority of the one-tool commands it is on show it (`tempfile`
is only on the `-o` command), else retired. Each rule's outcome is reported. The stand-ins
overlap (`tempfile` imports `shutil`; `pathlib` and Jinja import `urllib.parse`; Jinja
imports `tempfile`), so what retiring several at once costs is what variants
`all-but-jinja` and `all` measure, not the sum of their rows.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import re
import resource
import shutil
import statistics
import subprocess
import sys
import sysconfig
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CONSOLE_SCRIPT = "import sys; from codegen.cli import main; sys.exit(main())"
"""What the installed `codegen` script runs (`python -m codegen` would add `runpy`)."""


@dataclass(frozen=True)
class Edit:
    """Replace `old` (found exactly once) by `new` in `codegen/<path>`."""

    path: str
    old: str
    new: str


EDITS: dict[str, tuple[str, tuple[Edit, ...]]] = {
    "tempfile": (
        "atomic writes through `tempfile.mkstemp` (same name pattern, `0600`, `O_EXCL`) "
        "instead of `atomic_write._temporary`",
        (
            Edit(
                "_support/atomic_write.py",
                "import stat  # already imported by `os`\n",
                "import stat  # already imported by `os`\nimport tempfile\n",
            ),
            Edit(
                "_support/atomic_write.py",
                "        descriptor, temporary = _temporary(directory, os.path.basename(target))\n",
                "        descriptor, temporary = tempfile.mkstemp(\n"
                '            prefix=f".{os.path.basename(target)}.", suffix=".tmp", dir=directory\n'
                "        )\n",
            ),
        ),
    ),
    "shutil": (
        "argparse's own `_get_formatter` (its `HelpFormatter` sizes itself with "
        "`shutil.get_terminal_size`): the override in `cli.arguments._Parser` renamed away",
        (
            Edit(
                "cli/arguments.py",
                "    def _get_formatter(self) -> argparse.HelpFormatter:\n",
                "    def _unused_get_formatter(self) -> argparse.HelpFormatter:\n",
            ),
        ),
    ),
    "urllib": (
        "`urllib.parse.urljoin` at both call sites of `meta_schema._joined`; "
        "`from urllib.parse import unquote` at the top of `normalize/refs.py` and `ir_build/refs.py`",
        (
            Edit(
                "validate/meta_schema.py",
                "import sys\n",
                "import sys\nfrom urllib.parse import urljoin\n",
            ),
            Edit(
                "validate/meta_schema.py",
                '    uri, _, fragment = _joined(base, ref).partition("#")\n',
                '    uri, _, fragment = urljoin(base, ref).partition("#")\n',
            ),
            Edit(
                "validate/meta_schema.py",
                'target_base = _joined(base, arm["$ref"]).rstrip("#")\n',
                'target_base = urljoin(base, arm["$ref"]).rstrip("#")\n',
            ),
            Edit(
                "normalize/refs.py",
                "from __future__ import annotations\n",
                "from __future__ import annotations\n\nfrom urllib.parse import unquote\n",
            ),
            Edit(
                "ir_build/refs.py",
                "from __future__ import annotations\n",
                "from __future__ import annotations\n\nfrom urllib.parse import unquote\n",
            ),
        ),
    ),
    "pathlib": (
        "`pathlib.Path` where the cold path uses `os.path`: checking and reading sources "
        "(`load/sources.py`), reading templates (`render/templates.py`) and meta-schemas "
        "(`validate/meta_schema.py`), comparing an output (`_support/atomic_write.py`)",
        (
            Edit("load/sources.py", "import sys\n", "import sys\nfrom pathlib import Path\n"),
            Edit(
                "load/sources.py",
                "        if os.path.isdir(source):\n",
                "        if Path(source).is_dir():\n",
            ),
            Edit(
                "load/sources.py",
                "        elif os.path.isfile(source):\n",
                "        elif Path(source).is_file():\n",
            ),
            Edit(
                "load/sources.py",
                "        elif os.path.exists(source):\n",
                "        elif Path(source).exists():\n",
            ),
            Edit(
                "load/sources.py",
                '        with open(path, "rb") as file:\n            return file.read()\n',
                "        return Path(path).read_bytes()\n",
            ),
            Edit(
                "render/templates.py",
                "from functools import cache\n",
                "from functools import cache\nfrom pathlib import Path\n",
            ),
            Edit(
                "render/templates.py",
                '    with open(os.path.join(_templates_path(), name), encoding="utf-8") as file:\n'
                "        return file.read()\n",
                '    return Path(_templates_path(), name).read_text(encoding="utf-8")\n',
            ),
            Edit(
                "validate/meta_schema.py",
                "from functools import cache\n",
                "from functools import cache\nfrom pathlib import Path\n",
            ),
            Edit(
                "validate/meta_schema.py",
                '                with open(os.path.join(folder, relative), encoding="utf-8") as file:\n'
                "                    contents = json.load(file)\n",
                "                contents = json.loads(\n"
                '                    Path(folder, relative).read_text(encoding="utf-8")\n'
                "                )\n",
            ),
            Edit(
                "_support/atomic_write.py",
                "from typing import TYPE_CHECKING\n",
                "from pathlib import Path\nfrom typing import TYPE_CHECKING\n",
            ),
            Edit(
                "_support/atomic_write.py",
                '    with open(target, "rb") as file:\n        return file.read() == data\n',
                "    return Path(target).read_bytes() == data\n",
            ),
        ),
    ),
    "jinja": (
        "every template rendered by Jinja2 (`templates.template(name).render`); "
        "`jinja_subset` no longer imported",
        (
            Edit("render/templates.py", "from . import jinja_subset\n", ""),
            Edit(
                "render/templates.py",
                "    nodes = _layout(name)\n"
                "    if nodes is not None:\n"
                "        return jinja_subset.render(nodes, context)\n",
                "",
            ),
        ),
    ),
}
STAND_INS = tuple(EDITS)
SMALL = ("tempfile", "shutil", "urllib", "pathlib")
"""The four stand-ins for a standard-library module (Jinja is a dependency)."""
VARIANTS = ("A", *STAND_INS, "all-but-jinja", "all")
MODULES = {
    "tempfile": "tempfile",
    "shutil": "shutil",
    "urllib": "urllib.parse",
    "pathlib": "pathlib",
    "jinja": "jinja2",
}
"""The module each variant B should import and A should not (checked under `-X importtime`)."""
ONE_TOOL = ("python", "typescript", "-o python")
ON_PATH = {name: ONE_TOOL for name in (*STAND_INS, "all-but-jinja")} | {"tempfile": ("-o python",)}
"""The one-tool commands each stand-in is on (only `-o` writes a file)."""


@dataclass
class Samples:
    wall: list[float] = field(default_factory=list)
    cpu: list[float] = field(default_factory=list)


def edited(variant: str) -> tuple[Edit, ...]:
    if variant == "A":
        return ()
    if variant in ("all", "all-but-jinja"):
        names = STAND_INS if variant == "all" else SMALL
        return tuple(edit for name in names for edit in EDITS[name][1])
    return EDITS[variant][1]


def make_trees(work: Path) -> dict[str, Path]:
    """One snapshot of the working tree, then a patched copy of it per variant."""
    snapshot = work / "_snapshot"
    if snapshot.exists():
        shutil.rmtree(snapshot)
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    shutil.copytree(ROOT / "codegen", snapshot / "codegen", ignore=ignore)
    shutil.copytree(ROOT / "templates", snapshot / "templates", ignore=ignore)
    trees = {}
    for variant in VARIANTS:
        tree = work / variant
        if tree.exists():
            shutil.rmtree(tree)
        shutil.copytree(snapshot, tree)
        for edit in edited(variant):
            path = tree / "codegen" / edit.path
            text = path.read_text(encoding="utf-8")
            count = text.count(edit.old)
            if count != 1:
                sys.exit(f"{variant}: {edit.path}: expected one {edit.old!r}, found {count}")
            path.write_text(text.replace(edit.old, edit.new), encoding="utf-8")
        subprocess.run(
            [sys.executable, "-m", "compileall", "-q", str(tree / "codegen")], check=True
        )
        trees[variant] = tree
    return trees


def clean_interpreter(work: Path) -> str:
    """A virtual environment that sees this interpreter's packages but runs none of the
    `.pth` files beside them (a path line in a `.pth` adds a folder without processing it)."""
    venv = work / "venv"
    subprocess.run(
        [sys.executable, "-m", "venv", "--without-pip", "--clear", str(venv)], check=True
    )
    python = venv / "bin" / "python"
    purelib = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    ours = {sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]}
    Path(purelib, "_coldstart_ab_packages.pth").write_text(
        "".join(f"{folder}\n" for folder in sorted(ours)), encoding="utf-8"
    )
    return str(python)


def child_env(tree: Path) -> dict[str, str]:
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith("PYTHON") and key not in ("COLUMNS", "LINES")
    }
    env["PYTHONPATH"] = str(tree)
    env["PYTHONSAFEPATH"] = "1"
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    return env


def run(
    argv: list[str], env: dict[str, str] | None, cwd: Path, out: Path | None
) -> tuple[float, float, bytes, bytes]:
    """Wall and CPU seconds of one child, its output (stdout, or the file it wrote) and its
    standard error."""
    if out is not None and out.exists():
        out.unlink()
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(argv, env=env, cwd=cwd, capture_output=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        sys.exit(f"{argv} exited {done.returncode}:\n{done.stderr.decode(errors='replace')}")
    cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    output = out.read_bytes() if out is not None else done.stdout
    return wall, cpu, output, done.stderr


def digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()[:16]


def importtime(stderr: bytes) -> dict[str, int]:
    """Module -> self microseconds from `-X importtime` output."""
    found = {}
    for line in stderr.decode(errors="replace").splitlines():
        matched = re.fullmatch(r"import time:\s+(\d+) \|\s+\d+ \| ( *)(\S+)", line)
        if matched:
            found[matched.group(3)] = int(matched.group(1))
    return found


def quantiles(values: list[float]) -> tuple[float, float, float]:
    """Median, p10 and p90 in ms."""
    deciles = statistics.quantiles(values, n=10, method="inclusive")
    return statistics.median(values) * 1000, deciles[0] * 1000, deciles[8] * 1000


def paired(a: list[float], b: list[float], rng: random.Random) -> tuple[float, float, float]:
    """Median of the per-round differences B - A (ms) and a bootstrap 95% interval."""
    differences = [(y - x) * 1000 for x, y in zip(a, b, strict=True)]
    medians = sorted(
        statistics.median(rng.choices(differences, k=len(differences))) for _ in range(2000)
    )
    return statistics.median(differences), medians[49], medians[1949]


@dataclass
class Mode:
    name: str
    python: str
    times: dict[tuple[str, str], Samples]
    imports: dict[tuple[str, str], list[dict[str, int]]]
    files: dict[str, str]
    mismatches: list[str]


def measure(
    mode: str,
    python: str,
    trees: dict[str, Path],
    rounds: int,
    args: argparse.Namespace,
    scratch: Path,
) -> Mode:
    one = scratch / "one.json"
    commands: dict[str, tuple[list[str], Path | None]] = {
        "python": (["sdk", str(one), "--lang", "python", "-q"], None),
        "typescript": (["sdk", str(one), "--lang", "typescript", "-q"], None),
        "-o python": (["sdk", str(one), "--lang", "python", "-q", "-o"], scratch / "out.py"),
        "bundled python": (["sdk", str(ROOT / "schemas"), "--lang", "python", "-q"], None),
    }
    files = {}
    for variant, tree in trees.items():
        shown = subprocess.run(
            [python, "-c", "import codegen; print(codegen.__file__)"],
            env=child_env(tree),
            cwd=scratch,
            check=True,
            capture_output=True,
            text=True,
        ).stdout.strip()
        if not shown.startswith(str(tree) + os.sep):
            sys.exit(f"{mode} {variant}: imported {shown}, not the copy in {tree}")
        files[variant] = shown
        print(f"{mode} {variant}: codegen.__file__ = {shown}", file=sys.stderr)
    jobs: list[tuple[str, str, list[str], dict[str, str] | None, Path | None]] = []
    for variant, tree in trees.items():
        for command, (argv, out) in commands.items():
            target = [*argv, str(out)] if out is not None else argv
            jobs.append(
                (variant, command, [python, "-c", CONSOLE_SCRIPT, *target], child_env(tree), out)
            )
    json2ts = ROOT / "node_modules" / ".bin" / "json2ts"
    if json2ts.exists():
        jstt = [str(json2ts), "--no-format", "-i", str(scratch / "one.schema.json"), "-o"]
        jobs.append(
            ("peer", "json2ts --no-format", [*jstt, str(scratch / "jstt.d.ts")], None, None)
        )
    floor = child_env(trees["A"])
    jobs.append(("peer", "python -c pass", [python, "-c", "pass"], floor, None))
    times = {(variant, command): Samples() for variant, command, *_ in jobs}
    outputs: dict[tuple[str, str], set[str]] = {}
    rng = random.Random(args.seed)
    for round_number in range(rounds + 1):
        order = list(jobs)
        rng.shuffle(order)
        for variant, command, argv, env, out in order:
            wall, cpu, output, _ = run(argv, env, scratch, out)
            if variant != "peer":
                outputs.setdefault((variant, command), set()).add(digest(output))
            if round_number:  # round 0 is the warm-up
                times[variant, command].wall.append(wall)
                times[variant, command].cpu.append(cpu)
        print(f"{mode}: round {round_number}/{rounds}", file=sys.stderr)
    mismatches = [
        f"{variant} {command}"
        for (variant, command), seen in outputs.items()
        if seen != outputs["A", command] or len(seen) != 1
    ]
    imports: dict[tuple[str, str], list[dict[str, int]]] = {}
    for _ in range(args.importtime_runs):
        for variant, command, argv, env, out in jobs:
            if variant == "peer":
                continue
            timed = [argv[0], "-X", "importtime", *argv[1:]]
            _, _, _, stderr = run(timed, env, scratch, out)
            imports.setdefault((variant, command), []).append(importtime(stderr))
    return Mode(mode, python, times, imports, files, mismatches)


def import_summary(
    mode: Mode, variant: str, command: str
) -> tuple[float, list[tuple[str, float]], list[tuple[str, float]]]:
    """The modules a variant imports in most of its `-X importtime` runs and A in few (and
    the reverse), each with its median self time (ms), and the net: added minus dropped."""
    runs = mode.imports[variant, command]
    baseline = mode.imports["A", command]

    def usual(samples: list[dict[str, int]]) -> set[str]:
        counts: dict[str, int] = {}
        for sample in samples:
            for name in sample:
                counts[name] = counts.get(name, 0) + 1
        return {name for name, count in counts.items() if count * 2 > len(samples)}

    def costed(names: set[str], samples: list[dict[str, int]]) -> list[tuple[str, float]]:
        cost = {n: statistics.median(s.get(n, 0) for s in samples) / 1000 for n in names}
        return sorted(cost.items(), key=lambda item: (-item[1], item[0]))

    mine, theirs = usual(runs), usual(baseline)
    added, dropped = costed(mine - theirs, runs), costed(theirs - mine, baseline)
    net = sum(cost for _, cost in added) - sum(cost for _, cost in dropped)
    return net, added, dropped


@dataclass(frozen=True)
class Row:
    median: float
    p10: float
    p90: float
    cpu: float
    cpu_p10: float
    cpu_p90: float


def row(samples: Samples) -> Row:
    return Row(*quantiles(samples.wall), *quantiles(samples.cpu))


def shows(a: list[float], b: list[float], rng: random.Random) -> bool:
    """Whether B costs measurably more than A: the median of the per-round differences is
    at least 1 ms or 2% of A's median, and its bootstrap 95% interval lies above zero (the
    rounds are interleaved, so a round's pair shares the machine's state; the p10-p90
    spreads of the two samples overlap for effects of a few percent even on a quiet one)."""
    middle, low, _ = paired(a, b, rng)
    return (middle >= 1.0 or middle >= 0.02 * statistics.median(a)) and low > 0


def report(modes: list[Mode], args: argparse.Namespace, readme_targets: list[str]) -> str:
    rng = random.Random(args.seed)
    runs = {mode.name: len(next(iter(mode.times.values())).wall) for mode in modes}
    lines = [
        "# Cold-start A/B: the standard-library stand-ins",
        "",
        f"`python bench/bench_coldstart_ab.py` ({time.strftime('%Y-%m-%d %H:%M')}, "
        f"{os.cpu_count()} cores, load average {' '.join(f'{x:.2f}' for x in os.getloadavg())} "
        f"at the end, Python {sys.version.split()[0]}). Rounds after one warm-up: "
        + ", ".join(f"{runs[m.name]} in mode `{m.name}`" for m in modes)
        + ", every (variant, command) once per round in a shuffled order. Whole process, "
        "ms; one-tool catalog: the first tool of `schemas/nested_objects.json`. Δ is B's "
        "median minus A's (positive: the stand-in saves that much); paired Δ is the median of "
        "the per-round differences B - A with a bootstrap 95% interval; CPU is the child's user "
        "+ system time. Imports added: the self time (`-X importtime`, median of "
        f"{args.importtime_runs} runs) of the modules B imports and A does not, minus the reverse.",
        "",
        "Variants (each a patched copy of one snapshot of `codegen/` + `templates/`, under "
        f"`{args.work}/<variant>/`):",
        "",
        "- A: the tree as it is;",
    ]
    lines += [f"- {name}: {EDITS[name][0]};" for name in STAND_INS]
    lines += [
        "- all-but-jinja: the tempfile, shutil, urllib and pathlib edits at once;",
        "- all: every edit above at once.",
        "",
    ]
    lines += ["Existing cold-start targets:", ""]
    lines += [f"- {target}" for target in readme_targets]
    lines.append("")
    verdicts: dict[str, dict[str, tuple[str, str]]] = {}
    for mode in modes:
        interpreter = (
            "a virtual environment that runs none of site-packages' `.pth` files"
            if mode.name == "clean"
            else "this interpreter with its site-packages' `.pth` files"
        )
        lines += [f"## Mode `{mode.name}`: {interpreter} (`{mode.python}`)", ""]
        lines.append(
            "Outputs byte-identical to A's in every run of every variant: "
            + ("yes" if not mode.mismatches else "**NO**: " + ", ".join(mode.mismatches))
        )
        lines += [
            "",
            "| variant | command | median | p10 | p90 | Δ ms | Δ % | paired Δ ms (95%) "
            "| CPU median (p10-p90) | CPU Δ ms | imports added ms |",
            "| --- | --- | ---: | ---: | ---: | ---: | ---: | --- | ---: | ---: | ---: |",
        ]
        rows = {key: row(samples) for key, samples in mode.times.items()}
        commands = [c for v, c in mode.times if v == "A"]
        for variant in VARIANTS:
            for command in commands:
                b = rows[variant, command]
                cpu = f"{b.cpu:.1f} ({b.cpu_p10:.1f}-{b.cpu_p90:.1f})"
                head = f"| {variant} | {command} | {b.median:.1f} | {b.p10:.1f} | {b.p90:.1f} "
                if variant == "A":
                    lines.append(f"{head}| | | | {cpu} | | |")
                    continue
                a = rows["A", command]
                delta = b.median - a.median
                middle, low, high = paired(
                    mode.times["A", command].wall, mode.times[variant, command].wall, rng
                )
                net = import_summary(mode, variant, command)[0]
                lines.append(
                    f"{head}| {delta:+.1f} | {delta / a.median * 100:+.1f}% "
                    f"| {middle:+.1f} ({low:+.1f} to {high:+.1f}) | {cpu} "
                    f"| {b.cpu - a.cpu:+.1f} | {net:+.1f} |"
                )
        for (variant, command), samples in mode.times.items():
            if variant == "peer":
                p = row(samples)
                lines.append(
                    f"| peer | {command} | {p.median:.1f} | {p.p10:.1f} | {p.p90:.1f} | | | "
                    f"| {p.cpu:.1f} ({p.cpu_p10:.1f}-{p.cpu_p90:.1f}) | | |"
                )
        lines += [
            "",
            "Imports each variant adds (+) or drops (-) against A (self ms, largest first):",
            "",
            "| variant | command | added ms | modules |",
            "| --- | --- | ---: | --- |",
        ]
        for variant in VARIANTS[1:]:
            for command in commands:
                net, added, dropped = import_summary(mode, variant, command)
                names = [f"+{n} {c:.2f}" for n, c in added[:8]]
                if len(added) > 8:
                    names.append(f"+{len(added) - 8} more")
                names += [f"-{n} {c:.2f}" for n, c in dropped]
                lines.append(
                    f"| {variant} | {command} | {net:+.1f} | {', '.join(names) or 'none'} |"
                )
        lines += ["", "The module each stand-in avoids, imported by A / by B:", ""]
        for name in STAND_INS:
            command = ON_PATH[name][0]
            module = MODULES[name]
            in_a = sum(module in r for r in mode.imports["A", command])
            in_b = sum(module in r for r in mode.imports[name, command])
            total = len(mode.imports["A", command])
            lines.append(
                f"- {name} (`{command}`): `{module}` in {in_a}/{total} runs of A, "
                f"{in_b}/{total} of B"
            )
        peer = ("peer", "json2ts --no-format")
        lines += [
            "",
            "Targets per variant (medians):",
            "",
            "| variant | one tool: python / json2ts | typescript / json2ts | <= 0.5x "
            "| bundled catalogs, python | < 150 ms |",
            "| --- | ---: | ---: | --- | ---: | --- |",
        ]
        for variant in VARIANTS:
            bundled = rows[variant, "bundled python"].median
            if peer in rows:
                ratios = [rows[variant, c].median / rows[peer].median for c in ONE_TOOL[:2]]
                met = "met" if max(ratios) <= 0.5 else "MISSED"
                shown = f"{ratios[0]:.2f}x | {ratios[1]:.2f}x | {met}"
            else:
                shown = "n/a | n/a | no json2ts (`npm ci`)"
            verdict = "met" if bundled < 150 else "MISSED"
            lines.append(f"| {variant} | {shown} | {bundled:.1f} | {verdict} |")
        lines += ["", f"Verdicts in mode `{mode.name}`:", ""]
        verdicts[mode.name] = {}
        for name in (*STAND_INS, "all-but-jinja"):
            on = ON_PATH[name]
            times = mode.times
            wall = [c for c in on if shows(times["A", c].wall, times[name, c].wall, rng)]
            cpu = [c for c in on if shows(times["A", c].cpu, times[name, c].cpu, rng)]
            by_wall = len(wall) * 2 > len(on)
            by_cpu = len(cpu) * 2 > len(on)
            keep = (by_wall or by_cpu) and not mode.mismatches
            saved = "; ".join(
                f"`{c}` {rows[name, c].median - rows['A', c].median:+.1f} ms wall "
                f"({'shows' if c in wall else 'within noise'}), "
                f"{rows[name, c].cpu - rows['A', c].cpu:+.1f} ms CPU "
                f"({'shows' if c in cpu else 'within noise'})"
                for c in on
            )
            verdict = "KEEP" if keep else "RETIRE"
            if name == "all-but-jinja":
                verdict = "worth keeping together" if keep else "not worth keeping together"
            verdicts[mode.name][name] = (
                verdict,
                f"wall {'shows' if by_wall else 'within noise'}, "
                f"CPU {'shows' if by_cpu else 'within noise'}",
            )
            label = "tempfile + shutil + urllib + pathlib" if name == "all-but-jinja" else name
            lines.append(f"- **{label}: {verdict}** ({verdicts[mode.name][name][1]}). {saved}.")
        lines.append("")
    first = modes[0].name
    lines += [
        f"## Verdicts (mode `{first}`)",
        "",
        "A command shows a stand-in when the median of the per-round differences B - A is at "
        "least 1 ms or 2% of A's median and its bootstrap 95% interval lies above zero, in "
        "wall time or in CPU time (a single-threaded start-up's CPU time is what the wall time "
        "is on an idle machine); a stand-in is kept when most one-tool commands it is on show "
        "it (`tempfile`: only `-o`), else retired.",
        "",
    ]
    lines += [
        f"- {name}: **{verdicts[first][name][0]}** ({verdicts[first][name][1]})"
        for name in (*STAND_INS, "all-but-jinja")
    ]
    lines += [
        "",
        f"Rerun: `cd {ROOT} && python bench/bench_coldstart_ab.py --runs {args.runs} "
        f"--site-runs {args.site_runs} --modes {args.modes} --markdown {args.markdown}`",
        "",
    ]
    return "\n".join(lines)


def readme_targets() -> list[str]:
    """The cold-start targets as `bench_coldstart.py` states them."""
    text = (ROOT / "bench" / "bench_coldstart.py").read_text(encoding="utf-8")
    found = re.search(r"Targets: (.*?)\n\"\"\"", text, re.S)
    stated = " ".join(found.group(1).split()) if found else "none found"
    return [f"{stated} (`bench_coldstart.py`'s docstring; `bench/README.md`, Cold start)"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=50, help="timed rounds (default 50)")
    parser.add_argument(
        "--site-runs", type=int, default=20, help="timed rounds in mode `site` (default 20)"
    )
    parser.add_argument("--importtime-runs", type=int, default=5)
    parser.add_argument("--modes", default="clean,site", help="clean, site or both, first decides")
    parser.add_argument("--work", type=Path, default=Path("/tmp/coldstart_ab"))
    parser.add_argument("--markdown", type=Path, default=Path("/tmp/ab/coldstart.md"))
    parser.add_argument("--seed", type=int, default=20261202)
    args = parser.parse_args()
    if min(args.runs, args.site_runs) < 10:
        parser.error("--runs and --site-runs must be at least 10 (p10/p90)")
    args.work.mkdir(parents=True, exist_ok=True)
    trees = make_trees(args.work)
    scratch = args.work / "scratch"
    scratch.mkdir(exist_ok=True)
    document = json.loads((ROOT / "schemas" / "nested_objects.json").read_text(encoding="utf-8"))
    tool = document["tools"][0]
    (scratch / "one.json").write_text(json.dumps({"tools": [tool]}), encoding="utf-8")
    (scratch / "one.schema.json").write_text(json.dumps(tool["inputSchema"]), encoding="utf-8")
    modes = []
    for name in args.modes.split(","):
        if name == "clean":
            python = clean_interpreter(args.work)
        elif name == "site":
            python = sys.executable
        else:
            parser.error(f"unknown mode {name!r}")
        rounds = args.site_runs if name == "site" else args.runs
        modes.append(measure(name, python, trees, rounds, args, scratch))
    text = report(modes, args, readme_targets())
    args.markdown.parent.mkdir(parents=True, exist_ok=True)
    args.markdown.write_text(text, encoding="utf-8")
    print(text)


if __name__ == "__main__":
    main()
