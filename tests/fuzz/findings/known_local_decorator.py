# ruff: noqa: B007, B023, F841  (the programs are what the fuzzer found, unused names and all)
"""refused (on the lead's list): a functools.wraps decorator on a local function.

cpsad: TransformError "a decorated function inside a differentiated function is not supported".
Right: 2 * sin(x) * x, gradient 2 (cos(x) x + sin(x)).
Features: decorator, functools.
"""

import functools

import numpy as np


def double(fn):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        return 2.0 * fn(*args, **kwargs)

    return wrapper


def f(x):
    @double
    def g(u):
        return np.sin(u) * x

    return g(x)


ARGS = (0.3,)
STATUS = "fixed"

if __name__ == "__main__":
    from tests.fuzz.findings import show

    show(__file__)
