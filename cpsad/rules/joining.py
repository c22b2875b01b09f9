"""Rules of functions that build arrays from parts, or parts from arrays: ``np.array`` of a list,
concatenate, stack, split, tile, repeat, pad, full, linspace, take, sort, unique, bincount.

The adjoint of a list or tuple of parts is a ``Sparse`` of the parts' adjoints, the form the
``item`` rule (``[a, b]``) and the API read container adjoints in.

Forward, the tangent of such a parameter is the same list or tuple of the parts' tangents (zeros
where a part has none), and every primitive here is linear in its differentiable parameters
(``linspace`` in ``start`` and ``stop``, ``bincount`` in ``weights``): each tangent rule is the
primitive applied to the tangent.
"""

from __future__ import annotations

import numpy as np

from cpsad.rules.core import (
    DISCRETE,
    broadcast_like,
    defjvp,
    defjvp_method,
    defmethod,
    defnoderivative,
    defnondiff,
    defsubscript,
    defvjp,
)
from cpsad.runtime import (
    Sparse,
    as_adjoint,
    as_array,
    foreign,
    item_adjoint,
    on_device_of,
    scatter_added,
    tangent_zeros,
    unbroadcast,
    zeros_like,
)

# --------------------------------------------------------------------------- parts joined


def parts(g, x):
    """The adjoint of ``x`` -- parts, possibly nested lists, that made one array -- from ``g``."""
    if isinstance(x, (list, tuple)):
        return Sparse({i: parts(g[i], v) for i, v in enumerate(x)})
    if isinstance(x, np.ndarray) and np.issubdtype(x.dtype, np.inexact):
        return as_array(g).astype(x.dtype, copy=False)
    return g


def array(g, ans, object, dtype=None):
    """``np.array([a, b, a * b])``: entry ``i`` of the adjoint belongs to part ``i``. Made of
    integers or bools (``dtype=int``), a step: zero."""
    return parts(g, object) if ans.dtype.kind in "fc" else zeros_like(object)


defvjp(np.array, array)


def array_jvp(t, ans, object, dtype=None):
    return np.array(t, dtype=dtype) if ans.dtype.kind in "fc" else tangent_zeros(ans)


defjvp(np.array, array_jvp)


def asarray(g, ans, a, dtype=None):
    return parts(g, a) if np.result_type(ans).kind in "fc" else zeros_like(a)


defvjp(np.asarray, asarray)


def asarray_jvp(t, ans, a, dtype=None):
    return np.asarray(t, dtype=dtype) if np.result_type(ans).kind in "fc" else tangent_zeros(ans)


defjvp(np.asarray, asarray_jvp)


def unjoin(g, arrays, joined, axis):
    """Split the adjoint ``g`` of parts joined along ``axis`` into the adjoints of the parts.

    ``joined`` are the shapes the parts had when joined (after ``np.atleast_2d`` or flattening,
    say); each part's adjoint is reshaped back to its own shape.
    """
    if type(g) is np.ndarray and g.ndim == 1 and type(arrays) is list:
        # (vectors joined end to end: the Tree-LSTM's [hl, hr], once a node)
        if all(type(x) is np.ndarray and x.ndim == 1 for x in arrays):
            parts, start = {}, 0
            for i, s in enumerate(joined):
                parts[i] = g[start : start + s[0]]
                start += s[0]
            return Sparse(parts)
    g = as_array(g)
    index = [slice(None)] * g.ndim
    adjoints = []
    start = 0
    for s, x in zip(joined, arrays):  # slices, not np.split: a split costs 10 us, a slice 0.1
        index[axis] = slice(start, start + s[axis])
        adjoints.append(g[tuple(index)].reshape(np.shape(x)))
        start += s[axis]
    if isinstance(arrays, np.ndarray) or foreign(arrays):  # an array's rows: an array
        return np.stack(adjoints)
    return Sparse(enumerate(adjoints))


def concatenate_vjp(g, ans, arrays, axis=0):
    if axis is None:
        return unjoin(g, arrays, [(np.size(x),) for x in arrays], 0)
    return unjoin(g, arrays, [np.shape(x) for x in arrays], axis)


defvjp(np.concatenate, concatenate_vjp)


