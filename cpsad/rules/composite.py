"""numpy functions differentiated as what they compute: composites of functions that have rules.

A composite is a plain Python function with the parameters and defaults of the numpy function it
stands for, written (as numpy's own Python code often is) with functions that have rules; it
returns what numpy returns, value and type. ``defcomposite`` registers it: a call of the numpy
function in differentiated code runs the composite instead, transformed like a function of
yours, so reverse mode, forward mode and every higher order come from the rules it calls -- the
way ``jax.numpy`` is written on ``lax``. Each one is checked like a rule, end to end, against
central finite differences, autograd where it has the function (tests/corpus_composites.py),
and against numpy's own value (tests/test_composites.py).

The invariant: for every argument numpy accepts here, a composite returns numpy's value, bit for
bit (``cpsad.vjp`` compares the two runs exactly), and raises where numpy raises; what it does not
compute as numpy does (an option, a method) it refuses with a ``TypeError`` that names it, never a
different number. Where numpy's own arithmetic cannot be followed step for step (the quantiles'
interpolation, ``interp``'s C loop), the value is numpy's and the derivative that of the same
formula written plainly (``_exactly``).
"""

from __future__ import annotations

import numpy as np

from cpsad.rules.core import defcomposite, defnondiff
from cpsad.runtime import as_array, foreign, getitem_adjoint, maybe_any, on_device_of


def _part(fn):
    """A helper of composites: transformed with them (a function of cpsad's own is otherwise
    opaque)."""
    fn.__cpsad_composite__ = True
    return fn


def _numpy_value(fn, *args, **kwargs):
    """``fn(*args, **kwargs)`` as a constant: on the no-derivative list though its value moves
    with its inputs -- a stop-gradient, called in ``_exactly`` alone (a test keeps it so), where
    the formula beside it gives the derivative."""
    return fn(*args, **kwargs)


defnondiff(_numpy_value)


@_part
def _exactly(formula, fn, *args, **kwargs):
    """numpy's own value, ``fn(*args, **kwargs)``, with the derivative of ``formula``, which
    computes the same but for rounding: ``formula - formula`` is exactly zero where finite.
    (The second ``formula`` through ``as_array``, not ``np.copy``, which Dask does not have: it
    would compute the array.)"""
    value = _numpy_value(fn, *args, **kwargs)
    return value + np.where(np.isfinite(formula), formula - _numpy_value(as_array, formula), 0.0)


def _unsupported(name: str, what: str):
    return TypeError(f"cpsad differentiates `np.{name}` {what}; compute it another way there")


# --------------------------------------------------------------------------- moving elements


def rot90(m, k=1, axes=(0, 1)):
    """``np.rot90``: flips and a swap of the two axes (numpy's own steps)."""
    axes = tuple(axes)
    if len(axes) != 2:
        raise ValueError("len(axes) must be 2.")
    m = as_array(m)
    if axes[0] == axes[1] or np.absolute(axes[0] - axes[1]) == np.ndim(m):
        raise ValueError("Axes must be different.")
    k = k % 4
    if k == 0:
        return m[:]
    if k == 2:
        return np.flip(np.flip(m, axes[0]), axes[1])
    if k == 1:
        return np.swapaxes(np.flip(m, axes[1]), axes[0], axes[1])
    return np.flip(np.swapaxes(m, axes[0], axes[1]), axes[1])


defcomposite(np.rot90, rot90)


def rollaxis(a, axis, start=0):
    """``np.rollaxis``: ``np.moveaxis`` to where numpy puts the axis."""
    n = np.ndim(a)
    if axis < -n or axis >= n:
        raise np.exceptions.AxisError(axis, n)
    axis = axis % n
    if start < 0:
        start = start + n
    if start < 0 or start > n:
        raise np.exceptions.AxisError(
            f"'start' arg requires {-n} <= start < {n + 1}, but {start} was passed in"
        )
    if axis < start:
        start = start - 1
    return np.moveaxis(a, axis, start)


defcomposite(np.rollaxis, rollaxis)


def hsplit(ary, indices_or_sections):
    """``np.hsplit``: ``np.split`` along the second axis (the first of a 1-d array)."""
    if np.ndim(ary) == 0:
        raise ValueError("hsplit only works on arrays of 1 or more dimensions")
    if np.ndim(ary) > 1:
        return np.split(ary, indices_or_sections, 1)
    return np.split(ary, indices_or_sections, 0)


