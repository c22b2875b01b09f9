"""Numba's versions of the runtime helpers the staged backpropagators call (``cpsad.jit``).

Each is registered with ``numba.extending.overload`` for the Python helper of ``cpsad.runtime``,
so the staged code calls the same names as the emitted code, and Numba, typing a call of one,
compiles the version here for the argument types. Each covers what the helper does for floats,
integers and float arrays -- the scope of ``cpsad.jit``; for anything else it returns no
implementation, Numba's typing fails, and ``cpsad.jit`` falls back to the Python
backpropagator, which has the helpers' full behaviour. ``tests/test_jit_runtime.py`` runs each against
the Python helper.

The same holds for the composites the staged code calls where their value is not differentiated
(``matrix_power``, ``rot90``), and for the numpy functions it calls that Numba lacks or takes
fewer arguments of (``np.stack`` and ``np.concatenate`` of a list, ``np.flip`` along an axis,
``np.diagonal``): each computes numpy's result for what it covers. Where numpy (or the helper)
would raise, the compiled code raises ``Refused``, and the Python backpropagator runs.
"""

from __future__ import annotations

import math

import numpy as np
from llvmlite import ir
from numba import literal_unroll, types
from numba.core import cgutils
from numba.extending import intrinsic, overload, register_jitable

from cpsad import runtime
from cpsad.rules import composite, containers, joining, linalg, operators, reductions, shape


def _is_none(t) -> bool:
    return t is None or isinstance(t, (types.NoneType, types.Omitted)) or t is types.none


def _number(t) -> bool:
    return isinstance(t, (types.Float, types.Integer, types.Boolean))


def _array(t) -> bool:
    return isinstance(t, types.Array)


def _float_array(t) -> bool:
    return _array(t) and isinstance(t.dtype, types.Float)


def _integer(t) -> bool:
    """An integer argument, or a parameter left at its integer default."""
    return isinstance(t, (int, types.Integer, types.Omitted))


@register_jitable
def _axis(axis, ndim):
    """``axis`` of an array of ``ndim`` axes, from 0 (out of range: ``Refused``, where numpy
    raises, and the Python backpropagator does)."""
    if axis < -ndim or axis >= ndim:
        raise Refused()
    return axis % ndim


@overload(runtime.acc)
@overload(runtime.acc_into)
def _acc(a, b):
    if _is_none(a):
        return lambda a, b: b
    if _is_none(b):
        return lambda a, b: a
    if isinstance(a, types.BaseTuple) or isinstance(b, types.BaseTuple):
        return _acc_tuples(a, b)
    if isinstance(a, types.Optional) or isinstance(b, types.Optional):

        def acc_optional(a, b):
            if a is None:
                return b
            if b is None:
                return a
            return a + b

        return acc_optional
    return lambda a, b: a + b


def _acc_tuples(a, b):
    """The adjoints of a tuple, added entry by entry (``Sparse`` adds them so in Python): Numba's
    ``a + b`` of two tuples is their concatenation -- ``(g1, None) + (g2, None)`` four entries,
    the first of which alone was read back (a captured pair unpacked in a helper called twice
    had half its gradient). Tuples of two lengths, or a tuple and anything else: not typed."""
    if not (isinstance(a, types.BaseTuple) and isinstance(b, types.BaseTuple)):
        return None
    if len(a.types) != len(b.types):
        return None
    n = len(a.types)
    entries = "".join(f"runtime.acc(a[{i}], b[{i}]), " for i in range(n))
    namespace = {"runtime": runtime}
    exec(f"def acc_tuples(a, b):\n    return ({entries})\n", namespace)  # noqa: S102
    return namespace["acc_tuples"]


@overload(runtime.like)
def _like(x):
    return lambda x: x


@overload(runtime.as_array)
def _as_array(x):
    """``np.asarray``: an array as it is, a number as a 0-d array (no array of another
    library reaches compiled code)."""
    if _array(x):
        return lambda x: x
    if _number(x):
        return lambda x: np.asarray(x)
    return None


@overload(runtime.zeros_like)
def _zeros_like(x):
    if _array(x):
        return lambda x: np.zeros(x.shape)
    if _number(x) or _is_none(x):  # (None, what has no derivative: 0.0, as in Python)
        return lambda x: 0.0
    if isinstance(x, types.Optional) and _number(x.type):  # (a number or None: 0.0 either way)
        return lambda x: 0.0
    if isinstance(x, types.List) and x.dtype == types.float64:
        # (for the Python one's empty Sparse: zeros, whose entry i ``item_adjoint`` reads)
        return lambda x: np.zeros(len(x))
    if isinstance(x, types.BaseTuple):
        # (the Python one's empty Sparse: a None for each entry, which ``item_adjoint`` reads as
        # the entry's zero and ``acc`` adds as nothing)
        entries = "None, " * len(x.types)
        namespace = {}
        exec(f"def zeros_of_tuple(x):\n    return ({entries})\n", namespace)  # noqa: S102
        return namespace["zeros_of_tuple"]
    return None


@register_jitable
def _total(g):
    """``g`` summed to the one element of an operand of shape (1,)."""
    out = np.empty(1)
    out[0] = g.sum()
    return out


@overload(runtime.unbroadcast)
def _unbroadcast(g, x):
    if _is_none(x):
        return lambda g, x: None
    if _number(g) and (_number(x) or _array(x)):
        return lambda g, x: g
    if _array(g) and _number(x):
        return lambda g, x: g.sum()
    if _array(g) and _array(x):
        if g.ndim == x.ndim == 1:

            def unbroadcast_1(g, x):
                if g.shape == x.shape:
                    return g
                return _total(g)

            return unbroadcast_1
        if g.ndim == 2 and x.ndim == 1:

            def unbroadcast_21(g, x):
                if x.shape[0] == g.shape[1]:
                    return g.sum(axis=0)
                return _total(g)

            return unbroadcast_21
        if g.ndim == 2 and x.ndim == 2:

            def unbroadcast_22(g, x):
                if g.shape == x.shape:
                    return g
                if x.shape[0] == 1 and x.shape[1] == 1:
                    out = np.empty((1, 1))
                    out[0, 0] = g.sum()
                    return out
                if x.shape[0] == 1:
                    return g.sum(axis=0).reshape((1, g.shape[1]))
                return g.sum(axis=1).reshape((g.shape[0], 1))

            return unbroadcast_22
    if isinstance(g, types.Optional):

        def unbroadcast_optional(g, x):
            if g is None:
                return runtime.zeros_like(x)
            return _unbroadcast_present(g, x)

        return unbroadcast_optional
    return None


def _unbroadcast_present(g, x):
    """``unbroadcast`` of an adjoint known not to be None (compiled code only)."""
    raise NotImplementedError("called by compiled code only")


@overload(_unbroadcast_present)
def _unbroadcast_present_impl(g, x):
    # (an Optional converts to its type here, with a check: calling ``unbroadcast`` again on
    # the Optional made Numba's typing recurse until the stack ran out)
    if isinstance(g, types.Optional):
        return None
    return lambda g, x: runtime.unbroadcast(g, x)


@overload(runtime.add_left)
def _add_left(c, x, y):
    if not isinstance(x, types.BaseTuple):
        return lambda c, x, y: runtime.unbroadcast(c, x)
    return None


@overload(runtime.add_right)
def _add_right(c, x, y):
    if not isinstance(x, types.BaseTuple):
        return lambda c, x, y: runtime.unbroadcast(c, y)
    return None