def concatenate_jvp(t, ans, arrays, axis=0):
    return np.concatenate(t, axis=axis)


defjvp(np.concatenate, concatenate_jvp)


def stack_vjp(g, ans, arrays, axis=0):
    axis = axis % np.ndim(ans)
    return unjoin(g, arrays, [np.shape(np.expand_dims(x, axis)) for x in arrays], axis)


defvjp(np.stack, stack_vjp)


def stack_jvp(t, ans, arrays, axis=0):
    return np.stack(t, axis=axis)


defjvp(np.stack, stack_jvp)


def hstack_vjp(g, ans, tup):
    joined = [np.shape(np.atleast_1d(x)) for x in tup]
    return unjoin(g, tup, joined, 0 if len(joined[0]) == 1 else 1)


defvjp(np.hstack, hstack_vjp)


def hstack_jvp(t, ans, tup):
    return np.hstack(t)


defjvp(np.hstack, hstack_jvp)


def vstack_vjp(g, ans, tup):
    return unjoin(g, tup, [np.shape(np.atleast_2d(x)) for x in tup], 0)


defvjp(np.vstack, vstack_vjp)


def vstack_jvp(t, ans, tup):
    return np.vstack(t)


defjvp(np.vstack, vstack_jvp)


def column_stack_vjp(g, ans, tup):
    joined = [np.shape(x) + (1,) if np.ndim(x) < 2 else np.shape(x) for x in tup]
    return unjoin(g, tup, joined, 1)


defvjp(np.column_stack, column_stack_vjp)


def column_stack_jvp(t, ans, tup):
    return np.column_stack(t)


defjvp(np.column_stack, column_stack_jvp)


def dstack_vjp(g, ans, tup):
    return unjoin(g, tup, [np.shape(np.atleast_3d(x)) for x in tup], 2)


defvjp(np.dstack, dstack_vjp)


def dstack_jvp(t, ans, tup):
    return np.dstack(t)


defjvp(np.dstack, dstack_jvp)

# --------------------------------------------------------------------------- index tricks
# np.r_[a, b] and the like compute a value from their index: the pipeline calls r_((a, b)) instead
# (core.defsubscript), so that a, b -- the index -- get adjoints. np.r_ and np.c_ place their items
# (arrays, numbers, slices as ranges) along one axis: each item's adjoint is its block of g.


def r_(key):
    """``np.r_[key]``."""
    return np.r_[key]


def c_(key):
    """``np.c_[key]``."""
    return np.c_[key]


def index_concatenated(concat, key):
    """``(items, directive, lengths, axis)`` of ``concat[key]`` (``np.r_`` or ``np.c_``): the
    items after a leading directive string (``"0,2"``), and the length of each item's block along
    the axis they are joined on."""
    items = key if isinstance(key, tuple) else (key,)
    directive = items[0] if items and isinstance(items[0], str) else None
    if directive is not None:
        items = items[1:]
        if directive.strip() in ("r", "c"):
            raise TypeError(
                f"cpsad: np.r_[{directive!r}, ...] makes an np.matrix, which cpsad does not follow; "
                "join plain arrays"
            )
        head = directive.split(",")[0].strip()
        axis = int(head) if head.lstrip("-").isdigit() else concat.axis
    else:
        axis = concat.axis
    one = (lambda it: concat[directive, it]) if directive is not None else (lambda it: concat[it,])
    lengths = [np.shape(one(it))[axis] for it in items]
    return items, directive, lengths, axis


def index_concatenated_vjp(g, ans, key, concat):
    """Each array or number of ``concat[key]`` gets its block of ``g``, in its own shape; a
    slice (a range) and the directive get nothing."""
    items, directive, lengths, axis = index_concatenated(concat, key)
    g = as_array(g)
    index = [slice(None)] * g.ndim
    out = Sparse()
    start, first = 0, 1 if directive is not None else 0
    for k, (item, n) in enumerate(zip(items, lengths)):
        if not isinstance(item, (slice, str)):
            index[axis] = slice(start, start + n)
            block = g[tuple(index)].reshape(np.shape(item))
            out[first + k] = block if isinstance(item, np.ndarray) else block[()]
        start += n
    return out if isinstance(key, tuple) else out.get(0)


