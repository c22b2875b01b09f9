# ruff: noqa: B007, E501  (the program is what the fuzzer found, unused names and all)
"""wrong-grad: NaN in the gradient of A, which the result does not depend on.

    xs = []
    for i in range(3):
        xs.append(x * 2.0)         # a loop reads x: x is a variable its function shares
    x = 1.0
    for e in range(12):
        x += x * x - A             # overflows to inf; nothing reads x after it
    return xs[1]

The second loop's results reach nothing, so it needs no backward pass (Activity says so of a
variable nothing else sees: 0 * inf is NaN). But x was read by the first loop's function, and
Activity took every variable a nested function reads as one variable for the whole function,
every assignment of it alike: x reaches the result through the first loop, so the second loop
was differentiated too, a zero adjoint sent back through `x * x` = inf, and A's gradient was
NaN. autograd, JAX and PyTorch give 0 (they never visit a computation the result does not
depend on). Fixed: a loop's function (Desugar's, called once, right after it is defined) reads
the versions of the names it only reads where it is called (``Versions``' ``read_at``), so a
name read by loops alone keeps one version per assignment.

Found by the fuzzer (python -m tests.fuzz --show 511150), then reduced.
Features: append, for_range, while, aug_num, matrix.
"""

import numpy as np


def f(x, A):
    xs = []
    for i in range(3):
        xs.append(x * 2.0)
    x = 1.0
    for e in range(12):
        x += x * x - A
    return xs[1]


ARGS = (
    -0.4789032198025026,
    np.array(
        [
            [0.8423001804066537, -0.5265020733814547, 0.7513238568316938],
            [-0.2462048964325677, 0.16328675687370087, 0.8526133703538792],
            [-0.7012556515524881, 0.8049642326685305, -0.0030926016858681127],
        ]
    ),
)
STATUS = "fixed"

if __name__ == "__main__":
    from tests.fuzz.findings import show

    show(__file__)
