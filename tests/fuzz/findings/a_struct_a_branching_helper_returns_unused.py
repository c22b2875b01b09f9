"""crash: AttributeError: 'float' object has no attribute 's'.

    def helper(t, v):
        return Box(t * v[1] if t > -0.5 else t)   # a dataclass, made after a branch

    def f(v):
        ...                                       # a loop, a nonlocal: helper is called
        p = helper(total, v)                      # in a continuation; p is never read
        return total + np.sum(acc)

The caller never reads the dataclass the helper returns, so the adjoint it hands back for it is
`zeros_like(Box(...))`, which is the number 0.0 (an object nothing reaches). The helper's
backward pass asks that adjoint for its field's part (`struct_adjoint`) and read `0.0.s`.
(Where the helper has no branch, Simplify sees the adjoint is zero and drops the read.) Fixed:
a field of a 0.0 adjoint has none (``runtime._field_adjoint_of``).

Found by the fuzzer (python -m tests.fuzz --seed 715303 --n 1 --rewrite extract: an expression
moved into a helper), then reduced by hand.
Features: struct, nonlocal, ternary.
"""

import dataclasses

import numpy as np


@dataclasses.dataclass
class Box:
    s: object = 1.5


def helper(t, v):
    return Box(t * v[1] if t > -0.5 else t)


def f(v):
    total = np.exp(np.tanh(v[0]))

    def bump():
        nonlocal total

    acc = np.zeros((3, 3))
    for _ in range(1):
        acc -= np.sin(np.outer(v, v))
    p = helper(total, v)  # noqa: F841 (never read: its adjoint is zeros_like's 0.0)
    return total + np.sum(acc)


ARGS = (np.array([0.3, -0.5, 0.8]),)
STATUS = "fixed"

if __name__ == "__main__":
    from tests.fuzz.findings import show

    show(__file__)
