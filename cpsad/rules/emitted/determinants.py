"""Rules of the helpers of the rules of ``np.linalg.det`` and ``np.linalg.slogdet``
(cpsad/rules/linalg.py): ``cofactors(a, det) = det a^-T`` and ``inverse(a) = a^-1``.

``cofactors``' partial derivatives hold ``det`` fixed, and the derivative along ``det`` reaches
it through ``det = det(a)``: they add up to ``d(adj a^T)``. Both use ``inv``: a second
derivative of ``det`` at a singular matrix raises ``LinAlgError`` (the first is defined there,
and given).
"""

from __future__ import annotations

import numpy as np

from cpsad.rules import linalg as la
from cpsad.rules.core import defjvp, defvjp


def cofactors_a(g, ans, a, det):
    """``d(det a^-T) = -det a^-T da^T a^-T``: its transpose applied to ``g``."""
    return -np.expand_dims(det, (-2, -1)) * (
        la.mT(np.linalg.inv(a)) @ la.mT(g) @ la.mT(np.linalg.inv(a))
    )


def cofactors_det(g, ans, a, det):
    return np.sum(g * la.mT(np.linalg.inv(a)), axis=(-2, -1))


defvjp(la.cofactors, cofactors_a, cofactors_det)


def cofactors_a_jvp(t, ans, a, det):
    return -np.expand_dims(det, (-2, -1)) * (
        la.mT(np.linalg.inv(a)) @ la.mT(t) @ la.mT(np.linalg.inv(a))
    )


def cofactors_det_jvp(t, ans, a, det):
    return np.expand_dims(t, (-2, -1)) * la.mT(np.linalg.inv(a))


defjvp(la.cofactors, cofactors_a_jvp, cofactors_det_jvp)


def inverse_a(g, ans, a):
    return -la.mT(ans) @ g @ la.mT(ans)


defvjp(la.inverse, inverse_a)


def inverse_a_jvp(t, ans, a):
    return -ans @ t @ ans


defjvp(la.inverse, inverse_a_jvp)
