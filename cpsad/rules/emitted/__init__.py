"""Rules of the functions emitted code calls: what makes emitted code differentiable again.

A backpropagator calls, by name, the runtime's helpers (``acc``, ``unbroadcast``,
``getitem_adjoint``, ...) and the rule functions that are not inlined (``matmul_x``, ``max_vjp``,
``cholesky_vjp``, ...); a forward-mode function calls ``broadcast_like``, ``tangent_or_zeros``, ...
To transform emitted code again -- ``grad(grad(f))``, Hessian-vector products -- each of those
needs rules of its own, in both directions, or is marked non-differentiable (``count``,
``zeros_like``: their results do not change with their inputs' values).

Most of them are linear in the adjoint (or tangent) they take, and every primitive's adjoint and
tangent rules are transposes of each other: the rule of ``max_vjp`` with respect to its ``g`` is
``max_vjp`` itself forward and ``max_jvp`` backward. The primal values a helper takes (``x``,
``ans``) are ordinary inputs of a numpy function here: where the helper reads only their shape or
which element was chosen, they are discrete; otherwise they get the helper's partial derivatives.
Where the helper switches formulas at zeros (``prod_vjp``, ``cumprod``), the partial derivatives
hold the zeros' positions fixed, and the derivative along a zero reaches the result through
``ans``: the two add up to the derivative of the helper along ``ans = f(x)``.

The parameters of a helper named ``g``, ``ans`` and ``t`` (which a rule's own first two parameters
are called) are ``c``, ``out`` and ``v`` here. A ``Sparse`` (a container's adjoint) has as its
adjoint and tangent a ``Sparse``; ``None`` (an absent adjoint) has ``None``, and is zero wherever a
rule receives it.
"""

from __future__ import annotations

import numpy as np

from cpsad.rules import containers as ct
from cpsad.rules import elementwise as el
from cpsad.rules import joining as jn
from cpsad.rules import linalg as la
from cpsad.rules import operators as op
from cpsad.rules import reductions as rd
from cpsad.rules import shape as sh
from cpsad.rules.core import broadcast_like, defjvp, defnoderivative, defnondiff, defvjp
from cpsad.runtime import (
    Sparse,
    acc,
    acc_into,
    add_left,
    add_right,
    add_tangent,
    as_adjoint,
    as_array,
    check_in_place,
    check_unchanged,
    entries_adjoint,
    foreign,
    getitem_adjoint,
    index_step,
    item_adjoint,
    items_adjoint,
    kept_copy,
    like,
    maybe_any,
    on_device_of,
    pick_into,
    read_at,
    repeat_adjoint,
    scalar_seed,
    tangent_add,
    tangent_or_zeros,
    tangent_zeros,
    unbroadcast,
    unpack_adjoint,
    without,
    zeros_like,
)

# Results that do not change with the values of the inputs: shapes, counts, zeros, masks, and
# `like`'s stand-ins, read only for their shapes; a check that returns nothing.
defnondiff(
    check_in_place,
    check_unchanged,
    kept_copy,
    zeros_like,
    index_step,
    like,
    tangent_zeros,
    jn.first_occurrences,
    scalar_seed,
    rd.count,
    jn.linspace_weights,
    la.tensordot_subscripts,
    la.inner_subscripts,
    la.dot_subscripts,
)

# =========================================================================== the runtime

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

# =========================================================================== containers


def gathered(h, c, seq):
    """The transpose of ``spread(c, seq)`` in ``c``: the entries' adjoints summed, each broadcast
    to ``c``'s shape."""
    if isinstance(seq, np.ndarray):
        return unbroadcast(np.sum(h, axis=0), c)
    total = None
    for i, v in enumerate(seq):
        total = acc(total, broadcast_like(item_adjoint(h, i, v), c))
    return zeros_like(c) if total is None else total


def spread_c(g, ans, c, seq):
    return gathered(g, c, seq)


defvjp(ct.spread, c=spread_c)


def spread_c_jvp(t, ans, c, seq):
    return ct.spread(t, seq)


defjvp(ct.spread, c=spread_c_jvp)


def gathered_h(g, ans, h, c, seq):
    return ct.spread(g, seq)


defvjp(gathered, h=gathered_h)


def gathered_h_jvp(t, ans, h, c, seq):
    return gathered(t, c, seq)


defjvp(gathered, h=gathered_h_jvp)


def list_builtin_t(h, c, iterable):
    """The transpose of ``list_builtin(c, out, iterable)`` in ``c``: the rows of ``h`` that ``c``
    had where a ``Sparse`` became an array, else ``h``."""
    if isinstance(iterable, np.ndarray) and isinstance(c, dict):
        return Sparse({i: h[i] for i in c})
    return h


def list_builtin_c(g, ans, c, out, iterable=()):
    return list_builtin_t(g, c, iterable)


defvjp(ct.list_builtin, c=list_builtin_c)


def list_builtin_c_jvp(t, ans, c, out, iterable=()):
    return ct.list_builtin(t, out, iterable)


defjvp(ct.list_builtin, c=list_builtin_c_jvp)


def list_builtin_t_h(g, ans, h, c, iterable):
    return ct.list_builtin(g, None, iterable)


defvjp(list_builtin_t, h=list_builtin_t_h)


def list_builtin_t_h_jvp(t, ans, h, c, iterable):
    return list_builtin_t(t, c, iterable)


defjvp(list_builtin_t, h=list_builtin_t_h_jvp)


def max_builtin_t(h, c, out, *items):
    """The transpose of ``max_builtin(c, out, *items)`` in ``c``: the adjoint of the entry that
    was chosen, read from ``h``, the adjoint of the tuple of the items' adjoints."""
    if len(items) > 1:
        return item_adjoint(h, ct.chosen(items, out), c)
    i, entries = ct.chosen(items[0], out), item_adjoint(h, 0, None)
    if foreign(i) and isinstance(entries, np.ndarray):  # (a position found on Dask or CuPy)
        entries = on_device_of(entries, i)
    return item_adjoint(entries, i, c)


def max_builtin_c(g, ans, c, out, *items):
    return max_builtin_t(g, c, out, *items)


defvjp(ct.max_builtin, c=max_builtin_c)


def max_builtin_c_jvp(t, ans, c, out, *items):
    return ct.max_builtin(t, out, *items)


defjvp(ct.max_builtin, c=max_builtin_c_jvp)


def max_builtin_t_h(g, ans, h, c, out, *items):
    return as_adjoint(ct.max_builtin(g, out, *items))


defvjp(max_builtin_t, h=max_builtin_t_h)


def max_builtin_t_h_jvp(t, ans, h, c, out, *items):
    return max_builtin_t(t, c, out, *items)


defjvp(max_builtin_t, h=max_builtin_t_h_jvp)


def max_builtin_jvp_v(g, ans, v, out, *items):
    return as_adjoint(ct.max_builtin(g, out, *items))


defvjp(ct.max_builtin_jvp, v=max_builtin_jvp_v)


def max_builtin_jvp_v_jvp(t, ans, v, out, *items):
    return ct.max_builtin_jvp(t, out, *items)


defjvp(ct.max_builtin_jvp, v=max_builtin_jvp_v_jvp)


def with_entry_container(g, ans, container, key, value):
    return without(g, key)


def with_entry_value(g, ans, container, key, value):
    return item_adjoint(g, key, value)


defvjp(op.with_entry, container=with_entry_container, value=with_entry_value)


def with_entry_container_jvp(t, ans, container, key, value):
    return op.with_entry(t, key, tangent_zeros(value))


def with_entry_value_jvp(t, ans, container, key, value):
    return op.with_entry(tangent_zeros(ans), key, t)


defjvp(op.with_entry, container=with_entry_container_jvp, value=with_entry_value_jvp)


def pair_like_first(g, ans, out, first, second):
    return item_adjoint(g, 0, first)


def pair_like_second(g, ans, out, first, second):
    return item_adjoint(g, 1, second)


defvjp(la.pair_like, first=pair_like_first, second=pair_like_second)


def pair_like_first_jvp(t, ans, out, first, second):
    return la.pair_like(out, t, tangent_zeros(second))


def pair_like_second_jvp(t, ans, out, first, second):
    return la.pair_like(out, tangent_zeros(first), t)


defjvp(la.pair_like, first=pair_like_first_jvp, second=pair_like_second_jvp)


def split_ties_picked(g, ans, picked, c, x, y):
    """``split_ties`` keeps ``picked`` but where ``x == y``, and puts half of ``c`` there."""
    return el.split_ties(g, 0.0 * g, x, y)


def split_ties_c(g, ans, picked, c, x, y):
    return el.split_ties(0.0 * g, g, x, y)


defvjp(el.split_ties, picked=split_ties_picked, c=split_ties_c)


def split_ties_picked_jvp(t, ans, picked, c, x, y):
    return el.split_ties(t, 0.0 * t, x, y)


def split_ties_c_jvp(t, ans, picked, c, x, y):
    return el.split_ties(0.0 * t, t, x, y)


defjvp(el.split_ties, picked=split_ties_picked_jvp, c=split_ties_c_jvp)


def pick_into_c(g, ans, c, keep, x, y):
    """``pick_into`` is ``split_ties(c * keep, c, x, y)``, whatever memory it writes: linear in
    its adjoint argument ``c``, and its own transpose (but for a ``keep`` that broadcast ``c``
    up)."""
    return unbroadcast(el.split_ties(g * keep, g, x, y), c)


defvjp(pick_into, c=pick_into_c)


def pick_into_c_jvp(t, ans, c, keep, x, y):
    return el.split_ties(t * keep, t, x, y)


defjvp(pick_into, c=pick_into_c_jvp)


# =========================================================================== arrays in parts


def unparts(h, c, x):
    """The transpose of ``parts(c, x)`` in ``c``: the parts' adjoints ``h`` (nested ``Sparse``)
    as one array of ``c``'s shape and type, zeros where a part has none."""
    if h is None:
        return zeros_like(c)
    if isinstance(x, (list, tuple)):
        rows = [unparts(item_adjoint(h, i, None), c[i], v) for i, v in enumerate(x)]
        return np.stack(rows) if rows else zeros_like(c)
    return as_array(h).astype(np.result_type(c), copy=False)


def parts_c(g, ans, c, x):
    return unparts(g, c, x)


defvjp(jn.parts, c=parts_c)


def parts_c_jvp(t, ans, c, x):
    return jn.parts(t, x)


defjvp(jn.parts, c=parts_c_jvp)


def unparts_h(g, ans, h, c, x):
    return jn.parts(g, x)


defvjp(unparts, h=unparts_h)


def unparts_h_jvp(t, ans, h, c, x):
    return unparts(t, c, x)


defjvp(unparts, h=unparts_h_jvp)


def entries(h, xs):
    """The list of the adjoints of ``xs``'s entries from their container's adjoint ``h``, zeros
    where it has none: what joining them back (``np.concatenate``) takes."""
    return [item_adjoint(h, i, x) for i, x in enumerate(xs)]


