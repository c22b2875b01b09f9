# ruff: noqa: B007, E501  (the program is what the fuzzer found, unused names and all)
"""wrong-grad: `w - w` gave `w` two adjoints of about 1e23 and -1e23, added one at a time.

    vec16 = helper12(helper12(w))                 # about 5,800 w
    for i17 in range(2):
        v = mat7 @ vec16
        mat7 = np.stack([vec6, vec6, v]) ** 2     # entries of about 1e23
    vec16 = mat7 @ (w - w)
    return np.mean(w) + np.mean(vec16)

cpsad returned w's gradient [1/3, 1/3, 0] where it is [1/3, 1/3, 1/3] (central differences,
autograd, and cpsad's own forward mode): the backward pass added `mean`'s 1/3 to w's adjoint
first, then the two parts of `w - w`'s, `mat7.T @ g` and its negation, one at a time -- and
1/3 + 1e23 is 1e23, so the third entry lost its 1/3. The two parts are one statement's: summed
first, as forward mode sums `t - t`, they cancel exactly, and the 1/3 survives. Fixed: the
adjoint parts one statement gives an operand it reads more than once are summed before they are
added (ShiftReset's ``sum``). (Between statements -- `x * 1e17 - x * 1e17` in three -- the order
of the additions still decides; autograd, JAX and PyTorch give 0 there too.)

Found by the fuzzer (python -m tests.fuzz --show 460239), then reduced.
Features: for_range, helper_call, matmul, matrix, outer, stack, vector.
"""

import numpy as np


def helper12(a13):
    return np.dot(np.outer(a13, a13) @ np.outer(a13, a13), a13)


def f(v, w):
    vec6 = np.linspace(0.5, 0.5, 3)
    mat7 = np.outer(v, v)
    vec16 = helper12(helper12(w))
    for i17 in range(2):
        v = mat7 @ vec16
        mat7 = np.stack([vec6, vec6, v]) ** 2
    vec16 = mat7 @ (w - w)
    return np.mean(w) + np.mean(vec16)


ARGS = (
    np.array([0.21673346030248664, -1.0619274709713722, -0.05202952793544524]),
    np.array([-1.0720691490633112, 0.18028076336927357, -0.9359553412018244]),
)
STATUS = "fixed"

if __name__ == "__main__":
    from tests.fuzz.findings import show

    show(__file__)
