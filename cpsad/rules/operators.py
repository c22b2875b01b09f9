"""Rules of Python's operators (``+ - * / ** @ %``, unary ``-`` and ``+``), indexing and containers.

Binary operators broadcast like numpy; ``unbroadcast`` sums each adjoint back to its operand's
shape. The same functions serve ``np.add``, ``np.multiply``, ... (registered in elementwise.py).
"""

from __future__ import annotations

import numpy as np

from cpsad.rules.core import DISCRETE, defoperator, defvjp
from cpsad.runtime import (
    as_sequence,
    getitem_adjoint,
    inplace_add,
    inplace_div,
    inplace_mul,
    inplace_pow,
    inplace_sub,
    item_adjoint,
    unbroadcast,
    unpack_adjoint,
)

# --------------------------------------------------------------------------- binary, broadcasting


def add_x(g, ans, x, y):
    return unbroadcast(g, x)


def add_y(g, ans, x, y):
    return unbroadcast(g, y)


defoperator("add", add_x, add_y)


def sub_x(g, ans, x, y):
    return unbroadcast(g, x)


def sub_y(g, ans, x, y):
    return unbroadcast(-g, y)


defoperator("sub", sub_x, sub_y)


def mul_x(g, ans, x, y):
    return unbroadcast(g * y, x)


def mul_y(g, ans, x, y):
    return unbroadcast(g * x, y)


defoperator("mul", mul_x, mul_y)


def div_x(g, ans, x, y):
    return unbroadcast(g / y, x)


def div_y(g, ans, x, y):
    return unbroadcast(-g * ans / y, y)


defoperator("div", div_x, div_y)


def pow_x(g, ans, x, y):
    return unbroadcast(g * y * x ** (y - 1), x)


def pow_y(g, ans, x, y):
    """``d(x**y)/dy = x**y log(x)``, zero where ``x`` is (the log in the result's float type:
    ``np.log(2.0)`` alone is a float64 scalar, which would make a float32 adjoint float64)."""
    return unbroadcast(g * ans * np.log(np.where(x == 0, 1, x), dtype=np.result_type(ans)), y)


defoperator("pow", pow_x, pow_y)


def mod_x(g, ans, x, y):
    return unbroadcast(g, x)


def mod_y(g, ans, x, y):
    return unbroadcast(-g * np.floor_divide(x, y), y)


defoperator("mod", mod_x, mod_y)


def matmul_x(g, ans, x, y):
    """x @ y: the adjoint of x, for every combination of 1-D, 2-D and stacked operands.

    Vectors are given their unit axis by indexing (``g[..., None]``), not ``np.expand_dims`` and
    ``np.squeeze``, which cost more than a small product itself (a Tree-LSTM's are 64 x 128).
    """
    if np.ndim(y) == 1:
        if np.ndim(x) == 1:
            return g * y
        return unbroadcast(g[..., None] * y, x)
    if np.ndim(x) == 1:
        return unbroadcast((y @ g[..., None])[..., 0], x)
    return unbroadcast(g @ np.swapaxes(y, -1, -2), x)


def matmul_y(g, ans, x, y):
    """x @ y: the adjoint of y."""
    if np.ndim(x) == 1:
        if np.ndim(y) == 1:
            return g * x
        return unbroadcast(np.asarray(x)[:, None] * g[..., None, :], y)
    if np.ndim(y) == 1:
        return unbroadcast((g[..., None, :] @ x)[..., 0, :], y)
    return unbroadcast(np.swapaxes(x, -1, -2) @ g, y)


defoperator("matmul", matmul_x, matmul_y)

# --------------------------------------------------------------------------- unary


def neg(g, ans, x):
    return -g


defoperator("neg", neg)


def pos(g, ans, x):
    return g


defoperator("pos", pos)

# --------------------------------------------------------------------------- indexing, containers


def getitem(g, ans, x, index):
    return getitem_adjoint(g, x, index)


defoperator("getitem", getitem, DISCRETE)


def item(g, ans, key, x):
    """``t = (a, b)`` / ``[a, b]`` / ``{k: a}``: the adjoint of the entry ``key``."""
    return item_adjoint(g, key, x)


defoperator("item", DISCRETE, item)


def unpack(g, ans, x):
    """``a, b = t``: ``g`` is the tuple of the targets' adjoints (None where inactive)."""
    return unpack_adjoint(g)


defoperator("unpack", unpack)


def sequence(g, ans, x):
    """``for v in xs`` reads ``xs`` through ``as_sequence``: the same elements."""
    return g


defvjp(as_sequence, sequence)

# x += y where x may share its array: the same rules as x + y (the runtime refuses arrays)
defvjp(inplace_add, add_x, add_y)
defvjp(inplace_sub, sub_x, sub_y)
defvjp(inplace_mul, mul_x, mul_y)
defvjp(inplace_div, div_x, div_y)
defvjp(inplace_pow, pow_x, pow_y)
