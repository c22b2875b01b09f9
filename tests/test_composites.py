"""The composites (cpsad/rules/composite.py): numpy's value bit for bit, refusals that name what is
not supported, second derivatives, calls through values. Their first derivatives, in both modes
and against autograd, are cases of tests/test_rules.py (tests/corpus_composites.py)."""

from __future__ import annotations

import itertools
import math
import operator
from collections.abc import Iterator

import numpy as np
import pytest

import cpsad
from cpsad.rules import composite as C
from cpsad.rules import core
from tests import corpus_composites

R = np.random.default_rng(7)


def u(*shape):
    return R.uniform(-1.0, 1.0, shape)


PW = np.array([-0.8, -0.2, 0.3, 0.9, 1.5])


def _centered(t):
    return t - np.mean(t)  # (not elementwise: numpy gives it the selected elements at once)


# (numpy function, positional arguments, keywords): each differentiable argument first
VALUES = [
    (sorted, ([0.3, -1.2, 0.7, 0.3],), {}),
    (sorted, ([0.3, -1.2, 0.7],), {"reverse": True}),
    (sorted, ([0.3, -1.2, -0.3, 0.7],), {"key": abs}),
    (sorted, ((0.5, -0.1, 0.9, 0.1),), {"key": abs, "reverse": True}),
    (reversed, ([0.3, -1.2, 0.7],), {}),  # (an iterator: its items, as a list)
    (reversed, (u(3, 2),), {}),
    (itertools.combinations, ([0.3, -1.2, 0.7, 0.2], 2), {}),
    (itertools.combinations, ((0.3, -1.2, 0.7), 3), {}),
    (itertools.combinations, ([0.3, -1.2], 3), {}),  # (none)
    (itertools.combinations_with_replacement, ([0.3, -1.2, 0.7], 2), {}),
    (itertools.permutations, ([0.3, -1.2, 0.7],), {}),
    (itertools.permutations, ([0.3, -1.2, 0.7], 2), {}),
    (zip, ([0.3, -1.2, 0.7], (0.5, 0.1)), {}),
    (zip, ([0.3, -1.2], [0.5, 0.1], [2.0, 3.0]), {"strict": True}),
    (zip, (), {}),
    (enumerate, ([0.3, -1.2, 0.7],), {}),
    (enumerate, ([0.3, -1.2, 0.7], 5), {}),
    (itertools.product, ([0.3, -1.2], (0.5, 0.1, 2.0)), {}),
    (itertools.product, ([0.3, -1.2],), {"repeat": 3}),
    (itertools.accumulate, ([0.3, -1.2, 0.7],), {}),
    (itertools.accumulate, ([0.3, -1.2, 0.7], operator.mul), {"initial": 2.0}),
    (itertools.accumulate, ([0.3, -1.2, 0.7], max), {}),
    (math.prod, ([0.3, -1.2, 0.7],), {}),
    (math.prod, ((0.3, -1.2),), {"start": 2.5}),
    (math.prod, ([],), {}),
    (math.dist, ([0.3, -1.2, 0.7], (0.5, 0.1, 2.0)), {}),
    (dict, ([("a", 0.3), ("b", -1.2)],), {}),
    (dict, ({"a": 0.3, "b": -1.2},), {"c": 0.5, "a": 2.0}),
    *[(np.rot90, (u(3, 4), k), {}) for k in range(-2, 6)],
    (np.rot90, (u(2, 3, 4), 1, (2, 0)), {}),
    (np.rot90, (u(2, 3, 4), 3, (-1, 1)), {}),
    *[(np.rollaxis, (u(2, 3, 4), a, s), {}) for a in (-3, -1, 0, 2) for s in (-3, 0, 2, 3)],
    (np.hsplit, (u(2, 6), 3), {}),
    (np.hsplit, (u(7), [2, 5]), {}),
    (np.vsplit, (u(4, 2), [1]), {}),
    (np.dsplit, (u(1, 2, 4), 2), {}),
    (np.append, (u(2, 3), u(4)), {}),
    (np.append, (u(2, 3), u(2, 3)), {"axis": 0}),
    (np.append, (u(3), 1.5), {}),
    (np.append, (np.arange(3), [1, 2]), {}),
    *[(np.diff, (u(4, 5), n, ax), {}) for n in (0, 1, 2, 4) for ax in (-2, -1, 0, 1)],
    (np.diff, (u(5),), {"prepend": 0.5, "append": [1.0, 2.0]}),
    (np.diff, (u(3, 4), 2, 0), {"prepend": u(2, 4), "append": 0.0}),
    (np.diff, (np.array([True, False, False, True]),), {}),
    (np.diff, (np.arange(6) ** 2, 2), {}),
    (np.cross, (u(3), u(3)), {}),
    (np.cross, (u(5, 3), u(3)), {}),
    (np.cross, (u(2), u(3)), {}),
    (np.cross, (u(3), u(2)), {}),
    (np.cross, (u(4, 2), u(4, 2)), {}),
    (np.cross, (u(3, 4), u(4, 3)), {"axisa": 0, "axisb": 1, "axisc": 0}),
    (np.cross, (u(3, 2), u(3, 2)), {"axis": 0}),
    (np.cross, (np.arange(3), np.arange(3, 6)), {}),
    (np.kron, (u(3), u(2)), {}),
    (np.kron, (u(2, 3), u(3, 2)), {}),
    (np.kron, (u(2), u(2, 3)), {}),
    (np.kron, (u(2, 1, 2), u(3)), {}),
    (np.kron, (2.5, u(2, 2)), {}),
    *[
        (getattr(operator, name), (u(3), u(3) + 2.0), {})
        for name in ("add", "sub", "mul", "truediv", "floordiv", "mod")
    ],
    (operator.pow, (np.abs(u(3)) + 0.5, u(3)), {}),
    (operator.pow, (2.5, 3), {}),
    (operator.mul, ([1.0, 2.0], 2), {}),
    (operator.add, ((1.5,), (2.5,)), {}),
    (operator.matmul, (u(2, 3), u(3, 2)), {}),
    *[(getattr(operator, name), (u(4),), {}) for name in ("neg", "pos", "abs")],
    (operator.getitem, (u(4), 2), {}),
    (operator.getitem, (u(3, 4), (slice(None), 1)), {}),
    (np.kron, (np.arange(4).reshape(2, 2), np.eye(2, dtype=int)), {}),
    (np.sinc, (np.array([0.0, 0.25, -1.0, 2.5, 1e-9]),), {}),
    (np.sinc, (0.0,), {}),
    (np.sinc, (np.float32(0.3),), {}),
    (np.nan_to_num, (np.array([0.5, np.nan, np.inf, -np.inf]),), {}),
    (np.nan_to_num, (np.array([np.nan, np.inf, -np.inf]),), {"nan": 1.0, "posinf": 9.0}),
    (np.nan_to_num, (np.array([1 + np.inf * 1j, np.nan * 1j]),), {}),
    (np.nan_to_num, (np.float32(np.inf),), {}),
    (np.nan_to_num, (np.arange(3),), {}),
    (np.nan_to_num, (3.5,), {}),
    (np.real_if_close, (u(3) + 1e-20j,), {}),
    (np.real_if_close, (u(3) + 0.1j,), {}),
    (np.real_if_close, (u(3),), {}),
    (np.average, (u(3, 4),), {}),
    (np.average, (u(3, 4),), {"axis": 1}),
    (np.average, (u(3, 4),), {"weights": u(3, 4) + 2}),
    (np.average, (u(3, 4),), {"axis": 0, "weights": u(3) + 2}),
    (np.average, (u(3, 4),), {"axis": 1, "weights": u(4) + 2, "returned": True}),
    (np.average, (u(3, 4),), {"axis": 0, "keepdims": True}),
    (np.average, (u(3, 4),), {"returned": True}),
    *[
        (fn, (u(4, 5), q), {"axis": ax, "method": m, "keepdims": kd})
        for fn, q in ((np.quantile, 0.35), (np.quantile, [0.0, 0.5, 1.0]), (np.percentile, 62.5))
        for ax in (None, 0, -1)
        for m in ("linear", "lower", "higher", "midpoint")
        for kd in (False, True)
    ],
    (np.quantile, (u(7), [[0.1, 0.2], [0.7, 0.9]]), {}),
    (np.quantile, (np.array([0.5, np.nan, 0.2]), 0.5), {}),
    (np.median, (u(7),), {}),
    (np.median, (u(6),), {}),
    (np.median, (u(4, 5),), {"axis": 1, "keepdims": True}),
    (np.median, (np.arange(5),), {}),
    (np.partition, (u(8), 3), {}),
    (np.partition, (u(4, 5), (0, 2)), {"axis": 0}),
    (np.partition, (u(3, 4), 5), {"axis": None}),
    (np.interp, (u(6) * 2, np.array([-1.0, 0.0, 0.4, 1.0]), u(4)), {}),
    (np.interp, (0.2, [0.0, 1.0], [1.0, 3.0]), {}),
    (np.interp, (np.array([-2.0, 1.0, 2.0]), [0.0, 1.0], [1.0, 3.0]), {"left": -1.0, "right": 9}),
    (np.interp, (u(3), [0.5], [2.0]), {}),
    (np.gradient, (u(6),), {}),
    (np.gradient, (u(6), 0.3), {"edge_order": 2}),
    (np.gradient, (u(4, 5),), {}),
    (np.gradient, (u(4, 5), 0.5, 2.0), {"edge_order": 2}),
    (np.gradient, (u(4, 5), np.array([0.0, 0.5, 0.6, 1.2, 2.0])), {"axis": 1}),
    (np.gradient, (u(4, 5), np.array([0.0, 1.0, 3.0, 3.5])), {"axis": 0, "edge_order": 2}),
    (np.gradient, (u(3, 4), np.arange(3), 0.5), {}),
    (np.gradient, (np.arange(5) ** 2,), {}),
    (np.select, ([np.array([True, False, True]), np.array([True, True, False])], [u(3), u(3)]), {}),
    (np.select, ([np.array([False, True])], [u(2, 2)]), {"default": 0.5}),
    (np.select, ([np.array([False, True])], [np.arange(2)]), {}),
    *[(np.linalg.matrix_power, (u(3, 3) + np.eye(3), k), {}) for k in (-3, -1, 0, 1, 2, 3, 4, 7)],
    (np.linalg.matrix_power, (u(2, 3, 3), 5), {}),
    (np.linalg.matrix_power, (np.arange(4).reshape(2, 2), 3), {}),
    (np.piecewise, (PW, [PW < 0, PW >= 0], [np.negative, np.square]), {}),
    (np.piecewise, (PW, [PW < 0, PW > 0.5], [np.sin, 2.0, np.tanh]), {}),
    (np.piecewise, (PW, [PW < 0.5, PW < 0], [_centered, np.exp]), {}),
    (np.piecewise, (np.arange(4), [np.arange(4) > 1], [np.sqrt, 0]), {}),
    (np.piecewise, (0.3, 0.3 > 0, [np.sin, np.cos]), {}),
]


