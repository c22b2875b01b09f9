"""The backward pass raises nothing the forward pass did not: at the points where a derivative is
infinite, zero or undefined -- 0 for a root or a power, an empty array for a mean, a power that
overflows, a sum of squares that underflows -- cpsad gives numpy's answers (inf or nan, with
numpy's warnings) or the limit where the derivative is defined, in reverse mode, forward mode and
second order, never a ``ZeroDivisionError`` or ``OverflowError`` of Python's float arithmetic.

The reference of a Python float's derivative is the same program on a 0-d array, whose
arithmetic is numpy's (``x ** 0`` aside: 0, the derivative of the constant 1, not numpy's NaN).
"""

import math
import warnings

import numpy as np
import pytest

import cpsad


def mean(x):
    return np.mean(x)


def mean_method(x):
    return x.mean() * 2.0


def average(x):
    return np.sum(x) / len(x)


def average_as_float(x):
    return float(np.sum(x) / len(x))


def over(x, n):
    return x / n


def root_by_pow(x):
    return pow(x, 0.5)


def constant_by_pow(x):
    return pow(x, 0.0)


def reciprocal(x):
    return x**-1.0


def math_reciprocal(x):
    return math.pow(x, -1.0)


def root(x):
    return x**0.5


def math_root(x):
    return math.sqrt(x)


def math_angle(y, x):
    return math.atan2(y, x)


def constant_power(x):
    return np.sum(x**0.0)


def powers(x, y):
    return np.sum(x**y)


def np_constant_power(x):
    return np.sum(np.power(x, 0.0))


def quiet(fn, *args):
    """``fn(*args)``, numpy's warnings (divide by zero, invalid value) silenced."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return fn(*args)


def hvp(f, x):
    """The second derivative of ``f`` at ``x`` along 1, by forward mode over reverse."""
    return quiet(cpsad.jvp, cpsad.grad(f), (x,), (np.ones_like(x),))[1]


# --------------------------------------------------------------------------- means of nothing


@pytest.mark.parametrize(
    "f, shape",
    [(f, s) for f in (mean, mean_method) for s in ((0,), (0, 3), (3, 0))]
    + [(f, s) for f in (average, average_as_float) for s in ((0,), (0, 3))],
)
def test_the_mean_of_an_empty_array(f, shape):
    """np.mean of an empty array is NaN (numpy warns); its gradient is an empty array, not the
    ZeroDivisionError of ``1.0 / 0`` (the count of its elements), also through ``float()``."""
    x = np.zeros(shape)
    assert np.isnan(quiet(f, x))
    g = quiet(cpsad.grad(f), x)
    assert g.shape == shape
    _, t = quiet(cpsad.jvp, f, (x,), (np.ones(shape),))
    assert np.isnan(t)
    assert hvp(f, x).shape == shape


def test_a_numpy_float_over_zero():
    """``x / n`` of a numpy float by 0 is inf with numpy's warning; so is its derivative, as
    numpy computes it (the seed of a numpy float result is a numpy float)."""
    with pytest.warns(RuntimeWarning, match="divide by zero"):
        assert cpsad.grad(over)(np.float64(1.0), 0) == np.inf
    assert cpsad.grad(over)(np.float64(1.0), 4) == 0.25
    assert cpsad.grad(over, 1)(np.float64(2.0), 4) == -0.125


# --------------------------------------------------------------------------- powers at 0


def test_pow_builtin_at_zero():
    """``pow(x, 0.5)`` at 0: an infinite slope (numpy's, as np.sqrt's); ``pow(x, 0.0)`` is the
    constant 1, of slope 0 -- Python's ``0.0 ** -0.5`` and ``0.0 ** -1.0`` raise."""
    assert quiet(cpsad.grad(root_by_pow), 0.0) == np.inf
    assert quiet(cpsad.jvp, root_by_pow, (0.0,), (1.0,)) == (0.0, np.inf)
    assert cpsad.grad(constant_by_pow)(0.0) == 0.0
    assert cpsad.jvp(constant_by_pow, (0.0,), (1.0,))[1] == 0.0
    assert cpsad.grad(cpsad.grad(root_by_pow))(0.25) == pytest.approx(-2.0)


@pytest.mark.parametrize("f", [constant_power, np_constant_power])
@pytest.mark.parametrize(
    "x", [np.zeros(3), np.array(0.0), np.float64(0.0), 0.0], ids=["array", "0-d", "f64", "float"]
)
def test_x_to_the_zero_is_a_constant(f, x):
    """d/dx x**0 = 0 everywhere, also at 0, where numpy's ``0 * 0**-1`` is NaN: for arrays,
    0-d arrays, numpy floats and floats alike, in both modes and to second order."""
    g = quiet(cpsad.grad(f), x)
    assert np.all(g == 0)
    _, t = quiet(cpsad.jvp, f, (x,), (np.ones_like(x),))
    assert np.all(t == 0)
    assert np.all(hvp(f, x) == 0)


def test_powers_with_zero_exponents_in_an_array():
    x, y = np.array([0.0, 0.0, 2.0]), np.array([0.0, 1.0, 3.0])
    gx, gy = quiet(cpsad.grad(powers, (0, 1)), x, y)
    np.testing.assert_allclose(gx, [0.0, 1.0, 12.0])
    np.testing.assert_allclose(gy, [0.0, 0.0, 8.0 * np.log(2.0)])


