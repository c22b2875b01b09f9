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


# functions that pass functions around: their backpropagators call through values (call_bp), which
# a second transformation refuses with a TransformError (see test_function_values_are_refused)
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
def test_function_values_are_refused_at_second_order(f, args, argnums):
    """A first-order backpropagator that calls through a value (call_bp) is not transformed
    again: a clear error, never a wrong number."""
    with pytest.raises(cpsad.TransformError, match="through a value"):
        cpsad.grad(cpsad.grad(f, argnums), argnums)(*args)


def test_third_derivatives_are_refused():
    """Second-order code calls the first-order continuation through the dispatch."""

    def cube(x):
        return x * x * x

    with pytest.raises(cpsad.TransformError, match="order three or more"):
        cpsad.grad(cpsad.grad(cpsad.grad(cube)))(0.3)


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
