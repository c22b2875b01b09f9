"""First-call transformation latency: transform + compile + link, per function, in a fresh process.

    python benchmarks/transform_latency.py

Every function of the core test corpus and of examples/ is transformed once (a new cache folder,
so nothing is reused from disk); the first transformation of the process also pays one-time
costs (parsing the rule templates it uses), reported apart. Later calls reuse the transformation:
their cost is the cache lookup and its validity check.
"""

import os
import statistics
import sys
import tempfile
import time

os.environ["CPSAD_CACHE_DIR"] = tempfile.mkdtemp(prefix="cpsad-latency-")
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path[:0] = [ROOT, os.path.join(ROOT, "examples")]

from cpsad import compiler  # noqa: E402
from cpsad.calls import params_for  # noqa: E402
from tests import corpus_core  # noqa: E402


def targets():
    import mlp
    import piecewise
    import recursion

    out = []
    for f, args, argnums in corpus_core.CASES:
        nums = (argnums,) if isinstance(argnums, int) else argnums
        active, _ = params_for(f.__code__, nums, len(args))
        out.append((f, active))
    for mod in (mlp, piecewise, recursion):
        for name, wrt in mod.BACKPROPAGATORS.items():
            out.append((getattr(mod, name), tuple(w.strip() for w in wrt.split(","))))
    seen, unique = set(), []
    for f, a in out:
        if (f, a) not in seen:
            seen.add((f, a))
            unique.append((f, a))
    return unique


def main():
    rows = []
    for f, active in targets():
        t0 = time.perf_counter()
        spec = compiler.specialize(f, active)
        total = time.perf_counter() - t0
        own = spec.seconds
        rows.append((f.__qualname__, total, own, spec.timings))
    first = rows[0]
    rest = rows[1:]
    own = [r[2] for r in rest]
    print(f"functions transformed: {len(rows)}")
    print(f"first transformation of the process ({first[0]}): {1000 * first[1]:.1f} ms")
    print(
        f"per function afterwards (transform + compile + link): median {1000 * statistics.median(own):.1f} ms, "
        f"90th percentile {1000 * sorted(own)[int(0.9 * len(own))]:.1f} ms, max {1000 * max(own):.1f} ms"
    )
    worst = sorted(rest, key=lambda r: -r[2])[:3]
    for name, _, sec, timings in worst:
        stages = ", ".join(f"{k} {1000 * v:.1f}" for k, v in timings.items() if v > 0.0005)
        print(f"  {name}: {1000 * sec:.1f} ms ({stages})")
    f, active = targets()[5]
    spec = compiler.specialize(f, active)
    n = 10000
    t0 = time.perf_counter()
    for _ in range(n):
        compiler.specialize(f, active)
    print(
        f"a later call's lookup and validity check: {1e6 * (time.perf_counter() - t0) / n:.1f} us"
    )


if __name__ == "__main__":
    main()
