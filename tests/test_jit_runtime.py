"""Numba's versions of the runtime helpers (``cpsad/jit_runtime.py``) against the Python helpers.

Each helper the staged code calls is called here both ways -- by a function Numba compiles, and
directly -- on floats and float arrays of the shapes the staged code passes, and the results must
be equal (to rounding). A case Numba's version does not cover must fail to compile (so that
``cpsad.jit`` falls back), never compute something else.
"""

from __future__ import annotations

import numpy as np
import pytest

numba = pytest.importorskip("numba")

from cpsad import jit_runtime, runtime  # noqa: E402,F401  (importing jit_runtime registers them)
from cpsad.rules import (  # noqa: E402
    composite,
    containers,
    joining,
    linalg,
    operators,
    reductions,
    shape,
)

rng = np.random.default_rng(7)
A = rng.normal(size=(3, 4))
B = rng.normal(size=(4, 2))
U = rng.normal(size=3)
V = rng.normal(size=4)
S = rng.normal(size=(4, 4))


def _compiled(helper, n: int):
    """A function Numba compiles that calls ``helper`` with ``n`` positional arguments."""
    names = ", ".join(f"a{i}" for i in range(n))
    scope = {"helper": helper}
    exec(f"def call({names}):\n    return helper({names})\n", scope)
    return numba.njit(scope["call"])


def _dense(x):
    return np.asarray(x.dense() if hasattr(x, "dense") else x, dtype=float)


CASES = [
    (operators.matmul_x, (rng.normal(size=(3, 2)), None, A, B)),
    (operators.matmul_x, (rng.normal(size=3), None, A, V)),
    (operators.matmul_x, (rng.normal(size=4), None, U, A)),
    (operators.matmul_x, (0.7, None, V, V)),
    (operators.matmul_y, (rng.normal(size=(3, 2)), None, A, B)),
    (operators.matmul_y, (rng.normal(size=3), None, A, V)),
    (operators.matmul_y, (rng.normal(size=4), None, U, A)),
    (operators.matmul_y, (0.7, None, V, V)),
    (linalg.dot_a, (rng.normal(size=(3, 2)), None, A, B)),
    (linalg.dot_b, (rng.normal(size=3), None, A, V)),
    (reductions.count, (A,)),
    (reductions.count, (A, 1)),
    (shape.untranspose, (A,)),
    (linalg.trace_vjp, (0.3, None, S)),
    (linalg.trace_vjp, (0.3, None, A, 1)),
    (linalg.trace_vjp, (0.3, None, A, -1, 1, 0)),
    (runtime.unbroadcast, (A, A)),
    (runtime.unbroadcast, (A, A[0])),
    (runtime.unbroadcast, (A, A[:1])),
    (runtime.unbroadcast, (A, A[:, :1])),
    (runtime.unbroadcast, (V, V[:1])),  # (summed to one element: _total)
    (runtime.unbroadcast, (A, A[0, :1])),
    (runtime.unbroadcast, (A, 1.0)),
    (runtime.unbroadcast, (0.5, A)),
    (runtime.as_array, (A,)),
    (runtime.as_array, (0.5,)),
    (runtime.zeros_like, (A,)),
    (runtime.zeros_like, (2.0,)),
    (reductions.expand, (0.5, A)),
    (reductions.expand, (A.sum(axis=0), A, 0)),
    (reductions.expand, (A.sum(axis=1), A, 1)),
    (reductions.expand, (A.sum(axis=1), A, -1)),
    (reductions.expand, (0.5, V, 0)),
    (reductions.expand, (A.sum(axis=0, keepdims=True), A, 0, True)),
    (operators.power_slope, (A, 3.0)),
    (operators.power_slope, (A, 0.0)),
    (operators.power_slope, (1.5, 2.0)),
    (runtime.getitem_adjoint, (V, A, 1)),
    (runtime.getitem_adjoint, (0.5, V, 2)),
    (runtime.getitem_adjoint, (0.5, A, (1, 2))),
    (runtime.getitem_adjoint, (0.5, A, (-1, 0))),
    (runtime.getitem_adjoint, (U, A, (slice(None), 1))),
    (runtime.getitem_adjoint, (V, A, (slice(1, 2), slice(None)))),  # (g broadcast into a row)
    (runtime.getitem_adjoint, (A[1:], A, slice(1, 3))),
    (runtime.getitem_adjoint, (V[::2], V, slice(None, None, 2))),
    (runtime.getitem_adjoint, (0.5, np.arange(4), 1)),  # (integers: the adjoint is float64)
    (linalg.diagonal_vjp, (U, None, A)),
    (linalg.diagonal_vjp, (U[:2], None, A, 2)),
    (linalg.diagonal_vjp, (U[:2], None, A, -1, 1, 0)),
    (linalg.diagonal_vjp, (V[:3], None, S, 1, 1, 0)),
]