def _apply(*diff, fn, rest, kw):
    return fn(*diff, *rest, **kw)


def _same(a, b) -> bool:
    if isinstance(a, dict):
        return type(a) is type(b) and list(a) == list(b) and all(map(_same, a.values(), b.values()))
    if isinstance(a, (tuple, list)):
        return type(a) is type(b) and len(a) == len(b) and all(map(_same, a, b))
    return (
        type(a) is type(b)
        and np.shape(a) == np.shape(b)
        and np.asarray(a).dtype == np.asarray(b).dtype
        and np.array_equal(a, b, equal_nan=True)
    )


@pytest.mark.parametrize(
    "fn,args,kw", VALUES, ids=[f"{c[0].__name__}-{i}" for i, c in enumerate(VALUES)]
)
def test_numpy_value_bit_for_bit(fn, args, kw):
    """The composite run as Python and run transformed (``cpsad.vjp`` through a function value:
    it compares the two runs exactly) gives numpy's value: type, shape, dtype and bits."""
    want = fn(*args, **kw)
    if isinstance(want, Iterator):  # (reversed, zip, itertools: the composite gives its list)
        want = list(want)
    made = core.composite(fn) or core.one_shot_composite(fn)
    assert _same(made(*args, **kw), want)
    n = 0  # the leading arguments of floats: differentiated
    while n < len(args) and np.issubdtype(np.asarray(args[n]).dtype, np.floating):
        n += 1
    parts = want if isinstance(want, (list, tuple)) else [want]
    # (a one-shot composite runs only where its call is consumed where it is written, never
    # through a value: its derivatives are the corpus' end-to-end cases)
    if n and fn not in core.ONE_SHOT and not any(np.iscomplexobj(w) for w in parts):
        value, _ = cpsad.vjp(_apply, *args[:n], fn=fn, rest=args[n:], kw=kw)
        assert _same(value, want)


