# ruff: noqa: B007, B023, F841  (the programs are what the fuzzer found, unused names and all)
"""refused: `break` in the `else` of an inner `for` (it breaks the outer loop).

    for e in v:
        for i in range(1): pass
        else: break
    return np.sum(v)
cpsad: TransformError "unsupported statement `break`"; docs/reference.md lists `for ... else`
and `break` as supported. Right: gradient ones(3).
Features: for_seq, for_range, for_else, break.
"""

import numpy as np


def f(v):
    for e in v:
        for i in range(1):
            pass
        else:
            break
    return np.sum(v)


ARGS = (np.array([0.1, 0.2, 0.3]),)
STATUS = "fixed"

if __name__ == "__main__":
    from tests.fuzz.findings import show

    show(__file__)
