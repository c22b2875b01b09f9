# ruff: noqa: B007, B023, F841  (the programs are what the fuzzer found, unused names and all)
"""wrong-grad (gradient shape): a float parameter rebound to an array gets an array gradient.

    def f(x): x = np.ones(3); return 1.0
cpsad: gradient array([0., 0., 0.]); right: 0.0, a float like the argument x.
Features: reassign (an input's name reused for a value of another kind).
"""

import numpy as np


def f(x):
    x = np.ones(3)
    return 1.0


ARGS = (0.3,)
STATUS = "fixed"

if __name__ == "__main__":
    from tests.fuzz.findings import show

    show(__file__)
