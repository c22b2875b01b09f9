"""Rules of reductions: sum, mean, prod, max/min, var, std -- with ``axis`` (int, tuple, None) and ``keepdims``."""

from __future__ import annotations

import numpy as np

from cpsad.rules.core import defmethod, defvjp


def expand(g, x, axis=None, keepdims=False):
    """Broadcast the adjoint of a reduction of ``x`` back to ``x``'s shape."""
    shape = np.shape(x)
    if axis is not None and not keepdims:
        axes = (axis,) if np.ndim(axis) == 0 else tuple(axis)
        g = np.expand_dims(g, tuple(a % len(shape) for a in axes))
    return np.broadcast_to(g, shape)


def count(x, axis=None) -> int:
    """How many elements each result of a reduction over ``axis`` combined."""
    if axis is None:
        return np.size(x)
    shape = np.shape(x)
    axes = (axis,) if np.ndim(axis) == 0 else tuple(axis)
    return int(np.prod([shape[a] for a in axes]))


def sum_(g, ans, a, axis=None, keepdims=False):
    return expand(g, a, axis, keepdims)


def mean(g, ans, a, axis=None, keepdims=False):
    return expand(g, a, axis, keepdims) / count(a, axis)


def prod(g, ans, a, axis=None, keepdims=False):
    """Products with zeros handled: each element's adjoint is the product of the others."""
    a = np.asarray(a)
    if np.all(a != 0):
        return expand(g * ans, a, axis, keepdims) / a
    ax = tuple(range(a.ndim)) if axis is None else ((axis,) if np.ndim(axis) == 0 else tuple(axis))
    ax = tuple(i % a.ndim for i in ax)
    moved = np.moveaxis(a, ax, tuple(range(len(ax))))
    flat = moved.reshape((-1,) + moved.shape[len(ax):])
    left = np.concatenate([np.ones_like(flat[:1]), np.cumprod(flat[:-1], axis=0)])
    right = np.concatenate([np.cumprod(flat[::-1][:-1], axis=0)[::-1], np.ones_like(flat[:1])])
    others = (left * right).reshape(moved.shape)
    others = np.moveaxis(others, tuple(range(len(ax))), ax)
    return expand(g, a, axis, keepdims) * others


def max_(g, ans, a, axis=None, keepdims=False):
    """The adjoint goes to the maximal elements, split evenly between ties."""
    mask = a == expand(ans, a, axis, keepdims)
    return expand(g, a, axis, keepdims) * mask / np.sum(mask, axis=axis, keepdims=True)


def var(g, ans, a, axis=None, ddof=0, keepdims=False):
    centered = a - np.mean(a, axis=axis, keepdims=True)
    return 2.0 * expand(g, a, axis, keepdims) * centered / (count(a, axis) - ddof)


def std(g, ans, a, axis=None, ddof=0, keepdims=False):
    centered = a - np.mean(a, axis=axis, keepdims=True)
    return expand(g / ans, a, axis, keepdims) * centered / (count(a, axis) - ddof)


defvjp(np.sum, sum_)
defvjp(np.mean, mean)
defvjp(np.prod, prod)
defvjp(np.max, max_)
defvjp(np.amax, max_)
defvjp(np.min, max_)
defvjp(np.amin, max_)
defvjp(np.var, var)
defvjp(np.std, std)

# the same, as methods: x.sum(axis=0)
defmethod("sum", sum_)
defmethod("mean", mean)
defmethod("prod", prod)
defmethod("max", max_)
defmethod("min", max_)
defmethod("var", var)
defmethod("std", std)
