"""Higher-order derivatives: emitted code transformed again.

grad(grad(f)) is reverse over reverse, jvp(grad(f)) and hvp forward over reverse; each is checked
against central differences of the first derivative (an independent computation), against the
other, and against analytic values where there are simple ones. Nested derivatives of closures
must not confuse their perturbations.
"""

import math

import numpy as np
import pytest

import cpsad
from tests import corpus_control, corpus_core

EPS = 1e-5


# functions that pass functions around: their backpropagators call through values (call_bp),
# which a second transformation differentiates through the dispatch of the next order (bp_of)
THROUGH_VALUES = {"curried", "higher_order", "builtin_higher_order", "objects_and_methods"}


def scalar_cases(through_values=False):
    """Every corpus function differentiated with respect to one float argument."""
    out = []
    for f, args, argnums in corpus_core.CASES + corpus_control.CASES:
        if (f.__name__ in THROUGH_VALUES) != through_values:
            continue
        for i in (argnums,) if isinstance(argnums, int) else argnums:
            if type(args[i]) is float:
                out.append((f, args, i))
    return out


SCALAR = scalar_cases()
SCALAR_IDS = [f"{f.__name__}-{i}" for i, (f, _, _) in enumerate(SCALAR)]


def fd_of(g, args, argnums):
    plus, minus = list(args), list(args)
    plus[argnums] = args[argnums] + EPS
    minus[argnums] = args[argnums] - EPS
    return (g(*plus) - g(*minus)) / (2 * EPS)


def test_the_scalar_corpus_is_large_enough():
    names = {f.__name__ for f, _, _ in SCALAR}
    # branches, loops, recursion, closures
    assert {"branch_nested", "loop_while", "power", "closure", "nonlocal_accumulator"} <= names


