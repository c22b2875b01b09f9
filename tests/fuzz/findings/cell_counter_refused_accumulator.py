# ruff: noqa: B007, B023, F841  (the programs are what the fuzzer found, unused names and all)
"""refused (falsely): `acc += A` on an array nobody else holds, because a later loop makes
closures that read its counter.

    acc4 = np.zeros((3, 3))
    for i5 in range(2): acc4 += A
    for i7 in range(3): fs6.append(lambda u8: u8 * i7)     (i7: one variable, late-bound)
    s9 = fs6[0](s3)
cpsad (both modes): "`s3` of the function that calls `loop_L17` holds it too". `i7` is a variable
the second loop's function rebinds (`nonlocal`), and aliasing gives such a variable the value
"anything" (TOP); it was made visible to the first loop's function too (as every function sees
what an escaped closure reads, in case it runs one), so its image there overlapped every
argument, and the accumulator became related to `s3`. Right: `acc4` is held by nobody else.
(Seeds 20015, 20289, 20554 and 8 more of 20000..22999: all the "[an array nobody else holds]"
refusals of that run.) Only a function that may run a function value -- it calls something
that is neither a primitive nor a local function by name, or a local function that may -- now
sees what escaped closures read.
Features: acc_zeros, aug_array, late_binding, fn_list, call_fn_value.
"""

import numpy as np


def f(A, x):
    s3 = x * 2.0
    acc4 = np.zeros((3, 3))
    for i5 in range(2):
        acc4 += A
    fs6 = []
    for i7 in range(3):
        fs6.append(lambda u8: u8 * i7)
    s9 = fs6[0](s3)
    return np.sum(acc4) + s9


ARGS = (np.array([[0.5, -0.2, 0.1], [0.3, 0.8, -0.6], [-0.4, 0.2, 0.9]]), 0.7)
STATUS = "fixed"

if __name__ == "__main__":
    from tests.fuzz.findings import show

    show(__file__)
