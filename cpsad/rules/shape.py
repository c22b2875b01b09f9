"""Rules of functions that move elements without changing them: reshaping, transposing, flipping.

Each adjoint moves the adjoint's elements back where they came from.
"""

from __future__ import annotations

import numpy as np

from cpsad.rules.core import DISCRETE, defattribute, defmethod, defvjp
from cpsad.runtime import unbroadcast

# --------------------------------------------------------------------------- same elements, new shape


def reshape(g, ans, a, shape=None, order="C"):
    return np.reshape(g, np.shape(a), order=order)


defvjp(np.reshape, reshape)


def reshape_method(g, ans, a, *shape, order="C"):
    return np.reshape(g, np.shape(a), order=order)


defmethod("reshape", reshape_method)


def ravel(g, ans, a, order="C"):
    return np.reshape(g, np.shape(a), order=order)


defvjp(np.ravel, ravel)
defmethod("ravel", ravel)
defmethod("flatten", ravel)


def expand_dims(g, ans, a, axis):
    return np.reshape(g, np.shape(a))


defvjp(np.expand_dims, expand_dims, DISCRETE)


def squeeze(g, ans, a, axis=None):
    return np.reshape(g, np.shape(a))


defvjp(np.squeeze, squeeze)
defmethod("squeeze", squeeze)


def atleast(g, ans, a):
    return np.reshape(g, np.shape(a))


defvjp(np.atleast_1d, atleast)
defvjp(np.atleast_2d, atleast)
defvjp(np.atleast_3d, atleast)


def broadcast_to(g, ans, array, shape):
    return unbroadcast(g, array)


defvjp(np.broadcast_to, broadcast_to, DISCRETE)

# --------------------------------------------------------------------------- axes permuted


def untranspose(g, axes=None):
    """Undo ``np.transpose(x, axes)`` on the adjoint ``g``; ``axes`` may also be the arguments of
    ``x.transpose(*axes)``: empty, the axes one by one, or one tuple."""
    if axes is not None and len(axes) == 1 and np.ndim(axes[0]) == 1:
        axes = axes[0]  # x.transpose((1, 0))
    if axes is None or len(axes) == 0 or axes[0] is None:
        return np.transpose(g)
    return np.transpose(g, np.argsort(np.mod(axes, np.ndim(g))))


def transpose(g, ans, a, axes=None):
    return untranspose(g, axes)


defvjp(np.transpose, transpose)


def transpose_method(g, ans, a, *axes):
    return untranspose(g, axes)


defmethod("transpose", transpose_method)


def T(g, ans, a):
    return np.transpose(g)


defattribute("T", T)


def swapaxes(g, ans, a, axis1, axis2):
    return np.swapaxes(g, axis1, axis2)


defvjp(np.swapaxes, swapaxes, DISCRETE, DISCRETE)
defmethod("swapaxes", swapaxes, DISCRETE, DISCRETE)


def moveaxis(g, ans, a, source, destination):
    return np.moveaxis(g, destination, source)


defvjp(np.moveaxis, moveaxis, DISCRETE, DISCRETE)


def flip(g, ans, m, axis=None):
    return np.flip(g, axis)


defvjp(np.flip, flip)


def fliplr(g, ans, m):
    return np.fliplr(g)


defvjp(np.fliplr, fliplr)


def flipud(g, ans, m):
    return np.flipud(g)


defvjp(np.flipud, flipud)


def roll(g, ans, a, shift, axis=None):
    return np.roll(g, np.negative(shift), axis)


defvjp(np.roll, roll, DISCRETE)

# --------------------------------------------------------------------------- copies and casts


def copy(g, ans, a):
    return g


defvjp(np.copy, copy)
defmethod("copy", copy)


def astype(g, ans, a, dtype, copy=True):
    """Back to the receiver's float type (``x.astype(float)`` of float32 ``x``: float32)."""
    return (
        np.asarray(g).astype(a.dtype, copy=False)
        if np.issubdtype(np.result_type(a), np.inexact)
        else g
    )


defmethod("astype", astype)