def test_as_sequence_is_what_a_loop_indexes():
    as_sequence = runtime.as_sequence

    @numba.njit
    def total(n, v):
        s = 0.0
        for i in as_sequence(range(2, n)):
            s += i
        for x in as_sequence(v):
            s += x
        seq = as_sequence(range(n, 0, -2))  # (as the staged loop: by position)
        for k in range(len(seq)):
            s += 10 * seq[k]
        return s

    assert total(5, V) == pytest.approx(2 + 3 + 4 + V.sum() + 10 * (5 + 3 + 1), rel=1e-14)


@pytest.mark.parametrize(
    "helper, args",
    [
        (operators.matmul_x, (np.ones((2, 3, 2)), None, np.ones((2, 3, 4)), np.ones((4, 2)))),
        (shape.untranspose, (A, (1, 0))),
        (runtime.getitem_adjoint, (V[:2], V, np.array([0, 0]))),  # (repeated: np.add.at)
        (runtime.getitem_adjoint, (0.5, V.astype(np.float32), 1)),  # (float32: its own dtype)
        (composite.matrix_power, (np.ones((3, 3), dtype=int), 2)),  # (integers: not covered)
        (containers.max_builtin, (0.5, 2.0, 2.0, 1.0, 0.0)),  # (three: not covered)
        (composite.rot90, (A, 1, (1, 0))),  # (other axes)
        (np.diagonal, (np.ones((2, 2, 2)),)),  # (a stack of matrices)
        (linalg.norm_vjp, (0.7, np.linalg.norm(V, 1), V, 1)),  # (another ord)
        (linalg.norm_vjp, (V[:3], np.linalg.norm(A, axis=1), A, None, 1)),  # (along an axis)
        (reductions.prod_vjp, (V, np.prod(A, axis=0), A, 0)),  # (along an axis)
        (reductions.prod_vjp, (0.5, 6, np.array([1, 2, 3]))),  # (integers)
        (reductions.cumsum, (np.ones((2, 2, 2)), None, np.ones((2, 2, 2)), 0)),
        (runtime.without, (A, np.array([0, 1]))),  # (an index of integers)
        (np.roll, (V, (1,), 0)),  # (a tuple of shifts)
        (np.mean, (np.ones((2, 2, 2)), 0)),
        (np.ndim, ((1.0, 2.0),)),
        (composite.cross, (A, A)),
        (joining.parts, (V, V.astype(np.float32))),  # (the helper converts to float32)
        (composite.diff, (A, 1, 0)),  # (along another axis)
        (reductions.max_vjp, (V[:3], A.max(axis=1), V, 0)),  # (a vector's, along an axis)
        (runtime.log_as, (V.astype(np.float32), 0.5)),  # (numpy: float64; Numba's: float32)
        (runtime.log_as, (V, V.astype(np.float32))),  # (numpy computes in float32)
        (runtime.log_as, (V, 2)),  # (an integer dtype: numpy raises)
        (runtime.log_as, (V > 0, 0.5)),
        (np.squeeze, (A[:1],)),  # (every axis of length 1: the rank depends on the shape)
        (np.squeeze, (A[:1], (0,))),
        (np.squeeze, (V[:1], 0)),  # (a 0-d result: not covered)
    ],
)
def test_what_it_does_not_cover_is_not_compiled(helper, args):
    """(A stacked product, a permutation, an index of integers, float32: Numba's typing fails, so
    cpsad.jit falls back.)"""
    with pytest.raises(numba.core.errors.TypingError):
        _compiled(helper, len(args))(*args)


@pytest.mark.parametrize(
    "helper, args",
    [
        (composite.matrix_power, (A, 2)),
        (composite.matrix_power, (S, -1)),
        (reductions.expand, (A.sum(axis=0), A, 1)),
        (containers.max_builtin, (0.5, np.nan, np.nan, 1.0)),  # (the NaN found by identity)
        (np.flip, (V, 1)),  # (an axis a vector does not have)
        (np.diagonal, (A, 0, 1, -1)),  # (the same axis twice)
        (np.roll, (A, 1, 2)),
        (np.mean, (A, 2)),
        (np.mean, (A, 0, None, None, True)),  # (kept dimensions: not covered)
        (reductions.cumsum, (np.ones(5), None, V)),  # (numpy's reshape raises)
        (reductions.cumsum, (np.ones((3, 3)), None, A, 0)),
        (composite.cross, (U[:2], U)),  # (a 2-vector: left to the Python one)
        (linalg.diagonal_vjp, (S, None, V)),  # (np.diag's adjoint of a vector: never run)
        (composite.diff, (V, -1)),
        (np.squeeze, (A, 0)),  # (an axis not of length 1: numpy raises)
        (np.squeeze, (A[:1], 2)),
        (np.squeeze, (A[None], -4)),
    ],
)
def test_what_the_python_helper_decides_is_refused(helper, args):
    """(Not square, a sum of the wrong length: numpy raises; an inverse's power: left to the
    Python helper.)"""
    with pytest.raises(jit_runtime.Refused):
        _compiled(helper, len(args))(*args)