def index_concatenated_jvp(t, key, concat):
    """``concat`` of the items' tangents (``t``, of ``key``'s structure), zeros for the ranges."""
    if not isinstance(key, tuple):
        return concat[np.zeros(np.shape(key)) if t is None else t]
    items, directive, lengths, axis = index_concatenated(concat, key)
    first = 1 if directive is not None else 0
    ts = [t.get(first + k) if isinstance(t, dict) else t[first + k] for k in range(len(items))]
    arrays = [v for v in ts if isinstance(v, (np.ndarray, np.generic))]  # (a Sparse: absent)
    dtype = np.result_type(*arrays) if arrays else np.float64
    parts = [directive] if directive is not None else []
    for k, (item, tk) in enumerate(zip(items, ts)):
        if isinstance(item, slice):
            tk = np.zeros(lengths[k], dtype)
        elif tk is None:
            tk = np.zeros(np.shape(item), dtype)
        parts.append(tk)
    return concat[tuple(parts)]


def r_vjp(g, ans, key):
    return index_concatenated_vjp(g, ans, key, np.r_)


def c_vjp(g, ans, key):
    return index_concatenated_vjp(g, ans, key, np.c_)


def r_jvp(t, ans, key):
    return index_concatenated_jvp(t, key, np.r_).astype(ans.dtype, copy=False)


def c_jvp(t, ans, key):
    return index_concatenated_jvp(t, key, np.c_).astype(ans.dtype, copy=False)


defvjp(r_, r_vjp)
defjvp(r_, r_jvp)
defvjp(c_, c_vjp)
defjvp(c_, c_jvp)
defsubscript(np.r_, r_)
defsubscript(np.c_, c_)


def s_(key):
    """``np.s_[key]``: the index itself."""
    return key


def index_exp(key):
    """``np.index_exp[key]``: the index as a tuple."""
    return key if isinstance(key, tuple) else (key,)


def s_vjp(g, ans, key):
    return g


def s_jvp(t, ans, key):
    return t


def index_exp_vjp(g, ans, key):
    return g if isinstance(key, tuple) else item_adjoint(g, 0, ans)


def index_exp_jvp(t, ans, key):
    return t if isinstance(key, tuple) else (t,)


defvjp(s_, s_vjp)
defjvp(s_, s_jvp)
defvjp(index_exp, index_exp_vjp)
defjvp(index_exp, index_exp_jvp)
defsubscript(np.s_, s_)
defsubscript(np.index_exp, index_exp)


def mgrid(key):
    """``np.mgrid[key]``: a grid of ranges, which has no derivative in their bounds here (a
    differentiable bound is an error, from ``slice``; ``np.linspace`` has one)."""
    return np.mgrid[key]


def ogrid(key):
    """``np.ogrid[key]``."""
    return np.ogrid[key]


def _slice(start, stop=None, step=None):  # the parameters of ``slice`` (for its messages)
    pass


# a grid's index is slices (numpy takes nothing else): a differentiable bound is an error
defnoderivative(mgrid, mgrid)
defnoderivative(ogrid, ogrid)
defsubscript(np.mgrid, mgrid)
defsubscript(np.ogrid, ogrid)
defnoderivative(slice, _slice)  # a slice of np.r_[a:b] has no derivative in its bounds here

# --------------------------------------------------------------------------- an array in parts


def split_vjp(g, ans, ary, indices_or_sections, axis=0):
    """``a, b = np.split(x, 2)``: the parts' adjoints (zeros where none came back), joined."""
    g = as_adjoint(g)
    adjoints = [zeros_like(part) if g.get(i) is None else g[i] for i, part in enumerate(ans)]
    return np.concatenate(adjoints, axis=axis)


defvjp(np.split, split_vjp, DISCRETE)
defvjp(np.array_split, split_vjp, DISCRETE)


def split_jvp(t, ans, ary, indices_or_sections, axis=0):
    return np.split(t, indices_or_sections, axis=axis)


def array_split_jvp(t, ans, ary, indices_or_sections, axis=0):
    return np.array_split(t, indices_or_sections, axis=axis)


defjvp(np.split, split_jvp, DISCRETE)
defjvp(np.array_split, array_split_jvp, DISCRETE)

