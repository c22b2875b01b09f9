"""Deferred adjoints: a weight's adjoint kept as the terms of a sum until something reads it.

A weight used at every step of a loop or at every node of a tree receives one adjoint term per
use: ``x.T @ g`` for ``x @ W`` (``matmul_y``), the outer product ``g v^T`` for ``W @ v``
(``matmul_x``), the row ``g`` scattered into a table by ``E[i]`` (``getitem_adjoint``).
Computed as they come, that is one small product and one full-size sum per use. Kept as their
factors, the terms are summed when the adjoint is read: one product of all the uses' stacked
factors -- ``X.T @ G`` over every step -- and one scatter, the way a hand-written backward pass
batches a weight's gradient over time steps or tree nodes.

``Deferred`` stands for the array it sums to. Adding two is O(1) (a node of a tree of terms),
adding an array of its shape keeps it deferred; anything else that reads one -- numpy
functions and ufuncs, arithmetic, indexing, attributes, the API returning a gradient -- gets the
array, computed once. Nothing is ever written into an array a ``Deferred`` did not allocate.

Only the rules above create one, and only when their operands are plain float arrays of the
shapes they batch; everything else stays eager. A deferred sum holds its factors alive, so a
sum whose factors pass ``LIMIT`` elements is computed at once (and then holds one array).
"""

from __future__ import annotations

import numpy as np

LIMIT = 1 << 22  # elements of pending factors (32 MB of float64) before a sum is computed


class Deferred:
    """The sum of products ``A.T @ B``, scattered rows ``E[i] += g`` and arrays, of one shape."""

    __slots__ = ("shape", "dtype", "pending", "_terms", "_array")
    # ndarray OP Deferred: numpy calls __array_ufunc__ below instead of converting us
    __array_priority__ = 1000

    def __init__(self, shape, dtype, pending, terms):
        self.shape, self.dtype, self.pending = shape, dtype, pending
        self._terms = terms  # ("mm", A, B) | ("at", index, g) | ("sum", a, b) | ("array", a, None)
        self._array = None

    # ------------------------------------------------------------------ making one

    @classmethod
    def product(cls, a, b):
        """``a.T @ b`` for 2-D ``a`` (n, p) and ``b`` (n, q); a vector stands for one row."""
        dtype = a.dtype if a.dtype == b.dtype else np.result_type(a.dtype, b.dtype)
        return cls((a.shape[-1], b.shape[-1]), dtype, a.size + b.size, ("mm", a, b))

    @classmethod
    def scatter(cls, shape, dtype, index, g):
        """Zeros of ``shape`` with ``g`` added at the integer ``index`` (``x[index]``'s adjoint)."""
        return cls(shape, dtype, np.size(g), ("at", index, g))

    # ------------------------------------------------------------------ adding

    def __add__(self, other):
        if other is None:
            return self
        if type(other) is Deferred:
            if other.shape != self.shape:
                return self.array() + other.array()
            return _sum(self, other)
        if type(other) is np.ndarray and other.shape == self.shape:
            leaf = Deferred(self.shape, other.dtype, 0, ("array", other, None))
            return _sum(self, leaf)
        return self.array() + other

    __radd__ = __add__

    def plus(self, other: Deferred) -> Deferred:
        """``self + other`` of the same shape and dtype (checked by the caller): ``_sum``
        without its checks, for ``Sparse``'s merges of a parameter dict's adjoints."""
        pending = self.pending + other.pending
        out = Deferred(self.shape, self.dtype, pending, ("sum", self, other))
        if pending > LIMIT:
            out.array()
        return out

    # ------------------------------------------------------------------ reading

    def array(self) -> np.ndarray:
        """The array this sum stands for (computed on first read, then kept)."""
        if self._array is None:
            self._array = _evaluate(self)
            self._terms = None  # let the factors go
        return self._array

    @property
    def ndim(self):
        return len(self.shape)

    @property
    def size(self):
        return int(np.prod(self.shape))

    def __len__(self):
        return self.shape[0]

    def __array__(self, dtype=None, copy=None):
        out = self.array()
        return out if dtype is None else out.astype(dtype, copy=False)

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        if ufunc is np.add and method == "__call__" and len(inputs) == 2 and not kwargs:
            a, b = inputs
            return b + a if type(a) is not Deferred else a + b
        inputs = tuple(_read(x) for x in inputs)
        if "out" in kwargs:
            kwargs["out"] = tuple(_read(x) for x in kwargs["out"])
        return getattr(ufunc, method)(*inputs, **kwargs)

    def __array_function__(self, func, types, args, kwargs):
        if func in _WITHOUT_READING and len(args) == 1 and not kwargs:
            return _WITHOUT_READING[func](args[0])  # np.shape(g) and the like: no need to sum
        return func(*_read(args), **_read(kwargs))

    def __getattr__(self, name):  # .T, .reshape, .sum, ...: the array's
        if name.startswith("__") or name in Deferred.__slots__:
            raise AttributeError(name)
        return getattr(self.array(), name)

    def __repr__(self):
        state = "computed" if self._array is not None else "deferred"
        return f"Deferred({state}, shape={self.shape}, dtype={self.dtype})"