def entries_h(g, ans, h, xs):
    """``g`` is the adjoint of the list, a ``Sparse``: in ``h``'s form (an array's rows: an
    array)."""
    return unpack_adjoint(g, h)


defvjp(entries, h=entries_h)


def entries_h_jvp(t, ans, h, xs):
    return entries(t, xs)


defjvp(entries, h=entries_h_jvp)


def concatenate_vjp_c(g, ans, c, out, arrays, axis=0):
    return np.concatenate(entries(g, arrays), axis=axis)


defvjp(jn.concatenate_vjp, c=concatenate_vjp_c)


def concatenate_vjp_c_jvp(t, ans, c, out, arrays, axis=0):
    return jn.concatenate_vjp(t, out, arrays, axis=axis)


defjvp(jn.concatenate_vjp, c=concatenate_vjp_c_jvp)


def stack_vjp_c(g, ans, c, out, arrays, axis=0):
    return np.stack(entries(g, arrays), axis=axis)


defvjp(jn.stack_vjp, c=stack_vjp_c)


def stack_vjp_c_jvp(t, ans, c, out, arrays, axis=0):
    return jn.stack_vjp(t, out, arrays, axis=axis)


defjvp(jn.stack_vjp, c=stack_vjp_c_jvp)


def hstack_vjp_c(g, ans, c, out, tup):
    return np.hstack(entries(g, tup))


defvjp(jn.hstack_vjp, c=hstack_vjp_c)


def hstack_vjp_c_jvp(t, ans, c, out, tup):
    return jn.hstack_vjp(t, out, tup)


defjvp(jn.hstack_vjp, c=hstack_vjp_c_jvp)


def vstack_vjp_c(g, ans, c, out, tup):
    return np.vstack(entries(g, tup))


defvjp(jn.vstack_vjp, c=vstack_vjp_c)


def vstack_vjp_c_jvp(t, ans, c, out, tup):
    return jn.vstack_vjp(t, out, tup)


defjvp(jn.vstack_vjp, c=vstack_vjp_c_jvp)


def column_stack_vjp_c(g, ans, c, out, tup):
    return np.column_stack(entries(g, tup))


defvjp(jn.column_stack_vjp, c=column_stack_vjp_c)


def column_stack_vjp_c_jvp(t, ans, c, out, tup):
    return jn.column_stack_vjp(t, out, tup)


defjvp(jn.column_stack_vjp, c=column_stack_vjp_c_jvp)


def dstack_vjp_c(g, ans, c, out, tup):
    return np.dstack(entries(g, tup))


defvjp(jn.dstack_vjp, c=dstack_vjp_c)


def dstack_vjp_c_jvp(t, ans, c, out, tup):
    return jn.dstack_vjp(t, out, tup)


defjvp(jn.dstack_vjp, c=dstack_vjp_c_jvp)


def split_vjp_c(g, ans, c, out, ary, indices_or_sections, axis=0):
    """The parts' adjoints: ``g`` cut where ``np.split`` cut (``array_split`` cuts the same)."""
    return as_adjoint(np.array_split(g, indices_or_sections, axis=axis))


defvjp(jn.split_vjp, c=split_vjp_c)


def split_vjp_c_jvp(t, ans, c, out, ary, indices_or_sections, axis=0):
    return jn.split_vjp(t, out, ary, indices_or_sections, axis=axis)


defjvp(jn.split_vjp, c=split_vjp_c_jvp)


def repeat_vjp_c(g, ans, c, out, a, repeats, axis=None):
    return np.repeat(g, repeats, axis=axis)


defvjp(jn.repeat_vjp, c=repeat_vjp_c)


def repeat_vjp_c_jvp(t, ans, c, out, a, repeats, axis=None):
    return jn.repeat_vjp(t, out, a, repeats, axis=axis)


defjvp(jn.repeat_vjp, c=repeat_vjp_c_jvp)


def tile_vjp_c(g, ans, c, out, A, reps):
    return np.tile(g, reps)


defvjp(jn.tile_vjp, c=tile_vjp_c)


def tile_vjp_c_jvp(t, ans, c, out, A, reps):
    return jn.tile_vjp(t, out, A, reps)


defjvp(jn.tile_vjp, c=tile_vjp_c_jvp)


# index_concatenated_vjp(c, out, key, concat) -- the blocks of np.r_'s adjoint -- and
# index_concatenated_jvp(v, key, concat) -- np.r_ of the items' tangents -- are linear in c (v),
# and each other's transposes; key and concat give only shapes.


def index_concatenated_vjp_c(g, ans, c, out, key, concat):
    return jn.index_concatenated_jvp(g, key, concat)


defvjp(jn.index_concatenated_vjp, c=index_concatenated_vjp_c)


def index_concatenated_vjp_c_jvp(t, ans, c, out, key, concat):
    return jn.index_concatenated_vjp(t, out, key, concat)


defjvp(jn.index_concatenated_vjp, c=index_concatenated_vjp_c_jvp)


def index_concatenated_jvp_v(g, ans, v, key, concat):
    return jn.index_concatenated_vjp(g, ans, key, concat)


defvjp(jn.index_concatenated_jvp, v=index_concatenated_jvp_v)


def index_concatenated_jvp_v_jvp(t, ans, v, key, concat):
    return jn.index_concatenated_jvp(t, key, concat)


defjvp(jn.index_concatenated_jvp, v=index_concatenated_jvp_v_jvp)


def pad_vjp_c(g, ans, c, out, array, pad_width, mode="constant", *, constant_values=0):
    """Cutting the padding off (or summing the copies) transposes to padding with zeros (or
    copying)."""
    return np.pad(g, pad_width, mode)


defvjp(jn.pad_vjp, c=pad_vjp_c)


def pad_vjp_c_jvp(t, ans, c, out, array, pad_width, mode="constant", *, constant_values=0):
    return jn.pad_vjp(t, out, array, pad_width, mode, constant_values=constant_values)


defjvp(jn.pad_vjp, c=pad_vjp_c_jvp)


def pad_jvp_v(g, ans, v, out, array, pad_width, mode="constant", *, constant_values=0):
    return jn.pad_vjp(g, out, array, pad_width, mode, constant_values=constant_values)


defvjp(jn.pad_jvp, v=pad_jvp_v)


def pad_jvp_v_jvp(t, ans, v, out, array, pad_width, mode="constant", *, constant_values=0):
    return jn.pad_jvp(t, out, array, pad_width, mode, constant_values=constant_values)


defjvp(jn.pad_jvp, v=pad_jvp_v_jvp)


def take_vjp_c(g, ans, c, out, a, indices, axis=None):
    return np.take(g, indices, axis=axis)


defvjp(jn.take_vjp, c=take_vjp_c)


def take_vjp_c_jvp(t, ans, c, out, a, indices, axis=None):
    return jn.take_vjp(t, out, a, indices, axis=axis)


defjvp(jn.take_vjp, c=take_vjp_c_jvp)


def take_along_axis_vjp_c(g, ans, c, out, arr, indices, axis=-1):
    return np.take_along_axis(g, indices, axis)


defvjp(jn.take_along_axis_vjp, c=take_along_axis_vjp_c)


def take_along_axis_vjp_c_jvp(t, ans, c, out, arr, indices, axis=-1):
    return jn.take_along_axis_vjp(t, out, arr, indices, axis=axis)


defjvp(jn.take_along_axis_vjp, c=take_along_axis_vjp_c_jvp)


def sort_vjp_c(g, ans, c, out, a, axis=-1):
    """The order of ``a`` is discrete: only the adjoint moves, and back is forward's gather."""
    return np.take_along_axis(g, np.argsort(a, axis=axis), axis)


defvjp(jn.sort_vjp, c=sort_vjp_c)


def sort_vjp_c_jvp(t, ans, c, out, a, axis=-1):
    return jn.sort_vjp(t, out, a, axis=axis)


defjvp(jn.sort_vjp, c=sort_vjp_c_jvp)


def unique_vjp_c(g, ans, c, out, ar):
    return np.ravel(g)[jn.first_occurrences(ar)]


defvjp(jn.unique_vjp, c=unique_vjp_c)


def unique_vjp_c_jvp(t, ans, c, out, ar):
    return jn.unique_vjp(t, out, ar)


defjvp(jn.unique_vjp, c=unique_vjp_c_jvp)

# The histogram's rules, called by name: a second derivative through them is an error (their
# parameters have no derivative here), not a number.
for _fn in (
    jn.histogram_a,
    jn.histogram_weights,
    jn.histogram_a_jvp,
    jn.histogram_weights_jvp,
    jn.histogram_bin_edges_a,
    jn.histogram_bin_edges_a_jvp,
):
    defnoderivative(_fn, _fn)

# =========================================================================== shapes


def inverse_axes(axes, ndim):
    """The axes of ``untranspose`` that undo ``untranspose(x, axes)`` (either form of ``axes``)."""
    if axes is not None and len(axes) == 1 and np.ndim(axes[0]) == 1:
        axes = axes[0]
    if axes is None or len(axes) == 0 or axes[0] is None:
        return axes  # reversing all axes undoes itself
    return tuple(int(i) for i in np.argsort(np.mod(axes, ndim)))


defnondiff(inverse_axes)


def untranspose_c(g, ans, c, axes=None):
    return sh.untranspose(g, inverse_axes(axes, np.ndim(g)))


defvjp(sh.untranspose, c=untranspose_c)


def untranspose_c_jvp(t, ans, c, axes=None):
    return sh.untranspose(t, axes)


defjvp(sh.untranspose, c=untranspose_c_jvp)


def mT_x(g, ans, x):
    return la.mT(g)


defvjp(la.mT, mT_x)


def mT_x_jvp(t, ans, x):
    return la.mT(t)


defjvp(la.mT, mT_x_jvp)


def diagonal_vjp_c(g, ans, c, out, a, offset=0, axis1=0, axis2=1):
    return np.diagonal(g, offset, axis1, axis2)


defvjp(la.diagonal_vjp, c=diagonal_vjp_c)


def diagonal_vjp_c_jvp(t, ans, c, out, a, offset=0, axis1=0, axis2=1):
    return la.diagonal_vjp(t, out, a, offset=offset, axis1=axis1, axis2=axis2)


defjvp(la.diagonal_vjp, c=diagonal_vjp_c_jvp)


def trace_vjp_c(g, ans, c, out, a, offset=0, axis1=0, axis2=1):
    return np.trace(g, offset, axis1, axis2)


defvjp(la.trace_vjp, c=trace_vjp_c)


def trace_vjp_c_jvp(t, ans, c, out, a, offset=0, axis1=0, axis2=1):
    return la.trace_vjp(t, out, a, offset=offset, axis1=axis1, axis2=axis2)


defjvp(la.trace_vjp, c=trace_vjp_c_jvp)

# =========================================================================== reductions


def expand_c(g, ans, c, x, axis=None, keepdims=False):
    """Broadcasting over the reduced axes transposes to summing over them."""
    return unbroadcast(np.sum(g, axis=axis, keepdims=keepdims), c)


