"""wrong-value: an in-place `-=` another name reads after was dropped as a dead store.

    vec3 = np.ones(3) * 1.2
    vec5 = vec3                     # the same array
    vec3 -= np.ones(3) * 1.2        # changes it in place: vec5 is zeros now
    vec10 = np.cos(vec5)            # ones
    g12 = lambda u13: u13 * s11
    s11 = s9
    ...

The update does not depend on the inputs, and no derivative reads the array, so it runs as
Python's own in-place operation: `vec3_1 = operator.isub(vec3, mul)`. Nothing reads `vec3_1`,
and `operator.isub` is not differentiated -- so Simplify's dead stores took the call for pure
and removed it, and `np.cos(vec5)` read the array unchanged: cpsad's value 2.38 where Python's
is -3.81 (forward mode, which keeps the update, was right). Fixed: an in-place operator of
`operator` is never pure (``dead_stores._IN_PLACE``).

Found by the fuzzer (python -m tests.fuzz --show 601494), then reduced.
Features: aug_array, reassign, lambda, capture_before_assign.
"""

import numpy as np


def f(x, v, A, n):
    vec3 = np.ones(3) * 1.2
    vec5 = vec3
    s6 = x
    vec3 -= np.ones(3) * 1.2
    s9 = np.tanh(s6)
    vec10 = np.cos(vec5)
    g12 = lambda u13: u13 * s11  # noqa: E731
    s11 = s9
    s14 = g12(s9)
    return np.sum(vec10) * s14


ARGS = (0.3, np.array([0.5, -1.0, 0.25]), np.array([[0.5, -1.0], [0.75, 0.2]]), 2)
STATUS = "fixed"

if __name__ == "__main__":
    from tests.fuzz.findings import show

    show(__file__)
