"""Rules of Python's operators (``+ - * / ** @ %``, unary ``-`` and ``+``), indexing and containers.

Binary operators broadcast like numpy; ``unbroadcast`` sums each adjoint back to its operand's
shape, and each tangent rule (``*_jvp``) broadcasts its operand's tangent up to the result's. The
same functions serve ``np.add``, ``np.multiply``, ... (registered in elementwise.py).
"""

from __future__ import annotations

import numpy as np

from cpsad.deferred import Deferred
from cpsad.rules.core import (
    DISCRETE,
    broadcast_like,
    defjvp,
    defjvp_method,
    defjvp_operator,
    defmethod,
    defnondiff,
    defoperator,
    defvjp,
)
from cpsad.runtime import (
    add_left,
    add_right,
    add_tangent,
    as_array,
    as_sequence,
    getitem_adjoint,
    index_step,
    item_adjoint,
    reads_shape_of,
    repeat_adjoint,
    tangent_zeros,
    unbroadcast,
    unpack_adjoint,
)

# --------------------------------------------------------------------------- binary, broadcasting


def add_x(g, ans, x, y):
    return unbroadcast(g, x)


def add_y(g, ans, x, y):
    return unbroadcast(g, y)


defoperator("add", add_x, add_y)


def add_x_jvp(t, ans, x, y):
    return broadcast_like(t, ans)


def add_y_jvp(t, ans, x, y):
    return broadcast_like(t, ans)


defjvp_operator("add", add_x_jvp, add_y_jvp)


def sub_x(g, ans, x, y):
    return unbroadcast(g, x)


def sub_y(g, ans, x, y):
    return unbroadcast(-g, y)


defoperator("sub", sub_x, sub_y)


def sub_x_jvp(t, ans, x, y):
    return broadcast_like(t, ans)


def sub_y_jvp(t, ans, x, y):
    return broadcast_like(-t, ans)


defjvp_operator("sub", sub_x_jvp, sub_y_jvp)


def mul_x(g, ans, x, y):
    return unbroadcast(g * y, x)


def mul_y(g, ans, x, y):
    return unbroadcast(g * x, y)


defoperator("mul", mul_x, mul_y)


def mul_x_jvp(t, ans, x, y):
    return t * y


def mul_y_jvp(t, ans, x, y):
    return x * t


defjvp_operator("mul", mul_x_jvp, mul_y_jvp)


def div_x(g, ans, x, y):
    return unbroadcast(g / y, x)


def div_y(g, ans, x, y):
    return unbroadcast(-g * ans / y, y)


defoperator("div", div_x, div_y)


def div_x_jvp(t, ans, x, y):
    return t / y


def div_y_jvp(t, ans, x, y):
    return -t * ans / y


defjvp_operator("div", div_x_jvp, div_y_jvp)


def div_numpy_x(g, ans, x, y):
    """``x / y`` where ``x`` may be a numpy value and ``y`` a Python number (ShiftReset chooses it
    by the kinds): ``np.divide``, numpy's answer at ``y == 0`` as the forward division gave it,
    where the adjoint -- a Python float after ``float()`` or ``math`` -- would raise."""
    return unbroadcast(np.divide(g, y), x)


defoperator("div_numpy", div_numpy_x, div_y)


def div_numpy_x_jvp(t, ans, x, y):
    return np.divide(t, y)


defjvp_operator("div_numpy", div_numpy_x_jvp, div_y_jvp)


def pow_x(g, ans, x, y):
    """``y x^(y-1)``, where ShiftReset knows it raises nothing: ``y`` a constant, 1 or more, or
    not 0 and ``x`` a numpy value (else ``pow_any``)."""
    return unbroadcast(g * y * x ** (y - 1), x)


def pow_y(g, ans, x, y):
    """``d(x**y)/dy = x**y log(x)``, zero where ``x`` is (the log in the result's float type:
    ``np.log(2.0)`` alone is a float64 scalar, which would make a float32 adjoint float64)."""
    return unbroadcast(g * ans * np.log(np.where(x == 0, 1, x), dtype=np.result_type(ans)), y)