@overload(runtime.item_adjoint, prefer_literal=True)
def _item_adjoint(g, key, x):
    if isinstance(g, types.BaseTuple) and isinstance(key, types.IntegerLiteral):
        i = key.literal_value
        if not -len(g.types) <= i < len(g.types):
            return None
        if _is_none(g.types[i]):  # (an entry none flowed into: the Python one's zero of x)
            return lambda g, key, x: runtime.zeros_like(x)
        return lambda g, key, x: g[i]
    if _array(g) or isinstance(g, types.List):
        return lambda g, key, x: g[key]
    return None


@overload(runtime.unpack_adjoint)
def _unpack_adjoint(gs, x=None):
    if isinstance(gs, types.BaseTuple) and isinstance(x, types.BaseTuple):
        return lambda gs, x=None: gs
    return None


@overload(reductions.expand)
def _expand(g, x, axis=None, keepdims=False):
    """``expand``: the adjoint of a reduction of ``x`` -- over all of it, or over one axis of a
    vector or matrix -- broadcast back to ``x``'s shape, a new float64 array."""
    if _number(g) and _array(x) and _is_none(axis):
        return lambda g, x, axis=None, keepdims=False: np.full(x.shape, g)
    if _number(g) and _number(x) and _is_none(axis):
        return lambda g, x, axis=None, keepdims=False: g
    if not (isinstance(axis, types.Integer) and _array(x) and x.ndim in (1, 2)):
        return None
    if isinstance(g, types.Float) and x.ndim == 1:

        def expand_vector(g, x, axis=None, keepdims=False):
            _axis(axis, 1)
            return np.full(x.shape, g)

        return expand_vector
    if _float_array(g) and g.ndim == 1 and x.ndim == 2:
        return _expand_rows
    if _float_array(g) and g.ndim == x.ndim:

        def expand_kept(g, x, axis=None, keepdims=False):
            if not keepdims:
                raise Refused()
            _axis(axis, x.ndim)
            return np.broadcast_to(g, x.shape).copy()

        return expand_kept
    return None


def _expand_rows(g, x, axis=None, keepdims=False):
    """``expand`` of the adjoint of a matrix reduced over one axis: a row (``axis=0``) or a
    column (1), repeated."""
    ax = _axis(axis, 2)
    if keepdims or g.shape[0] != x.shape[1 - ax]:
        raise Refused()  # (numpy's reshape raises: the Python one runs, and does)
    out = np.empty(x.shape)
    for i in range(x.shape[0]):
        if ax == 0:
            out[i, :] = g
        else:
            out[i, :] = g[i]
    return out


@overload(operators.power_slope)
def _power_slope(x, y):
    if _number(x) and _number(y):

        def power_slope_numbers(x, y):
            if y == 0:
                return 0.0
            return y * x ** (y - 1)

        return power_slope_numbers
    if _array(x) and _number(y):

        def power_slope_array(x, y):
            if y == 0:
                return np.zeros(x.shape)
            return y * x ** (y - 1)

        return power_slope_array
    return None


@overload(runtime.getitem_adjoint)
def _getitem_adjoint(g, x, index):
    """The adjoint of ``x`` in ``y = x[index]``, for an array of float64 or integers and a basic
    index (integers and slices, alone or in a tuple: each element selected once): ``g`` written
    where ``y`` came from, into zeros of float64 (as the helper's dtype for these)."""
    if not (_array(x) and (x.dtype == types.float64 or isinstance(x.dtype, types.Integer))):
        return None
    if not _basic(index):
        return None
    if not (isinstance(g, (types.Float, types.Integer)) or _float_array(g)):
        return None

    def getitem_adjoint_basic(g, x, index):
        out = np.zeros(x.shape)
        out[index] = g
        return out

    return getitem_adjoint_basic


@overload(runtime.as_sequence)
def _as_sequence(x):
    """What a loop indexes: an array or tuple itself, a range as the array of its integers
    (Numba cannot index a range)."""
    if isinstance(x, types.RangeType):
        return lambda x: np.arange(x.start, x.stop, x.step)
    if isinstance(x, (types.Array, types.BaseTuple)):
        return lambda x: x
    return None


def _matrix_or_vector(*ts) -> bool:
    return all(_array(t) and t.ndim in (1, 2) and isinstance(t.dtype, types.Float) for t in ts)


@overload(operators.matmul_x)
@overload(linalg.dot_a)
def _matmul_x(g, ans, x, y):
    """The adjoint of ``x`` in ``x @ y`` (``np.dot(x, y)``), for vectors and matrices."""
    if not _matrix_or_vector(x, y):
        return None
    if x.ndim == 2 and y.ndim == 2:
        return lambda g, ans, x, y: g @ y.T
    if x.ndim == 2:
        return lambda g, ans, x, y: np.outer(g, y)
    if y.ndim == 2:
        return lambda g, ans, x, y: y @ g
    return lambda g, ans, x, y: g * y


@overload(operators.matmul_y)
@overload(linalg.dot_b)
def _matmul_y(g, ans, x, y):
    """The adjoint of ``y`` in ``x @ y`` (``np.dot(x, y)``), for vectors and matrices."""
    if not _matrix_or_vector(x, y):
        return None
    if x.ndim == 2 and y.ndim == 2:
        return lambda g, ans, x, y: x.T @ g
    if x.ndim == 2:
        return lambda g, ans, x, y: g @ x
    if y.ndim == 2:
        return lambda g, ans, x, y: np.outer(x, g)
    return lambda g, ans, x, y: g * x


@overload(np.flip)
def _np_flip_axis(m, axis=None):
    """``np.flip(m, axis)`` (Numba's takes no axis): all axes for None, else one of a vector's
    or a matrix's; the same view numpy returns."""
    if not _array(m) or axis is None:  # (``np.flip(m)``: Numba's own)
        return None
    if isinstance(axis, types.NoneType):
        return lambda m, axis=None: np.flip(m)
    if not (isinstance(axis, types.Integer) and m.ndim in (1, 2)):
        return None
    if m.ndim == 1:

        def flip_vector(m, axis=None):
            _axis(axis, 1)
            return m[::-1]

        return flip_vector

    def flip_matrix(m, axis=None):
        if _axis(axis, 2) == 0:
            return m[::-1]
        return m[:, ::-1]

    return flip_matrix


@overload(reductions.count)
def _count(x, axis=None):
    if _array(x) and _is_none(axis):
        return lambda x, axis=None: x.size
    if _array(x) and isinstance(axis, types.Integer):
        return lambda x, axis=None: x.shape[axis]
    return None


@overload(shape.untranspose)
def _untranspose(g, axes=None):
    if _array(g) and (_is_none(axes) or (isinstance(axes, types.BaseTuple) and not len(axes))):
        return lambda g, axes=None: np.transpose(g)
    return None


def _diagonal_args(offset, axis1, axis2) -> bool:
    return all(_integer(t) for t in (offset, axis1, axis2))


@register_jitable
def _diagonal_at(a, offset, axis1, axis2, i):
    """Row and column of entry ``i`` of a matrix's diagonal (``offset`` above the main one, in
    the order ``axis1``, ``axis2``; the same axis twice: ``Refused``, where numpy raises)."""
    first, second = _axis(axis1, 2), _axis(axis2, 2)
    if first == second:
        raise Refused()
    r, c = i + max(-offset, 0), i + max(offset, 0)
    return (r, c) if first == 0 else (c, r)


@register_jitable
def _diagonal_length(a, offset, axis1, axis2):
    rows, cols = (a.shape[0], a.shape[1]) if _axis(axis1, 2) == 0 else (a.shape[1], a.shape[0])
    return max(0, min(rows + min(offset, 0), cols - max(offset, 0)))


