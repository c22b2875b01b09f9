"""Rules of functions that move elements without changing them: reshaping, transposing, flipping.

Each adjoint moves the adjoint's elements back where they came from; each is linear, so its
tangent rule moves the tangent's elements the same way the primitive moves the value's.
"""

from __future__ import annotations

import numpy as np

from cpsad.rules.core import (
    DISCRETE,
    defattribute,
    defjvp,
    defjvp_attribute,
    defjvp_method,
    defmethod,
    defvjp,
)
from cpsad.runtime import as_array, unbroadcast, zeros_like

# --------------------------------------------------------------------------- same elements, new shape


def reshape(g, ans, a, shape=None, order="C"):
    return np.reshape(g, np.shape(a), order=order)


defvjp(np.reshape, reshape)


def reshape_jvp(t, ans, a, shape=None, order="C"):
    return np.reshape(t, np.shape(ans), order=order)


defjvp(np.reshape, reshape_jvp)


def reshape_method(g, ans, a, *shape, order="C"):
    return np.reshape(g, np.shape(a), order=order)


defmethod("reshape", reshape_method)


def reshape_method_jvp(t, ans, a, *shape, order="C"):
    return np.reshape(t, np.shape(ans), order=order)


defjvp_method("reshape", reshape_method_jvp)


def ravel(g, ans, a, order="C"):
    return np.reshape(g, np.shape(a), order=order)


defvjp(np.ravel, ravel)
defmethod("ravel", ravel)
defmethod("flatten", ravel)


def ravel_jvp(t, ans, a, order="C"):
    return np.ravel(t, order=order)


defjvp(np.ravel, ravel_jvp)
defjvp_method("ravel", ravel_jvp)
defjvp_method("flatten", ravel_jvp)


def expand_dims(g, ans, a, axis):
    return np.reshape(g, np.shape(a))


defvjp(np.expand_dims, expand_dims, DISCRETE)


def expand_dims_jvp(t, ans, a, axis):
    return np.expand_dims(t, axis)


defjvp(np.expand_dims, expand_dims_jvp, DISCRETE)


def squeeze(g, ans, a, axis=None):
    return np.reshape(g, np.shape(a))


defvjp(np.squeeze, squeeze)
defmethod("squeeze", squeeze)


def squeeze_jvp(t, ans, a, axis=None):
    return np.squeeze(t, axis)


defjvp(np.squeeze, squeeze_jvp)
defjvp_method("squeeze", squeeze_jvp)


def atleast(g, ans, a):
    return np.reshape(g, np.shape(a))


defvjp(np.atleast_1d, atleast)
defvjp(np.atleast_2d, atleast)
defvjp(np.atleast_3d, atleast)


def atleast_jvp(t, ans, a):
    return np.reshape(t, np.shape(ans))


defjvp(np.atleast_1d, atleast_jvp)
defjvp(np.atleast_2d, atleast_jvp)
defjvp(np.atleast_3d, atleast_jvp)


def broadcast_to(g, ans, array, shape):
    return unbroadcast(g, array)


defvjp(np.broadcast_to, broadcast_to, DISCRETE)


def broadcast_to_jvp(t, ans, array, shape):
    return np.broadcast_to(t, shape)


defjvp(np.broadcast_to, broadcast_to_jvp, DISCRETE)

# --------------------------------------------------------------------------- axes permuted


def untranspose(g, axes=None):
    """Undo ``np.transpose(x, axes)`` on the adjoint ``g``; ``axes`` may also be the arguments of
    ``x.transpose(*axes)``: empty, the axes one by one, or one tuple."""
    if axes is not None and len(axes) == 1 and np.ndim(axes[0]) == 1:
        axes = axes[0]  # x.transpose((1, 0))
    if axes is None or len(axes) == 0 or axes[0] is None:
        return np.transpose(g)
    return np.transpose(g, tuple(np.argsort(np.mod(axes, np.ndim(g))).tolist()))


def transpose(g, ans, a, axes=None):
    return untranspose(g, axes)