# --------------------------------------------------------------------------- overflow, underflow


@pytest.mark.parametrize("f", [reciprocal, math_reciprocal])
def test_a_slope_that_overflows(f):
    """1/x at 1e-300 is 1e300; its slope -1e600 overflows: -inf, as for a 0-d array, where
    Python's ``1e-300 ** -2.0`` raises OverflowError."""
    x = 1e-300
    ref = quiet(cpsad.grad(reciprocal), np.array(x))
    assert ref == -np.inf
    assert quiet(cpsad.grad(f), x) == -np.inf
    assert quiet(cpsad.jvp, f, (x,), (1.0,))[1] == -np.inf
    # second order: no exception; NaN, as of the 0-d array (the seed's zero adjoint times the
    # infinite slope)
    ref2 = quiet(cpsad.grad(cpsad.grad(reciprocal)), np.array(x))
    np.testing.assert_equal(quiet(cpsad.grad(cpsad.grad(f)), x), ref2)
    assert cpsad.grad(f)(0.5) == pytest.approx(-4.0)  # and an ordinary point is as before
    assert cpsad.grad(cpsad.grad(f))(0.5) == pytest.approx(16.0)


@pytest.mark.parametrize("f", [root, math_root])
def test_a_second_derivative_that_overflows(f):
    """d2/dx2 sqrt(x) = -x^-1.5 / 4: -inf at 1e-300 (Python's power overflows)."""
    assert quiet(cpsad.grad(cpsad.grad(f)), 1e-300) == -np.inf
    assert quiet(cpsad.grad(cpsad.grad(f)), 0.25) == pytest.approx(-2.0)


def test_atan2_near_the_origin():
    """``x^2 + y^2`` underflows to 0 at (1e-300, 1e-300), where atan2's derivatives are
    +-5e299, finite: computed with hypot, they are; at (0, 0) NaN, as np.arctan2's."""
    gy, gx = cpsad.grad(math_angle, (0, 1))(1e-300, 1e-300)
    assert gy == pytest.approx(5e299) and gx == pytest.approx(-5e299)
    assert cpsad.jvp(math_angle, (1e-300, 1e-300), (1.0, 0.0))[1] == pytest.approx(5e299)
    assert cpsad.grad(math_angle, 1)(1e-300, 0.0) == pytest.approx(-1e300)
    assert all(np.isnan(quiet(cpsad.grad(math_angle, (0, 1)), 0.0, 0.0)))
    gy, gx = cpsad.grad(math_angle, (0, 1))(0.3, -0.7)
    assert (gy, gx) == pytest.approx((-0.7 / 0.58, -0.3 / 0.58))


# --------------------------------------------------------------------------- singular matrices


def det(a):
    return np.linalg.det(a)


def logdet(a):
    return np.linalg.slogdet(a)[1]


def central_difference(f, a, eps=1e-6):
    out = np.zeros_like(a)
    for i in np.ndindex(a.shape):
        e = np.zeros_like(a)
        e[i] = eps
        out[i] = (f(a + e) - f(a - e)) / (2 * eps)
    return out


RANK_ONE = np.array([[1.0, 2.0], [2.0, 4.0]])
RANK_TWO = np.outer([1.0, 2.0, 3.0], [0.5, -1.0, 2.0]) + np.outer([0.0, 1.0, -1.0], [1.0, 1.0, 0.0])


@pytest.mark.parametrize("a", [RANK_ONE, RANK_TWO, np.zeros((3, 3))], ids=["2x2", "3x3", "zero"])
def test_det_of_a_singular_matrix(a):
    """det is 0 and inv raises, but det's derivative, the matrix of cofactors, is defined (and
    not 0 for rank n - 1): the finite differences', in both modes."""
    assert np.linalg.det(a) == 0.0
    expected = central_difference(det, a)
    np.testing.assert_allclose(cpsad.grad(det)(a), expected, atol=1e-8)
    v = np.arange(a.size, dtype=float).reshape(a.shape)
    _, t = cpsad.jvp(det, (a,), (v,))
    assert t == pytest.approx(np.sum(expected * v), rel=1e-6, abs=1e-8)
    stack = np.stack([a, a + np.eye(len(a))])  # one singular matrix in a stack
    g = cpsad.grad(lambda s: np.sum(np.linalg.det(s)))(stack)
    np.testing.assert_allclose(g[0], expected, atol=1e-8)
    np.testing.assert_allclose(g[1], central_difference(det, stack[1]), atol=1e-6)


def test_logdet_of_a_singular_matrix_is_infinite_not_an_error():
    """log|det| is -inf there; its gradient ``a^-T`` numpy's infinities (adj(a) / 0)."""
    g = quiet(cpsad.grad(logdet), RANK_ONE)
    assert np.all(np.isinf(g))
    np.testing.assert_array_equal(np.sign(g), [[1, -1], [-1, 1]])
    _, t = quiet(cpsad.jvp, logdet, (RANK_ONE,), (np.eye(2),))
    assert not np.isfinite(t)
