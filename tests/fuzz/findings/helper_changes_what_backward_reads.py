# ruff: noqa: B007, B023, F841  (the programs are what the fuzzer found, unused names and all)
"""wrong-grad: a helper changes in place an argument that the backward pass reads.

    vec4 = v @ A
    helper12(0.5, v)        (a14 += 0.5: changes v, which nothing reads after)
    return np.mean(vec4)
Python: the value uses v before the change; the derivative with respect to A is v's. cpsad:
the adjoint of `v @ A` read v after the helper had changed it: A's gradient was that of v + 0.5.
(Seed 47935; seed 36808 is the forward-mode twin, through a decorator's wrapper.) An argument
another statement reads -- before the call too -- counts as held: the helper refuses the change.
Features: helper_call, aug_array, matmul.
"""

import numpy as np


def helper12(a13, a14):
    a14 += 0.5


def f(v, A):
    vec4 = v @ A
    vec15 = helper12(0.5, v)
    return np.mean(vec4)


ARGS = (
    np.array([-0.29, -0.3, -0.11]),
    np.array([[0.3, -0.2, 1.0], [1.2, 0.2, 0.8], [0.8, 0.9, 1.0]]),
)
STATUS = "fixed"

if __name__ == "__main__":
    from tests.fuzz.findings import show

    show(__file__)
