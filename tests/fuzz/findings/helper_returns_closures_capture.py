# ruff: noqa: B007, B023, F841  (the programs are what the fuzzer found, unused names and all)
"""wrong-value: a helper given a closure returns what the closure read; `-=` then changes it.

    def g13(u14): return v
    vec15 = apply_twice(g13, 0.5)       (vec15 is v itself)
    v -= 0.5;  return vec15[0]
Python: vec15 changed with v; cpsad: the rebinding's value -- the alias analysis took a user
function's result to be only what it was given, not what the closures it was given read. (Seed
51215 of 50000..69999.) Now refused when it runs, where `vec15` is `v`.
Features: closure_helper, capture, aug_array.
"""

import numpy as np


def apply_twice(fn, v):
    twice = fn(0.5)
    return twice


def f(v):
    def g13(u14):
        return v

    vec15 = apply_twice(g13, 0.5)
    v -= 0.5
    return vec15[0]


ARGS = (np.array([-1.12, -1.19, 0.21]),)
STATUS = "fixed"

if __name__ == "__main__":
    from tests.fuzz.findings import show

    show(__file__)
