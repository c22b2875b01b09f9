"""Deferred adjoints (cpsad/deferred.py): a weight's adjoint summed over its uses when read.

End to end, gradients of programs whose weights are used many times (a loop of matrix-vector
products, an embedding table read row by row, a recursion over a tree) against central
differences and HIPS autograd; then the ``Deferred`` value itself against the array it stands for,
under every operation something downstream may apply to it.
"""

import types

import numpy as np
import pytest

import cpsad
from cpsad import deferred
from cpsad.deferred import Deferred
from cpsad.rules.operators import matmul_x, matmul_y
from cpsad.runtime import getitem_adjoint
from cpsad.testing import check_grads

autograd = pytest.importorskip("autograd")
anp = pytest.importorskip("autograd.numpy")

# --------------------------------------------------------------------------- programs


def rnn_vectors(W, U, xs):
    """A vector recurrence: W and U each used once per step, as ``W @ v`` and ``v @ U``."""
    h = np.zeros(W.shape[0])
    total = 0.0
    for x in xs:
        h = np.tanh(W @ h + x @ U)
        total = total + np.sum(h * h)
    return total


def embedding_bag(E, W, words):
    """Rows of a table read one at a time, a word repeated: the rows' adjoints add up."""
    total = 0.0
    for i in words:
        total = total + np.sum(np.tanh(W @ E[i]))
    return total


def product_of_weights(A, B, vs):
    """``W = A @ B`` used at every step: W's deferred adjoint flows on into A's and B's rules."""
    W = A @ B
    s = 0.0
    for v in vs:
        s = s + np.sum(np.sin(W @ v))
    return s


def readout_then_reuse(W, vs):
    """W's adjoint is read (``W * W``) between two uses: a deferred sum meets dense terms."""
    s = 0.0
    for v in vs:
        s = s + np.sum(np.tanh(v @ W)) + np.sum(W * W) * 0.01
    return s


def scalar_entries(x):
    """Entries of a vector read one by one in a loop (each a float): scattered, not n zeros each."""
    s = 0.0
    for i in range(len(x)):
        s = s + x[i] * x[(i + 1) % len(x)]
    return s


def with_numpy(f, module):
    """``f`` with ``np`` bound to ``module`` (autograd.numpy): the same source, another library."""
    return types.FunctionType(f.__code__, {**f.__globals__, "np": module}, f.__name__)


def scaled(W):
    """A primitive of the user's own (a rule registered below): its adjoint rule receives the
    deferred adjoint of its result, summed over the loop's uses."""
    return 3.0 * W


cpsad.defvjp(scaled, lambda g, ans, W: 3.0 * g)


def through_a_user_rule(W, vs):
    s = 0.0
    for v in vs:
        s = s + np.sum(np.sin(scaled(W) @ v))
    return s


def _rng():
    return np.random.default_rng(0)


CASES = {
    "rnn_vectors": (
        rnn_vectors,
        lambda r: (
            r.standard_normal((5, 5)) * 0.5,
            r.standard_normal((3, 5)),
            r.standard_normal((7, 3)),
        ),
        (0, 1),
    ),
    "embedding_bag": (
        embedding_bag,
        lambda r: (r.standard_normal((6, 4)), r.standard_normal((3, 4)), [1, 4, 1, 0, 4, 4]),
        (0, 1),
    ),
    "product_of_weights": (
        product_of_weights,
        lambda r: (
            r.standard_normal((4, 3)),
            r.standard_normal((3, 5)),
            list(r.standard_normal((6, 5))),
        ),
        (0, 1),
    ),
    "readout_then_reuse": (
        readout_then_reuse,
        lambda r: (r.standard_normal((4, 3)), list(r.standard_normal((5, 4)))),
        0,
    ),
    "scalar_entries": (scalar_entries, lambda r: (r.standard_normal(9),), 0),
}


def test_a_user_rule_receives_the_deferred_adjoint():
    rng = _rng()
    W, vs = rng.standard_normal((3, 4)), list(rng.standard_normal((5, 4)))
    ours = check_grads(through_a_user_rule, W, vs)
    expected = sum(3.0 * np.outer(np.cos(3.0 * W @ v), v) for v in vs)
    np.testing.assert_allclose(ours, expected, rtol=1e-12)