defoperator("pow", pow_x, pow_y)


def pow_x_jvp(t, ans, x, y):
    return t * y * x ** (y - 1)


def pow_y_jvp(t, ans, x, y):
    """Zero where ``x`` is, like the adjoint."""
    return t * ans * np.log(np.where(x == 0, 1, x), dtype=np.result_type(ans))


defjvp_operator("pow", pow_x_jvp, pow_y_jvp)


def pow_any_x(g, ans, x, y):
    """``x ** y`` of any values: ``power_slope``, 0 for ``y == 0`` (also at ``x == 0``), and
    numpy's answers where Python's arithmetic of numbers raises."""
    return unbroadcast(g * power_slope(x, y), x)


defoperator("pow_any", pow_any_x, pow_y)


def pow_any_x_jvp(t, ans, x, y):
    return t * power_slope(x, y)


defjvp_operator("pow_any", pow_any_x_jvp, pow_y_jvp)


def pow_number_x(g, ans, x, y):
    """``x ** y`` of Python numbers (ShiftReset chooses it by the kinds): Python's arithmetic
    where it cannot fail -- ``y >= 1``, or ``|x| >= 1``, where ``x^(y-1)`` is no larger than
    ``x^y`` or 1 -- and ``power_slope`` elsewhere (``x = 0``, an overflow)."""
    return g * y * x ** (y - 1) if y >= 1 or abs(x) >= 1 else g * power_slope(x, y)


defoperator("pow_number", pow_number_x, pow_y)


def pow_number_x_jvp(t, ans, x, y):
    return t * y * x ** (y - 1) if y >= 1 or abs(x) >= 1 else t * power_slope(x, y)


defjvp_operator("pow_number", pow_number_x_jvp, pow_y_jvp)


def power_slope(x, y):
    """``y x^(y-1)``, the derivative of ``x ** y`` in ``x``: 0 where ``y`` is 0, also at ``x = 0``
    (``x**0`` is the constant 1: JAX's and autograd's answer, where the formula gives NaN); of
    Python numbers, numpy's answers -- an infinity, with numpy's warning -- where Python's
    arithmetic raises (``0.0 ** -0.5``, a power that overflows)."""
    if (type(x) is float or type(x) is int) and (type(y) is float or type(y) is int):
        if not y:
            return 0.0
        try:
            return y * x ** (y - 1)
        except ArithmeticError:  # ZeroDivisionError, OverflowError
            return y * float(np.power(float(x), y - 1))
    return y * x ** (y - (y != 0))


def mod_x(g, ans, x, y):
    return unbroadcast(g, x)


def mod_y(g, ans, x, y):
    return unbroadcast(-g * np.floor_divide(x, y), y)


defoperator("mod", mod_x, mod_y)


def mod_x_jvp(t, ans, x, y):
    return broadcast_like(t, ans)


def mod_y_jvp(t, ans, x, y):
    return -t * np.floor_divide(x, y)


defjvp_operator("mod", mod_x_jvp, mod_y_jvp)


# `+` where both operands may be lists or tuples (Kinds does not know either is a number or an
# array): joining sequences or adding, decided when the rule runs; `*` where one operand surely
# is a sequence: repeating it


def add_any_x(g, ans, x, y):
    return add_left(g, x, y)


def add_any_y(g, ans, x, y):
    return add_right(g, x, y)


defoperator("add_any", add_any_x, add_any_y)


def add_any_x_jvp(t, ans, x, y):
    return add_tangent(t, ans, x, y, False)


def add_any_y_jvp(t, ans, x, y):
    return add_tangent(t, ans, x, y, True)


defjvp_operator("add_any", add_any_x_jvp, add_any_y_jvp)


