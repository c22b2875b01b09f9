# ruff: noqa: E731, E501, F841  (the program is what the fuzzer found, its lambdas and unused names)
"""crash: NameError: cannot access free variable 'g' where it is not associated with a value.

    g = lambda u: u + x
    s = g(x)                       # the rest of f is this call's continuation
    while k < 2:
        k = k + 1
        t = g(x)                   # the loop's function reads g
    g = lambda u: u + x            # rebinds g, in the continuation

g is a variable the loop's function shares (a cell of f). In the continuation of `s = g(x)`,
the second lambda -- a backpropagator and `g = Closure(g_bp)` -- bound `g` as a local of the
continuation, not the cell: the loop's function, made in the continuation before that line,
then read the continuation's `g`, not yet bound. (An assignment `g = ...` declared `nonlocal g`
there; a `def` or lambda did not.) Fixed: a local function binds its name as an assignment does
(CPS's ``rebind``): a shared variable's own, declared nonlocal; else a new version where an
enclosing function binds the name.

Found by the fuzzer (python -m tests.fuzz --seed 530441 --n 1 --rewrite unroll: the program with
its `for` loop unrolled, which defines the lambda twice), then reduced.
Features: lambda, capture, call_fn_value, while.
"""

import numpy as np


def f(A, x):
    a = A * 3.0
    g = lambda u: u + x
    s = g(x)
    k = 0
    while k < 2:
        k = k + 1
        t = g(x)
    g = lambda u: u + x
    while k < 2:
        k = k + 1
    return x + a[0]


ARGS = (np.array([0.5, -1.25]), 0.3)
STATUS = "fixed"

if __name__ == "__main__":
    from tests.fuzz.findings import show

    show(__file__)