def test_check_in_place_compiled_refuses_where_memory_may_be_shared():
    """Numba's check of ``y += v``: ``Refused`` where a value read later may share y's array
    (then the Python backpropagator runs, and its check says why), nothing where none does."""
    check = runtime.check_in_place_compiled

    @numba.njit
    def guarded(y, a, b):
        check(y, "+=", None, (a, b))
        return 1

    @numba.njit
    def unnamed(y):
        check(y, "+=", "a caller", ())
        return 1

    @numba.njit
    def number(y, a):
        check(y, "+=", None, (a,))
        return 1

    y = np.arange(6.0)
    assert guarded(y, np.ones(3), 2.0) == 1
    assert guarded(y[:3], y[3:], 2.0) == 1  # (halves of one array: disjoint)
    for shared in (y, y[2:4], y[::-1], y.reshape(2, 3)[:, 0]):
        with pytest.raises(jit_runtime.Refused):
            guarded(y, np.ones(3), shared)
    with pytest.raises(jit_runtime.Refused):
        unnamed(y)
    assert number(1.5, y) == 1


M = rng.normal(size=(3, 4))
TIES = np.where(rng.random(size=(3, 4)) < 0.5, M, M + 1.0)

STORES = [
    (runtime.split_ties, (np.ones((3, 4)), np.full((3, 4), 2.0), M, TIES)),
    (runtime.split_ties, (np.ones((3, 4)), np.full((3, 4), 2.0), M, M + 1.0)),
    (runtime.split_ties, (np.ones((3, 4)), np.full((3, 4), 2.0), TIES, M[1, 2])),
    (runtime.split_ties, (np.ones((3, 4)), np.full((3, 4), 2.0), 1.5, M)),  # (no tie)
    (runtime.split_ties, (1.0, 2.0, 0.5, 0.5)),
    (containers.max_builtin, (0.5, 2.0, 2.0, 1.0)),
    (containers.max_builtin, (0.5, 2.0, 1.0, 2.0)),
    (containers.max_builtin, (0.5, 1.0, 1.0, 1.0)),  # (a tie: the first)
    (containers.max_builtin, (0.5, 3, 3, 1.5)),
    (runtime.split_ties, (1.0, 2.0, 0.5, 0.7)),
    (runtime.stored, (M, 1, V)),
    (runtime.stored, (M, (1, 2), 0.5)),
    (runtime.stored, (M, slice(1, 3), 0.5)),
    (runtime.stored_part, (M, M, 1, V)),
    (runtime.stored_part, (M, M, (1, 2), 0.5)),
    (runtime.stored_part, (M, M, slice(1, 3), V)),
    (runtime.stored_part, (M, M, slice(0, 2), 0.5)),
]


FORWARD = [
    (runtime.tangent_zeros, (M,)),
    (runtime.tangent_zeros, (1.5,)),
    (runtime.tangent_add, (M, M * 2.0)),
    (runtime.tangent_add, (0.5, M)),
    (runtime.tangent_add, (0.5, 0.25)),
    (runtime.broadcast_like, (0.5, M)),
    (runtime.broadcast_like, (0.5, 1.5)),
    (runtime.broadcast_like, (M, M)),
    (runtime.broadcast_like, (M[:1], M)),
    (runtime.broadcast_like, (V, M)),
    (runtime.add_tangent, (V, M, V, M, False)),
    (runtime.add_tangent, (0.5, M, 1.0, M, False)),
]


COMPOSITES = [(composite.matrix_power, (S, n)) for n in (0, 1, 2, 3, 5, 6, 11)] + [
    (composite.rot90, (A,)),
    *[(composite.rot90, (A, k)) for k in (-1, 0, 1, 2, 3, 6)],
]

# numpy functions as the staged code calls them where Numba's own do not take the arguments
NUMPY = [
    (np.flip, (A, None)),
    (np.flip, (V, None)),
    (np.flip, (A, 0)),
    (np.flip, (A, 1)),
    (np.flip, (A, -2)),
    (np.flip, (V, 0)),
    (np.diagonal, (A,)),
    (np.diagonal, (A, 1)),
    (np.diagonal, (A, -1, 1, 0)),
    (np.diagonal, (S, 2, -1, 0)),
    (np.diagonal, (A, 5)),  # (empty)
    (np.ndim, (A,)),
    (np.ndim, (V,)),
    (np.ndim, (0.5,)),
    (np.mean, (A, 0)),
    (np.mean, (A, -1)),
    (np.mean, (V, 0)),
    (np.mean, (A, None, None, None, False)),
    (np.roll, (A, 1, None)),
    (np.roll, (V, -5, None)),
    (np.roll, (V, 2, 0)),
    (np.roll, (A, 1, 0)),
    (np.roll, (A, -3, 1)),
    (np.roll, (A, 7, -1)),
    (np.roll, (A, 2, -2)),
    (np.squeeze, (A[:1], 0)),
    (np.squeeze, (A[:, 1:2], 1)),
    (np.squeeze, (A[:, 1:2], -1)),
    (np.squeeze, (A[None], 0)),
    (np.squeeze, (A[:, None], 1)),
    (np.squeeze, (A[:, :, None], 2)),
    (np.squeeze, (A[:, :, None], -1)),
    (np.squeeze, (A.T[None], -3)),  # (a transposed view)
]