@pytest.mark.parametrize("name", sorted(CASES))
def test_gradient_against_differences_and_autograd(name):
    f, make, argnums = CASES[name]
    args = make(_rng())
    ours = check_grads(f, *args, argnums=argnums)
    theirs = autograd.grad(with_numpy(f, anp), argnums)(*args)
    for a, b in zip(*((ours, theirs) if isinstance(argnums, tuple) else ((ours,), (theirs,)))):
        assert type(a) is np.ndarray  # the API returns arrays, never a Deferred
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)


def test_float32_stays_float32():
    W = _rng().standard_normal((4, 4)).astype(np.float32)
    xs = _rng().standard_normal((3, 4)).astype(np.float32)
    g = cpsad.grad(rnn_vectors, argnums=(0, 1))(W, W, xs)
    assert all(x.dtype == np.float32 for x in g)


def test_hessian_vector_product_through_deferred_weights():
    W = _rng().standard_normal((3, 3)) * 0.5
    U = _rng().standard_normal((2, 3))
    xs = _rng().standard_normal((4, 2))
    v = _rng().standard_normal((3, 3))
    ours = cpsad.hvp(rnn_vectors, argnums=0)(W, U, xs, v)
    gradient = autograd.grad(lambda W: with_numpy(rnn_vectors, anp)(W, U, xs))
    eps = 1e-5
    fd = (gradient(W + eps * v) - gradient(W - eps * v)) / (2 * eps)
    np.testing.assert_allclose(ours, fd, rtol=1e-5, atol=1e-7)


# --------------------------------------------------------------------------- the value itself


def _terms(rng, n=5, p=4, q=3):
    """n outer products and their sum, computed the plain way."""
    a = [rng.standard_normal(p) for _ in range(n)]
    b = [rng.standard_normal(q) for _ in range(n)]
    lazy = None
    for x, y in zip(a, b):
        term = Deferred.product(x, y)
        lazy = term if lazy is None else lazy + term
    return lazy, sum(np.outer(x, y) for x, y in zip(a, b))


def test_sum_of_products_and_scatters():
    rng = _rng()
    lazy, dense = _terms(rng)
    rows = rng.standard_normal((3, 3))
    for i, r in zip([1, 3, 1], rows):
        lazy = lazy + Deferred.scatter((4, 3), np.float64, i, r)
        dense[i] += r
    extra = rng.standard_normal((4, 3))
    lazy = extra + lazy  # an array on the left: numpy hands the sum to Deferred
    np.testing.assert_allclose(np.asarray(lazy), dense + extra)
    assert type(lazy) is Deferred  # still deferred: adding an array of its shape keeps it so


@pytest.mark.parametrize(
    "op",
    [
        lambda d: d * 2.0,
        lambda d: 2.0 * d,
        lambda d: d - 1.0,
        lambda d: 1.0 - d,
        lambda d: -d,
        lambda d: d / 3.0,
        lambda d: d**2,
        lambda d: d.T,
        lambda d: d[1],
        lambda d: d[:, 0],
        lambda d: d.reshape(-1),
        lambda d: d.sum(axis=0),
        lambda d: np.sum(d),
        lambda d: np.tanh(d),
        lambda d: np.maximum(d, 0.0),
        lambda d: np.concatenate([d, d]),
        lambda d: d @ np.ones(3),
        lambda d: np.ones(4) @ d,
        lambda d: d + np.ones(3),  # broadcast: not its shape, so computed
        lambda d: d + 1.0,
        lambda d: list(d)[0],
        lambda d: d == d,
    ],
)
def test_reads_see_the_array(op):
    lazy, dense = _terms(_rng())
    np.testing.assert_allclose(np.asarray(op(lazy)), op(dense))