def test_every_composite_is_checked():
    """Each composite has value cases here and end-to-end derivative cases in the corpus."""
    valued = {fn for fn, _, _ in VALUES}
    made = {*core.COMPOSITES, *core.ONE_SHOT}
    assert made <= valued, made - valued
    source = open(corpus_composites.__file__).read()
    for fn in made:
        label = core._label(fn)
        assert f"{label}(" in source, f"no derivative case calls {label}"


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda x: np.quantile(x, 0.3, method="nearest"), "method one of"),
        (lambda x: np.percentile(x, 30, overwrite_input=True), "overwrite_input"),
        (lambda x: np.median(x, out=np.zeros(())), "out="),
        (lambda x: np.nan_to_num(x, copy=False), "copy=False"),
        (lambda x: np.interp(x, [0.0, 1.0], [0.0, 1.0], period=1.0), "period="),
        (lambda x: np.partition(x, 1, order="a"), "order="),
    ],
)
def test_what_is_not_computed_as_numpy_does_is_refused(call, message):
    with pytest.raises(TypeError, match="cpsad differentiates") as info:
        cpsad.grad(lambda x: np.sum(call(x)))(u(4))
    assert message in str(info.value)


def test_numpy_errors_are_numpy_errors():
    with pytest.raises(ValueError, match="dimension must be 2 or 3"):
        cpsad.grad(lambda x: np.sum(np.cross(x, x)))(u(4))
    with pytest.raises(ValueError, match="order must be non-negative"):
        cpsad.grad(lambda x: np.sum(np.diff(x, -1)))(u(4))
    with pytest.raises(ValueError, match="Quantiles must be in the range"):
        cpsad.grad(lambda x: np.quantile(x, 1.5))(u(4))