Z = np.array([[1.5, 0.0, 2.0], [-0.5, 3.0, 0.25]])  # (a zero: prod_vjp's products of the others)

# more of the rules' helpers: a vector's norm, a whole product, cumsum, stores' ``without``
MORE = [
    (linalg.norm_vjp, (0.7, np.linalg.norm(V), V)),
    (linalg.norm_vjp, (0.7, np.linalg.norm(A), A)),  # (ord None: the flattened 2-norm)
    (linalg.norm_vjp, (0.7, 0.0, np.zeros(3))),  # (0 at 0)
    (reductions.prod_vjp, (0.7, np.prod(V), V)),
    (reductions.prod_vjp, (0.7, np.prod(A), A)),
    (reductions.prod_vjp, (0.7, np.prod(Z), Z)),
    (reductions.prod_vjp, (0.7, 0.0, np.array([0.0, 2.0, 0.0]))),  # (two zeros)
    (reductions.prod_vjp, (0.7, 0.0, np.array([0.0]))),
    (reductions.prod_vjp, (0.7, 0.0, np.array([3.0, 0.0]))),
    (reductions.cumsum, (rng.normal(size=12), None, A)),  # (flattened)
    (reductions.cumsum, (rng.normal(size=4), None, V)),
    (reductions.cumsum, (rng.normal(size=4), None, V, 0)),
    (reductions.cumsum, (rng.normal(size=(3, 4)), None, A, 0)),
    (reductions.cumsum, (rng.normal(size=(3, 4)), None, A, 1)),
    (reductions.cumsum, (rng.normal(size=(3, 4)), None, A, -2)),
    (reductions.cumsum, (rng.normal(size=(4, 3)).T, None, A, 1)),  # (g not C-ordered)
    (runtime.without, (A, 1)),
    (runtime.without, (A, (1, 2))),
    (runtime.without, (A, (slice(None), 0))),
    (runtime.without, (V, slice(1, 3))),
    (runtime.without, (V, -1)),
    (composite.cross, (U, V[1:])),
    (composite.cross, (V[:3], V[:3])),
    (joining.parts, (A, A)),  # (``np.asarray(a)`` of an array: its adjoint itself)
    (joining.parts, (V[::-1], V)),
    (composite.diff, (A,)),
    (composite.diff, (V, 2)),
    (composite.diff, (A, 0)),
    (composite.diff, (A, 3)),
    (
        composite.diff,
        (V, 6),
    ),  # (more than its length: empty)    (reductions.max_vjp, (0.7, V.max(), V)),
    (reductions.max_vjp, (0.7, A.min(), A)),
    (reductions.max_vjp, (0.7, 3.0, np.array([1.0, 3.0, 3.0, 2.0]))),  # (a tie: halves)
    (reductions.max_vjp, (0.7, 3.0, np.array([[3.0, 3.0], [3.0, 2.0]]))),
    (runtime.log_as, (np.abs(V) + 0.1, 0.5)),
    (runtime.log_as, (np.abs(A) + 0.1, A)),
    (runtime.log_as, (np.array(2.5), 1.5)),  # (0-d: a number)
    (runtime.log_as, (2.5, 1.5)),
    (runtime.log_as, (3, 1.5)),  # (an integer: in float64)
    (runtime.log_as, (np.arange(1, 5), V)),
]


ALL = CASES + STORES + FORWARD + COMPOSITES + NUMPY + MORE
# (the reverse helpers; maximum's ties and stores; forward mode's; composites, where their value
# is not differentiated; numpy's functions)


@pytest.mark.parametrize(
    "helper, args", ALL, ids=[f"{h.__name__}-{i}" for i, (h, _) in enumerate(ALL)]
)
def test_numba_version_is_the_helper(helper, args):
    want = helper(*args)
    got = _compiled(helper, len(args))(*args)
    np.testing.assert_allclose(_dense(got), _dense(want), rtol=1e-13, atol=1e-15)
    assert np.shape(got) == np.shape(want)


# ------------------------------------------------------------- np.stack of a list, stack_vjp
# (a list is made in the compiled code, as the staged code makes it: the table's calls pass
# their arguments in)

