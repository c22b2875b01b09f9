# ruff: noqa: B007, B023, F841  (the programs are what the fuzzer found, unused names and all)
"""wrong-grad: a closure made by a helper, passed to another one-line helper, gets no gradient.

    def make_affine(a, b): return lambda t: np.tanh(t * a + b)
    def call(h): return h(1.58)
    f(x, y) = call(make_affine(x, y ** 2))
cpsad (reverse and forward): gradient (0.0, 0.0); right: nonzero (autograd and central
differences agree). With `+ h(0.5)` added, the gradient is nonzero but still wrong. (The
metamorphic "extract" rewrite finds it: `s = h(1.58)` moved into a helper changes the gradient.)
Features: fn_returned, closure_helper, helper_call, call_fn_value.
"""

import numpy as np


def make_affine(a, b):
    return lambda t: np.tanh(t * a + b)


def call(h):
    return h(1.58)


def f(x, y):
    h = make_affine(x, y**2)
    return call(h)


ARGS = (0.4, 0.7)
STATUS = "fixed"

if __name__ == "__main__":
    from tests.fuzz.findings import show

    show(__file__)