def loss(x, y):
    """A little of everything: each composite in one loss."""
    m = np.outer(x, y)
    total = np.sum(np.cross(x, y) ** 2) + np.sum(np.kron(x, y) * np.sinc(np.kron(y, x)))
    total = total + np.sum(np.diff(x, 2, prepend=0.3) ** 2) + np.median(m) * np.percentile(x, 40)
    total = total + np.sum(np.rot90(m) * np.rollaxis(m, 1)) + np.average(x, weights=y * y + 1)
    total = total + np.sum(np.interp(x, [-1.0, 0.0, 1.0], y) ** 2)
    total = total + np.sum(np.append(x, y) ** 3) + np.sum(np.hsplit(m, 3)[1] ** 2)
    return total + np.sum(np.partition(x * y, 1)[:2] ** 2) + np.sum(np.nan_to_num(x / y) ** 2)


def test_second_derivatives_against_differences_of_the_gradient():
    x, y = np.array([0.3, -0.55, 0.8]), np.array([0.45, 0.7, -0.2])
    v = np.array([0.2, -0.4, 0.9])
    hv = cpsad.hvp(loss, 0)(x, y, v)
    g = cpsad.grad(loss, 0)
    eps = 1e-5
    fd = (g(x + eps * v, y) - g(x - eps * v, y)) / (2 * eps)
    np.testing.assert_allclose(hv, fd, rtol=1e-5, atol=1e-6)
    # forward over reverse agrees with reverse over reverse
    _, tangent = cpsad.jvp(g, (x, y), (v, np.zeros(3)))
    np.testing.assert_allclose(tangent, hv, rtol=1e-9, atol=1e-10)


def test_called_through_a_value():
    """``fn = np.cross`` then ``fn(a, b)``: the dispatch runs the composite, in both modes."""
    fns = [np.cross, np.kron]

    def through(x, y):
        total = 0.0
        for fn in fns:
            total = total + np.sum(fn(x, y) ** 2)
        return total

    x, y = np.array([0.3, -0.5, 0.8]), np.array([0.1, 0.7, -0.2])
    g = cpsad.grad(through)(x, y)
    eps = 1e-6
    fd = [(through(x + eps * e, y) - through(x - eps * e, y)) / (2 * eps) for e in np.eye(3)]
    np.testing.assert_allclose(g, fd, rtol=1e-6, atol=1e-8)
    _, t = cpsad.jvp(through, (x, y), (np.eye(3)[0], np.zeros(3)))
    np.testing.assert_allclose(t, fd[0], rtol=1e-6, atol=1e-8)


def test_shown_as_a_call_of_the_composite():
    """The emitted code calls the composite's backpropagator, named for it."""
    source = cpsad.transform(lambda x: np.sum(np.diff(x) ** 2)).source
    assert "diff_bp" in source
    assert C.diff.__cpsad_composite__ is np.diff
