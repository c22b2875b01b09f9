"""Rules of the runtime's helpers (cpsad/runtime.py) that add, route and reshape adjoints and
tangents: ``acc``, ``unbroadcast``, ``broadcast_like``, ``item_adjoint``, ``getitem_adjoint``,
``unpack_adjoint``, ``entries_adjoint``, ``without``, ``Sparse``, ...

Every helper here is linear in the adjoint or tangent it takes (``c``, ``v``, ``h``, ...; both
of ``acc``'s terms; ``as_array`` and ``on_device_of`` are the identity in the value they
convert), and its other parameters give only shapes, keys and positions: they are discrete. Its
tangent rule is the helper itself applied to ``t`` (``t`` broadcast to the result, for ``acc``'s
sums); its adjoint rule is its transpose. A transpose that is no helper already
(``read_adjoint``, ``read_items``, ``unpacked``, ``placed``, ``repeated``) is defined here, its
adjoint rule the helper it transposes, so every rule here calls only functions that have rules.
(``foreign`` and ``maybe_any`` ask what a value is: non-differentiable.)
"""

from __future__ import annotations

import numpy as np

from cpsad.rules import joining as jn
from cpsad.rules.core import broadcast_like, defjvp, defnondiff, defvjp
from cpsad.runtime import (
    Sparse,
    acc,
    acc_into,
    add_left,
    add_right,
    add_tangent,
    as_adjoint,
    as_array,
    entries_adjoint,
    foreign,
    getitem_adjoint,
    item_adjoint,
    items_adjoint,
    maybe_any,
    on_device_of,
    read_at,
    repeat_adjoint,
    tangent_add,
    tangent_or_zeros,
    unbroadcast,
    unpack_adjoint,
    without,
    zeros_like,
)

defnondiff(foreign, maybe_any)


def as_array_x(g, ans, x):
    """``as_array`` is ``np.asarray``, which an array of another library passes through: the
    adjoint of its argument is ``np.asarray``'s -- of a list, its entries' parts."""
    return jn.parts(g, x)


defvjp(as_array, as_array_x)


def as_array_x_jvp(t, ans, x):
    return as_array(t)


defjvp(as_array, as_array_x_jvp)


def on_device_of_c(g, ans, c, x):
    """``on_device_of(c, x)`` moves a numpy ``c`` to ``x``'s library, values unchanged: the
    adjoint of ``c`` is ``g``'s parts (on that library: the gradient of a numpy argument of a
    function computed on Dask or CuPy arrays is one of theirs, as a product's is)."""
    return jn.parts(g, c)


defvjp(on_device_of, c=on_device_of_c)


def on_device_of_c_jvp(t, ans, c, x):
    return on_device_of(t, x)


defjvp(on_device_of, c=on_device_of_c_jvp)


def acc_a(g, ans, a, b):
    return unbroadcast(g, a)


def acc_b(g, ans, a, b):
    return unbroadcast(g, b)


defvjp(acc, acc_a, acc_b)


def acc_a_jvp(t, ans, a, b):
    """``None`` (no adjoint yet) has the tangent ``None``: zero."""
    return broadcast_like(t, ans)


def acc_b_jvp(t, ans, a, b):
    return broadcast_like(t, ans)


defjvp(acc, acc_a_jvp, acc_b_jvp)

# tangent_add is acc for the tangents of containers: the same rules
defvjp(tangent_add, acc_a, acc_b)
defjvp(tangent_add, acc_a_jvp, acc_b_jvp)
# (a backward loop's acc_into is acc's sum, added in place where nothing else sees it)
defvjp(acc_into, acc_a, acc_b)
defjvp(acc_into, acc_a_jvp, acc_b_jvp)


def unbroadcast_c(g, ans, c, x):
    """``unbroadcast`` sums ``c`` down to ``x``'s shape: its transpose broadcasts back up."""
    return broadcast_like(g, c)


defvjp(unbroadcast, c=unbroadcast_c)


def unbroadcast_c_jvp(t, ans, c, x):
    return unbroadcast(t, x)


defjvp(unbroadcast, c=unbroadcast_c_jvp)


def broadcast_like_v(g, ans, v, out):
    return unbroadcast(g, v)


defvjp(broadcast_like, v=broadcast_like_v)


def broadcast_like_v_jvp(t, ans, v, out):
    return broadcast_like(t, out)


defjvp(broadcast_like, v=broadcast_like_v_jvp)


def item_adjoint_c(g, ans, c, key, x):
    """The entry ``key`` of a container's adjoint ``c``: its adjoint has ``g`` there."""
    return getitem_adjoint(g, c, key)