# --------------------------------------------------------------------------- repeated elements


def tile_vjp(g, ans, A, reps):
    """Each element of ``A`` appears once in every tile: sum the tiles."""
    shape = np.shape(A)
    reps = (reps,) if np.ndim(reps) == 0 else tuple(reps)
    d = max(len(shape), len(reps))
    full = (1,) * (d - len(shape)) + shape
    reps = (1,) * (d - len(reps)) + reps
    interleaved = [n for pair in zip(reps, full) for n in pair]
    return np.reshape(np.sum(np.reshape(g, interleaved), axis=tuple(range(0, 2 * d, 2))), shape)


defvjp(np.tile, tile_vjp, DISCRETE)


def tile_jvp(t, ans, A, reps):
    return np.tile(t, reps)


defjvp(np.tile, tile_jvp, DISCRETE)


def repeat_vjp(g, ans, a, repeats, axis=None):
    """Sum each element's repeats."""
    shape = np.shape(a)
    if axis is None:
        flat = (int(np.prod(shape)),)  # (np.size of a Dask array computes it)
        return np.reshape(repeat_vjp(g, ans, np.reshape(a, flat), repeats, axis=0), shape)
    axis = axis % len(shape)
    n = shape[axis]
    if np.size(repeats) == 1:
        r = int(np.ravel(repeats)[0])
        split = np.reshape(g, shape[:axis] + (n, r) + shape[axis + 1 :])
        return np.sum(split, axis=axis + 1)
    index = (slice(None),) * axis + (np.repeat(np.arange(n), repeats),)
    if foreign(g):  # a Dask or CuPy array: no np.add.at into one
        return scatter_added(g, shape, g.dtype, index)
    out = np.zeros(shape, np.result_type(g))
    np.add.at(out, index, g)
    return out


defvjp(np.repeat, repeat_vjp, DISCRETE)
defmethod("repeat", repeat_vjp, DISCRETE)


def repeat_jvp(t, ans, a, repeats, axis=None):
    return np.repeat(t, repeats, axis=axis)


defjvp(np.repeat, repeat_jvp, DISCRETE)
defjvp_method("repeat", repeat_jvp, DISCRETE)


def pad_vjp(g, ans, array, pad_width, mode="constant", *, constant_values=0):
    """The padding cut off again; for the modes that copy elements (edge, reflect, symmetric,
    wrap), every copy of an element adds to its adjoint."""
    shape = np.shape(array)
    widths = np.broadcast_to(np.asarray(pad_width, dtype=int), (len(shape), 2))
    if mode == "constant":
        inside = tuple(slice(lo, lo + n) for (lo, _), n in zip(widths, shape))
        return as_array(g)[inside]
    if mode not in ("edge", "reflect", "symmetric", "wrap"):
        raise NotImplementedError(f"cpsad: no derivative of np.pad with mode={mode!r}")
    size = int(np.prod(shape))  # (of the shape: np.size of a Dask array computes it)
    source = np.ravel(np.pad(np.reshape(np.arange(size), shape), pad_width, mode))
    g = np.ravel(g)
    if foreign(g):  # Dask, CuPy: the copies summed by one gather (positions found in numpy)
        return np.reshape(scatter_added(g, (size,), g.dtype, source), shape)
    total = np.bincount(source, weights=np.real(g), minlength=size)
    if np.iscomplexobj(g):  # bincount's weights are real numbers
        total = total + 1j * np.bincount(source, weights=np.imag(g), minlength=size)
    return np.reshape(total, shape).astype(np.result_type(g), copy=False)


# constant_values: the padding is made of it, and it has no rule here -- a differentiable one
# is an error (it was a silent zero), as a differentiable pad_width or mode
defvjp(np.pad, pad_vjp, DISCRETE, constant_values=None)


def pad_jvp(t, ans, array, pad_width, mode="constant", *, constant_values=0):
    """The tangent padded the same way, with zeros where the value has constants."""
    if mode not in ("constant", "edge", "reflect", "symmetric", "wrap"):
        raise NotImplementedError(f"cpsad: no derivative of np.pad with mode={mode!r}")
    return np.pad(t, pad_width, mode)


defjvp(np.pad, pad_jvp, DISCRETE)

