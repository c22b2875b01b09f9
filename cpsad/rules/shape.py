"""Rules of shape functions and attributes: reshape, ravel, transpose, ``.T``, expand_dims, squeeze."""

from __future__ import annotations

import numpy as np

from cpsad.rules.core import defattribute, defmethod, defvjp


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


def transpose(g, ans, a, axes=None):
    return np.transpose(g) if axes is None else np.transpose(g, np.argsort(axes))


defvjp(np.transpose, transpose)


def transpose_method(g, ans, a, *axes):
    return (
        np.transpose(g)
        if not axes
        else np.transpose(g, np.argsort(axes[0] if len(axes) == 1 else axes))
    )


defmethod("transpose", transpose_method)


def T(g, ans, a):
    return np.transpose(g)


defattribute("T", T)


def expand_dims(g, ans, a, axis):
    return np.reshape(g, np.shape(a))


defvjp(np.expand_dims, expand_dims, None)


def squeeze(g, ans, a, axis=None):
    return np.reshape(g, np.shape(a))


defvjp(np.squeeze, squeeze)
defmethod("squeeze", squeeze)


def copy(g, ans, a):
    return g


defvjp(np.copy, copy)
defmethod("copy", copy)


def astype(g, ans, a, dtype, copy=True):
    return (
        np.asarray(g).astype(np.result_type(a, np.float32), copy=False)
        if np.issubdtype(np.result_type(a), np.inexact)
        else g
    )


defmethod("astype", astype)
