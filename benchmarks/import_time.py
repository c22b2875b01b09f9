"""What ``import cpsad`` costs, and what the first use of its API does: each the median of fresh
interpreters (nothing cached in the process; the bytecode cache warm).

    python benchmarks/import_time.py              # a table
    python benchmarks/import_time.py --runs 21    # more fresh interpreters per measurement
    python benchmarks/import_time.py --json       # one JSON line, for benchmarks/run.py

Measured in each interpreter with ``time.perf_counter`` around the statement: ``import cpsad``
(target: under 0.25 s), ``import numpy`` for scale, and ``cpsad.grad`` after ``import cpsad`` --
the first name of the API used loads the rest (the pipeline, gast, the rule library and scipy's
rules where scipy is installed). Also the wall time of ``python -c "import cpsad"`` against
``python -c "import numpy"``, interpreter start-up included. ``python -X importtime -c "import
cpsad"`` says which module costs what.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TARGET = 0.25  # seconds for `import cpsad`

TIMED = {
    "import_cpsad": ("", "import cpsad"),
    "import_numpy": ("", "import numpy"),
    "first_use": ("import cpsad", "cpsad.grad"),
}


def timed_in_fresh_interpreter(setup: str, stmt: str) -> float:
    code = (
        f"import time\n{setup}\nt0 = time.perf_counter()\n{stmt}\n"
        "print(time.perf_counter() - t0)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True
    )
    return float(out.stdout.strip().splitlines()[-1])


def wall_of_fresh_interpreter(stmt: str) -> float:
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-c", stmt], cwd=ROOT, check=True)
    return time.perf_counter() - t0


def measure(runs: int) -> dict:
    timed_in_fresh_interpreter("", "import cpsad; cpsad.grad")  # bytecode written, caches warm
    out = {
        key: statistics.median(timed_in_fresh_interpreter(*what) for _ in range(runs))
        for key, what in TIMED.items()
    }
    for key, stmt in (("wall_cpsad", "import cpsad"), ("wall_numpy", "import numpy")):
        out[key] = statistics.median(wall_of_fresh_interpreter(stmt) for _ in range(runs))
    out["runs"] = runs
    out["target"] = TARGET
    return out


def table(r: dict) -> str:
    met = "met" if r["import_cpsad"] < TARGET else "MISSED"
    return "\n".join(
        [
            f"median of {r['runs']} fresh interpreters",
            f"  import cpsad                 {r['import_cpsad'] * 1e3:8.1f} ms  "
            f"(target under {TARGET * 1e3:.0f} ms: {met})",
            f"  import numpy                 {r['import_numpy'] * 1e3:8.1f} ms",
            f"  cpsad.grad, first use        {r['first_use'] * 1e3:8.1f} ms  "
            "(loads the pipeline and the rules)",
            f"  python -c 'import cpsad'     {r['wall_cpsad'] * 1e3:8.1f} ms wall",
            f"  python -c 'import numpy'     {r['wall_numpy'] * 1e3:8.1f} ms wall",
        ]
    )


def main(argv=None) -> None:
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--runs", type=int, default=11, help="fresh interpreters per measurement")
    p.add_argument("--json", action="store_true", help="one JSON line")
    args = p.parse_args(argv)
    r = measure(args.runs)
    print(json.dumps(r) if args.json else table(r))


if __name__ == "__main__":
    main()
