# ruff: noqa: B007, F841  (the programs are what the fuzzer found, unused names and all)
"""refused (falsely): `acc += v` in a loop, the array given to a user's function only after it.

    s5 = helper1(...)                  (what a user's function returns: anything it could keep)
    acc = np.zeros(3); for ...: acc += 0.5
    rec_tree(acc[1], 3)                (the array given away, after the loop)
Refused at run time: "`s5` of the function that calls `loop_L..` holds it too". A user's function
may keep what it is given, so `s5` may be anything such code holds -- but it is given `acc` only
after the last `+=`: in Python it gets the changed array, in cpsad the new one, the same values.
Aliasing asked whether the array ever left the function, anywhere in it; now, up to the point
of the question (``confined(..., upto=)``, with the values held up to there). Seed 410334 of
seeds 400000..419999 (reduced by the fuzzer's reducer); 415940 is
accumulator_given_away_beside_a_closure.py.
Features: acc_zeros, aug_array, for_range, helper_call.
"""

import numpy as np


def rec_tree(t, d):
    pass


def helper1(a2, a3, a4):
    pass


def f(v):
    s5 = helper1(a2=0.5, a3=0.5, a4=0.5)
    acc6 = np.zeros(3)
    for i7 in range(1):
        acc6 += 0.5
    total8 = s5
    s11 = rec_tree(acc6[1], 3)
    return 0.5 * np.sum(v)


ARGS = (np.array([0.03444099, -0.40933263, 0.63032712]),)
STATUS = "fixed"

if __name__ == "__main__":
    from tests.fuzz.findings import show

    show(__file__)
