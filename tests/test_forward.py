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
    from cpsad.api import as_tangent

    dots = [as_tangent(tangents[i], args[i], i) for i in nums]
    _, got = raw.bp(*dots, *args)
    np.testing.assert_allclose(float(got), float(expected), rtol=1e-9, atol=1e-12)
