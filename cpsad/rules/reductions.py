"""Rules of reductions: sum, mean, prod, max/min, var, std -- with ``axis`` (int, tuple, None) and
``keepdims`` -- and the cumulative ones, cumsum and cumprod.

Parameters that numpy's functions take after ``dtype`` and ``out`` (``keepdims``, ``ddof``) are
keyword-only here, so a positional ``dtype`` is not mistaken for them.

A reduction's tangent reduces the tangent the same way: a sum of the tangent (times the partial
derivatives of each element, for prod, max, var, std) over the reduced axes.
"""

from __future__ import annotations

import numpy as np

from cpsad.rules.core import defjvp, defjvp_method, defmethod, defvjp
from cpsad.runtime import as_array, foreign, maybe_any, reads_shape_of


@reads_shape_of("x")
def expand(g, x, axis=None, keepdims=False):
    """Broadcast the adjoint of a reduction of ``x`` back to ``x``'s shape."""
    shape = x.shape if type(x) is np.ndarray else np.shape(x)
    if axis is not None and not keepdims:  # the reduced axes back, as length 1 (a reshape:
        # np.expand_dims costs more than the small arrays it is usually given)
        axes = (axis % len(shape),) if type(axis) is int else {a % len(shape) for a in axis}
        g = np.reshape(g, tuple(1 if i in axes else n for i, n in enumerate(shape)))
    if type(g) is np.ndarray and g.shape == shape:
        return g
    if type(x) is np.ndarray and x.size <= SMALL and (type(g) in _PLAIN or not foreign(g)):
        # a copy is cheaper than a view's set-up (of a Dask or CuPy adjoint: a broadcast, its own)
        out = np.empty(shape, np.result_type(g))
        out[...] = g
        return out
    if foreign(x):  # Dask, CuPy: laid out as x is (np.broadcast_to makes a Dask array of one
        # chunk, which every elementwise product with x's chunks then splits and merges again)
        dtype = g.dtype if hasattr(g, "dtype") else np.result_type(g)
        return np.zeros_like(x, dtype=dtype) + g
    return np.broadcast_to(g, shape)


SMALL = 1 << 14  # elements: below this, expand writes a new array instead of a broadcast view
_PLAIN = frozenset({np.ndarray, float, np.float64, np.float32, int})  # adjoints numpy can hold


@reads_shape_of("x")
def count(x, axis=None) -> int:
    """How many elements each result of a reduction over ``axis`` combined."""
    if axis is None:  # (an array's own size: np.size of a Dask array computes it)
        if type(x) is np.ndarray:
            return x.size
        n = x.size if hasattr(x, "shape") and hasattr(x, "size") else np.size(x)
        return n if n == n else _counted(x, None)  # (NaN: a Dask length not known yet)
    shape = np.shape(x)
    axes = (axis,) if np.ndim(axis) == 0 else tuple(axis)
    try:
        return int(np.prod([shape[a] for a in axes]))
    except ValueError:  # int(NaN): a Dask array of a length not known yet (after x[mask])
        return _counted(x, axes)


def _counted(x, axes):
    """``count`` of a Dask array whose length along ``axes`` is not known until it is computed
    (``x[mask]``): counted in the graph, as Dask's own mean counts."""
    ones = np.ones_like(x, dtype=np.intp)
    return np.sum(ones) if axes is None else np.max(np.sum(ones, axis=axes))


def sum_vjp(g, ans, a, axis=None, *, keepdims=False):
    return expand(g, a, axis=axis, keepdims=keepdims)


def mean_vjp(g, ans, a, axis=None, *, keepdims=False):
    """``g / n`` to each of the ``n`` elements: ``np.divide``, numpy's division as the mean's own
    (of an empty array, ``n = 0``: inf, where a Python float's ``/ 0`` would raise)."""
    return expand(np.divide(g, count(a, axis=axis)), a, axis=axis, keepdims=keepdims)


