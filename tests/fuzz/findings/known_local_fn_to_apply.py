# ruff: noqa: B007, B023, F841  (the programs are what the fuzzer found, unused names and all)
"""bad refusal (on the lead's list): a local lambda passed to a one-line helper.

    def apply(fn, v): return fn(v);   g = lambda t: np.sin(t) * x;  apply(g, x)
cpsad: TransformError "`g` has no derivative rule and cpsad cannot read its source". The
commonest outcome of the fuzzer (a quarter of all programs).
Features: apply_1line, lambda, call_fn_value.
"""

import numpy as np


def apply(fn, v):
    return fn(v)


def f(x):
    g = lambda t: np.sin(t) * x
    return apply(g, x)


ARGS = (0.3,)
STATUS = "fixed"

if __name__ == "__main__":
    from tests.fuzz.findings import show

    show(__file__)
