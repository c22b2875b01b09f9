# ruff: noqa: B007, F841  (the programs are what the fuzzer found, unused names and all)
"""refused (falsely): `acc += 1` in a loop, beside a closure given away, the array given after.

    def g11(u12): pa13, pb14 = pair10        (a closure of pair10, given to a user's function)
    acc = np.zeros(3); for ...: acc += 1
    s5 += s15
    make_scale(acc[1])                       (the array given away, after the loop)
Refused at run time: "`s15` ...; `s20` ...; `s5` of the function that calls `loop_L..` holds it
too". Two causes, both needed here: the array given to a user's function after the loop counted
as given before it (see accumulator_given_away_after_its_loop.py), and `acc22 = loop_L..(...)`,
which only *assigns* the variable, counted as a statement that may give its old value away.
Seed 415940 of seeds 400000..419999 (reduced by the fuzzer's reducer).
Features: acc_zeros, aug_array, capture, for_range, fn_arg_recursion, tuple_capture_unpack.
"""

import numpy as np


def rec_fn(fn, t, n):
    pass


def apply_all(fns, v):
    return 0.5


def make_scale(c):
    pass


def f(v, y):
    ys4 = [0.5 for e3 in v if 0.5]
    s5 = sum(ys4)
    pair10 = s5

    def g11(u12):
        pa13, pb14 = pair10

    s15 = y
    s20 = apply_all(0.5, rec_fn(g11, s15, 2))
    acc22 = np.zeros(3)
    for i23 in range(1):
        acc22 += 1
    s5 += s15
    h24 = make_scale(acc22[1])
    return s20 * y + np.sum(v * acc22)


ARGS = (np.array([1.02144899, 0.53699826, 0.54886973]), 0.9303735248953406)
STATUS = "fixed"

if __name__ == "__main__":
    from tests.fuzz.findings import show

    show(__file__)