defvjp(item_adjoint, c=item_adjoint_c)


def item_adjoint_c_jvp(t, ans, c, key, x):
    return item_adjoint(t, key, x)


defjvp(item_adjoint, c=item_adjoint_c_jvp)


def read_adjoint(h, c, x, index):
    """The transpose of ``getitem_adjoint(c, x, index)`` in ``c``: the part of ``h``, an adjoint of
    ``x``, that belongs to ``x[index]``, in the form of ``c`` (zeros where ``h`` has none)."""
    if h is None:
        return zeros_like(c)
    if isinstance(x, np.ndarray):
        return unbroadcast(read_at(as_array(h), index), c)
    if foreign(x):  # (Dask: an index of several arrays read by one take)
        return unbroadcast(read_at(h, index), c)
    if isinstance(x, (list, tuple)) and isinstance(index, slice):
        positions = range(len(x))[index]
        if isinstance(c, np.ndarray):
            rows = [item_adjoint(h, p, c[i]) for i, p in enumerate(positions)]
            return np.stack(rows) if rows else zeros_like(c)
        keys = c if isinstance(c, dict) else range(len(c))
        return Sparse({i: item_adjoint(h, positions[i], c[i]) for i in keys})
    if isinstance(x, (list, tuple)):
        index = range(len(x))[index]
    return item_adjoint(h, index, c)


def getitem_adjoint_c(g, ans, c, x, index):
    return read_adjoint(g, c, x, index)


defvjp(getitem_adjoint, c=getitem_adjoint_c)


def getitem_adjoint_c_jvp(t, ans, c, x, index):
    return getitem_adjoint(t, x, index)


defjvp(getitem_adjoint, c=getitem_adjoint_c_jvp)


def read_items(h, cs, x):
    """The transpose of ``items_adjoint(x, cs)`` in ``cs``: each entry's part of ``h``, an
    adjoint of ``x``, keyed as ``cs`` is (``read_adjoint`` of each)."""
    return Sparse({k: read_adjoint(h, c, x, k) for k, c in cs.items()})


def items_adjoint_adjoints(g, ans, x, adjoints):
    return read_items(g, adjoints, x)


defvjp(items_adjoint, adjoints=items_adjoint_adjoints)


def items_adjoint_adjoints_jvp(t, ans, x, adjoints):
    return items_adjoint(x, t)


defjvp(items_adjoint, adjoints=items_adjoint_adjoints_jvp)


def read_items_h(g, ans, h, cs, x):
    return items_adjoint(x, g)


defvjp(read_items, h=read_items_h)


def read_items_h_jvp(t, ans, h, cs, x):
    return read_items(t, cs, x)


defjvp(read_items, h=read_items_h_jvp)


def read_adjoint_h(g, ans, h, c, x, index):
    return getitem_adjoint(g, x, index)


defvjp(read_adjoint, h=read_adjoint_h)


def read_adjoint_h_jvp(t, ans, h, c, x, index):
    return read_adjoint(t, c, x, index)


defjvp(read_adjoint, h=read_adjoint_h_jvp)


def unpacked(h, gs, x):
    """The transpose of ``unpack_adjoint(gs, x)`` in ``gs``: the entries of ``h`` (an adjoint of
    ``x``) that belong to the targets that had one. ``gs`` may be a ``Sparse`` of them, as
    ``unpack_adjoint`` takes it (code transformed again passes the adjoint of a tuple of
    adjoints there): its keys are the positions -- enumerated, its first key was read as
    target 0's adjoint and the entry at its own position was lost (a silent wrong fourth
    derivative)."""
    entries = gs.items() if isinstance(gs, dict) else enumerate(gs)
    return Sparse({i: item_adjoint(h, i, g) for i, g in entries if g is not None})


def unpack_adjoint_gs(g, ans, gs, x):
    return unpacked(g, gs, x)


defvjp(unpack_adjoint, gs=unpack_adjoint_gs)


def unpack_adjoint_gs_jvp(t, ans, gs, x):
    """``t`` is the tuple of the targets' adjoints' tangents (None where a target had none)."""
    return unpack_adjoint(t, x)


defjvp(unpack_adjoint, gs=unpack_adjoint_gs_jvp)


def unpacked_h(g, ans, h, gs, x):
    return unpack_adjoint(g, x)


defvjp(unpacked, h=unpacked_h)


def unpacked_h_jvp(t, ans, h, gs, x):
    return unpacked(t, gs, x)


defjvp(unpacked, h=unpacked_h_jvp)


