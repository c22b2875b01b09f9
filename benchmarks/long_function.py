"""How long a long function takes to transform: a generated straight-line function of n lines.

    python benchmarks/long_function.py                  # 500, 1,000, 2,000 lines
    python benchmarks/long_function.py --n 2000 10000   # chosen sizes
    python benchmarks/long_function.py --json           # one JSON line, for benchmarks/run.py

Each size is transformed in a fresh process (nothing cached on disk, no template parsed before):
the wall time of ``compiler.specialize``, its peak Python memory (tracemalloc, which slows the
passes a little; the time is measured on a second, untraced run), and the passes' own times.
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


def one(n: int) -> dict:
    """Transform the n-line function in this process; time, peak memory, pass times."""
    os.environ["CPSAD_CACHE_DIR"] = tempfile.mkdtemp(prefix="cpsad-long-")
    sys.path.insert(0, ROOT)
    import tracemalloc

    from cpsad import compiler
    from cpsad.transforms.testing import function_from_source
    from tests.test_depth import long_function_source

    src = long_function_source(n)
    f = function_from_source(src)
    # a second module (another first line): the timed run transforms anew
    g = function_from_source(src, prelude="import math\nimport numpy as np\n\n")
    tracemalloc.start()
    compiler.specialize(f, ("x", "w"))
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    t0 = time.perf_counter()
    spec = compiler.specialize(g, ("x", "w"))
    seconds = time.perf_counter() - t0
    return {
        "n": n,
        "seconds": seconds,
        "peak_mb": peak / 2**20,
        "passes": {k: round(v, 4) for k, v in spec.timings.items()},
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
            print(
                f"{n:>7,} lines: {row['seconds']:7.2f} s  {row['peak_mb']:7.1f} MB peak  "
                + ", ".join(f"{k} {v:.2f}" for k, v in dear),
                flush=True,
            )
    if args.json:
        print(json.dumps({"rows": [r for r in rows if "error" not in r]}))


if __name__ == "__main__":
    main()
