# ruff: noqa: B007, B023, F841  (the programs are what the fuzzer found, unused names and all)
"""wrong-grad (gradient shape): the result of np.linspace is taken for a number.

    f(x) = np.sum(x + np.linspace(0.5, 1.5, 3))     (x a float)
cpsad: gradient array([1., 1., 1.]); the right gradient is 3.0 (a float, like x; jvp gives 3.0).
No unbroadcast is written for `x + <linspace>`, so the scalar's adjoint keeps the array's shape;
in other programs the same array-shaped adjoint crashes later ("array is not broadcastable to
correct shape", "could not broadcast input array from shape (3,) into shape (3,3)").
Features: arith, vector (any array built by np.linspace combined with a scalar).
"""

import numpy as np


def f(x):
    return np.sum(x + np.linspace(0.5, 1.5, 3))


ARGS = (0.3,)
STATUS = "fixed"

if __name__ == "__main__":
    from tests.fuzz.findings import show

    show(__file__)
