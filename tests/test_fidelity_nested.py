"""Fidelity of closures, decorators and derivatives taken inside differentiated functions.

Every value is checked against plain Python, every gradient against central finite differences
(of the function, or of the first derivative for a second one) and against autograd where it
runs the program. Nothing here is an expected number copied from cpsad's own output.
"""

import math

import numpy as np
import pytest

import cpsad
from tests.oracles import autograd, autograd_version

EPS = 1e-5


def fd(g, x, eps=EPS):
    return (g(x + eps) - g(x - eps)) / (2 * eps)


def close(a, b, rtol=1e-6, atol=1e-7):
    np.testing.assert_allclose(np.asarray(a, float), np.asarray(b, float), rtol=rtol, atol=atol)


# =========================================================================== closures, 2nd order
#
# Each program has a function defined inside that reads the differentiated variable. The first
# derivative is checked against finite differences of the function, grad(grad(f)) and hvp
# against finite differences of the first derivative and against autograd's grad(grad(f)).


def constant_argument_first(x):
    """A call with a constant argument, then one with x: the first call's continuation carries
    the whole rest of the program (grad(grad(f)) gave 0 for 8, running it forward only)."""

    def g(y):
        return y * y

    return g(2.0) * g(x)


def constant_argument_nested(x):
    def g(y):
        return y * y

    return g(2.0) * g(g(x))


def reads_closure_only(x):
    """g's result is x itself: its adjoint belongs to f and the continuation adds to it too
    (`x_bar = acc(x_bar, k(x))` read x_bar before k ran: 1 for 3)."""

    def g(y):
        return x

    return g(0.5) + g(x + 2.0) * 2.0


def reads_outer_local(x):
    c = (x - 0.5) * (2.0 - x)

    def g(y):
        return c

    return g(c - 2.0) * g(2.0 * c) * g(np.sin(x)) * g(g(c)) * (0.5 - c) * c


def closure_product(x):
    def g(y):
        return x * y * y

    return g(x) * x + x**3


def closure_called_twice(x):
    def g(y):
        return x * y

    return x * g(x) * g(2.0 * x)


def inner_result_unused(x):
    """g(g(x)): g ignores its argument, so the inner call's result reaches nothing (it ran
    forward only, with `call_primal`, which code transformed again cannot differentiate)."""

    def g(y):
        return x

    x = x**2
    return g(0.25 * x) + g(g(x)) * x


def constant_function(x):
    """A local function whose result is a constant, called on x (refused: `g` has no rule)."""

    def g(y):
        return 3.0

    return g(3.0) + g(x) * x


def copy_of_a_constant(x):
    """`x = x` after a use: the first-order code copies a constant adjoint, `x_bar = x_1_bar`
    (grad(grad) emitted `nonlocal x_1_bar_bar` with no binding: a SyntaxError)."""
    c = x * x
    x = x
    return c * 0.5


def nonlocal_accumulate(x):
    total = 0.0

    def add(y):
        nonlocal total
        total = total + x * y

    add(x)
    add(x * x)
    return total * x


def nested_closures(x):
    def g(y):
        def q(z):
            return x * y * z

        return q(y) * y

    return g(x) * x + g(0.5)


def closure_in_loop(x):
    def g(y):
        return np.sin(x * y)

    t = 0.0
    for i in range(3):
        t = t + g(x + i) * i
    return t


SECOND_ORDER = [
    constant_argument_first,
    constant_argument_nested,
    reads_closure_only,
    reads_outer_local,
    closure_product,
    closure_called_twice,
    inner_result_unused,
    constant_function,
    copy_of_a_constant,
    nonlocal_accumulate,
    nested_closures,
    closure_in_loop,
]


@pytest.mark.parametrize("f", SECOND_ORDER, ids=[f.__name__ for f in SECOND_ORDER])
@pytest.mark.parametrize("x", [1.5, -0.7, 2.0])
def test_closure_derivatives_first_and_second_order(f, x):
    g = cpsad.grad(f)
    value, first = cpsad.value_and_grad(f)(x)
    close(value, f(x), rtol=1e-12)
    close(first, fd(f, x), rtol=1e-6)
    second = cpsad.grad(g)(x)
    close(second, fd(g, x), rtol=1e-6, atol=1e-6)
    close(cpsad.hvp(f)(x, 1.0), second, rtol=1e-9, atol=1e-9)
    ag = autograd_version(f)
    close(first, autograd.grad(ag)(x), rtol=1e-9)
    close(second, autograd.grad(autograd.grad(ag))(x), rtol=1e-9, atol=1e-9)


def apply_to(x):
    def g(y):
        return (x - 0.5) * x * y

    def apply(fn, v):
        return fn(v) * v

    return apply(g, 0.5) * apply(g, x)


def test_closure_passed_as_a_value_second_order_is_refused_not_wrong():
    """The first-order code calls g through the runtime dispatch; transformed again that is a
    clear refusal (it ran the dispatch as plain code and transformed cpsad's own continuation
    wrapper, or said "`k` has no derivative rule")."""
    x = 0.7
    close(cpsad.grad(apply_to)(x), fd(apply_to, x))
    close(cpsad.grad(apply_to)(x), autograd.grad(autograd_version(apply_to))(x), rtol=1e-9)
    with pytest.raises(cpsad.TransformError, match="through a value"):
        cpsad.grad(cpsad.grad(apply_to))(x)


def apply_constant(x):
    def g(y):
        return y * 2.0

    x = 1.0

    def apply(fn, v):
        return fn(v) * v

    return apply(g, x)


def test_function_value_of_inactive_code_second_order_is_refused():
    assert cpsad.grad(apply_constant)(0.3) == 0.0
    with pytest.raises(cpsad.TransformError, match="through a value"):
        cpsad.grad(cpsad.grad(apply_constant))(0.3)


def test_second_order_agrees_with_math():
    x = 0.9
    # constant_argument_first: 4 x^2 -> 8
    assert cpsad.grad(cpsad.grad(constant_argument_first))(x) == pytest.approx(8.0, rel=1e-12)
    # closure_product: x^4 + x^3 -> 12 x^2 + 6 x
    expected = 12 * x * x + 6 * x
    assert cpsad.grad(cpsad.grad(closure_product))(x) == pytest.approx(expected, rel=1e-12)
    # reads_closure_only: 3 x -> 3
    assert cpsad.grad(reads_closure_only)(x) == pytest.approx(3.0, rel=1e-12)
    assert math.isclose(cpsad.grad(constant_function)(x), 3.0, rel_tol=1e-12)