def repeat_x(g, ans, x, y):
    """``[a, b] * n``: each entry's adjoint is the sum of its copies'; the count has none."""
    return repeat_adjoint(g, x, y)


def repeat_y(g, ans, x, y):
    return repeat_adjoint(g, y, x)


defoperator("repeat_x", repeat_x, DISCRETE)
defoperator("repeat_y", DISCRETE, repeat_y)


def repeat_x_jvp(t, ans, x, y):
    return t * y


def repeat_y_jvp(t, ans, x, y):
    return x * t


defjvp_operator("repeat_x", repeat_x_jvp, DISCRETE)
defjvp_operator("repeat_y", DISCRETE, repeat_y_jvp)


def _floats(a, b) -> bool:
    """Both real floating-point arrays: what ``Deferred`` products batch."""
    return a.dtype.kind == "f" and b.dtype.kind == "f"


@reads_shape_of("ans")
def matmul_x(g, ans, x, y):
    """x @ y: the adjoint of x, for every combination of 1-D, 2-D and stacked operands.

    Vectors are given their unit axis by indexing (``g[..., None]``), not ``np.expand_dims`` and
    ``np.squeeze``, which cost more than a small product itself (a Tree-LSTM's are 64 x 128).
    """
    if type(x) is np.ndarray and type(y) is np.ndarray and x.ndim == 2:
        if y.ndim == 2:
            return g @ y.T  # matrices: nothing broadcast
        if y.ndim == 1 and type(g) is np.ndarray and g.ndim == 1 and _floats(g, y):
            return Deferred.product(g, y)  # W @ v: the outer product g v^T, batched when read
    if np.ndim(y) == 1:
        if np.ndim(x) == 1:
            return g * y
        return unbroadcast(g[..., None] * y, x)
    if np.ndim(x) == 1:
        return unbroadcast((y @ g[..., None])[..., 0], x)
    return unbroadcast(g @ np.swapaxes(y, -1, -2), x)


@reads_shape_of("ans")
def matmul_y(g, ans, x, y):
    """x @ y: the adjoint of y."""
    if type(x) is np.ndarray and type(y) is np.ndarray and y.ndim == 2:
        if x.ndim == 2:
            return x.T @ g
        if x.ndim == 1 and type(g) is np.ndarray and g.ndim == 1 and _floats(x, g):
            return Deferred.product(x, g)  # v @ W: the outer product v g^T, batched when read
    elif type(x) is np.ndarray and type(y) is np.ndarray and x.ndim == 2 and y.ndim == 1:
        if type(g) is np.ndarray and g.ndim == 1:
            return g @ x  # W @ v: the vector's adjoint W^T g, without np.ndim's calls
    if np.ndim(x) == 1:
        if np.ndim(y) == 1:
            return g * x
        return unbroadcast(as_array(x)[:, None] * g[..., None, :], y)
    if np.ndim(y) == 1:
        return unbroadcast((g[..., None, :] @ x)[..., 0, :], y)
    return unbroadcast(np.swapaxes(x, -1, -2) @ g, y)


defoperator("matmul", matmul_x, matmul_y)


def matmul_x_jvp(t, ans, x, y):
    return t @ y


def matmul_y_jvp(t, ans, x, y):
    return x @ t


defjvp_operator("matmul", matmul_x_jvp, matmul_y_jvp)

# --------------------------------------------------------------------------- unary


def neg(g, ans, x):
    return -g


defoperator("neg", neg)


def neg_jvp(t, ans, x):
    return -t


defjvp_operator("neg", neg_jvp)


def pos(g, ans, x):
    return g


defoperator("pos", pos)


def pos_jvp(t, ans, x):
    return t


defjvp_operator("pos", pos_jvp)

# --------------------------------------------------------------------------- indexing, containers


def getitem(g, ans, x, index):
    return getitem_adjoint(g, x, index)


defoperator("getitem", getitem, DISCRETE)


