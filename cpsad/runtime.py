"""The few helpers emitted code calls by name. Everything else in emitted code is plain numpy.

* ``acc(a, b)``          -- add two adjoints, ``None`` being zero;
* ``zeros_like(x)``      -- the zero adjoint of a value (what a function returns when nothing flowed back);
* ``unbroadcast(g, x)``  -- sum an adjoint down to the shape of ``x``: broadcasting undone in one place;
* ``Sparse``             -- the adjoint of a tuple, list or dict: only the entries that received one;
* ``item_adjoint``, ``getitem_adjoint``, ``unpack_adjoint`` -- adjoints through containers and indexing;
* ``reset``-side helpers used by the API: ``scalar_seed``.
"""

from __future__ import annotations

import dataclasses
import math
import sys
import types
from collections.abc import Callable, Iterable
from typing import Any

import numpy as np

from cpsad.deferred import Deferred

# --------------------------------------------------------------------------- other array libraries
#
# numpy hands its functions and ufuncs to the library of their arguments (NEP 18 and NEP 13): on a
# Dask array `np.tanh(x)` builds a graph, on a CuPy array it runs on the GPU. The helpers below
# keep such an array one -- never `np.asarray` of it (a Dask computation, a copy off the GPU), no
# write into it, no read of its values back into Python -- and make what they create (zeros, a
# seed, an index) with the array's library (`np.zeros_like`, `np.asarray(c, like=x)`).

_FOREIGN: dict = {}  # type -> whether its objects are arrays of another library


def foreign(x) -> bool:
    """Is ``x`` an array of a library other than numpy that numpy dispatches to -- a Dask or CuPy
    array, anything with ``__array_function__`` and a ``shape`` -- rather than an ndarray, a
    numpy scalar or a ``Deferred``?"""
    t = type(x)
    out = _FOREIGN.get(t)
    if out is None:
        out = _FOREIGN[t] = (
            not issubclass(t, (np.ndarray, np.generic, Deferred))
            and hasattr(t, "__array_function__")
            and hasattr(t, "shape")
            and hasattr(t, "dtype")
        )
    return out


def as_array(x):
    """``np.asarray(x)``, except that an array of another library stays what it is."""
    return x if foreign(x) else np.asarray(x)


def maybe_any(mask) -> bool:
    """``np.any(mask)`` where reading it is cheap (numpy values); ``True`` for an array of another
    library, whose value would cost a computation (Dask) or a synchronization (a GPU): for a
    caller that only skips work where it knows nothing is true."""
    if foreign(mask):
        return True
    return bool(np.any(mask))


def on_device_of(c, x):
    """The numpy value ``c`` (an index, a constant) on ``x``'s library: ``np.asarray(c, like=x)``
    for an array of another library (NEP 35), ``c`` itself for anything else."""
    return np.asarray(c, like=x) if foreign(x) else c


# --------------------------------------------------------------------------- adjoint arithmetic


def reads_shape_of(*params: str):
    """Declare that a helper reads only the shape and type of these parameters' arguments: a
    loop's saved frames may hold a stand-in (``like``) for a value used only there."""

    def mark(fn):
        fn.__cpsad_shape_only__ = frozenset(params)
        return fn

    return mark


def like(x):
    """A stand-in for ``x`` where only its shape and type are read (``unbroadcast(g, x)``): for an
    array, a read-only view of one zero broadcast to its shape, which holds no memory, so that a
    loop's saved frames do not keep alive every intermediate array of every iteration. Anything
    else is itself."""
    if type(x) is not np.ndarray:
        return x
    key = (x.shape, x.dtype)
    out = _STAND_INS.get(key)
    if out is None:
        if len(_STAND_INS) >= 256:
            _STAND_INS.clear()
        out = _STAND_INS[key] = np.broadcast_to(np.zeros((), x.dtype), x.shape)
    return out


_STAND_INS: dict = {}  # (shape, dtype) -> the stand-in of an array of that shape and type


def acc(a, b):
    """``a + b`` for adjoints, where ``None`` is zero."""
    if a is None:
        return b
    if b is None:
        return a
    return a + b


def acc_into(a, b):
    """``a + b`` for an accumulator the caller rebinds to the result (the emitted
    ``x_bar = acc_into(x_bar, e)``): a ``Sparse`` or array that the caller's variable alone holds
    is added into in place -- its entries too, where the ``Sparse`` alone holds them. Alone means
    by reference count, as numpy's elision of temporaries decides; anything shared is added out
    of place, as ``acc`` does."""
    if a is None:
        return b
    if b is None:
        return a
    if not _ALONE:  # no reference counts to go by (see _calibrate)
        return a + b
    if type(a) is Sparse and type(b) is Sparse and sys.getrefcount(a) <= _ALONE:
        for k, v in b.items():
            cur = a.get(k)
            if cur is None:
                a[k] = v
            elif v is None:
                continue
            elif _addable_into(cur, v) and sys.getrefcount(cur) <= _ALONE_IN_DICT:
                cur += v
            else:
                a[k] = cur + v
        return a
    if _addable_into(a, b) and sys.getrefcount(a) <= _ALONE:
        a += b
        return a
    return a + b


def split_ties(picked, g, x, y):
    """``picked``, the adjoint ``g`` sent to the operand of maximum or minimum that is the result,
    halved where ``x == y``: a tie splits the adjoint evenly. Only an array with ties is
    rewritten (a ReLU's adjoint is one comparison and one product, not five full arrays)."""
    tie = x == y
    if tie.any() if type(tie) is np.ndarray else maybe_any(tie):  # (Dask, CuPy: not read)
        return np.where(tie, 0.5 * g, picked)
    return picked


def pick_into(g, keep, x, y):
    """``split_ties(g * keep, g, x, y)`` -- a ReLU's adjoint, ``keep`` the mask of where the
    operand is the result -- written into ``g``'s own memory where nothing else holds it, as a
    hand-written pass does ``dz *= z > 0``. The emitted code calls it where ``g`` is read for the
    last time (the release stage); nothing else holding ``g``, nor the array it is a view of, is
    decided by reference counts, as ``acc_into`` decides; a tie, or a product of another shape or
    type, is computed out of place."""
    tie = x == y
    if tie.any() if type(tie) is np.ndarray else maybe_any(tie):  # (Dask, CuPy: not read)
        return np.where(tie, 0.5 * g, g * keep)
    if (
        _ALONE
        and type(g) is np.ndarray
        and sys.getrefcount(g) <= _ALONE
        and g.flags.writeable
        and g.dtype.kind == "f"
        and (type(keep) is not np.ndarray or keep.shape == g.shape)
        and np.result_type(g, keep) == g.dtype
    ):
        base = g.base
        if base is None or (
            type(base) is np.ndarray
            and base.base is None
            and base.flags.writeable
            and sys.getrefcount(base) <= _BASE_ALONE
        ):
            g *= keep
            return g
    return g * keep


def _addable_into(a, b) -> bool:
    """``a += b`` computes ``a + b``: arrays of one shape and type, ``a`` owning its memory."""
    return (
        type(a) is np.ndarray
        and type(b) is np.ndarray
        and a.shape == b.shape
        and a.dtype == b.dtype
        and a.base is None
        and a.flags.writeable
    )


def _count_alone(x):
    return sys.getrefcount(x)


def _count_entry(d):
    cur = d.get(0)
    return sys.getrefcount(cur)


def _count_base(v):
    base = v.base
    return sys.getrefcount(base)


def _calibrate() -> tuple[int, int, int]:
    """The reference counts ``acc_into`` sees for a value one variable holds, and for an entry one
    dict holds, and ``pick_into`` for the array a view alone holds, on this interpreter
    (measured the way they measure them)."""
    if not hasattr(sys, "getrefcount"):  # an interpreter without reference counts: never in place
        return 0, 0, 0
    x = object()
    view = np.zeros(2).reshape(1, 2)
    return _count_alone(x), _count_entry({0: object()}), _count_base(view)


_ALONE, _ALONE_IN_DICT, _BASE_ALONE = _calibrate()


@reads_shape_of("x")
def zeros_like(x):
    """The zero adjoint of ``x``: 0.0 for numbers, zeros for arrays, an empty Sparse for containers,
    and 0.0 for what has no derivative -- never None, which inside emitted code means that no
    adjoint came yet: a function returns its parameters' adjoints, and a caller adds them."""
    if isinstance(x, np.ndarray):
        dtype = x.dtype if np.issubdtype(x.dtype, np.inexact) else np.float64
        return np.zeros(x.shape, dtype)
    if isinstance(x, float):
        return 0.0
    if foreign(x):  # a Dask or CuPy array: zeros of its own library
        return np.zeros_like(x, dtype=x.dtype if x.dtype.kind in "fc" else np.float64)
    if isinstance(x, (bool, int)):
        return 0.0
    if isinstance(x, np.generic):
        return x.dtype.type(0) if np.issubdtype(x.dtype, np.inexact) else 0.0
    if isinstance(x, (tuple, list, dict)):
        return Sparse()
    if isinstance(x, complex):
        return 0j
    if type(x) is Deferred:  # a deferred adjoint, itself differentiated (second order)
        return zeros_like(x.array())
    return 0.0  # a function, a string, None, an object: nothing reaches it, but it is added