stack_vjp, item_adjoint, parts = joining.stack_vjp, runtime.item_adjoint, joining.parts
zeros_like = runtime.zeros_like


@numba.njit
def _stack_three(a, b, c, axis, g):
    parts = [a, b, c]
    ans = np.stack(parts, axis)
    h = stack_vjp(g, ans, parts, axis)
    return ans, (item_adjoint(h, 0, a), item_adjoint(h, 1, b), item_adjoint(h, 2, c))


@pytest.mark.parametrize(
    "shape, axis",
    [((), 0), ((), -1), ((4,), 0), ((4,), 1), ((4,), -2)]
    + [((2, 4), axis) for axis in (0, 1, 2, -1, -3)],
)
def test_stack_of_a_list_and_its_adjoint_are_the_helpers(shape, axis):
    a, b, c = (rng.normal(size=shape) if shape else float(rng.normal()) for _ in range(3))
    want = np.stack([a, b, c], axis)
    g = rng.normal(size=want.shape)
    h = stack_vjp(g, want, [a, b, c], axis)
    want_parts = [item_adjoint(h, i, x) for i, x in enumerate([a, b, c])]
    got, got_parts = _stack_three(a, b, c, axis, g)
    np.testing.assert_array_equal(got, want)
    assert got.shape == want.shape
    for x, y in zip(got_parts, want_parts):
        np.testing.assert_array_equal(x, y)
        assert np.shape(x) == np.shape(y) or np.ndim(x) == 0


def test_stack_refuses_what_numpy_refuses_and_types_it_does_not_cover():
    with pytest.raises(jit_runtime.Refused):  # (numpy raises: the Python one runs, and does)
        _stack_three(U, U, V, 0, np.ones((3, 3)))
    with pytest.raises(jit_runtime.Refused):
        _stack_three(U, U, U, 2, np.ones((3, 3)))
    f32 = U.astype(np.float32)  # (numpy's result is float32: not covered)
    with pytest.raises(numba.core.errors.TypingError):
        _stack_three(f32, f32, f32, 0, np.ones((3, 3)))


concatenate_vjp = joining.concatenate_vjp


@numba.njit
def _concatenate_two(a, b, axis, g):
    parts = [a, b]
    ans = np.concatenate(parts, axis)
    h = concatenate_vjp(g, ans, parts, axis)
    return ans, (item_adjoint(h, 0, a), item_adjoint(h, 1, b))


@pytest.mark.parametrize(
    "a_shape, b_shape, axis",
    [((2,), (3,), 0), ((2,), (3,), -1), ((2, 3), (4, 3), 0), ((2, 3), (2, 1), 1)]
    + [((2, 3), (2, 1), -1), ((2, 3), (1, 3), -2)],
)
def test_concatenate_of_a_list_and_its_adjoint_are_the_helpers(a_shape, b_shape, axis):
    a, b = rng.normal(size=a_shape), rng.normal(size=b_shape)
    want = np.concatenate([a, b], axis)
    g = rng.normal(size=want.shape)
    h = concatenate_vjp(g, want, [a, b], axis)
    got, got_parts = _concatenate_two(a, b, axis, g)
    np.testing.assert_array_equal(got, want)
    for x, y in zip(got_parts, (item_adjoint(h, 0, a), item_adjoint(h, 1, b))):
        np.testing.assert_array_equal(x, y)
        assert x.shape == y.shape


def test_concatenate_refuses_what_numpy_refuses():
    with pytest.raises(jit_runtime.Refused):
        _concatenate_two(A, B, 0, np.ones((7, 4)))  # (3 by 4 on 4 by 2)
    with pytest.raises(jit_runtime.Refused):
        _concatenate_two(U, V, 1, np.ones(7))


@numba.njit
def _array_of_three(a, b, g):
    lst = [a, b, 0.5]
    h = parts(g, lst)
    z = zeros_like(lst)
    return np.array(lst), (item_adjoint(h, 0, a), item_adjoint(h, 1, b), item_adjoint(z, 2, b))


def test_parts_of_a_list_of_numbers_and_its_zeros_are_the_helpers():
    """(``np.array([a, b, 0.5])``'s adjoint: ``parts``, or, of integers, ``zeros_like``.)"""
    g = rng.normal(size=3)
    ans, got = _array_of_three(0.25, 2.0, g)
    lst = [0.25, 2.0, 0.5]
    h, z = parts(g, lst), zeros_like(lst)
    want = (item_adjoint(h, 0, 0.25), item_adjoint(h, 1, 2.0), item_adjoint(z, 2, 2.0))
    np.testing.assert_array_equal(ans, np.array(lst))
    assert got == want


# ------------------------------------------------------------- items_adjoint of a dict
# (made in the compiled code, as the staged code makes it: ``{(2): g2, (0): g0}``)

items_adjoint = runtime.items_adjoint


@numba.njit
def _entries(x, a, b, c, i, j, k):
    return items_adjoint(x, {i: a, j: b, k: c})


