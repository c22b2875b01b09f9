"""Forward mode end to end: every function of the corpora, its jvp against reverse mode's gradient
(an independent computation: <grad f(x), v> is the derivative along v) and central differences."""

import numpy as np
import pytest

import cpsad
from cpsad import compiler
from cpsad.testing import _random_like, _shift, leaves
from tests import corpus_control, corpus_core

CASES = corpus_core.CASES + corpus_control.CASES
IDS = [f"{f.__name__}-{i}" for i, (f, _, _) in enumerate(CASES)]


def inner(a, b) -> float:
    la, _ = leaves(a)
    lb, _ = leaves(b)
    assert len(la) == len(lb)
    return float(sum(np.sum(np.asarray(x, float) * np.asarray(y, float)) for x, y in zip(la, lb)))


def directions(args, argnums, seed=0):
    rng = np.random.default_rng(seed)
    nums = (argnums,) if isinstance(argnums, int) else tuple(argnums)
    return [_random_like(a, rng) if i in nums else None for i, a in enumerate(args)], nums


@pytest.mark.parametrize("f,args,argnums", CASES, ids=IDS)
def test_jvp_is_the_gradient_along_the_direction(f, args, argnums):
    tangents, nums = directions(args, argnums)
    value, tangent = cpsad.jvp(f, args, tangents)
    np.testing.assert_allclose(value, f(*args))
    grads = cpsad.grad(f, argnums=nums)(*args)
    expected = sum(inner(g, tangents[i]) for g, i in zip(grads, nums))
    np.testing.assert_allclose(float(tangent), expected, rtol=1e-6, atol=1e-9)


@pytest.mark.parametrize("f,args,argnums", CASES, ids=IDS)
def test_jvp_against_finite_differences(f, args, argnums):
    tangents, nums = directions(args, argnums, seed=1)
    _, tangent = cpsad.jvp(f, args, tangents)
    eps = 1e-6
    plus = [_shift(a, tangents[i], eps) if i in nums else a for i, a in enumerate(args)]
    minus = [_shift(a, tangents[i], -eps) if i in nums else a for i, a in enumerate(args)]
    fd = (f(*plus) - f(*minus)) / (2 * eps)
    np.testing.assert_allclose(float(tangent), fd, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("f,args,argnums", CASES, ids=IDS)
def test_forward_without_simplify_or_defunctionalize_agrees(f, args, argnums):
    """The Tangent stage's program, run as it is, computes the same tangent."""
    tangents, nums = directions(args, argnums, seed=2)
    _, expected = cpsad.jvp(f, args, tangents)
    names = f.__code__.co_varnames
    active = tuple(sorted({names[i] for i in nums}, key=names.index))
    kinds = compiler.kinds_of(f.__code__, args, {})
    raw = compiler.variant(
        f, active, skip=("simplify", "defunctionalize"), kinds=kinds, mode="forward"
    )
    from cpsad.calls import as_tangent

    dots = [as_tangent(tangents[i], args[i], i) for i in nums]
    _, got = raw.bp(*dots, *args)
    np.testing.assert_allclose(float(got), float(expected), rtol=1e-9, atol=1e-12)


# ----------------------------------------------------------------------------- the API


def test_jvp_of_pytrees_and_keywords():
    def f(p, x, scale=1.0):
        return scale * np.sum(np.tanh(p["W"] @ x + p["b"][0]))

    rng = np.random.default_rng(3)
    p = {"W": rng.standard_normal((2, 3)), "b": [rng.standard_normal(2)]}
    x = rng.standard_normal(3)
    v = {"W": rng.standard_normal((2, 3)), "b": [rng.standard_normal(2)]}
    value, tangent = cpsad.jvp(f, (p, x), (v, None), scale=2.0)
    assert value == pytest.approx(f(p, x, scale=2.0))
    g = cpsad.grad(f)(p, x, scale=2.0)
    assert tangent == pytest.approx(inner(g, v), rel=1e-12)


def test_jvp_keeps_float32_and_promotes_ints():
    x32 = np.array([0.5, -1.0], dtype=np.float32)
    _, t = cpsad.jvp(lambda x: np.sin(x) * 2, (x32,), (np.ones(2, np.float32),))
    assert t.dtype == np.float32
    _, t = cpsad.jvp(lambda x: x * x, (3,), (1,))
    assert t == 6.0 and isinstance(t, float)


def test_jvp_of_an_array_valued_function_has_its_shape():
    A = np.arange(6.0).reshape(3, 2)
    value, t = cpsad.jvp(lambda x: A @ x, (np.ones(2),), (np.array([1.0, 0.0]),))
    np.testing.assert_allclose(t, A[:, 0])
    assert t.shape == value.shape == (3,)


def test_jvp_refuses_mismatched_tangents():
    with pytest.raises(ValueError, match="one tangent per primal"):
        cpsad.jvp(lambda x, y: x * y, (1.0, 2.0), (1.0,))
    with pytest.raises(ValueError, match="shape"):
        cpsad.jvp(lambda x: np.sum(x), (np.ones(3),), (np.ones(2),))
    with pytest.raises(ValueError, match="keys"):
        cpsad.jvp(lambda p: p["a"], ({"a": 1.0},), ({"b": 1.0},))


def test_forward_mode_has_its_own_readable_code():
    def f(x, w):
        h = np.tanh(w * x)
        return h * x

    text = cpsad.show(f, argnums=None, mode="forward")  # every parameter
    assert "def f_jvp(x_dot, w_dot, x, w):" in text
    assert "h_dot = " in text and "return " in text
    assert "k(" not in text  # no continuations in forward mode


def test_a_forward_loop_is_a_while_loop():
    def f(x, n):
        for i in range(n):  # noqa: B007
            x = np.sin(x) + x
        return x

    text = cpsad.show(f, argnums=0, mode="forward")
    assert "while i < n:" in text and "loop_L" in text
    _, t = cpsad.jvp(f, (0.3, 100000), (1.0, None))  # no recursion a hundred thousand deep
    assert np.isfinite(t)


def test_forward_mode_errors_name_the_users_line():
    def f(x):
        y = np.sort(x)
        y.sort()
        return np.sum(y)

    with pytest.raises(cpsad.TransformError, match="for its effect"):
        cpsad.jvp(f, (np.ones(3),), (np.ones(3),))
