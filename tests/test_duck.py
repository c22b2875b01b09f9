"""The rule and core corpora on a strict duck array (tests/duck.py): another array library, as
numpy's dispatch protocols (NEP 18, NEP 13) see one -- what CuPy and Dask arrays are to the code
cpsad emits. Each case's reverse-mode gradient, its float arrays made ducks, must equal numpy's,
be a duck where the argument was one, and get there with no conversion to numpy, no write into
an array cpsad does not own and no value read back into Python -- what would copy a CuPy array
off the GPU or compute a Dask graph in the middle of the backward pass.

Integer and bool arrays (indices, masks) and shapes stay numpy, as a CuPy user's index arrays may.
The scipy corpora are left out: scipy.special, scipy.linalg and scipy.stats are numpy's
libraries, not dispatched (CuPy has its own, ``cupyx.scipy``). Cases that still coerce are listed
in tests/duck_known.py with the reason, each expected to fail (strictly: a fix shows up).
"""

import numpy as np
import pytest

import cpsad
from cpsad.testing import _random_like, leaves
from tests import (
    corpus_composites,  # noqa: F401 (adds the composites' cases to C.CASES)
    corpus_control,
    corpus_core,
    corpus_emitted,  # noqa: F401 (adds the cases of the helpers' rules to C.CASES)
    corpus_fft,  # noqa: F401 (adds the cases of np.fft's rules to C.CASES)
    corpus_linalg,  # noqa: F401 (adds the cases of np.linalg's decompositions to C.CASES)
)
from tests import corpus_rules as C
from tests.duck import Duck, allow_reads, duck, ducks_in, unduck
from tests.duck_known import KNOWN, KNOWN_MIXED

SCIPY = ("scipy.", "tests.corpus_scipy")
RULES = [
    c
    for c in C.CASES
    if not c.xfail
    and not (getattr(c.prim, "__module__", None) or "").startswith(SCIPY)
    and not c.fn.__module__.startswith(SCIPY)
]


def known(cases, reasons):
    return [
        (
            pytest.param(c, marks=pytest.mark.xfail(strict=True, reason=reasons[c.id]))
            if c.id in reasons
            else c
        )
        for c in cases
    ]


def assert_same(got, expected, ducked):
    """``got`` (a gradient on ducks) is numpy's ``expected``, a duck wherever ``ducked`` (the
    argument) holds one."""
    for a, g in zip(ducks_in(ducked), ducks_in(got)):
        if type(a) is Duck:
            assert type(g) is Duck, f"the gradient of a duck is a {type(g).__name__}"
    lg, _ = leaves(unduck(got))
    le, _ = leaves(expected)
    assert len(lg) == len(le)
    for x, y in zip(lg, le):
        np.testing.assert_allclose(np.asarray(x), np.asarray(y), rtol=1e-6, atol=1e-9)


@pytest.mark.parametrize("case", known(RULES, KNOWN), ids=[c.id for c in RULES])
def test_rule_on_ducks(case):
    """``cpsad.vjp`` of each rule's wrapper: on ducks what it is on numpy arrays."""
    args, kwargs = case.diff_args(), case.fn_kwargs
    value, pullback = cpsad.vjp(case.fn, *args, **kwargs)
    c = _random_like(value, np.random.default_rng(1))
    expected = pullback(c)
    dargs = duck(args)
    dvalue, dpullback = cpsad.vjp(case.fn, *dargs, **duck(kwargs))
    got = dpullback(duck(c))
    assert_same(got, expected, dargs)


CORE = [
    (f, args, argnums)
    for f, args, argnums in corpus_core.CASES + corpus_control.CASES
    if any(isinstance(v, np.ndarray) and v.dtype.kind == "f" for v in leaves(args)[0])
]