@reads_shape_of("x")
def unbroadcast(g, x):
    """Sum the adjoint ``g`` over the axes along which ``x`` was broadcast, to ``x``'s shape.

    Containers' adjoints pass through: a ``Sparse`` (the adjoint of a list, tuple or dict) is
    ``x``'s adjoint already; an array added to a ``Sparse`` ``x`` gives each entry its part. ``g``
    ``None`` (nothing came) gives zeros, ``x`` ``None`` (no differentiable value) ``None``.
    """
    if type(g) is float:
        return g
    if type(g) is np.ndarray and type(x) is np.ndarray:
        shape, gshape = x.shape, g.shape
        if gshape == shape:
            return g  # the common case, without np.shape's two Python-level calls
        extra = len(gshape) - len(shape)
        if extra > 0 and gshape[extra:] == shape:  # a bias: summed over the leading axes only
            return np.add.reduce(g, axis=0 if extra == 1 else tuple(range(extra)))
        if extra >= 0:  # and over the axes where x has length 1 (a reduction with keepdims)
            axes = tuple(range(extra)) + tuple(
                extra + i for i, n in enumerate(shape) if n == 1 and gshape[extra + i] != 1
            )
            out = np.add.reduce(g, axis=axes, keepdims=True)
            if extra:
                out = out.reshape(out.shape[extra:])
            if out.shape == shape:
                return out
    if x is None:  # not a differentiable value
        return None
    if g is None:  # no adjoint (or tangent) came: zeros
        return zeros_like(x)
    if isinstance(g, dict):  # a Sparse: the adjoint of a container, entry by entry
        return g
    if type(g) is _Repeated:  # the adjoint of a repeated list, times the count
        return g.to(x)
    if isinstance(x, dict):  # a Sparse x added to an array (Sparse.__add__): its entries' parts
        return Sparse({k: unbroadcast(g[k], v) for k, v in x.items()})
    shape = np.shape(x)
    if type(g) is Deferred and g.shape == shape:
        return g  # a weight's adjoint summed over its uses: kept deferred
    gshape = np.shape(g)
    if gshape == shape:
        return g
    if not shape:
        return np.sum(g)
    extra = len(gshape) - len(shape)
    if extra >= 0:  # one reduction: over the leading axes x lacks and those where it has length 1
        axes = tuple(range(extra)) + tuple(
            extra + i for i, n in enumerate(shape) if n == 1 and gshape[extra + i] != 1
        )
        if axes:  # (np.sum, not np.add.reduce: a ufunc's reduce is no method of a Dask array)
            g = np.sum(g, axis=axes, keepdims=True)
            if extra:
                g = g.reshape(g.shape[extra:])
    gshape = np.shape(g)
    if gshape != shape and not _unknown_alike(gshape, shape):  # x broadcast against a larger
        g = np.broadcast_to(g, shape)  # adjoint it does not fit: a bug upstream
    return g


def _unknown_alike(a: tuple, b: tuple) -> bool:
    """Shapes that differ only where both have a length Dask does not know yet (NaN, after
    ``x[mask]``): taken to be the same -- no broadcast can be made to an unknown length."""
    return len(a) == len(b) and all(m == n or (m != m and n != n) for m, n in zip(a, b))


# --------------------------------------------------------------------------- tangents (forward mode)


def tangent_zeros(x):
    """The zero tangent of ``x``, of its full structure: zeros for numbers and arrays, the same
    container of zero tangents for a tuple, list or dict, None for what has no derivative."""
    if isinstance(x, np.ndarray):
        return np.zeros(x.shape, x.dtype if x.dtype.kind in "fc" else np.float64)
    if isinstance(x, (float, int)):
        return None if isinstance(x, bool) else 0.0
    if foreign(x):  # a Dask or CuPy array: zeros of its own library
        return np.zeros_like(x, dtype=x.dtype if x.dtype.kind in "fc" else np.float64)
    if isinstance(x, complex):
        return 0j
    if isinstance(x, np.generic):
        return x.dtype.type(0) if x.dtype.kind in "fc" else 0.0
    if isinstance(x, tuple):
        items = [tangent_zeros(v) for v in x]
        return type(x)(*items) if hasattr(x, "_fields") else tuple(items)
    if isinstance(x, list):
        return [tangent_zeros(v) for v in x]
    if isinstance(x, dict):  # a Sparse's tangent is a Sparse, of the same entries
        zeros = {k: tangent_zeros(v) for k, v in x.items()}
        return Sparse(zeros) if isinstance(x, Sparse) else zeros
    if type(x) is Deferred:  # a deferred adjoint, itself differentiated (second order)
        return tangent_zeros(x.array())
    return None  # not a differentiable value: a function, a string, None, an object


def broadcast_like(t, ans):
    """The tangent ``t`` of a parameter that went into the result ``ans`` unchanged (``x + y``,
    ``np.clip``), with the result's shape and float type: broadcast up, never summed down."""
    if type(ans) is Deferred:
        ans = ans.array()
    if type(t) is np.ndarray and type(ans) is np.ndarray:
        if t.shape == ans.shape and t.dtype == ans.dtype:
            return t  # the common case: nothing broadcast, nothing promoted
    elif type(t) is float and type(ans) is float:
        return t
    elif t is None:  # the tangent of None (a missing adjoint): zero
        return tangent_zeros(ans)
    elif isinstance(ans, (dict, list, tuple)):  # a container's tangent (a Sparse's is a Sparse)
        return Sparse(t) if isinstance(ans, Sparse) and type(t) is dict else t
    elif isinstance(t, dict):  # a Sparse added to an array: its entries, in zeros
        out = np.zeros(np.shape(ans), np.result_type(ans))
        for k, v in t.items():
            out[k] = out[k] + v
        return out
    if foreign(t) or foreign(ans):  # a Dask or CuPy array: broadcast, never written into
        kind = _dtype_of(ans)
        dtype = kind if kind.kind in "fc" else np.result_type(_dtype_of(t), 0.0)
        shape = np.shape(ans)
        out = t if np.shape(t) == shape else np.broadcast_to(t, shape)
        if not foreign(out):  # a numpy tangent of an array of another library
            out = np.asarray(out, like=ans)
        return out if out.dtype == dtype else out.astype(dtype)
    kind = np.result_type(ans)
    dtype = kind if np.issubdtype(kind, np.inexact) else np.result_type(t, 0.0)
    if not isinstance(ans, np.ndarray):  # a number
        return t if type(ans) is float else np.asarray(t, dtype)[()]
    out = np.empty(ans.shape, dtype)
    out[...] = t
    return out


def tangent_add(a, b):
    """The sum of two tangents of one value: entry by entry for tuples, lists and dicts (where
    ``+`` would concatenate or fail), None as zero."""
    if a is None:
        return b
    if b is None:
        return a
    if isinstance(a, dict) and isinstance(b, dict):
        out = type(a)(a)
        for k, v in b.items():
            out[k] = tangent_add(out.get(k), v)
        return out
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        items = [tangent_add(x, y) for x, y in zip(a, b)]
        if isinstance(a, list):
            return items
        return type(a)(*items) if hasattr(a, "_fields") else tuple(items)
    parts = struct_parts(a) if type(a) is type(b) else None
    if parts is not None:  # two tangents of a dataclass or a registered pytree: field by field
        keys, children, rebuild = parts
        return rebuild([tangent_add(x, y) for x, y in zip(children, struct_parts(b)[1])])
    return a + b


def tangent_or_zeros(t, x):
    """``t``, or the zero tangent of ``x`` where ``t`` is None (nothing flowed into it)."""
    return tangent_zeros(x) if t is None else t


# --------------------------------------------------------------------------- containers


class Sparse(dict):
    """The adjoint of a tuple, list or dict: ``{index or key: adjoint}`` of the entries that got one.

    Adding two merges them. The API turns it back into the container's own shape, with zeros.
    """

    __slots__ = ()
    __array_ufunc__ = None  # ndarray + Sparse: numpy defers to Sparse.__radd__

    def __add__(self, other):
        if other is None:
            return self
        if type(other) is float and other == 0.0:  # the zero of an absent adjoint (zeros_like(None)
            return self  # in a derivative transformed again): nothing to merge
        if foreign(other):  # an array of another library's rows: dense, of that library
            return rows_of(self, other) + other
        if isinstance(other, (np.ndarray, Deferred)):  # the list also went into an array: dense
            out = np.array(other, dtype=np.result_type(other, float), copy=True)
            for k, v in self.items():
                out[k] = out[k] + v
            return out
        if not isinstance(other, Sparse):
            other = as_adjoint(other)
        out = Sparse(self)
        get = out.get
        for k, v in other.items():
            cur = get(k)
            if cur is None:
                out[k] = v
            elif v is None:
                continue
            elif type(cur) is Deferred is type(v) and cur.shape == v.shape and cur.dtype is v.dtype:
                out[k] = cur.plus(v)  # (a weight's adjoint from two subtrees: the common case)
            else:
                out[k] = cur + v  # acc, inlined
        return out

    __radd__ = __add__

    def __mul__(self, other):
        """``g * n`` in the rule of ``xs * n`` (``xs`` not known to be a list when it was
        transformed): what ``unbroadcast`` folds into ``xs``'s adjoint, or the count's (none)."""
        return _Repeated(self, other)

    __rmul__ = __mul__

    def __repr__(self):
        return f"Sparse({dict.__repr__(self)})"


class _Repeated:
    """The adjoint of ``xs * n`` (a list or tuple repeated), times the other operand -- what
    the product's rule hands ``unbroadcast``: ``xs`` gets the sum of its copies' entries, the
    count ``n`` nothing."""

    __slots__ = ("g", "other")

    def __init__(self, g, other):
        self.g, self.other = g, other

    def to(self, x):
        if isinstance(x, (list, tuple)) and isinstance(self.other, int):
            return repeat_adjoint(self.g, x, self.other)
        if isinstance(x, int) and isinstance(self.other, (list, tuple)):
            return 0.0  # the count: a whole number
        raise TypeError(  # pragma: no cover - a product of a container's adjoint: a bug
            f"cpsad: the adjoint of a container multiplied by a {type(self.other).__name__}"
        )


def rows_of(g, x):
    """The adjoint ``g`` of an array ``x`` of another library, a ``Sparse`` of its rows (``for
    row in x``, ``a, b = x``), as an array of that library: the rows stacked, zeros where none
    came, a number broadcast over its row. Of a numpy ``x`` whose rows' adjoints are of another
    library (a numpy list's entries times Dask data), an array of theirs."""
    ref = x if foreign(x) else next((v for v in g.values() if foreign(v)), None)
    rows = []
    for i in range(len(x)):
        row, v = x[i], g.get(i)
        if v is None:
            v = zeros_like(row)
        elif np.shape(v) != np.shape(row):  # (a number: the same adjoint for each entry)
            v = zeros_like(row) + v
        rows.append(v if ref is None or foreign(v) else on_device_of(np.asarray(v), ref))
    return np.stack(rows) if rows else zeros_like(x)


