# ruff: noqa: B007, B023, F841  (the programs are what the fuzzer found, unused names and all)
"""wrong-value: `+=` on an array another name shares is neither followed nor refused.

    for i in range(1): pass
    B2 = B;  B2 += 1.0;  return np.sum(B)
Python: np.sum(B) + 9 (B2 is B, so B changed); cpsad (both modes): np.sum(B) as it was before.
docs/reference.md says this is refused when it runs; without the loop before it, cpsad gets it
right. The same when a local function changes its argument in place (`def g(u): u *= 0.5`
called with an input array), or a helper's argument is changed by a function it calls.
Features: aug_array, alias (a bare-name copy, an argument), for_range.
"""

import numpy as np


def f(B):
    for i in range(1):
        pass
    B2 = B
    B2 += 1.0
    return np.sum(B)


ARGS = (np.array([[0.5, -0.2, 0.1], [0.3, 0.8, -0.6], [-0.4, 0.2, 0.9]]),)
STATUS = "fixed"

if __name__ == "__main__":
    from tests.fuzz.findings import show

    show(__file__)