def vsplit(ary, indices_or_sections):
    """``np.vsplit``: ``np.split`` along the first axis of an array of two or more."""
    if np.ndim(ary) < 2:
        raise ValueError("vsplit only works on arrays of 2 or more dimensions")
    return np.split(ary, indices_or_sections, 0)


def dsplit(ary, indices_or_sections):
    """``np.dsplit``: ``np.split`` along the third axis of an array of three or more."""
    if np.ndim(ary) < 3:
        raise ValueError("dsplit only works on arrays of 3 or more dimensions")
    return np.split(ary, indices_or_sections, 2)


defcomposite(np.hsplit, hsplit)
defcomposite(np.vsplit, vsplit)
defcomposite(np.dsplit, dsplit)


def append(arr, values, axis=None):
    """``np.append``: both flattened and joined, or joined along ``axis`` (numpy's own steps)."""
    arr = as_array(arr)
    if axis is None:
        if np.ndim(arr) != 1:
            arr = np.ravel(arr)
        values = np.ravel(values)
        axis = np.ndim(arr) - 1
    return np.concatenate((arr, values), axis=axis)


defcomposite(np.append, append)


# --------------------------------------------------------------------------- differences, products


def diff(a, n=1, axis=-1, prepend=None, append=None):
    """``np.diff``: ``n`` times the next element minus this one along ``axis``, after
    ``prepend`` and before ``append`` (a number stands for a slice of it)."""
    if n == 0:
        return a
    if n < 0:
        raise ValueError(f"order must be non-negative but got {n!r}")
    a = as_array(a)
    if np.ndim(a) == 0:
        raise ValueError("diff requires input that is at least one dimensional")
    x = np.moveaxis(a, axis, -1)
    if prepend is not None:
        x = np.concatenate((_edge(prepend, x, axis), x), axis=-1)
    if append is not None:
        x = np.concatenate((x, _edge(append, x, axis)), axis=-1)
    if x.dtype == np.bool_:
        for _ in range(n):
            x = np.not_equal(x[..., 1:], x[..., :-1])
    else:
        for _ in range(n):
            x = x[..., 1:] - x[..., :-1]
    return np.moveaxis(x, -1, axis)


@_part
def _edge(v, x, axis):
    """``prepend`` or ``append`` of ``np.diff`` as the array joined to ``x`` (the array with
    ``axis`` moved last)."""
    v = as_array(v)
    if np.ndim(v) == 0:
        return np.broadcast_to(v, np.shape(x)[:-1] + (1,))
    return np.moveaxis(v, axis, -1)


defcomposite(np.diff, diff)


def cross(a, b, axisa=-1, axisb=-1, axisc=-1, axis=None):
    """``np.cross`` of 3-vectors (and of 2-vectors, as numpy takes them: a zero third
    component; two 2-vectors give the third component alone)."""
    if axis is not None:
        axisa, axisb, axisc = axis, axis, axis
    a = np.moveaxis(as_array(a), axisa, -1)
    b = np.moveaxis(as_array(b), axisb, -1)
    na, nb = np.shape(a)[-1], np.shape(b)[-1]
    if na not in (2, 3) or nb not in (2, 3):
        raise ValueError("incompatible dimensions for cross product\n(dimension must be 2 or 3)")
    a0, a1 = a[..., 0], a[..., 1]
    b0, b1 = b[..., 0], b[..., 1]
    z = a0 * b1 - a1 * b0
    if na == 2 and nb == 2:
        return z
    if na == 3:
        a2 = a[..., 2]
    else:
        a2 = a0 * 0
    if nb == 3:
        b2 = b[..., 2]
    else:
        b2 = b0 * 0
    x = a1 * b2 - a2 * b1
    y = a2 * b0 - a0 * b2
    return np.moveaxis(np.stack((x, y, z), axis=-1), -1, axisc)


defcomposite(np.cross, cross)


def kron(a, b):
    """``np.kron``: every product of an element of ``a`` and one of ``b``, each pair of axes
    interleaved and merged."""
    a = as_array(a)
    b = as_array(b)
    nd = max(np.ndim(a), np.ndim(b))
    sa = (1,) * (nd - np.ndim(a)) + np.shape(a)
    sb = (1,) * (nd - np.ndim(b)) + np.shape(b)
    outer = np.tensordot(np.reshape(a, sa), np.reshape(b, sb), axes=0)
    order = np.ravel(np.transpose(np.reshape(np.arange(2 * nd), (2, nd))))
    return np.reshape(np.transpose(outer, order), np.multiply(sa, sb))