defvjp(rd.expand, c=expand_c)


def expand_c_jvp(t, ans, c, x, axis=None, keepdims=False):
    return rd.expand(t, x, axis=axis, keepdims=keepdims)


defjvp(rd.expand, c=expand_c_jvp)


def max_vjp_c(g, ans, c, out, a, axis=None, *, keepdims=False):
    """Which elements are maximal is discrete: ``out`` and ``a`` have no derivative here."""
    return rd.max_jvp(g, out, a, axis=axis, keepdims=keepdims)


defvjp(rd.max_vjp, c=max_vjp_c)


def max_vjp_c_jvp(t, ans, c, out, a, axis=None, *, keepdims=False):
    return rd.max_vjp(t, out, a, axis=axis, keepdims=keepdims)


defjvp(rd.max_vjp, c=max_vjp_c_jvp)


def max_jvp_v(g, ans, v, out, a, axis=None, *, keepdims=False):
    return rd.max_vjp(g, out, a, axis=axis, keepdims=keepdims)


defvjp(rd.max_jvp, v=max_jvp_v)


def max_jvp_v_jvp(t, ans, v, out, a, axis=None, *, keepdims=False):
    return rd.max_jvp(t, out, a, axis=axis, keepdims=keepdims)


defjvp(rd.max_jvp, v=max_jvp_v_jvp)


def var_vjp_c(g, ans, c, out, a, axis=None, *, ddof=0, keepdims=False):
    return rd.var_jvp(g, out, a, axis=axis, ddof=ddof, keepdims=keepdims)


def var_vjp_a(g, ans, c, out, a, axis=None, *, ddof=0, keepdims=False):
    """``var_vjp`` is ``2 expand(c) (a - mean(a)) / (n - ddof)``, linear in ``a``; centring is
    its own transpose."""
    return rd.var_vjp(
        np.ones_like(c),
        out,
        rd.expand(c, a, axis=axis, keepdims=keepdims) * g,
        axis=axis,
        ddof=ddof,
        keepdims=keepdims,
    )


defvjp(rd.var_vjp, c=var_vjp_c, a=var_vjp_a)


def var_vjp_c_jvp(t, ans, c, out, a, axis=None, *, ddof=0, keepdims=False):
    return rd.var_vjp(t, out, a, axis=axis, ddof=ddof, keepdims=keepdims)


def var_vjp_a_jvp(t, ans, c, out, a, axis=None, *, ddof=0, keepdims=False):
    return rd.var_vjp(c, out, t, axis=axis, ddof=ddof, keepdims=keepdims)


defjvp(rd.var_vjp, c=var_vjp_c_jvp, a=var_vjp_a_jvp)


def var_jvp_v(g, ans, v, out, a, axis=None, *, ddof=0, keepdims=False):
    return rd.var_vjp(g, out, a, axis=axis, ddof=ddof, keepdims=keepdims)


def var_jvp_a(g, ans, v, out, a, axis=None, *, ddof=0, keepdims=False):
    return rd.var_vjp(
        np.ones_like(g),
        out,
        rd.expand(g, a, axis=axis, keepdims=keepdims) * v,
        axis=axis,
        ddof=ddof,
        keepdims=keepdims,
    )


defvjp(rd.var_jvp, v=var_jvp_v, a=var_jvp_a)


def var_jvp_v_jvp(t, ans, v, out, a, axis=None, *, ddof=0, keepdims=False):
    return rd.var_jvp(t, out, a, axis=axis, ddof=ddof, keepdims=keepdims)


def var_jvp_a_jvp(t, ans, v, out, a, axis=None, *, ddof=0, keepdims=False):
    return rd.var_jvp(v, out, t, axis=axis, ddof=ddof, keepdims=keepdims)


defjvp(rd.var_jvp, v=var_jvp_v_jvp, a=var_jvp_a_jvp)


def std_vjp_c(g, ans, c, out, a, axis=None, *, ddof=0, keepdims=False):
    return rd.std_jvp(g, out, a, axis=axis, ddof=ddof, keepdims=keepdims)


def std_vjp_a(g, ans, c, out, a, axis=None, *, ddof=0, keepdims=False):
    """``std_vjp`` is ``expand(c / out) (a - mean(a)) / (n - ddof)``: ``c = out`` makes the first
    factor one."""
    return rd.std_vjp(
        out,
        out,
        rd.expand(c / out, a, axis=axis, keepdims=keepdims) * g,
        axis=axis,
        ddof=ddof,
        keepdims=keepdims,
    )


def std_vjp_out(g, ans, c, out, a, axis=None, *, ddof=0, keepdims=False):
    return -c * rd.std_jvp(g, out, a, axis=axis, ddof=ddof, keepdims=keepdims) / out


defvjp(rd.std_vjp, c=std_vjp_c, a=std_vjp_a, out=std_vjp_out)


def std_vjp_c_jvp(t, ans, c, out, a, axis=None, *, ddof=0, keepdims=False):
    return rd.std_vjp(t, out, a, axis=axis, ddof=ddof, keepdims=keepdims)


def std_vjp_a_jvp(t, ans, c, out, a, axis=None, *, ddof=0, keepdims=False):
    return rd.std_vjp(c, out, t, axis=axis, ddof=ddof, keepdims=keepdims)


def std_vjp_out_jvp(t, ans, c, out, a, axis=None, *, ddof=0, keepdims=False):
    return rd.std_vjp(-c * t / out, out, a, axis=axis, ddof=ddof, keepdims=keepdims)


defjvp(rd.std_vjp, c=std_vjp_c_jvp, a=std_vjp_a_jvp, out=std_vjp_out_jvp)


def std_jvp_v(g, ans, v, out, a, axis=None, *, ddof=0, keepdims=False):
    return rd.std_vjp(g, out, a, axis=axis, ddof=ddof, keepdims=keepdims)


def std_jvp_a(g, ans, v, out, a, axis=None, *, ddof=0, keepdims=False):
    return rd.std_vjp(
        out,
        out,
        rd.expand(g / out, a, axis=axis, keepdims=keepdims) * v,
        axis=axis,
        ddof=ddof,
        keepdims=keepdims,
    )


def std_jvp_out(g, ans, v, out, a, axis=None, *, ddof=0, keepdims=False):
    return -g * rd.std_jvp(v, out, a, axis=axis, ddof=ddof, keepdims=keepdims) / out


defvjp(rd.std_jvp, v=std_jvp_v, a=std_jvp_a, out=std_jvp_out)


def std_jvp_v_jvp(t, ans, v, out, a, axis=None, *, ddof=0, keepdims=False):
    return rd.std_jvp(t, out, a, axis=axis, ddof=ddof, keepdims=keepdims)


def std_jvp_a_jvp(t, ans, v, out, a, axis=None, *, ddof=0, keepdims=False):
    return rd.std_jvp(v, out, t, axis=axis, ddof=ddof, keepdims=keepdims)


def std_jvp_out_jvp(t, ans, v, out, a, axis=None, *, ddof=0, keepdims=False):
    return -t * rd.std_jvp(v, out, a, axis=axis, ddof=ddof, keepdims=keepdims) / out


defjvp(rd.std_jvp, v=std_jvp_v_jvp, a=std_jvp_a_jvp, out=std_jvp_out_jvp)


def cumsum_c(g, ans, c, out, a, axis=None):
    """A cumulative sum from the end transposes to one from the start."""
    return np.cumsum(g, axis=axis)


defvjp(rd.cumsum, c=cumsum_c)


def cumsum_c_jvp(t, ans, c, out, a, axis=None):
    return rd.cumsum(t, out, a, axis=axis)


defjvp(rd.cumsum, c=cumsum_c_jvp)


def reverse_cumsum_x(g, ans, x, axis):
    return np.cumsum(g, axis=axis)


defvjp(rd.reverse_cumsum, x=reverse_cumsum_x)


def reverse_cumsum_x_jvp(t, ans, x, axis):
    return rd.reverse_cumsum(t, axis)


defjvp(rd.reverse_cumsum, x=reverse_cumsum_x_jvp)

# =========================================================================== products


def matmul_x_c(g, ans, c, out, x, y):
    """``matmul_x`` is linear in ``c`` and in ``y``; ``x`` gives only its shape."""
    return g @ y


def matmul_x_y(g, ans, c, out, x, y):
    return op.matmul_y(c, out, g, y)


defvjp(op.matmul_x, c=matmul_x_c, y=matmul_x_y)


def matmul_x_c_jvp(t, ans, c, out, x, y):
    return op.matmul_x(t, out, x, y)


def matmul_x_y_jvp(t, ans, c, out, x, y):
    return op.matmul_x(c, out, x, t)


defjvp(op.matmul_x, c=matmul_x_c_jvp, y=matmul_x_y_jvp)


def matmul_y_c(g, ans, c, out, x, y):
    return x @ g


def matmul_y_x(g, ans, c, out, x, y):
    return op.matmul_x(c, out, x, g)


defvjp(op.matmul_y, c=matmul_y_c, x=matmul_y_x)


def matmul_y_c_jvp(t, ans, c, out, x, y):
    return op.matmul_y(t, out, x, y)


def matmul_y_x_jvp(t, ans, c, out, x, y):
    return op.matmul_y(c, out, t, y)


defjvp(op.matmul_y, c=matmul_y_c_jvp, x=matmul_y_x_jvp)


def dot_a_c(g, ans, c, out, a, b):
    return np.dot(g, b)


def dot_a_b(g, ans, c, out, a, b):
    return la.dot_b(c, out, g, b)


defvjp(la.dot_a, c=dot_a_c, b=dot_a_b)


def dot_a_c_jvp(t, ans, c, out, a, b):
    return la.dot_a(t, out, a, b)


def dot_a_b_jvp(t, ans, c, out, a, b):
    return la.dot_a(c, out, a, t)


defjvp(la.dot_a, c=dot_a_c_jvp, b=dot_a_b_jvp)


def dot_b_c(g, ans, c, out, a, b):
    return np.dot(a, g)


def dot_b_a(g, ans, c, out, a, b):
    return la.dot_a(c, out, a, g)


defvjp(la.dot_b, c=dot_b_c, a=dot_b_a)


def dot_b_c_jvp(t, ans, c, out, a, b):
    return la.dot_b(t, out, a, b)


def dot_b_a_jvp(t, ans, c, out, a, b):
    return la.dot_b(c, out, t, b)


defjvp(la.dot_b, c=dot_b_c_jvp, a=dot_b_a_jvp)

# --------------------------------------------------------------------------- contractions
# einsum_adjoint(h, subscripts, i, a, b, c, d) is multilinear in h and in every operand but the
# argument in slot i (-1 for subscripts, the sublist form's first operand; 0 to 3 for a to d), which
# gives only its shape; einsum_with(v, subscripts, i, a, b, c, d) in v and every operand but slot i
# (v takes its place). Each is the other's transpose in h (v); in the operand of slot j, the
# transpose is the adjoint of slot j of the contraction with h (v) in slot i. A slot holding a
# subscripts string or a sublist is never differentiable, and gets no derivative.