@pytest.mark.parametrize(
    "x, keys, values",
    [
        (V, (2, 0, 1), (0.5, -1.5, 2.0)),
        (V, (3, -4, 1), (0.5, -1.5, 2.0)),  # (-4 and 0: one entry, its reads added)
        (np.arange(4), (0, 1, 2), (0.5, 1.0, 0.25)),  # (integers: the adjoint is float64)
        (A, (1, 0, -1), (U[:1].repeat(4), V, V * 2)),  # (rows)
    ],
)
def test_items_adjoint_of_a_dict_is_the_helpers(x, keys, values):
    want = items_adjoint(x, dict(zip(keys, values)))
    got = _entries(x, *values, *keys)
    np.testing.assert_allclose(got, _dense(want), rtol=1e-13, atol=1e-15)
    assert got.shape == np.shape(want) and got.dtype == np.float64


def test_items_adjoint_refuses_what_numpy_refuses_and_types_it_does_not_cover():
    with pytest.raises(jit_runtime.Refused):  # (an index out of range: numpy raises)
        _entries(V, 0.5, 1.0, 2.0, 0, 1, 4)
    with pytest.raises(jit_runtime.Refused):  # (a row of another length)
        _entries(A, V, V, U, 0, 1, 2)
    with pytest.raises(numba.core.errors.TypingError):  # (float32: its own dtype)
        _entries(V.astype(np.float32), 0.5, 1.0, 2.0, 0, 1, 2)


@numba.njit
def _tuple_entries(a, b, i, j, u, v):
    t = (a, b, 3)
    h = items_adjoint(t, {i: u, j: v})
    return item_adjoint(h, 0, a), item_adjoint(h, 1, b), item_adjoint(h, 2, 3)


@pytest.mark.parametrize("i, j", [(2, 0), (0, -3), (1, -1)])
def test_items_adjoint_of_a_tuple_is_read_as_the_helpers(i, j):
    """(A tuple's adjoint: the Python one's Sparse, here an array; ``item_adjoint`` reads an
    entry the same, and 0.0 where it has none, the Python one's zero.)"""
    t = (0.5, 1.5, 3)
    h = items_adjoint(t, {i: 0.25, j: -2.0})
    want = tuple(item_adjoint(h, k, t[k]) for k in range(3))
    assert _tuple_entries(0.5, 1.5, i, j, 0.25, -2.0) == want
    with pytest.raises(jit_runtime.Refused):
        _tuple_entries(0.5, 1.5, 3, j, 0.25, -2.0)


unpack_adjoint = runtime.unpack_adjoint


@numba.njit
def _unpacked_one(a, b, u, v):
    h = unpack_adjoint((None, u), (a, b))
    return item_adjoint(h, 0, a), item_adjoint(h, 1, b), item_adjoint(h, -2, a)


def test_item_adjoint_of_an_entry_none_flowed_into_is_the_helpers_zero():
    """(``a, b = t`` where only ``b`` is read later: the Python one's Sparse has no entry 0,
    and ``item_adjoint`` reads its zero; here the tuple holds None there.)"""
    for a, b, u in ((0.5, 1.5, 2.0), (V, U, U * 3)):
        h = unpack_adjoint((None, u), (a, b))
        want = (item_adjoint(h, 0, a), item_adjoint(h, 1, b), item_adjoint(h, 0, a))
        got = _unpacked_one(a, b, u, None)
        for x, y in zip(got, want):
            np.testing.assert_array_equal(x, y)
            assert np.shape(x) == np.shape(y)


average = composite.average


@numba.njit
def _averages(a, w):
    return average(a), average(a, weights=w)


@pytest.mark.parametrize("a", [V, A, rng.normal(size=12)])
def test_average_is_the_composites(a):
    """(The composite ``average`` where its value is not differentiated, as the staged code
    calls it: the mean, and weights by keyword.)"""
    w = np.abs(rng.normal(size=a.shape)) + 0.5
    got = _averages(a, w)
    want = (average(a), average(a, weights=w))
    np.testing.assert_allclose(got, want, rtol=1e-13, atol=1e-15)


def test_average_refuses_what_the_composite_decides_and_types_it_does_not_cover():
    with pytest.raises(jit_runtime.Refused):  # (weights summing to 0: it raises)
        _averages(V, np.array([1.0, -1.0, 0.5, -0.5]))
    with pytest.raises(jit_runtime.Refused):  # (weights of another shape: it raises)
        _averages(V, V[:3])
    with pytest.raises(numba.core.errors.TypingError):  # (along an axis: not covered)
        _compiled(average, 2)(A, 0)


vstack_vjp = joining.vstack_vjp


@numba.njit
def _vstack_two(a, b, g):
    parts = [a, b]
    ans = np.vstack(parts)
    h = vstack_vjp(g, ans, parts)
    return ans, (item_adjoint(h, 0, a), item_adjoint(h, 1, b))


