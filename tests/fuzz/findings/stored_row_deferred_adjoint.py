"""wrong-grad: the replaced entries of a store got the adjoint of what replaced them.

    buf = 0.5 * A; buf[2] = 0.5; row = buf[0]; return np.trace(buf) + np.mean(row)
Right (central differences): A's gradient is 0 at (2, 2) -- that entry was replaced. cpsad: 0.5.
The store runs as `buf = stored(buf, 2, 0.5)` (rebinding semantics), whose adjoint rule gives
the old `buf` the adjoint with the replaced row zeroed (`without`). The adjoint arrived as a row's
scattered adjoint not yet summed (a `Deferred`, from `buf[0]`), which `without` passed on
unchanged. Fixed: `without` sums a Deferred first. Seed 800099 of the first run with the grammar
feature `array_store` (reduced by the fuzzer's reducer).
Features: array_store, index, matrix, reduce.
"""

import numpy as np


def f(A):
    buf3 = 0.5 * A
    buf3[2] = 0.5
    vec17 = buf3[0]
    return np.trace(buf3) + np.mean(vec17)


ARGS = (
    np.array(
        [
            [-0.87699412, -0.79169541, 0.97209285],
            [-0.23549749, 0.04127177, -0.66519385],
            [-0.74529896, 0.15638794, 0.21205134],
        ]
    ),
)
STATUS = "fixed"

if __name__ == "__main__":
    from tests.fuzz.findings import show

    show(__file__)