@overload(np.diagonal)
def _np_diagonal(a, offset=0, axis1=0, axis2=1):
    """``np.diagonal`` of a float64 matrix: its entries (numpy's is a read-only view: a copy
    reads the same)."""
    if not (_array(a) and a.ndim == 2 and a.dtype == types.float64):
        return None
    if not _diagonal_args(offset, axis1, axis2):
        return None

    def diagonal_matrix(a, offset=0, axis1=0, axis2=1):
        out = np.empty(_diagonal_length(a, offset, axis1, axis2))
        for i in range(out.shape[0]):
            out[i] = a[_diagonal_at(a, offset, axis1, axis2, i)]
        return out

    return diagonal_matrix


@overload(linalg.diagonal_vjp)
def _diagonal_vjp(g, ans, a, offset=0, axis1=0, axis2=1):
    """``diagonal_vjp`` of a matrix: ``g`` put on its diagonal, in zeros. Of a vector (``np.diag``
    of one made a matrix; the staged code calls ``np.diag`` there, and this in the other arm of
    its test of ``np.ndim``, which Numba types too): ``Refused`` if it ever runs."""
    if _float_array(g) and g.ndim == 2 and _array(a) and a.ndim == 1:

        def diagonal_vjp_vector(g, ans, a, offset=0, axis1=0, axis2=1):
            if a.ndim == 1:
                raise Refused()
            return np.zeros(a.shape)  # (never: the type of np.diag's arm)

        return diagonal_vjp_vector
    if not (_float_array(g) and g.ndim == 1 and _array(a) and a.ndim == 2):
        return None
    if not (a.dtype == types.float64 and _diagonal_args(offset, axis1, axis2)):
        return None

    def diagonal_vjp_matrix(g, ans, a, offset=0, axis1=0, axis2=1):
        out = np.zeros(a.shape)
        for i in range(g.shape[0]):
            out[_diagonal_at(a, offset, axis1, axis2, i)] = g[i]
        return out

    return diagonal_vjp_matrix


@overload(linalg.mT)
def _mT(x):
    """The transpose of a matrix (``np.linalg.inv``'s adjoint, ``-mT(ans) @ g @ mT(ans)``); a
    stack of matrices falls back."""
    if _array(x) and x.ndim == 2:
        return lambda x: x.T
    return None


@overload(linalg.trace_vjp)
def _trace_vjp(g, ans, a, offset=0, axis1=0, axis2=1):
    if (
        _number(g)
        and _array(a)
        and a.ndim == 2
        and all(isinstance(t, (int, types.Integer, types.Omitted)) for t in (offset, axis1, axis2))
    ):

        def trace_vjp_matrix(g, ans, a, offset=0, axis1=0, axis2=1):
            if axis1 % 2 == axis2 % 2:
                raise ValueError("axis1 and axis2 cannot be the same")
            eye = np.eye(a.shape[axis1 % 2], a.shape[axis2 % 2], offset) * g
            return eye if axis1 % 2 == 0 else eye.T

        return trace_vjp_matrix
    return None


class Refused(Exception):
    """Raised by compiled code where the Python helper might refuse (``check_in_place``), or
    numpy raise (an axis out of range, parts of different shapes): ``staging.invoke`` then runs
    the Python backpropagator, which decides and says why."""


@overload(runtime.check_in_place_compiled, prefer_literal=True)
def _check_in_place_compiled(x, op, held, values, within=None):
    """Numbers have no in-place operators, and an array stored into an array is copied: nothing
    to check (as ``check_in_place``). For an array ``x``: where a value read later may share its
    memory, or an unnamed holder may, raise ``Refused`` -- conservatively: overlapping bounds."""
    if not isinstance(op, types.StringLiteral) or op.literal_value not in runtime._IN_PLACE:
        return None  # (a mutation: `.append`, `[]=` -- not in staged code's scope)
    if _number(x) or _array(within):
        return lambda x, op, held, values, within=None: None
    if not (_array(x) and isinstance(values, types.BaseTuple)):
        return None
    if not all(_array(v) or _number(v) for v in values.types):
        return None
    if not values.types and _is_none(held):
        return lambda x, op, held, values, within=None: None
    if not _is_none(held):

        def refuse(x, op, held, values, within=None):
            raise Refused()

        return refuse

    def check_array(x, op, held, values, within=None):
        lo, hi = _bounds(x)
        for v in literal_unroll(values):
            if _overlaps(v, lo, hi):
                raise Refused()

    return check_array


@register_jitable
def _bounds(a):
    lo = hi = a.ctypes.data
    for n, s in zip(a.shape, a.strides):
        if n == 0:
            return 0, 0
        reach = (n - 1) * s
        if reach < 0:
            lo += reach
        else:
            hi += reach
    return lo, hi + a.itemsize


def _overlaps(v, lo, hi):
    """Whether ``v``'s memory may overlap the bounds ``[lo, hi)`` (compiled code only)."""
    raise NotImplementedError("called by compiled code only")


@overload(_overlaps)
def _overlaps_impl(v, lo, hi):
    if _array(v):

        def overlaps_array(v, lo, hi):
            a, b = _bounds(v)
            return a < hi and lo < b and a != b

        return overlaps_array
    return lambda v, lo, hi: False


@overload(runtime.split_ties)
def _split_ties(picked, g, x, y):
    """The adjoint of the operand of maximum/minimum that is the result, halved at ties: of
    numbers, or arrays of the result's rank (one of them may be a number)."""
    if _number(x) and _number(y):
        return lambda picked, g, x, y: 0.5 * g if x == y else picked
    if not (_array(picked) and _array(g) and picked.ndim == g.ndim and (_array(x) or _array(y))):
        return None
    if all(_number(o) or (_array(o) and o.ndim == picked.ndim) for o in (x, y)):

        def split_ties_arrays(picked, g, x, y):
            tie = x == y
            if not tie.any():
                return picked
            return np.where(tie, 0.5 * g, picked)

        return split_ties_arrays
    return None


def _basic(key) -> bool:
    """An integer or a slice, or a tuple of them: ``x[key] = v`` writes each element once."""
    if isinstance(key, types.BaseTuple):
        return all(_basic(k) for k in key.types)
    return isinstance(key, (types.Integer, types.SliceType))


@overload(runtime.stored)
def _stored(x, key, v):
    """``x`` with ``x[key] = v``, a new array."""
    if _array(x) and isinstance(x.dtype, types.Float) and _basic(key) and (_array(v) or _number(v)):

        def stored_basic(x, key, v):
            out = x.copy()
            out[key] = v
            return out

        return stored_basic
    return None


@overload(runtime.stored_part)
def _stored_part(c, out, key, value):
    """The adjoint of ``value`` in ``out = stored(x, key, value)``: ``c`` where it went."""
    if not (_array(out) and isinstance(out.dtype, types.Float) and _basic(key)):
        return None
    if _is_none(c):
        return lambda c, out, key, value: runtime.zeros_like(value)
    if _array(c):
        return lambda c, out, key, value: runtime.unbroadcast(c[key], value)
    return None


@overload(containers.max_builtin)
def _max_builtin(g, ans, *items):
    """``max(a, b)`` or ``min(a, b)`` of two numbers: ``g`` to the first one equal to the result
    (a NaN result, found by identity there: ``Refused``, left to the Python one)."""
    if not (isinstance(g, types.Float) and len(items) == 2 and all(_number(t) for t in items)):
        return None

    def max_builtin_two(g, ans, *items):
        if ans != ans:
            raise Refused()
        if items[0] == ans:
            return g, 0.0
        return 0.0, g

    return max_builtin_two


# ---------------------------------------------------------------------- parts joined (joining.py)


def _parts(arrays) -> int:
    """For a list (Numba's own np.stack takes tuples) of float64 numbers, vectors or matrices:
    their number of axes, 0, 1 or 2; else -1."""
    if not isinstance(arrays, types.List):
        return -1
    if arrays.dtype == types.float64:
        return 0
    if _array(arrays.dtype) and arrays.dtype.dtype == types.float64 and arrays.dtype.ndim <= 2:
        return arrays.dtype.ndim
    return -1


