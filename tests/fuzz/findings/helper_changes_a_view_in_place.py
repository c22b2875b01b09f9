# ruff: noqa: B007, B023, F841  (the programs are what the fuzzer found, unused names and all)
"""wrong-grad: a helper changes in place a view of the input (`helper(B[:])`); its result unused.

    def helper22(a): a *= 0.5
    helper22(B[:]);  return np.sum(B)
Python: B halved (gradient 0.5 each); cpsad: 1.0 -- the slice was not active (nothing read it
after), so the call ran as plain Python outside the derivative. (Seed 20856.) An argument a
helper may change, which someone reads after (aliasing's held arguments), now counts as needed:
the call is transformed and its own check refuses the change when it runs.
Features: helper_call, aug_array, slice.
"""

import numpy as np


def helper22(a23):
    a23 *= 0.5


def f(B):
    mat27 = helper22(B[:])
    return np.sum(B)


ARGS = (np.array([[0.9, 0.5, 1.0], [-1.1, -1.0, 0.8], [-0.7, -0.9, -0.3]]),)
STATUS = "fixed"

if __name__ == "__main__":
    from tests.fuzz.findings import show

    show(__file__)
