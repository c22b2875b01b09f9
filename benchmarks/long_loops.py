"""Long loops: time and peak memory of the gradient of a scalar loop, by trip count.

    python benchmarks/long_loops.py            # 1e4, 1e5, 1e6 iterations
    python benchmarks/long_loops.py --quick    # 1e3, 1e4 (what CI runs)

Each trip count runs in a fresh process (so the peak resident memory is that run's): the
function is transformed once, then the gradient is timed (best of 3). Memory is the growth of
the peak resident set size over the process after warm-up, divided by the trip count.
"""

import argparse
import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

CHILD = r"""
import json, resource, sys, time
sys.path.insert(0, {root!r})
import cpsad
from tests.corpus_control import loop_range

n = {n}
g = cpsad.grad(loop_range)
g(0.5, 10)  # transform and warm up
base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
best = float("inf")
for _ in range(3):
    t = time.perf_counter()
    value = g(0.5, n)
    best = min(best, time.perf_counter() - t)
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
assert abs(value - n * (n - 1) / 2) <= 1e-9 * n * n
print(json.dumps({{"n": n, "seconds": best, "peak_mb": (peak - base) / 1024,
                  "limit": sys.getrecursionlimit()}}))
"""


def measure(n: int) -> dict:
    out = subprocess.run(
        [sys.executable, "-c", CHILD.format(root=ROOT, n=n)],
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(out.stdout)


def main() -> None:
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--quick", action="store_true")
    args = p.parse_args()
    sizes = [1_000, 10_000] if args.quick else [10_000, 100_000, 1_000_000]
    print(f"{'iterations':>11} {'seconds':>9} {'us/iter':>8} {'peak MB':>8} {'bytes/iter':>10}")
    for n in sizes:
        r = measure(n)
        print(
            f"{n:>11,} {r['seconds']:>9.3f} {1e6 * r['seconds'] / n:>8.2f} {r['peak_mb']:>8.1f} "
            f"{1024 * 1024 * r['peak_mb'] / n:>10.0f}"
        )
        assert r["limit"] == 1000 or r["limit"] == sys.getrecursionlimit()


if __name__ == "__main__":
    main()