def prod_vjp(g, ans, a, axis=None, *, keepdims=False):
    """Products with zeros handled: each element's adjoint is the product of the others."""
    a = as_array(a)
    if not maybe_any(a == 0):  # (Dask, CuPy: not read; the general formula)
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
        shape = np.shape(a)
        axes = (axis % len(shape),) if type(axis) is int else {i % len(shape) for i in axis}
        kept = tuple(1 if i in axes else n for i, n in enumerate(shape))
        ans, g = np.reshape(ans, kept), np.reshape(g, kept)
    hits = a == ans  # broadcasts: the reduced axes have length 1 (or ans is a scalar)
    if type(hits) is np.ndarray and hits.ndim:
        ties = np.add.reduce(hits, axis=axis, keepdims=True, dtype=np.intp)
    else:  # a number's maximum: itself
        ties = np.sum(hits, axis=axis, keepdims=True)
    out = np.where(hits, g / ties, 0.0)
    dtype = np.result_type(g, a)
    return out if out.dtype == dtype else out.astype(dtype)


def var_vjp(g, ans, a, axis=None, *, ddof=0, keepdims=False):
    """``2 g (a - mean) / (n - ddof)``; of complex ``a`` (``var`` is the mean of ``|a - mean|**2``,
    real) the real part of ``g`` times ``conj(a - mean)``."""
    centered = a - np.mean(a, axis=axis, keepdims=True)
    return (
        2.0
        * expand(np.real(g), a, axis=axis, keepdims=keepdims)
        * centered.conj()
        / (count(a, axis=axis) - ddof)
    )


def std_vjp(g, ans, a, axis=None, *, ddof=0, keepdims=False):
    """``g (a - mean) / ((n - ddof) std)``, and 0 where the spread is zero (one element, equal
    ones): ``std`` is a norm of the centered values there, whose smallest subgradient is 0 (the
    central difference, ``|eps| - |eps|``, is 0 too). Of complex ``a``: ``conj(a - mean)``, and the
    real part of ``g``."""
    centered = a - np.mean(a, axis=axis, keepdims=True)
    return (
        expand(over_nonzero(np.real(g), ans), a, axis=axis, keepdims=keepdims)
        * centered.conj()
        / (count(a, axis=axis) - ddof)
    )


def over_nonzero(g, d):
    """``g / d``, 0 where ``d`` is 0."""
    if np.ndim(d) == 0 and not foreign(d):
        return g / d if d != 0 else 0.0 * g
    d = as_array(d)
    zero = d == 0
    if not maybe_any(zero):
        return g / d
    return np.where(zero, 0.0, g / np.where(zero, 1, d))


defvjp(np.sum, sum_vjp)
defvjp(np.mean, mean_vjp)
defvjp(np.prod, prod_vjp)
defvjp(np.max, max_vjp)
defvjp(np.amax, max_vjp)
defvjp(np.min, max_vjp)
defvjp(np.amin, max_vjp)
# ddof: the divisor n - ddof moves with it; a differentiable ddof is an error, not a zero
defvjp(np.var, var_vjp, ddof=None)
defvjp(np.std, std_vjp, ddof=None)

# the same, as methods: x.sum(axis=0)
defmethod("sum", sum_vjp)
defmethod("mean", mean_vjp)
defmethod("prod", prod_vjp)
defmethod("max", max_vjp)
defmethod("min", max_vjp)
defmethod("var", var_vjp, ddof=None)
defmethod("std", std_vjp, ddof=None)


def sum_jvp(t, ans, a, axis=None, *, keepdims=False):
    return np.sum(t, axis=axis, keepdims=keepdims)


def mean_jvp(t, ans, a, axis=None, *, keepdims=False):
    return np.mean(t, axis=axis, keepdims=keepdims)