def einsum_adjoint_h(g, ans, h, subscripts, i, a, b=None, c=None, d=None, *, optimize=False):
    return la.einsum_with(g, subscripts, i, a, b, c, d, optimize=optimize)


def einsum_adjoint_s(g, ans, h, subscripts, i, a, b=None, c=None, d=None, *, optimize=False):
    return (
        zeros_like(subscripts)
        if i == -1
        else la.einsum_adjoint(
            h,
            subscripts,
            -1,
            g if i == 0 else a,
            g if i == 1 else b,
            g if i == 2 else c,
            g if i == 3 else d,
            optimize=optimize,
        )
    )


def einsum_adjoint_a(g, ans, h, subscripts, i, a, b=None, c=None, d=None, *, optimize=False):
    return (
        zeros_like(a)
        if i == 0
        else la.einsum_adjoint(
            h,
            g if i == -1 else subscripts,
            0,
            a,
            g if i == 1 else b,
            g if i == 2 else c,
            g if i == 3 else d,
            optimize=optimize,
        )
    )


def einsum_adjoint_b(g, ans, h, subscripts, i, a, b=None, c=None, d=None, *, optimize=False):
    return (
        zeros_like(b)
        if i == 1
        else la.einsum_adjoint(
            h,
            g if i == -1 else subscripts,
            1,
            g if i == 0 else a,
            b,
            g if i == 2 else c,
            g if i == 3 else d,
            optimize=optimize,
        )
    )


def einsum_adjoint_c(g, ans, h, subscripts, i, a, b=None, c=None, d=None, *, optimize=False):
    return (
        zeros_like(c)
        if i == 2
        else la.einsum_adjoint(
            h,
            g if i == -1 else subscripts,
            2,
            g if i == 0 else a,
            g if i == 1 else b,
            c,
            g if i == 3 else d,
            optimize=optimize,
        )
    )


def einsum_adjoint_d(g, ans, h, subscripts, i, a, b=None, c=None, d=None, *, optimize=False):
    return (
        zeros_like(d)
        if i == 3
        else la.einsum_adjoint(
            h,
            g if i == -1 else subscripts,
            3,
            g if i == 0 else a,
            g if i == 1 else b,
            g if i == 2 else c,
            d,
            optimize=optimize,
        )
    )


defvjp(
    la.einsum_adjoint,
    h=einsum_adjoint_h,
    subscripts=einsum_adjoint_s,
    a=einsum_adjoint_a,
    b=einsum_adjoint_b,
    c=einsum_adjoint_c,
    d=einsum_adjoint_d,
)


def einsum_adjoint_h_jvp(t, ans, h, subscripts, i, a, b=None, c=None, d=None, *, optimize=False):
    return la.einsum_adjoint(t, subscripts, i, a, b, c, d, optimize=optimize)


def einsum_adjoint_s_jvp(t, ans, h, subscripts, i, a, b=None, c=None, d=None, *, optimize=False):
    return (
        np.zeros_like(ans) if i == -1 else la.einsum_adjoint(h, t, i, a, b, c, d, optimize=optimize)
    )


def einsum_adjoint_a_jvp(t, ans, h, subscripts, i, a, b=None, c=None, d=None, *, optimize=False):
    return (
        np.zeros_like(ans)
        if i == 0
        else la.einsum_adjoint(h, subscripts, i, t, b, c, d, optimize=optimize)
    )


def einsum_adjoint_b_jvp(t, ans, h, subscripts, i, a, b=None, c=None, d=None, *, optimize=False):
    return (
        np.zeros_like(ans)
        if i == 1
        else la.einsum_adjoint(h, subscripts, i, a, t, c, d, optimize=optimize)
    )


def einsum_adjoint_c_jvp(t, ans, h, subscripts, i, a, b=None, c=None, d=None, *, optimize=False):
    return (
        np.zeros_like(ans)
        if i == 2
        else la.einsum_adjoint(h, subscripts, i, a, b, t, d, optimize=optimize)
    )


def einsum_adjoint_d_jvp(t, ans, h, subscripts, i, a, b=None, c=None, d=None, *, optimize=False):
    return (
        np.zeros_like(ans)
        if i == 3
        else la.einsum_adjoint(h, subscripts, i, a, b, c, t, optimize=optimize)
    )


defjvp(
    la.einsum_adjoint,
    h=einsum_adjoint_h_jvp,
    subscripts=einsum_adjoint_s_jvp,
    a=einsum_adjoint_a_jvp,
    b=einsum_adjoint_b_jvp,
    c=einsum_adjoint_c_jvp,
    d=einsum_adjoint_d_jvp,
)


def einsum_with_v(g, ans, v, subscripts, i, a, b=None, c=None, d=None, *, optimize=False):
    return la.einsum_adjoint(g, subscripts, i, a, b, c, d, optimize=optimize)


def einsum_with_s(g, ans, v, subscripts, i, a, b=None, c=None, d=None, *, optimize=False):
    return (
        zeros_like(subscripts)
        if i == -1
        else la.einsum_adjoint(
            g,
            subscripts,
            -1,
            v if i == 0 else a,
            v if i == 1 else b,
            v if i == 2 else c,
            v if i == 3 else d,
            optimize=optimize,
        )
    )


def einsum_with_a(g, ans, v, subscripts, i, a, b=None, c=None, d=None, *, optimize=False):
    return (
        zeros_like(a)
        if i == 0
        else la.einsum_adjoint(
            g,
            v if i == -1 else subscripts,
            0,
            a,
            v if i == 1 else b,
            v if i == 2 else c,
            v if i == 3 else d,
            optimize=optimize,
        )
    )


def einsum_with_b(g, ans, v, subscripts, i, a, b=None, c=None, d=None, *, optimize=False):
    return (
        zeros_like(b)
        if i == 1
        else la.einsum_adjoint(
            g,
            v if i == -1 else subscripts,
            1,
            v if i == 0 else a,
            b,
            v if i == 2 else c,
            v if i == 3 else d,
            optimize=optimize,
        )
    )


def einsum_with_c(g, ans, v, subscripts, i, a, b=None, c=None, d=None, *, optimize=False):
    return (
        zeros_like(c)
        if i == 2
        else la.einsum_adjoint(
            g,
            v if i == -1 else subscripts,
            2,
            v if i == 0 else a,
            v if i == 1 else b,
            c,
            v if i == 3 else d,
            optimize=optimize,
        )
    )


def einsum_with_d(g, ans, v, subscripts, i, a, b=None, c=None, d=None, *, optimize=False):
    return (
        zeros_like(d)
        if i == 3
        else la.einsum_adjoint(
            g,
            v if i == -1 else subscripts,
            3,
            v if i == 0 else a,
            v if i == 1 else b,
            v if i == 2 else c,
            d,
            optimize=optimize,
        )
    )


defvjp(
    la.einsum_with,
    v=einsum_with_v,
    subscripts=einsum_with_s,
    a=einsum_with_a,
    b=einsum_with_b,
    c=einsum_with_c,
    d=einsum_with_d,
)


def einsum_with_v_jvp(t, ans, v, subscripts, i, a, b=None, c=None, d=None, *, optimize=False):
    return la.einsum_with(t, subscripts, i, a, b, c, d, optimize=optimize)


def einsum_with_s_jvp(t, ans, v, subscripts, i, a, b=None, c=None, d=None, *, optimize=False):
    return np.zeros_like(ans) if i == -1 else la.einsum_with(v, t, i, a, b, c, d, optimize=optimize)


def einsum_with_a_jvp(t, ans, v, subscripts, i, a, b=None, c=None, d=None, *, optimize=False):
    return (
        np.zeros_like(ans)
        if i == 0
        else la.einsum_with(v, subscripts, i, t, b, c, d, optimize=optimize)
    )


def einsum_with_b_jvp(t, ans, v, subscripts, i, a, b=None, c=None, d=None, *, optimize=False):
    return (
        np.zeros_like(ans)
        if i == 1
        else la.einsum_with(v, subscripts, i, a, t, c, d, optimize=optimize)
    )


def einsum_with_c_jvp(t, ans, v, subscripts, i, a, b=None, c=None, d=None, *, optimize=False):
    return (
        np.zeros_like(ans)
        if i == 2
        else la.einsum_with(v, subscripts, i, a, b, t, d, optimize=optimize)
    )


def einsum_with_d_jvp(t, ans, v, subscripts, i, a, b=None, c=None, d=None, *, optimize=False):
    return (
        np.zeros_like(ans)
        if i == 3
        else la.einsum_with(v, subscripts, i, a, b, c, t, optimize=optimize)
    )


defjvp(
    la.einsum_with,
    v=einsum_with_v_jvp,
    subscripts=einsum_with_s_jvp,
    a=einsum_with_a_jvp,
    b=einsum_with_b_jvp,
    c=einsum_with_c_jvp,
    d=einsum_with_d_jvp,
)

# --------------------------------------------------------------------------- np.linalg.solve
# x = solve(a, b); solved(c, a, b) = solve(a.T, c), solve_a(c, x, a, b) = -solved(c) x.T,
# solve_a_jvp(v, x, a, b) = -solve(a, v x): for a vector b, x and c are vectors (stacks of them).


def transposed_times(b) -> str:
    """einsum subscripts of ``m.T @ y`` for a stack of matrices ``m`` and ``y`` shaped like
    ``solve(a, b)``: a vector when ``b`` is one."""
    return "...ji,...j->...i" if np.ndim(b) == 1 else "...ji,...jk->...ik"


def outer_times(b) -> str:
    """einsum subscripts of ``y @ z.T`` for ``y`` and ``z`` shaped like ``solve(a, b)``."""
    return "...i,...j->...ij" if np.ndim(b) == 1 else "...ik,...jk->...ij"


defnondiff(transposed_times, outer_times)


def solved_c(g, ans, c, a, b):
    return la.solved(g, la.mT(a), b)


def solved_a(g, ans, c, a, b):
    return -unbroadcast(np.einsum(outer_times(b), ans, la.solved(g, la.mT(a), b)), a)


defvjp(la.solved, c=solved_c, a=solved_a)


def solved_c_jvp(t, ans, c, a, b):
    return la.solved(t, a, b)


def solved_a_jvp(t, ans, c, a, b):
    """``d solve(a.T, c) = -solve(a.T, t.T solve(a.T, c))``."""
    return -la.solved(np.einsum(transposed_times(b), t, ans), a, b)


defjvp(la.solved, c=solved_c_jvp, a=solved_a_jvp)


def solve_a_c(g, ans, c, out, a, b):
    return la.solve_a_jvp(g, out, a, b)


def solve_a_out(g, ans, c, out, a, b):
    return unbroadcast(-np.einsum(transposed_times(b), g, la.solved(c, a, b)), out)


def solve_a_a(g, ans, c, out, a, b):
    return la.solve_a(c, la.solve_a_jvp(g, out, a, b), a, b)


