"""Gradients on chunked Dask arrays equal numpy's, and taking them computes nothing.

numpy hands its functions on a Dask array to Dask (NEP 18, NEP 13), so cpsad's backpropagator
builds a Dask graph: ``cpsad.grad(loss)(w, X, y)`` with ``X`` a Dask array returns a lazy Dask
array, which ``.compute()`` evaluates. Each test counts the computations Dask starts while the
gradient is taken (none: a conversion, a ``float()`` or a ``bool()`` of a Dask array in the
runtime would start one) and turns Dask's warning about a numpy function it does not implement
-- it computes the arguments and calls numpy -- into an error.
"""

import os
import sys
import warnings

import numpy as np
import pytest

import cpsad

da = pytest.importorskip("dask.array")
dask = pytest.importorskip("dask")
from dask.callbacks import Callback  # noqa: E402

from tests import (  # noqa: E402
    corpus_composites,  # noqa: F401 (the composites' cases, added to C.CASES)
    corpus_emitted,  # noqa: F401 (cpsad's helpers')
    corpus_fft,  # noqa: F401
    corpus_linalg,  # noqa: F401
)
from tests import corpus_rules as C  # noqa: E402
from tests.duck_known import KNOWN as DUCK_KNOWN  # noqa: E402
from tests.duck_known import PROD_PARTIALS, R_ITEMS, VALUES  # noqa: E402

pytestmark = pytest.mark.filterwarnings("error:The `numpy.*is not implemented by Dask")

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if os.path.join(ROOT, "examples") not in sys.path:  # the examples import `common`
    sys.path.insert(0, os.path.join(ROOT, "examples"))


class Computations(Callback):
    """Counts the graphs Dask computes while it is active."""

    def __init__(self):
        super().__init__()
        self.count = 0

    def _start(self, dsk):
        self.count += 1


