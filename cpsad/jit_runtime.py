"""Numba's versions of the runtime helpers the staged backpropagators call (``cpsad.jit``).

Each is registered with ``numba.extending.overload`` for the Python helper of ``cpsad.runtime``,
so the staged code calls the same names as the emitted code, and Numba, typing a call of one,
compiles the version here for the argument types. Each covers what the helper does for floats,
integers and float arrays -- the scope of ``cpsad.jit``; for anything else it returns no
implementation, Numba's typing fails, and ``cpsad.jit`` falls back to the Python
backpropagator, which has the helpers' full behaviour. ``tests/test_jit.py`` runs each against
the Python helper.
"""

from __future__ import annotations

import numpy as np
from numba import types
from numba.extending import overload

from cpsad import runtime
from cpsad.rules import operators, reductions


def _is_none(t) -> bool:
    return t is None or isinstance(t, (types.NoneType, types.Omitted)) or t is types.none


def _number(t) -> bool:
    return isinstance(t, (types.Float, types.Integer, types.Boolean))


def _array(t) -> bool:
    return isinstance(t, types.Array)


@overload(runtime.acc)
@overload(runtime.acc_into)
def _acc(a, b):
    if _is_none(a):
        return lambda a, b: b
    if _is_none(b):
        return lambda a, b: a
    if isinstance(a, types.Optional) or isinstance(b, types.Optional):

        def acc_optional(a, b):
            if a is None:
                return b
            if b is None:
                return a
            return a + b

        return acc_optional
    return lambda a, b: a + b


@overload(runtime.like)
def _like(x):
    return lambda x: x


@overload(runtime.zeros_like)
def _zeros_like(x):
    if _array(x):
        return lambda x: np.zeros(x.shape)
    if _number(x):
        return lambda x: 0.0
    return None


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
                out = np.empty(1)
                out[0] = g.sum()
                return out

            return unbroadcast_1
        if g.ndim == 2 and x.ndim == 1:

            def unbroadcast_21(g, x):
                if x.shape[0] == g.shape[1]:
                    return g.sum(axis=0)
                out = np.empty(1)
                out[0] = g.sum()
                return out

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
            return runtime.unbroadcast(g, x)

        return unbroadcast_optional
    return None


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
        return lambda g, key, x: g[i]
    if _array(g):
        return lambda g, key, x: g[key]
    return None


@overload(runtime.unpack_adjoint)
def _unpack_adjoint(gs, x=None):
    if isinstance(gs, types.BaseTuple) and isinstance(x, types.BaseTuple):
        return lambda gs, x=None: gs
    return None


@overload(reductions.expand)
def _expand(g, x, axis=None, keepdims=False):
    if _number(g) and _array(x) and _is_none(axis):
        return lambda g, x, axis=None, keepdims=False: np.full(x.shape, g)
    if _number(g) and _number(x) and _is_none(axis):
        return lambda g, x, axis=None, keepdims=False: g
    return None


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
    if _array(x) and isinstance(index, types.Integer) and (_number(g) or _array(g)):

        def getitem_adjoint_row(g, x, index):
            out = np.zeros(x.shape)
            out[index] = g
            return out

        return getitem_adjoint_row
    return None
