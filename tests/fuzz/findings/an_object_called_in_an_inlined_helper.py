"""bad-refusal: `LAYER` has no derivative rule and cpsad cannot read its source.

    LAYER = Layer(0.7)            # a class of yours with __call__ (and a method it calls)

    def helper(v):
        return LAYER(v[0] * v[1])  # one line: Inline puts it in its caller

cpsad differentiates `LAYER(x)` in the function it transforms: Resolve turns a call of an
object of a class of yours into a call of its method (`Layer.__call__(LAYER, x)`). But Inline,
which substitutes a one-line helper's expression at its call site, resolved the calls it brought
along with composites and structs only, not an object's method: `LAYER(...)` stayed a call of
an unknown object, refused as "compiled code". autograd differentiates it. Fixed: Resolve and
Inline resolve such a call through one function (``resolve.known_call``).

Found by the fuzzer (python -m tests.fuzz --seed 585399 --n 1 --rewrite extract: the program
with one expression moved into a helper), then reduced.
Features: methods, helper_1line.
"""

import numpy as np


class Layer:
    def __init__(self, c):
        self.c = c

    def apply(self, t):
        return np.tanh(t * self.c) + t

    def __call__(self, t):
        return self.apply(t) * 0.5


LAYER = Layer(0.7)


def helper(v):
    return LAYER(v[0] * v[1])


def f(v):
    return helper(v) + LAYER(v[1])


ARGS = (np.array([0.5, -0.3, 1.2]),)
STATUS = "fixed"

if __name__ == "__main__":
    from tests.fuzz.findings import show

    show(__file__)
