"""Rules of linear algebra: dot, matmul, outer, inner, trace."""

from __future__ import annotations

import numpy as np

from cpsad.rules import operators as op
from cpsad.rules.core import defmethod, defvjp
from cpsad.runtime import unbroadcast


def dot_a(g, ans, a, b):
    """np.dot: matmul's rule for operands of up to two dimensions; scalars multiply."""
    if np.ndim(a) == 0 or np.ndim(b) == 0:
        return unbroadcast(g * b, a)
    if np.ndim(b) > 2:
        return np.tensordot(
            g,
            np.moveaxis(b, -2, -1),
            axes=(range(np.ndim(a) - 1, np.ndim(g)), range(np.ndim(b) - 1)),
        )
    return op.matmul_x(g, ans, a, b)


def dot_b(g, ans, a, b):
    if np.ndim(a) == 0 or np.ndim(b) == 0:
        return unbroadcast(g * a, b)
    if np.ndim(b) > 2:
        ga = np.tensordot(a, g, axes=(range(np.ndim(a) - 1), range(np.ndim(a) - 1)))
        return np.moveaxis(ga, 0, -2)
    return op.matmul_y(g, ans, a, b)


defvjp(np.dot, dot_a, dot_b)
defmethod("dot", dot_a, dot_b)
defvjp(np.matmul, op.matmul_x, op.matmul_y)


def outer_a(g, ans, a, b):
    return np.reshape(g @ np.ravel(b), np.shape(a))


def outer_b(g, ans, a, b):
    return np.reshape(np.ravel(a) @ g, np.shape(b))


defvjp(np.outer, outer_a, outer_b)


def inner_a(g, ans, a, b):
    return unbroadcast(
        np.tensordot(g, b, axes=(range(np.ndim(a) - 1, np.ndim(g)), range(np.ndim(b) - 1))), a
    )


def inner_b(g, ans, a, b):
    return (
        np.tensordot(a, g, axes=(range(np.ndim(a) - 1), range(np.ndim(a) - 1))).T
        if np.ndim(a) > 1
        else np.multiply.outer(a, g) if np.ndim(g) else g * a
    )


defvjp(np.inner, inner_a, inner_b)


def trace(g, ans, a, offset=0):
    return g * np.eye(*np.shape(a), k=offset)


defvjp(np.trace, trace)