def _delegate(name):
    def method(self, *args):
        return getattr(self.array(), name)(*args)

    method.__name__ = name
    return method


for _name in (
    "__sub__ __rsub__ __mul__ __rmul__ __truediv__ __rtruediv__ __floordiv__ __rfloordiv__ "
    "__mod__ __rmod__ __pow__ __rpow__ __matmul__ __rmatmul__ __neg__ __pos__ __abs__ "
    "__getitem__ __iter__ __float__ __int__ __complex__ __bool__ __lt__ __le__ __gt__ __ge__ "
    "__eq__ __ne__"
).split():
    setattr(Deferred, _name, _delegate(_name))
Deferred.__hash__ = None  # like an array's


_WITHOUT_READING = {
    np.shape: lambda d: d.shape,
    np.ndim: lambda d: d.ndim,
    np.size: lambda d: d.size,
}


def _sum(a: Deferred, b: Deferred) -> Deferred:
    dtype = a.dtype if a.dtype == b.dtype else np.result_type(a.dtype, b.dtype)
    out = Deferred(a.shape, dtype, a.pending + b.pending, ("sum", a, b))
    if out.pending > LIMIT:
        out.array()
    return out


def _read(x):
    """``x`` with every ``Deferred`` in it (in lists, tuples and dicts too) replaced by its array."""
    if type(x) is Deferred:
        return x.array()
    if type(x) in (list, tuple):
        return type(x)(_read(v) for v in x)
    if type(x) is dict:
        return {k: _read(v) for k, v in x.items()}
    return x


def _evaluate(root: Deferred) -> np.ndarray:
    """Sum the terms below ``root``: one product of the stacked factors, one scatter, the arrays."""
    lefts, rights, indices, rows, arrays = [], [], [], [], []
    stack = [root]
    while stack:  # a loop, not recursion: a loop's sum is a chain thousands of nodes deep
        node = stack.pop()
        if node._array is not None:
            arrays.append(node._array)
            continue
        kind, x, y = node._terms
        if kind == "sum":
            stack.append(y)
            stack.append(x)
        elif kind == "mm":
            lefts.append(x)
            rights.append(y)
        elif kind == "at":
            indices.append(x)
            rows.append(y)
        else:
            arrays.append(x)
    if lefts:
        out = _rows(lefts).T @ _rows(rights)  # a new array: ours to add into
        if out.dtype != root.dtype:
            out = out.astype(root.dtype)
    else:
        out = np.zeros(root.shape, root.dtype)
    if indices:
        np.add.at(out, np.asarray(indices), np.array(rows))  # rows of one shape: stacked
    for a in arrays:
        out += a
    return out


def _rows(blocks):
    """The blocks (vectors are one row, matrices several) stacked into one matrix."""
    if len(blocks) == 1:
        b = blocks[0]
        return b if b.ndim == 2 else b[None]
    if all(b.ndim == 1 for b in blocks):
        return np.array(blocks)
    return np.concatenate([b if b.ndim == 2 else b[None] for b in blocks])