def chunked(x, rows=None):
    """``x`` with its float arrays as Dask arrays of several chunks along the first axis."""
    if isinstance(x, np.ndarray) and x.dtype.kind == "f" and x.ndim:
        return da.from_array(x, chunks=(rows or max(1, -(-len(x) // 3)),) + x.shape[1:])
    if isinstance(x, np.ndarray) and x.dtype.kind == "f":
        return da.from_array(x)
    if isinstance(x, dict):
        return {k: chunked(v, rows) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return type(x)(chunked(v, rows) for v in x)
    return x


def lazy_gradient(f, args, argnums=0, **kwargs):
    """``cpsad.grad(f)`` of ``args``: the (lazy) gradient, checked to have computed nothing."""
    counter = Computations()
    with counter:
        g = cpsad.grad(f, argnums=argnums)(*args, **kwargs)
    assert counter.count == 0, f"taking the gradient computed {counter.count} Dask graphs"
    return g


def flat(tree) -> list:
    """The leaves of a pytree of dicts, lists and tuples: arrays of any library, numbers."""
    if isinstance(tree, dict):
        return [v for k in sorted(tree, key=str) for v in flat(tree[k])]
    if isinstance(tree, (list, tuple)):
        return [v for e in tree for v in flat(e)]
    return [tree]


def assert_equal_trees(got, expected, lazy=True):
    got_leaves, expected_leaves = flat(got), flat(expected)
    assert len(got_leaves) == len(expected_leaves)
    for g, e in zip(got_leaves, expected_leaves):
        if lazy:
            assert isinstance(g, da.Array), f"a {type(g).__name__}, not a lazy Dask array"
        np.testing.assert_allclose(np.asarray(g), e, rtol=1e-10, atol=1e-12)


@pytest.fixture(autouse=True)
def synchronous():
    with dask.config.set(scheduler="synchronous"):
        yield


SCIPY = ("scipy.", "tests.corpus_scipy")  # (numpy's libraries: they convert, as in test_duck)


def _runs_on_dask(case) -> bool:
    """Does Dask itself run the case's forward computation, lazily, to a Dask array? It refuses
    some fancy indexing, ``np.take`` without an axis and the functions it does not have (sort,
    interp, ...); a program that computes -- ``np.array`` of a Dask array, ``float()`` -- is left
    out too (tests/test_duck.py holds cpsad to not reading values)."""
    counter = Computations()
    try:
        with warnings.catch_warnings():
            warnings.filterwarnings("error", message="The `numpy.*is not implemented by Dask")
            with counter:
                value = case.fn(*chunked(case.diff_args()), **chunked(case.fn_kwargs))
    except Exception:
        return False
    return counter.count == 0 and isinstance(value, da.Array)


# every case of the rule corpora -- numpy's functions, the composites, np.fft, np.linalg and
# cpsad's own helpers (second order) -- whose forward computation Dask runs
CASES = [
    c
    for c in C.CASES
    if not c.xfail
    and not (getattr(c.prim, "__module__", None) or "").startswith(SCIPY)
    and not c.fn.__module__.startswith(SCIPY)
    and any(isinstance(a, np.ndarray) and a.dtype.kind == "f" and a.ndim for a in c.diff_args())
    and _runs_on_dask(c)
]

ABS = (
    "np.absolute's rule calls x.conjugate() (a float's and an ndarray's method), which Dask "
    "arrays lack (they have .conj()); emitted code has it (the piecewise example's snapshot)"
)
UNKNOWN_CHUNKS = (
    "the value's length is unknown to Dask (x[mask], np.unique): this test's cotangent comes in "
    "chunks of its own, which np.bincount does not pair with the positions' (a program's "
    "adjoint comes in the value's chunks: test_indices_computed_on_dask)"
)
DASK_REFUSES = (
    "the helper's own rule (second order) calls what Dask refuses or does not have -- np.repeat "
    "or np.take without an axis, a list of repeats, np.take_along_axis -- as Dask refuses them "
    "in a program's forward pass"
)
LSTSQ = "np.linalg.lstsq's rules pass rcond, which Dask's lstsq does not take"
EINSUM = (
    "Dask's np.einsum of an index repeated in one operand ('ii') fails where the operand's two "
    "axes are chunked differently (this test chunks rows only)"
)
STORE = (
    "a store into an array the function made (y = x * 2.0; y[1:] += x[0]): cpsad knows that a "
    "numpy product is a new array, not that a Dask one is, and refuses the store"
)
SORTS = "the composite sorts (np.sort), which Dask does not have (its np.quantile is its own)"
LIST = "Dask's np.gradient of a 1-d array returns a list (numpy's an array): vjp sees two values"
KNOWN: dict = {}
KNOWN.update(dict.fromkeys(["abs_builtin-0", "absolute-0", "abs_np-0", "fabs-0"], ABS))
KNOWN.update(dict.fromkeys(["operator_unary-0"], ABS))
KNOWN.update(dict.fromkeys(["index_mask-0", "unique-0"], UNKNOWN_CHUNKS))
KNOWN.update(
    dict.fromkeys(
        [
            "repeat_vjp_-0",
            "repeat_vjp_-2",
            "take_vjp_-0",
            "take_vjp_-1",
            "take_along_axis_vjp_-0",
        ],
        DASK_REFUSES,
    )
)
KNOWN.update(dict.fromkeys(["lstsq_fit-0"], LSTSQ))
KNOWN.update(dict.fromkeys(["einsum_adjoint_0-1"], EINSUM))
KNOWN.update(dict.fromkeys(["aug_store_into_active-0"], STORE))
KNOWN.update(dict.fromkeys(["quantile-1", "quantile-2", "median-1", "median-2"], SORTS))
KNOWN.update(dict.fromkeys(["gradient-0"], LIST))
KNOWN.update(dict.fromkeys(["average-0", "average-1", "average_returned-0"], VALUES))
KNOWN.update(dict.fromkeys(["index_concatenated_vjp_-4", "index_concatenated_jvp_-4"], R_ITEMS))
KNOWN.update({k: v for k, v in DUCK_KNOWN.items() if v == PROD_PARTIALS})
KNOWN = {k: v for k, v in KNOWN.items() if k in {c.id for c in CASES}}  # (those Dask runs)


@pytest.mark.parametrize(
    "case",
    [
        (
            pytest.param(c, marks=pytest.mark.xfail(strict=True, reason=KNOWN[c.id]))
            if c.id in KNOWN
            else c
        )
        for c in CASES
    ],
    ids=[c.id for c in CASES],
)
def test_corpus_on_chunked_arrays(case):
    """``cpsad.vjp`` of a rule's wrapper on chunked Dask arrays: numpy's gradient, lazily."""
    args, kwargs = case.diff_args(), case.fn_kwargs
    value, pullback = cpsad.vjp(case.fn, *args, **kwargs)
    c = np.random.default_rng(1).standard_normal(np.shape(value))
    expected = pullback(c)
    counter = Computations()
    with counter:
        dvalue, dpullback = cpsad.vjp(case.fn, *chunked(args), **chunked(kwargs))
        known = not any(np.isnan(n) for sizes in dvalue.chunks for n in sizes)
        got = dpullback(da.from_array(np.asarray(c), chunks=dvalue.chunks if known else "auto"))
    assert counter.count == 0
    assert_equal_trees(got, expected)


def _examples():
    import importlib.util

    out = {}
    for name in ("mlp", "cnn", "dask_glm"):
        spec = importlib.util.spec_from_file_location(
            f"ex_dask_{name}", os.path.join(ROOT, "examples", f"{name}.py")
        )
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        out[name] = mod
    return out


EX = _examples()


def test_mlp_loss_over_dask_data():
    """The MLP example's loss over a Dask batch: the gradient of its numpy parameters is a dict
    of lazy Dask arrays, numpy's gradient once computed."""
    mlp = EX["mlp"]
    X, labels = mlp.load_digits()
    X, Y = X[:96], np.eye(10)[labels[:96]]
    params = mlp.init_params(np.random.default_rng(0))
    expected = cpsad.grad(mlp.loss)(params, X, Y)
    got = lazy_gradient(mlp.loss, (params, chunked(X, 32), chunked(Y, 32)))
    assert_equal_trees(got, expected)
    got_params = lazy_gradient(mlp.loss, (chunked(params), X, Y))  # the parameters on Dask too
    assert_equal_trees(got_params, expected)


def test_cnn_over_dask_data():
    """The CNN example's network (im2col by padding, slicing and stacking, reshapes, max-pooling,
    a ReLU) over a Dask batch of images, with the cross-entropy of one-hot labels (as the MLP's):
    the gradient of its numpy parameters is numpy's, lazily."""
    from common import load_digits

    cnn = EX["cnn"]
    X, labels = load_digits()
    X, Y = X[:24], np.eye(10)[labels[:24]]
    params = cnn.init_params(np.random.default_rng(0))

    def loss(params, X, Y):
        logits = cnn.predict(params, X)
        m = np.max(logits, axis=1, keepdims=True)
        logp = logits - m - np.log(np.sum(np.exp(logits - m), axis=1, keepdims=True))
        return -np.mean(np.sum(logp * Y, axis=1))

    expected = cpsad.grad(loss)(params, X, Y)
    got = lazy_gradient(loss, (params, chunked(X, 8), Y))
    assert_equal_trees(got, expected)


@pytest.mark.xfail(
    strict=True,
    raises=NotImplementedError,
    reason="the loss's own forward pass picks each row's label with two index arrays, "
    "`logp[np.arange(n), labels]`, which Dask refuses without cpsad ('Don't yet support nd "
    "fancy indexing'); the backward pass runs on Dask (test_cnn_over_dask_data)",
)
def test_cnn_loss_over_dask_data():
    """The CNN example's loss as written (labels picked by fancy indexing) over a Dask batch."""
    from common import load_digits

    cnn = EX["cnn"]
    X, labels = load_digits()
    X, labels = X[:24], labels[:24]
    params = cnn.init_params(np.random.default_rng(0))
    expected = cpsad.grad(cnn.loss)(params, X, labels)
    got = lazy_gradient(cnn.loss, (params, chunked(X, 8), labels))
    assert_equal_trees(got, expected)


def test_the_cnn_loss_is_refused_by_dask_itself():
    """What the xfail above says: the example's loss, run on a Dask batch with no cpsad at all,
    stops at its own label pick."""
    from common import load_digits

    cnn = EX["cnn"]
    X, labels = load_digits()
    params = cnn.init_params(np.random.default_rng(0))
    with pytest.raises(NotImplementedError, match="nd fancy indexing"):
        cnn.loss(params, chunked(X[:24], 8), labels[:24])


def test_indices_computed_on_dask():
    """A mask and a position computed from the Dask array's values (``x[x > 0]``,
    ``x[np.argmax(x)]``, np.piecewise's conditions): their adjoints are summed into place on Dask
    (np.bincount), the mean of a selection of a length Dask does not know yet divides by a count
    in the graph; nothing computed, numpy's gradient."""

    def f(x):
        y = x[x > 0.2]
        col = x[:, 1]
        z = np.piecewise(col, [col < 0.0, col > 0.5], [np.sin, 2.0, np.cos])
        return np.sum(y**2) + np.mean(y) + 3.0 * col[np.argmax(col)] + np.sum(np.tanh(col) * z)

    x = np.random.default_rng(2).standard_normal((12, 5))
    got = lazy_gradient(f, (chunked(x, 4),))
    assert_equal_trees(got, cpsad.grad(f)(x))


def test_a_store_at_an_index_of_several_arrays():
    """``out[rows, cols] = v`` into an array the function made, ``v`` on Dask: the store is one
    gather, and the adjoint of ``v`` reads the adjoint of ``out`` at ``rows, cols`` -- an index
    Dask refuses -- by one take from the flattened array; the repeated position keeps the last
    write, as numpy does."""
    rows, cols = np.array([0, 2, 2, 1]), np.array([1, 0, 0, 3])

    def f(v, w):
        out = np.zeros((3, 4))
        out[rows, cols] = v
        return np.sum(np.tanh(out * w) ** 2)

    v, w = np.random.default_rng(3).standard_normal(4), np.random.default_rng(4).random((3, 4))
    expected = cpsad.grad(f, argnums=(0, 1))(v, w)
    got = lazy_gradient(f, (chunked(v, 2), chunked(w, 1)), argnums=(0, 1))
    assert_equal_trees(got, expected)


def test_glm_loss_and_descent_agree_with_numpy():
    """The Dask example's loss on a lazily generated data set; a few steps of its descent on a
    sample, on chunked Dask arrays and on numpy arrays, reach the same weights."""
    glm = EX["dask_glm"]
    X, y, _ = glm.make_data(3_000, 5, 1_000, seed=3)
    Xn, yn = X.compute(), y.compute()
    w = np.random.default_rng(0).normal(size=6)
    expected = cpsad.grad(glm.loss)(w, Xn, yn)
    got = lazy_gradient(glm.loss, (w, X, y))
    assert_equal_trees(got, expected)
    w_numpy, losses_numpy = glm.train(Xn, yn, 3, 2.0)
    w_dask, losses_dask = glm.train(X, y, 3, 2.0)
    np.testing.assert_allclose(w_dask, w_numpy, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(losses_dask, losses_numpy, rtol=1e-12)


def test_grad_seeds_a_0d_dask_result():
    """grad of a function whose value is a 0-d Dask array: seeded with a Dask one, nothing
    computed (it said 'grad requires a scalar output, but the function returned a Array')."""
    x = np.linspace(-1.0, 1.0, 12)

    def f(x):
        return np.sum(np.tanh(x) ** 2)

    got = lazy_gradient(f, (chunked(x, 4),))
    assert isinstance(got, da.Array)
    np.testing.assert_allclose(got.compute(), cpsad.grad(f)(x))
    with pytest.raises(TypeError, match="scalar output.*shape \\(12,\\)"):
        cpsad.grad(np.tanh)(chunked(x, 4))


def test_jvp_on_dask_arrays():
    """Forward mode: ``cpsad.jvp`` of a function of a Dask array along a Dask (or numpy) tangent
    is numpy's, lazily (the tangent of a Dask primal was dropped, and the tangent function failed
    on None times an array)."""

    def f(x, w):
        return np.tanh(x @ w[1:] + w[0]) * np.sum(x**2, axis=1)

    x = np.random.default_rng(5).standard_normal((9, 3))
    w, tx, tw = np.linspace(-1.0, 1.0, 4), np.cos(x), np.sin(np.arange(4.0))
    value, expected = cpsad.jvp(f, (x, w), (tx, tw))
    counter = Computations()
    with counter:
        dvalue, got = cpsad.jvp(f, (chunked(x, 3), w), (chunked(tx, 3), tw))
        _, got_numpy_tangent = cpsad.jvp(f, (chunked(x, 3), w), (tx, tw))
    assert counter.count == 0
    assert_equal_trees([dvalue, got, got_numpy_tangent], [value, expected, expected])
    with pytest.raises(ValueError, match="tangent 0 has shape"):
        cpsad.jvp(f, (chunked(x, 3), w), (tx[:2], tw))


def test_a_derivative_of_a_derivative_on_dask():
    """The gradient of a function that takes a gradient inside, of a Dask array: numpy's, lazily
    (it was zeros: the inner gradient's adjoint was dropped for an argument of another
    library)."""

    def f(x):
        return np.sum(np.tanh(x) ** 2) + np.sum(np.prod(x, axis=1))

    def g(x):
        return np.sum(cpsad.grad(f)(x) ** 2)

    x = np.random.default_rng(6).standard_normal((8, 3))
    got = lazy_gradient(g, (chunked(x, 4),))
    assert_equal_trees(got, cpsad.grad(g)(x))