defcomposite(np.kron, kron)


# --------------------------------------------------------------------------- elementwise


def sinc(x):
    """``np.sinc``: ``sin(pi x) / (pi x)``, numpy's tiny stand-in for ``x = 0`` (where the
    derivative, 0, is what the formula gives there)."""
    y = np.pi * np.where(x == 0, 1.0e-20, x)
    return np.sin(y) / y


defcomposite(np.sinc, sinc)


def nan_to_num(x, copy=True, nan=0.0, posinf=None, neginf=None):
    """``np.nan_to_num``: NaN and infinities replaced (constants: no derivative there), the
    finite values passed through. (``copy=False`` changes ``x`` in place: refused.)"""
    if not copy:
        raise _unsupported("nan_to_num", "with copy=True (with copy=False it changes `x` in place)")
    x = as_array(x)
    if np.iscomplexobj(x):
        return nan_to_num(np.real(x), True, nan, posinf, neginf) + 1j * nan_to_num(
            np.imag(x), True, nan, posinf, neginf
        )
    if not np.issubdtype(x.dtype, np.inexact):
        return np.copy(x)
    big = np.finfo(x.dtype).max
    if posinf is None:
        posinf = big
    if neginf is None:
        neginf = -big
    out = np.where(np.isnan(x), np.asarray(nan, x.dtype), x)
    out = np.where(np.isposinf(x), np.asarray(posinf, x.dtype), out)
    out = np.where(np.isneginf(x), np.asarray(neginf, x.dtype), out)
    if np.ndim(x) == 0:
        return out[()]
    return out


defcomposite(np.nan_to_num, nan_to_num)


def real_if_close(a, tol=100):
    """``np.real_if_close``: the real part where every imaginary part is within ``tol``."""
    a = as_array(a)
    if not np.iscomplexobj(a):
        return a
    if tol > 1:
        tol = np.finfo(a.dtype).eps * tol
    if np.all(np.absolute(np.imag(a)) < tol):
        return np.real(a)
    return a


defcomposite(np.real_if_close, real_if_close)


# --------------------------------------------------------------------------- statistics


def average(a, axis=None, weights=None, returned=False, *, keepdims=False):
    """``np.average``: the mean, or ``sum(a * w) / sum(w)`` (numpy's own steps, a 1-d ``w``
    along ``axis`` of a larger ``a`` included)."""
    a = as_array(a)
    if weights is None:
        avg = np.mean(a, axis=axis, keepdims=keepdims)
        scl = np.ones(np.shape(avg)) * (_count(a) / _count(avg))  # (np.size computes on Dask)
    else:
        w = as_array(weights)
        if np.shape(a) != np.shape(w):
            if axis is None:
                raise TypeError("Axis must be specified when shapes of a and weights differ.")
            if np.ndim(w) != 1:
                raise TypeError("1D weights expected when shapes of a and weights differ.")
            if np.shape(w)[0] != np.shape(a)[axis]:
                raise ValueError("Length of weights not compatible with specified axis.")
            w = np.swapaxes(np.broadcast_to(w, (1,) * (np.ndim(a) - 1) + np.shape(w)), -1, axis)
        scl = np.sum(w, axis=axis, keepdims=keepdims)
        if np.any(scl == 0.0):
            raise ZeroDivisionError("Weights sum to zero, can't be normalized")
        avg = np.sum(a * w, axis=axis, keepdims=keepdims) / scl
    if returned:
        return avg, np.broadcast_to(scl, np.shape(avg)) * 1
    return avg


defcomposite(np.average, average)


_METHODS = ("linear", "lower", "higher", "midpoint")


def quantile(
    a,
    q,
    axis=None,
    out=None,
    overwrite_input=False,
    method="linear",
    keepdims=False,
    *,
    weights=None,
    interpolation=None,
):
    """``np.quantile``: the sorted values at ``q (n - 1)``, between two neighbours as
    ``method`` says (NaN where a NaN is among the values, as numpy)."""
    _plain_quantile("quantile", out, overwrite_input, method, weights, interpolation)
    q = as_array(q)
    if not foreign(q) and (np.any(q < 0) or np.any(q > 1)):  # (q on Dask, CuPy: numpy's
        raise ValueError("Quantiles must be in the range [0, 1]")  # function checks it)
    formula = _quantile(as_array(a), q, axis, method, keepdims)
    return _exactly(formula, np.quantile, a, q, axis, method=method, keepdims=keepdims)