defvjp(la.solve_a, c=solve_a_c, out=solve_a_out, a=solve_a_a)


def solve_a_c_jvp(t, ans, c, out, a, b):
    return la.solve_a(t, out, a, b)


def solve_a_out_jvp(t, ans, c, out, a, b):
    return la.solve_a(c, t, a, b)


def solve_a_a_jvp(t, ans, c, out, a, b):
    return la.solve_a(-np.einsum(transposed_times(b), t, la.solved(c, a, b)), out, a, b)


defjvp(la.solve_a, c=solve_a_c_jvp, out=solve_a_out_jvp, a=solve_a_a_jvp)


def solve_a_jvp_v(g, ans, v, out, a, b):
    return la.solve_a(g, out, a, b)


def solve_a_jvp_out(g, ans, v, out, a, b):
    return unbroadcast(-np.einsum(transposed_times(b), v, la.solved(g, a, b)), out)


def solve_a_jvp_a(g, ans, v, out, a, b):
    """``-solve(a, v x)`` moves with ``a`` as ``solve_a_jvp`` of the result itself."""
    return la.solve_a(g, ans, a, b)


defvjp(la.solve_a_jvp, v=solve_a_jvp_v, out=solve_a_jvp_out, a=solve_a_jvp_a)


def solve_a_jvp_v_jvp(t, ans, v, out, a, b):
    return la.solve_a_jvp(t, out, a, b)


def solve_a_jvp_out_jvp(t, ans, v, out, a, b):
    return la.solve_a_jvp(v, t, a, b)


def solve_a_jvp_a_jvp(t, ans, v, out, a, b):
    return la.solve_a_jvp(t, ans, a, b)


defjvp(la.solve_a_jvp, v=solve_a_jvp_v_jvp, out=solve_a_jvp_out_jvp, a=solve_a_jvp_a_jvp)

# --------------------------------------------------------------------------- np.linalg.cholesky
# With L lower triangular (the transpose of the factor for upper=True) and phi the lower triangle
# with half the diagonal: cholesky_vjp = sym(cholesky_s(c, L)), cholesky_s(c, L) =
# L^-T phi(L^T c) L^-1, and cholesky_jvp = cholesky_w(sym(v), L), cholesky_w(h, L) =
# L phi(L^-1 h L^-T), the transpose of cholesky_s in c. Their derivatives in L are sums of the
# same functions, solves and products: the rules close on themselves.


def phi(x):
    """The lower triangle of (a stack of) matrices with half the diagonal."""
    return np.tril(x) * (1 - 0.5 * np.eye(np.shape(x)[-1], dtype=np.result_type(x)))


def sym(x):
    """The symmetric part of (a stack of) matrices."""
    return 0.5 * (x + la.mT(x))


def lower(x, upper):
    """The lower factor from the factor ``np.linalg.cholesky`` returned (``upper``: its
    transpose), or an adjoint or tangent of one from the other's."""
    return la.mT(x) if upper else x


def cholesky_s(c, L):
    return np.linalg.solve(la.mT(L), la.mT(np.linalg.solve(la.mT(L), la.mT(phi(la.mT(L) @ c)))))


def cholesky_w(h, L):
    return L @ phi(np.linalg.solve(L, la.mT(np.linalg.solve(L, la.mT(h)))))


def phi_x(g, ans, x):
    """A mask: its own transpose."""
    return phi(g)


def phi_x_jvp(t, ans, x):
    return phi(t)


def sym_x(g, ans, x):
    return sym(g)


def sym_x_jvp(t, ans, x):
    return sym(t)


def lower_x(g, ans, x, upper):
    return lower(g, upper)


def lower_x_jvp(t, ans, x, upper):
    return lower(t, upper)


defvjp(phi, x=phi_x)
defjvp(phi, x=phi_x_jvp)
defvjp(sym, x=sym_x)
defjvp(sym, x=sym_x_jvp)
defvjp(lower, x=lower_x)
defjvp(lower, x=lower_x_jvp)


def cholesky_s_c(g, ans, c, L):
    return cholesky_w(g, L)


def cholesky_s_L(g, ans, c, L):
    return (
        -ans @ la.mT(np.linalg.solve(L, g))
        + c @ la.mT(np.linalg.solve(L, cholesky_w(g, L)))
        - la.mT(ans) @ la.mT(np.linalg.solve(L, la.mT(g)))
    )


defvjp(cholesky_s, c=cholesky_s_c, L=cholesky_s_L)


def cholesky_s_c_jvp(t, ans, c, L):
    return cholesky_s(t, L)


def cholesky_s_L_jvp(t, ans, c, L):
    """``d(L^-T phi(L^T c) L^-1) = -L^-T t^T S + cholesky_s(L^-T t^T c, L) - S t L^-1``."""
    return (
        -np.linalg.solve(la.mT(L), la.mT(t) @ ans)
        + cholesky_s(np.linalg.solve(la.mT(L), la.mT(t) @ c), L)
        - ans @ la.mT(np.linalg.solve(la.mT(L), la.mT(t)))
    )


defjvp(cholesky_s, c=cholesky_s_c_jvp, L=cholesky_s_L_jvp)


def cholesky_w_h(g, ans, h, L):
    return cholesky_s(g, L)


def cholesky_w_L(g, ans, h, L):
    return (
        g @ la.mT(np.linalg.solve(L, ans))
        - cholesky_s(g, L) @ la.mT(np.linalg.solve(L, h))
        - la.mT(cholesky_s(g, L)) @ la.mT(np.linalg.solve(L, la.mT(h)))
    )


defvjp(cholesky_w, h=cholesky_w_h, L=cholesky_w_L)


def cholesky_w_h_jvp(t, ans, h, L):
    return cholesky_w(t, L)


def cholesky_w_L_jvp(t, ans, h, L):
    """``d(L phi(L^-1 h L^-T)) = t L^-1 W + cholesky_w(-t L^-1 h - h L^-T t^T, L)``."""
    return t @ np.linalg.solve(L, ans) + cholesky_w(
        -(t @ np.linalg.solve(L, h)) - h @ np.linalg.solve(la.mT(L), la.mT(t)), L
    )


defjvp(cholesky_w, h=cholesky_w_h_jvp, L=cholesky_w_L_jvp)


def cholesky_vjp_c(g, ans, c, out, a, *, upper=False):
    return la.cholesky_jvp(g, out, a, upper=upper)


def cholesky_vjp_out(g, ans, c, out, a, *, upper=False):
    """The transpose of ``cholesky_s_L_jvp`` at ``sym(g)``, for the lower factor."""
    return lower(
        -cholesky_s(lower(c, upper), lower(out, upper))
        @ la.mT(np.linalg.solve(lower(out, upper), sym(g)))
        + lower(c, upper)
        @ la.mT(np.linalg.solve(lower(out, upper), cholesky_w(sym(g), lower(out, upper))))
        - la.mT(cholesky_s(lower(c, upper), lower(out, upper)))
        @ la.mT(np.linalg.solve(lower(out, upper), la.mT(sym(g)))),
        upper,
    )


defvjp(la.cholesky_vjp, c=cholesky_vjp_c, out=cholesky_vjp_out)


def cholesky_vjp_c_jvp(t, ans, c, out, a, *, upper=False):
    return la.cholesky_vjp(t, out, a, upper=upper)


def cholesky_vjp_out_jvp(t, ans, c, out, a, *, upper=False):
    """``sym`` of ``cholesky_s_L_jvp`` for the lower factor ``L`` and its tangent."""
    return sym(
        -np.linalg.solve(
            la.mT(lower(out, upper)),
            la.mT(lower(t, upper)) @ cholesky_s(lower(c, upper), lower(out, upper)),
        )
        + cholesky_s(
            np.linalg.solve(la.mT(lower(out, upper)), la.mT(lower(t, upper)) @ lower(c, upper)),
            lower(out, upper),
        )
        - cholesky_s(lower(c, upper), lower(out, upper))
        @ la.mT(np.linalg.solve(la.mT(lower(out, upper)), la.mT(lower(t, upper))))
    )


defjvp(la.cholesky_vjp, c=cholesky_vjp_c_jvp, out=cholesky_vjp_out_jvp)


def cholesky_jvp_v(g, ans, v, out, a, *, upper=False):
    return la.cholesky_vjp(g, out, a, upper=upper)


def cholesky_jvp_out(g, ans, v, out, a, *, upper=False):
    """The transpose of ``cholesky_w_L_jvp`` at ``h = sym(v)``, for the lower factor."""
    return lower(
        lower(g, upper)
        @ la.mT(np.linalg.solve(lower(out, upper), cholesky_w(sym(v), lower(out, upper))))
        - cholesky_s(lower(g, upper), lower(out, upper))
        @ la.mT(np.linalg.solve(lower(out, upper), sym(v)))
        - la.mT(cholesky_s(lower(g, upper), lower(out, upper)))
        @ la.mT(np.linalg.solve(lower(out, upper), la.mT(sym(v)))),
        upper,
    )


defvjp(la.cholesky_jvp, v=cholesky_jvp_v, out=cholesky_jvp_out)


def cholesky_jvp_v_jvp(t, ans, v, out, a, *, upper=False):
    return la.cholesky_jvp(t, out, a, upper=upper)


def cholesky_jvp_out_jvp(t, ans, v, out, a, *, upper=False):
    return lower(
        lower(t, upper) @ np.linalg.solve(lower(out, upper), cholesky_w(sym(v), lower(out, upper)))
        + cholesky_w(
            -(lower(t, upper) @ np.linalg.solve(lower(out, upper), sym(v)))
            - sym(v) @ np.linalg.solve(la.mT(lower(out, upper)), la.mT(lower(t, upper))),
            lower(out, upper),
        ),
        upper,
    )


defjvp(la.cholesky_jvp, v=cholesky_jvp_v_jvp, out=cholesky_jvp_out_jvp)

# =========================================================================== products of elements
# cumprod and its tangent along ``axis`` (None: the flattened array), in the flattened layout
# ``along`` gives: a row's first zero is where the adjoint rule stops dividing.


def along(x, axis):
    """``x`` as ``np.cumprod(x, axis)`` reads it: flattened when ``axis`` is None."""
    return np.ravel(x) if axis is None else x


def axis_or_0(axis):
    return 0 if axis is None else axis


def zeros_along(a, axis):
    """Where ``along(a, axis)`` is zero."""
    return along(a, axis) == 0


def first_zeros(a, axis):
    """Where each row of ``along(a, axis)`` has its first zero."""
    zero = zeros_along(a, axis)
    return zero & (np.cumsum(zero, axis=axis_or_0(axis)) == 1)


def from_first_zero(a, axis):
    """From each row's first zero on (the partial products that hold it)."""
    return np.cumsum(zeros_along(a, axis), axis=axis_or_0(axis)) > 0


def zero_count(a, axis):
    """How many zeros each row of ``along(a, axis)`` has up to each place."""
    return np.cumsum(zeros_along(a, axis), axis=axis_or_0(axis))


