# ruff: noqa: B007, F841  (the programs are what the fuzzer found, unused names and all)
"""false refusal: `acc12 += ...` in a loop refused, though no other name holds `acc12` then.

    vec11 = rec_lin(0.5, 3)          (a user function's result: anything, to the analysis)
    acc12 = np.zeros(3); for ...: acc12 += ...
    d14 = {'a': acc12 * 0.5, 'b': vec11}; d14['c'] = 0.5
cpsad: "`acc12 += ...` would change in place an array that another name shares: `vec11` of the
function that calls `loop_L..`". The loop's function gets `acc12` as a parameter; whether that
array is out of reach of unknown code (`confined`) was asked of the caller for its whole body,
where the later dict store of `acc12 * 0.5` next to `vec11` made it look given away. The loop
runs within its call: only the caller's statements up to the call matter. Fixed: the caller is
asked up to the call's statement. Seed 721359 of seeds 720000..729999 (reduced by the fuzzer's
reducer).
Features: acc_zeros, aug_array, operator, reduce, dict_store, recursion_linear.
"""

import functools
import operator

import numpy as np


def rec_lin(t, n):
    pass


def f(x):
    vec11 = rec_lin(0.5, 3)
    acc12 = np.zeros(3)
    for i13 in range(1):
        acc12 += functools.reduce(operator.mul, [0.5, x, 0.5])
    d14 = {"a": acc12 * 0.5, "b": vec11}
    d14["c"] = 0.5
    return np.sum(acc12 * x)


ARGS = (0.3,)
STATUS = "fixed"

if __name__ == "__main__":
    from tests.fuzz.findings import show

    show(__file__)
