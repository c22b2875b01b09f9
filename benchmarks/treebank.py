"""The Tree-LSTM as a user training on a treebank sees it: every tree a new shape.

``make bench`` times each framework on one fixed tree, called again and again: jax.jit compiles
that tree once and then runs XLA's fused code (about 1.0x of the hand-written pass). A treebank
has a different tree in every example, and jax.jit, whose trace unrolls the recursion over the
tree, compiles again for each new one. This script times one pass over ``--trees`` distinct
random trees (32 words each, as the workload's), each call the first for its tree: jax.jit's
compile included, cpsad's code the same for every tree (transformed once, before the pass).

    python -m benchmarks.treebank --trees 5
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np

from benchmarks import frameworks, peers
from benchmarks.problem import Problem
from benchmarks.workloads import treelstm


def trees(n: int, leaves: int = 32, vocab: int = 100, seed: int = 1) -> list:
    rng = np.random.default_rng(seed)
    return [treelstm.random_tree(rng, leaves, vocab) for _ in range(n)]


def per_tree(framework: str, forest: list, label: int = 1) -> list[float]:
    """Seconds of each tree's first value-and-gradient call (the framework made once)."""
    base = treelstm.problem(False)
    params = base.args[0]
    warm = frameworks.make(framework, treelstm, base)
    warm.call()  # (cpsad: transformed; jax: its own first trace of the fixed tree)
    out = []
    for tree in forest:
        problem = Problem(args=(params, tree, label), argnums=base.argnums, static=base.static)
        runner = frameworks.make(framework, treelstm, problem)
        t0 = time.perf_counter()
        runner.call()
        out.append(time.perf_counter() - t0)
    return out


def measure(n: int) -> dict:
    """``{"trees": n, "rows": {framework: [seconds per tree]}}`` for ``n`` distinct trees."""
    forest = trees(n)
    fws = [frameworks.HAND, frameworks.CPSAD]
    if "jax" not in peers.MISSING:
        fws.append(frameworks.JAX_JIT)
    return {"trees": n, "rows": {fw: per_tree(fw, forest) for fw in fws}}


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--trees", type=int, default=5)
    p.add_argument("--json", action="store_true", help="one line of JSON (for make bench)")
    a = p.parse_args(argv)
    out = measure(a.trees)
    if a.json:
        print(json.dumps(out))
        return
    print("| framework | mean per new tree | slowest | fastest |")
    print("|---|---:|---:|---:|")
    for fw, ts in out["rows"].items():
        mean, most, least = np.mean(ts) * 1e3, max(ts) * 1e3, min(ts) * 1e3
        print(f"| {fw} | {mean:.1f} ms | {most:.1f} ms | {least:.1f} ms |")


if __name__ == "__main__":
    main()