@register_jitable
def _stacked(arrays):
    """The parts, of one shape, along a new first axis (else ``Refused``, where numpy raises)."""
    if len(arrays) == 0:
        raise Refused()
    shape = np.shape(arrays[0])
    out = np.empty((len(arrays),) + shape)
    for i in range(len(arrays)):
        if np.shape(arrays[i]) != shape:
            raise Refused()
        out[i] = arrays[i]
    return out


@overload(joining.parts)
def _parts_adjoint(g, x):
    """``parts`` of a list of float64 numbers (``np.array(lst)``): ``g`` itself, whose entry i
    is part i's adjoint (``item_adjoint`` reads it, as it reads the Python one's ``Sparse``); of
    a float64 array (``np.asarray(a)``), ``g`` itself."""
    if _parts(x) == 0 and _float_array(g) and g.ndim == 1:
        return lambda g, x: g
    if _array(x) and x.dtype == types.float64 and _float_array(g) and g.dtype == types.float64:
        return lambda g, x: g  # (of an array: its own adjoint, as float64)
    return None


@overload(np.stack)
def _np_stack_list(arrays, axis=0):
    """``np.stack`` of a list of float64 numbers, vectors or matrices: numpy's array, C-ordered."""
    if _parts(arrays) < 0 or not _integer(axis):
        return None
    if _parts(arrays) == 0:

        def stack_numbers(arrays, axis=0):
            _axis(axis, 1)
            return _stacked(arrays)

        return stack_numbers
    if _parts(arrays) == 1:

        def stack_vectors(arrays, axis=0):
            out = _stacked(arrays)
            return out if _axis(axis, 2) == 0 else out.T.copy()

        return stack_vectors

    def stack_matrices(arrays, axis=0):
        out = _stacked(arrays)
        ax = _axis(axis, 3)
        if ax == 0:
            return out
        return np.transpose(out, (1, 0, 2) if ax == 1 else (1, 2, 0)).copy()

    return stack_matrices


@overload(joining.stack_vjp)
def _stack_vjp(g, ans, arrays, axis=0):
    """``stack_vjp`` for a list of float64 numbers, vectors or matrices: the parts' adjoints as
    the rows of an array (``item_adjoint`` reads row ``i``, as it reads the Python one's
    ``Sparse``)."""
    if _parts(arrays) < 0 or not (_float_array(g) and g.ndim == _parts(arrays) + 1):
        return None
    if not _integer(axis):
        return None
    if g.ndim == 1:

        def stack_vjp_numbers(g, ans, arrays, axis=0):
            _axis(axis, 1)
            return np.ascontiguousarray(g)

        return stack_vjp_numbers
    if g.ndim == 2:

        def stack_vjp_vectors(g, ans, arrays, axis=0):
            if _axis(axis, 2) == 0:
                return np.ascontiguousarray(g)
            return np.ascontiguousarray(g.T)

        return stack_vjp_vectors

    def stack_vjp_matrices(g, ans, arrays, axis=0):
        ax = _axis(axis, 3)
        if ax == 0:
            return np.ascontiguousarray(g)
        return np.ascontiguousarray(np.transpose(g, (1, 0, 2) if ax == 1 else (2, 0, 1)))

    return stack_vjp_matrices


@overload(np.concatenate)
def _np_concatenate_list(arrays, axis=0):
    """``np.concatenate`` of a list of float64 vectors or matrices, along an axis they have."""
    if _parts(arrays) not in (1, 2) or not _integer(axis):
        return None
    if _parts(arrays) == 1:

        def concatenate_vectors(arrays, axis=0):
            _axis(axis, 1)
            out = np.empty(sum([x.shape[0] for x in arrays]))
            start = 0
            for x in arrays:
                out[start : start + x.shape[0]] = x
                start += x.shape[0]
            return out

        return concatenate_vectors

    def concatenate_matrices(arrays, axis=0):
        ax = _axis(axis, 2)
        if len(arrays) == 0:
            raise Refused()
        other = arrays[0].shape[1 - ax]
        n = 0
        for x in arrays:
            if x.shape[1 - ax] != other:
                raise Refused()  # (numpy raises: the Python one runs, and does)
            n += x.shape[ax]
        out = np.empty((n, other) if ax == 0 else (other, n))
        start = 0
        for x in arrays:
            if ax == 0:
                out[start : start + x.shape[0], :] = x
            else:
                out[:, start : start + x.shape[1]] = x
            start += x.shape[ax]
        return out

    return concatenate_matrices


@overload(joining.concatenate_vjp)
def _concatenate_vjp(g, ans, arrays, axis=0):
    """``concatenate_vjp`` for a list of float64 vectors or matrices: the parts' adjoints, each
    ``g``'s stretch along ``axis``, in a list (``item_adjoint`` reads entry i, as it reads the
    Python one's ``Sparse``)."""
    if _parts(arrays) not in (1, 2) or not (_float_array(g) and g.ndim == _parts(arrays)):
        return None
    if not _integer(axis):
        return None

    def concatenate_vjp_list(g, ans, arrays, axis=0):
        ax = _axis(axis, g.ndim)
        out = []
        start = 0
        for x in arrays:
            n = x.shape[ax]
            out.append(_stretch(g, ax, start, start + n))
            start += n
        return out

    return concatenate_vjp_list


def _stretch(g, ax, start, stop):
    """``g[start:stop]`` along axis ``ax``, C-ordered (compiled code only)."""
    raise NotImplementedError("called by compiled code only")


@overload(_stretch)
def _stretch_impl(g, ax, start, stop):
    if g.ndim == 1:
        return lambda g, ax, start, stop: np.ascontiguousarray(g[start:stop])

    def stretch_matrix(g, ax, start, stop):
        if ax == 0:
            return np.ascontiguousarray(g[start:stop, :])
        return np.ascontiguousarray(g[:, start:stop])

    return stretch_matrix


# ---------------------------------------------------------------------- composites (composite.py)
# (called as they are where their value is not differentiated)


@overload(composite.matrix_power)
def _matrix_power(a, n):
    """The composite ``matrix_power`` of a float64 matrix, ``n >= 0``: its products, in its order
    (a matrix not square, or ``n < 0``, the inverse's: ``Refused``, left to the Python one)."""
    if not (_array(a) and a.ndim == 2 and a.dtype == types.float64):
        return None
    if not isinstance(n, types.Integer):
        return None

    def matrix_power_matrix(a, n):
        if a.shape[0] != a.shape[1] or n < 0:
            raise Refused()
        if n == 0:
            return np.eye(a.shape[0])
        if n == 1:
            return a.copy()
        if n == 2:
            return a @ a
        if n == 3:
            return (a @ a) @ a
        z = np.ascontiguousarray(a)  # (squares of a, times the result where n has a bit)
        result = z
        found = False
        while True:
            if n % 2:
                result = result @ z if found else z
                found = True
            n //= 2
            if n == 0:
                return result
            z = z @ z

    return matrix_power_matrix


@overload(composite.rot90)
def _rot90(m, k=1, axes=(0, 1)):
    """The composite ``rot90`` of a matrix in its first two axes: the same view, flips and a
    transpose."""
    if not (_array(m) and m.ndim == 2 and _integer(k)):
        return None
    if not (isinstance(axes, types.Omitted) or axes == (0, 1)):  # (left out: its default)
        return None

    def rot90_matrix(m, k=1, axes=(0, 1)):
        turns = k % 4
        if turns == 0:
            return m[:]
        if turns == 1:
            return m[:, ::-1].T
        if turns == 2:
            return m[::-1, ::-1]
        return m.T[:, ::-1]

    return rot90_matrix


