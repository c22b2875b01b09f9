# ruff: noqa: B007, F841  (the programs are what the fuzzer found, unused names and all)
"""wrong-grad: NaN where the gradient is 0, through a loop-carried value that overflows unused.

    s4 = 1.0; s13 = s4                 (the result: a constant)
    for ...: for e in v: s4 -= v * (s4 * s4)     (overflows to inf; never read after)
    return s13
Right (autograd, central differences): zeros. cpsad: NaN in one component. Activity is flow-
insensitive: `s13 = s4` makes `s4` active, so the loop gets adjoint code; the loop's continuation
returns `zeros_like(s4)` (a continuation never returns None), and the body's rules multiply that
zero by inf. known_nan_through_unused_loop.py fixed the same through a cell by letting an absent
adjoint skip its rules; a loop-carried adjoint is returned by a continuation, whose result is
never None in the calling convention. Fixed at the root: activity is flow-sensitive within a
function (``activity.Versions``: a version per assignment), so `s13 = s4` reads the constant
1.0, the loop's `s4` reaches nothing, and the loop gets no adjoint code. Seed 601102 of seeds
600000..601499 (reduced by the fuzzer's reducer).
Features: aug_array, aug_input, for_range, for_seq, helper_call.
"""

import numpy as np


def helper1(a2, a3):
    return a2 * a2


def f(v):
    v += 1.0
    s4 = 1.0
    s13 = s4
    for i14 in range(4):
        for e18 in v:
            s4 -= v * helper1(s4, 3)
    return s13


ARGS = (np.array([0.10346244, -0.30769603, 1.07987996]),)
STATUS = "fixed"

if __name__ == "__main__":
    from tests.fuzz.findings import show

    show(__file__)