defvjp(np.transpose, transpose)


def transpose_jvp(t, ans, a, axes=None):
    return np.transpose(t, axes)


defjvp(np.transpose, transpose_jvp)


def transpose_method(g, ans, a, *axes):
    return untranspose(g, axes)


defmethod("transpose", transpose_method)


def transpose_method_jvp(t, ans, a, *axes):
    """``x.transpose()``, ``x.transpose(1, 0)`` and ``x.transpose((1, 0))`` alike."""
    return np.asarray(t).transpose(*axes)


defjvp_method("transpose", transpose_method_jvp)


def T(g, ans, a):
    return np.transpose(g)


defattribute("T", T)


def T_jvp(t, ans, a):
    return np.transpose(t)


defjvp_attribute("T", T_jvp)


def swapaxes(g, ans, a, axis1, axis2):
    return np.swapaxes(g, axis1, axis2)


defvjp(np.swapaxes, swapaxes, DISCRETE, DISCRETE)
defmethod("swapaxes", swapaxes, DISCRETE, DISCRETE)


def swapaxes_jvp(t, ans, a, axis1, axis2):
    return np.swapaxes(t, axis1, axis2)


defjvp(np.swapaxes, swapaxes_jvp, DISCRETE, DISCRETE)
defjvp_method("swapaxes", swapaxes_jvp, DISCRETE, DISCRETE)


def moveaxis(g, ans, a, source, destination):
    return np.moveaxis(g, destination, source)


defvjp(np.moveaxis, moveaxis, DISCRETE, DISCRETE)


def moveaxis_jvp(t, ans, a, source, destination):
    return np.moveaxis(t, source, destination)


defjvp(np.moveaxis, moveaxis_jvp, DISCRETE, DISCRETE)


def flip(g, ans, m, axis=None):
    return np.flip(g, axis)


defvjp(np.flip, flip)


def flip_jvp(t, ans, m, axis=None):
    return np.flip(t, axis)


defjvp(np.flip, flip_jvp)


def fliplr(g, ans, m):
    return np.fliplr(g)


defvjp(np.fliplr, fliplr)


def fliplr_jvp(t, ans, m):
    return np.fliplr(t)


defjvp(np.fliplr, fliplr_jvp)


def flipud(g, ans, m):
    return np.flipud(g)


defvjp(np.flipud, flipud)


def flipud_jvp(t, ans, m):
    return np.flipud(t)


defjvp(np.flipud, flipud_jvp)


def roll(g, ans, a, shift, axis=None):
    return np.roll(g, np.negative(shift), axis)


defvjp(np.roll, roll, DISCRETE)


def roll_jvp(t, ans, a, shift, axis=None):
    return np.roll(t, shift, axis)


defjvp(np.roll, roll_jvp, DISCRETE)

# --------------------------------------------------------------------------- copies and casts


def copy(g, ans, a):
    return g


defvjp(np.copy, copy)
defmethod("copy", copy)


def copy_jvp(t, ans, a):
    return t


defjvp(np.copy, copy_jvp)
defjvp_method("copy", copy_jvp)


def astype(g, ans, a, dtype, copy=True):
    """Back to the receiver's float type (``x.astype(float)`` of float32 ``x``: float32); a cast
    to integers or bools is a step, its adjoint zero (it passed ``g`` through: 10 for
    ``(10 * x).astype(int)``)."""
    return (
        zeros_like(a)
        if ans.dtype.kind not in "fc"
        else (
            as_array(g).astype(a.dtype, copy=False)
            if np.issubdtype(np.result_type(a), np.inexact)
            else g
        )
    )


defmethod("astype", astype)


def astype_jvp(t, ans, a, dtype, copy=True):
    """In the result's float type (``x.astype(np.float32)``: float32); a cast to integers is a step,
    its tangent zero."""
    return (
        as_array(t).astype(ans.dtype, copy=False)
        if np.issubdtype(ans.dtype, np.inexact)
        else np.zeros(np.shape(ans))
    )


defjvp_method("astype", astype_jvp)