def test_attributes():
    lazy, dense = _terms(_rng())
    assert lazy.shape == dense.shape and lazy.ndim == 2 and lazy.size == dense.size
    assert np.shape(lazy) == dense.shape and np.ndim(lazy) == 2 and len(lazy) == 4
    assert lazy.dtype == dense.dtype
    assert "deferred" in repr(lazy)
    lazy.array()
    assert "computed" in repr(lazy)


def test_computed_once_and_never_written_into_an_array_it_was_given():
    rng = _rng()
    lazy, dense = _terms(rng)
    given = rng.standard_normal((4, 3))
    before = given.copy()
    total = lazy + given
    first = total.array()
    assert total.array() is first
    np.testing.assert_array_equal(given, before)
    np.testing.assert_allclose(first, dense + given)


def test_a_long_chain_is_summed_without_recursion():
    rng = _rng()
    x, y = rng.standard_normal(2), rng.standard_normal(2)
    lazy = Deferred.product(x, y)
    for _ in range(100_000):
        lazy = lazy + Deferred.product(x, y)
    np.testing.assert_allclose(lazy.array(), 100_001 * np.outer(x, y))


def test_a_large_sum_is_computed_at_once(monkeypatch):
    monkeypatch.setattr(deferred, "LIMIT", 20)
    rng = _rng()
    x, y = rng.standard_normal(4), rng.standard_normal(3)
    lazy = Deferred.product(x, y)
    for _ in range(3):
        lazy = lazy + Deferred.product(x, y)
    assert lazy._array is not None  # 4 terms of 7 elements: past the limit, so summed
    np.testing.assert_allclose(lazy.array(), 4 * np.outer(x, y))


def test_rules_defer_only_what_they_batch():
    rng = _rng()
    W, v, g = rng.standard_normal((3, 4)), rng.standard_normal(4), rng.standard_normal(3)
    assert type(matmul_x(g, None, W, v)) is Deferred  # W @ v: an outer product
    assert type(matmul_y(v, None, v, W.T)) is Deferred  # v @ W
    X, G = rng.standard_normal((5, 3)), rng.standard_normal((5, 4))
    assert type(matmul_y(G, None, X, W)) is np.ndarray  # a matrix product: already batched
    complex_v = v.astype(complex)
    assert type(matmul_x(g.astype(complex), None, W, complex_v)) is np.ndarray
    E = rng.standard_normal((6, 2))
    assert type(getitem_adjoint(rng.standard_normal(2), E, 3)) is Deferred
    assert type(getitem_adjoint(rng.standard_normal((2, 2)), E, slice(0, 2))) is np.ndarray


# --------------------------------------------------------------------------- acc_into


def test_acc_into_adds_in_place_only_what_its_variable_alone_holds():
    from cpsad.runtime import Sparse, acc_into

    a = np.ones(3)
    a = acc_into(a, np.ones(3))
    np.testing.assert_array_equal(a, 2.0)

    shared = np.ones(3)
    alias = shared
    shared = acc_into(shared, np.ones(3))
    np.testing.assert_array_equal(alias, 1.0)  # the alias keeps its value
    np.testing.assert_array_equal(shared, 2.0)

    view_of = np.ones(4)
    v = view_of[:3]
    v = acc_into(v, np.ones(3))  # a view: never written into
    np.testing.assert_array_equal(view_of, 1.0)

    entry = np.ones(2)
    s = Sparse({"w": entry, "b": np.zeros(2)})
    kept = Sparse(s)  # shares the entries
    s = acc_into(s, Sparse({"w": np.ones(2), "c": np.ones(2)}))
    np.testing.assert_array_equal(entry, 1.0)
    assert set(kept) == {"w", "b"} and set(s) == {"w", "b", "c"}
    np.testing.assert_array_equal(s["w"], 2.0)

    alone = Sparse({"w": np.ones(2)})
    before = alone
    alone = acc_into(alone, Sparse({"w": np.ones(2)}))
    assert set(before) == {"w"} and alone is not before  # two names held it: a new dict

    f32 = np.ones(2, np.float32)
    f32 = acc_into(f32, np.ones(2))  # float32 + float64 is float64: not in place
    assert f32.dtype == np.float64
