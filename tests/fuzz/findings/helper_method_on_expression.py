# ruff: noqa: B007, B023, F841  (the programs are what the fuzzer found, unused names and all)
"""refused: a method of an expression inside a one-line helper.

    def helper(a): return (np.ones(3) - a).sum()
    def f(x): return helper(x)
cpsad: TransformError "the attribute `.sum` of a differentiable value has no derivative rule";
written in f itself, `(np.ones(3) - x).sum()` works. Right: gradient -3.0.
Features: helper_1line, reduce (method form).
"""

import numpy as np


def helper(a):
    return (np.ones(3) - a).sum()


def f(x):
    return helper(x)


ARGS = (0.3,)
STATUS = "fixed"

if __name__ == "__main__":
    from tests.fuzz.findings import show

    show(__file__)
