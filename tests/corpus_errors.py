"""Functions cpsad must refuse, each with a clear error at the marked line.

A line ending in ``# E: text`` is where the error must point; ``text`` must be in its message.
"""

import math

import numpy as np

G = 1.0


def uses_global(x):
    global G  # E: `global` is not supported
    return x * G


def uses_try(x):
    try:  # E: `try` is not supported
        return x * 2
    except ValueError:
        return x


def uses_with(x):
    with open("f") as fh:  # E: `with` is not supported
        return x * len(fh.read())


def uses_yield(x):
    yield x * 2  # E: generators


def uses_class(x):
    class Point:  # E: a class defined inside
        pass

    return x


def uses_import(x):
    if x > 0:  # (at the function's top level it is supported)
        import cmath  # E: `import` inside

        return cmath.sin(x)
    return x


class _Point:
    def __init__(self, v):
        self.v = v


def uses_an_object_of_a_class(x):
    return _Point(x * 2.0).v  # E: an object of your class `_Point`


def uses_walrus(x):
    return sum(y for v in [x] if (y := v * 2) > 1)  # E: walrus


def uses_match(x):
    match x:  # E: `match` is not supported
        case 1:
            return x
    return x


def uses_deleted(x):
    y = x * 2
    del y
    return y  # noqa: F821  # E: `del y` and a later use of `y` are not supported


def del_in_loop(x):
    for i in range(3):
        y = x * i
        del y  # E: `del` inside a loop is not supported
    return x


def del_item(d):
    del d["a"]  # E: `del` of an item, a slice or an attribute is not supported
    return d["b"]


def unknown_function(x):
    return math.lgamma(x) * 2  # E: has no derivative rule


def method_without_rule(x):
    return x.compress([True, False]).sum()  # E: the method `.compress()`


def inplace_method(x):
    y = x * 2.0
    y.sort()  # E: for its effect on `y` (a differentiable value
    return np.sum(y)


def bad_kwarg(x):
    return np.sum(x, dtype=float)  # E: does not match what cpsad's derivative rule supports


def indexed_nondiff(x):
    return np.floor(x) * x  # no error: floor has zero derivative


CASES = [
    uses_global,
    uses_try,
    uses_with,
    uses_yield,
    uses_class,
    uses_import,
    uses_walrus,
    uses_an_object_of_a_class,
    uses_match,
    uses_deleted,
    del_in_loop,
    del_item,
    unknown_function,
    method_without_rule,
    inplace_method,
    bad_kwarg,
]


def stores_into_active(x):
    y = x
    y[0] = 3.0  # into the caller's array: refused when it runs
    return np.sum(y)
