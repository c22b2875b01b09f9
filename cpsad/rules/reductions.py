"""Rules of reductions: sum, mean, prod, max/min, var, std -- with ``axis`` (int, tuple, None) and
``keepdims`` -- and the cumulative ones, cumsum and cumprod.

Parameters that numpy's functions take after ``dtype`` and ``out`` (``keepdims``, ``ddof``) are
keyword-only here, so a positional ``dtype`` is not mistaken for them.
"""

from __future__ import annotations

import numpy as np

from cpsad.rules.core import defmethod, defvjp


def expand(g, x, axis=None, keepdims=False):
    """Broadcast the adjoint of a reduction of ``x`` back to ``x``'s shape."""
    shape = x.shape if type(x) is np.ndarray else np.shape(x)
    if axis is not None and not keepdims:
        axes = (axis,) if type(axis) is int else tuple(axis)
        g = np.expand_dims(g, tuple(a % len(shape) for a in axes))
    if type(g) is np.ndarray and g.shape == shape:
        return g
    if type(x) is np.ndarray and x.size <= SMALL:  # a copy is cheaper than a view's set-up
        out = np.empty(shape, np.result_type(g))
        out[...] = g
        return out
    return np.broadcast_to(g, shape)


SMALL = 1 << 14  # elements: below this, expand writes a new array instead of a broadcast view


def count(x, axis=None) -> int:
    """How many elements each result of a reduction over ``axis`` combined."""
    if axis is None:
        return np.size(x)
    shape = np.shape(x)
    axes = (axis,) if np.ndim(axis) == 0 else tuple(axis)
    return int(np.prod([shape[a] for a in axes]))


def sum_vjp(g, ans, a, axis=None, *, keepdims=False):
    return expand(g, a, axis=axis, keepdims=keepdims)


def mean_vjp(g, ans, a, axis=None, *, keepdims=False):
    return expand(g / count(a, axis=axis), a, axis=axis, keepdims=keepdims)


def prod_vjp(g, ans, a, axis=None, *, keepdims=False):
    """Products with zeros handled: each element's adjoint is the product of the others."""
    a = np.asarray(a)
    if np.all(a != 0):
        return expand(g * ans, a, axis=axis, keepdims=keepdims) / a
    ax = tuple(range(a.ndim)) if axis is None else ((axis,) if np.ndim(axis) == 0 else tuple(axis))
    ax = tuple(i % a.ndim for i in ax)
    moved = np.moveaxis(a, ax, tuple(range(len(ax))))
    flat = moved.reshape((-1,) + moved.shape[len(ax) :])
    left = np.concatenate([np.ones_like(flat[:1]), np.cumprod(flat[:-1], axis=0)])
    right = np.concatenate([np.cumprod(flat[::-1][:-1], axis=0)[::-1], np.ones_like(flat[:1])])
    others = (left * right).reshape(moved.shape)
    others = np.moveaxis(others, tuple(range(len(ax))), ax)
    return expand(g, a, axis=axis, keepdims=keepdims) * others


def max_vjp(g, ans, a, axis=None, *, keepdims=False):
    """The adjoint goes to the maximal (or minimal) elements, split evenly between ties."""
    if axis is not None and not keepdims:  # put the reduced axes back, as length 1
        axes = (axis,) if type(axis) is int else tuple(axis)
        axes = tuple(i % np.ndim(a) for i in axes)
        ans, g = np.expand_dims(ans, axes), np.expand_dims(g, axes)
    hits = a == ans  # broadcasts: the reduced axes have length 1 (or ans is a scalar)
    ties = np.sum(hits, axis=axis, keepdims=True)
    return np.where(hits, g / ties, 0.0).astype(np.result_type(g, a), copy=False)


def var_vjp(g, ans, a, axis=None, *, ddof=0, keepdims=False):
    centered = a - np.mean(a, axis=axis, keepdims=True)
    return (
        2.0 * expand(g, a, axis=axis, keepdims=keepdims) * centered / (count(a, axis=axis) - ddof)
    )


def std_vjp(g, ans, a, axis=None, *, ddof=0, keepdims=False):
    centered = a - np.mean(a, axis=axis, keepdims=True)
    return (
        expand(g / ans, a, axis=axis, keepdims=keepdims) * centered / (count(a, axis=axis) - ddof)
    )


defvjp(np.sum, sum_vjp)
defvjp(np.mean, mean_vjp)
defvjp(np.prod, prod_vjp)
defvjp(np.max, max_vjp)
defvjp(np.amax, max_vjp)
defvjp(np.min, max_vjp)
defvjp(np.amin, max_vjp)
defvjp(np.var, var_vjp)
defvjp(np.std, std_vjp)

# the same, as methods: x.sum(axis=0)
defmethod("sum", sum_vjp)
defmethod("mean", mean_vjp)
defmethod("prod", prod_vjp)
defmethod("max", max_vjp)
defmethod("min", max_vjp)
defmethod("var", var_vjp)
defmethod("std", std_vjp)

# --------------------------------------------------------------------------- cumulative


def cumsum(g, ans, a, axis=None):
    """Each element adds to every later partial sum: the adjoint is a cumulative sum from the end."""
    if axis is None:
        return np.reshape(np.cumsum(np.ravel(g)[::-1])[::-1], np.shape(a))
    return np.flip(np.cumsum(np.flip(g, axis), axis), axis)


def cumprod(g, ans, a, axis=None):
    """Partial products, zeros included. Element ``j`` scales every partial product from ``j``
    on, so its adjoint is a cumulative sum from the end of ``g * ans``, over ``a[j]`` -- except at
    the first zero of a row, where dividing is impossible: there it is the same sum of ``g`` times
    the partial products with that zero taken out (every later element's products hold the zero,
    their adjoints are 0)."""
    shape = np.shape(a)
    if axis is None:
        a, g, ans, axis = np.ravel(a), np.ravel(g), np.ravel(ans), 0
    zero = a == 0
    if not np.any(zero):
        return np.reshape(reverse_cumsum(g * ans, axis) / a, shape)
    first = zero & (np.cumsum(zero, axis=axis) == 1)  # the first zero of each row
    without = np.cumprod(np.where(first, 1, a), axis=axis)
    out = np.where(
        first,
        reverse_cumsum(g * without, axis),
        reverse_cumsum(g * ans, axis) / np.where(zero, 1, a),
    )
    return np.reshape(out, shape)


def reverse_cumsum(x, axis):
    return np.flip(np.cumsum(np.flip(x, axis), axis), axis)


defvjp(np.cumsum, cumsum)
defvjp(np.cumprod, cumprod)
defmethod("cumsum", cumsum)
defmethod("cumprod", cumprod)
