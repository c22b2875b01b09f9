# ruff: noqa: B007, B023, F841  (the programs are what the fuzzer found, unused names and all)
"""wrong-grad (forward mode): the tangent of a variable rebound after a closure two levels
down was made to read it.

    def make8(c9):
        def inner11(u10): return u10 * c9 + v    (reads f's v when it runs)
        return inner11
    h7 = make8(x); v = v * 2.0; y = h7(w)
jvp gave the tangent of the old `v` (reverse mode was right). Simplify removed `v_dot = ...` as
a dead store: only functions nested directly in `f` and used as values there counted as running
later, not `inner11`, which `make8` returns. Any function nested deeper that its own parent uses
as a value counts now. (Seed 402454 of 400000..419999, forward mode, reduced by hand.)
Features: fn_returned, capture, reassign.
"""

import numpy as np


def f(x, v, w):
    def make8(c9):
        def inner11(u10):
            return u10 * c9 + v

        return inner11

    h7 = make8(x)
    v = v * 2.0
    y = h7(w)
    return np.mean(y)


ARGS = (0.63, np.array([0.3, -0.5, 1.1]), np.array([-0.4, 0.8, 0.25]))
STATUS = "fixed"

if __name__ == "__main__":
    from tests.fuzz.findings import show

    show(__file__)
