"""cpsad.jit: the scalar loops' gradients compiled by Numba, against the hand-written numpy pass.

    python benchmarks/jit.py          # a table
    python benchmarks/jit.py --json   # one JSON line, for benchmarks/run.py

For the scalar loop (1,000 steps) and the 100k loop: the time of a call of
``cpsad.value_and_grad(cpsad.jit(loss))`` and of the hand-written pass (``handwritten``, plain
Python floats -- the baseline of every workload), measured in the same process, min of repeats;
then, each in a fresh process with an empty cache folder, the first call (transformation, staging
and Numba's compile), and in another fresh process on that folder, the first call again (Numba's
cache hit), with ``import numba`` -- which every process using Numba pays -- timed apart.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import tempfile
import time
import timeit

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

FIRST_CALL = """
import sys, time, json
sys.path.insert(0, {root!r})
t0 = time.perf_counter()
import numba
t1 = time.perf_counter()
import cpsad
from benchmarks.workloads.scalar_loop import loss
g = cpsad.value_and_grad(cpsad.jit(loss), argnums=(0, 1, 2))
t2 = time.perf_counter()
g(0.5, 0.7, 0.3, 1000)
t3 = time.perf_counter()
from benchmarks.jit import second
h = cpsad.value_and_grad(cpsad.jit(second), argnums=(0, 1))
t4 = time.perf_counter()
h(0.5, 0.7, 100)
t5 = time.perf_counter()
print(json.dumps({{"import_numba": t1 - t0, "first_call": t3 - t2, "second": t5 - t4}}))
"""


def second(x, w, n):
    """Another function: its first call in a process that has used Numba already."""
    s = 0.0
    for i in range(n):
        s = s + math.cos(x * i) * w
    return s


def _fresh(folder: str) -> dict:
    env = {**os.environ, "CPSAD_CACHE_DIR": folder}
    out = subprocess.run(
        [sys.executable, "-c", FIRST_CALL.format(root=ROOT)],
        env=env,
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def measure() -> dict:
    sys.path.insert(0, ROOT)
    import cpsad
    from benchmarks.workloads.scalar_loop import handwritten, loss

    g = cpsad.value_and_grad(cpsad.jit(loss), argnums=(0, 1, 2))
    import numba

    floor = numba.njit(handwritten)  # (the hand-written pass itself compiled: the floor)
    out = {}
    for name, n, number in (("scalar loop", 1000, 200), ("100k loop", 100_000, 3)):
        args = (0.5, 0.7, 0.3, n)
        value, grads = g(*args)
        want_value, want = handwritten(*args)
        assert abs(value - want_value) <= 1e-9 * abs(want_value)
        assert all(abs(a - b) <= 1e-9 * abs(b) for a, b in zip(grads, want))
        jit = min(timeit.repeat(lambda a=args: g(*a), number=number, repeat=7)) / number
        hand = min(
            timeit.repeat(lambda a=args: handwritten(*a), number=max(1, number // 10), repeat=7)
        )
        hand /= max(1, number // 10)
        floor(*args)
        njit = min(timeit.repeat(lambda a=args: floor(*a), number=number, repeat=7)) / number
        out[name] = {
            "jit_s": jit,
            "hand_s": hand,
            "ratio": jit / hand,
            "hand_njit_s": njit,
            "hand_njit_ratio": njit / hand,
        }
    with tempfile.TemporaryDirectory(prefix="cpsad-jit-bench-") as folder:
        cold = _fresh(folder)
        warm = _fresh(folder)
    out["compile"] = {
        "first_call_s": cold["first_call"],
        "cache_hit_first_call_s": warm["first_call"],
        "import_numba_s": warm["import_numba"],
        "cache_hit_second_function_s": warm["second"],
    }
    return out


def main(argv=None) -> None:
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--json", action="store_true")
    args = p.parse_args(argv)
    t0 = time.perf_counter()
    r = measure()
    if args.json:
        print(json.dumps(r))
        return
    for name in ("scalar loop", "100k loop"):
        m = r[name]
        print(
            f"{name}: cpsad.jit {m['jit_s'] * 1e6:.1f} us, hand-written {m['hand_s'] * 1e6:.1f} us, "
            f"ratio {m['ratio']:.3f}x; the hand-written pass compiled by numba.njit "
            f"{m['hand_njit_s'] * 1e6:.1f} us ({m['hand_njit_ratio']:.3f}x)"
        )
    c = r["compile"]
    print(
        f"first call (transform + stage + Numba compile): {c['first_call_s']:.2f} s; "
        f"in a new process, Numba's cache hit: {c['cache_hit_first_call_s'] * 1e3:.0f} ms "
        f"(import numba apart: {c['import_numba_s'] * 1e3:.0f} ms), then another function's "
        f"cache hit: {c['cache_hit_second_function_s'] * 1e3:.0f} ms; "
        f"{time.perf_counter() - t0:.0f} s"
    )


if __name__ == "__main__":
    main()