def second_zeros(a, axis):
    """Where each row of ``along(a, axis)`` has its second zero."""
    return zeros_along(a, axis) & (zero_count(a, axis) == 2)


defnondiff(axis_or_0, zeros_along, first_zeros, from_first_zero, zero_count, second_zeros)


def zeros_as_one(a, axis):
    """``along(a, axis)`` with its zeros made one (what the rules divide by)."""
    return np.where(zeros_along(a, axis), 1, along(a, axis))


def first_as_one(a, axis):
    """``along(a, axis)`` with each row's first zero made one (the products without it)."""
    return np.where(first_zeros(a, axis), 1, along(a, axis))


def along_x(g, ans, x, axis):
    return np.reshape(g, np.shape(x))


def along_x_jvp(t, ans, x, axis):
    return along(t, axis)


defvjp(along, x=along_x)
defjvp(along, x=along_x_jvp)


def zeros_as_one_a(g, ans, a, axis):
    return np.reshape(np.where(zeros_along(a, axis), 0, g), np.shape(a))


def zeros_as_one_a_jvp(t, ans, a, axis):
    return np.where(zeros_along(a, axis), 0, along(t, axis))


defvjp(zeros_as_one, a=zeros_as_one_a)
defjvp(zeros_as_one, a=zeros_as_one_a_jvp)


def first_as_one_a(g, ans, a, axis):
    return np.reshape(np.where(first_zeros(a, axis), 0, g), np.shape(a))


def first_as_one_a_jvp(t, ans, a, axis):
    return np.where(first_zeros(a, axis), 0, along(t, axis))


defvjp(first_as_one, a=first_as_one_a)
defjvp(first_as_one, a=first_as_one_a_jvp)

# cumprod(c, out, a, axis): rows without a zero, reverse_cumsum(c out) / a; with one, at the
# first zero reverse_cumsum(c W) with W = cumprod(first_as_one(a)), elsewhere
# reverse_cumsum(c out) / zeros_as_one(a). Moving a zero of a (out held) jumps to the other
# formula: along the zeros the partial derivatives are what the derivative along out = cumprod(a)
# needs beyond what reaches it through out -- at a row's second zero, the moving first zero's
# share (cumprod's gradient there sums c times the products without both zeros).


def beyond_second_zero(c, a, axis):
    """What moving each row's first zero adds, per unit, to ``cumprod(c, ., a)`` at its second
    zero: the sum from there to the third zero of ``c`` times the products without the zeros."""
    return rd.reverse_cumsum(
        c * np.cumprod(zeros_as_one(a, axis), axis=axis_or_0(axis)) * (zero_count(a, axis) <= 2),
        axis_or_0(axis),
    )


def cumprod_c(g, ans, c, out, a, axis=None):
    return rd.cumprod_jvp(g, out, a, axis=axis)


def cumprod_out(g, ans, c, out, a, axis=None):
    return c * np.cumsum(
        np.where(first_zeros(a, axis), 0, along(g, axis)) / zeros_as_one(a, axis),
        axis=axis_or_0(axis),
    )


def cumprod_a(g, ans, c, out, a, axis=None):
    return np.reshape(
        np.where(
            first_zeros(a, axis),
            0,
            rd.cumprod(
                c
                * np.cumsum(
                    np.where(first_zeros(a, axis), along(g, axis), 0), axis=axis_or_0(axis)
                ),
                np.cumprod(first_as_one(a, axis), axis=axis_or_0(axis)),
                first_as_one(a, axis),
                axis=axis_or_0(axis),
            ),
        )
        + np.where(
            zeros_along(a, axis), 0, -along(ans, axis) * along(g, axis) / zeros_as_one(a, axis)
        )
        + first_zeros(a, axis)
        * np.sum(
            np.where(second_zeros(a, axis), along(g, axis), 0) * beyond_second_zero(c, a, axis),
            axis=axis_or_0(axis),
            keepdims=True,
        ),
        np.shape(a),
    )


defvjp(rd.cumprod, c=cumprod_c, out=cumprod_out, a=cumprod_a)


def cumprod_c_jvp(t, ans, c, out, a, axis=None):
    return rd.cumprod(t, out, a, axis=axis)


def cumprod_out_jvp(t, ans, c, out, a, axis=None):
    return np.where(
        np.reshape(first_zeros(a, axis), np.shape(a)), 0, rd.cumprod(c, t, a, axis=axis)
    )


def cumprod_a_jvp(t, ans, c, out, a, axis=None):
    """At a row's first zero, ``W`` moves as ``cumprod_jvp``; elsewhere the divisor moves."""
    return np.reshape(
        np.where(
            first_zeros(a, axis),
            rd.reverse_cumsum(
                c
                * rd.cumprod_jvp(
                    np.where(first_zeros(a, axis), 0, along(t, axis)),
                    np.cumprod(first_as_one(a, axis), axis=axis_or_0(axis)),
                    first_as_one(a, axis),
                    axis=axis_or_0(axis),
                ),
                axis_or_0(axis),
            ),
            -along(ans, axis)
            * np.where(zeros_along(a, axis), 0, along(t, axis))
            / zeros_as_one(a, axis),
        )
        + np.where(
            second_zeros(a, axis),
            np.sum(along(t, axis) * first_zeros(a, axis), axis=axis_or_0(axis), keepdims=True)
            * beyond_second_zero(c, a, axis),
            0,
        ),
        np.shape(a),
    )


defjvp(rd.cumprod, c=cumprod_c_jvp, out=cumprod_out_jvp, a=cumprod_a_jvp)


def beyond_second_zero_c(g, ans, c, a, axis):
    return (
        np.cumsum(g, axis=axis_or_0(axis))
        * np.cumprod(zeros_as_one(a, axis), axis=axis_or_0(axis))
        * (zero_count(a, axis) <= 2)
    )


def beyond_second_zero_a(g, ans, c, a, axis):
    return np.reshape(
        np.where(
            zeros_along(a, axis),
            0,
            rd.cumprod(
                c * (zero_count(a, axis) <= 2) * np.cumsum(g, axis=axis_or_0(axis)),
                np.cumprod(zeros_as_one(a, axis), axis=axis_or_0(axis)),
                zeros_as_one(a, axis),
                axis=axis_or_0(axis),
            ),
        ),
        np.shape(a),
    )


defvjp(beyond_second_zero, c=beyond_second_zero_c, a=beyond_second_zero_a)


def beyond_second_zero_c_jvp(t, ans, c, a, axis):
    return beyond_second_zero(t, a, axis)


def beyond_second_zero_a_jvp(t, ans, c, a, axis):
    return rd.reverse_cumsum(
        c
        * rd.cumprod_jvp(
            np.where(zeros_along(a, axis), 0, along(t, axis)),
            np.cumprod(zeros_as_one(a, axis), axis=axis_or_0(axis)),
            zeros_as_one(a, axis),
            axis=axis_or_0(axis),
        )
        * (zero_count(a, axis) <= 2),
        axis_or_0(axis),
    )


defjvp(beyond_second_zero, c=beyond_second_zero_c_jvp, a=beyond_second_zero_a_jvp)


# cumprod_jvp(v, out, a, axis): rows without a zero, out cumsum(v / a); with one, from the first
# zero on (v at that zero) times W, before it out cumsum(v / zeros_as_one(a)). Along a row's first
# zero, from there on, the partial derivative in a holds what moving it adds to the other
# elements' terms (out is zero there, nothing reaches them through it).


def past_first_zero(v, a, axis):
    """What moving each row's first zero adds, per unit, to ``cumprod_jvp(v, ., a)`` from there
    on: up to the second zero, the products without the zero times the sum of the others'
    ``v / a``; from the second zero to the third, those products times ``v`` at the second."""
    return np.cumprod(zeros_as_one(a, axis), axis=axis_or_0(axis)) * (
        (zero_count(a, axis) == 1)
        * np.cumsum(
            np.where(zeros_along(a, axis), 0, along(v, axis)) / zeros_as_one(a, axis),
            axis=axis_or_0(axis),
        )
        + (zero_count(a, axis) == 2)
        * np.sum(along(v, axis) * second_zeros(a, axis), axis=axis_or_0(axis), keepdims=True)
    )


def past_first_zero_v(g, ans, v, a, axis):
    return np.reshape(
        np.where(
            zeros_along(a, axis),
            0,
            rd.reverse_cumsum(
                g
                * np.cumprod(zeros_as_one(a, axis), axis=axis_or_0(axis))
                * (zero_count(a, axis) == 1),
                axis_or_0(axis),
            )
            / zeros_as_one(a, axis),
        )
        + second_zeros(a, axis)
        * np.sum(
            g
            * np.cumprod(zeros_as_one(a, axis), axis=axis_or_0(axis))
            * (zero_count(a, axis) == 2),
            axis=axis_or_0(axis),
            keepdims=True,
        ),
        np.shape(v),
    )


def past_first_zero_a(g, ans, v, a, axis):
    return np.reshape(
        np.where(
            zeros_along(a, axis),
            0,
            rd.cumprod(
                g
                * (
                    (zero_count(a, axis) == 1)
                    * np.cumsum(
                        np.where(zeros_along(a, axis), 0, along(v, axis)) / zeros_as_one(a, axis),
                        axis=axis_or_0(axis),
                    )
                    + (zero_count(a, axis) == 2)
                    * np.sum(
                        along(v, axis) * second_zeros(a, axis),
                        axis=axis_or_0(axis),
                        keepdims=True,
                    )
                ),
                np.cumprod(zeros_as_one(a, axis), axis=axis_or_0(axis)),
                zeros_as_one(a, axis),
                axis=axis_or_0(axis),
            )
            - np.where(zeros_along(a, axis), 0, along(v, axis))
            / zeros_as_one(a, axis) ** 2
            * rd.reverse_cumsum(
                g
                * np.cumprod(zeros_as_one(a, axis), axis=axis_or_0(axis))
                * (zero_count(a, axis) == 1),
                axis_or_0(axis),
            ),
        ),
        np.shape(a),
    )


defvjp(past_first_zero, v=past_first_zero_v, a=past_first_zero_a)


def past_first_zero_v_jvp(t, ans, v, a, axis):
    return past_first_zero(t, a, axis)


def past_first_zero_a_jvp(t, ans, v, a, axis):
    return rd.cumprod_jvp(
        np.where(zeros_along(a, axis), 0, along(t, axis)),
        np.cumprod(zeros_as_one(a, axis), axis=axis_or_0(axis)),
        zeros_as_one(a, axis),
        axis=axis_or_0(axis),
    ) * (
        (zero_count(a, axis) == 1)
        * np.cumsum(
            np.where(zeros_along(a, axis), 0, along(v, axis)) / zeros_as_one(a, axis),
            axis=axis_or_0(axis),
        )
        + (zero_count(a, axis) == 2)
        * np.sum(along(v, axis) * second_zeros(a, axis), axis=axis_or_0(axis), keepdims=True)
    ) + np.cumprod(
        zeros_as_one(a, axis), axis=axis_or_0(axis)
    ) * (
        zero_count(a, axis) == 1
    ) * np.cumsum(
        -np.where(zeros_along(a, axis), 0, along(v, axis))
        * np.where(zeros_along(a, axis), 0, along(t, axis))
        / zeros_as_one(a, axis) ** 2,
        axis=axis_or_0(axis),
    )


