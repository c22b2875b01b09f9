"""How long a long function takes to transform: a generated straight-line function of n lines.

    python benchmarks/long_function.py                  # 500, 1,000, 2,000 lines
    python benchmarks/long_function.py --n 2000 10000   # chosen sizes
    python benchmarks/long_function.py --json           # one JSON line, for benchmarks/run.py

Each size is transformed in a fresh process (nothing cached on disk, no template parsed before),
once for each kind of argument a call can bring -- floats (``grad(f)(0.5, 0.25)``), arrays, and
none known (``cpsad.transform(f)``, ``cpsad show``): adjoints of floats start at 0.0 and leave
Simplify chains of copies to take out, so the kinds do not cost the same. For each: the wall time
of ``compiler.specialize``, its peak Python memory (tracemalloc, which slows the passes a little;
the time is measured on a second, untraced run of a new function), and the passes' own times.
The row's ``seconds`` is the slowest kind's, and ``peak_mb`` the largest.
The function is ``tests.test_depth.long_function_source``: each line one numpy operation of two
of the last dozen values, what a code generator or a long hand-written model step looks like.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


KINDS = {  # the arguments whose kinds a call brings (None: no kinds, as ``transform`` and show)
    "floats": (0.5, 0.25),
    "arrays": ("array", "array"),
    "none": None,
}


def one(n: int) -> dict:
    """Transform the n-line function in this process for each of ``KINDS``; the slowest time,
    the largest peak memory, and each kind's time and pass times."""
    os.environ["CPSAD_CACHE_DIR"] = tempfile.mkdtemp(prefix="cpsad-long-")
    sys.path.insert(0, ROOT)
    import tracemalloc

    import numpy as np

    from cpsad import compiler
    from cpsad.transforms.testing import function_from_source
    from tests.test_depth import long_function_source

    src = long_function_source(n)
    rows = {}
    for i, (name, args) in enumerate(KINDS.items()):
        # a new module for each run (another first line): each transforms anew
        f, g = (
            function_from_source(src, prelude="import numpy as np\n" + "\n" * (2 * i + j))
            for j in (0, 1)
        )
        if args is None:
            kinds = ()
        else:
            args = [np.ones(3) if a == "array" else a for a in args]
            kinds = compiler.kinds_of(f.__code__, args, {})
        tracemalloc.start()
        compiler.specialize(f, ("x", "w"), kinds)
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        t0 = time.perf_counter()
        spec = compiler.specialize(
            g, ("x", "w"), compiler.kinds_of(g.__code__, args, {}) if args is not None else ()
        )
        rows[name] = {
            "seconds": time.perf_counter() - t0,
            "peak_mb": peak / 2**20,
            "passes": {k: round(v, 4) for k, v in spec.timings.items()},
        }
    slowest = max(rows, key=lambda k: rows[k]["seconds"])
    return {
        "n": n,
        "seconds": rows[slowest]["seconds"],
        "slowest": slowest,
        "peak_mb": max(r["peak_mb"] for r in rows.values()),
        "passes": rows[slowest]["passes"],
        "kinds": {k: round(r["seconds"], 4) for k, r in rows.items()},
    }


def main(argv=None) -> None:
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--n", type=int, nargs="*", default=[500, 1000, 2000])
    p.add_argument("--json", action="store_true", help="one JSON line: {'rows': [...]}")
    p.add_argument("--one", type=int, help=argparse.SUPPRESS)  # the child process
    args = p.parse_args(argv)
    if args.one is not None:
        print(json.dumps(one(args.one)))
        return
    rows = []
    for n in args.n:
        r = subprocess.run(
            [sys.executable, os.path.abspath(__file__), "--one", str(n)],
            capture_output=True,
            text=True,
            cwd=ROOT,
            check=False,
        )
        try:
            row = json.loads(r.stdout.strip().splitlines()[-1])
        except (IndexError, json.JSONDecodeError):
            row = {"n": n, "error": (r.stderr or r.stdout).strip()[-400:]}
        rows.append(row)
        if not args.json:
            if "error" in row:
                print(f"{n:>7,} lines: failed: {row['error']}")
                continue
            dear = sorted(row["passes"].items(), key=lambda kv: -kv[1])[:4]
            kinds = ", ".join(f"{k} {v:.2f}" for k, v in row["kinds"].items())
            print(
                f"{n:>7,} lines: {row['seconds']:7.2f} s  {row['peak_mb']:7.1f} MB peak  "
                f"({kinds} s)  {row['slowest']}: " + ", ".join(f"{k} {v:.2f}" for k, v in dear),
                flush=True,
            )
    if args.json:
        print(json.dumps({"rows": [r for r in rows if "error" not in r]}))


if __name__ == "__main__":
    main()
