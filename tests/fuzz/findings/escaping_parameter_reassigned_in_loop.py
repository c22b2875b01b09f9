# ruff: noqa: B007, B023, F841  (the programs are what the fuzzer found, unused names and all)
"""wrong-grad: NaN where the gradient is 0, through a loop that rebinds a function value's
parameter, whose values overflow and reach nothing.

    def g2(u3):                          (passed to a helper: used as a value)
        while ...: u3 = np.diagonal(np.outer(u3 * v, ...) @ np.outer(u3, u3) ** 2)   (inf)
        return constant
Right (finite differences): 0; cpsad gave NaN. Activity made every parameter of a function used
as a value needed ("called with anything"), and, flow-insensitive, so was every later value of
the same name: the loop's, whose zero adjoint went through `matmul`'s rule, 0 * inf. A
parameter is needed only where what the function does with it reaches its result (or state
someone reads): the backpropagator returns zeros for it otherwise. (Seed 208827 of
200000..209999, on the code of 2 December.)
Features: fn_returned, while, matmul, outer, methods.
"""

import numpy as np


class Layer:
    def __init__(self, c):
        pass

    def apply(self, t):
        return 0.5 + t


def twice(fn):
    def both(t):
        return fn(fn(t))

    return both


def f(v):
    s1 = 1.0

    def g2(u3):
        k4 = 0
        while k4 < 4:
            k4 = k4 + 1
            mat7 = np.outer(u3 * v, [0.5, s1, 0.5]) @ np.outer(u3, u3) ** 2
            u3 = np.diagonal(mat7)
        layer9 = Layer(0.5)
        s8 = layer9.apply(2.25**2)
        return s8 * np.array([0.5, 0.7, 0.5])

    acc11 = np.zeros(3)
    vec14 = twice(g2)(acc11)
    return vec14[0]


ARGS = (np.array([-0.35559979114728, 0.9535331761456904, 0.14284915655375618]),)
STATUS = "fixed"

if __name__ == "__main__":
    from tests.fuzz.findings import show

    show(__file__)
