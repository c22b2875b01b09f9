"""What ``cpsad.checkpoint`` saves: the peak memory of a gradient through a chain of blocks,
each making large temporaries, with and without checkpointing the block -- and what it costs in
time (the backward pass runs each block again).

    python benchmarks/checkpoint.py                 # a table
    python benchmarks/checkpoint.py --json          # one JSON line, for benchmarks/run.py

Peak memory is tracemalloc's (numpy reports its array buffers to it), above what the arguments
hold; times are the best of three calls after a first (transforming) one.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
import tracemalloc

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import cpsad  # noqa: E402


def block(x, w):
    """One layer: five temporaries the size of ``x`` (what the backward pass reads)."""
    a = np.tanh(x * w)
    b = np.sin(a) * x
    c = np.exp(-b * b)
    d = c * a + b
    return np.cos(d) + x


checkpointed = cpsad.checkpoint(block)


def chain(x, w):
    for _ in range(8):
        x = block(x, w)
    return np.sum(x)


def chain_checkpointed(x, w):
    for _ in range(8):
        x = checkpointed(x, w)
    return np.sum(x)


def measure(f, x, w) -> dict:
    g = cpsad.grad(f, (0, 1))
    g(x, w)  # transformed, and its caches warm
    tracemalloc.start()
    tracemalloc.reset_peak()
    base = tracemalloc.get_traced_memory()[0]
    g(x, w)
    peak = tracemalloc.get_traced_memory()[1] - base
    tracemalloc.stop()
    best = min(_timed(g, x, w) for _ in range(3))
    return {"peak_mb": peak / 2**20, "seconds": best}


def _timed(g, x, w) -> float:
    t0 = time.perf_counter()
    g(x, w)
    return time.perf_counter() - t0


def main(argv=None) -> None:
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--n", type=int, default=1_000_000, help="elements of x (float64)")
    p.add_argument("--json", action="store_true", help="one JSON line")
    args = p.parse_args(argv)
    x = np.random.default_rng(0).normal(size=args.n)
    w = 0.7
    plain, ckpt = measure(chain, x, w), measure(chain_checkpointed, x, w)
    grads = cpsad.grad(chain, (0, 1))(x, w), cpsad.grad(chain_checkpointed, (0, 1))(x, w)
    same = bool(np.allclose(grads[0][0], grads[1][0]) and np.isclose(grads[0][1], grads[1][1]))
    row = {
        "n": args.n,
        "array_mb": x.nbytes / 2**20,
        "plain": plain,
        "checkpointed": ckpt,
        "memory_ratio": ckpt["peak_mb"] / plain["peak_mb"],
        "time_ratio": ckpt["seconds"] / plain["seconds"],
        "same_gradient": same,
    }
    if args.json:
        print(json.dumps(row))
        return
    print(f"8 blocks of 5 temporaries, x of {args.n:,} float64 ({row['array_mb']:.1f} MB)")
    for name in ("plain", "checkpointed"):
        r = row[name]
        print(f"  {name:>12}: peak {r['peak_mb']:8.1f} MB   {r['seconds'] * 1e3:8.1f} ms")
    print(
        f"  checkpointed / plain: memory {row['memory_ratio']:.2f}x, time {row['time_ratio']:.2f}x;"
        f" same gradient: {same}"
    )


if __name__ == "__main__":
    main()