# ---------------------------------------------------------------------- forward mode (jvp)


@overload(runtime.tangent_zeros)
def _tangent_zeros(x):
    """``zeros_like``'s, where they agree (a bool has no tangent; an array of integers is left
    to the Python one)."""
    if isinstance(x, (types.Boolean, types.List)) or (
        _array(x) and not isinstance(x.dtype, types.Float)
    ):
        return None
    return _zeros_like(x)


@overload(runtime.tangent_add)
def _tangent_add(a, b):
    """The sum of two tangents of one value, None as zero (numbers and arrays)."""
    if _is_none(a):
        return lambda a, b: b
    if _is_none(b):
        return lambda a, b: a
    if isinstance(a, types.Optional) or isinstance(b, types.Optional):
        return None
    if (_number(a) or _array(a)) and (_number(b) or _array(b)):
        return lambda a, b: a + b
    return None


@overload(runtime.broadcast_like)
def _broadcast_like(t, ans):
    """The tangent ``t`` of what went into ``ans`` unchanged, with ``ans``'s shape."""
    if _is_none(t):
        return lambda t, ans: runtime.tangent_zeros(ans)
    if _number(t) and _number(ans):
        return lambda t, ans: float(t)
    if _number(t) and _array(ans):
        return lambda t, ans: np.full(ans.shape, float(t))
    if _array(t) and _array(ans) and t.ndim == ans.ndim:

        def broadcast_same_rank(t, ans):
            if t.shape == ans.shape:
                return t
            return np.broadcast_to(t, ans.shape).copy()

        return broadcast_same_rank
    if _array(t) and _array(ans) and t.ndim < ans.ndim:
        return lambda t, ans: np.broadcast_to(t, ans.shape).copy()
    return None


@overload(runtime.add_tangent)
def _add_tangent(v, out, x, y, right):
    """``out = x + y`` of numbers or arrays: ``v`` broadcast like ``out``."""
    if isinstance(x, types.BaseTuple) or isinstance(y, types.BaseTuple):
        return None
    return lambda v, out, x, y, right: runtime.broadcast_like(v, out)


# ---------------------------------------------------------------------- more helpers


@overload(np.ndim)
def _np_ndim(a):
    """``np.ndim`` (Numba has none): an array's number of axes, a number's 0."""
    if _array(a):
        n = a.ndim
        return lambda a: n
    if _number(a):
        return lambda a: 0
    return None


@overload(np.mean, prefer_literal=True)
def _np_mean_axis(a, axis=None, dtype=None, out=None, keepdims=False):
    """``np.mean`` of a float64 vector or matrix over all of it or over one axis (Numba's takes
    no axis): the sum over the axis by the count; ``keepdims=True`` a literal: the dimensions
    kept (``_kept_reduction``); not known when Numba compiles and true: ``Refused``."""
    if axis is None and keepdims is False:  # (``np.mean(a)``: Numba's own)
        return None
    if not (_float_array(a) and a.dtype == types.float64 and a.ndim in (1, 2)):
        return None
    if not (_is_none(dtype) and _is_none(out)):
        return None
    if _literal_bool(keepdims) is True:
        return _kept_reduction(a, axis, mean=True)
    if not (keepdims is False or isinstance(keepdims, types.Boolean)):
        return None
    if _is_none(axis):

        def mean_all(a, axis=None, dtype=None, out=None, keepdims=False):
            if keepdims:
                raise Refused()
            return np.mean(a)

        return mean_all
    if not isinstance(axis, types.Integer):
        return None
    if a.ndim == 1:

        def mean_vector(a, axis=None, dtype=None, out=None, keepdims=False):
            _axis(axis, 1)
            if keepdims:
                raise Refused()
            return np.mean(a)

        return mean_vector

    def mean_matrix(a, axis=None, dtype=None, out=None, keepdims=False):
        ax = _axis(axis, 2)
        if keepdims:
            raise Refused()
        return np.sum(a, axis=ax) / a.shape[ax]

    return mean_matrix


@overload(linalg.norm_vjp)
def _norm_vjp(g, ans, x, ord=None, axis=None, keepdims=False):
    """``norm_vjp`` of the 2-norm of a whole float64 array (``ord`` and ``axis`` None: the
    vector norm of its elements): ``g / norm * x``, 0 where the norm is 0."""
    if not (_float_array(x) and x.dtype == types.float64 and isinstance(g, types.Float)):
        return None
    if not (_is_none(ord) and _is_none(axis) and isinstance(keepdims, (bool, types.Omitted))):
        return None

    def norm_vjp_whole(g, ans, x, ord=None, axis=None, keepdims=False):
        return g / (ans if ans != 0 else 1.0) * x

    return norm_vjp_whole


@overload(runtime.items_adjoint)
def _items_adjoint(x, adjoints):
    """``items_adjoint`` of a float64 or integer array, or a tuple of numbers, and a dict (made by
    the staged code) of integer keys (rows or entries) to float adjoints: each added where it was
    read, in the dict's order, into zeros of float64 (an index out of range, or a row's adjoint
    of another shape: ``Refused``)."""
    if not isinstance(adjoints, types.DictType) or not isinstance(adjoints.key_type, types.Integer):
        return None
    g = adjoints.value_type
    if isinstance(x, types.BaseTuple) and all(
        isinstance(t, (types.Float, types.Integer)) for t in x.types
    ):
        if not isinstance(g, types.Float):
            return None

        def items_adjoint_tuple(x, adjoints):
            # (the Python one's Sparse of the entries' adjoints: ``item_adjoint`` reads entry
            # i, 0.0 where it has none, as the Python one reads the Sparse's, or its zero)
            out = np.zeros(len(x))
            for key, v in adjoints.items():
                out[_axis(key, len(x))] += v
            return out

        return items_adjoint_tuple
    if not (_array(x) and (x.dtype == types.float64 or isinstance(x.dtype, types.Integer))):
        return None
    if x.ndim == 1 and isinstance(g, types.Float):

        def items_adjoint_entries(x, adjoints):
            out = np.zeros(x.shape)
            for key, v in adjoints.items():
                out[_axis(key, x.shape[0])] += v
            return out

        return items_adjoint_entries
    if x.ndim >= 2 and _float_array(g) and g.ndim == x.ndim - 1:

        def items_adjoint_rows(x, adjoints):
            out = np.zeros(x.shape)
            for key, v in adjoints.items():
                if v.shape != x.shape[1:]:
                    raise Refused()
                out[_axis(key, x.shape[0])] += v
            return out

        return items_adjoint_rows
    return None


@overload(runtime.without)
def _without(g, key):
    """``without`` of an array's adjoint (the staged code stores into arrays only: ``stored``):
    a copy, zeros at ``key`` (an integer or a slice, or a tuple of them)."""
    if _is_none(g):
        return lambda g, key: None
    if _float_array(g) and _basic(key):

        def without_basic(g, key):
            out = g.copy()
            out[key] = 0
            return out

        return without_basic
    return None


@overload(np.roll)
def _np_roll_axis(a, shift, axis=None):
    """``np.roll(a, shift, axis)`` (Numba's takes no axis) of a vector or matrix, by an integer:
    Numba's own for None (the flattened array rolled), else along one axis."""
    if not _array(a) or axis is None:  # (``np.roll(a, shift)``: Numba's own)
        return None
    if not (isinstance(shift, types.Integer) and a.ndim in (1, 2)):
        return None
    if isinstance(axis, types.NoneType):
        return lambda a, shift, axis=None: np.roll(a, shift)
    if not isinstance(axis, types.Integer):
        return None
    if a.ndim == 1:

        def roll_vector(a, shift, axis=None):
            _axis(axis, 1)
            return np.roll(a, shift)

        return roll_vector

    def roll_matrix(a, shift, axis=None):
        ax = _axis(axis, 2)
        out = np.empty_like(a)
        n = a.shape[ax]
        if n == 0:
            return out
        for i in range(n):
            j = (i + shift) % n
            if ax == 0:
                out[j, :] = a[i, :]
            else:
                out[:, j] = a[:, i]
        return out

    return roll_matrix