@_part
def _plain_quantile(name, out, overwrite_input, method, weights, interpolation):
    """Refuse what the quantiles' formula here does not compute (``TypeError``)."""
    if out is not None:
        raise _unsupported(name, "without `out=`")
    if overwrite_input:
        raise _unsupported(name, "without `overwrite_input=True` (it may reorder the input)")
    if weights is not None or interpolation is not None:
        raise _unsupported(name, "without `weights=` or `interpolation=`")
    if method not in _METHODS:
        raise _unsupported(name, f"with method one of {', '.join(_METHODS)}")


@_part
def _quantile(a, q, axis, method, keepdims):
    """The quantiles ``q`` of ``a`` along ``axis`` (all of it for None): ``q``'s axes first,
    then the others, as numpy gives them."""
    if axis is None:
        x = np.reshape(a, (-1,))
    elif isinstance(axis, (tuple, list)):
        raise _unsupported("quantile", "along one axis or all of them (not a tuple of axes)")
    else:
        x = np.moveaxis(a, axis, -1)
    n = np.shape(x)[-1]
    x = np.sort(x, axis=-1)
    pos = q * (n - 1)
    lo = np.floor(pos).astype(np.intp)
    hi = np.minimum(lo + 1, n - 1)
    if method == "lower":
        hi = lo
    elif method == "higher":
        lo = np.ceil(pos).astype(np.intp)
        hi = lo
    below = x[..., lo]  # (the other axes, then q's)
    above = x[..., hi]
    if method == "midpoint":
        value = below + (above - below) * np.where(pos % 1 == 0, 0.0, 0.5)
    else:
        value = below + (above - below) * (pos - lo)
    nan = np.any(np.isnan(x), axis=-1)
    value = np.where(np.reshape(nan, np.shape(nan) + (1,) * np.ndim(q)), np.nan, value)
    lead = np.ndim(value) - np.ndim(q)
    value = np.moveaxis(value, tuple(range(lead, np.ndim(value))), tuple(range(np.ndim(q))))
    if keepdims:
        if axis is None:
            value = np.reshape(value, np.shape(q) + (1,) * np.ndim(a))
        else:
            value = np.expand_dims(value, np.ndim(q) + axis % np.ndim(a))
    if np.ndim(value) == 0:
        return value[()]
    return value


defcomposite(np.quantile, quantile)


def percentile(
    a,
    q,
    axis=None,
    out=None,
    overwrite_input=False,
    method="linear",
    keepdims=False,
    *,
    weights=None,
    interpolation=None,
):
    """``np.percentile``: ``np.quantile`` at ``q / 100``."""
    _plain_quantile("percentile", out, overwrite_input, method, weights, interpolation)
    q = as_array(q)
    if not foreign(q) and (np.any(q < 0) or np.any(q > 100)):  # (q on Dask, CuPy: numpy's
        raise ValueError("Percentiles must be in the range [0, 100]")  # function checks it)
    formula = _quantile(as_array(a), np.true_divide(q, 100), axis, method, keepdims)
    return _exactly(formula, np.percentile, a, q, axis, method=method, keepdims=keepdims)


defcomposite(np.percentile, percentile)


def median(a, axis=None, out=None, overwrite_input=False, keepdims=False):
    """``np.median``: the middle value, or the mean of the two middle ones."""
    _plain_quantile("median", out, overwrite_input, "linear", None, None)
    formula = _quantile(as_array(a), np.asarray(0.5), axis, "linear", keepdims)
    return _exactly(formula, np.median, a, axis, keepdims=keepdims)


defcomposite(np.median, median)


def partition(a, kth, axis=-1, kind="introselect", order=None):
    """``np.partition``: the elements where ``np.argpartition`` puts them."""
    if order is not None:
        raise _unsupported("partition", "without `order=`")
    a = as_array(a)
    if axis is None:
        a = np.reshape(a, (-1,))
        axis = -1
    return np.take_along_axis(a, np.argpartition(a, kth, axis=axis, kind=kind), axis=axis)


defcomposite(np.partition, partition)


