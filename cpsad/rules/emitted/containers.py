"""Rules of the helpers of containers and of choices between values: ``spread``,
``list_builtin`` and ``max_builtin`` (cpsad/rules/containers.py: ``sum(xs)``'s, ``list(xs)``'s,
``max(xs)``'s adjoints), ``with_entry`` (a container with one entry replaced), ``pair_like`` (a
pair of the type of a decomposition's result), ``split_ties`` and ``pick_into`` (the adjoint
of ``maximum``'s or a ReLU's chosen operand, halved at ties).

Every helper here is linear in the adjoints or tangents it takes (``with_entry`` and ``pair_like``
in their entries together); which value was chosen, and the keys and results read for their
structure, are discrete. Its tangent rule is the helper itself (``pick_into``'s: ``split_ties``,
out of place); its adjoint rule is its transpose -- ``gathered``, ``list_builtin_t`` and
``max_builtin_t`` are defined here, their adjoint rules the helpers they transpose.
"""

from __future__ import annotations

import numpy as np

from cpsad.rules import containers as ct
from cpsad.rules import elementwise as el
from cpsad.rules import linalg as la
from cpsad.rules import operators as op
from cpsad.rules.core import broadcast_like, defjvp, defvjp
from cpsad.runtime import (
    Sparse,
    acc,
    as_adjoint,
    foreign,
    item_adjoint,
    on_device_of,
    pick_into,
    tangent_zeros,
    unbroadcast,
    without,
    zeros_like,
)


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