def as_adjoint(ct):
    """A user-given cotangent in the form emitted code uses: containers become ``Sparse``."""
    if isinstance(ct, Sparse):
        return ct
    if isinstance(ct, (tuple, list)):
        return Sparse({i: as_adjoint(v) for i, v in enumerate(ct) if v is not None})
    if isinstance(ct, dict):
        return Sparse({k: as_adjoint(v) for k, v in ct.items() if v is not None})
    return ct


def as_sequence(x):
    """What a ``for`` loop iterates, as something it can index (a list if it is not one)."""
    if isinstance(x, (list, tuple, np.ndarray, range, str)):
        return x
    return list(x)


def dict_view(d, which: str) -> list:
    """``d.values()``, ``d.items()`` or ``d.keys()`` (``which``) of a differentiable dict, as a
    value: a list of the view's entries, in order -- what iterating it reads. (A view of another
    object is refused where a derivative goes through it: ``dict_view_adjoint``.)"""
    return list(getattr(d, which)())


def _viewed(d, which: str) -> None:
    if not isinstance(d, dict):
        raise TypeError(
            f"`.{which}()` of a `{type(d).__name__}` on a differentiable value: cpsad "
            f"differentiates `.{which}()` of a dict; write the entries' list yourself"
        )


def dict_view_adjoint(g, d, which: str):
    """The adjoint of the dict ``d`` from ``g``, the adjoint of the list ``dict_view(d, which)``
    (of its values, or of its ``(key, value)`` pairs): a ``Sparse`` by key."""
    _viewed(d, which)
    if which == "keys":
        return zeros_like(d)
    entries = {}
    for i, (k, v) in enumerate(d.items()):
        if which == "items":
            entries[k] = item_adjoint(item_adjoint(g, i, (k, v)), 1, v)
        else:
            entries[k] = item_adjoint(g, i, v)
    return Sparse(entries)


def dict_view_tangent(t, d, which: str) -> list:
    """The tangent of the list ``dict_view(d, which)`` from the dict's tangent ``t`` -- and,
    transposed, the adjoint of that list from the dict's adjoint: ``t``'s entries by key, in
    the view's order."""
    _viewed(d, which)
    if which == "keys":
        return tangent_zeros(list(d))
    values = [_entry_or_zeros(t, k, v) for k, v in d.items()]
    return values if which == "values" else [(None, v) for v in values]


def _entry_or_zeros(t, key, value):
    """The entry ``key`` of a dict's tangent or adjoint ``t``, or ``value``'s zero tangent where
    it has none (None for a struct: ``field_tangent`` reads a field's zero from that)."""
    entry = t.get(key) if isinstance(t, dict) else None if t is None else t[key]
    return tangent_zeros(value) if entry is None else entry


def keys_of(mapping) -> list:
    """The keys a ``for`` loop over ``d.items()`` visits, in order (no derivative)."""
    return list(mapping)


def item_adjoint(g, key, x):
    """The adjoint of the entry ``key`` of a container, given the container's adjoint ``g``
    (never None: emitted code adds the adjoints of entries with ``+``, a function's too, 0.0)."""
    if g is None:
        return _zero(x)
    if isinstance(g, dict):  # a Sparse (or the tangent of one): missing is zero
        v = g.get(key)
        return _zero(x) if v is None else v
    if isinstance(g, (int, float)) and g == 0:  # a zero of the adjoints of numbers, met by code
        return _zero(x)  # transformed again (the fourth derivative of an unpacking)
    return g[key]


def _zero(x):
    """``x``'s zero adjoint; None for ``x`` None (no value given: ``item_adjoint(h, i, None)``
    of a caller that asks whether an entry has one)."""
    return None if x is None else zeros_like(x)


def entries_adjoint(g, start, xs):
    """The adjoint of ``xs`` in ``lst.extend(xs)``: the list's entries from ``start`` on."""
    n = len(xs)
    if isinstance(xs, np.ndarray) or foreign(xs):
        rows = [item_adjoint(g, start + i, xs[i]) for i in range(n)]
        return np.stack(rows) if rows else zeros_like(xs)
    if g is None:
        return Sparse()
    if not isinstance(g, dict):  # a dense adjoint of the list (it went into np.sum, say)
        return Sparse({i: g[start + i] for i in range(n)})
    return Sparse({i: g[start + i] for i in range(n) if start + i in g})


def _sequences(x, y) -> bool:
    return isinstance(x, (list, tuple)) and isinstance(y, (list, tuple))


def add_left(c, x, y):
    """The adjoint of ``x`` in ``x + y`` from the sum's ``c``, where both may be lists or tuples:
    its entries of ``c`` when ``+`` joined them (``[a] + [b]``), else ``c`` unbroadcast to ``x``."""
    return entries_adjoint(c, 0, x) if _sequences(x, y) else unbroadcast(c, x)


def add_right(c, x, y):
    """The adjoint of ``y`` in ``x + y``: see ``add_left``."""
    return entries_adjoint(c, len(x), y) if _sequences(x, y) else unbroadcast(c, y)


def add_tangent(v, out, x, y, right: bool):
    """The tangent of ``out = x + y`` from that ``v`` of ``x`` (``right``: of ``y``) where both
    may be sequences: joined, ``v``'s entries in its own place and zeros in the other's."""
    if _sequences(x, y):
        other = [tangent_zeros(e) for e in (x if right else y)]
        entries = other + list(v) if right else list(v) + other
        return entries if isinstance(out, list) else tuple(entries)
    return broadcast_like(v, out)


def repeat_adjoint(c, seq, n):
    """The adjoint of the list or tuple ``seq`` in ``seq * n`` from the result's ``c``: the sum
    of its copies' entries."""
    total = Sparse()
    for copy in range(max(int(n), 0)):
        total = total + entries_adjoint(c, copy * len(seq), seq)
    return total


def field_container_tangent(v, statement: str, line: int):
    """The tangent ``v`` of a container an attribute holds (``a.items``), about to be changed
    in place by ``statement`` in forward mode: ``v`` itself, or a refusal where there is none --
    an object of a plain class has no tangent of its own to keep the container's in."""
    if v is None:
        raise TypeError(
            f"line {line}: `{statement}` changes in place a container that an attribute of an "
            "object holds; cpsad's forward mode keeps no tangent for an object of a plain class "
            "(reverse mode refuses it too: the object shares the container). Build the "
            "container in a variable of the function and store it on the object after (`items = "
            "[]`, `items.append(v)`, ..., `obj.items = items`), or use a dataclass"
        )
    return v


def store_item(container, key, value) -> None:
    """``container[key] = value`` for a dict or list on the differentiated path (not an array:
    changing an array in place would change every alias of it, which no gradient can follow)."""
    if isinstance(container, np.ndarray):
        raise TypeError(
            "assigning into a differentiable numpy array (`y[i] = v`) the function did not make "
            "itself -- a parameter's (the caller's), a view, one another variable or a closure "
            "holds -- is not supported: Python would change it for them too. Store into a copy "
            "(`y = y.copy()` first; a store into an array the function made, `np.zeros(n)`, "
            "`x * 2.0`, is supported), or build a new array (np.where, np.concatenate)"
        )
    container[key] = value


def stored(x, key, v):
    """``x`` with ``x[key] = v``, a new array: how emitted code runs a store into an array the
    function made (``out[1:-1] = x``). Rebinding the name to it is what Python's change in place
    does when nothing else holds the array (``check_in_place`` refuses where something may), and
    what the backward pass reads of the old array stays the old array."""
    if foreign(x) or foreign(v):  # a Dask or CuPy array: a new one, nothing written into
        placed, written = _placed(v, np.shape(x), key, _dtype_of(x), x)
        return np.where(on_device_of(written, placed), placed, x)
    if not isinstance(x, np.ndarray):  # (``np.tanh(2.0)``'s numpy scalar: Python's own error)
        x[key] = v
        return x
    out = np.array(x, copy=True)
    out[key] = v
    return out


def stored_part(c, out, key, value):
    """The adjoint of ``value`` in ``out = stored(x, key, value)`` from the adjoint ``c`` of
    ``out``: ``c`` where ``value`` went, summed back to ``value``'s shape (broadcast into a
    slice). Where an index repeats (``out[[2, 2]] = v``) numpy keeps the last write: only it gets
    the adjoint. Into an array of integers (``value`` truncated) nothing flows."""
    if c is None or not np.issubdtype(np.result_type(out), np.inexact):
        return zeros_like(value)
    if foreign(c):  # a Dask or CuPy array: the parts written last kept by a numpy mask
        part = read_at(c, key)
        if not _basic_index(key):
            positions, owner = _writes(np.shape(out), key)
            last = owner[positions] == np.arange(positions.size).reshape(positions.shape)
            part = part * on_device_of(last, part)
        return unbroadcast(part, value)
    c = np.asarray(c.array() if type(c) is Deferred else c)
    part = c[key]
    if not _basic_index(key):
        owner = np.full(np.shape(out), -1, dtype=np.intp)
        owner[key] = np.arange(np.size(part)).reshape(np.shape(part))
        written = owner >= 0
        flat = np.zeros(np.size(part), dtype=c.dtype)
        flat[owner[written]] = c[written]
        part = flat.reshape(np.shape(part))
    return unbroadcast(part, value)


def placed_part(c, out, key):
    """Zeros like ``out`` with ``c`` at ``key`` (broadcast; the last write where an index
    repeats): the tangent of ``out = stored(x, key, value)`` from ``value``'s tangent ``c``, and
    the transpose of ``stored_part``. Into an array of integers: zeros."""
    if c is None or not np.issubdtype(np.result_type(out), np.inexact):
        return zeros_like(out)
    c = c.array() if type(c) is Deferred else c
    if foreign(c) or foreign(out):  # a Dask or CuPy array: gathered, nothing written into
        return _placed(c, np.shape(out), key, np.result_type(out, c), out)[0]
    z = np.zeros(np.shape(out), dtype=np.result_type(out, c))
    z[key] = c
    return z


