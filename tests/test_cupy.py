"""The rule and core corpora on CuPy arrays, on a GPU: each case's gradient on the GPU must equal
numpy's, be a CuPy array where the argument was one, and get there with nothing copied to the
host in between (CuPy refuses an implicit conversion: ``np.asarray`` of a CuPy array raises).

Skipped, with the reason in the run's summary (``conftest.py``), where CuPy or a GPU is
missing: then the strict duck array (tests/test_duck.py) holds the same emitted code and
runtime to the same rules -- no conversion, no write into an array cpsad does not own, no value
read back -- and the cases it knows to fail (tests/duck_known.py) are expected to fail here
too (not strictly: CuPy may implement what the duck refuses).

Run them on a machine with a GPU: ``pip install cupy-cuda12x`` and ``pytest tests/test_cupy.py``.
"""

import numpy as np
import pytest

import cpsad
from cpsad.testing import _random_like, leaves
from tests.duck_known import KNOWN
from tests.gpu import gpu_reason
from tests.test_duck import CORE, RULES, SECOND, X23, _norm_of_gradient

REASON = gpu_reason()
if REASON is not None:
    pytest.skip(
        f"{REASON}: the CuPy path is covered by the strict duck array (tests/test_duck.py)",
        allow_module_level=True,
    )

import cupy  # noqa: E402  (present: checked above)


def on_gpu(x):
    """``x`` with its float and complex arrays on the GPU, containers followed; integer and
    bool arrays (indices, masks), numbers and shapes as they are (as tests/duck.py's ``duck``)."""
    t = type(x)
    if t is np.ndarray:
        return cupy.asarray(x) if x.dtype.kind in "fc" else x
    if t is tuple or t is list:
        return t(on_gpu(v) for v in x)
    if isinstance(x, tuple) and hasattr(x, "_fields"):
        return t(*(on_gpu(v) for v in x))
    if t is dict:
        return {k: on_gpu(v) for k, v in x.items()}
    return x


def on_host(x):
    """``x`` with its CuPy arrays copied to numpy, containers followed (the test's view)."""
    if isinstance(x, cupy.ndarray):
        return cupy.asnumpy(x)
    if isinstance(x, tuple) and hasattr(x, "_fields"):
        return type(x)(*(on_host(v) for v in x))
    if isinstance(x, (tuple, list)):
        return type(x)(on_host(v) for v in x)
    if isinstance(x, dict):
        return type(x)({k: on_host(v) for k, v in x.items()})
    return x


def arrays_in(x) -> list:
    if isinstance(x, dict):
        return [v for e in x.values() for v in arrays_in(e)]
    if isinstance(x, (list, tuple)):
        return [v for e in x for v in arrays_in(e)]
    return [x]


def assert_same(got, expected, given):
    """``got`` (a gradient on the GPU) is numpy's ``expected``, on the GPU wherever ``given``
    (the argument) was."""
    for a, g in zip(arrays_in(given), arrays_in(got)):
        if isinstance(a, cupy.ndarray):
            assert isinstance(g, cupy.ndarray), f"the gradient of a CuPy array is a {type(g)}"
    lg, _ = leaves(on_host(got))
    le, _ = leaves(expected)
    assert len(lg) == len(le)
    for x, y in zip(lg, le):
        np.testing.assert_allclose(np.asarray(x), np.asarray(y), rtol=1e-6, atol=1e-9)


def known(cases):
    """The cases the strict duck knows to coerce: expected to fail here too, not strictly."""
    return [
        (
            pytest.param(c, marks=pytest.mark.xfail(strict=False, reason=KNOWN[c.id]))
            if c.id in KNOWN
            else c
        )
        for c in cases
    ]


@pytest.mark.parametrize("case", known(RULES), ids=[c.id for c in RULES])
def test_rule_on_the_gpu(case):
    """``cpsad.vjp`` of each rule's wrapper: on CuPy arrays what it is on numpy arrays."""
    args, kwargs = case.diff_args(), case.fn_kwargs
    value, pullback = cpsad.vjp(case.fn, *args, **kwargs)
    c = _random_like(value, np.random.default_rng(1))
    expected = pullback(c)
    gargs = on_gpu(args)
    _, gpullback = cpsad.vjp(case.fn, *gargs, **on_gpu(kwargs))
    assert_same(gpullback(on_gpu(c)), expected, gargs)


@pytest.mark.parametrize("f,args,argnums", CORE, ids=[f.__name__ for f, _, _ in CORE])
def test_core_on_the_gpu(f, args, argnums):
    """``cpsad.grad`` of the core corpus's functions with array arguments (their own control
    flow may read values back, as on the duck with ``allow_reads``)."""
    expected = cpsad.grad(f, argnums=argnums)(*args)
    gargs = on_gpu(args)
    got = cpsad.grad(f, argnums=argnums)(*gargs)
    nums = (argnums,) if isinstance(argnums, int) else argnums
    if isinstance(argnums, int):
        got, expected = (got,), (expected,)
    for i, g, e in zip(nums, got, expected):
        assert_same(g, e, gargs[i])


@pytest.mark.parametrize("f", SECOND, ids=[f.__name__ for f in SECOND])
def test_second_order_on_the_gpu(f):
    """Reverse over reverse and Hessian-vector products on CuPy arrays, numpy's."""
    g = _norm_of_gradient(f)
    v = np.cos(X23)
    got = cpsad.grad(g)(cupy.asarray(X23))
    assert isinstance(got, cupy.ndarray)
    np.testing.assert_allclose(cupy.asnumpy(got), cpsad.grad(g)(X23), rtol=1e-10, atol=1e-12)
    got = cpsad.hvp(f)(cupy.asarray(X23), cupy.asarray(v))
    assert isinstance(got, cupy.ndarray)
    np.testing.assert_allclose(cupy.asnumpy(got), cpsad.hvp(f)(X23, v), rtol=1e-10, atol=1e-12)