def interp(x, xp, fp, left=None, right=None, period=None):
    """``np.interp``: on the segment of ``xp`` each ``x`` falls in, the line through its ends;
    ``left`` and ``right`` (``fp``'s ends) outside."""
    if period is not None:
        raise _unsupported("interp", "without `period=`")
    x = as_array(x)
    xp = as_array(xp)
    fp = as_array(fp)
    if foreign(x):  # (x on Dask or CuPy: xp and fp, indexed by positions computed there, too)
        xp, fp = on_device_of(xp, x), on_device_of(fp, x)
    if np.ndim(xp) != 1 or np.ndim(fp) != 1:
        raise ValueError("object too deep for desired array")
    if np.shape(xp)[0] != np.shape(fp)[0]:
        raise ValueError("fp and xp are not of the same length.")
    if np.shape(xp)[0] == 0:
        raise ValueError("array of sample points is empty")
    if np.shape(xp)[0] == 1:
        inside = fp[0] + 0 * x
    else:
        j = np.clip(np.searchsorted(xp, x, side="right") - 1, 0, np.shape(xp)[0] - 2)
        x0, x1 = xp[j], xp[j + 1]
        f0, f1 = fp[j], fp[j + 1]
        slope = (f1 - f0) / (x1 - x0)
        inside = slope * (x - x0) + f0
        inside = np.where(x == xp[-1], fp[-1], inside)
    if left is None:
        left = fp[0]
    if right is None:
        right = fp[-1]
    out = np.where(x < xp[0], left, np.where(x > xp[-1], right, inside))
    if np.ndim(out) == 0:
        out = out[()]
    return _exactly(out, np.interp, x, xp, fp, left, right)


defcomposite(np.interp, interp)


# --------------------------------------------------------------------------- more of numpy


def gradient(f, *varargs, axis=None, edge_order=1):
    """``np.gradient``: central differences inside, one-sided ones (of ``edge_order``) at the
    ends, along each axis; spacings a number or the coordinates (differentiable too). The
    value is numpy's (``_exactly``)."""
    g = as_array(f)
    n = np.ndim(g)
    if axis is None:
        axes = list(range(n))
    elif isinstance(axis, (tuple, list)):
        axes = list(axis)
    else:
        axes = [axis]
    if not np.issubdtype(g.dtype, np.inexact):
        g = g.astype(np.float64)
    if len(varargs) == 0:
        spacing = [1.0] * len(axes)
    elif len(varargs) == 1 and np.ndim(varargs[0]) == 0:
        spacing = [varargs[0]] * len(axes)
    else:
        spacing = list(varargs)
    kw = {"axis": axis, "edge_order": edge_order}
    if len(axes) == 1:
        formula = _gradient_along(g, axes[0], spacing[0], edge_order)
        return _exactly(formula, _gradient_part, None, f, varargs, kw)
    out = []
    for i in range(len(axes)):
        formula = _gradient_along(g, axes[i], spacing[i], edge_order)
        out.append(_exactly(formula, _gradient_part, i, f, varargs, kw))
    return tuple(out)


def _gradient_part(i, f, varargs, kw):
    """numpy's gradient along the ``i``-th of its axes (all of it for ``i`` None). (The
    arguments passed as a tuple and a dict, not spread: emitted code differentiated again calls
    nothing with ``*args`` -- the second derivative of ``np.gradient`` was refused.)"""
    out = np.gradient(f, *varargs, **kw)
    return out if i is None else out[i]


@_part
def _gradient_along(f, axis, dx, edge_order):
    """``np.gradient``'s formulas along one axis (moved last, and back)."""
    x = np.moveaxis(f, axis, -1)
    if np.ndim(dx) == 0:
        inner = (x[..., 2:] - x[..., :-2]) / (2.0 * dx)
        if edge_order == 1:
            first = (x[..., 1] - x[..., 0]) / dx
            last = (x[..., -1] - x[..., -2]) / dx
        else:
            first = (-1.5 / dx) * x[..., 0] + (2.0 / dx) * x[..., 1] + (-0.5 / dx) * x[..., 2]
            last = (0.5 / dx) * x[..., -3] + (-2.0 / dx) * x[..., -2] + (1.5 / dx) * x[..., -1]
    else:
        d = np.diff(as_array(dx) * 1.0)
        d1 = d[:-1]
        d2 = d[1:]
        a = -d2 / (d1 * (d1 + d2))
        b = (d2 - d1) / (d1 * d2)
        c = d1 / (d2 * (d1 + d2))
        inner = a * x[..., :-2] + b * x[..., 1:-1] + c * x[..., 2:]
        if edge_order == 1:
            first = (x[..., 1] - x[..., 0]) / d[0]
            last = (x[..., -1] - x[..., -2]) / d[-1]
        else:
            d1, d2 = d[0], d[1]
            first = (
                (-(2.0 * d1 + d2) / (d1 * (d1 + d2))) * x[..., 0]
                + ((d1 + d2) / (d1 * d2)) * x[..., 1]
                + (-d1 / (d2 * (d1 + d2))) * x[..., 2]
            )
            d1, d2 = d[-2], d[-1]
            last = (
                (d2 / (d1 * (d1 + d2))) * x[..., -3]
                + (-(d2 + d1) / (d1 * d2)) * x[..., -2]
                + ((2.0 * d2 + d1) / (d2 * (d1 + d2))) * x[..., -1]
            )
    out = np.concatenate((np.expand_dims(first, -1), inner, np.expand_dims(last, -1)), axis=-1)
    return np.moveaxis(out, -1, axis)


