# ruff: noqa: B007, B023, F841  (the programs are what the fuzzer found, unused names and all)
"""wrong-grad: NaN where the gradient is finite, through a loop whose values overflow.

    def g8(u9): return A                 (makes A a variable the loop shares)
    vec10 = g8(0.5)
    for ...: A = np.matmul(A, A)         (16 squarings: inf)
    return np.mean(vec10)
Right (autograd): 1/9 everywhere; cpsad gave NaN. The loop's values reach nothing, but `A` is a
cell, whose writes are shifts: backward, the zero adjoint made for each write went through
`matmul`'s rule, and 0 * inf is NaN. A tracer never visits an unused path. Fixed: an absent
adjoint skips its value's rules (cps's `if y_bar is not None:`), and a cell write passes an
absent adjoint on instead of making a zero. (Seeds 38135, 68592 and, without the cell, 36365 --
where autograd gives NaN too -- of 30000..49999.)
Features: capture, while, for_range, matmul.
"""

import numpy as np


def f(A):
    def g8(u9):
        return A

    vec10 = g8(0.5)
    k11 = 0
    while k11 < 4:
        k11 += 1
        for i12 in range(4):
            A = np.matmul(A, A)
    return np.mean(vec10)


ARGS = (np.array([[0.887, 0.651, -0.115], [0.329, 0.269, 0.258], [-0.54, -0.904, -0.0005]]),)
STATUS = "fixed"

if __name__ == "__main__":
    from tests.fuzz.findings import show

    show(__file__)