@register_jitable
def _from_end(g, out):
    """``out[i]``: the sum of ``g[i:]``, added from the end (as numpy's reversed ``cumsum``)."""
    n = g.shape[0]
    for i in range(n - 1, -1, -1):
        out[i] = g[i] if i == n - 1 else out[i + 1] + g[i]


@overload(reductions.cumsum)
def _cumsum_vjp(g, ans, a, axis=None):
    """``cumsum``'s adjoint for a vector or matrix ``a``: the partial sums of ``g`` from the end
    -- of all of it, flattened (``axis`` None), or along one axis."""
    if not (_float_array(g) and g.dtype == types.float64 and _array(a) and a.ndim in (1, 2)):
        return None
    if _is_none(axis) and g.ndim == 1:

        def cumsum_vjp_flat(g, ans, a, axis=None):
            if g.shape[0] != a.size:
                raise Refused()
            out = np.empty(g.shape[0])
            _from_end(g, out)
            return out.reshape(a.shape)

        return cumsum_vjp_flat
    if not (isinstance(axis, types.Integer) and g.ndim == a.ndim):
        return None
    if g.ndim == 1:

        def cumsum_vjp_vector(g, ans, a, axis=None):
            _axis(axis, 1)
            if g.shape != a.shape:
                raise Refused()
            out = np.empty(g.shape[0])
            _from_end(g, out)
            return out

        return cumsum_vjp_vector

    def cumsum_vjp_matrix(g, ans, a, axis=None):
        ax = _axis(axis, 2)
        if g.shape != a.shape:
            raise Refused()
        out = np.empty(g.shape)
        if ax == 0:
            for j in range(g.shape[1]):
                _from_end(g[:, j], out[:, j])
        else:
            for i in range(g.shape[0]):
                _from_end(g[i], out[i])
        return out

    return cumsum_vjp_matrix


@overload(reductions.prod_vjp)
def _prod_vjp(g, ans, a, axis=None, keepdims=False):
    """``prod_vjp`` of the product of a whole float64 vector or matrix (``axis`` None): ``g``
    times the product over the others, as the helper computes it -- ``g * ans / a`` where no
    element is 0, else the products before and after each element, multiplied."""
    if not (_float_array(a) and a.dtype == types.float64 and a.ndim in (1, 2)):
        return None
    if not (isinstance(g, types.Float) and _is_none(axis) and isinstance(keepdims, bool)):
        return None

    def prod_vjp_whole(g, ans, a, axis=None, keepdims=False):
        if not (a == 0).any():
            return (g * ans) / a
        flat = a.ravel()
        n = flat.shape[0]
        left = np.empty(n)
        right = np.empty(n)
        left[0] = 1.0
        right[n - 1] = 1.0
        for i in range(1, n):
            left[i] = flat[0] if i == 1 else left[i - 1] * flat[i - 1]
        for i in range(n - 2, -1, -1):
            right[i] = flat[n - 1] if i == n - 2 else right[i + 1] * flat[i + 1]
        return (g * (left * right)).reshape(a.shape)

    return prod_vjp_whole


@overload(composite.cross)
def _cross(a, b, axisa=-1, axisb=-1, axisc=-1, axis=None):
    """The composite ``cross`` of two float64 3-vectors, its axes left out (where its value is
    not differentiated; other lengths: ``Refused``, left to the Python one)."""
    if not (_float_array(a) and _float_array(b) and a.ndim == 1 and b.ndim == 1):
        return None
    if not (a.dtype == b.dtype == types.float64):
        return None
    if not all(isinstance(t, int) for t in (axisa, axisb, axisc)) or axis is not None:
        return None  # (given: not left out)

    def cross_vectors(a, b, axisa=-1, axisb=-1, axisc=-1, axis=None):
        if a.shape[0] != 3 or b.shape[0] != 3:
            raise Refused()
        out = np.empty(3)
        out[0] = a[1] * b[2] - a[2] * b[1]
        out[1] = a[2] * b[0] - a[0] * b[2]
        out[2] = a[0] * b[1] - a[1] * b[0]
        return out

    return cross_vectors


@overload(np.squeeze)
def _np_squeeze(a, axis=None):
    """``np.squeeze`` of a matrix or a stack of matrices along one axis (an integer) of length 1:
    a view, as numpy's, the axis indexed at 0 (not of length 1, or out of range: ``Refused``,
    where numpy raises). Without an axis the result's rank depends on the shape: not covered."""
    if not (_array(a) and a.ndim in (2, 3) and isinstance(axis, types.Integer)):
        return None
    if a.ndim == 2:

        def squeeze_matrix(a, axis=None):
            ax = _axis(axis, 2)
            if a.shape[ax] != 1:
                raise Refused()
            if ax == 0:
                return a[0, :]
            return a[:, 0]

        return squeeze_matrix

    def squeeze_stack(a, axis=None):
        ax = _axis(axis, 3)
        if a.shape[ax] != 1:
            raise Refused()
        if ax == 0:
            return a[0, :, :]
        if ax == 1:
            return a[:, 0, :]
        return a[:, :, 0]

    return squeeze_stack


@overload(composite.average)
def _average(a, axis=None, weights=None, returned=False, keepdims=False):
    """The composite ``average`` of a float64 vector or matrix, over all of it (``axis``,
    ``returned`` and ``keepdims`` left out), where its value is not differentiated: the mean, or
    ``sum(a * w) / sum(w)`` for weights of ``a``'s shape (weights of another shape, or summing
    to 0: ``Refused``, left to the Python one, which decides)."""
    if not (_float_array(a) and a.dtype == types.float64 and a.ndim in (1, 2)):
        return None
    if not (axis is None and returned is False and keepdims is False):
        return None  # (given: not left out)
    if weights is None:
        return lambda a, axis=None, weights=None, returned=False, keepdims=False: np.mean(a)
    if not (_float_array(weights) and weights.dtype == types.float64 and weights.ndim == a.ndim):
        return None

    def average_weighted(a, axis=None, weights=None, returned=False, keepdims=False):
        if weights.shape != a.shape:
            raise Refused()
        scl = np.sum(weights)
        if scl == 0.0:
            raise Refused()
        return np.sum(a * weights) / scl

    return average_weighted


@overload(np.vstack)
def _np_vstack_list(tup):
    """``np.vstack`` of a list (Numba's takes tuples) of float64 vectors -- rows, of one length
    -- or matrices: ``np.stack``'s and ``np.concatenate``'s, along the first axis."""
    if _parts(tup) == 1:
        return lambda tup: _stacked(tup)
    if _parts(tup) == 2:
        return lambda tup: np.concatenate(tup, 0)
    return None


@overload(joining.vstack_vjp)
def _vstack_vjp(g, ans, tup):
    """``vstack_vjp`` for a list of float64 vectors (the rows of ``g``, as ``stack_vjp``'s) or
    matrices (``concatenate_vjp``'s along the first axis)."""
    if not (_float_array(g) and g.ndim == 2):
        return None
    if _parts(tup) == 1:
        return lambda g, ans, tup: np.ascontiguousarray(g)
    if _parts(tup) == 2:
        return lambda g, ans, tup: joining.concatenate_vjp(g, ans, tup, 0)
    return None


