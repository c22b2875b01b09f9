# ruff: noqa: B007, B023, F841  (the programs are what the fuzzer found, unused names and all)
"""bad-refusal: a closure passed to a helper whose result is inactive, then called elsewhere.

    g5 = lambda u: v;  h2 = compose(0.5, g5)      (compose returns lambda t: f2(t))
    pair = (apply_twice(h2, v), A);  return 0.5
cpsad: "`f2` has no derivative rule and cpsad cannot read its source" -- `compose` ran as a
plain call, so the lambda it made holds g5 as emitted code's `Closure`, which the dispatch
classified as unknown. (Seed 22430.) A `Closure` is now a function value ("dynamic").
Features: fn_returned, closure_helper, call_fn_value.
"""

import numpy as np


def compose(f1, f2):
    return lambda t: f2(t)


def apply_twice(fn, v):
    once = v
    twice = fn(once)
    return twice


def f(A, v):
    g5 = lambda u6: v
    h2 = compose(0.5, g5)
    pair17 = (apply_twice(h2, v), A)
    return 0.5 + 0.0 * np.sum(A)


ARGS = (
    np.array([[-0.4, -0.1, 1.1], [-0.4, -1.0, -0.9], [-0.7, 1.2, 0.4]]),
    np.array([-0.9, 0.9, 0.1]),
)
STATUS = "fixed"

if __name__ == "__main__":
    from tests.fuzz.findings import show

    show(__file__)
