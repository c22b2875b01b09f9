# ruff: noqa: B007, B023, F841  (the programs are what the fuzzer found, unused names and all)
"""wrong-value (on the lead's list): lambdas made in a loop read the loop variable's last value.

Python: every fs[k](v) is v * 2 (i is 2 when they are called); cpsad uses i as it was when each
lambda was made (value and gradient wrong).
Features: late_binding, append, lambda.
"""

import numpy as np


def f(v):
    fs = []
    for i in range(3):
        fs.append(lambda u: u * i)
    return np.sum(fs[0](v))


ARGS = (np.array([0.1, 0.2, 0.3]),)
STATUS = "fixed"

if __name__ == "__main__":
    from tests.fuzz.findings import show

    show(__file__)
