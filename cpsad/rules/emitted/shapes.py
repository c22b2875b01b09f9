"""Rules of the helpers that move an adjoint's axes or entries without changing them:
``untranspose``, ``mT``, and the adjoint rules of ``np.diagonal`` and ``np.trace``.

Every helper here is linear in the adjoint or tangent it takes, and a permutation of axes or a
placement of entries: its tangent rule is the helper itself, its adjoint rule its transpose (the
inverse permutation, ``inverse_axes``; the diagonal or the trace read back). Axes and offsets are
discrete.
"""

from __future__ import annotations

import numpy as np

from cpsad.rules import linalg as la
from cpsad.rules import shape as sh
from cpsad.rules.core import defjvp, defnondiff, defvjp


def inverse_axes(axes, ndim):
    """The axes of ``untranspose`` that undo ``untranspose(x, axes)`` (either form of ``axes``)."""
    if axes is not None and len(axes) == 1 and np.ndim(axes[0]) == 1:
        axes = axes[0]
    if axes is None or len(axes) == 0 or axes[0] is None:
        return axes  # reversing all axes undoes itself
    return tuple(int(i) for i in np.argsort(np.mod(axes, ndim)))


defnondiff(inverse_axes)


def untranspose_c(g, ans, c, axes=None):
    return sh.untranspose(g, inverse_axes(axes, np.ndim(g)))


defvjp(sh.untranspose, c=untranspose_c)


def untranspose_c_jvp(t, ans, c, axes=None):
    return sh.untranspose(t, axes)


defjvp(sh.untranspose, c=untranspose_c_jvp)


def mT_x(g, ans, x):
    return la.mT(g)


defvjp(la.mT, mT_x)


def mT_x_jvp(t, ans, x):
    return la.mT(t)


defjvp(la.mT, mT_x_jvp)


def diagonal_vjp_c(g, ans, c, out, a, offset=0, axis1=0, axis2=1):
    return np.diagonal(g, offset, axis1, axis2)


defvjp(la.diagonal_vjp, c=diagonal_vjp_c)


def diagonal_vjp_c_jvp(t, ans, c, out, a, offset=0, axis1=0, axis2=1):
    return la.diagonal_vjp(t, out, a, offset=offset, axis1=axis1, axis2=axis2)


defjvp(la.diagonal_vjp, c=diagonal_vjp_c_jvp)


def trace_vjp_c(g, ans, c, out, a, offset=0, axis1=0, axis2=1):
    return np.trace(g, offset, axis1, axis2)


defvjp(la.trace_vjp, c=trace_vjp_c)


def trace_vjp_c_jvp(t, ans, c, out, a, offset=0, axis1=0, axis2=1):
    return la.trace_vjp(t, out, a, offset=offset, axis1=axis1, axis2=axis2)


defjvp(la.trace_vjp, c=trace_vjp_c_jvp)