def prod_jvp(t, ans, a, axis=None, *, keepdims=False):
    """Each element's tangent times the product of the others -- the adjoint rule's factor for a
    unit adjoint, zeros handled."""
    others = prod_vjp(np.ones_like(ans), ans, a, axis=axis, keepdims=keepdims)
    return np.sum(t * others, axis=axis, keepdims=keepdims)


def max_jvp(t, ans, a, axis=None, *, keepdims=False):
    """The mean of the tangents of the maximal (or minimal) elements: the transpose of the even
    split between ties."""
    kept = ans
    if axis is not None and not keepdims:  # put the reduced axes back, as length 1
        axes = (axis,) if type(axis) is int else tuple(axis)
        kept = np.expand_dims(ans, tuple(i % np.ndim(a) for i in axes))
    hits = a == kept
    ties = np.sum(hits, axis=axis, keepdims=keepdims)
    return (np.sum(t * hits, axis=axis, keepdims=keepdims) / ties).astype(
        np.result_type(t, ans), copy=False
    )


def var_jvp(t, ans, a, axis=None, *, ddof=0, keepdims=False):
    """``2 sum((a - mean) t) / (n - ddof)``: the tangent's own mean drops out, as the centered
    values sum to zero. (Complex ``a``: the real part of ``conj(a - mean) t``.)"""
    centered = a - np.mean(a, axis=axis, keepdims=True)
    spread = np.real(np.sum(centered.conj() * t, axis=axis, keepdims=keepdims))
    return 2.0 * spread / (count(a, axis=axis) - ddof)


def std_jvp(t, ans, a, axis=None, *, ddof=0, keepdims=False):
    """The transpose of ``std_vjp``: 0 where the spread is zero."""
    centered = a - np.mean(a, axis=axis, keepdims=True)
    spread = np.real(np.sum(centered.conj() * t, axis=axis, keepdims=keepdims))
    return over_nonzero(spread, ans) / (count(a, axis=axis) - ddof)


for _f, _jvp in [
    (np.sum, sum_jvp),
    (np.mean, mean_jvp),
    (np.prod, prod_jvp),
    (np.max, max_jvp),
    (np.amax, max_jvp),
    (np.min, max_jvp),
    (np.amin, max_jvp),
    (np.var, var_jvp),
    (np.std, std_jvp),
]:
    defjvp(_f, _jvp)
for _name, _jvp in [
    ("sum", sum_jvp),
    ("mean", mean_jvp),
    ("prod", prod_jvp),
    ("max", max_jvp),
    ("min", max_jvp),
    ("var", var_jvp),
    ("std", std_jvp),
]:
    defjvp_method(_name, _jvp)

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
    if not maybe_any(zero):
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


def cumsum_jvp(t, ans, a, axis=None):
    return np.cumsum(t, axis=axis)


def cumprod_jvp(t, ans, a, axis=None):
    """Partial product ``k`` changes by ``sum_{j <= k} t_j prod_{i <= k, i != j} a_i``: the
    partial products times the partial sums of ``t / a`` before a row's first zero; from it on,
    only the zero's own term is left, its tangent times the partial products without it."""
    if axis is None:
        a, t, axis = np.ravel(a), np.ravel(t), 0
    zero = a == 0
    if not maybe_any(zero):
        return ans * np.cumsum(t / a, axis=axis)
    first = zero & (np.cumsum(zero, axis=axis) == 1)  # the first zero of each row
    after = np.cumsum(zero, axis=axis) > 0  # from the first zero on
    without = np.cumprod(np.where(first, 1, a), axis=axis)
    at_zero = np.sum(t * first, axis=axis, keepdims=True)
    before = ans * np.cumsum(t / np.where(zero, 1, a), axis=axis)
    return np.where(after, at_zero * without, before)


defjvp(np.cumsum, cumsum_jvp)
defjvp(np.cumprod, cumprod_jvp)
defjvp_method("cumsum", cumsum_jvp)
defjvp_method("cumprod", cumprod_jvp)
