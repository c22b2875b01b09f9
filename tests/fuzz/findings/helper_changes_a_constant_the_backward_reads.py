# ruff: noqa: B007, F841  (the programs are what the fuzzer found, unused names and all)
"""wrong-grad: a helper changes in place an array with no derivative that an adjoint reads.

    mat6 = np.ones(3)                  (helper1, inlined: an array no input reaches)
    w = np.dot(mat6, x)                (its adjoint reads mat6)
    helper4(mat6)                      (a5 -= 0.5: Python changes mat6)
Right (central differences): 3.0 (mat6 as it was at the dot); cpsad: 1.5 -- the backward pass,
which runs after everything, read mat6 after the helper had changed it. The helper ran as plain
Python (nothing it was given is differentiated), so its own in-place checks never saw the call;
the fix for helper_changes_what_backward_reads.py covered differentiated arguments only. Now
a copy of mat6 is kept before the call and compared after it (Activity's
``_changed_after_read``, ``check_unchanged``): the change is refused when it happens, with the
copy that makes it right (a helper that could change it and does not is accepted); forward mode,
which computes each derivative as it goes, is accepted and right. (A static refusal of every
such call refused 22 of 400 fuzzed programs, nearly all falsely.) Seed 601422 of
seeds 600000..601499 (reduced by the fuzzer's reducer).
Features: helper_call, aug_array, matmul.
"""

import numpy as np


def helper1(a2):
    return np.ones(3)


def helper4(a5):
    a5 -= 0.5


def f(x, w):
    mat6 = helper1(1.0)
    s7 = x
    w = np.dot(mat6, s7)
    vec17 = helper4(mat6)
    return np.sum(w)


ARGS = (1.1362830101921053, np.array([-0.69872871, 0.58390771, 0.85891932]))
STATUS = "fixed"

if __name__ == "__main__":
    from tests.fuzz.findings import show

    show(__file__)