defjvp(past_first_zero, v=past_first_zero_v_jvp, a=past_first_zero_a_jvp)


def cumprod_jvp_v(g, ans, v, out, a, axis=None):
    return rd.cumprod(g, out, a, axis=axis)


def cumprod_jvp_out(g, ans, v, out, a, axis=None):
    return np.where(
        from_first_zero(a, axis),
        0,
        g * np.cumsum(along(v, axis) / zeros_as_one(a, axis), axis=axis_or_0(axis)),
    )


def cumprod_jvp_a(g, ans, v, out, a, axis=None):
    return np.reshape(
        np.where(
            first_zeros(a, axis),
            0,
            rd.cumprod(
                np.sum(along(v, axis) * first_zeros(a, axis), axis=axis_or_0(axis), keepdims=True)
                * np.where(from_first_zero(a, axis), g, 0),
                np.cumprod(first_as_one(a, axis), axis=axis_or_0(axis)),
                first_as_one(a, axis),
                axis=axis_or_0(axis),
            ),
        )
        + np.where(
            zeros_along(a, axis),
            0,
            -rd.reverse_cumsum(out * np.where(from_first_zero(a, axis), 0, g), axis_or_0(axis))
            * along(v, axis)
            / zeros_as_one(a, axis) ** 2,
        )
        + first_zeros(a, axis)
        * np.sum(g * past_first_zero(v, a, axis), axis=axis_or_0(axis), keepdims=True),
        np.shape(a),
    )


defvjp(rd.cumprod_jvp, v=cumprod_jvp_v, out=cumprod_jvp_out, a=cumprod_jvp_a)


def cumprod_jvp_v_jvp(t, ans, v, out, a, axis=None):
    return rd.cumprod_jvp(t, out, a, axis=axis)


def cumprod_jvp_out_jvp(t, ans, v, out, a, axis=None):
    return np.where(
        from_first_zero(a, axis),
        0,
        t * np.cumsum(along(v, axis) / zeros_as_one(a, axis), axis=axis_or_0(axis)),
    )


def cumprod_jvp_a_jvp(t, ans, v, out, a, axis=None):
    return np.where(
        from_first_zero(a, axis),
        np.sum(along(v, axis) * first_zeros(a, axis), axis=axis_or_0(axis), keepdims=True)
        * rd.cumprod_jvp(
            np.where(first_zeros(a, axis), 0, along(t, axis)),
            np.cumprod(first_as_one(a, axis), axis=axis_or_0(axis)),
            first_as_one(a, axis),
            axis=axis_or_0(axis),
        ),
        -out
        * np.cumsum(
            along(v, axis)
            * np.where(zeros_along(a, axis), 0, along(t, axis))
            / zeros_as_one(a, axis) ** 2,
            axis=axis_or_0(axis),
        ),
    ) + np.sum(
        along(t, axis) * first_zeros(a, axis), axis=axis_or_0(axis), keepdims=True
    ) * past_first_zero(
        v, a, axis
    )


defjvp(rd.cumprod_jvp, v=cumprod_jvp_v_jvp, out=cumprod_jvp_out_jvp, a=cumprod_jvp_a_jvp)


def prod_hessian(v, c, out, a, axis=None, keepdims=False):
    """How ``prod_vjp(c, out, a)`` moves with ``a`` along ``v``, ``out`` held: ``expand(c)`` times
    the second derivatives of the product. Without zeros that is ``-prod_vjp(c, out, a) v / a``;
    with them, each element's product of the others is the product of those before it and those
    after it, and their tangents are tangents of cumulative products (zeros handled there).
    Symmetric in ``v``; linear in ``v`` and ``c``."""
    a = as_array(a)
    if not maybe_any(a == 0):
        return -rd.prod_vjp(c, out, a, axis=axis, keepdims=keepdims) * v / a
    ax = tuple(range(a.ndim)) if axis is None else ((axis,) if np.ndim(axis) == 0 else tuple(axis))
    ax = tuple(i % a.ndim for i in ax)
    front = tuple(range(len(ax)))
    moved = np.moveaxis(a, ax, front)
    fa = moved.reshape((-1,) + moved.shape[len(ax) :])
    fv = np.moveaxis(np.broadcast_to(v, a.shape), ax, front).reshape(fa.shape)
    ones, zeros = np.ones_like(fa[:1]), np.zeros_like(fv[:1])
    before, dbefore = np.concatenate([ones, fa[:-1]]), np.concatenate([zeros, fv[:-1]])
    left = np.cumprod(before, axis=0)
    dleft = rd.cumprod_jvp(dbefore, left, before, axis=0)
    after, dafter = np.concatenate([ones, fa[::-1][:-1]]), np.concatenate([zeros, fv[::-1][:-1]])
    right = np.cumprod(after, axis=0)
    dright = rd.cumprod_jvp(dafter, right, after, axis=0)
    d = (dleft * right[::-1] + left * dright[::-1]).reshape(moved.shape)
    return rd.expand(c, a, axis=axis, keepdims=keepdims) * np.moveaxis(d, front, ax)


def prod_hessian_v(g, ans, v, c, out, a, axis=None, keepdims=False):
    return prod_hessian(g, c, out, a, axis=axis, keepdims=keepdims)


def prod_hessian_c(g, ans, v, c, out, a, axis=None, keepdims=False):
    return np.sum(
        prod_hessian(v, np.ones_like(c), out, a, axis=axis, keepdims=keepdims) * g,
        axis=axis,
        keepdims=keepdims,
    )


# out and a: third derivatives of the product, which no rule gives yet
defvjp(prod_hessian, v=prod_hessian_v, c=prod_hessian_c, out=None, a=None)


def prod_hessian_v_jvp(t, ans, v, c, out, a, axis=None, keepdims=False):
    return prod_hessian(t, c, out, a, axis=axis, keepdims=keepdims)


def prod_hessian_c_jvp(t, ans, v, c, out, a, axis=None, keepdims=False):
    return prod_hessian(v, t, out, a, axis=axis, keepdims=keepdims)


defjvp(prod_hessian, v=prod_hessian_v_jvp, c=prod_hessian_c_jvp)

# prod_vjp(c, out, a) is expand(c out) / a without zeros, expand(c) times the products of the
# others with them (then it does not read out).


def prod_vjp_c(g, ans, c, out, a, axis=None, *, keepdims=False):
    return rd.prod_jvp(g, out, a, axis=axis, keepdims=keepdims)


def prod_vjp_out(g, ans, c, out, a, axis=None, *, keepdims=False):
    return (
        c * np.sum(g / a, axis=axis, keepdims=keepdims)
        if not maybe_any(a == 0)
        else 0.0 * c * np.sum(g, axis=axis, keepdims=keepdims)
    )


def prod_vjp_a(g, ans, c, out, a, axis=None, *, keepdims=False):
    return prod_hessian(g, c, out, a, axis=axis, keepdims=keepdims)


defvjp(rd.prod_vjp, c=prod_vjp_c, out=prod_vjp_out, a=prod_vjp_a)


def prod_vjp_c_jvp(t, ans, c, out, a, axis=None, *, keepdims=False):
    return rd.prod_vjp(t, out, a, axis=axis, keepdims=keepdims)


def prod_vjp_out_jvp(t, ans, c, out, a, axis=None, *, keepdims=False):
    return (
        rd.expand(c * t, a, axis=axis, keepdims=keepdims) / a
        if not maybe_any(a == 0)
        else 0.0 * rd.expand(c * t, a, axis=axis, keepdims=keepdims)
    )


def prod_vjp_a_jvp(t, ans, c, out, a, axis=None, *, keepdims=False):
    return prod_hessian(t, c, out, a, axis=axis, keepdims=keepdims)


defjvp(rd.prod_vjp, c=prod_vjp_c_jvp, out=prod_vjp_out_jvp, a=prod_vjp_a_jvp)


def prod_jvp_v(g, ans, v, out, a, axis=None, *, keepdims=False):
    return rd.prod_vjp(g, out, a, axis=axis, keepdims=keepdims)


def prod_jvp_out(g, ans, v, out, a, axis=None, *, keepdims=False):
    return (
        np.sum(rd.expand(g, a, axis=axis, keepdims=keepdims) * v / a, axis=axis, keepdims=keepdims)
        if not maybe_any(a == 0)
        else 0.0 * g
    )


def prod_jvp_a(g, ans, v, out, a, axis=None, *, keepdims=False):
    return prod_hessian(v, g, out, a, axis=axis, keepdims=keepdims)


defvjp(rd.prod_jvp, v=prod_jvp_v, out=prod_jvp_out, a=prod_jvp_a)


def prod_jvp_v_jvp(t, ans, v, out, a, axis=None, *, keepdims=False):
    return rd.prod_jvp(t, out, a, axis=axis, keepdims=keepdims)


def prod_jvp_out_jvp(t, ans, v, out, a, axis=None, *, keepdims=False):
    return (
        np.sum(v * rd.expand(t, a, axis=axis, keepdims=keepdims) / a, axis=axis, keepdims=keepdims)
        if not maybe_any(a == 0)
        else 0.0 * t
    )


def prod_jvp_a_jvp(t, ans, v, out, a, axis=None, *, keepdims=False):
    return np.sum(
        v * prod_hessian(t, np.ones_like(out), out, a, axis=axis, keepdims=keepdims),
        axis=axis,
        keepdims=keepdims,
    )


defjvp(rd.prod_jvp, v=prod_jvp_v_jvp, out=prod_jvp_out_jvp, a=prod_jvp_a_jvp)

# =========================================================================== norms
# norm_vjp(c, out, x) is expand(c) times a gradient D(out, x) of the norm; D moves with out as
# out^-(p - 1) for a p-norm (not at all for the norms that are steps or singular values).


def norm_axes(x, ord, axis):
    """``(axes, matrix)``: the axes ``np.linalg.norm`` reduces, and whether it is a matrix norm."""
    nd = np.ndim(x)
    if axis is None:
        return tuple(range(nd)), nd == 2 and ord is not None
    axes = (axis,) if np.ndim(axis) == 0 else tuple(axis)
    return tuple(a % nd for a in axes), len(axes) == 2


def norm_exponent(x, ord, axis):
    """``p - 1`` for a norm whose gradient divides by ``out ** (p - 1)``; 0 where it does not
    depend on ``out`` (1, inf, 0 and the singular-value norms)."""
    _, matrix = norm_axes(x, ord, axis)
    if matrix:
        return 1 if ord is None or ord == "fro" else 0
    if ord is None:
        return 1
    return 0 if ord in (1, 0, np.inf, -np.inf) else ord - 1


