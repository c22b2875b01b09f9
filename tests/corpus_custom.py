"""User primitives with registered rules (the examples of docs/rules.md)."""

import numpy as np

import cpsad
from cpsad.runtime import unbroadcast


def softplus(x):
    return np.logaddexp(0.0, x)


def softplus_vjp(g, ans, x):
    return g / (1.0 + np.exp(-x))


cpsad.defvjp(softplus, softplus_vjp)


def model(x):
    y = softplus(x)
    return np.sum(y * y)


# ----------------------------------------------------------------------------- several parameters


def affine_clip(x, scale, shift, limit=1.0):
    """``clip(x * scale + shift, -limit, limit)``, as a primitive of its own."""
    return np.clip(x * scale + shift, -limit, limit)


def affine_clip_x(g, ans, x, scale, shift, limit=1.0):
    return unbroadcast(g * scale * (np.abs(ans) < limit), x)


def affine_clip_shift(g, ans, x, scale, shift, limit=1.0):
    """A rule of several statements: called by name from emitted code."""
    inside = np.abs(ans) < limit
    return unbroadcast(g * inside, shift)


# x by position, scale without a derivative (None), shift by keyword, limit left out: no derivative
cpsad.defvjp(affine_clip, affine_clip_x, None, shift=affine_clip_shift)


def layer(x, scale, shift):
    return np.sum(affine_clip(x, scale, shift, limit=0.8) ** 2)


def layer_wrt_scale(x, scale, shift):
    return np.sum(affine_clip(x, scale, shift) ** 2)


def layer_scaled(x, scale, shift):
    return np.sum(affine_clip(x, scale, shift) ** 2) * scale