@pytest.mark.parametrize("f,args,argnums", CORE, ids=[f.__name__ for f, _, _ in CORE])
def test_core_on_ducks(f, args, argnums):
    """``cpsad.grad`` of the core corpus's functions with array arguments. Their own control
    flow may read values (``if np.sum(x) > 0``), as a program on a Dask array may: allowed."""
    expected = cpsad.grad(f, argnums=argnums)(*args)
    dargs = duck(args)
    with allow_reads():
        got = cpsad.grad(f, argnums=argnums)(*dargs)
    nums = (argnums,) if isinstance(argnums, int) else argnums
    if isinstance(argnums, int):
        got, expected = (got,), (expected,)
    for i, g, e in zip(nums, got, expected):
        assert_same(g, e, dargs[i])


def test_the_duck_is_strict():
    """What the tests rely on: a conversion, a write and a read of a duck each raise."""
    from tests.duck import Coerced

    x = duck(np.ones(3))
    with pytest.raises(Coerced):
        np.asarray(x)
    with pytest.raises(Coerced):
        np.zeros(3)[...] = x
    with pytest.raises(Coerced):
        x[0] = 1.0
    with pytest.raises(Coerced):
        np.add.at(x, [0], 1.0)
    with pytest.raises(Coerced):
        bool(np.sum(x) > 0)
    assert type(np.tanh(x) @ x) is Duck and type(np.asarray(np.ones(2), like=x)) is Duck


MIXED = [c for c in RULES if c.fn.__module__ in ("tests.corpus_rules", "tests.corpus_linalg")]


@pytest.mark.parametrize("case", known(MIXED, KNOWN_MIXED), ids=[c.id for c in MIXED])
def test_rule_with_a_duck_cotangent(case):
    """numpy arguments, a duck cotangent -- a numpy ``w``'s adjoint from a loss over Dask data:
    numpy's gradient, with nothing converted (where a gradient got none of the cotangent, a
    numpy zero is fine)."""
    args, kwargs = case.diff_args(), case.fn_kwargs
    value, pullback = cpsad.vjp(case.fn, *args, **kwargs)
    c = _random_like(value, np.random.default_rng(1))
    expected = pullback(c)
    got = pullback(duck(c))
    lg, _ = leaves(unduck(got))
    le, _ = leaves(expected)
    assert len(lg) == len(le)
    for x, y in zip(lg, le):
        np.testing.assert_allclose(np.asarray(x), np.asarray(y), rtol=1e-6, atol=1e-9)


def _norm_of_gradient(f):
    def g(x):
        return np.sum(cpsad.grad(f)(x) ** 2)

    return g


def _tanh_sq(x):
    return np.sum(np.tanh(x) ** 2)


def _row_products(x):
    return np.sum(np.prod(x, axis=1) ** 2)


def _logistic(x):
    w = np.linspace(-0.5, 0.5, x.shape[1])
    return np.mean(np.logaddexp(0.0, x @ w))


SECOND = [_tanh_sq, _row_products, _logistic]
X23 = np.array([[0.5, 1.3, -0.7], [0.9, -1.1, 0.6]])


@pytest.mark.parametrize("f", SECOND, ids=[f.__name__ for f in SECOND])
def test_second_order_on_ducks(f):
    """Derivatives of derivatives of functions of a duck: the gradient of a function that takes
    a gradient inside (reverse over reverse: it was zero -- the inner gradient's adjoint was
    dropped for an argument of another library), and Hessian-vector products (forward over
    reverse), numpy's on ducks."""
    g = _norm_of_gradient(f)
    v = np.cos(X23)
    got = cpsad.grad(g)(duck(X23))
    assert type(got) is Duck
    np.testing.assert_allclose(unduck(got), cpsad.grad(g)(X23), rtol=1e-10, atol=1e-12)
    got = cpsad.hvp(f)(duck(X23), duck(v))
    assert type(got) is Duck
    np.testing.assert_allclose(unduck(got), cpsad.hvp(f)(X23, v), rtol=1e-10, atol=1e-12)