@overload(composite.diff)
def _diff(a, n=1, axis=-1, prepend=None, append=None):
    """The composite ``diff`` of a float64 vector or matrix along its last axis (``axis``,
    ``prepend`` and ``append`` left out), where its value is not differentiated: Numba's
    ``np.diff``, the same differences (``n < 0``: ``Refused``, where it raises)."""
    if not (_float_array(a) and a.dtype == types.float64 and a.ndim in (1, 2)):
        return None
    if not (_integer(n) and axis == -1 and prepend is None and append is None):
        return None  # (given: not left out)

    def diff_last(a, n=1, axis=-1, prepend=None, append=None):
        if n < 0:
            raise Refused()
        return np.diff(a, n)

    return diff_last


@overload(reductions.max_vjp, prefer_literal=True)
def _max_vjp(g, ans, a, axis=None, keepdims=False):
    """``max_vjp`` (and the minimum's) of a whole float64 array (``axis`` None): ``g`` to the
    elements equal to the result, split evenly between ties (none, for a NaN result: zeros);
    of a matrix along one axis (``_max_vjp_axis``)."""
    if isinstance(axis, types.Integer) and _float_array(a) and a.dtype == types.float64:
        return _max_vjp_axis(g, ans, a, axis, keepdims)
    if not (_float_array(a) and a.dtype == types.float64 and isinstance(g, types.Float)):
        return None
    if not (_is_none(axis) and _literal_bool(keepdims) is not None):
        return None

    def max_vjp_whole(g, ans, a, axis=None, keepdims=False):
        hits = a == ans
        ties = hits.sum()
        if ties == 0:
            return np.zeros(a.shape)
        return np.where(hits, g / ties, 0.0)

    return max_vjp_whole


def _float64_or_int64(t) -> bool:
    """A float64 or int64 number, or an array of them (numpy casts int64 to float64 safely)."""
    dtype = t.dtype if _array(t) else t
    return dtype in (types.float64, types.int64)


@overload(runtime.log_as)
def _log_as(x, like):
    """``np.log(x, dtype=np.result_type(like))`` where that dtype is float64 -- ``like`` a
    float64 number or array -- and ``x`` float64 or int64 (numpy casts it to float64; Numba's
    ``np.log`` computes in float64 too, and gives a number for a 0-d array, as numpy does).
    Another dtype (float32: numpy computes in float32; an integer, where numpy raises) is not
    covered."""
    if not _float64_or_int64(x) or not (_array(like) or isinstance(like, types.Float)):
        return None
    if (like.dtype if _array(like) else like) != types.float64:
        return None
    return lambda x, like: np.log(x)


# ------------------------------------------------------------------ math as Python computes it


@register_jitable
def _domain_error():
    raise ValueError("math domain error")


@register_jitable
def _range_error():
    raise OverflowError("math range error")


_OUTSIDE = {  # where math's function raises ValueError (nan goes through, as in Python)
    "sqrt": lambda x: x < 0.0,
    "log": lambda x: x <= 0.0,
    "log2": lambda x: x <= 0.0,
    "log10": lambda x: x <= 0.0,
    "log1p": lambda x: x <= -1.0,
    "acos": lambda x: x < -1.0 or x > 1.0,
    "asin": lambda x: x < -1.0 or x > 1.0,
    "acosh": lambda x: x < 1.0,
    "atanh": lambda x: x <= -1.0 or x >= 1.0,
    "sin": lambda x: math.isinf(x),
    "cos": lambda x: math.isinf(x),
    "tan": lambda x: math.isinf(x),
}
_OVERFLOWS = ("exp", "expm1", "cosh", "sinh")  # OverflowError where a finite x gives inf


def _checked_math(name: str):
    fn = getattr(math, name)
    outside = register_jitable(_OUTSIDE[name]) if name in _OUTSIDE else None

    @overload(runtime.CHECKED_MATH[name])
    def impl(x):
        if not _number(x):
            return None
        if outside is not None:

            def checked(x):
                if outside(x):
                    _domain_error()
                return fn(x)

            return checked

        def checked_range(x):
            y = fn(x)
            if math.isinf(y) and not math.isinf(x):
                _range_error()
            return y

        return checked_range


for _name in runtime.MATH_RAISES:
    _checked_math(_name)


@overload(runtime.trip_count)
def _trip_count(start, stop):
    """Integers: ``max(stop - start, 0)``; a float among them: the ceiling of the difference (0
    where ``stop > start`` is false: nan). Anything else is not typed, and the loop keeps its
    lists (``cpsad.staging``)."""
    if isinstance(start, types.Integer) and isinstance(stop, types.Integer):
        return lambda start, stop: max(stop - start, 0)
    if _number(start) and _number(stop):
        return lambda start, stop: int(math.ceil(stop - start)) if stop > start else 0
    return None


@overload(runtime.float_frames)
def _float_frames(count):
    if isinstance(count, types.Integer):
        return lambda count: np.empty(count, np.float64)
    return None


@overload(runtime.push_float)
def _push_float(frames, top, value):
    """Only a float64 goes into the buffer: an integer or a bool would come back a float, and
    be another value than the list of the Python backpropagator holds -- not typed, and the
    loop keeps its lists (``cpsad.staging``)."""
    if isinstance(value, types.Float) and value.bitwidth == 64 and _float_array(frames):

        def push(frames, top, value):
            frames[top] = value

        return push
    return None


# Bytes of C stack a staged recursion may use, of the 1 MB or more a thread has on the common
# platforms (Numba's recursion has no bound of its own): past it, ``Refused``. About 7,000 levels
# of a small function (``power``: 70 bytes a level).
STACK_BUDGET = 512 * 1024


@intrinsic
def _frame_address(typingctx):
    """The address of a byte of the calling function's stack frame."""

    def codegen(context, builder, signature, args):
        slot = cgutils.alloca_once(builder, ir.IntType(8))
        return builder.ptrtoint(slot, context.get_value_type(types.intp))

    return types.intp(), codegen


@overload(runtime.within_stack)
def _within_stack(stack):
    """The first call's frame's address; ``Refused`` past ``STACK_BUDGET`` bytes of it (in
    either direction: a stack that grows up too)."""
    if not isinstance(stack, types.Integer):
        return None
    budget = STACK_BUDGET

    def within(stack):
        here = _frame_address()
        if stack == 0:
            return here
        if abs(stack - here) > budget:
            raise Refused()
        return stack

    return within


@overload(runtime.recursion_result)
def _recursion_result(value):
    """A number passes, None (an Optional's) raises ``Refused``; anything else -- an array,
    whose adjoint the seed 1.0 does not stand for -- is not typed: the function falls back when
    it is compiled, with the warning, not at each call."""
    if _number(value):
        return lambda value: None
    if isinstance(value, types.Optional) and _number(value.type):

        def present(value):
            if value is None:
                raise Refused()

        return present
    return None


def _refuse(x):
    raise Refused()


@overload(runtime.expect_number)
def _expect_number(x):
    """Nothing for a number; ``Refused`` for anything else (decided as Numba types the call)."""
    return (lambda x: None) if _number(x) else _refuse


@overload(runtime.expect_array)
def _expect_array(x):
    return (lambda x: None) if _array(x) else _refuse