def getitem_jvp(t, ans, x, index):
    """The tangent of an array, list, tuple or dict has its structure: index it the same way."""
    return t[index]


defjvp_operator("getitem", getitem_jvp, DISCRETE)


# ``x[i]`` where the index is differentiable and ``x`` may be an object of a class of yours:
# the same rules, and the index's derivative -- zero for arrays, lists, tuples and dicts, an error
# where ``__getitem__`` is Python code (``index_step``). ShiftReset chooses it by the kinds.


def getitem_any_index(g, ans, x, index):
    return index_step(x, index)


defoperator("getitem_any", getitem, getitem_any_index)


def getitem_any_index_jvp(t, ans, x, index):
    return index_step(x, index, ans)


defjvp_operator("getitem_any", getitem_jvp, getitem_any_index_jvp)


def item(g, ans, key, x):
    """``t = (a, b)`` / ``[a, b]`` / ``{k: a}``: the adjoint of the entry ``key``."""
    return item_adjoint(g, key, x)


defoperator("item", DISCRETE, item)


def item_jvp(t, ans, key, x):
    """The tangent of the container ``ans`` from its entry ``key``: ``t`` there, zeros elsewhere
    (the contributions of the entries add up entry by entry to the container of their tangents)."""
    return with_entry(tangent_zeros(ans), key, t)


def with_entry(container, key, value):
    """A copy of a tuple, list or dict with the entry ``key`` replaced by ``value``."""
    if isinstance(container, dict):  # a Sparse stays one
        return type(container)({**container, key: value})
    entries = list(container)
    entries[key] = value
    if isinstance(container, list):
        return entries
    return type(container)(*entries) if hasattr(container, "_fields") else tuple(entries)


defjvp_operator("item", DISCRETE, item_jvp)


def item_index(shape, args) -> tuple:
    """The element ``x.item(*args)`` reads, as an index of ``x`` (of ``shape``): none for an
    array of one element, a flat index, or one per axis (as several numbers or one tuple)."""
    if len(args) == 1 and isinstance(args[0], tuple):
        args = args[0]
    if len(args) == 0:
        if int(np.prod(shape)) != 1:
            raise ValueError("can only convert an array of size 1 to a Python scalar")
        return (0,) * len(shape)
    if len(args) == 1:
        return np.unravel_index(args[0] % int(np.prod(shape)), shape)
    return tuple(args)


defnondiff(item_index)


def item_method(g, ans, a, *args):
    """``x.item(...)``: one element as a Python number; its adjoint goes back to the element."""
    return getitem_adjoint(
        np.asarray(g).astype(np.result_type(a, np.float32)), a, item_index(np.shape(a), args)
    )


defmethod("item", item_method)


def item_method_jvp(t, ans, a, *args):
    return t.item(*args)


defjvp_method("item", item_method_jvp)


def unpack(g, ans, x):
    """``a, b = t``: ``g`` is the tuple of the targets' adjoints (None where inactive); an array
    ``t`` gets the array of its rows' adjoints."""
    return unpack_adjoint(g, x)


defoperator("unpack", unpack)


def unpack_jvp(t, ans, x):
    """``a, b = t``: the targets' tangents are the entries of the tangent (rows of an array's)."""
    return tuple(t)


defjvp_operator("unpack", unpack_jvp)


def sequence(g, ans, x):
    """``for v in xs`` reads ``xs`` through ``as_sequence``: the same elements."""
    return g


defvjp(as_sequence, sequence)


def sequence_jvp(t, ans, x):
    """The same elements -- unless ``x`` was not a sequence (a dict gives its keys: no tangent).
    A dict's view (``vals = d.values()``) has for tangent the list of its entries' already
    (``runtime.dict_view_tangent``)."""
    return t if ans is x or isinstance(x, _VIEWS) else tangent_zeros(ans)


_VIEWS = (type({}.values()), type({}.items()), type({}.keys()))


defjvp(as_sequence, sequence_jvp)