# --------------------------------------------------------------------------- filled arrays


def full_value(g, ans, shape, fill_value, dtype=None):
    """Every element is the fill value (or its broadcast)."""
    return unbroadcast(g, fill_value)


defvjp(np.full, DISCRETE, full_value)


def full_value_jvp(t, ans, shape, fill_value, dtype=None):
    return np.full(shape, t, dtype=dtype)


defjvp(np.full, DISCRETE, full_value_jvp)


def full_like_value(g, ans, a, fill_value, dtype=None):
    """Only the fill value: ``a`` gives the shape and type, and cannot be differentiated here."""
    return unbroadcast(g, fill_value)


defvjp(np.full_like, DISCRETE, full_like_value)


def full_like_value_jvp(t, ans, a, fill_value, dtype=None):
    return np.full_like(ans, t)


defjvp(np.full_like, DISCRETE, full_like_value_jvp)


def linspace_weights(num, endpoint, like):
    """Where each point lies between ``start`` (0) and ``stop`` (1), as a column for arrays
    (``like`` is the result, or its adjoint or tangent: no points, ``num=0``, included)."""
    t = np.linspace(0.0, 1.0, num, endpoint=endpoint, dtype=np.result_type(like, np.float32))
    return np.reshape(t, (-1,) + (1,) * (np.ndim(like) - 1))


def linspace_start(g, ans, start, stop, num=50, endpoint=True):
    return unbroadcast(np.sum(g * (1 - linspace_weights(num, endpoint, g)), axis=0), start)


def linspace_stop(g, ans, start, stop, num=50, endpoint=True):
    return unbroadcast(np.sum(g * linspace_weights(num, endpoint, g), axis=0), stop)


defvjp(np.linspace, linspace_start, linspace_stop)


def linspace_start_jvp(t, ans, start, stop, num=50, endpoint=True):
    return broadcast_like((1 - linspace_weights(num, endpoint, ans)) * t, ans)


def linspace_stop_jvp(t, ans, start, stop, num=50, endpoint=True):
    return broadcast_like(linspace_weights(num, endpoint, ans) * t, ans)


defjvp(np.linspace, linspace_start_jvp, linspace_stop_jvp)

# ``np.arange(start, stop, step)`` is ``start + i * step`` for ``i < len``: linear in ``start`` and
# ``step``; its length, and so ``stop``, a step. ``np.arange(stop)`` alone counts from 0.


def given(value) -> bool:
    """Whether an optional argument was passed (``value is not None``, which a constant in its
    place would make a comparison with a literal)."""
    return value is not None


defnondiff(given)


def arange_start(g, ans, start, stop=None, step=None, dtype=None):
    """``np.arange(n)`` alone counts from 0: its ``start`` is the stop, a step."""
    return (
        unbroadcast(np.sum(g), start)
        if given(stop) and ans.dtype.kind == "f"
        else zeros_like(start)
    )


def arange_step(g, ans, start, stop=None, step=None, dtype=None):
    return (
        unbroadcast(np.sum(g * np.arange(np.size(ans))), step)
        if ans.dtype.kind == "f"
        else zeros_like(step)
    )


defvjp(np.arange, arange_start, DISCRETE, arange_step)


def arange_start_jvp(t, ans, start, stop=None, step=None, dtype=None):
    return broadcast_like(t, ans) if given(stop) and ans.dtype.kind == "f" else tangent_zeros(ans)


def arange_step_jvp(t, ans, start, stop=None, step=None, dtype=None):
    return (
        t * np.arange(np.size(ans), dtype=ans.dtype)
        if ans.dtype.kind == "f"
        else tangent_zeros(ans)
    )


defjvp(np.arange, arange_start_jvp, DISCRETE, arange_step_jvp)

# --------------------------------------------------------------------------- gathering