@pytest.mark.parametrize("f,args,argnums", SCALAR, ids=SCALAR_IDS)
def test_second_derivative_reverse_over_reverse(f, args, argnums):
    g = cpsad.grad(f, argnums)
    gg = cpsad.grad(g, argnums)
    np.testing.assert_allclose(gg(*args), fd_of(g, args, argnums), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("f,args,argnums", SCALAR, ids=SCALAR_IDS)
def test_second_derivative_forward_over_reverse_agrees(f, args, argnums):
    g = cpsad.grad(f, argnums)
    tangents = [None] * len(args)
    tangents[argnums] = 1.0
    value, second = cpsad.jvp(g, args, tangents)
    np.testing.assert_allclose(value, g(*args), rtol=1e-12)
    np.testing.assert_allclose(second, cpsad.grad(g, argnums)(*args), rtol=1e-9, atol=1e-12)


def test_second_derivative_is_exact():
    def f(x):
        return x**4 * math.sin(x)

    x = 0.8
    s, c = math.sin(x), math.cos(x)
    expected = 12 * x**2 * s + 8 * x**3 * c - x**4 * s
    assert cpsad.grad(cpsad.grad(f))(x) == pytest.approx(expected, rel=1e-12)
    assert cpsad.hvp(f)(x, 1.0) == pytest.approx(expected, rel=1e-12)


@pytest.mark.parametrize("f,args,argnums", scalar_cases(through_values=True))
def test_second_derivative_of_code_that_passes_functions(f, args, argnums):
    """A first-order backpropagator that calls through a value (call_bp) is transformed again
    through ``bp_of``: central differences of the first derivative agree."""
    g = cpsad.grad(f, argnums)
    np.testing.assert_allclose(
        cpsad.grad(g, argnums)(*args), fd_of(g, args, argnums), rtol=1e-5, atol=1e-6
    )


def test_third_and_fourth_derivatives_are_exact():
    def cube(x):
        return x * x * x

    def f(x):
        return x**4 * math.sin(x)

    assert cpsad.grad(cpsad.grad(cpsad.grad(cube)))(0.3) == pytest.approx(6.0, rel=1e-12)
    x = 0.8
    s, c = math.sin(x), math.cos(x)
    third = 24 * x * s + 36 * x**2 * c - 12 * x**3 * s - x**4 * c
    fourth = 24 * s + 96 * x * c - 72 * x**2 * s - 16 * x**3 * c + x**4 * s
    g3 = cpsad.grad(cpsad.grad(cpsad.grad(f)))
    assert g3(x) == pytest.approx(third, rel=1e-12)
    assert cpsad.grad(g3)(x) == pytest.approx(fourth, rel=1e-12)


def test_tanh_to_order_six():
    """autograd's example: the derivatives of tanh are polynomials in tanh, P' (1 - T^2)."""
    P = np.polynomial.polynomial
    polys = [np.array([0.0, 1.0])]
    for _ in range(6):
        polys.append(P.polymul(P.polyder(polys[-1]), [1.0, 0.0, -1.0]))
    x = 0.4
    g = np.tanh
    for n in range(1, 7):
        g = cpsad.grad(g)
        assert g(x) == pytest.approx(P.polyval(np.tanh(x), polys[n]), rel=1e-10, abs=1e-12), n


def nth(f, argnums, n):
    for _ in range(n):
        f = cpsad.grad(f, argnums)
    return f


@pytest.mark.parametrize("order", [3, 4])
@pytest.mark.parametrize("f,args,argnums", SCALAR, ids=SCALAR_IDS)
def test_higher_derivative_is_right_or_refused_at_the_users_line(f, args, argnums, order):
    """A derivative of order three or four agrees with central differences of the one below
    it, or is a TransformError at the user's file: the backpropagator of a loop, a recursive
    function or a call of a user function passes its continuations as values, which the next
    order differentiates through ``bp_of`` (see docs/higher.md)."""
    below = nth(f, argnums, order - 1)
    try:
        got = cpsad.grad(below, argnums)(*args)
    except cpsad.TransformError as exc:
        assert exc.filename == f.__code__.co_filename, str(exc)
        assert "through a value" in str(exc) or "`*args`" in str(exc), str(exc)
        return
    np.testing.assert_allclose(got, fd_of(below, args, argnums), rtol=2e-4, atol=1e-4)


def test_the_whole_corpus_has_a_third_derivative():
    """(63 of 95 when this was first written -- straight-line code and branches, not loops;
    every one since the dispatch of function values is differentiated at the next order)"""
    refused = []
    for f, args, argnums in SCALAR:
        try:
            nth(f, argnums, 3)(*args)
        except cpsad.TransformError:
            refused.append(f.__name__)
    assert not refused, refused


def loop_of(x):
    s = 0.0
    for i in range(3):
        s = s + np.sin(x) * i
    return s


def test_derivatives_of_a_loop_to_order_five():
    """A loop's backpropagator passes its continuation as a value (``k(s)`` in the loop's
    function): each order differentiates the dispatch of the one below (it was refused from
    the third on). sum_i i sin(x): the n-th derivative is sin(x + n pi / 2) times 3."""
    g = loop_of
    for n in range(1, 6):
        g = cpsad.grad(g)
        assert g(0.3) == pytest.approx(3 * math.sin(0.3 + n * math.pi / 2), rel=1e-10), n


# ----------------------------------------------------------------------------- arrays


def mlp(W, x):
    h = np.tanh(W @ x)
    return np.sum(h * h) + 0.5 * np.sum(W * W)


def rosenbrock(x):
    total = 0.0
    for i in range(len(x) - 1):
        total = total + 100.0 * (x[i + 1] - x[i] ** 2) ** 2 + (1.0 - x[i]) ** 2
    return total


def softmax_loss(z):
    m = np.max(z)
    return np.log(np.sum(np.exp(z - m))) + m - z[0]


ARRAY_CASES = [
    (mlp, (np.arange(6.0).reshape(2, 3) / 10, np.array([0.3, -0.2, 0.5])), 0),
    (mlp, (np.arange(6.0).reshape(2, 3) / 10, np.array([0.3, -0.2, 0.5])), 1),
    (rosenbrock, (np.array([0.5, -0.3, 1.2, 0.8]),), 0),
    (softmax_loss, (np.array([0.2, -1.0, 0.7]),), 0),
]
ARRAY_IDS = [f"{f.__name__}-{i}" for i, (f, _, _) in enumerate(ARRAY_CASES)]


@pytest.mark.parametrize("f,args,argnums", ARRAY_CASES, ids=ARRAY_IDS)
def test_hvp_against_differences_of_the_gradient(f, args, argnums):
    rng = np.random.default_rng(0)
    v = rng.standard_normal(np.shape(args[argnums]))
    hv = cpsad.hvp(f, argnums)(*args, v)
    g = cpsad.grad(f, argnums)
    plus, minus = list(args), list(args)
    plus[argnums] = args[argnums] + EPS * v
    minus[argnums] = args[argnums] - EPS * v
    fd = (g(*plus) - g(*minus)) / (2 * EPS)
    np.testing.assert_allclose(hv, fd, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("f,args,argnums", ARRAY_CASES, ids=ARRAY_IDS)
def test_hessian_is_symmetric_and_made_of_hvps(f, args, argnums):
    H = cpsad.hessian(f, argnums)(*args)
    x = args[argnums]
    assert H.shape == x.shape + x.shape
    flat = H.reshape(x.size, x.size)
    np.testing.assert_allclose(flat, flat.T, rtol=1e-9, atol=1e-10)
    e = np.zeros(x.size)
    e[1] = 1.0
    column = cpsad.hvp(f, argnums)(*args, e.reshape(x.shape))
    np.testing.assert_allclose(flat[:, 1], column.ravel(), rtol=1e-12, atol=1e-12)


def test_hessian_of_rosenbrock_is_the_known_matrix():
    x = np.array([0.5, -0.3, 1.2])
    H = cpsad.hessian(rosenbrock)(x)
    expected = np.zeros((3, 3))
    for i in range(2):
        expected[i, i] += 1200 * x[i] ** 2 - 400 * x[i + 1] + 2
        expected[i, i + 1] += -400 * x[i]
        expected[i + 1, i] += -400 * x[i]
        expected[i + 1, i + 1] += 200
    np.testing.assert_allclose(H, expected, rtol=1e-12)


def test_hessian_of_an_array_function_element():
    def f(x):
        return np.sum(np.sin(x) * x[0])

    x = np.array([0.4, 1.1, -0.3])
    H = cpsad.hessian(f)(x)
    assert H[0, 0] == pytest.approx(-math.sin(0.4) * 0.4 + 2 * math.cos(0.4), rel=1e-12)
    assert H[0, 1] == pytest.approx(math.cos(1.1), rel=1e-12)
    assert H[1, 1] == pytest.approx(-math.sin(1.1) * 0.4, rel=1e-12)


# ----------------------------------------------------------------------------- jacobians


def vector_field(x):
    return np.array([x[0] * x[1], np.sin(x[2]), x[0] ** 2 + x[2]])


def wide(x):
    return np.array([np.sum(x * x), np.prod(x)])


@pytest.mark.parametrize("f,x", [(vector_field, [0.3, -1.2, 0.7]), (wide, [0.5, 1.5, -2.0, 0.3])])
def test_jacobian_forward_and_reverse_agree_with_differences(f, x):
    x = np.array(x)
    forward = cpsad.jacobian(f, mode="forward")(x)
    reverse = cpsad.jacobian(f, mode="reverse")(x)
    assert forward.shape == f(x).shape + x.shape
    np.testing.assert_allclose(forward, reverse, rtol=1e-12, atol=1e-14)
    fd = np.stack([(f(x + EPS * e) - f(x - EPS * e)) / (2 * EPS) for e in np.eye(x.size)], axis=-1)
    np.testing.assert_allclose(cpsad.jacobian(f)(x), fd, rtol=1e-6, atol=1e-8)


def test_jacobian_of_pytrees_has_their_structure():
    def f(p):
        return {"u": p["a"] * p["b"][0], "v": np.sum(p["a"])}

    p = {"a": np.array([1.0, 2.0]), "b": [3.0]}
    J = cpsad.jacobian(f)(p)
    np.testing.assert_allclose(J["u"]["a"], np.diag([3.0, 3.0]))
    np.testing.assert_allclose(J["u"]["b"][0], [1.0, 2.0])
    np.testing.assert_allclose(J["v"]["a"], [1.0, 1.0])
    assert J["v"]["b"][0] == 0.0


# ----------------------------------------------------------------------------- nesting


def test_perturbations_are_not_confused():
    """d/dx (x * d/dy (x + y)) = d/dx (x * 1) = 1: the classic test of nested derivatives."""

    def outer(x):
        return x * cpsad.grad(lambda y: x + y)(x)

    for x in (0.3, 1.0, -2.0):
        assert cpsad.grad(outer)(x) == pytest.approx(1.0, abs=1e-12)
        assert cpsad.jvp(outer, (x,), (1.0,))[1] == pytest.approx(1.0, abs=1e-12)


def test_nested_derivative_of_a_closure_follows_the_captured_variable():
    def outer(x):
        h = lambda y: x * y * y  # noqa: E731
        g = cpsad.grad(h)  # 2 x y
        return x * g(x)  # 2 x^3

    for x in (0.5, 1.5):
        assert cpsad.grad(outer)(x) == pytest.approx(6 * x * x, rel=1e-12)


def test_nested_derivative_in_a_loop_and_of_a_def():
    def outer(x, n):
        def energy(y):
            return np.sin(x * y)

        total = 0.0
        for i in range(n):
            total = total + cpsad.grad(energy)(x + i)  # x cos(x (x + i))
        return total

    x, n = 0.4, 3
    expected = sum(
        math.cos(x * (x + i)) - x * math.sin(x * (x + i)) * (2 * x + i) for i in range(n)
    )
    assert cpsad.grad(outer)(x, n) == pytest.approx(expected, rel=1e-12)


def module_level(y, c):
    return c * y * y + math.sin(y)


def test_derivative_of_a_module_function_inside_a_derivative():
    def outer(x):
        g = cpsad.grad(module_level)
        return x * g(x, 2.0)  # x (4x + cos x)

    x = 0.7
    expected = 8 * x + math.cos(x) - x * math.sin(x)
    assert cpsad.grad(outer)(x) == pytest.approx(expected, rel=1e-12)
    assert cpsad.jvp(outer, (x,), (1.0,))[1] == pytest.approx(expected, rel=1e-12)


def test_show_prints_second_order_code():
    def f(x):
        return x * math.sin(x)

    text = cpsad.show(cpsad.grad(f))
    assert "def f_bp_bp(" in text


def test_value_and_grad_is_not_differentiated_again():
    with pytest.raises(TypeError, match="value_and_grad"):
        cpsad.grad(cpsad.value_and_grad(math.sin))(0.3)


# ------------------------------------------------------------------- jacobian(jacobian(f))


def _vector_field(x):
    return np.sin(x) * np.sum(x**2)


def _two_arguments(x, y):
    return np.tanh(x * y[0]) + y[1] ** 2 * x


def _scalar_through_a_helper(x):
    return _vector_field(x).sum()


def _numerical_jacobian(h, args, i, eps=1e-5):
    """d h(*args) / d args[i] by central differences, the derivative's axes last."""
    x = args[i]
    cols = []
    for j in range(x.size):
        e = np.zeros(x.size)
        e[j] = eps
        up, down = list(args), list(args)
        up[i], down[i] = x + e.reshape(x.shape), x - e.reshape(x.shape)
        cols.append((np.asarray(h(*up)) - np.asarray(h(*down))) / (2 * eps))
    return np.stack(cols, axis=-1).reshape(np.shape(h(*args)) + x.shape)


@pytest.mark.parametrize(
    "f, args, inner, outer",
    [
        (_vector_field, (np.array([0.3, 0.5, -0.2]),), 0, 0),
        (_two_arguments, (np.array([0.3, 0.5, -0.2]), np.array([0.7, -0.4])), 1, 0),
        (_two_arguments, (np.array([0.3, 0.5, -0.2]), np.array([0.7, -0.4])), 0, 1),
        (_scalar_through_a_helper, (np.array([0.3, 0.5, -0.2]),), 0, 0),
        (lambda x: _vector_field(x)[1:], (np.array([0.3, 0.5, -0.2]),), 0, 0),
    ],
)
def test_jacobian_of_a_jacobian_is_the_second_derivative(f, args, inner, outer):
    """jacobian(jacobian(f)) -- refused before: the inner jacobian loops in Python -- is JAX's
    layout, result + inner argument + outer argument, against differences of the inner one."""
    inner_jacobian = cpsad.jacobian(f, inner)
    got = cpsad.jacobian(inner_jacobian, outer)(*args)
    want = _numerical_jacobian(inner_jacobian, args, outer)
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-8)


def test_jacobian_of_a_jacobian_agrees_with_autograd_and_hessian():
    autograd = pytest.importorskip("autograd")
    anp = pytest.importorskip("autograd.numpy")
    x = np.array([0.3, 0.5, -0.2])
    want = autograd.jacobian(autograd.jacobian(lambda x: anp.sin(x) * anp.sum(x**2)))(x)
    np.testing.assert_allclose(cpsad.jacobian(cpsad.jacobian(_vector_field))(x), want, rtol=1e-12)
    h = cpsad.jacobian(cpsad.jacobian(_scalar_through_a_helper))(x)
    np.testing.assert_allclose(h, cpsad.hessian(_scalar_through_a_helper)(x), rtol=1e-12)


def test_jacobian_of_a_jacobian_refuses_what_it_does_not_do():
    x = np.array([0.3, 0.5])
    with pytest.raises(TypeError, match="pytree"):
        cpsad.jacobian(cpsad.jacobian(lambda x: (x, x)))(x)
    with pytest.raises(TypeError, match="int argnums"):
        cpsad.jacobian(cpsad.jacobian(_two_arguments, (0, 1)))(x, x)
