"""scipy.special's rules at second order (reverse over reverse, and Hessians) against central
differences of the gradient; the first-order checks are cases of tests/test_rules.py
(tests/corpus_scipy.py)."""

import numpy as np
import pytest

import cpsad

special = pytest.importorskip("scipy.special")


def f_gammaln(t):
    return special.gammaln(t) * special.digamma(t) + special.gamma(t)


def f_erf(t):
    return special.erf(t) * special.erfc(0.5 * t) + special.erfinv(0.3 * t)


def f_logistic(t):
    return special.expit(t) * special.logit(0.2 + 0.1 * t) + special.log_ndtr(t)


def f_two(t):
    return special.betaln(t, 2.0 * t) + special.xlogy(t, t + 1.0) + special.xlog1py(t, t)


def f_reductions(t):
    a = np.array([0.3, -1.2, 0.8]) * t
    return special.logsumexp(a, b=np.array([1.0, 2.0, 0.5])) + np.sum(
        special.softmax(a) * special.log_softmax(a * 0.5)
    )


def f_polygamma(t):
    return special.polygamma(1, t) + special.polygamma(2, t + 1.0) * t


@pytest.mark.parametrize("f", [f_gammaln, f_erf, f_logistic, f_two, f_reductions, f_polygamma])
@pytest.mark.parametrize("t", [0.9, 1.7])
def test_second_derivative_against_differences_of_the_gradient(f, t):
    g = cpsad.grad(f)
    first = (f(t + 1e-6) - f(t - 1e-6)) / 2e-6
    assert g(t) == pytest.approx(first, rel=1e-6, abs=1e-8)
    fd = (g(t + 1e-5) - g(t - 1e-5)) / 2e-5
    assert cpsad.grad(g)(t) == pytest.approx(fd, rel=1e-5, abs=1e-7)
    assert cpsad.hessian(f)(t) == pytest.approx(fd, rel=1e-5, abs=1e-7)


def test_a_hessian_of_a_softmax_cross_entropy():
    target = np.array([0.0, 1.0, 0.0])

    def loss(z):
        return -np.sum(target * special.log_softmax(z))

    z = np.array([0.4, -0.3, 1.1])
    p = special.softmax(z)
    expected = np.diag(p) - np.outer(p, p)  # the softmax's Jacobian, analytically
    np.testing.assert_allclose(cpsad.hessian(loss)(z), expected, rtol=1e-10, atol=1e-12)


def test_return_sign_is_refused_not_wrong():
    with pytest.raises(cpsad.TransformError):
        cpsad.grad(lambda a: special.logsumexp(a, return_sign=True)[0])(np.array([0.1, 0.2]))