def take_vjp(g, ans, a, indices, axis=None):
    """Scatter the adjoint back to the taken elements; repeated indices accumulate."""
    shape = np.shape(a)
    dtype = np.result_type(a, g) if np.issubdtype(np.result_type(a), np.inexact) else float
    if foreign(g) or foreign(a):  # a Dask or CuPy array: no np.add.at into one
        if axis is None:
            return np.reshape(
                scatter_added(g, (np.prod(shape, dtype=int),), dtype, indices, a), shape
            )
        index = (slice(None),) * (axis % len(shape)) + (indices,)
        return scatter_added(g, shape, dtype, index, a)
    if axis is None:
        out = np.zeros(np.size(a), dtype)
        np.add.at(out, indices, g)
        return np.reshape(out, shape)
    out = np.zeros(shape, dtype)
    np.add.at(out, (slice(None),) * (axis % len(shape)) + (indices,), g)
    return out


defvjp(np.take, take_vjp, DISCRETE)
defmethod("take", take_vjp, DISCRETE)


def take_jvp(t, ans, a, indices, axis=None):
    return np.take(t, indices, axis=axis)


defjvp(np.take, take_jvp, DISCRETE)
defjvp_method("take", take_jvp, DISCRETE)


def along_axis(indices, axis, shape):
    """The fancy index that ``np.take_along_axis(x, indices, axis)`` selects with."""
    index = []
    for d, n in enumerate(shape):
        if d == axis:
            index.append(indices)
        else:
            index.append(np.arange(n).reshape((1,) * d + (n,) + (1,) * (len(shape) - d - 1)))
    return tuple(index)


def take_along_axis_vjp(g, ans, arr, indices, axis=-1):
    shape = np.shape(arr)
    if foreign(g) or foreign(arr):  # a Dask or CuPy array: no np.add.at into one
        dtype = np.result_type(arr, g)
        if axis is None:
            flat = (np.prod(shape, dtype=int),)
            return np.reshape(scatter_added(g, flat, dtype, indices, arr), shape)
        return scatter_added(g, shape, dtype, along_axis(indices, axis % len(shape), shape), arr)
    out = np.zeros(np.size(arr) if axis is None else shape, np.result_type(arr, g))
    if axis is None:
        np.add.at(out, indices, g)
        return np.reshape(out, shape)
    np.add.at(out, along_axis(indices, axis % len(shape), shape), g)
    return out


defvjp(np.take_along_axis, take_along_axis_vjp, DISCRETE)


def take_along_axis_jvp(t, ans, arr, indices, axis=-1):
    return np.take_along_axis(t, indices, axis)


defjvp(np.take_along_axis, take_along_axis_jvp, DISCRETE)


def sort_vjp(g, ans, a, axis=-1):
    """Each element's adjoint is the adjoint of the place it was sorted to."""
    if axis is None:
        return np.reshape(sort_vjp(g, ans, np.ravel(a), axis=0), np.shape(a))
    order = np.argsort(a, axis=axis)
    if foreign(g) or foreign(order):  # Dask, CuPy: no write -- each element reads the place it
        ref = g if foreign(g) else order  # was sorted to, by the inverse permutation
        out = np.take_along_axis(
            on_device_of(g, ref), on_device_of(np.argsort(order, axis=axis), ref), axis
        )
        dtype = np.result_type(a, g)
        return out if out.dtype == dtype else out.astype(dtype)
    out = np.zeros(np.shape(a), np.result_type(a, g))
    np.put_along_axis(out, order, g, axis=axis)
    return out


defvjp(np.sort, sort_vjp)


def sort_jvp(t, ans, a, axis=-1):
    """Each place of the result gets the tangent of the element sorted there."""
    return np.take_along_axis(t, np.argsort(a, axis=axis), axis)


defjvp(np.sort, sort_jvp)


def first_occurrences(ar):
    """Where in ``np.ravel(ar)`` each of ``np.unique(ar)``'s values first occurs."""
    return np.unique(ar, return_index=True)[1]


def unique_vjp(g, ans, ar):
    """``np.unique(x)``: each value's adjoint goes to its first occurrence."""
    if foreign(g):  # a Dask or CuPy adjoint: gathered, nothing written into
        size = (int(np.prod(np.shape(ar))),)
        out = scatter_added(g, size, np.result_type(ar, g), first_occurrences(ar))
        return np.reshape(out, np.shape(ar))
    out = np.zeros(np.size(ar), np.result_type(ar, g))
    out[first_occurrences(ar)] = g
    return np.reshape(out, np.shape(ar))


defvjp(np.unique, unique_vjp)