def _writes(shape, key):
    """Where ``x[key] = v`` writes into an array of ``shape``: the flat positions of ``v``'s
    elements (of ``x[key]``'s shape), and for each position of ``x`` the element of ``v``
    written there last (numpy keeps the last write), -1 where none is."""
    size = int(np.prod(shape))
    positions = np.arange(size).reshape(shape)[key]
    owner = np.full(size, -1, dtype=np.intp)
    owner[positions.reshape(-1)] = np.arange(positions.size)
    return positions, owner


def _placed(v, shape, key, dtype, like):
    """Zeros of ``shape`` with ``v`` stored at ``key`` (broadcast; the last write where an index
    repeats), on the library of ``v`` or ``like`` -- one gather (``np.take``), no write -- and
    the numpy mask of the positions written."""
    positions, owner = _writes(shape, key)
    if not foreign(v):
        v = np.asarray(np.asarray(v), like=like)
    values = np.broadcast_to(v, positions.shape).reshape(-1).astype(dtype)
    padded = np.concatenate([values, np.zeros_like(values, shape=(1,))])
    written = owner >= 0
    source = np.where(written, owner, positions.size)
    return np.take(padded, on_device_of(source, padded)).reshape(shape), written.reshape(shape)


def _basic_index(key) -> bool:
    """An index of ints, slices, ``None`` and ``...`` alone: each element it selects once."""
    parts = key if isinstance(key, tuple) else (key,)
    return all(
        k is None or k is Ellipsis or isinstance(k, (int, np.integer, slice)) for k in parts
    ) and not any(isinstance(k, bool) for k in parts)


def without(g, key):
    """A container's adjoint with the entry ``key`` removed (it was overwritten): zeros there in a
    dense adjoint (an array, when the list also went into ``np.sum``, say)."""
    if isinstance(g, dict) and key in g:  # a Sparse, or the tangent of one
        out = Sparse(g) if isinstance(g, Sparse) else dict(g)
        del out[key]
        return out
    if type(g) is Deferred:  # (a scattered row's adjoint, not yet summed: summed here)
        g = g.array()
    if foreign(g):  # a Dask or CuPy array: a new one, with zeros there
        return stored(g, key, 0.0)
    if isinstance(g, np.ndarray):
        out = np.array(g, copy=True)
        out[key] = 0
        return out
    return g


def unpack_adjoint(gs, x=None):
    """The adjoint of ``x`` in ``a, b = x`` from those of the targets (``None`` where inactive;
    ``gs`` may be a ``Sparse`` of them): a ``Sparse`` of them, or for an array ``x`` the array of
    its rows' adjoints, zeros where none."""
    entries = gs if isinstance(gs, dict) else dict(enumerate(gs))  # a Sparse: the same
    if isinstance(x, np.ndarray) or foreign(x):
        rows = [zeros_like(x[i]) if entries.get(i) is None else entries[i] for i in range(len(x))]
        return np.stack(rows)
    return Sparse({i: g for i, g in entries.items() if g is not None})


def getitem_adjoint(g, x, index):
    """The adjoint of ``x`` in ``y = x[index]``; repeated integer indices accumulate."""
    if type(x) is dict:  # a parameter dict's entry: the most frequent case, tested first
        return Sparse({index: g})
    if type(index) is int and type(x) is np.ndarray and type(g) is np.ndarray:
        if x.dtype is g.dtype and x.dtype.kind == "f":  # a row of a table (an embedding)
            return Deferred.scatter(x.shape, g.dtype, index, g)
    if g is None:  # nothing flowed into x[index]
        return zeros_like(x)
    if isinstance(x, np.ndarray) and (type(g) in _PLAIN or not foreign(g)):
        dtype = np.result_type(
            x.dtype if np.issubdtype(x.dtype, np.inexact) else np.float64, np.asarray(g).dtype
        )
        if type(index) is int or isinstance(index, np.integer):
            if dtype.kind == "f" and (type(g) is float or type(g) is np.ndarray):
                # a row (or entry) of a table: added in when the adjoint is read, all rows at once
                return Deferred.scatter(x.shape, dtype, index, g)
        if type(g) is np.ndarray and g.dtype == dtype and _whole(index):
            return g.reshape(x.shape)  # x[:, None] and the like: every element, in order
        out = np.zeros(x.shape, dtype)
        if _basic(index):
            out[index] = g
        else:
            np.add.at(out, index, g)
        return out
    if foreign(x) or (foreign(g) and isinstance(x, np.ndarray)):  # Dask, CuPy: nothing written
        dtype = np.result_type(x.dtype if x.dtype.kind in "fc" else np.float64, _dtype_of(g))
        return scatter_added(g, np.shape(x), dtype, index, x)
    if isinstance(x, (list, tuple)) and isinstance(index, slice):
        positions = range(len(x))[index]
        if isinstance(g, dict):
            return Sparse({positions[i]: v for i, v in g.items()})
        return Sparse({positions[i]: v for i, v in enumerate(g)})
    if isinstance(x, (np.generic, float, int)):
        raise TypeError(f"cannot index a scalar of type {type(x).__name__}")
    if isinstance(x, (list, tuple)):  # xs[-1] is the entry len(xs) - 1
        index = range(len(x))[index]
    return Sparse({index: g})


_PLAIN = frozenset({np.ndarray, float, np.float64, np.float32, int})  # no array of another library


def _dtype_of(g):
    """The dtype of an adjoint: an array's own (read, not converted), a number's numpy type."""
    dtype = getattr(g, "dtype", None)
    return dtype if dtype is not None else np.result_type(g)


def scatter_added(g, shape, dtype, index, like=None):
    """Zeros of ``shape`` with ``g`` added at ``index`` -- the adjoint of ``x[index]``, repeated
    positions summed -- on ``g``'s library (Dask, CuPy) with no write into an array: the element
    each position of the result comes from is found in numpy (``index`` is numpy's or Python's:
    the positions ``np.arange(size).reshape(shape)[index]``), and the result is one gather from
    ``g``'s entries and a zero (``np.take``); where positions repeat, the entries of each are
    summed first, as differences of a cumulative sum in position order. ``like``: the array
    ``x`` whose library a numpy ``g`` is moved to."""
    if foreign(like):  # a large array of another library, chunked (Dask): padded where it can be
        padded = _padded(g, shape, dtype, index, like)
        if padded is not None:
            return padded
    if _index_on_device(index):  # computed from values there: x[x > 0], x[np.argmax(x)]
        return _bincounted(g, shape, dtype, index, like)
    size = int(np.prod(shape))
    positions = np.arange(size).reshape(shape)[index]
    if not foreign(g):  # a number or a numpy adjoint of ``like``, an array of another library
        g = on_device_of(np.asarray(g), like)
    g = np.broadcast_to(g, positions.shape).reshape(-1).astype(dtype)
    positions = positions.reshape(-1)
    order = np.argsort(positions, kind="stable")
    ordered = positions[order]
    starts = np.flatnonzero(np.concatenate([[True], ordered[1:] != ordered[:-1]]))
    if len(starts) == len(ordered):  # each position once: the entries themselves
        where, values = positions, g
    else:  # each position's entries, adjacent in position order, summed
        where = ordered[starts]
        ends = np.concatenate([starts[1:], [len(ordered)]]) - 1
        total = np.cumsum(np.take(g, on_device_of(order, g)))
        upto = np.take(total, on_device_of(ends, g))
        values = upto - np.concatenate([np.zeros_like(upto, shape=(1,)), upto[:-1]])
    source = np.full(size, len(where))  # the zero appended after the values
    source[where] = np.arange(len(where))
    padded = np.concatenate([values, np.zeros_like(values, shape=(1,))])
    return np.take(padded, on_device_of(source, padded)).reshape(shape)


def _index_on_device(index) -> bool:
    """Is ``index``, or a part of a tuple index, an array of another library (a mask ``x > 0``
    or the positions ``np.argmax(x)`` of a Dask or CuPy ``x``)?"""
    if type(index) is tuple:
        return any(foreign(i) for i in index)
    return foreign(index)


def _bincounted(g, shape, dtype, index, like):
    """``scatter_added`` of an index that is an array of another library, whose values numpy
    cannot read without a computation or a copy: the flat positions it selects, indexed there
    (``arange(size).reshape(shape)[index]``, as the forward ``x[index]`` indexed ``x``), and
    ``g`` summed into them by ``np.bincount`` (repeated positions add up) -- a sum by position,
    no write."""
    ref = g if foreign(g) else like if foreign(like) else _first_foreign(index)
    size = int(np.prod(shape))
    flat = np.arange(size).reshape(shape)
    if foreign(like) and np.shape(like) == tuple(shape):  # laid out as x (Dask: its chunks,
        # so that the positions x[mask] selects come in the chunks of the adjoint of x[mask])
        positions = (np.zeros_like(like, dtype=np.intp) + on_device_of(flat, like))[index]
    else:
        positions = np.asarray(flat, like=ref)[index]
    if not foreign(g):  # a number or a numpy adjoint
        g = np.asarray(np.asarray(g), like=ref)
    pshape = np.shape(positions)
    if np.shape(g) != pshape and not any(n != n for n in pshape):  # (n != n: Dask's unknown size)
        g = np.broadcast_to(g, pshape)
    positions, g = np.reshape(positions, (-1,)), np.reshape(g, (-1,))
    if np.dtype(dtype).kind == "c":  # (bincount's weights are real)
        out = np.bincount(positions, weights=np.real(g), minlength=size) + 1j * np.bincount(
            positions, weights=np.imag(g), minlength=size
        )
    else:
        out = np.bincount(positions, weights=g, minlength=size)
    out = np.reshape(out, shape)
    return out if out.dtype == dtype else out.astype(dtype)


def _first_foreign(index):
    return next(i for i in index if foreign(i)) if type(index) is tuple else index