defcomposite(np.gradient, gradient)


def select(condlist, choicelist, default=0):
    """``np.select``: where the first true condition says, its choice; ``default`` where none
    is (a chain of ``np.where`` from the last condition to the first)."""
    if len(condlist) != len(choicelist):
        raise ValueError("list of cases must be same length as list of conditions")
    if len(condlist) == 0:
        raise ValueError("select with an empty condition list is not possible")
    for i in range(len(condlist)):
        if as_array(condlist[i]).dtype != np.bool_:
            raise TypeError(f"invalid entry {i} in condlist: should be boolean ndarray")
    result = default
    for i in range(len(condlist) - 1, -1, -1):
        result = np.where(condlist[i], choicelist[i], result)
    return result


defcomposite(np.select, select)


def matrix_power(a, n):
    """``np.linalg.matrix_power``: products of squares (numpy's order of them), of the inverse
    for ``n < 0``; the identity for 0."""
    a = as_array(a)
    if np.ndim(a) < 2 or np.shape(a)[-1] != np.shape(a)[-2]:
        raise np.linalg.LinAlgError("Last 2 dimensions of the array must be square")
    if n == 0:
        return np.zeros_like(a) + np.eye(np.shape(a)[-1], dtype=np.result_type(a.dtype, int))
    if n < 0:
        a = np.linalg.inv(a)
        n = -n
    if n == 1:
        return a
    if n == 2:
        return np.matmul(a, a)
    if n == 3:
        return np.matmul(np.matmul(a, a), a)
    z = None
    result = None
    while n > 0:
        if z is None:
            z = a
        else:
            z = np.matmul(z, z)
        bit = n % 2
        n = n // 2
        if bit:
            if result is None:
                result = z
            else:
                result = np.matmul(result, z)
    return result


defcomposite(np.linalg.matrix_power, matrix_power)


def piecewise(x, condlist, funclist, *args, **kw):
    """``np.piecewise``: where each condition holds (the later ones over the earlier), its
    function of ``x`` there, or its constant; an extra function for where none holds."""
    x = as_array(x)
    if np.isscalar(condlist) or (
        not isinstance(condlist[0], (list, np.ndarray))
        and not foreign(condlist[0])
        and np.ndim(x) != 0
    ):
        condlist = [condlist]
    conds = _conditions(condlist)
    n = len(conds)
    if n == len(funclist) - 1:
        conds = np.concatenate([conds, ~np.any(conds, axis=0, keepdims=True)], axis=0)
        n = n + 1
    elif n != len(funclist):
        raise ValueError(f"with {n} condition(s), either {n} or {n + 1} functions are expected")
    y = np.zeros_like(x)
    for i in range(n):
        cond = conds[i]
        func = funclist[i]
        if not callable(func):
            y = np.where(cond, func, y)
        elif maybe_any(cond):  # (on Dask, CuPy: not read; func of no elements is none)
            y = np.where(cond, getitem_adjoint(func(x[cond], *args, **kw), x, cond), y)
    return y.astype(x.dtype)


defcomposite(np.piecewise, piecewise)


def _count(x) -> int:
    """``np.size(x)`` from the shape (np.size of a Dask array computes the array)."""
    return int(np.prod(np.shape(x)))


defnondiff(_count)


def _conditions(condlist):
    """``np.asarray(condlist, dtype=bool)``; conditions of another library stacked there."""
    ref = next((c for c in condlist if foreign(c)), None)
    if ref is None:
        return np.asarray(condlist, dtype=bool)
    return np.stack(
        [on_device_of(np.asarray(c, dtype=bool), ref) if not foreign(c) else c for c in condlist]
    ).astype(bool)


defnondiff(_conditions)
