# ruff: noqa: B007, B023, F841  (the programs are what the fuzzer found, unused names and all)
"""crash: `.dot` of a constant array, in a helper, applied to a differentiable value.

    def helper(a): return np.ones(3).dot(a)
    def f(w): return helper(w)
cpsad (reverse and forward): TypeError: cpsad: `ndarray.dot` was called on differentiable
values, but it has no derivative rule and no Python source (the emitted code calls
`call_bp(np.ones(3).dot, k, w)`). Written in f itself it works; docs/reference.md lists
`.dot()`. Right: gradient ones(3).
Features: helper_call, matmul (method form), a constant receiver.
"""

import numpy as np


def helper(a):
    return np.ones(3).dot(a)


def f(w):
    return helper(w)


ARGS = (np.array([0.1, 0.2, 0.3]),)
STATUS = "fixed"

if __name__ == "__main__":
    from tests.fuzz.findings import show

    show(__file__)
