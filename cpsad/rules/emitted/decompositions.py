"""Rules of the helpers the rules of ``np.linalg``'s decompositions call (cpsad/rules/linalg.py:
eigh, eigvalsh, svd, qr, pinv), so that emitted code calling them is differentiated again
(second derivatives; see __init__.py). Each rule is one expression of functions that have rules.

``from_triangle`` and ``to_triangle`` are linear and transposes of each other; ``checked`` is the
identity in its value (its other parameters are read, not differentiated); ``gaps`` has
``-gaps**2`` times the difference of the two entries' tangents as its derivative; ``triple_like``
(a triple of the type of a decomposition's result) is linear in its entries together, as
``pair_like`` is (containers.py).
"""

from __future__ import annotations

import numpy as np

from cpsad.rules import linalg as la
from cpsad.rules.core import defjvp, defvjp
from cpsad.runtime import item_adjoint, tangent_zeros


def checked_x(g, ans, x, a, name, refuse=False):
    return g


defvjp(la.checked, checked_x)


def checked_x_jvp(t, ans, x, a, name, refuse=False):
    return t


defjvp(la.checked, checked_x_jvp)


def gaps_x(g, ans, x):
    """``d(1 / (x_j - x_i)) = -(dx_j - dx_i) / (x_j - x_i)**2``, summed over ``i`` and ``j``."""
    return np.sum(g * ans**2, axis=-1) - np.sum(g * ans**2, axis=-2)


defvjp(la.gaps, gaps_x)


def gaps_x_jvp(t, ans, x):
    return -(ans**2) * (t[..., None, :] - t[..., :, None])


defjvp(la.gaps, gaps_x_jvp)


def from_triangle_x(g, ans, x, UPLO="L"):
    return la.to_triangle(g, UPLO)


defvjp(la.from_triangle, from_triangle_x)


def from_triangle_x_jvp(t, ans, x, UPLO="L"):
    return la.from_triangle(t, UPLO)


defjvp(la.from_triangle, from_triangle_x_jvp)


def to_triangle_x(g, ans, x, UPLO="L"):
    return la.from_triangle(g, UPLO)


defvjp(la.to_triangle, to_triangle_x)


def to_triangle_x_jvp(t, ans, x, UPLO="L"):
    return la.to_triangle(t, UPLO)


defjvp(la.to_triangle, to_triangle_x_jvp)


def triple_like_first(g, ans, out, first, second, third):
    return item_adjoint(g, 0, first)


def triple_like_second(g, ans, out, first, second, third):
    return item_adjoint(g, 1, second)


def triple_like_third(g, ans, out, first, second, third):
    return item_adjoint(g, 2, third)


defvjp(la.triple_like, first=triple_like_first, second=triple_like_second, third=triple_like_third)


def triple_like_first_jvp(t, ans, out, first, second, third):
    return la.triple_like(out, t, tangent_zeros(second), tangent_zeros(third))


def triple_like_second_jvp(t, ans, out, first, second, third):
    return la.triple_like(out, tangent_zeros(first), t, tangent_zeros(third))


def triple_like_third_jvp(t, ans, out, first, second, third):
    return la.triple_like(out, tangent_zeros(first), tangent_zeros(second), t)


defjvp(
    la.triple_like,
    first=triple_like_first_jvp,
    second=triple_like_second_jvp,
    third=triple_like_third_jvp,
)
