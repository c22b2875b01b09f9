# ruff: noqa: B007, B023, F841  (the programs are what the fuzzer found, unused names and all)
"""refused (falsely): `acc += v` on an array nobody else holds, beside a closure given away.

    def g2(u3): return s1              (reads s1)
    s6 = s1
    if ...: twice(g2)(0.5)             (g2 given to a helper that returns a closure of it)
    acc = np.zeros(3); for ...: acc += 0.5
Refused at run time: "`s6` of the function that calls `loop_L..` holds it too". What a closure
given away reads counts as kept by code that may run later, and the loop's function, a caller of which holds
such a value, relates its own arguments to it. Nothing holds `acc` but `acc`: Python changes only
it, and so would cpsad. 3 of the 20,000 programs of seeds 400000..419999 (407939 reduced here;
410334 is accumulator_refused_beside_unknown_cell.py). (Reduced by the fuzzer's reducer, the call
in the branch made readable.)
Cause: `acc13 = mat5.dot(1.0)` after the loop *assigns* `acc13`, and Aliasing's `confined` took
every statement naming a holder for one that may give its value away (here to a method no rule
knows). Only a read can: a holder assigned anew lets go of the object.
Features: capture, fn_returned, acc_zeros, aug_array, for_range.
"""

import numpy as np


def twice(fn):
    def both(t):
        return fn(fn(t))

    return both


def f(y):
    def g2(u3):
        return s1

    s1 = np.array([0.5, 0.5, 0.5]) @ np.linspace(0.5, 0.5, 3)
    mat5 = np.ones(3)
    s6 = s1
    if y > 10.0:
        d10 = twice(g2)(0.5)
    acc13 = np.zeros(3)
    for i14 in range(1):
        acc13 += 0.5
    acc13 = mat5.dot(1.0)
    return s6 * y


ARGS = (0.18130717473119518,)
STATUS = "fixed"

if __name__ == "__main__":
    from tests.fuzz.findings import show

    show(__file__)
