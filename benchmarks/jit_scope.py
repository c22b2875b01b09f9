"""cpsad.jit beyond loops: recursion and a return inside a loop, compiled against the Python
backpropagator (the same numbers; each must compile, or this stops).

    python benchmarks/jit_scope.py

For each program: the time of a call of ``cpsad.value_and_grad(f)`` and of
``cpsad.value_and_grad(cpsad.jit(f))``, in one process, min of 5 repeats (the compile excluded:
a first call made before).
"""

from __future__ import annotations

import math
import os
import sys
import timeit
import warnings

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def power(x, n):
    if n == 0:
        return 1.0
    return x * power(x, n - 1)


def fib_like(x, n):
    if n < 2:
        return x
    return fib_like(x, n - 1) * 0.5 + math.sin(fib_like(x, n - 2))


def tree(x, d):
    if d == 0:
        return math.tanh(x)
    return tree(x * 0.5, d - 1) * tree(x + 0.25, d - 1)


def calls_tree(x, w, d):
    return tree(x * w, d) + tree(w, d) * x


def accumulate_until(x, w, n):
    s = 0.0
    i = 0
    while i < n:
        s = s + math.sin(x * i) * w
        if s > 1.5:
            return s * x
        i += 1
    return s + w


CASES = [
    ("a function calling itself: power(x, 1000)", power, (1.0001, 1000), 0),
    ("calling itself twice: fib_like(x, 16)", fib_like, (0.7, 16), 0),
    (
        "a helper calling itself twice, depth 10 (compiled apart)",
        calls_tree,
        (0.4, 0.9, 10),
        (0, 1),
    ),
    ("a return inside a loop, 1,000 steps", accumulate_until, (0.01, 0.001, 1000), (0, 1)),
]


def main() -> None:
    sys.path.insert(0, ROOT)
    import cpsad

    print("| program | Python backpropagator | cpsad.jit | speed-up |")
    print("|---|---:|---:|---:|")
    for name, f, args, argnums in CASES:
        python = cpsad.value_and_grad(f, argnums)
        jit = cpsad.value_and_grad(cpsad.jit(f), argnums)
        with warnings.catch_warnings():
            warnings.simplefilter("error", cpsad.JitWarning)  # (it must compile)
            jit(*args)
        python(*args)
        tp = min(timeit.repeat(lambda: python(*args), number=5, repeat=5)) / 5  # noqa: B023
        tj = min(timeit.repeat(lambda: jit(*args), number=50, repeat=5)) / 50  # noqa: B023
        print(f"| {name} | {tp * 1e3:.3f} ms | {tj * 1e3:.4f} ms | {tp / tj:.0f}x |")


if __name__ == "__main__":
    main()