def placed(h, c, start, xs):
    """The transpose of ``entries_adjoint(c, start, xs)`` in ``c``: the adjoints ``h`` of the
    entries ``lst.extend(xs)`` added, back at their places in the list's adjoint (``c``'s form)."""
    n = len(xs)
    if isinstance(c, np.ndarray):
        out = np.zeros(c.shape, np.result_type(c))
        for i in range(n):
            out[start + i] = item_adjoint(h, i, xs[i])
        return out
    return Sparse({start + i: item_adjoint(h, i, xs[i]) for i in range(n)})


def entries_adjoint_c(g, ans, c, start, xs):
    return placed(g, c, start, xs)


defvjp(entries_adjoint, c=entries_adjoint_c)


def entries_adjoint_c_jvp(t, ans, c, start, xs):
    return entries_adjoint(t, start, xs)


defjvp(entries_adjoint, c=entries_adjoint_c_jvp)


# `x + y` of values that may be lists (add_left, add_right): their entries, or unbroadcast


def add_left_c(g, ans, c, x, y):
    return (
        placed(g, c, 0, x)
        if isinstance(x, (list, tuple)) and isinstance(y, (list, tuple))
        else broadcast_like(g, c)
    )


def add_right_c(g, ans, c, x, y):
    return (
        placed(g, c, len(x), y)
        if isinstance(x, (list, tuple)) and isinstance(y, (list, tuple))
        else broadcast_like(g, c)
    )


defvjp(add_left, c=add_left_c)
defvjp(add_right, c=add_right_c)


def add_left_c_jvp(t, ans, c, x, y):
    return add_left(t, x, y)


def add_right_c_jvp(t, ans, c, x, y):
    return add_right(t, x, y)


defjvp(add_left, c=add_left_c_jvp)
defjvp(add_right, c=add_right_c_jvp)


def add_tangent_v(g, ans, v, out, x, y, right):
    return (add_right if right else add_left)(g, x, y)


defvjp(add_tangent, v=add_tangent_v)


def add_tangent_v_jvp(t, ans, v, out, x, y, right):
    return add_tangent(t, out, x, y, right)


defjvp(add_tangent, v=add_tangent_v_jvp)


def repeated(h, c, seq, n):
    """The transpose of ``repeat_adjoint(c, seq, n)`` in ``c``: ``h`` at every copy's place."""
    total = None
    for copy in range(max(int(n), 0)):
        total = acc(total, placed(h, c, copy * len(seq), seq))
    return Sparse() if total is None else total


def repeat_adjoint_c(g, ans, c, seq, n):
    return repeated(g, c, seq, n)


defvjp(repeat_adjoint, c=repeat_adjoint_c)


def repeat_adjoint_c_jvp(t, ans, c, seq, n):
    return repeat_adjoint(t, seq, n)


defjvp(repeat_adjoint, c=repeat_adjoint_c_jvp)


def repeated_h(g, ans, h, c, seq, n):
    return repeat_adjoint(g, seq, n)


defvjp(repeated, h=repeated_h)


def repeated_h_jvp(t, ans, h, c, seq, n):
    return repeated(t, c, seq, n)


defjvp(repeated, h=repeated_h_jvp)


def placed_h(g, ans, h, c, start, xs):
    return entries_adjoint(g, start, xs)


defvjp(placed, h=placed_h)


def placed_h_jvp(t, ans, h, c, start, xs):
    return placed(t, c, start, xs)


defjvp(placed, h=placed_h_jvp)


def without_c(g, ans, c, key):
    """Removing an entry is a projection: its own transpose."""
    return without(g, key)


defvjp(without, c=without_c)


def without_c_jvp(t, ans, c, key):
    return without(t, key)


defjvp(without, c=without_c_jvp)


def tangent_or_zeros_v(g, ans, v, x):
    return unbroadcast(g, v)


defvjp(tangent_or_zeros, v=tangent_or_zeros_v)


def tangent_or_zeros_v_jvp(t, ans, v, x):
    return tangent_or_zeros(t, ans)


defjvp(tangent_or_zeros, v=tangent_or_zeros_v_jvp)


def as_adjoint_ct(g, ans, ct):
    """A container's adjoint is a ``Sparse``: ``g`` already is the adjoint of ``ct``."""
    return g


defvjp(as_adjoint, ct=as_adjoint_ct)


def as_adjoint_ct_jvp(t, ans, ct):
    return as_adjoint(t)


defjvp(as_adjoint, ct=as_adjoint_ct_jvp)


def sparse_entries(g, ans, entries=()):
    """``Sparse({1: g})``: the same entries."""
    return g


defvjp(Sparse, entries=sparse_entries)


def sparse_entries_jvp(t, ans, entries=()):
    return Sparse(t)


defjvp(Sparse, entries=sparse_entries_jvp)