def read_at(a, index):
    """``a[index]``; of an array of another library by an index of several integer arrays
    (``c[rows, cols]``, which Dask refuses: "Don't yet support nd fancy indexing"), one
    ``np.take`` from the flattened array at the flat positions numpy computes from the index --
    what the adjoint of a scatter (``getitem_adjoint``'s, a store's) reads."""
    if not foreign(a) or not _several_arrays(index):
        return a[index]
    positions = np.arange(int(np.prod(a.shape))).reshape(a.shape)[index]
    flat = np.reshape(a, (-1,))
    taken = np.take(flat, on_device_of(positions.reshape(-1), flat), axis=0)
    return np.reshape(taken, positions.shape)


def _several_arrays(index) -> bool:
    """Is ``index`` a tuple of two or more integer arrays (numpy's or lists), none on another
    library (whose positions numpy cannot compute without reading it)?"""
    if type(index) is not tuple:
        return False
    arrays = 0
    for i in index:
        if foreign(i):
            return False
        if isinstance(i, (np.ndarray, list)) and np.asarray(i).dtype.kind in "iu":
            arrays += 1
    return arrays > 1


def _padded(g, shape, dtype, index, like):
    """``scatter_added`` of a basic index of unit steps -- ints, slices of step 1, ``None``,
    ``...``: ``x[1:]``, ``x[:, i : i + h]`` -- as ``np.pad`` of ``g`` with its ints' axes put
    back, which Dask runs chunk by chunk; None for any other index. (Into a numpy ``x``, small,
    the gather is fewer tasks: Dask pads in chunks of the adjoint's, element by element.)"""
    index = index if type(index) is tuple else (index,)
    dots = [k for k, i in enumerate(index) if i is Ellipsis]
    if dots:
        at = dots[0]
        named = sum(1 for i in index if i is not None and i is not Ellipsis)
        index = index[:at] + (slice(None),) * (len(shape) - named) + index[at + 1 :]
    keep, ints, widths, axis = [], [], [], 0
    for i in index:
        if i is None:  # an axis of g that x does not have
            keep.append(0)
            continue
        if axis >= len(shape) or isinstance(i, bool):
            return None
        n = shape[axis]
        if isinstance(i, (int, np.integer)):
            j = int(i) + n if i < 0 else int(i)
            ints.append(axis)
            widths.append((j, n - j - 1))
        elif type(i) is slice:
            span = range(n)[i]
            if span.step != 1 or not len(span):
                return None
            keep.append(slice(None))
            widths.append((span.start, n - span.stop))
        else:
            return None
        axis += 1
    widths += [(0, 0)] * (len(shape) - axis)
    if not foreign(g):
        g = on_device_of(np.asarray(g), like)
    if any(i == 0 for i in keep):
        g = g[tuple(keep)]
    if ints:
        g = np.expand_dims(g, tuple(ints))
    g = np.broadcast_to(g, tuple(n - a - b for n, (a, b) in zip(shape, widths)))
    out = np.pad(g, widths) if any(a or b for a, b in widths) else g
    return out if out.dtype == dtype else out.astype(dtype)


def index_step(x, index, like=None):
    """The derivative of ``x[index]`` in a differentiable ``index``: zero -- the zero adjoint of
    ``index``, or with ``like`` the result, the zero tangent of ``like`` -- for an array, a list, a
    tuple or a dict, whose entries the index picks, in steps. An object of a class whose
    ``__getitem__`` is Python code may compute with its index (``P()[t]`` returning ``3 * t``):
    a TypeError, not a zero cpsad cannot vouch for."""
    if type(index) is int and type(x) in _STEPPED:
        return 0.0 if like is None else tangent_zeros(like)  # a loop's counter into a list or array
    if isinstance(getattr(type(x), "__getitem__", None), types.FunctionType):
        name = type(x).__qualname__
        raise TypeError(
            f"cpsad: `{name}(...)[i]` with a differentiable index `i`: `{name}.__getitem__` is "
            "Python code, which a subscript does not differentiate; call it by name, "
            f"`{name}.__getitem__(obj, i)` (or a method of yours), which cpsad transforms like "
            "any function of yours"
        )
    return zeros_like(index) if like is None else tangent_zeros(like)


_STEPPED = frozenset({np.ndarray, list, tuple, dict})


def items_adjoint(x, adjoints: dict):
    """The adjoint of ``x`` from those of several entries read from it, ``{key: adjoint}`` (the
    emitted code gathers the reads of a parameter dict's entries into one): a ``Sparse`` of them
    for a dict, else their ``getitem_adjoint``s summed."""
    if type(x) is dict:
        return Sparse(adjoints)
    out = None
    for key, g in adjoints.items():
        out = acc(out, getitem_adjoint(g, x, key))
    return out


def _whole(index) -> bool:
    """An index that selects every element once, in order, adding unit axes (``x[:, None]``,
    ``x[..., None]``, ``x[None]``): its adjoint is ``g`` reshaped."""
    if type(index) is not tuple:
        index = (index,)
    for i in index:
        if i is None or i is Ellipsis:
            continue
        if type(i) is not slice or i != _ALL:
            return False
    return True


_ALL = slice(None)


def _basic(index) -> bool:
    """Basic indexing (ints, slices, None, Ellipsis) never selects an element twice."""
    if isinstance(index, tuple):
        return all(_basic(i) for i in index)
    return index is None or index is Ellipsis or isinstance(index, (int, np.integer, slice))


# --------------------------------------------------------------------------- default arguments