@pytest.mark.parametrize("a_shape, b_shape", [((4,), (4,)), ((2, 3), (4, 3)), ((1, 2), (1, 2))])
def test_vstack_of_a_list_and_its_adjoint_are_the_helpers(a_shape, b_shape):
    a, b = rng.normal(size=a_shape), rng.normal(size=b_shape)
    want = np.vstack([a, b])
    g = rng.normal(size=want.shape)
    h = vstack_vjp(g, want, [a, b])
    got, got_parts = _vstack_two(a, b, g)
    np.testing.assert_array_equal(got, want)
    for x, y in zip(got_parts, (item_adjoint(h, 0, a), item_adjoint(h, 1, b))):
        np.testing.assert_array_equal(x, y)
        assert x.shape == y.shape


def test_vstack_refuses_what_numpy_refuses_and_types_it_does_not_cover():
    with pytest.raises(jit_runtime.Refused):  # (rows of different lengths)
        _vstack_two(U, V, np.ones((2, 4)))
    with pytest.raises(jit_runtime.Refused):  # (matrices of different widths)
        _vstack_two(A, B, np.ones((7, 4)))
    with pytest.raises(numba.core.errors.TypingError):  # (numbers: rows of one, not covered)
        _vstack_two(0.5, 1.5, np.ones((2, 1)))


def test_max_vjp_of_a_nan_result_is_the_helpers_zeros():
    a = np.array([1.0, np.nan, 2.0])
    with np.errstate(all="ignore"):  # (the helper divides by its 0 ties)
        want = reductions.max_vjp(0.7, np.nan, a)
    got = _compiled(reductions.max_vjp, 3)(0.7, np.nan, a)
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize(
    "a, b",
    [
        ((1.5, None), (2.0, None)),
        ((1.5, None), (None, 3.0)),
        ((U, 0.5), (2.0 * U, 1.0)),
        ((None, V), (U, None)),
        ((1.0,), (2.0,)),
    ],
)
def test_acc_of_tuples_adds_entry_by_entry(a, b):
    """The adjoints of a tuple (a captured pair unpacked in a helper called twice): added entry
    by entry, as the ``Sparse`` of the Python helpers adds them -- Numba's ``+`` of two tuples
    concatenates them, and the second half of the gradient was lost."""
    want = runtime.acc(runtime.as_adjoint(a), runtime.as_adjoint(b))
    for helper in (runtime.acc, runtime.acc_into):
        got = _compiled(helper, 2)(a, b)
        assert len(got) == len(a)
        for i, g in enumerate(got):
            if want.get(i) is None:
                assert g is None
            else:
                np.testing.assert_array_equal(g, want[i])


def test_acc_of_tuples_of_two_lengths_is_not_compiled():
    with pytest.raises(numba.core.errors.TypingError):
        _compiled(runtime.acc, 2)((1.0, None), (1.0, None, 2.0))


@pytest.mark.parametrize(
    "adjoint, by",
    [
        (1.5, 0.25),
        (U, -2.0),
        ((1.5, None, U), 3.0),
        (((U, 0.5), None), -0.5),
        (None, 2.0),
        (1.5, None),
        (7, 0.5),
    ],
)
def test_scaled_multiplies_each_adjoint(adjoint, by):
    """A recursive call's adjoints, got with the seed 1.0, times its result's adjoint
    (``transforms/recursion.py``): entry by entry in a tuple, None kept."""
    want = runtime.scaled(adjoint, by)
    got = _compiled(runtime.scaled, 2)(adjoint, by)

    def same(g, w):
        if w is None:
            assert g is None
        elif isinstance(w, tuple):
            assert isinstance(g, tuple) and len(g) == len(w)
            for gi, wi in zip(g, w):
                same(gi, wi)
        else:
            np.testing.assert_array_equal(g, w)

    same(got, want)
    if by is not None and not isinstance(adjoint, tuple) and adjoint is not None:
        np.testing.assert_array_equal(got, np.multiply(adjoint, by))  # (and not the adjoint)


def test_recursion_result_passes_numbers_and_refuses_the_rest():
    check = _compiled(runtime.recursion_result, 1)
    for v in (1.5, 3, np.float64(2.0)):
        assert check(v) is None
        assert runtime.recursion_result(v) is None
    with pytest.raises(numba.core.errors.TypingError):  # (not typed: falls back, warned)
        check(U)
    with pytest.raises(TypeError):
        runtime.recursion_result(U)

    @numba.njit
    def optional(flag):
        runtime.recursion_result(1.5 if flag else None)

    optional(True)
    with pytest.raises(jit_runtime.Refused):
        optional(False)


