"""A closure made on every step of a training loop: its cost per step and the memory it keeps.

    python benchmarks/closure_steps.py [--steps 10000]

``cpsad.grad(lambda w: loss(w, X, y))(w)`` is what autograd and JAX users write in a loop: a new
function object every step, of the same code. cpsad transforms that code once and links each new
closure to it (``cpsad/compiler.py``); this measures a step of it against a step that
differentiates the module-level ``loss`` directly (the limit: the same gradient, no new
function), and the memory the process holds after every thousand steps (``tracemalloc``: it
must stay flat -- nothing keeps a dropped closure or its data alive).
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import sys
import tempfile
import time
import tracemalloc

os.environ.setdefault("CPSAD_CACHE_DIR", tempfile.mkdtemp(prefix="cpsad-closure-"))
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import numpy as np  # noqa: E402

import cpsad  # noqa: E402


def loss(w, X, y):
    return np.mean((np.tanh(X @ w) - y) ** 2)


def steps_module(w, X, y, n):
    g = cpsad.grad(loss)
    for _ in range(n):
        w = w - 0.1 * g(w, X, y)
    return w


def steps_closure(w, X, y, n):
    for _ in range(n):
        w = w - 0.1 * cpsad.grad(lambda w: loss(w, X, y))(w)
    return w


def per_step(fn, w, X, y, n, repeats=5) -> float:
    best = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn(w, X, y, n)
        best = min(best, (time.perf_counter() - t0) / n)
    return best


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=10_000)
    ap.add_argument("--json", action="store_true", help="print the results as one JSON line")
    a = ap.parse_args(argv)
    rng = np.random.default_rng(0)
    X, y, w = rng.normal(size=(32, 8)), rng.normal(size=32), rng.normal(size=8)
    steps_module(w, X, y, 10)
    steps_closure(w, X, y, 10)  # (the first transformation: not a step's cost)
    module = per_step(steps_module, w, X, y, 1000)
    closure = per_step(steps_closure, w, X, y, 1000)
    gc.collect()
    tracemalloc.start()
    held = []
    for _ in range(a.steps // 1000):
        steps_closure(w, X, y, 1000)
        gc.collect()
        held.append(tracemalloc.get_traced_memory()[0])
    tracemalloc.stop()
    out = {
        "module_us": 1e6 * module,
        "closure_us": 1e6 * closure,
        "ratio": closure / module,
        "held_kb": [round(h / 1024, 1) for h in held],
    }
    out["steps"] = a.steps
    if a.json:
        print(json.dumps(out))
        return out
    print(
        f"per step: module-level function {out['module_us']:.1f} us, fresh closure "
        f"{out['closure_us']:.1f} us ({out['ratio']:.2f}x)"
    )
    print(f"memory held after each 1000 of {a.steps} closure steps (KiB): {out['held_kb']}")
    return out


if __name__ == "__main__":
    main()