class _Missing:
    """What a local function's parameter defaults to where its default was computed from the
    values it is differentiated by (``def g(n=x)``): the function reads the value the default
    was when the ``def`` ran from a variable beside it -- a variable the adjoint reaches."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "MISSING"


MISSING = _Missing()


# --------------------------------------------------------------------------- augmented assignment

_IN_PLACE = {
    "+=": "__iadd__",
    "-=": "__isub__",
    "*=": "__imul__",
    "/=": "__itruediv__",
    "//=": "__ifloordiv__",
    "%=": "__imod__",
    "**=": "__ipow__",
    "@=": "__imatmul__",
    "&=": "__iand__",
    "|=": "__ior__",
    "^=": "__ixor__",
    "<<=": "__ilshift__",
    ">>=": "__irshift__",
}


def kept_copy(x):
    """A copy of an array a call of a helper may change in place while the backward pass still
    has to read it (``check_unchanged``); None for anything else."""
    return x.copy() if isinstance(x, np.ndarray) else None


def check_unchanged(x, kept, message: str) -> None:
    """After the call: refuse (``TypeError``: ``message``) if it changed ``x``, of which
    ``kept`` is the copy from before."""
    if kept is not None and not (
        isinstance(x, np.ndarray)
        and x.shape == kept.shape
        and np.array_equal(x, kept, equal_nan=np.issubdtype(kept.dtype, np.inexact))
    ):
        raise TypeError(message)


def check_growable(xs, statement, line):
    """Before ``statement`` (``xs.append(v)``, ``extend``, ``insert``, ``update``) on a
    differentiable container the transformation could not prove a list: the derivative follows
    a list's entries by position and a dict's by key -- not a ``collections.deque``, whose
    ``maxlen`` drops its first entries as it grows, nor a set or a class of yours."""
    if type(xs) is list or type(xs) is dict:
        return
    kind = f"{type(xs).__module__}.{type(xs).__qualname__}".removeprefix("builtins.")
    raise TypeError(
        f"line {line}: `{statement}` grows a {kind} with differentiable values; cpsad follows "
        "the entries of a list (by position) and of a dict (by key) only. Collect them in a "
        "list (`q = []`, then `q[-n:]` for the last n)"
    )


def check_in_place(x, op, statement, line, held, names, *values, within=None):
    """Before ``statement`` (``y op= v`` at the user's ``line``), which cpsad runs as ``y = y op
    v``: where Python would instead change ``x`` (y's value) in place -- its type has the
    in-place operator: an array, a list, not a number -- refuse when someone else would see the
    change: one of ``values`` (the variables ``names``, which may hold ``x`` and are read later)
    holds it, or ``held`` (a holder the emitted code cannot name: a caller) may. Of a name cpsad made
    up, ``names`` has what it stands for (``the loop at line 3``).

    ``within``: for ``y[i] op= v`` the container ``y``, into which the new value is stored --
    an array is changed in place by that store, as in Python; of a list or a dict the entry
    replaced does not count, another entry holding the same value does (``[a] * 2``).
    """
    mutation = op not in _IN_PLACE  # `.append`, `[]=`: a change of x that cpsad makes too
    if type(x) is np.flatiter:  # (``b.flat[i] = v``: a change of the array it iterates)
        x = x.base
    if not mutation and (not hasattr(type(x), _IN_PLACE[op]) or isinstance(within, np.ndarray)):
        return
    holder = held
    for name, value in zip(names, values):
        if _holds(value, x, within, set()):
            holder = name if " " in name else f"`{name}`"  # (or what a made-up name means)
            break
    if holder is None:
        return
    what = "an array" if isinstance(x, np.ndarray) else f"a {type(x).__name__}"
    if mutation:
        raise TypeError(
            f"line {line}: `{statement}` changes {what} that another name shares: {holder} "
            f"holds it too and reads it after; cpsad cannot follow a derivative through the "
            f"change there. Build a new value instead (`xs = xs + [v]`, `d = {{**d, k: v}}`), "
            f"or give {holder} a copy"
        )
    target, _, rhs = statement.partition(f" {op} ")
    raise TypeError(
        f"line {line}: `{statement}` would change in place {what} that another name shares: "
        f"{holder} holds it too, and Python would change it there; cpsad cannot follow a "
        f"derivative through that (it makes a new value, as for numbers). Write `{target} = "
        f"{target} {op[:-1]} {rhs}` to make a new value (then {holder} keeps the old one), or "
        f"give {holder} a copy (`.copy()`)"
    )


# ------------------------------------------------------------------ math as Python computes it
# Staged code (``cpsad.jit``; Flatten respells the calls) calls ``math.sqrt(x)`` as
# ``math_sqrt(x)`` and ``a ** b`` as ``python_pow(a, b)``: Numba's ``math`` and ``**`` of numbers
# give nan or inf where Python's raise (``math.sqrt(-2.0)``: ValueError; ``math.exp(1000.0)``,
# ``1e200 ** 2.0``: OverflowError). In Python these are math's own; Numba's versions
# (``cpsad.jit_runtime``) raise as Python does, and the Python backpropagator then runs and raises.
MATH_RAISES = (
    "sqrt", "log", "log2", "log10", "log1p", "acos", "asin", "acosh", "atanh",
    "sin", "cos", "tan", "exp", "expm1", "cosh", "sinh",
)  # fmt: skip


def _as_python(name: str):
    fn = getattr(math, name)

    def checked(x):
        return fn(x)

    checked.__name__ = checked.__qualname__ = f"math_{name}"
    return checked


CHECKED_MATH = {name: _as_python(name) for name in MATH_RAISES}


def python_pow(a, b):
    """``a ** b`` (staged code's spelling: see ``CHECKED_MATH``)."""
    return a**b


# A staged loop's floats, saved in a buffer made for the iterations it will run, not a list
# (``transforms/stacks.py``; Numba's versions, in ``cpsad.jit_runtime``, take floats only).


def trip_count(start, stop) -> int:
    """How many times ``while i < stop`` runs from ``i = start``, ``i`` stepping by one (what
    ``range(start, stop)`` holds): 0 where ``stop`` is not past ``start`` (nan included)."""
    return math.ceil(stop - start) if stop > start else 0


def float_frames(count):
    """A buffer for ``count`` floats."""
    return np.empty(count)


def push_float(frames, top, value) -> None:
    """``frames[top] = value``: a float a loop saves."""
    frames[top] = value


# A recursive call of staged code (``transforms/recursion.py``) runs with the seed 1.0, its
# adjoints scaled afterwards by the adjoint of its result (Numba's versions in ``cpsad.jit_runtime``).


def recursion_result(value) -> None:
    """Check that a recursive call's result is a number, whose adjoint the seed 1.0 stands for
    (the backpropagator is linear in it): anything else raises TypeError (Numba's version:
    ``Refused``, and the Python backpropagator runs)."""
    if not isinstance(value, (int, float, np.integer, np.floating)):
        raise TypeError(f"a recursive call's result is not a number: {type(value).__name__}")


def expect_number(x) -> None:
    """Check that ``x`` is a number, as the staged code of a function that calls itself was made
    for (Numba's version refuses anything else where it compiles the call)."""
    if not isinstance(x, (int, float, np.integer, np.floating)):
        raise TypeError(f"expected a number, got {type(x).__name__}")


def expect_array(x) -> None:
    """Check that ``x`` is an array (see ``expect_number``)."""
    if not isinstance(x, np.ndarray):
        raise TypeError(f"expected an array, got {type(x).__name__}")


def scaled(adjoint, by):
    """``adjoint * by`` -- entry by entry for a tuple of adjoints; None (zero) stays None, and so
    does anything scaled by None."""
    if adjoint is None or by is None:
        return None
    if isinstance(adjoint, tuple):
        return tuple(scaled(a, by) for a in adjoint)
    return adjoint * by


# Staged code that calls itself (recursion, either mode) runs on the C stack, which Numba does
# not bound: a recursion too deep would overflow it, a crash. So each run checks how much of
# the stack the calls have used since the first (Numba's version, in ``cpsad.jit_runtime``).


def within_stack(stack):
    """``stack``: the address of the first call's frame (0 in the first call itself: the address
    of its own). Numba's version raises ``Refused`` where this frame is more than
    ``jit_runtime.STACK_BUDGET`` bytes from it, and the Python backpropagator runs, under
    Python's limit; Python's has nothing to check (the interpreter counts its frames)."""
    return stack


def log_as(x, like):
    """``np.log(x, dtype=np.result_type(like))`` (staged code's spelling: Numba's ``np.log``
    takes no ``dtype``, and it has no ``np.result_type``; Numba's version, in
    ``cpsad.jit_runtime``, covers float64 results only)."""
    return np.log(x, dtype=np.result_type(like))


def check_in_place_compiled(x, op, held, values, within=None):
    """What staged code (``cpsad.jit``; Flatten rewrites the call) runs where the emitted code
    runs ``check_in_place(x, op, statement, line, held, names, *values, within=within)``: the
    same check, conservatively, with the values as one tuple (Numba's version, in
    ``cpsad.jit_runtime``, raises where ``check_in_place`` might refuse; the Python
    backpropagator then runs, and says why). Never called from Python."""
    raise NotImplementedError("check_in_place_compiled runs in code Numba compiled")


_TooHard = getattr(np, "exceptions", np).TooHardError


def _holds(value, x, within, seen: set) -> bool:
    """Does ``value`` hold ``x`` -- be it, share its memory, or contain such a value?"""
    if within is not None and value is within:  # the container updated: its entry replaced --
        if id(value) in seen:  # the others are, where one holds the same value
            return False
        seen.add(id(value))
        entries = value.values() if isinstance(value, dict) else value
        return sum(_holds(v, x, None, set()) for v in entries) > 1
    if value is x:
        return True
    if isinstance(value, np.ndarray):
        if not isinstance(x, np.ndarray) or not np.may_share_memory(x, value):
            return False
        try:
            return bool(np.shares_memory(x, value, max_work=1000))
        except _TooHard:
            return True
    if id(value) in seen:
        return False
    seen.add(id(value))
    if isinstance(value, (list, tuple, set, frozenset)):
        return any(_holds(v, x, within, seen) for v in value)
    if isinstance(value, dict):
        return any(_holds(v, x, within, seen) for v in value.values())
    d = getattr(value, "__dict__", None)
    if isinstance(d, dict) and not isinstance(value, (type, type(sys))) and not callable(value):
        return any(_holds(v, x, within, seen) for v in d.values())
    return False


# --------------------------------------------------------------------------- functions as values


def keywords_adjoint(by_keyword: dict, kwargs: dict):
    """The adjoint of ``kwargs`` passed on with ``**kwargs`` through a function value: its keys'
    adjoints, from those of the call's keywords (``call_bp_keywords``)."""
    return Sparse({name: by_keyword[name] for name in kwargs})


class _Stop(BaseException):
    """Raised by the continuation of ``call_primal`` to skip the backward pass."""


def call_primal(bp, *args, **kwargs):
    """The plain value of a function, from its backpropagator: run it forward, stop at ``k``.

    ``k`` is marked ``__cpsad_stop__``: a backpropagator of code differentiated again calls
    the continuation it is given through the dispatch (``call_bp(k, after_k, u)``), which
    calls this one, as it has no derivative to give -- it never returns. Each run stops at its
    own ``k`` (one run may be inside another: a closure's value, a closure of a closure's)."""
    box = []

    def k(result):
        box.append(result)
        raise _Stop(box)

    k.__cpsad_stop__ = True
    try:
        bp(k, *args, **kwargs)
    except _Stop as stop:
        if stop.args[0] is not box:
            raise  # (an enclosing run's)
        return box[0]
    raise RuntimeError(
        "a backpropagator returned without calling its continuation"
    )  # pragma: no cover


class Closure:
    """A function defined inside a differentiated one, used as a value.

    Calling it computes the original function. In reverse mode ``.bp`` is its backpropagator,
    which calls made in continuation-passing style use; in forward mode ``.jvp`` is its tangent
    function, ``jvp(*tangents, *args) -> (result, tangent)`` with a tangent for each parameter
    named in ``.active``.
    """

    __slots__ = ("bp", "jvp", "active", "__dict__")  # (a decorator may copy a name onto it)

    def __init__(self, bp=None, jvp=None, active=()):
        self.bp, self.jvp, self.active = bp, jvp, tuple(active)

    def __call__(self, *args, **kwargs):
        if self.bp is not None:
            return call_primal(self.bp, *args, **kwargs)
        return self.jvp(*zero_tangents(self, args, kwargs), *args, **kwargs)[0]

    def __repr__(self):
        fn = self.bp if self.bp is not None else self.jvp
        return f"<cpsad closure {getattr(fn, '__name__', None) or repr(fn)}>"


def zero_tangents(closure, args, kwargs) -> list:
    """Zero tangents for the active parameters of a forward-mode closure called with ``args``
    (None for a parameter left to its default: the function fills it in)."""
    import inspect

    params = list(inspect.signature(closure.jvp).parameters.values())[len(closure.active) :]
    bound = inspect.Signature(params).bind(*args, **kwargs).arguments
    return [tangent_zeros(bound[p]) if p in bound else None for p in closure.active]


# --------------------------------------------------------------------------- the reset side


def scalar_seed(result):
    """The seed adjoint 1 of a real scalar result -- or a clear error for anything else.

    A float (a Python float, a numpy float scalar or 0-d array) is what ``grad`` differentiates,
    and so is an array of one float (shape ``(1,)``, ``(1, 1)``: ``w @ x`` of a row and a column),
    as autograd takes it (JAX refuses it); a Python int is one too (a branch that returns the
    constant ``0``), whose derivative is zero.
    A bool (a comparison), a numpy integer (``np.argmax``, a count) or a complex number has no
    gradient to speak of: asking for one is an error, as in autograd and JAX.

    The seed has the result's type -- ``np.float64(1.0)`` for a numpy float, though it is a
    ``float`` too -- so that the backward pass computes in the forward pass's arithmetic: numpy's
    ``np.sum(x) / 0`` is inf with a warning, Python's ``1.0 / 0`` an exception."""
    if type(result) is float:
        return 1.0
    if type(result) is np.float64:  # (np.mean's, np.sum's: the common case, first)
        return np.float64(1.0)
    if isinstance(result, (np.ndarray, np.generic)):
        if result.ndim == 0 and result.dtype.kind == "f":
            return np.ones((), result.dtype)[()]
        if result.dtype.kind in "biuc":  # a bool, an integer, a complex number: of any shape
            raise TypeError(not_real(result))
        if result.size == 1 and result.dtype.kind == "f":
            return np.ones_like(result)  # shape (1,) or (1, 1): one number, as autograd takes it
        raise TypeError(
            f"grad requires a scalar output, but the function returned an array of shape "
            f"{result.shape}; use cpsad.vjp for a vector-Jacobian product, or reduce the output "
            "(e.g. np.sum) first"
        )
    if foreign(result):  # a Dask or CuPy array: a seed of its own library, nothing computed
        kind = np.dtype(result.dtype).kind
        if kind in "biuc":
            raise TypeError(not_real(result))
        if kind == "f" and (result.ndim == 0 or np.prod(result.shape) == 1):
            return np.ones_like(result)
        raise TypeError(
            f"grad requires a scalar output, but the function returned an array of shape "
            f"{result.shape} ({type(result).__module__}.{type(result).__name__}); use cpsad.vjp "
            "for a vector-Jacobian product, or reduce the output (e.g. np.sum) first"
        )
    if isinstance(result, bool) or isinstance(result, complex):
        raise TypeError(not_real(result))
    if isinstance(result, int):
        return 1.0
    raise TypeError(
        f"grad requires a scalar output, but the function returned a {type(result).__name__}; "
        "use cpsad.vjp for non-scalar outputs"
    )


def not_real(result, api: str = "grad", wanted: str = "a real scalar output") -> str:
    """Why ``result`` -- a bool, an integer or a complex number, or an array of them -- cannot
    be differentiated by ``api``, and what to return instead."""
    a = result if foreign(result) else np.asarray(result)  # (its dtype and shape only)
    kind = "complex" if a.dtype.kind == "c" else "bool" if a.dtype.kind == "b" else "integer"
    if a.ndim == 0:
        what = {"complex": "a complex number", "bool": "a bool", "integer": "an integer"}[kind]
        got = f"{result!r}, {what}"
    else:
        what = {"complex": "complex numbers", "bool": "bools", "integer": "integers"}[kind]
        got = f"an array of shape {a.shape} of {what}"
    head = f"{api} requires {wanted}, but the function returned {got}"
    if kind == "complex":
        return (
            f"{head}; differentiate a real function of it (np.real, np.abs, ...), or use "
            "cpsad.vjp with a complex cotangent"
        )
    if kind == "bool":
        return (
            f"{head}, which has no gradient: a comparison (`x > 0`), `np.all` or `np.any` "
            "is a step, whose derivative is zero wherever it is defined. Return the "
            "float quantity it is computed from (`x`, not `x > 0`), or a smooth stand-in for the "
            "step (`np.tanh(x / width)`)"
        )
    return (
        f"{head} ({a.dtype}: a count, an index, `np.argmax`), which has no gradient; return "
        "the float quantity it is computed from"
    )


# --------------------------------------------------------------------------- structs as pytrees
#
# A namedtuple, a dataclass instance, or an object of a class given to ``register_pytree`` holds
# differentiable values in named fields: an argument of such a type gets a gradient of the same
# type, and a field read in differentiated code (``params.w``) gets the field's adjoint.

_PYTREES: dict = {}  # class -> (flatten, unflatten), from cpsad.register_pytree


def register_pytree(
    cls: type,
    flatten: Callable[[Any], tuple[Iterable, Any]],
    unflatten: Callable[[Any, Iterable], Any],
) -> None:
    """Objects of ``cls`` are pytrees: ``flatten(obj) -> (children, aux)`` and
    ``unflatten(aux, children) -> obj`` (JAX's ``register_pytree_node``). Their children are
    differentiated; a gradient of one is ``unflatten(aux, gradients of the children)``."""
    if not isinstance(cls, type):
        raise TypeError(f"register_pytree takes a class, not {type(cls).__name__}")
    _PYTREES[cls] = (flatten, unflatten)


def struct_parts(x):
    """``(keys, children, rebuild)`` of a dataclass instance or a registered pytree -- the keys
    its adjoint (a ``Sparse``) uses, the values, and ``rebuild(values)``, the same structure
    holding other values -- or None for anything else (a namedtuple is a tuple)."""
    entry = _PYTREES.get(type(x))
    if entry is not None:
        flatten, unflatten = entry
        children, aux = flatten(x)
        children = list(children)
        return list(range(len(children))), children, lambda vals: unflatten(aux, list(vals))
    fields = getattr(type(x), "__dataclass_fields__", None)
    if fields is not None and not isinstance(x, type):
        import dataclasses

        names = [f.name for f in dataclasses.fields(x) if f.init]
        return (
            names,
            [getattr(x, n) for n in names],
            lambda vals: dataclasses.replace(x, **dict(zip(names, vals))),
        )
    return None


def is_struct(x) -> bool:
    """A namedtuple, a dataclass instance or a registered pytree: an object whose fields cpsad
    differentiates."""
    if isinstance(x, tuple):
        return hasattr(x, "_fields")
    return struct_parts(x) is not None


def field(obj, name):
    """``obj.name`` read in differentiated code, for an attribute no rule of an array's names
    (a field of a namedtuple, a dataclass, a registered pytree)."""
    return getattr(obj, name)


def attribute(obj, name):
    """``obj.name`` read in differentiated code where ``obj`` may be an array or a struct (its
    kinds say another object may be there): ``.T`` is a transpose of an array but a field of a
    dataclass with a field ``T`` -- decided when it runs (``is_field``), by the rules."""
    return getattr(obj, name)


def array_attribute(obj, name):
    """``obj.name`` where cpsad read ``.name`` as an array's attribute without derivative
    (``x.shape``, ``x.size``) of a differentiated value that may be another object: refused
    (``TypeError``) where ``obj`` is a struct whose field of that name holds a differentiable
    value -- its derivative would be lost. (Where cpsad knows the struct's class -- an argument, a
    struct made in the function, a class the function's module can reach -- it reads the field
    as one: ``attribute``.)"""
    value = getattr(obj, name)
    if type(obj) is np.ndarray or not is_field(obj, name) or not carries(value):
        return value
    cls = type(obj)
    known = (
        "an argument, a struct made in the function, or a namedtuple or dataclass the "
        "function's module reaches (its globals, the modules of your functions it names)"
    )
    if isinstance(obj, tuple) or dataclasses.is_dataclass(obj):
        fix = (
            f"import `{cls.__name__}` into the function's module (`from {cls.__module__} "
            f"import {cls.__qualname__}`), or name the field otherwise"
        )
    else:
        fix = "name the attribute otherwise"
    raise TypeError(
        f"`.{name}` here is the field `{name}` of a `{cls.__name__}`, which cpsad read as an "
        f"array's `.{name}` (no derivative): the derivative it may carry would be lost. cpsad "
        f"reads such a field as one where it knows the struct can be there: {known}. To "
        f"differentiate through it, {fix}."
    )


def carries(value) -> bool:
    """May ``value`` carry a derivative: a float, a complex number, an array of them, or a
    container holding one?"""
    if isinstance(value, (float, complex)):
        return True
    dtype = getattr(value, "dtype", None)
    if dtype is not None:
        return np.issubdtype(dtype, np.inexact)
    if isinstance(value, (list, tuple)):
        return any(carries(v) for v in value)
    if isinstance(value, dict):
        return any(carries(v) for v in value.values())
    parts = struct_parts(value)
    return parts is not None and any(carries(v) for v in parts[1])


def is_field(obj, name: str) -> bool:
    """Is ``obj.name`` a field of a namedtuple, a dataclass, a registered pytree or a dict whose
    attributes are its entries (what ``field_key`` finds), rather than an array's attribute?"""
    if isinstance(obj, tuple) and hasattr(obj, "_fields"):
        return name in obj._fields
    if isinstance(obj, dict):
        return name in obj and getattr(obj, name, None) is obj[name]
    return not isinstance(obj, (np.ndarray, np.generic)) and struct_parts(obj) is not None


def _attribute_template(name: str, part: str):
    """The adjoint (``part`` "adjoints") or tangent ("tangents") rule of an array's attribute
    ``.name`` and its parameter's name, or (None, None) for one without derivative."""
    from cpsad.rules import core  # (the rules import this module)

    rule = core.ATTRIBUTES.get(name)
    if rule is None:
        return None, None
    param = next(iter(rule.signature.parameters))
    return getattr(rule, part).get(param), param


def attribute_adjoint(g, obj, name):
    """The adjoint of ``obj`` from the adjoint ``g`` of ``attribute(obj, name)``: its field's,
    or the array attribute's own rule (none for ``.shape``)."""
    if is_field(obj, name):
        return field_adjoint(g, obj, name)
    template, param = _attribute_template(name, "adjoints")
    return zeros_like(obj) if template is None else template.fn(g, None, **{param: obj})


def attribute_tangent(t, obj, name):
    """The tangent of ``attribute(obj, name)`` from ``obj``'s tangent ``t``."""
    if is_field(obj, name):
        return field_tangent(t, obj, name)
    template, param = _attribute_template(name, "tangents")
    if template is None:
        return tangent_zeros(getattr(obj, name))
    return template.fn(t, getattr(obj, name), **{param: obj})


def field_key(obj, name: str):
    """The key of the field ``name`` in the adjoint of ``obj``, or a TypeError: the attribute
    of a value that is no pytree has no derivative."""
    if isinstance(obj, tuple) and hasattr(obj, "_fields") and name in obj._fields:
        return obj._fields.index(name)
    if isinstance(obj, dict) and name in obj and getattr(obj, name, None) is obj[name]:
        return name  # a dict whose attributes are its entries (scipy's OdeResult): res.y, res["y"]
    parts = struct_parts(obj)
    if parts is not None:
        keys, children, _ = parts
        if type(obj) not in _PYTREES:
            if name in keys:
                return name
        else:
            value = getattr(obj, name)
            for k, c in zip(keys, children):
                if c is value:
                    return k
    cls = type(obj).__name__
    if isinstance(getattr(type(obj), name, None), property):
        raise TypeError(
            f"the property `.{name}` of a differentiable `{cls}` has no derivative: its getter "
            "runs with the object as data. Write it as a method, called as "
            f"`obj.{name}()` -- cpsad differentiates a struct's methods with respect to its "
            "fields"
        )
    raise TypeError(
        f"the attribute `.{name}` of a differentiable value of type {cls} has no "
        "derivative: cpsad differentiates the fields of namedtuples, dataclasses and classes "
        "registered with cpsad.register_pytree (for a registered class, the attribute must be "
        "one of the children its flatten returns)"
    )


def field_adjoint(c, obj, name):
    """The adjoint of ``obj`` from the adjoint ``c`` of its field ``obj.name``: a ``Sparse``."""
    if c is None:
        return Sparse()
    try:
        return Sparse({field_key(obj, name): c})
    except TypeError:
        if method_read(obj, name):
            return Sparse()
        raise


def method_read(obj, name) -> bool:
    """``obj.name`` a method of a struct read as a value (``fs = [p.energy]``): it carries no
    derivative -- a call of it through the dispatch is refused where its object holds
    differentiable values (``check_callee``), so nothing flows through it unseen."""
    return is_struct(obj) and callable(getattr(type(obj), name, None))


def field_tangent(v, obj, name):
    """The tangent of ``obj.name`` from ``obj``'s tangent ``v`` (of ``obj``'s structure): for a
    struct without one, the field's zero (``tangent_zeros`` of a struct is None: an entry of a
    dict that holds a struct of constants beside differentiated ones) -- emitted code computes
    with the tangent it reads. An object of a plain class has none: None, which
    ``field_container_tangent`` refuses where it matters."""
    if v is None:
        if is_struct(obj):
            return tangent_zeros(getattr(obj, name))
        return None
    try:
        key = field_key(obj, name)
    except TypeError:
        if method_read(obj, name):
            return None  # (a method read as a value: no tangent, see ``method_read``)
        raise
    if isinstance(v, dict):  # a Sparse
        t = v.get(key)
        return tangent_zeros(getattr(obj, name)) if t is None else t
    if isinstance(key, int) and isinstance(v, tuple):
        return v[key]
    return getattr(v, name)


def struct_of(cls, values, names):
    """``cls(**dict(zip(names, values)))``: a namedtuple or a dataclass made in differentiated
    code -- Resolve writes ``P(a, b=c)`` as ``struct_of(P, (a, c), ("a", "b"))``, one value per
    field named, so that the rules below see the fields' values as one tuple."""
    return cls(**dict(zip(names, values)))


def _field_adjoint_of(g, ans, name):
    """The adjoint of the field ``name`` of the struct ``ans`` from its adjoint ``g`` (a
    ``Sparse``, or a struct of its type), or None where it has none -- also where ``g`` is
    ``zeros_like``'s 0.0 of an object (a struct nothing read: the caller's zero adjoint of a
    dataclass it did not use)."""
    if g is None or (type(g) is float and g == 0.0):
        return None
    if isinstance(g, dict) or isinstance(g, tuple):
        return item_adjoint(g, field_key(ans, name), None)
    return getattr(g, name)


def struct_adjoint(c, obj, names):
    """The adjoint of the values ``struct_of`` put into the fields ``names`` of ``obj`` (a
    tuple), from the adjoint ``c`` of ``obj``: a ``Sparse`` by position, of the fields that have
    one."""
    out = Sparse()
    for i, n in enumerate(names):
        v = _field_adjoint_of(c, obj, n)
        if v is not None:
            out[i] = v
    return out


def struct_adjoint_t(h, obj, names):
    """The transpose of ``struct_adjoint`` in ``c``: from the adjoints ``h`` of the fields'
    values, the adjoint of the struct (a ``Sparse`` keyed as ``field_key`` keys it)."""
    out = Sparse()
    for i, n in enumerate(names):
        v = item_adjoint(h, i, None)
        if v is not None:
            out[field_key(obj, n)] = v
    return out


def first_extreme(keys, largest):
    """The index of the first largest (or smallest) of ``keys``: the item ``max(xs, key=f)``
    (``min``) picks, with no derivative."""
    return (max if largest else min)(range(len(keys)), key=keys.__getitem__)


def max_keyed(iterable, key):
    """``max(xs, key=f)`` (Resolve writes it so, and transforms this function like yours): the
    item whose key is the largest -- the first of equal ones -- carrying its own adjoint (``key``
    called once an item, as Python calls it)."""
    items = list(iterable)
    return items[first_extreme([key(item) for item in items], True)]


def min_keyed(iterable, key):
    """``min(xs, key=f)``: as ``max_keyed``, the smallest."""
    items = list(iterable)
    return items[first_extreme([key(item) for item in items], False)]


def extreme_or_default(iterable, default, key, largest):
    """``max(xs, default=d)`` (``largest``; ``min``'s otherwise; ``key=f`` too): Resolve writes
    it so, and transforms this function like yours. The item ``max`` picks, or ``default``
    where ``xs`` is empty."""
    items = list(iterable)
    if not items:
        return default
    if key is None:
        return max(items) if largest else min(items)
    return items[first_extreme([key(item) for item in items], largest)]


# helpers Resolve calls as functions of yours (``keyed_call``): differentiated from their source,
# with no rules of their own
FROM_SOURCE = (max_keyed, min_keyed, extreme_or_default)


def struct_replaced(obj, values, names):
    """``dataclasses.replace(obj, w=a)`` and a namedtuple's ``obj._replace(w=a)`` as emitted code
    runs them (Resolve writes both as ``struct_replaced(obj, (a,), ("w",))``): a struct like
    ``obj`` whose fields ``names`` hold ``values``, its others ``obj``'s."""
    changes = dict(zip(names, values))
    if isinstance(obj, tuple) and hasattr(obj, "_fields"):
        return obj._replace(**changes)
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return dataclasses.replace(obj, **changes)
    return obj._replace(**changes)  # (what Python would run: another class's own _replace)


def fields_without(c, obj, names):
    """The adjoint of the struct ``struct_replaced`` was given, from the adjoint ``c`` of the
    struct it made: ``c`` without the fields it replaced (their values were not ``obj``'s).
    Linear in ``c``, and its own transpose."""
    if not isinstance(c, dict):  # (None, or a zero: no field has an adjoint)
        return c
    drop = {field_key(obj, n) for n in names}
    return Sparse({k: v for k, v in c.items() if k not in drop})


def fields_zeroed(t, obj, names):
    """The tangent of ``struct_replaced``'s result from the tangent ``t`` of ``obj`` (a struct
    like it): ``t`` with the fields it replaced zero. Linear in ``t``."""
    if t is None:
        return None
    zeros = [tangent_or_zeros(None, getattr(obj, n)) for n in names]
    if isinstance(t, tuple) and not hasattr(t, "_fields"):  # (a namedtuple's, as a plain tuple)
        out = list(t)
        for n, z in zip(names, zeros):
            out[obj._fields.index(n)] = z
        return tuple(out)
    return struct_replaced(t, zeros, names)


def replaced_tangent(t, like, names):
    """The tangent of ``struct_replaced``'s result ``like`` from the tangent ``t`` of its values:
    a struct like it holding ``t``'s entries in the fields ``names``, zeros in the others.
    Linear in ``t``; its transpose is ``struct_adjoint``."""
    given = {n: item_adjoint(t, i, None) for i, n in enumerate(names)}
    fields = list(like._fields) if isinstance(like, tuple) else struct_parts(like)[0]
    values = [tangent_or_zeros(given.get(f), getattr(like, f)) for f in fields]
    return struct_replaced(like, values, fields)


def struct_tangent(v, cls, values, names):
    """The tangent of ``struct_of(cls, values, names)`` from the tangent ``v`` of ``values``: a
    struct of ``cls`` holding the fields' tangents -- zeros where ``v`` has none, and for the
    fields the call left to their defaults (a default is a constant: its tangent is zero)."""
    given = {n: item_adjoint(v, i, None) for i, n in enumerate(names)}
    obj = cls(**dict(zip(names, values)))
    fields = cls._fields if isinstance(obj, tuple) else struct_parts(obj)[0]
    return cls(**{f: tangent_or_zeros(given.get(f), getattr(obj, f)) for f in fields})


# --------------------------------------------------------------------------- zip(*rows)


def zipped(seq):
    """``zip(*seq)`` as emitted code runs it: the list of its tuples (``a, b = zip(*pairs)``,
    ``list(zip(*pairs))``), the rows of ``seq`` become its columns."""
    return list(zip(*seq))


def swap_entries(c, like=None):
    """An adjoint of a sequence of sequences with its two levels swapped: entry ``[i][j]`` to
    ``[j][i]`` -- the adjoint of ``seq`` in ``zipped(seq)`` from the result's, and its own
    transpose. A dense adjoint (an array) is swapped in its first two axes. ``like``: the
    sequence whose adjoint this is -- an entry of it that is an array gets a dense adjoint."""
    out = _swapped(c)
    if like is None or not isinstance(out, Sparse):
        return out
    for j, row in list(out.items()):
        target = like[j]
        if isinstance(row, Sparse) and foreign(target):  # (Dask, CuPy: stacked, not written)
            out[j] = rows_of(row, target)
        elif isinstance(target, np.ndarray) and isinstance(row, Sparse):
            dense = zeros_like(target)
            for i, v in row.items():
                dense[i] = v
            out[j] = dense
    return out


def _swapped(c):
    if c is None:
        return None
    if type(c) is Deferred:
        c = c.array()
    if isinstance(c, np.ndarray) or foreign(c):
        return np.swapaxes(c, 0, 1)
    rows = c.items() if isinstance(c, dict) else enumerate(c)
    out = Sparse()
    for i, row in rows:
        if row is None:
            continue
        if type(row) is Deferred:
            row = row.array()
        entries = row.items() if isinstance(row, dict) else enumerate(row)
        for j, v in entries:
            if v is not None:
                out.setdefault(j, Sparse())[i] = v
    return out
