# ruff: noqa: B007, B023, F841  (the programs are what the fuzzer found, unused names and all)
"""wrong-grad (on the lead's list): `[a] + [b, c]` misplaces the entries' adjoints.

    ys = [0.5] + [v, v];  return ys[0]
cpsad: gradient ones(3); right: zeros (ys[0] is the constant). Forward mode raises IndexError
for `ys[2]`.
Features: list_concat.
"""

import numpy as np


def f(v):
    ys = [0.5] + [v, v]
    return ys[0]


ARGS = (np.array([0.1, 0.2, 0.3]),)
STATUS = "fixed"

if __name__ == "__main__":
    from tests.fuzz.findings import show

    show(__file__)
