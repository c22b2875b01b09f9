# ruff: noqa: B007, B023, F841  (the programs are what the fuzzer found, unused names and all)
"""wrong-grad: a local function passes what its caller reads after to a helper that changes it.

    def g(X): helper4(0.5, X, 0.5); return 1.0
    C = B * 1.0;  g(C);  return C[1, 2]
Python: C zeroed (gradient 0); cpsad: 1 at [1, 2]. Aliasing related the holders of a function
(who in its callers may read what it was given) only for functions with an update of their own:
`g` has none (the helper's update is in the helper), so `X` was held by nobody and the call ran
plain. Every function that calls a helper that may change its arguments is now related too.
(A variant of seed 65810, helper_changes_argument_in_loop.py.)
Features: helper_call, aug_array, local_def.
"""

import numpy as np


def helper4(a5, a6, a7):
    a6 -= a6
    return 0.5


def f(B):
    def g(X):
        helper4(0.5, X, 0.5)
        return 1.0

    C = B * 1.0
    g(C)
    return C[1, 2]


ARGS = (np.array([[1.088, 0.036, -0.165], [0.531, -0.443, 0.259], [0.578, -0.011, -0.467]]),)
STATUS = "fixed"

if __name__ == "__main__":
    from tests.fuzz.findings import show

    show(__file__)
