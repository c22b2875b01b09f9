"""Cases for the rules of the functions emitted code calls (cpsad/rules/emitted/): the runtime's
helpers and the rule functions a backpropagator or a tangent function calls by name.

Each case calls the helper the way emitted code does -- with ``Sparse`` container adjoints,
``None`` for an absent one, float32, broadcasting -- and tests/test_rules.py checks its adjoint
and tangent rules against finite differences and each other (``check_rule``), and its wrapper end
to end through ``cpsad.vjp``: the pipeline differentiating a call of the helper, as it will
differentiate emitted code. Importing this module adds the cases to ``corpus_rules.CASES``.

A helper's parameters named ``g``, ``ans`` and ``t`` are ``c``, ``out`` and ``v`` in its rules,
so the wrappers take them under those names. Where a helper switches formulas at zeros, its
partial derivatives hold the zeros fixed (``NONZERO`` directions); the end-to-end cases
``*_along`` check the derivative along ``ans = f(x)`` with zeros moving too.
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
from cpsad.rules.core import broadcast_like
from cpsad.rules.emitted import cholesky as em_cholesky
from cpsad.rules.emitted import containers as em_containers
from cpsad.rules.emitted import elements as em_elements
from cpsad.rules.emitted import norms as em_norms
from cpsad.rules.emitted import parts as em_parts
from cpsad.rules.emitted import runtime as em_runtime
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
    getitem_adjoint,
    item_adjoint,
    items_adjoint,
    on_device_of,
    pick_into,
    repeat_adjoint,
    tangent_add,
    tangent_or_zeros,
    unbroadcast,
    unpack_adjoint,
    without,
)
from tests.corpus_rules import FLOATS, away, case, end_to_end, spd, u

HELPER = "cpsad's own helper: autograd has no rule for it"
F32 = np.float32


def f32(*shape):
    return u(*shape).astype(F32)


# =========================================================================== the runtime


def acc_(a, b):
    return acc(a, b)


for a, b in [
    (u(2, 3), u(2, 3)),
    (0.4, -1.3),
    (u(3), u(3)),
    (Sparse({0: u(2), 2: 0.3}), Sparse({0: u(2), 1: -0.5})),  # params_bar + getitem_adjoint(...)
    (Sparse({1: u(3)}), u(2, 3)),  # a list's adjoint of two kinds: Sparse + array
    (u(2, 3), Sparse({0: 0.7})),
]:
    case(acc_, acc, a, b, wrt=(0, 1), autograd=HELPER)


def acc_into_(a, b):
    return acc_into(a, b)


for a, b in [(u(2, 3), u(2, 3)), (Sparse({0: u(2), 2: 0.3}), Sparse({0: u(2), 1: -0.5}))]:
    case(acc_into_, acc_into, a, b, wrt=(0, 1), autograd=HELPER)


def acc_into_none(b, a=None):
    return acc(a, b)


# nothing accumulated yet: None
case(acc_into_none, acc, None, u(3), wrt=1, fn_kw={}, autograd=HELPER)
case(acc_, acc, u(3), None, wrt=0, autograd=HELPER)


def tangent_add_(a, b):
    return tangent_add(a, b)


# the tangents of one container, added entry by entry (forward mode's sum of contributions)
for a, b in [
    (u(2, 3), u(2, 3)),
    ([0.1, u(2)], [0.3, u(2)]),
    ((0.1, u(2)), (0.2, u(2))),
    ({"w": u(2), "b": 0.3}, {"w": u(2), "b": -0.1}),
]:
    case(tangent_add_, tangent_add, a, b, wrt=(0, 1), autograd=HELPER)


def unbroadcast_(c, x):
    return unbroadcast(c, x)


for c, x in [
    (u(2, 3), u(3)),
    (u(4, 2, 3), u(2, 1)),
    (u(2, 3), u(2, 3)),
    (u(2, 3), 0.5),
    (0.3, 0.5),
    (u(3, 2), u(2)),
    (u(3), u()),  # a 0-d array
    (Sparse({0: u(2), "w": 0.4}), Sparse({0: u(2), "w": 1.0})),  # a container's adjoint
    (u(2, 3), Sparse({0: u(3), 1: 0.5})),  # an array added to a Sparse
]:
    case(unbroadcast_, unbroadcast, c, x, autograd=HELPER)


def as_array_(x):
    return as_array(x)


for x in [u(2, 3), u()]:  # (an array of another library: tests/test_duck.py)
    case(as_array_, as_array, x, autograd=HELPER)


def on_device_of_(c, x):
    return on_device_of(c, x)  # (a numpy c moved to a duck's library: interp_ends in test_duck)


# (fixed inputs, not the corpus generator's: a draw here would move every later case's)
for c, x in [
    (np.array([0.3, -0.7, 1.1]), np.array([0.5, 0.2, -0.4])),
    (np.array(0.6), np.array([[0.5, 0.2, -0.4], [1.2, -0.3, 0.8]])),
]:
    case(on_device_of_, on_device_of, c, x, autograd=HELPER)


def broadcast_like_(v, out):
    return broadcast_like(v, out)


for v, out in [
    (u(3), u(2, 3)),
    (u(2, 1), u(2, 3)),
    (0.3, u(2, 2)),
    (0.3, 0.5),
    (u(3), u(4, 3)),
    (Sparse({1: u(3)}), u(2, 3)),  # a Sparse tangent added to an array
    (Sparse({1: u(3)}), Sparse({0: u(3), 1: u(3)})),
]:
    case(broadcast_like_, broadcast_like, v, out, autograd=HELPER)


def item_adjoint_(c, key, x):
    return item_adjoint(c, key, x)


for c, key, x in [
    (Sparse({0: u(3), 1: 0.5}), 1, 0.2),
    (Sparse({"w": u(2, 2)}), "w", u(2, 2)),
    (Sparse({0: u(3)}), 2, u(3)),  # an entry with no adjoint: zeros
    (u(4, 3), 2, u(3)),  # a list's dense adjoint
    (Sparse({0: Sparse({1: u(2)})}), 0, [0.1, u(2)]),  # nested containers
    (Sparse({0: u(3)}), 0, u(3)),
]:
    case(item_adjoint_, item_adjoint, c, key, x, autograd=HELPER)


def getitem_adjoint_(c, x, index):
    return getitem_adjoint(c, x, index)


X34 = u(3, 4)
for c, x, index in [
    (u(4), X34, 1),
    (u(3, 2), X34, np.s_[:, 1:3]),
    (u(3), X34, (np.arange(3), np.array([2, 0, 2]))),  # repeated elements accumulate
    (u(2, 4), X34, [0, 0]),
    (u(4), X34, -1),
    (u(2), {"w": u(2), "b": 0.3}, "w"),  # params_bar + getitem_adjoint(params_W_bar, params, "W")
    (0.7, [0.2, u(2), 0.4], -1),
    (Sparse({0: 0.5, 1: u(2)}), (0.1, u(2), 0.4), np.s_[::-2]),
    (u(2, 2), [0.1, u(2), 0.4, u(2)], np.s_[1::2]),  # a slice's dense adjoint
]:
    case(getitem_adjoint_, getitem_adjoint, c, x, index, autograd=HELPER)


def items_adjoint_(adjoints, x):  # the differentiated argument first, as the cases call it
    return items_adjoint(x, adjoints)


PARAMS = {"w": u(2, 3), "b": 0.3, "s": u(2)}
for x, adjoints in [
    (PARAMS, {"w": u(2, 3), "b": 0.7}),  # params_bar + items_adjoint(params, {"w": w_bar, ...})
    (PARAMS, {"s": u(2), "w": u(2, 3), "b": -0.2}),
    ([0.2, u(2), 0.4], {0: 0.5, 1: u(2)}),  # a list's entries: each one's getitem_adjoint
    (u(3, 2), {0: u(2), 2: u(2)}),  # an array's rows
]:
    case(items_adjoint_, items_adjoint, x, adjoints, wrt=(1,), autograd=HELPER)


def read_items_(h, cs, x):
    return em_runtime.read_items(h, cs, x)


for h, cs, x in [
    (Sparse({"w": u(2, 3), "s": u(2)}), {"w": u(2, 3), "b": 0.7}, PARAMS),
    (Sparse({1: u(2)}), {0: 0.5, 1: u(2)}, [0.2, u(2), 0.4]),
    (u(3, 2), {0: u(2), 2: u(2)}, u(3, 2)),
]:
    case(read_items_, em_runtime.read_items, h, cs, x, autograd=HELPER)


def read_adjoint_(h, c, x, index):
    return em_runtime.read_adjoint(h, c, x, index)


for h, c, x, index in [
    (u(3, 4), u(4), X34, 1),
    (u(3, 4), u(3), X34, (np.arange(3), np.array([2, 0, 2]))),
    (Sparse({"w": u(2)}), u(2), {"w": u(2), "b": 0.3}, "w"),
    (Sparse({2: 0.4}), 0.7, [0.2, u(2), 0.4], -1),
    (Sparse({0: 0.5, 2: 0.1}), Sparse({0: 0.5, 1: u(2)}), (0.1, u(2), 0.4), np.s_[::-2]),
    (Sparse({1: u(2)}), u(2, 2), [0.1, u(2), 0.4, u(2)], np.s_[1::2]),
]:
    case(read_adjoint_, em_runtime.read_adjoint, h, c, x, index, autograd=HELPER)


def unpack_adjoint_(gs, x):
    return unpack_adjoint(gs, x)


for gs, x in [
    ((u(3), None), (u(3), 0.5)),  # h, _ = f(x)
    ((0.3, u(2), -0.5), [0.1, u(2), 0.2]),
    ((u(3), None, u(3)), u(3, 3)),  # an array's rows
    ((u(2), u(2)), u(2, 2)),
]:
    case(unpack_adjoint_, unpack_adjoint, gs, x, autograd=HELPER)


def unpacked_(h, gs, x):
    return em_runtime.unpacked(h, gs, x)


case(
    unpacked_,
    em_runtime.unpacked,
    Sparse({0: u(3), 1: 0.2}),
    (u(3), None),
    (u(3), 0.5),
    autograd=HELPER,
)
case(unpacked_, em_runtime.unpacked, u(3, 3), (u(3), None, u(3)), u(3, 3), autograd=HELPER)


def entries_adjoint_(c, start, xs):
    return entries_adjoint(c, start, xs)


for c, start, xs in [
    (Sparse({0: 0.3, 2: u(2), 3: 0.1}), 1, [0.2, u(2), 0.5]),  # lst.extend(xs)
    (u(4, 2), 2, [u(2), u(2)]),  # the list's dense adjoint
    (Sparse({1: u(3)}), 1, u(2, 3)),  # extend by the rows of an array
]:
    case(entries_adjoint_, entries_adjoint, c, start, xs, autograd=HELPER)


def placed_(h, c, start, xs):
    return em_runtime.placed(h, c, start, xs)


case(
    placed_, em_runtime.placed, Sparse({1: u(2)}), Sparse({0: 0.3}), 1, [0.2, u(2)], autograd=HELPER
)
case(
    placed_,
    em_runtime.placed,
    Sparse({0: u(2), 1: u(2)}),
    u(4, 2),
    2,
    [u(2), u(2)],
    autograd=HELPER,
)


def add_left_(c, x, y):
    return add_left(c, x, y)


def add_right_(c, x, y):
    return add_right(c, x, y)


for c, x, y in [
    (Sparse({0: u(2), 2: 0.1}), [u(2), 0.3], [0.5]),  # joined lists
    (u(3), [0.1, 0.2], [0.3]),  # the joined list's dense adjoint
    (u(2, 3), u(2, 3), u(3)),  # arrays: unbroadcast
]:
    case(add_left_, add_left, c, x, y, autograd=HELPER)
    case(add_right_, add_right, c, x, y, autograd=HELPER)


def add_tangent_(v, out, x, y, right):
    return add_tangent(v, out, x, y, right)


case(
    add_tangent_,
    add_tangent,
    [u(2), 0.3],
    [u(2), 0.3, 0.5],
    [u(2), 0.3],
    [0.5],
    False,
    autograd=HELPER,
)
case(add_tangent_, add_tangent, (0.2,), (0.1, 0.2), (0.1,), (0.2,), True, autograd=HELPER)
case(add_tangent_, add_tangent, u(3), u(2, 3), u(2, 3), u(3), True, autograd=HELPER)


def repeat_adjoint_(c, seq, n):
    return repeat_adjoint(c, seq, n)


case(repeat_adjoint_, repeat_adjoint, Sparse({0: u(2), 3: 0.2}), [u(2), 0.3], 2, autograd=HELPER)
case(repeat_adjoint_, repeat_adjoint, u(6), (0.1, 0.2), 3, autograd=HELPER)


def repeated_(h, c, seq, n):
    return em_runtime.repeated(h, c, seq, n)


case(
    repeated_,
    em_runtime.repeated,
    Sparse({0: u(2), 1: 0.1}),
    Sparse({}),
    [u(2), 0.3],
    2,
    autograd=HELPER,
)


def without_(c, key):
    return without(c, key)


for c, key in [
    (Sparse({0: u(2), 1: 0.3}), 1),
    (Sparse({"w": u(2)}), "b"),
    (u(3, 2), 1),  # a list's dense adjoint: zeros at the overwritten entry
]:
    case(without_, without, c, key, autograd=HELPER)


def tangent_or_zeros_(v, x):
    return tangent_or_zeros(v, x)


case(tangent_or_zeros_, tangent_or_zeros, u(3), u(3), autograd=HELPER)
case(tangent_or_zeros_, tangent_or_zeros, [0.3, u(2)], [0.1, u(2)], autograd=HELPER)


def as_adjoint_(ct):
    return as_adjoint(ct)


case(as_adjoint_, as_adjoint, (u(2), 0.3), autograd=HELPER)
case(as_adjoint_, as_adjoint, u(2, 2), autograd=HELPER)


def sparse_(entries):
    return Sparse(entries)


case(sparse_, Sparse, {1: u(3)}, autograd=HELPER)

# =========================================================================== containers


def spread_(c, seq):
    return ct.spread(c, seq)


case(spread_, ct.spread, u(2, 3), [u(3), u(2, 3), 0.5], autograd=HELPER)
case(spread_, ct.spread, u(2), u(4, 2), autograd=HELPER)


def gathered_(h, c, seq):
    return em_containers.gathered(h, c, seq)


case(
    gathered_,
    em_containers.gathered,
    Sparse({0: u(3), 2: 0.4}),
    u(2, 3),
    [u(3), u(2, 3), 0.5],
    autograd=HELPER,
)
case(gathered_, em_containers.gathered, u(4, 2), u(2), u(4, 2), autograd=HELPER)


def list_builtin_(c, out, iterable):
    return ct.list_builtin(c, out, iterable)


case(list_builtin_, ct.list_builtin, Sparse({1: u(2)}), None, u(3, 2), autograd=HELPER)
case(list_builtin_, ct.list_builtin, Sparse({0: 0.3}), None, (0.1, u(2)), autograd=HELPER)


def list_builtin_t_(h, c, iterable):
    return em_containers.list_builtin_t(h, c, iterable)


case(
    list_builtin_t_,
    em_containers.list_builtin_t,
    u(3, 2),
    Sparse({1: u(2)}),
    u(3, 2),
    autograd=HELPER,
)
case(
    list_builtin_t_,
    em_containers.list_builtin_t,
    Sparse({0: 0.3}),
    Sparse({0: 0.1}),
    [0.1],
    autograd=HELPER,
)


def max_builtin_(c, out, a, b, c2):
    return ct.max_builtin(c, out, a, b, c2)


def max_builtin_seq(c, out, seq):
    return ct.max_builtin(c, out, seq)


case(
    max_builtin_,
    ct.max_builtin,
    0.4, 0.9, 0.3, 0.9, -0.2,
    fn_kw=dict(out=0.9, a=0.3, b=0.9, c2=-0.2),
    autograd=HELPER,
)  # fmt: skip
SEQ = u(4)
case(
    max_builtin_seq,
    ct.max_builtin,
    0.4,
    0.9,
    [0.3, 0.9, -0.2],
    fn_kw=dict(out=0.9, seq=[0.3, 0.9, -0.2]),
    autograd=HELPER,
)
case(
    max_builtin_seq,
    ct.max_builtin,
    0.4,
    SEQ.max(),
    SEQ,
    fn_kw=dict(out=SEQ.max(), seq=SEQ),
    autograd=HELPER,
)


def max_builtin_t_(h, c, out, a, b, c2):
    return em_containers.max_builtin_t(h, c, out, a, b, c2)


def max_builtin_t_seq(h, c, out, seq):
    return em_containers.max_builtin_t(h, c, out, seq)


def max_builtin_jvp_(v, out, a, b, c2):
    return ct.max_builtin_jvp(v, out, a, b, c2)


def max_builtin_jvp_seq(v, out, seq):
    return ct.max_builtin_jvp(v, out, seq)


ITEMS = (0.3, 0.9, -0.2)
H = Sparse({0: 0.1, 1: -0.4, 2: 0.3})
kw = dict(out=0.9, a=0.3, b=0.9, c2=-0.2)
case(
    max_builtin_t_,
    em_containers.max_builtin_t,
    H,
    0.4,
    0.9,
    *ITEMS,
    fn_kw=dict(c=0.4, **kw),
    autograd=HELPER,
)
case(max_builtin_jvp_, ct.max_builtin_jvp, (0.1, 0.2, 0.3), 0.9, *ITEMS, fn_kw=kw, autograd=HELPER)
for seq, h, v in [
    (list(ITEMS), Sparse({0: Sparse({1: 0.5, 2: 0.1})}), ([0.1, 0.2, 0.3],)),
    (SEQ, Sparse({0: u(4)}), (u(4),)),
]:
    out = max(seq)
    fn_kw = dict(c=0.4, out=out, seq=seq)
    case(
        max_builtin_t_seq,
        em_containers.max_builtin_t,
        h,
        0.4,
        out,
        seq,
        fn_kw=fn_kw,
        autograd=HELPER,
    )
    fn_kw = dict(out=out, seq=seq)
    case(max_builtin_jvp_seq, ct.max_builtin_jvp, v, out, seq, fn_kw=fn_kw, autograd=HELPER)


def with_entry_(container, value, key):
    return op.with_entry(container, key, value)


for container, key, value in [
    ([0.1, u(2)], 1, u(2)),
    ((0.1, u(2), 0.3), 0, 0.5),
    ({"w": u(2), "b": 0.3}, "b", 0.5),
    (Sparse({0: u(2), 1: 0.3}), 1, 0.5),  # the tangent of a Sparse stays one, and adds up
]:
    opts = dict(wrt=(0, 2), autograd=HELPER)
    case(with_entry_, op.with_entry, container, key, value, **opts)


def pair_like_(first, second, out):
    return la.pair_like(out, first, second)


for out in (np.linalg.slogdet(spd(3)), (1.0, 0.5)):
    opts = dict(wrt=(1, 2), autograd=HELPER)
    case(pair_like_, la.pair_like, out, 0.0, u(), **opts)


def split_ties_(picked, c, x, y):
    return el.split_ties(picked, c, x, y)


X4, Y4 = np.array([1.0, 3.0, 3.0, 2.0]), np.array([2.0, 3.0, 1.0, 2.0])
for x, y in [(X4, Y4), (X4, Y4 + 5.0), (u(2, 4), X4)]:  # ties (ReLU's maximum(x, 0.0)), none
    c = u(*np.broadcast_shapes(x.shape, y.shape))
    ans = np.maximum(x, y)
    case(split_ties_, el.split_ties, c * (x == ans), c, x, y, wrt=(0, 1), autograd=HELPER)


def pick_into_(c, keep, x, y):
    return pick_into(c, keep, x, y)


for x, y in [(X4, Y4), (X4, Y4 + 5.0), (u(2, 4), X4), (X4, 0.0)]:  # ties, none, a ReLU's
    g = u(*np.broadcast_shapes(np.shape(x), np.shape(y)))
    case(pick_into_, pick_into, g, x == np.maximum(x, y), x, y, autograd=HELPER)
case(
    pick_into_,
    pick_into,
    u(4),
    np.array([[True], [False]]) == X4.astype(bool),
    X4,
    0.0,
    autograd=HELPER,
)  # a keep that broadcasts g up: out of place


# =========================================================================== arrays in parts


def parts_(c, x):
    return jn.parts(c, x)


def unparts_(h, c, x):
    return em_parts.unparts(h, c, x)


NESTED = [[0.1, u(2)], u(2, 2)]
case(parts_, jn.parts, u(2, 3), [0.1, u(3)], autograd=HELPER)  # np.array([a, b])
case(parts_, jn.parts, u(2, 2, 2), NESTED, autograd=HELPER)
case(parts_, jn.parts, u(3), u(3), autograd=HELPER)  # np.asarray of an array
case(unparts_, em_parts.unparts, Sparse({1: u(3)}), u(2, 3), [0.1, u(3)], autograd=HELPER)
case(
    unparts_, em_parts.unparts, Sparse({0: Sparse({1: u(2)})}), u(2, 2, 2), NESTED, autograd=HELPER
)


def entries_(h, xs):
    return em_parts.entries(h, xs)


case(entries_, em_parts.entries, Sparse({0: u(2), 2: 0.5}), [u(2), u(3), 0.1], autograd=HELPER)
case(entries_, em_parts.entries, u(3, 2), u(3, 2), autograd=HELPER)


def concatenate_vjp_(c, out, arrays, axis=0):
    return jn.concatenate_vjp(c, out, arrays, axis=axis)


def stack_vjp_(c, out, arrays, axis=0):
    return jn.stack_vjp(c, out, arrays, axis=axis)


PARTS = [u(2, 3), u(1, 3), u(4, 3)]
for arrays, axis in [(PARTS, 0), ([u(3, 2), u(3, 1)], 1), ([u(2, 2), u(3)], None), (u(3, 2, 2), 1)]:
    out = np.concatenate(arrays, axis=axis)
    case(concatenate_vjp_, jn.concatenate_vjp, u(*out.shape), out, arrays, axis, autograd=HELPER)
for arrays, axis in [([u(2, 3), u(2, 3)], 0), ([u(3), u(3), u(3)], -1), (u(2, 3), 1)]:
    out = np.stack(arrays, axis=axis)
    case(stack_vjp_, jn.stack_vjp, u(*out.shape), out, arrays, axis, autograd=HELPER)


def hstack_vjp_(c, out, tup):
    return jn.hstack_vjp(c, out, tup)


def vstack_vjp_(c, out, tup):
    return jn.vstack_vjp(c, out, tup)


def column_stack_vjp_(c, out, tup):
    return jn.column_stack_vjp(c, out, tup)


def dstack_vjp_(c, out, tup):
    return jn.dstack_vjp(c, out, tup)


for f, prim, np_f, tups in [
    (hstack_vjp_, jn.hstack_vjp, np.hstack, [[u(2), u(3)], [u(2, 1), u(2, 3)]]),
    (vstack_vjp_, jn.vstack_vjp, np.vstack, [[u(3), u(2, 3)]]),
    (column_stack_vjp_, jn.column_stack_vjp, np.column_stack, [[u(3), u(3, 2)]]),
    (dstack_vjp_, jn.dstack_vjp, np.dstack, [[u(2, 3), u(2, 3, 2)]]),
]:
    for tup in tups:
        out = np_f(tup)
        case(f, prim, u(*out.shape), out, tup, autograd=HELPER)


def split_vjp_(c, out, ary, indices_or_sections, axis=0):
    return jn.split_vjp(c, out, ary, indices_or_sections, axis=axis)


ARY = u(4, 3)
for ios, axis, c in [
    (2, 0, Sparse({0: u(2, 3), 1: u(2, 3)})),
    ([1, 2], 1, Sparse({2: u(4, 1)})),  # a part with no adjoint: zeros
    (3, 1, Sparse({0: u(4, 1), 1: u(4, 1)})),
]:
    out = np.split(ARY, ios, axis=axis)
    case(split_vjp_, jn.split_vjp, c, out, ARY, ios, axis, autograd=HELPER)


def repeat_vjp_(c, out, a, repeats, axis=None):
    return jn.repeat_vjp(c, out, a, repeats, axis=axis)


for a, repeats, axis in [(u(2, 3), 2, None), (u(2, 3), 3, 1), (u(3, 2), [1, 0, 2], 0)]:
    out = np.repeat(a, repeats, axis=axis)
    case(repeat_vjp_, jn.repeat_vjp, u(*out.shape), out, a, repeats, axis, autograd=HELPER)


def tile_vjp_(c, out, A, reps):
    return jn.tile_vjp(c, out, A, reps)


for A, reps in [(u(2, 3), (2, 1)), (u(3), (2, 2))]:
    out = np.tile(A, reps)
    case(tile_vjp_, jn.tile_vjp, u(*out.shape), out, A, reps, autograd=HELPER)


def pad_vjp_(c, out, array, pad_width, mode="constant"):
    return jn.pad_vjp(c, out, array, pad_width, mode)


def pad_jvp_(v, out, array, pad_width, mode="constant"):
    return jn.pad_jvp(v, out, array, pad_width, mode)


for array, width, mode in [(u(2, 3), 1, "constant"), (u(3, 2), ((1, 2), (0, 1)), "reflect")]:
    out = np.pad(array, width, mode)
    case(pad_vjp_, jn.pad_vjp, u(*out.shape), out, array, width, mode, autograd=HELPER)
    case(pad_jvp_, jn.pad_jvp, u(*array.shape), out, array, width, mode, autograd=HELPER)
for mode in ("edge", "symmetric", "wrap"):
    array = u(3, 4)
    out = np.pad(array, 2, mode)
    case(pad_vjp_, jn.pad_vjp, u(*out.shape), out, array, 2, mode, autograd=HELPER)


def index_concatenated_vjp_(c, out, key, concat):
    return jn.index_concatenated_vjp(c, out, key, concat)


def index_concatenated_jvp_(v, key, concat):
    return jn.index_concatenated_jvp(v, key, concat)


for concat, key in [
    (np.r_, (u(2), 0.5, u(3))),
    (np.r_, ("0,2", u(2), u(1, 2))),
    (np.r_, (u(2), slice(0, 3), u(2))),
    (np.c_, (u(3), u(3, 2))),
    (np.r_, u(3)),
]:
    out = concat[key]
    tangent = (
        tuple(u(*np.shape(v)) if not isinstance(v, (str, slice)) else None for v in key)
        if isinstance(key, tuple)
        else u(*np.shape(key))
    )
    h = u(*out.shape)
    case(index_concatenated_vjp_, jn.index_concatenated_vjp, h, out, key, concat, autograd=HELPER)
    case(index_concatenated_jvp_, jn.index_concatenated_jvp, tangent, key, concat, autograd=HELPER)


def take_vjp_(c, out, a, indices, axis=None):
    return jn.take_vjp(c, out, a, indices, axis=axis)


def take_along_axis_vjp_(c, out, arr, indices, axis=-1):
    return jn.take_along_axis_vjp(c, out, arr, indices, axis=axis)


def sort_vjp_(c, out, a, axis=-1):
    return jn.sort_vjp(c, out, a, axis=axis)


def unique_vjp_(c, out, ar):
    return jn.unique_vjp(c, out, ar)


A34 = u(3, 4)
for indices, axis in [([0, 2, 2, 5], None), (np.array([[1, 0], [1, 1]]), 1)]:
    out = np.take(A34, indices, axis=axis)
    case(take_vjp_, jn.take_vjp, u(*out.shape), out, A34, indices, axis, autograd=HELPER)
IDX = np.argsort(A34, axis=1)[:, :2]
case(
    take_along_axis_vjp_,
    jn.take_along_axis_vjp,
    u(3, 2),
    np.take_along_axis(A34, IDX, 1),
    A34,
    IDX,
    1,
    autograd=HELPER,
)
for axis in (-1, 0, None):
    out = np.sort(A34, axis=axis)
    case(sort_vjp_, jn.sort_vjp, u(*out.shape), out, A34, axis, autograd=HELPER)
AR = np.array([0.3, -0.2, 0.3, 0.9, -0.2])
case(unique_vjp_, jn.unique_vjp, u(3), np.unique(AR), AR, autograd=HELPER)

# =========================================================================== shapes


def untranspose_(c, axes=None):
    return sh.untranspose(c, axes)


for c, axes in [
    (u(2, 3, 4), None),
    (u(2, 3, 4), (1, 2, 0)),
    (u(2, 3, 4), ((2, 0, 1),)),
    (u(3, 2), ()),
]:
    case(untranspose_, sh.untranspose, c, axes, autograd=HELPER)
case(untranspose_, sh.untranspose, u(2, 3, 4), (-1, 0, 1), autograd=HELPER)


def mT_(x):
    return la.mT(x)


case(mT_, la.mT, u(2, 3, 4), autograd=HELPER)


def diagonal_vjp_(c, out, a, offset=0, axis1=0, axis2=1):
    return la.diagonal_vjp(c, out, a, offset=offset, axis1=axis1, axis2=axis2)


def trace_vjp_(c, out, a, offset=0, axis1=0, axis2=1):
    return la.trace_vjp(c, out, a, offset=offset, axis1=axis1, axis2=axis2)


for a, offset, axis1, axis2 in [(u(3, 4), 0, 0, 1), (u(2, 3, 4), 1, 1, 2), (u(4, 3), -1, 0, 1)]:
    out = np.diagonal(a, offset, axis1, axis2)
    case(
        diagonal_vjp_, la.diagonal_vjp, u(*out.shape), out, a, offset, axis1, axis2, autograd=HELPER
    )
    out = np.trace(a, offset, axis1, axis2)
    case(trace_vjp_, la.trace_vjp, u(*np.shape(out)), out, a, offset, axis1, axis2, autograd=HELPER)

# =========================================================================== reductions


def expand_(c, x, axis=None, keepdims=False):
    return rd.expand(c, x, axis=axis, keepdims=keepdims)


for c, x, axis, keepdims in [
    (0.3, u(2, 3), None, False),
    (u(2), u(2, 3), 1, False),
    (u(2, 1), u(2, 3), 1, True),
    (u(4), u(2, 4, 3), (0, 2), False),
    (u(), u(3, 2), None, False),  # a 0-d array
]:
    case(expand_, rd.expand, c, x, axis, keepdims, autograd=HELPER)


def max_vjp_(c, out, a, axis=None, keepdims=False):
    return rd.max_vjp(c, out, a, axis=axis, keepdims=keepdims)


def max_jvp_(v, out, a, axis=None, keepdims=False):
    return rd.max_jvp(v, out, a, axis=axis, keepdims=keepdims)


TIES = np.array([[0.3, 0.9, 0.9], [0.5, -0.1, 0.2]])
for a, axis, keepdims in [(A34, None, False), (A34, 1, False), (A34, 0, True), (TIES, 1, False)]:
    out = np.max(a, axis=axis, keepdims=keepdims)
    kw = dict(keepdims=keepdims)
    case(max_vjp_, rd.max_vjp, u(*np.shape(out)), out, a, axis, kw=kw, autograd=HELPER)
    case(max_jvp_, rd.max_jvp, u(*a.shape), out, a, axis, kw=kw, autograd=HELPER)


def var_vjp_(c, a, out, axis=None, ddof=0, keepdims=False):
    return rd.var_vjp(c, out, a, axis=axis, ddof=ddof, keepdims=keepdims)


def var_jvp_(v, a, out, axis=None, ddof=0, keepdims=False):
    return rd.var_jvp(v, out, a, axis=axis, ddof=ddof, keepdims=keepdims)


def std_vjp_(c, out, a, axis=None, ddof=0, keepdims=False):
    return rd.std_vjp(c, out, a, axis=axis, ddof=ddof, keepdims=keepdims)


def std_jvp_(v, out, a, axis=None, ddof=0, keepdims=False):
    return rd.std_jvp(v, out, a, axis=axis, ddof=ddof, keepdims=keepdims)


for axis, ddof, keepdims in [(None, 0, False), (1, 1, False), ((0, 1), 0, True)]:
    a = u(3, 4, 2)
    var, std = np.var(a, axis=axis, ddof=ddof, keepdims=keepdims), np.std(a, axis, ddof=ddof)
    std = np.std(a, axis=axis, ddof=ddof, keepdims=keepdims)
    c = u(*np.shape(var))
    for f, prim, out, wrt in [
        (var_vjp_, rd.var_vjp, var, (0, 2)),
        (std_vjp_, rd.std_vjp, std, (0, 1, 2)),
    ]:
        case(
            f,
            prim,
            c,
            out,
            a,
            axis,
            kw=dict(ddof=ddof, keepdims=keepdims),
            wrt=wrt,
            autograd=HELPER,
        )
    for f, prim, out, wrt in [
        (var_jvp_, rd.var_jvp, var, (0, 2)),
        (std_jvp_, rd.std_jvp, std, (0, 1, 2)),
    ]:
        kw = dict(ddof=ddof, keepdims=keepdims)
        case(f, prim, u(*a.shape), out, a, axis, kw=kw, wrt=wrt, autograd=HELPER)


def cumsum_(c, out, a, axis=None):
    return rd.cumsum(c, out, a, axis=axis)


def reverse_cumsum_(x, axis):
    return rd.reverse_cumsum(x, axis)


for a, axis in [(u(3, 4), 1), (u(3, 4), None), (u(5), 0)]:
    out = np.cumsum(a, axis=axis)
    case(cumsum_, rd.cumsum, u(*out.shape), out, a, axis, autograd=HELPER)
case(reverse_cumsum_, rd.reverse_cumsum, u(3, 4), 1, autograd=HELPER)

# --------------------------------------------------------------------------- products of elements
# At a zero of ``a`` the helpers switch formulas; their partial derivatives hold the zeros where
# they are (directions that move them leave the formula the helpers are at).


def nonzero(where):
    """Directions that leave the zeros of ``where`` (an argument) in place."""

    def direction(i, v):
        return v * (where != 0) if np.shape(v) == np.shape(where) else v

    return direction


def cumprod_(c, out, a, axis=None):
    return rd.cumprod(c, out, a, axis=axis)


def cumprod_jvp_(v, out, a, axis=None):
    return rd.cumprod_jvp(v, out, a, axis=axis)


def along_(x, axis):
    return em_elements.along(x, axis)


def zeros_as_one_(a, axis):
    return em_elements.zeros_as_one(a, axis)


def first_as_one_(a, axis):
    return em_elements.first_as_one(a, axis)


WITH_ZEROS = np.array([[0.5, 0.0, 1.2, -0.7], [0.8, -1.1, 0.0, 0.0], [1.3, 0.6, -0.4, 0.9]])
for a, axis in [(away(3, 4), 1), (away(3, 4), None), (WITH_ZEROS, 1), (WITH_ZEROS, None)]:
    out = np.cumprod(a, axis=axis)
    c = u(*out.shape)
    case(
        cumprod_, rd.cumprod, c, out, a, axis, wrt=(0, 1, 2), direction=nonzero(a), autograd=HELPER
    )
    case(
        cumprod_jvp_,
        rd.cumprod_jvp,
        u(*a.shape),
        out,
        a,
        axis,
        wrt=(0, 1, 2),
        direction=nonzero(a),
        autograd=HELPER,
    )
    case(zeros_as_one_, em_elements.zeros_as_one, a, axis, direction=nonzero(a), autograd=HELPER)
    case(first_as_one_, em_elements.first_as_one, a, axis, direction=nonzero(a), autograd=HELPER)
case(along_, em_elements.along, u(3, 2), None, autograd=HELPER)
case(along_, em_elements.along, u(3, 2), 1, autograd=HELPER)


# rows with no zero, one, two, three
ZEROS = np.array(
    [
        [0.5, 1.3, -1.2, 0.7, 0.9],
        [0.5, 0.0, 1.2, -0.7, 0.9],
        [0.8, 0.0, 0.6, 0.0, 1.1],
        [0.0, -1.1, 0.0, 0.7, 0.0],
    ]
)


def beyond_second_zero_(c, a, axis):
    return em_elements.beyond_second_zero(c, a, axis)


def past_first_zero_(v, a, axis):
    return em_elements.past_first_zero(v, a, axis)


for a, axis in [(ZEROS, 1), (ZEROS, None), (ZEROS[2:3], 1)]:
    opts = dict(wrt=(0, 1), direction=nonzero(a), autograd=HELPER)
    c = u(*np.cumprod(a, axis=axis).shape)
    case(beyond_second_zero_, em_elements.beyond_second_zero, c, a, axis, **opts)
    case(past_first_zero_, em_elements.past_first_zero, u(*a.shape), a, axis, **opts)


def cumprod_along(c, a):
    """The adjoint of ``cumprod(a)`` where ``cumprod(a)`` is ``ans``: moving a zero of ``a`` moves
    ``ans`` too, and the partial derivatives add up to the derivative of the gradient."""
    return rd.cumprod(c, np.cumprod(a, axis=1), a, axis=1)


def cumprod_jvp_along(v, a):
    return rd.cumprod_jvp(v, np.cumprod(a, axis=None), a, axis=None)


for a in (ZEROS, ZEROS[1:2], ZEROS[2:3], ZEROS[3:]):
    end_to_end(cumprod_along, u(*a.shape), a, autograd=HELPER)
    end_to_end(cumprod_jvp_along, u(*a.shape), a, autograd=HELPER)


def prod_vjp_(c, out, a, axis=None, keepdims=False):
    return rd.prod_vjp(c, out, a, axis=axis, keepdims=keepdims)


def prod_jvp_(v, out, a, axis=None, keepdims=False):
    return rd.prod_jvp(v, out, a, axis=axis, keepdims=keepdims)


def prod_hessian_(v, c, out, a, axis=None, keepdims=False):
    return em_elements.prod_hessian(v, c, out, a, axis=axis, keepdims=keepdims)


ONE_ZERO = np.array([[0.5, 0.0, 1.2], [0.8, -1.1, 0.7]])
TWO_ZEROS = np.array([[0.5, 0.0, 1.2, 0.0], [0.8, -1.1, 0.7, 1.3]])
for a, axis, keepdims in [
    (away(3, 4), None, False),
    (away(3, 4), 1, False),
    (away(2, 3, 2), (0, 2), True),
    (ONE_ZERO, 1, False),
    (ONE_ZERO, None, False),
    (TWO_ZEROS, 1, True),
    (TWO_ZEROS, 0, False),
]:
    out = np.prod(a, axis=axis, keepdims=keepdims)
    c = u(*np.shape(out))
    opts = dict(direction=nonzero(a), autograd=HELPER)
    kw = dict(keepdims=keepdims)
    case(prod_vjp_, rd.prod_vjp, c, out, a, axis, kw=kw, wrt=(0, 1, 2), **opts)
    case(prod_jvp_, rd.prod_jvp, u(*a.shape), out, a, axis, kw=kw, wrt=(0, 1, 2), **opts)
    case(
        prod_hessian_,
        em_elements.prod_hessian,
        u(*a.shape),
        c,
        out,
        a,
        axis,
        keepdims,
        wrt=(0, 1),
        **opts,
    )


def prod_vjp_along(c, a):
    return rd.prod_vjp(c, np.prod(a, axis=1), a, axis=1)


def prod_jvp_along(v, a):
    return rd.prod_jvp(v, np.prod(a), a)


for a in (ONE_ZERO, TWO_ZEROS):
    end_to_end(prod_vjp_along, u(a.shape[0]), a, autograd=HELPER)
    end_to_end(prod_jvp_along, u(*a.shape), a, autograd=HELPER)

# =========================================================================== products


def matmul_x_(c, y, out, x):
    return op.matmul_x(c, out, x, y)


def matmul_y_(c, x, out, y):
    return op.matmul_y(c, out, x, y)


for sx, sy in [
    ((2, 3), (3, 4)),
    ((3,), (3,)),
    ((3,), (3, 4)),
    ((5, 2, 3), (3,)),
    ((2, 3), (5, 3, 4)),
]:
    x, y = u(*sx), u(*sy)
    out = x @ y
    case(matmul_x_, op.matmul_x, u(*np.shape(out)), out, x, y, wrt=(0, 3), autograd=HELPER)
    case(matmul_y_, op.matmul_y, u(*np.shape(out)), out, x, y, wrt=(0, 2), autograd=HELPER)


def dot_a_(c, b, out, a):
    return la.dot_a(c, out, a, b)


def dot_b_(c, a, out, b):
    return la.dot_b(c, out, a, b)


for sa, sb in [((2, 3), (3, 4)), ((3,), (3,)), ((2, 2, 3), (3, 4))]:
    a, b = u(*sa), u(*sb)
    out = np.dot(a, b)
    case(dot_a_, la.dot_a, u(*np.shape(out)), out, a, b, wrt=(0, 3), autograd=HELPER)
    case(dot_b_, la.dot_b, u(*np.shape(out)), out, a, b, wrt=(0, 2), autograd=HELPER)


def einsum_adjoint_0(h, b=None, c=None, d=None, *, subscripts, i, a):
    return la.einsum_adjoint(h, subscripts, i, a, b, c, d)


def einsum_adjoint_1(h, a, c=None, d=None, *, subscripts, i, b):
    return la.einsum_adjoint(h, subscripts, i, a, b, c, d)


def einsum_adjoint_2(h, a, b, d=None, *, subscripts, i, c):
    return la.einsum_adjoint(h, subscripts, i, a, b, c, d)


def einsum_adjoint_3(h, a, b, c, *, subscripts, i, d):
    return la.einsum_adjoint(h, subscripts, i, a, b, c, d)


def einsum_with_0(v, b=None, c=None, d=None, *, subscripts, i, a):
    return la.einsum_with(v, subscripts, i, a, b, c, d)


def einsum_with_1(v, a, c=None, d=None, *, subscripts, i, b):
    return la.einsum_with(v, subscripts, i, a, b, c, d)


def einsum_with_2(v, a, b, d=None, *, subscripts, i, c):
    return la.einsum_with(v, subscripts, i, a, b, c, d)


def einsum_with_3(v, a, b, c, *, subscripts, i, d):
    return la.einsum_with(v, subscripts, i, a, b, c, d)


EINSUM_ADJOINT = [einsum_adjoint_0, einsum_adjoint_1, einsum_adjoint_2, einsum_adjoint_3]
EINSUM_WITH = [einsum_with_0, einsum_with_1, einsum_with_2, einsum_with_3]
for subscripts, shapes in [
    ("ij,jk->ik", [(2, 3), (3, 4)]),
    ("ii->i", [(3, 3)]),
    ("...j,j->...", [(2, 4, 3), (3,)]),
    ("ij,jk,kl,l->i", [(2, 3), (3, 2), (2, 4), (4,)]),
]:
    ops = [u(*s) for s in shapes]
    out = np.einsum(subscripts, *ops)
    n = len(ops)
    for i in range(n):
        others = tuple(3 + j for j in range(n) if j != i)
        opts = dict(wrt=(0, *others), autograd=HELPER)
        h = u(*np.shape(out))
        case(EINSUM_ADJOINT[i], la.einsum_adjoint, h, subscripts, i, *ops, **opts)
        case(EINSUM_WITH[i], la.einsum_with, u(*shapes[i]), subscripts, i, *ops, **opts)

# --------------------------------------------------------------------------- np.linalg.solve


def solved_(c, a, b):
    return la.solved(c, a, b)


def solve_a_(c, out, a, b):
    return la.solve_a(c, out, a, b)


def solve_a_jvp_(v, out, a, b):
    return la.solve_a_jvp(v, out, a, b)


for a, b in [
    (spd(3), u(3)),
    (spd(3), u(3, 2)),
    (spd(3, batch=(2,)), u(2, 3, 2)),
    (spd(3, batch=(2,)), u(3)),
]:
    out = np.linalg.solve(a, b)
    c = u(*out.shape)
    case(solved_, la.solved, c, a, b, wrt=(0, 1), autograd=HELPER)
    case(solve_a_, la.solve_a, c, out, a, b, wrt=(0, 1, 2), autograd=HELPER)
    case(solve_a_jvp_, la.solve_a_jvp, u(*a.shape), out, a, b, wrt=(0, 1, 2), autograd=HELPER)

# --------------------------------------------------------------------------- np.linalg.cholesky


def cholesky_vjp_(c, out, a, upper=False):
    return la.cholesky_vjp(c, out, a, upper=upper)


def cholesky_jvp_(v, out, a, upper=False):
    return la.cholesky_jvp(v, out, a, upper=upper)


def cholesky_s_(c, L):
    return em_cholesky.cholesky_s(c, L)


def cholesky_w_(h, L):
    return em_cholesky.cholesky_w(h, L)


def phi_(x):
    return em_cholesky.phi(x)


def sym_(x):
    return em_cholesky.sym(x)


def lower_(x, upper):
    return em_cholesky.lower(x, upper)


for a, upper in [(spd(3), False), (spd(4, batch=(2,)), False), (spd(3), True)]:
    out = np.linalg.cholesky(a, upper=upper)
    opts = dict(kw=dict(upper=upper), wrt=(0, 1), autograd=HELPER)
    case(cholesky_vjp_, la.cholesky_vjp, u(*a.shape), out, a, **opts)
    case(cholesky_jvp_, la.cholesky_jvp, u(*a.shape), out, a, **opts)
L = np.linalg.cholesky(spd(3))
case(cholesky_s_, em_cholesky.cholesky_s, u(3, 3), L, wrt=(0, 1), autograd=HELPER)
case(cholesky_w_, em_cholesky.cholesky_w, u(3, 3), L, wrt=(0, 1), autograd=HELPER)
case(
    cholesky_s_,
    em_cholesky.cholesky_s,
    u(2, 3, 3),
    L + 0.2 * u(2, 3, 3),
    wrt=(0, 1),
    autograd=HELPER,
)
case(phi_, em_cholesky.phi, u(2, 3, 3), autograd=HELPER)
case(sym_, em_cholesky.sym, u(3, 3), autograd=HELPER)
case(lower_, em_cholesky.lower, u(3, 3), True, autograd=HELPER)

# --------------------------------------------------------------------------- np.linalg.norm


def norm_vjp_(c, out, x, ord=None, axis=None, keepdims=False):
    return la.norm_vjp(c, out, x, ord=ord, axis=axis, keepdims=keepdims)


def norm_jvp_(v, out, x, ord=None, axis=None, keepdims=False):
    return la.norm_jvp(v, out, x, ord=ord, axis=axis, keepdims=keepdims)


def norm_hessian_(v, c, out, x, ord=None, axis=None, keepdims=False):
    return em_norms.norm_hessian(v, c, out, x, ord=ord, axis=axis, keepdims=keepdims)


for x, ord, axis, keepdims in [
    (u(5), None, None, False),
    (u(3, 4), None, 1, True),
    (u(3, 4), 2, 0, False),
    (away(4), 3, None, False),
    (away(2, 4), 1.5, 1, False),
    (away(4), 1, None, False),
    (u(4), np.inf, None, False),
    (u(3, 4), "fro", None, False),
    (u(3, 4), None, (0, 1), False),
    (u(3, 4), "nuc", None, False),
    (u(4, 3), "nuc", None, False),
    (u(3, 3), "nuc", None, False),
    (u(2, 3, 4), "nuc", (1, 2), True),
    (u(3, 4), 2, None, False),
    (u(4, 3), -2, None, False),
    (u(4, 2, 3), 2, (0, 2), False),
    (u(3, 4), 1, None, False),
    (u(3, 4), -np.inf, None, False),
]:
    out = np.linalg.norm(x, ord, axis, keepdims)
    c = u(*np.shape(out))
    opts = dict(autograd=HELPER)
    # the gradient picks the elements whose sum is the norm: x and out matter only through a
    # step (x + eps v, out held, picks none); in float32 the norm rounded from float64 is not
    # the sum it picks either
    picks = ord in (np.inf, -np.inf) or (ord in (1, -1) and x.ndim == 2)
    if picks:
        opts.update(wrt=(0,), float64="out is the float64 norm rounded, not the sum it picks")
    else:
        opts.update(wrt=(0, 1, 2))
    case(norm_vjp_, la.norm_vjp, c, out, x, ord, axis, keepdims, **opts)
    case(norm_jvp_, la.norm_jvp, u(*x.shape), out, x, ord, axis, keepdims, **opts)
    case(
        norm_hessian_,
        em_norms.norm_hessian,
        u(*x.shape),
        c,
        out,
        x,
        ord,
        axis,
        keepdims,
        **{**opts, "wrt": (0, 1)},
    )


def norm_vjp_along(c, x, ord=None, axis=None):
    """The gradient of a norm where ``out`` is the norm: its derivative is the norm's Hessian,
    from the partial derivatives in ``x`` and in ``out``."""
    return la.norm_vjp(c, np.linalg.norm(x, ord, axis), x, ord, axis)


for x, ord, axis in [
    (u(4), None, None),
    (away(2, 4), 3, 1),
    (u(3, 4), "fro", None),
    (u(3, 4), "nuc", None),
    (u(4, 3), 2, None),
    (u(3, 4), np.inf, None),
]:
    c = u(*np.shape(np.linalg.norm(x, ord, axis)))
    end_to_end(norm_vjp_along, c, x, ord=ord, axis=axis, autograd=HELPER)

# =========================================================================== emitted code, again


def second_order_model(A, B, x):
    """A function whose backpropagator calls many of the helpers: tests/test_rules.py writes its
    emitted code to a file and differentiates that again."""
    S = A @ A.T + 3.0 * np.eye(3)
    y = np.linalg.solve(S, x)
    e = np.einsum("ij,jk->ik", A, B)
    parts = np.split(np.concatenate([x, np.tanh(y)]), 2)
    p, q = parts
    return (
        np.sum(np.linalg.cholesky(S))
        + np.sum(y**2)
        + np.linalg.norm(e)
        + np.linalg.norm(A, "nuc")
        + np.sum(np.cumprod(x))
        + np.prod(x)
        + np.var(B, axis=0).sum()
        + np.max(np.stack([p, q]))
        + np.sum(p * q)
    )


emitted_bp = None  # second_order_model's backpropagator, once the test has imported it


def seed(result):
    return 1.0


def gradient_along(A, B, x, vA, vB, vx):
    """``<grad f, v>``: its gradient is the Hessian of f times v (reverse over reverse), its
    tangent the same (forward over reverse)."""
    gA, gB, gx = emitted_bp(seed, A, B, x)
    return np.sum(gA * vA) + np.sum(gB * vB) + np.sum(gx * vx)


# --------------------------------------------------------------------------- powers, determinants


def power_slope_(x, y):
    return op.power_slope(x, y)


case(power_slope_, op.power_slope, u(2, 3, lo=0.5, hi=2.0), u(3), wrt=(0, 1), autograd=HELPER)
case(power_slope_, op.power_slope, 0.7, 1.3, wrt=(0, 1), autograd=HELPER, float64=FLOATS)
case(power_slope_, op.power_slope, 0.4, -2.5, wrt=(0, 1), autograd=HELPER, float64=FLOATS)
ZERO_EXPONENTS = np.array([0.0, 1.0, 2.5])
case(power_slope_, op.power_slope, u(3, lo=0.5, hi=2.0), ZERO_EXPONENTS, autograd=HELPER)


def cofactors_(a, det):
    return la.cofactors(a, det)


def inverse_(a):
    return la.inverse(a)


NONSINGULAR = u(3, 3) + 3 * np.eye(3)
for a in (NONSINGULAR, u(2, 3, 3) + 3 * np.eye(3)):
    case(cofactors_, la.cofactors, a, np.linalg.det(a), wrt=(0, 1), autograd=HELPER)
    case(inverse_, la.inverse, a, autograd=HELPER)


# --------------------------------------------------------------------------- stores into arrays
# (cpsad/rules/stores.py: `out[key] = v` run as `out = stored(out, key, v)`)
from cpsad.runtime import placed_part, stored, stored_part  # noqa: E402

STORE_INDEXES = [
    (slice(1, 3), u(2)),
    (slice(None), 0.5),  # a number broadcast into every entry
    ((slice(None), 1), u(3)),
    (([0, 2, 2],), u(3)),  # 2 twice: the last write wins
    ((np.array([True, False, True, False]),), u(2)),
    (Ellipsis, u(4)),
]


def stored_(x, v, key):  # (the differentiated arguments first)
    return stored(x, key, v)


for key, v in STORE_INDEXES:
    x = u(3, 4) if isinstance(key, tuple) and len(key) == 2 else u(4)
    if isinstance(key, tuple) and len(key) == 1 and isinstance(key[0], list):
        x = u(4)
    case(stored_, stored, x, key, v, wrt=(0, 2), autograd=HELPER)


def stored_part_(c, out, key, value):
    return stored_part(c, out, key, value)


def placed_part_(c, out, key):
    return placed_part(c, out, key)


for key, v in STORE_INDEXES:
    out = stored(u(3, 4) if isinstance(key, tuple) and len(key) == 2 else u(4), key, v)
    case(stored_part_, stored_part, u(*out.shape), out, key, v, autograd=HELPER)
    case(placed_part_, placed_part, u(*np.shape(out[key])), out, key, autograd=HELPER)


# --------------------------------------------------------------------------- fields of structs
# (cpsad/rules/containers.py: `p.w` of a namedtuple, dataclass or registered pytree)
from collections import namedtuple  # noqa: E402

from cpsad.runtime import field  # noqa: E402

FieldPair = namedtuple("FieldPair", "w b")


def field_(obj, name):
    return field(obj, name)


case(field_, field, FieldPair(u(3), u(2, 2)), "w", autograd=HELPER)
case(field_, field, FieldPair(u(3), u(2, 2)), "b", autograd=HELPER)


def fields_of_a_namedtuple(p):
    return np.sum(np.tanh(p.w) * p.b[0]) + p.b[1, 1] ** 2


end_to_end(fields_of_a_namedtuple, FieldPair(u(3), u(2, 3)), autograd=HELPER)


def field_adjoint_(c, obj, name):
    return field_adjoint(c, obj, name)


def field_tangent_(v, obj, name):
    return field_tangent(v, obj, name)


from cpsad.runtime import field_adjoint, field_tangent  # noqa: E402

case(field_adjoint_, field_adjoint, u(3), FieldPair(u(3), u(2)), "w", autograd=HELPER)
case(
    field_tangent_,
    field_tangent,
    FieldPair(u(3), u(2)),
    FieldPair(u(3), u(2)),
    "b",
    autograd=HELPER,
)


def field_container_tangent_(v, statement, line):
    return field_container_tangent(v, statement, line)


from cpsad.runtime import field_container_tangent  # noqa: E402

# (fixed inputs, not the corpus generator's: a draw here would move every later case's)
case(
    field_container_tangent_,
    field_container_tangent,
    np.array([0.3, -0.2, 0.5]),
    "a.items.append(v)",
    7,
    autograd=HELPER,
)

# (`Params(a, b=c)` made in differentiated code: struct_of and the helpers of its rules)
from cpsad.runtime import struct_adjoint, struct_adjoint_t, struct_of, struct_tangent  # noqa: E402


def struct_of_(values, cls, names):
    return struct_of(cls, values, names)


def struct_adjoint_(c, obj, names):
    return struct_adjoint(c, obj, names)


def struct_adjoint_t_(h, obj, names):
    return struct_adjoint_t(h, obj, names)


def struct_tangent_(v, cls, values, names):
    return struct_tangent(v, cls, values, names)


case(struct_of_, struct_of, FieldPair, (u(3), u(2)), ("w", "b"), wrt=1, autograd=HELPER)
case(struct_of_, struct_of, FieldPair, (u(2), u(3)), ("b", "w"), wrt=1, autograd=HELPER)
case(
    struct_adjoint_,
    struct_adjoint,
    FieldPair(u(3), u(2)),
    FieldPair(u(3), u(2)),
    ("b", "w"),
    autograd=HELPER,
)
case(
    struct_adjoint_t_,
    struct_adjoint_t,
    (u(2), u(3)),
    FieldPair(u(3), u(2)),
    ("b", "w"),
    autograd=HELPER,
)
case(
    struct_tangent_,
    struct_tangent,
    (u(3), u(2)),
    FieldPair,
    (u(3), u(2)),
    ("w", "b"),
    autograd=HELPER,
)

# (`dataclasses.replace(p, w=a)`, `p._replace(w=a)`: struct_replaced and the helpers of its rules)
from cpsad.runtime import (  # noqa: E402
    fields_without,
    fields_zeroed,
    replaced_tangent,
    struct_replaced,
)


def struct_replaced_(obj, values, names):
    return struct_replaced(obj, values, names)


def fields_without_(c, obj, names):
    return fields_without(c, obj, names)


def fields_zeroed_(v, obj, names):
    return fields_zeroed(v, obj, names)


def replaced_tangent_(v, like, names):
    return replaced_tangent(v, like, names)


case(
    struct_replaced_,
    struct_replaced,
    FieldPair(u(3), u(2)),
    (u(2),),
    ("b",),
    wrt=(0, 1),
    autograd=HELPER,
)
case(
    struct_replaced_,
    struct_replaced,
    FieldPair(u(3), u(2)),
    (u(2), u(3)),
    ("b", "w"),
    wrt=(0, 1),
    autograd=HELPER,
)
case(
    fields_without_,
    fields_without,
    Sparse({0: u(3), 1: u(2)}),
    FieldPair(u(3), u(2)),
    ("w",),
    autograd=HELPER,
)
case(
    fields_zeroed_,
    fields_zeroed,
    FieldPair(u(3), u(2)),
    FieldPair(u(3), u(2)),
    ("b",),
    autograd=HELPER,
)
case(
    replaced_tangent_,
    replaced_tangent,
    (u(3),),
    FieldPair(u(3), u(2)),
    ("w",),
    autograd=HELPER,
)


# --------------------------------------------------------------------------- zip(*rows)
from cpsad.runtime import swap_entries, zipped  # noqa: E402


def zipped_(seq):
    return zipped(seq)


case(zipped_, zipped, [(u(), u(3)), (u(), u(3))], autograd=HELPER)
case(zipped_, zipped, [u(3), u(3)], autograd=HELPER)


def swap_entries_(c, like):
    return swap_entries(c, like)


case(
    swap_entries_,
    swap_entries,
    Sparse({0: Sparse({0: u(), 1: u(3)}), 1: Sparse({1: u(3)})}),
    [(0.5, u(3)), (0.2, u(3))],
    autograd=HELPER,
)
case(swap_entries_, swap_entries, u(2, 3), None, autograd=HELPER)


# (`c.T` where `c` may be an array or a struct: runtime.attribute decides when it runs; fixed
# inputs, not the corpus generator's, so that no later draw moves)
from cpsad.runtime import attribute  # noqa: E402

TField = namedtuple("TField", "T size")


def attribute_(obj, name):
    return attribute(obj, name)


_M23 = np.array([[0.3, -0.7, 1.1], [0.4, 0.9, -0.2]])
case(attribute_, attribute, _M23, "T", autograd=HELPER)
case(attribute_, attribute, _M23 + 0.5j * _M23[::-1], "real", autograd=HELPER)
case(attribute_, attribute, _M23 + 0.5j * _M23[::-1], "imag", autograd=HELPER)
case(attribute_, attribute, TField(_M23, np.array([0.5, -1.5])), "T", autograd=HELPER)
case(attribute_, attribute, TField(_M23, np.array([0.5, -1.5])), "size", autograd=HELPER)

from cpsad.runtime import attribute_adjoint, attribute_tangent  # noqa: E402


def attribute_adjoint_(g, obj, name):
    return attribute_adjoint(g, obj, name)


def attribute_tangent_(t, obj, name):
    return attribute_tangent(t, obj, name)


_TF = TField(_M23, np.array([0.5, -1.5]))
case(attribute_adjoint_, attribute_adjoint, _M23.T * 0.7, _M23, "T", autograd=HELPER)
case(attribute_adjoint_, attribute_adjoint, _M23[::-1] - 0.2, _TF, "T", autograd=HELPER)
case(attribute_tangent_, attribute_tangent, _M23 * 0.3 - 0.1, _M23, "T", autograd=HELPER)
case(
    attribute_tangent_,
    attribute_tangent,
    TField(_M23 * 0.5, np.array([0.25, 1.0])),
    _TF,
    "size",
    autograd=HELPER,
)


# (``vals = d.values()`` of a differentiable dict: runtime.dict_view, a list of the entries, and
# its helpers, each the other's transpose; ``.items()``' pairs hold the keys, which the checks'
# random adjoints would fill with numbers: tests/test_fidelity.py runs it end to end)
from cpsad.runtime import dict_view, dict_view_adjoint, dict_view_tangent  # noqa: E402


def dict_view_(d, which):
    return dict_view(d, which)


def dict_view_adjoint_(g, d, which):
    return dict_view_adjoint(g, d, which)


def dict_view_tangent_(t, d, which):
    return dict_view_tangent(t, d, which)


_D = {"a": _M23, "b": np.array([0.5, -1.5])}
_RAGGED = "a list of arrays of two shapes: the float32 check's densify makes no array of it"
case(dict_view_, dict_view, _D, "values", autograd=HELPER)
case(
    dict_view_adjoint_,
    dict_view_adjoint,
    [_M23 * 0.7, np.array([0.2, 0.1])],
    _D,
    "values",
    autograd=HELPER,
    float64=_RAGGED,
)
case(
    dict_view_tangent_,
    dict_view_tangent,
    {"a": _M23 * 0.3, "b": np.array([0.25, 1.0])},
    _D,
    "values",
    autograd=HELPER,
)
case(
    dict_view_tangent_,
    dict_view_tangent,
    {"a": _M23 + 0.1, "b": np.array([-0.5, 2.0])},
    _D,
    "items",
    autograd=HELPER,
)
