# ruff: noqa: B007, B023, F841  (the programs are what the fuzzer found, unused names and all)
"""wrong-grad (on the lead's list): a closure defined before the variable it reads.

    g = lambda u: s;  s = v[2];  f = np.sum(apply_twice(g, v)) + s
cpsad: the gradient misses the closure's path (jvp crashes with NameError in similar programs).
Features: capture_before_assign, lambda, apply_multi.
"""

import numpy as np


def apply_twice(fn, v):
    once = fn(v)
    return fn(once)


def f(v):
    g = lambda u: s
    s = v[2]
    return np.sum(apply_twice(g, v)) + s


ARGS = (np.array([-1.11237578, 0.06837254, 0.77190462]),)
STATUS = "fixed"

if __name__ == "__main__":
    from tests.fuzz.findings import show

    show(__file__)