def test_within_stack_refuses_past_its_budget():
    """The first call takes its frame's address; calls deeper than ``STACK_BUDGET`` bytes
    below it refuse (a recursion Numba would run into a crash)."""
    within = _compiled(runtime.within_stack, 1)
    base = within(0)
    assert base != 0
    assert within(base) == base  # (a frame next to the first one's)
    with pytest.raises(jit_runtime.Refused):
        within(base + 2 * jit_runtime.STACK_BUDGET)
    with pytest.raises(jit_runtime.Refused):
        within(base - 2 * jit_runtime.STACK_BUDGET)
    assert runtime.within_stack(123) == 123


def test_expect_number_and_expect_array_refuse_the_other_kind():
    """What the staged code of a function that calls itself checks of its parameters: the kinds
    it was made for (decided as Numba types the call)."""
    number, array = _compiled(runtime.expect_number, 1), _compiled(runtime.expect_array, 1)
    for v in (1.5, 3, True):
        assert number(v) is None and runtime.expect_number(v) is None
        with pytest.raises(jit_runtime.Refused):
            array(v)
        with pytest.raises(TypeError):
            runtime.expect_array(v)
    assert array(U) is None and runtime.expect_array(U) is None
    with pytest.raises(jit_runtime.Refused):
        number(U)
    with pytest.raises(TypeError):
        runtime.expect_number(U)


def test_zeros_like_of_a_tuple_none_and_an_optional_number():
    """A loop a ``return`` leaves carries ``(returned, value)``, the value None where it ran to
    its end: the zero adjoint of the pair is a None per entry (the Python one's empty Sparse,
    read by ``item_adjoint`` as each entry's zero), of None and of an optional number 0.0 --
    as the Python helper's of None and of a number."""
    zeros = _compiled(runtime.zeros_like, 1)
    assert zeros((True, 1.5)) == (None, None)
    assert runtime.zeros_like((True, 1.5)).get(1) is None  # (the Python one's: no entry)
    read = numba.njit(lambda g, x: runtime.item_adjoint(g, 1, x))
    assert read(zeros((True, 1.5)), 1.5) == runtime.item_adjoint(
        runtime.zeros_like((1, 1.5)), 1, 1.5
    )
    assert zeros(None) == runtime.zeros_like(None) == 0.0

    @numba.njit
    def of_optional(flag):
        v = 1.5 if flag else None
        return runtime.zeros_like(v)

    assert of_optional(True) == of_optional(False) == runtime.zeros_like(1.5) == 0.0


_TIED = np.array([[1.0, 3.0, 3.0, -1.0], [2.0, np.nan, 0.5, 2.0], [0.0, -4.0, -4.0, 0.0]])


@pytest.mark.parametrize("reduce", [np.max, np.min, np.amax, np.amin])
@pytest.mark.parametrize("a", [A, _TIED, V])
@pytest.mark.parametrize("axis", [0, 1, -1])
@pytest.mark.parametrize("keepdims", [False, True])
def test_max_and_min_along_an_axis_are_numpys(reduce, a, axis, keepdims):
    """Numba's takes no axis: a softmax's ``np.max(z, axis=1, keepdims=True)`` fell back."""
    if a.ndim == 1 and axis == 1:
        axis = 0
    call = numba.njit(lambda a, axis: reduce(a, axis=axis, keepdims=keepdims))
    call_default = numba.njit(lambda a, axis: reduce(a, axis=axis))
    with np.errstate(invalid="ignore"):
        want = reduce(a, axis=axis, keepdims=keepdims)
    np.testing.assert_array_equal(call(a, axis), want)
    if not keepdims:
        np.testing.assert_array_equal(call_default(a, axis), want)
    with pytest.raises(jit_runtime.Refused):  # (an axis numpy has not: it raises)
        call(a, a.ndim)


@pytest.mark.parametrize("reduce", [np.sum, np.mean])
@pytest.mark.parametrize("a", [A, V])
@pytest.mark.parametrize("axis", [None, 0, -1])
def test_sum_and_mean_keeping_their_dimensions_are_numpys(reduce, a, axis):
    call = numba.njit(lambda a, axis: reduce(a, axis=axis, keepdims=True))
    got, want = call(a, axis), reduce(a, axis=axis, keepdims=True)
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-14)


@pytest.mark.parametrize("a", [A, _TIED])
@pytest.mark.parametrize("axis", [0, 1])
@pytest.mark.parametrize("keepdims", [False, True])
def test_max_vjp_along_an_axis_splits_ties_as_the_helper(a, axis, keepdims):
    with np.errstate(invalid="ignore", divide="ignore"):
        ans = np.max(a, axis=axis, keepdims=keepdims)
        g = rng.normal(size=ans.shape)
        want = reductions.max_vjp(g, ans, a, axis, keepdims=keepdims)
    call = numba.njit(
        lambda g, ans, a, axis: reductions.max_vjp(g, ans, a, axis=axis, keepdims=keepdims)
    )
    np.testing.assert_allclose(call(g, ans, a, axis), want, rtol=1e-14)
