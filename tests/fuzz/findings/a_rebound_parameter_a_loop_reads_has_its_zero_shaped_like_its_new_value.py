# ruff: noqa: B007, B018, E501  (the program is what the fuzzer found, its no-op statement and all)
"""wrong-grad: a float parameter got a zero gradient shaped like an array.

    def f(x, A):
        for i6 in range(1):
            x                       # the loop reads x: x is a cell of the loop's function
        x += A                      # x is rebound, to a (2, 3) array
        return 1.0

Nothing reaches the result from x, so its gradient is a zero shaped like x: 0.0. cpsad
returned `zeros_like(x)` evaluated at the end of the backpropagator, where x -- a variable
the loop's function shares, so never renamed -- holds the array `x + A`. Fixed: where
a function rebinds a parameter that is a cell, its zero is shaped like the value the
parameter came in with, kept under a name of its own (``x_2 = x``; CPS's ``function``).

Found by the fuzzer (python -m tests.fuzz --show 511150), then reduced (the reduction met this
bug before the one the seed shows, `a_dead_loop_after_a_loop_that_reads_its_variable`).
Features: for_range, aug_array.
"""

import numpy as np


def f(x, A):
    for i6 in range(1):
        x
    x += A
    return 1.0


ARGS = (-0.4789032198025026, np.array([[0.8423, -0.5265, 0.7513], [-0.2462, 0.1633, 0.8526]]))
STATUS = "fixed"

if __name__ == "__main__":
    from tests.fuzz.findings import show

    show(__file__)