defnondiff(norm_axes, norm_exponent)


def norm_hessian(v, c, out, x, ord=None, axis=None, keepdims=False):
    """How ``norm_vjp(c, out, x)`` moves with ``x`` along ``v``, ``out`` held: ``expand(c)`` times
    the derivative of the norm's gradient (for the nuclear and spectral norms, of the polar factor
    ``U V^T`` and of ``u v^T``, from the SVD: distinct singular values, full rank). Symmetric in
    ``v``; linear in ``v`` and ``c``."""
    x = as_array(x)
    axes, matrix = norm_axes(x, ord, axis)
    if not keepdims:
        c, out = np.expand_dims(c, axes), np.expand_dims(out, axes)
    dtype = np.result_type(x, c, v)
    if not matrix:
        if ord is None or ord == 2:
            return (c / np.where(out == 0, 1, out) * v).astype(dtype, copy=False)
        if ord in (1, 0, np.inf, -np.inf):
            return np.zeros(x.shape, dtype)
        p = ord
        return (c * (p - 1) * np.abs(x) ** (p - 2) * v / out ** (p - 1)).astype(dtype, copy=False)
    rows, cols = axes
    xm, vm = (np.moveaxis(np.broadcast_to(y, x.shape), (rows, cols), (-2, -1)) for y in (x, v))
    cm = np.moveaxis(c, (rows, cols), (-2, -1))
    if ord is None or ord == "fro":
        d = vm / np.moveaxis(out, (rows, cols), (-2, -1))
    elif ord == "nuc" or ord in (2, -2):
        u, s, vt = np.linalg.svd(xm, full_matrices=False)
        w = la.mT(vt)
        p = la.mT(u) @ vm @ w  # the direction in the singular bases
        outside_u = vm @ w - u @ (la.mT(u) @ vm @ w)  # (I - U U^T) v V: beyond U's columns
        outside_v = la.mT(vm) @ u - w @ (vt @ la.mT(vm) @ u)  # (I - V V^T) v^T U
        if ord == "nuc":  # d(U V^T)
            omega = (p - la.mT(p)) / (s[..., :, None] + s[..., None, :])
            d = (
                u @ omega @ vt
                + (outside_u / s[..., None, :]) @ vt
                + u @ la.mT(outside_v / s[..., None, :])
            )
        else:  # d(u_k v_k^T), k the largest (2) or smallest (-2) singular value
            k = 0 if ord == 2 else -1
            sk = s[..., k, None]
            gap = sk**2 - s**2
            gap = np.where(np.arange(s.shape[-1]) == k % s.shape[-1], np.inf, gap)
            du = u @ ((sk * p[..., :, k] + s * p[..., k, :]) / gap)[..., None]
            du = du[..., 0] + outside_u[..., k] / sk
            dv = w @ ((s * p[..., :, k] + sk * p[..., k, :]) / gap)[..., None]
            dv = dv[..., 0] + outside_v[..., k] / sk
            d = du[..., :, None] * vt[..., k, None, :] + u[..., :, k, None] * dv[..., None, :]
    else:  # 1, -1, inf, -inf: a step
        d = np.zeros(xm.shape, dtype)
    return np.moveaxis(cm * d, (-2, -1), (rows, cols)).astype(dtype, copy=False)


def norm_hessian_v(g, ans, v, c, out, x, ord=None, axis=None, keepdims=False):
    return norm_hessian(g, c, out, x, ord=ord, axis=axis, keepdims=keepdims)


def norm_hessian_c(g, ans, v, c, out, x, ord=None, axis=None, keepdims=False):
    return np.sum(
        norm_hessian(v, np.ones_like(c), out, x, ord=ord, axis=axis, keepdims=keepdims) * g,
        axis=axis,
        keepdims=keepdims,
    )


# out and x: third derivatives of the norm, which no rule gives yet
defvjp(norm_hessian, v=norm_hessian_v, c=norm_hessian_c, out=None, x=None)


def norm_hessian_v_jvp(t, ans, v, c, out, x, ord=None, axis=None, keepdims=False):
    return norm_hessian(t, c, out, x, ord=ord, axis=axis, keepdims=keepdims)


def norm_hessian_c_jvp(t, ans, v, c, out, x, ord=None, axis=None, keepdims=False):
    return norm_hessian(v, t, out, x, ord=ord, axis=axis, keepdims=keepdims)


defjvp(norm_hessian, v=norm_hessian_v_jvp, c=norm_hessian_c_jvp)


def norm_vjp_c(g, ans, c, out, x, ord=None, axis=None, keepdims=False):
    return la.norm_jvp(g, out, x, ord=ord, axis=axis, keepdims=keepdims)


def norm_vjp_out(g, ans, c, out, x, ord=None, axis=None, keepdims=False):
    return (
        -norm_exponent(x, ord, axis)
        * c
        * la.norm_jvp(g, out, x, ord=ord, axis=axis, keepdims=keepdims)
        / np.where(out == 0, 1, out)
    )


def norm_vjp_x(g, ans, c, out, x, ord=None, axis=None, keepdims=False):
    return norm_hessian(g, c, out, x, ord=ord, axis=axis, keepdims=keepdims)


defvjp(la.norm_vjp, c=norm_vjp_c, out=norm_vjp_out, x=norm_vjp_x)


def norm_vjp_c_jvp(t, ans, c, out, x, ord=None, axis=None, keepdims=False):
    return la.norm_vjp(t, out, x, ord=ord, axis=axis, keepdims=keepdims)


def norm_vjp_out_jvp(t, ans, c, out, x, ord=None, axis=None, keepdims=False):
    return la.norm_vjp(
        -norm_exponent(x, ord, axis) * c * t / np.where(out == 0, 1, out),
        out,
        x,
        ord=ord,
        axis=axis,
        keepdims=keepdims,
    )


def norm_vjp_x_jvp(t, ans, c, out, x, ord=None, axis=None, keepdims=False):
    return norm_hessian(t, c, out, x, ord=ord, axis=axis, keepdims=keepdims)


defjvp(la.norm_vjp, c=norm_vjp_c_jvp, out=norm_vjp_out_jvp, x=norm_vjp_x_jvp)


def norm_jvp_v(g, ans, v, out, x, ord=None, axis=None, keepdims=False):
    return la.norm_vjp(g, out, x, ord=ord, axis=axis, keepdims=keepdims)


def norm_jvp_out(g, ans, v, out, x, ord=None, axis=None, keepdims=False):
    return (
        -norm_exponent(x, ord, axis)
        * g
        * la.norm_jvp(v, out, x, ord=ord, axis=axis, keepdims=keepdims)
        / np.where(out == 0, 1, out)
    )


def norm_jvp_x(g, ans, v, out, x, ord=None, axis=None, keepdims=False):
    return norm_hessian(v, g, out, x, ord=ord, axis=axis, keepdims=keepdims)


defvjp(la.norm_jvp, v=norm_jvp_v, out=norm_jvp_out, x=norm_jvp_x)


def norm_jvp_v_jvp(t, ans, v, out, x, ord=None, axis=None, keepdims=False):
    return la.norm_jvp(t, out, x, ord=ord, axis=axis, keepdims=keepdims)


def norm_jvp_out_jvp(t, ans, v, out, x, ord=None, axis=None, keepdims=False):
    return (
        -norm_exponent(x, ord, axis)
        * t
        * la.norm_jvp(v, out, x, ord=ord, axis=axis, keepdims=keepdims)
        / np.where(out == 0, 1, out)
    )


def norm_jvp_x_jvp(t, ans, v, out, x, ord=None, axis=None, keepdims=False):
    return np.sum(
        norm_hessian(t, np.ones_like(out), out, x, ord=ord, axis=axis, keepdims=keepdims) * v,
        axis=axis,
        keepdims=keepdims,
    )


defjvp(la.norm_jvp, v=norm_jvp_v_jvp, out=norm_jvp_out_jvp, x=norm_jvp_x_jvp)


# =========================================================================== powers
# power_slope(x, y) = y x^(y-1), the derivative of x ** y in x (0 for y == 0): the rules of `**`
# and `pow` call it.


def power_slope_x(g, ans, x, y):
    """``y (y-1) x^(y-2) = y power_slope(x, y - 1)``; 0 for ``y == 0``, where the slope is the
    constant 0 (``y - (y != 0)`` keeps ``power_slope``'s own zero, not ``0 * inf``)."""
    return unbroadcast(g * y * op.power_slope(x, y - (y != 0)), x)


def power_slope_y(g, ans, x, y):
    """``x^(y-1) (1 + y log x)``, the log zero where ``x`` is (as ``pow_y``); ``np.power``:
    numpy's infinity at ``x = 0`` for ``y < 1``."""
    return unbroadcast(
        g
        * np.power(x, y - 1)
        * (1 + y * np.log(np.where(x == 0, 1, x), dtype=np.result_type(ans))),
        y,
    )


defvjp(op.power_slope, power_slope_x, power_slope_y)


def power_slope_x_jvp(t, ans, x, y):
    return t * y * op.power_slope(x, y - (y != 0))


def power_slope_y_jvp(t, ans, x, y):
    return (
        t * np.power(x, y - 1) * (1 + y * np.log(np.where(x == 0, 1, x), dtype=np.result_type(ans)))
    )


defjvp(op.power_slope, power_slope_x_jvp, power_slope_y_jvp)


# =========================================================================== determinants
# cofactors(a, det) = det a^-T and inverse(a) = a^-1, which the rules of det and slogdet call.
# cofactors' partial derivatives hold det fixed, and the derivative along det reaches it through
# det = det(a): they add up to d(adj a^T). Both use inv: a second derivative of det at a singular
# matrix raises LinAlgError (the first is defined there, and given).


def cofactors_a(g, ans, a, det):
    """``d(det a^-T) = -det a^-T da^T a^-T``: its transpose applied to ``g``."""
    return -np.expand_dims(det, (-2, -1)) * (
        la.mT(np.linalg.inv(a)) @ la.mT(g) @ la.mT(np.linalg.inv(a))
    )


def cofactors_det(g, ans, a, det):
    return np.sum(g * la.mT(np.linalg.inv(a)), axis=(-2, -1))


defvjp(la.cofactors, cofactors_a, cofactors_det)


def cofactors_a_jvp(t, ans, a, det):
    return -np.expand_dims(det, (-2, -1)) * (
        la.mT(np.linalg.inv(a)) @ la.mT(t) @ la.mT(np.linalg.inv(a))
    )


def cofactors_det_jvp(t, ans, a, det):
    return np.expand_dims(t, (-2, -1)) * la.mT(np.linalg.inv(a))


defjvp(la.cofactors, cofactors_a_jvp, cofactors_det_jvp)


def inverse_a(g, ans, a):
    return -la.mT(ans) @ g @ la.mT(ans)


defvjp(la.inverse, inverse_a)


def inverse_a_jvp(t, ans, a):
    return -ans @ t @ ans


defjvp(la.inverse, inverse_a_jvp)