def unique_jvp(t, ans, ar):
    """Each value's tangent is that of its first occurrence."""
    return np.ravel(t)[first_occurrences(ar)]


defjvp(np.unique, unique_jvp)


def bincount_weights(g, ans, x, weights=None, minlength=0):
    """``np.bincount(x, weights)`` sums the weights of each bin: each weight gets its bin's."""
    return g[x]


defvjp(np.bincount, DISCRETE, bincount_weights)


def bincount_weights_jvp(t, ans, x, weights=None, minlength=0):
    return np.bincount(x, weights=t, minlength=minlength)


defjvp(np.bincount, DISCRETE, bincount_weights_jvp)


# --------------------------------------------------------------------------- histograms
#
# ``np.histogram(a, bins)`` counts in steps, but what it returns moves with ``a``: with ``bins`` a
# number (or an estimator's name) and no ``range``, the edges are ``lo + (hi - lo) j / n`` from
# ``lo, hi = a.min(), a.max()``, and ``density=True`` divides by the width ``(hi - lo) / n``; the
# counts are sums of the weights. Edges given (``bins`` an array) or a ``range`` fix the edges:
# then only the weights have a derivative. Ties at the minimum or maximum split its adjoint
# evenly; all values equal (numpy's edges ``a - 0.5 ... a + 0.5``), each moves every edge.


def histogram_spread(a, bins, range):
    """Whether the edges move with ``a``: ``bins`` a number or an estimator, no ``range``."""
    return np.ndim(bins) == 0 and range is None and 0 not in np.shape(a)  # (shape: not computed)


def histogram_places(a, edges):
    """``(bin, inside)`` of each value of ``a``: its bin's index (the last bin holds its right
    edge, as numpy counts) and whether it is counted at all."""
    a = as_array(a)
    n = len(edges) - 1
    inside = (a >= edges[0]) & (a <= edges[-1])
    where = np.clip(np.searchsorted(edges, a, side="right") - 1, 0, n - 1)
    return where, inside


def histogram_ends_adjoint(g_lo, g_hi, a):
    """The adjoint of ``a`` from those of its minimum and maximum (ties split evenly)."""
    a = as_array(a)
    dtype = a.dtype if a.dtype.kind == "f" else np.float64
    lo, hi = np.min(a), np.max(a)
    if foreign(a):  # (Dask, CuPy: lo == hi not read; then every value is a tie at both ends,
        # and the split below is numpy's (g_lo + g_hi) / n)
        at_lo, at_hi = a == lo, a == hi
        return (g_lo * at_lo / np.sum(at_lo) + g_hi * at_hi / np.sum(at_hi)).astype(dtype)
    if lo == hi:
        return np.full(a.shape, (g_lo + g_hi) / a.size, dtype)
    at_lo, at_hi = a == lo, a == hi
    return (g_lo * at_lo / np.sum(at_lo) + g_hi * at_hi / np.sum(at_hi)).astype(dtype)


def histogram_ends_tangent(t, a):
    """The tangents of ``a``'s minimum and maximum (means over ties: the even split's transpose)."""
    a, t = as_array(a), as_array(t)
    lo, hi = np.min(a), np.max(a)
    if foreign(a) or foreign(t):  # (not read: all equal, each mean is of all the tangents)
        at_lo, at_hi = a == lo, a == hi
        return np.sum(t * at_lo) / np.sum(at_lo), np.sum(t * at_hi) / np.sum(at_hi)
    if lo == hi:
        return np.mean(t), np.mean(t)
    return np.mean(t[a == lo]), np.mean(t[a == hi])


