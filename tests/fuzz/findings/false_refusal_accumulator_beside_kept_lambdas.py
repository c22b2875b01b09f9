# ruff: noqa: B007, B023, F841  (the programs are what the fuzzer found, unused names and all)
"""false refusal: `acc4 -= w` refused, though no other name holds `acc4` when it changes.

    acc4 = np.zeros(3); for ...: acc4 -= w            (an accumulator nobody else holds)
    ... later: lambdas made in loops with defaults (`i7=i7`), called through a value with
    `acc4[1]`; an opaque call's result `vec3` reassigned by a swap
cpsad: "`acc4 -= w` would change in place an array that another name shares: `vec3` of the
function that calls `loop_L..`; `lambda_L.._i7` of the function that calls ...". Python and the
gradient would be fine: the holders named either hold an opaque value computed before `acc4`
existed (`vec3`) or an int (the lambdas' default holders), and `acc4[1]` reaches unknown code
only after the loop. The cause: aliasing's `confined` (is the array out of reach of code it cannot
see, up to the update?) counted every nested function reading `acc4` -- here the loop over `fs10`,
which calls a function value with `acc4[1]` -- though the loop's function is defined after the
update has run. Fixed: a nested function defined by a statement placed after the point in
question does not exist yet and is not counted. Seed 720569 of seeds 720000..729999 (reduced by
the fuzzer's reducer); seed 703383 was refused the same way.
Features: acc_zeros, aug_array, fn_returned, default_binding, call_fn_value.
"""

import numpy as np


def compose(f1, f2):
    return lambda t: 0.5


def f(v, w, x):
    vec3 = compose(0.5, 0.5)(w)
    acc4 = np.zeros(3)
    for i5 in range(1):
        acc4 -= w
    vec3, v = (0.5, vec3)
    fs6 = []
    for i7 in range(1):
        fs6.append(lambda u8, i7=i7: 0.5)
    fs10 = []
    for i11 in range(1):
        fs10.append(lambda u12, i11=i11: x)
    for fn in fs10:
        s13 = fn(acc4[1])
    return 0.5


ARGS = (
    np.array([0.83377724, 0.45651707, 0.85677337]),
    np.array([-0.8902952, 0.46510401, -1.06282955]),
    -0.6558813318842388,
)
STATUS = "fixed"

if __name__ == "__main__":
    from tests.fuzz.findings import show

    show(__file__)
