# ruff: noqa: B007, F841  (the programs are what the fuzzer found, unused names and all)
"""wrong-grad: NaN where the gradient is finite, through a loop-carried value that overflows
unused beside one that is used.

    s6 = np.sum(A); mat7 = v
    for i in range(12): mat7 = np.tanh(v); s6 += s6 ** 2     (s6 overflows to inf)
    return np.sum(mat7) + A[1, 0]
Right (central differences, and a tracer, which never visits s6's path): 1 at A[1, 0], zeros
elsewhere. cpsad: NaN everywhere. The loop's function returns its carried values as one tuple,
`mat7, s6 = loop(...)`, and Activity followed that tuple as one value: `mat7` reaching the result
made the tuple needed, the tuple made `s6` needed, so the loop got adjoint code for `s6`, whose
zero adjoint its rule multiplied by the infinite slope `2 * s6`. Fixed: Activity follows a
tuple's entries from where it is made (`t = a, b`, a local function's return) to where it is
unpacked (`activity.Entries`): only `mat7`'s entry is needed, and the loop, which computes
nothing the result reads from `A`, gets no adjoint code at all. Seed 190262 of 190000..190299
(`python -m tests.fuzz --seed 190000 --n 300`), reduced by hand; the same through a `while` loop
around a `for` loop, and with a dict of the overflowing value built and dropped, in the seed.
Features: for_range, aug_num, np_elementwise, reduce, index.
"""

import numpy as np


def f(A, v):
    s6 = np.sum(A)
    mat7 = v
    for i in range(12):
        mat7 = np.tanh(v)
        s6 += s6**2
    return np.sum(mat7) + A[1, 0]


ARGS = (
    np.array([[0.5, 0.8, 0.9], [0.7, 0.6, 0.9], [0.1, 0.2, 0.3]]),
    np.array([1.0, 1.0, 1.0]),
)
STATUS = "fixed"

if __name__ == "__main__":
    from tests.fuzz.findings import show

    show(__file__)
