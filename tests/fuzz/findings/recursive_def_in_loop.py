# ruff: noqa: B007, B023, F841  (the programs are what the fuzzer found, unused names and all)
"""wrong-grad: a recursive local function defined in a loop lost its derivative.

    for i4 in range(1):
        def rec6(u7, m8): return u7 if m8 == 0 else rec6(x, m8 - 1)
        mat3 += rec6(0.5, 2)
cpsad: d/dx 0.0; right 3.0. `rec6` reads itself, so the loop shared the name as a late-bound
variable (`nonlocal rec6`), and then the call by name no longer found the local function: it ran
as plain Python. (Seeds 42227, 48275, 48888 of 30000..49999.) A function the loop defines is
not such a variable.
Features: recursion, local_def, for_range, aug_array.
"""

import numpy as np


def f(x, A):
    mat3 = A * 1.0
    for i4 in range(1):

        def rec6(u7, m8):
            if m8 == 0:
                return u7
            return rec6(x, m8 - 1)

        s5 = rec6(0.5, 2)
        mat3 += s5
    return np.trace(mat3)


ARGS = (0.95, np.array([[1.0, 0.9, 0.6], [-0.9, 0.2, 0.7], [-0.9, 0.2, 0.3]]))
STATUS = "fixed"

if __name__ == "__main__":
    from tests.fuzz.findings import show

    show(__file__)
