# ruff: noqa: B007, B023, F841  (the programs are what the fuzzer found, unused names and all)
"""wrong-grad: a helper called in a loop changes its argument in place; its result inactive.

    def helper4(a5, a6, a7): a6 -= a6; return 0.5
    for ...: acc17 += helper4(0.5, B, 0.5)
    return B[1, 2]
Python: B zeroed (value 0, gradient 0); cpsad: gradient 1 at [1, 2], in both modes -- the loop's
function computed nothing active, so it was not transformed, and the call ran as plain Python
outside the derivative (where the helper's own check never runs). A function with a call that may
change an active argument someone reads after is now transformed (activity). (Seed 65810; its
twin through a local function: helper_changes_argument_of_local.py.)
Features: helper_call, aug_array, for_range.
"""

import numpy as np


def helper4(a5, a6, a7):
    a6 -= a6
    return 0.5


def f(B):
    acc17 = 0.5
    for i18 in range(1):
        acc17 += helper4(0.5, B, 0.5)
    return B[1, 2]


ARGS = (np.array([[1.088, 0.036, -0.165], [0.531, -0.443, 0.259], [0.578, -0.011, -0.467]]),)
STATUS = "fixed"

if __name__ == "__main__":
    from tests.fuzz.findings import show

    show(__file__)