def histogram_a(g, ans, a, bins=10, range=None, density=None, weights=None):
    """Through the edges: ``edges_j`` has the adjoint ``1 - j/n`` in ``lo`` and ``j/n`` in
    ``hi``; a density ``c_i n / ((hi - lo) S)`` the adjoint ``density_i / (hi - lo)`` in ``lo``
    and its negative in ``hi``."""
    hist, edges = ans
    if not histogram_spread(a, bins, range):
        return np.zeros(np.shape(a), np.result_type(a, np.float32))
    g_hist, g_edges = item_adjoint(g, 0, hist), item_adjoint(g, 1, edges)
    share = np.arange(len(edges)) / (len(edges) - 1)
    g_lo, g_hi = np.sum(g_edges * (1 - share)), np.sum(g_edges * share)
    lo, hi = np.min(a), np.max(a)
    if density and (foreign(lo) or foreign(hi)):  # (Dask, CuPy: lo != hi not read)
        spread = hi != lo
        c = np.where(spread, np.sum(g_hist * hist) / np.where(spread, hi - lo, 1.0), 0.0)
        g_lo, g_hi = g_lo + c, g_hi - c
    elif density and lo != hi:
        c = np.sum(g_hist * hist) / (hi - lo)
        g_lo, g_hi = g_lo + c, g_hi - c
    return histogram_ends_adjoint(g_lo, g_hi, a)


def histogram_weights(g, ans, a, bins=10, range=None, density=None, weights=None):
    """Each weight counts in its value's bin; a density is ``c_i / (width_i S)``, ``S`` the sum
    of the weights counted."""
    hist, edges = ans
    g_hist = as_array(item_adjoint(g, 0, hist))
    where, inside = histogram_places(a, edges)
    picked = g_hist[where]
    if density:
        total = np.sum(np.where(inside, weights, 0))
        picked = picked / (np.diff(edges)[where] * total) - np.sum(g_hist * hist) / total
    dtype = np.result_type(weights, np.float32)
    return np.where(inside, picked, 0).astype(dtype, copy=False)


defvjp(np.histogram, histogram_a, None, None, DISCRETE, histogram_weights)


def histogram_a_jvp(t, ans, a, bins=10, range=None, density=None, weights=None):
    hist, edges = ans
    d_hist = np.zeros(np.shape(hist), np.result_type(edges, np.float32))
    if not histogram_spread(a, bins, range):
        return d_hist, np.zeros_like(edges)
    d_lo, d_hi = histogram_ends_tangent(t, a)
    share = np.arange(len(edges)) / (len(edges) - 1)
    d_edges = ((1 - share) * d_lo + share * d_hi).astype(edges.dtype)
    lo, hi = np.min(a), np.max(a)
    if density and (foreign(lo) or foreign(hi)):  # (Dask, CuPy: lo != hi not read)
        spread = hi != lo
        d_hist = np.where(spread, -hist * (d_hi - d_lo) / np.where(spread, hi - lo, 1.0), 0.0)
    elif density and lo != hi:
        d_hist = -hist * (d_hi - d_lo) / (hi - lo)
    return d_hist, d_edges


def histogram_weights_jvp(t, ans, a, bins=10, range=None, density=None, weights=None):
    hist, edges = ans
    where, inside = histogram_places(a, edges)
    counted = np.where(inside, t, 0)
    d_hist = np.bincount(np.ravel(where), np.ravel(counted), minlength=len(hist))
    if density:
        total = np.sum(np.where(inside, weights, 0))
        d_hist = d_hist / (np.diff(edges) * total) - hist * np.sum(counted) / total
    dtype = np.result_type(weights, np.float32)
    return d_hist.astype(dtype, copy=False), np.zeros_like(edges)


defjvp(np.histogram, histogram_a_jvp, None, None, DISCRETE, histogram_weights_jvp)


def histogram_bin_edges_a(g, ans, a, bins=10, range=None, weights=None):
    """``np.histogram``'s edges alone."""
    if not histogram_spread(a, bins, range):
        return np.zeros(np.shape(a), np.result_type(a, np.float32))
    share = np.arange(len(ans)) / (len(ans) - 1)
    return histogram_ends_adjoint(np.sum(g * (1 - share)), np.sum(g * share), a)


defvjp(np.histogram_bin_edges, histogram_bin_edges_a, None, None, DISCRETE)


def histogram_bin_edges_a_jvp(t, ans, a, bins=10, range=None, weights=None):
    if not histogram_spread(a, bins, range):
        return np.zeros_like(ans)
    d_lo, d_hi = histogram_ends_tangent(t, a)
    share = np.arange(len(ans)) / (len(ans) - 1)
    return ((1 - share) * d_lo + share * d_hi).astype(ans.dtype)


defjvp(np.histogram_bin_edges, histogram_bin_edges_a_jvp, None, None, DISCRETE)
