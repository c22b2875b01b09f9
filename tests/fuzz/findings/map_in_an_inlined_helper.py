"""bad-refusal: `map` in a one-line helper was refused.

    def helper(a, b): return sum(map(operator.mul, [a, a], [a, 0.5])) / (1.5 + np.sin(b[1]))
Right: the gradient of the sum of products. cpsad: "`map` has no derivative rule and cpsad cannot
read its source". Desugar rewrites `map(f, xs, ...)` into a comprehension, but Inline, which runs
after it, substituted the helper's body into the caller -- a call Desugar never saw (as it did
`functools.reduce`: reduce_in_an_inlined_helper). Fixed: a helper whose body calls `map` is not
inlined; it is transformed as a function, where Desugar sees the call. Seed 765461 of seeds
760000..779999 (reduced by hand).
Features: helper_1line, operator.
"""

import operator

import numpy as np


def helper(a, b):
    return sum(map(operator.mul, [a, a], [a, 0.5])) / (1.5 + np.sin(b[1]))


def f(x, v):
    return helper(x * x, v) + helper(x, v * x)


ARGS = (0.7, np.array([0.3, -0.4, 1.1]))
STATUS = "fixed"

if __name__ == "__main__":
    from tests.fuzz.findings import show

    show(__file__)
