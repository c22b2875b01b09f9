"""crash: SyntaxError: no binding for nonlocal 'u8_bar' found.

    def f(v):
        h1 = make_affine(v[0])               # a function value (a lambda a helper returns)
        def g7(u8):
            g9 = lambda u10, c=1.0: h1(u8)   # never called; its default a constant
            return np.sin(v[1])                # u8 has no other use: its adjoint is dropped
        return g7(v[2])

The lambda's backpropagator adds to `u8_bar`, so it declares it `nonlocal`. Nothing calls the
lambda, so Simplify removed `u8_bar`'s every other mention in `g7`'s backpropagator -- but kept
the lambda's: a def with defaults was not "inert" (evaluating a default may call), so the sweep
that drops functions nothing calls left it, with a `nonlocal` of a name no longer bound. Fixed:
a def whose defaults are constants is inert; one with computed defaults nothing calls keeps its
defaults and has its body emptied (``simplify.dead_stores``).

Found by the fuzzer (python -m tests.fuzz --seed 801178 --n 1 --features), reduced by hand.
Features: lambda, default_arg, call_fn_value, fn_returned.
"""

import numpy as np


def make_affine(a):
    return lambda t: np.tanh(t * a)


def f(v):
    h1 = make_affine(v[0])

    def g7(u8):
        g9 = lambda u10, c=1.0: h1(u8)  # noqa: E731, F841
        return np.sin(v[1])  # (u8 has no other use: its adjoint is dropped)

    return g7(v[2])


ARGS = (np.array([0.3, 0.5, 0.7]),)
STATUS = "fixed"

if __name__ == "__main__":
    from tests.fuzz.findings import show

    show(__file__)