@overload(runtime.scaled)
def _scaled(adjoint, by):
    """``adjoint * by``, entry by entry for a tuple; None stays None, as anything scaled by
    None does. Adjoints of floats and float arrays only (others: not typed)."""
    if _is_none(adjoint) or _is_none(by):
        return lambda adjoint, by: None
    if isinstance(adjoint, types.BaseTuple):
        n = len(adjoint.types)
        entries = "".join(f"runtime.scaled(adjoint[{i}], by), " for i in range(n))
        namespace = {"runtime": runtime}
        exec(f"def scaled_tuple(adjoint, by):\n    return ({entries})\n", namespace)  # noqa: S102
        return namespace["scaled_tuple"]
    plain = (types.Float, types.Integer, types.Array)
    if isinstance(by, types.Optional) or isinstance(adjoint, types.Optional):
        if not (
            isinstance(getattr(adjoint, "type", adjoint), plain)
            and _number(getattr(by, "type", by))
        ):
            return None

        def scaled_optional(adjoint, by):
            if adjoint is None or by is None:
                return None
            return adjoint * by

        return scaled_optional
    if isinstance(adjoint, plain) and _number(by):
        return lambda adjoint, by: adjoint * by
    return None


@overload(runtime.python_pow)
def _python_pow(a, b):
    """``a ** b`` as Python computes it for numbers with a float among them: ZeroDivisionError
    for 0.0 to a negative power, OverflowError where finite numbers give inf, and ``Refused``
    for a negative number to a fractional power (Python's result is complex). Integers alone,
    and arrays, as Numba computes them (numpy's semantics, as the Python backpropagator's)."""
    if _number(a) and _number(b) and (isinstance(a, types.Float) or isinstance(b, types.Float)):

        def pow_float(a, b):
            x, y = float(a), float(b)
            if x == 0.0 and y < 0.0:
                raise ZeroDivisionError("0.0 cannot be raised to a negative power")
            if x < 0.0 and not math.isinf(y) and math.floor(y) != y:
                raise Refused()
            z = x**y
            if math.isinf(z) and not math.isinf(x) and not math.isinf(y):
                _range_error()
            return z

        return pow_float
    return lambda a, b: a**b


# ---------------------------------------------------------------- reductions along one axis
# ``np.max(z, axis=1, keepdims=True)``, as a softmax writes it: Numba's ``np.max`` takes no axis,
# and its ``np.sum`` no ``keepdims``. Whether dimensions are kept decides the result's type, so
# it must be known when Numba compiles: a literal (``prefer_literal``), or left out.


def _literal_bool(t):
    """``True`` or ``False`` where ``t`` -- a ``keepdims`` -- is known when Numba compiles: a
    literal, or the default left out; else None."""
    if isinstance(t, bool):
        return t
    if isinstance(t, types.Omitted):
        return t.value if isinstance(t.value, bool) else None
    if isinstance(t, types.BooleanLiteral):
        return t.literal_value
    return None


def _matrix_or_vector_f64(a) -> bool:
    return _float_array(a) and a.dtype == types.float64 and a.ndim in (1, 2)


@register_jitable
def _extreme_of(v, larger):
    """The largest (``larger``) or smallest element of the vector ``v``, NaN where one is (as
    numpy's); ``Refused`` for none (numpy raises)."""
    n = v.shape[0]
    if n == 0:
        raise Refused()
    m = v[0]
    for i in range(1, n):
        if m != m:
            return m
        x = v[i]
        if x != x or (x > m if larger else x < m):
            m = x
    return m


@register_jitable
def _extremes(a, ax, larger):
    """``_extreme_of`` each row (``ax`` 1) or column (0) of the matrix ``a``."""
    n = a.shape[1 - ax]
    out = np.empty(n)
    for r in range(n):
        out[r] = _extreme_of(a[r, :] if ax == 1 else a[:, r], larger)
    return out


@register_jitable
def _kept_shape(res, ax):
    """A matrix's reduction ``res`` along ``ax``, the axis kept with length 1."""
    n = res.shape[0]
    return res.reshape((n, 1)) if ax == 1 else res.reshape((1, n))


def _extreme(larger: bool):
    def overload_extreme(a, axis=None, out=None, keepdims=False):
        """Along one axis of a float64 vector or matrix, dimensions kept or not (``axis``
        left out: Numba's own)."""
        if not (_matrix_or_vector_f64(a) and isinstance(axis, types.Integer) and _is_none(out)):
            return None
        kept = _literal_bool(keepdims)
        if kept is None:
            return None
        if a.ndim == 1 and kept:

            def vector_kept(a, axis=None, out=None, keepdims=False):
                _axis(axis, 1)
                res = np.empty(1)
                res[0] = _extreme_of(a, larger)
                return res

            return vector_kept
        if a.ndim == 1:

            def vector(a, axis=None, out=None, keepdims=False):
                _axis(axis, 1)
                return _extreme_of(a, larger)

            return vector
        if kept:

            def matrix_kept(a, axis=None, out=None, keepdims=False):
                ax = _axis(axis, 2)
                return _kept_shape(_extremes(a, ax, larger), ax)

            return matrix_kept

        def matrix(a, axis=None, out=None, keepdims=False):
            return _extremes(a, _axis(axis, 2), larger)

        return matrix

    return overload_extreme


for _f, _larger in ((np.max, True), (np.amax, True), (np.min, False), (np.amin, False)):
    overload(_f, prefer_literal=True)(_extreme(_larger))


@overload(np.sum, prefer_literal=True)
def _np_sum_kept(a, axis=None, dtype=None, out=None, keepdims=False):
    """``keepdims=True`` (a literal) for a float64 vector or matrix, over one axis or all of it
    (otherwise: Numba's own)."""
    if _literal_bool(keepdims) is not True or not _matrix_or_vector_f64(a):
        return None
    if not (_is_none(dtype) and _is_none(out)):
        return None
    return _kept_reduction(a, axis, mean=False)


def _max_vjp_axis(g, ans, a, axis, keepdims):
    """``max_vjp`` along one axis of a matrix: each row's (column's) ``g`` to the elements equal
    to its extreme, split evenly between ties (none, for a NaN: zeros) -- ``g`` and ``ans`` kept
    as (n, 1) or (1, n), or not (n,)."""
    kept = _literal_bool(keepdims)
    if a.ndim != 2 or kept is None or not (_float_array(g) and _float_array(ans)):
        return None
    if g.ndim != (2 if kept else 1) or ans.ndim != g.ndim:
        return None

    def max_vjp_rows(g, ans, a, axis=None, keepdims=False):
        ax = _axis(axis, 2)
        n, m = a.shape[1 - ax], a.shape[ax]
        out = np.zeros(a.shape)
        for r in range(n):
            if kept:
                top, gr = (ans[r, 0], g[r, 0]) if ax == 1 else (ans[0, r], g[0, r])
            else:
                top, gr = ans[r], g[r]
            ties = 0
            for j in range(m):
                if (a[r, j] if ax == 1 else a[j, r]) == top:
                    ties += 1
            if ties == 0:
                continue
            share = gr / ties
            for j in range(m):
                if ax == 1 and a[r, j] == top:
                    out[r, j] = share
                elif ax == 0 and a[j, r] == top:
                    out[j, r] = share
        return out

    return max_vjp_rows


def _kept_reduction(a, axis, mean: bool):
    """``np.sum`` (``np.mean``, with ``mean``) of a float64 vector or matrix, ``keepdims=True``:
    over one axis, or all of it."""
    if _is_none(axis) or a.ndim == 1:
        if not (_is_none(axis) or isinstance(axis, types.Integer)):
            return None
        ndim, whole = a.ndim, _is_none(axis)

        def all_kept(a, axis=None, dtype=None, out=None, keepdims=False):
            if not whole:
                _axis(axis, 1)
            res = np.empty(1)
            res[0] = np.mean(a) if mean else np.sum(a)
            return res if ndim == 1 else res.reshape((1, 1))

        return all_kept
    if not isinstance(axis, types.Integer):
        return None

    def matrix_kept(a, axis=None, dtype=None, out=None, keepdims=False):
        ax = _axis(axis, 2)
        res = np.sum(a, axis=ax)
        if mean:
            res = res / a.shape[ax]
        return _kept_shape(res, ax)

    return matrix_kept
