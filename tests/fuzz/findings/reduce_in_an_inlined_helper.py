"""bad-refusal: `functools.reduce` in a one-line helper was refused.

    def helper(a): return functools.reduce(operator.mul, [a[0], a[1], 2.0])
Right: the product's gradient. cpsad: "`functools.reduce` has no derivative rule and cpsad
cannot read its source". Desugar rewrites a call of `functools.reduce` into a loop, but Inline,
which runs after it, substituted the helper's body into the caller -- a call Desugar never saw.
(`functools.reduce(np.multiply, xs)` in a helper was refused the same way before the operator
module's composites.) Fixed: a helper whose body calls `functools.reduce` is not inlined; it is
transformed as a function, where Desugar sees the call. Seeds 727717 and 728585 of seeds
720000..729999 (reduced by hand).
Features: helper_1line, operator, reduce.
"""

import functools
import operator

import numpy as np


def helper(a):
    return functools.reduce(operator.mul, [a[0], a[1], 2.0])


def f(x):
    return helper(a=x) + helper(x * x)


ARGS = (np.array([1.5, -0.7]),)
STATUS = "fixed"

if __name__ == "__main__":
    from tests.fuzz.findings import show

    show(__file__)
