# ruff: noqa: B007, B023, F841  (the programs are what the fuzzer found, unused names and all)
"""wrong-grad: a decorated helper changes its argument in place, and no one refused it.

    @double                                  (wrapper(*args): return fn(*args))
    def helper11(a12): a12 *= 0.5
    vec9 = A[2]; helper11(vec9); return vec9[0]
Python halves A[2] (a view); cpsad's gradient was 1 for 0.5 (0.125 after the loop). Whether a
helper may change what it is given was judged from its source, and the wrapper's only call is
of `fn`, a variable of its closure, which was looked up as a global (none: "changes nothing").
A name a closure cell holds is now followed to the function it holds (and anything else there
counts as "may"), so the call runs transformed and the helper's own check refuses the change,
as it does without the decorator. (Seed 407761 of 400000..419999, on the code of 2 December.)
Features: decorator, aug_array, while, index.
"""

import numpy as np


def double(fn):
    def wrapper(*args, **kwargs):
        return fn(*args, **kwargs)

    return wrapper


@double
def helper11(a12):
    a12 *= 0.5


def f(A):
    vec9 = A[2]
    k10 = 0
    while k10 < 3:
        k10 += 1
        vec16 = helper11(vec9)
    return vec9[0]


ARGS = (
    np.array(
        [
            [-1.19712214, -0.34464229, 0.55551998],
            [0.58881034, 0.09186337, 0.71876746],
            [-0.12895779, -0.31182334, 1.02288849],
        ]
    ),
)
STATUS = "fixed"

if __name__ == "__main__":
    from tests.fuzz.findings import show

    show(__file__)
