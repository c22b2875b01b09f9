"""scipy.linalg's rules (cpsad/rules/scipy_linalg.py): second derivatives against differences of
the gradient, autograd's numpy rules as the oracle of what autograd has only in numpy, a Gaussian
process's marginal likelihood, closed forms, and what the rules refuse. Their first derivatives
are cases of tests/test_rules.py (tests/corpus_scipy_linalg.py)."""

from __future__ import annotations

import numpy as np
import pytest

import cpsad

linalg = pytest.importorskip("scipy.linalg")

R = np.random.default_rng(17)


def u(*shape):
    return R.uniform(-1.0, 1.0, shape)


def spd(n):
    a = u(n, n)
    return a @ a.T + n * np.eye(n)


def well(n):
    return u(n, n) + 3.0 * np.eye(n)


def near_identity(n, scale=0.3):
    return np.eye(n) + scale * u(n, n)


def noisy(a, lower):
    """Noise in the triangle scipy does not read: the rules' adjoints are on the other one."""
    noise = u(*np.shape(a))
    return a + (np.triu(noise, 1) if lower else np.tril(noise, -1))


# --------------------------------------------------------------------------- second order


def solve_triangular_loss(a, b):
    return np.sum(linalg.solve_triangular(a, b, lower=True) ** 3) + np.sum(
        linalg.solve_triangular(a, b, trans="T", unit_diagonal=True) ** 2
    )


def cholesky_loss(a):
    return np.sum(linalg.cholesky(a) ** 3) + np.sum(linalg.cholesky(a, lower=True)[:, 0] ** 4)


def cho_loss(a, b):
    c, lower = linalg.cho_factor(a, lower=True)
    x = linalg.cho_solve((c, lower), b)
    return np.sum(x**3) + np.sum(np.log(np.diag(c))) + np.sum(c**2)


def cho_upper_loss(a, b):
    return np.sum(linalg.cho_solve(linalg.cho_factor(a), b) ** 2)


def sqrtm_loss(a):
    return np.sum(linalg.sqrtm(a) ** 3)


def sylvester_loss(a, b, q):
    return np.sum(linalg.solve_sylvester(a, b, q) ** 3)


def expm_loss(a):
    return np.sum(linalg.expm(a) ** 3)


def expm_frechet_loss(a, e):
    x, frechet = linalg.expm_frechet(a, e)
    return np.sum(frechet**3) + np.sum(x**2)


def frechet_only_loss(a, e):
    return np.sum(np.sin(linalg.expm_frechet(a, e, compute_expm=False)))


def inv_loss(a):
    return np.sum(linalg.inv(a) ** 3) + np.sum(linalg.inv(a, assume_a="pos", lower=True) ** 2)


def det_loss(a):
    return linalg.det(a) ** 3


def solve_loss(a, b):
    return np.sum(linalg.solve(a, b, transposed=True) ** 3) + np.sum(
        linalg.solve(a, b, assume_a="sym") ** 2
    )


S3 = spd(3)
SECOND = [
    (solve_triangular_loss, (well(3), u(3, 2))),
    (cholesky_loss, (noisy(spd(3), False),)),
    (cho_loss, (noisy(spd(3), True), u(3))),
    (cho_upper_loss, (noisy(spd(4), False), u(4, 2))),
    (sqrtm_loss, (near_identity(3),)),
    (sylvester_loss, (well(3), well(3).T, u(3, 3))),
    (expm_loss, (u(3, 3) * 0.7,)),
    (expm_frechet_loss, (u(3, 3) * 0.7, u(3, 3))),
    (frechet_only_loss, (u(3, 3) * 0.7, u(3, 3))),
    (inv_loss, (noisy(S3, True),)),
    (det_loss, (well(3),)),
    (solve_loss, (S3 + 0.3 * u(3, 3), u(3))),
]


@pytest.mark.parametrize(
    "f, args", SECOND, ids=[f"{f.__name__}-{i}" for i, (f, _) in enumerate(SECOND)]
)
def test_second_derivatives_against_differences_of_the_gradient(f, args):
    """Forward over reverse and reverse over reverse, in every argument, against central
    differences of the gradient along a random direction (not symmetric: where scipy reads one
    triangle, the rules' adjoints are on it, and every direction is one of scipy's function)."""
    vs = tuple(u(*np.shape(x)) for x in args)
    eps = 1e-5
    for i in range(len(args)):  # (one argnum at a time: see tests/test_linalg.py)
        grad = cpsad.grad(f, i)
        w = u(*np.shape(args[i]))
        plus = grad(*[x + eps * v for x, v in zip(args, vs)])
        minus = grad(*[x - eps * v for x, v in zip(args, vs)])
        fd = (plus - minus) / (2 * eps)  # the Hessian's rows of argument i times v
        _, tangent = cpsad.jvp(grad, args, vs)
        np.testing.assert_allclose(tangent, fd, rtol=1e-5, atol=1e-6)
        _, pullback = cpsad.vjp(grad, *args)  # <H.T w, v> == <w, H v>
        hw = pullback(w)
        hw = hw if isinstance(hw, tuple) else (hw,)
        np.testing.assert_allclose(
            sum(np.sum(h * v) for h, v in zip(hw, vs)), np.sum(w * fd), rtol=1e-5, atol=1e-6
        )


def test_hessian_of_a_scalar_through_sqrtm_and_expm():
    a, b = near_identity(3), u(3, 3)

    def f(s):
        return np.sum(linalg.sqrtm(a + s * b) * linalg.expm(s * b))

    g = cpsad.grad(f)
    eps = 1e-5
    assert g(0.2) == pytest.approx((f(0.2 + eps) - f(0.2 - eps)) / (2 * eps), rel=1e-6)
    want = (g(0.2 + eps) - g(0.2 - eps)) / (2 * eps)
    assert cpsad.grad(cpsad.grad(f))(0.2) == pytest.approx(want, rel=1e-5)
    assert cpsad.hessian(f)(0.2) == pytest.approx(want, rel=1e-5)


# --------------------------------------------------------------------------- a Gaussian process

X = np.sort(R.uniform(0.0, 5.0, 12))
Y = np.sin(X) + 0.1 * R.standard_normal(12)


def kernel(log_length, log_noise):
    d = X[:, None] - X[None, :]
    return np.exp(-0.5 * d**2 / np.exp(2.0 * log_length)) + np.exp(2.0 * log_noise) * np.eye(len(X))


def gp_nll(log_length, log_noise):
    """The negative log marginal likelihood of a Gaussian process: ``y^T K^-1 y / 2 + log det K
    / 2 + n log(2 pi) / 2``, with the Cholesky factor's solve and its log-determinant."""
    c, lower = linalg.cho_factor(kernel(log_length, log_noise), lower=True)
    alpha = linalg.cho_solve((c, lower), Y)
    return 0.5 * np.dot(Y, alpha) + np.sum(np.log(np.diag(c))) + 0.5 * len(X) * np.log(2.0 * np.pi)


def gp_nll_triangular(log_length, log_noise):
    """The same with ``cholesky`` and two triangular solves."""
    L = linalg.cholesky(kernel(log_length, log_noise), lower=True)
    z = linalg.solve_triangular(L, Y, lower=True)
    return 0.5 * np.sum(z**2) + np.sum(np.log(np.diag(L))) + 0.5 * len(X) * np.log(2.0 * np.pi)


@pytest.mark.parametrize("nll", [gp_nll, gp_nll_triangular])
@pytest.mark.parametrize("theta", [(0.1, -1.5), (-0.4, -1.0)])
def test_gaussian_process_marginal_likelihood(nll, theta):
    """The gradient in the length-scale and the noise against central differences and against
    the textbook formula ``tr((K^-1 - alpha alpha^T) dK) / 2`` (numpy, written out here); the
    second derivative in the length-scale against differences of the gradient."""
    ll, ln = theta
    value, grads = cpsad.value_and_grad(nll, argnums=(0, 1))(ll, ln)
    assert value == pytest.approx(nll(ll, ln), rel=1e-12)
    eps = 1e-6
    fd = [
        (nll(ll + eps, ln) - nll(ll - eps, ln)) / (2 * eps),
        (nll(ll, ln + eps) - nll(ll, ln - eps)) / (2 * eps),
    ]
    np.testing.assert_allclose(grads, fd, rtol=1e-6, atol=1e-8)
    K = kernel(ll, ln)
    alpha = np.linalg.solve(K, Y)
    d2 = (X[:, None] - X[None, :]) ** 2
    dK_length = np.exp(-0.5 * d2 / np.exp(2 * ll)) * d2 / np.exp(2 * ll)
    dK_noise = 2.0 * np.exp(2.0 * ln) * np.eye(len(X))
    inner = np.linalg.inv(K) - np.outer(alpha, alpha)
    textbook = [0.5 * np.sum(inner * dK_length), 0.5 * np.sum(inner * dK_noise)]
    np.testing.assert_allclose(grads, textbook, rtol=1e-8, atol=1e-10)
    g = cpsad.grad(nll, 0)
    second = (g(ll + 1e-5, ln) - g(ll - 1e-5, ln)) / 2e-5
    assert cpsad.grad(g)(ll, ln) == pytest.approx(second, rel=1e-5, abs=1e-7)


def test_gaussian_process_fit_descends():
    """A few steps of gradient descent on the length-scale and the noise lower the loss."""
    theta = np.array([1.0, 0.0])
    grad = cpsad.grad(lambda t: gp_nll(t[0], t[1]))
    start = gp_nll(*theta)
    for _ in range(25):
        theta = theta - 0.05 * grad(theta)
    assert gp_nll(*theta) < start - 1.0


# --------------------------------------------------------------------------- autograd's numpy


try:
    import autograd
    import autograd.numpy as anp
except ImportError:  # pragma: no cover - autograd is in the test extra
    autograd = anp = None


def symmetric_upper(a, xp):
    return xp.triu(a) + xp.triu(a, 1).T


def symmetric_lower(a, xp):
    return xp.tril(a) + xp.tril(a, -1).T


PAIRS = [
    # scipy's function, the same in numpy (autograd's rules), the arguments
    (
        lambda a: linalg.cholesky(a),
        lambda a: anp.linalg.cholesky(symmetric_upper(a, anp)).T,
        (noisy(spd(4), False),),
    ),
    (
        lambda a: linalg.cholesky(a, lower=True),
        lambda a: anp.linalg.cholesky(symmetric_lower(a, anp)),
        (noisy(spd(4), True),),
    ),
    (
        lambda a, b: linalg.cho_solve(linalg.cho_factor(a), b),
        lambda a, b: anp.linalg.solve(symmetric_upper(a, anp), b),
        (noisy(spd(4), False), u(4, 2)),
    ),
    (
        lambda a: np.diag(linalg.cho_factor(a, lower=True)[0]),
        lambda a: anp.diag(anp.linalg.cholesky(symmetric_lower(a, anp))),
        (noisy(spd(4), True),),
    ),
    (lambda a: linalg.inv(a), lambda a: anp.linalg.inv(a), (well(3),)),
    (
        lambda a: linalg.inv(a, assume_a="pos"),
        lambda a: anp.linalg.inv(symmetric_upper(a, anp)),
        (noisy(spd(3), False),),
    ),
    (
        lambda a: linalg.inv(a, assume_a="lower triangular"),
        lambda a: anp.linalg.inv(anp.tril(a)),
        (well(3),),
    ),
    (lambda a: linalg.det(a), lambda a: anp.linalg.det(a), (well(3),)),
    (lambda a, b: linalg.solve(a, b), lambda a, b: anp.linalg.solve(a, b), (well(3), u(3))),
    (
        lambda a, b: linalg.solve(a, b, transposed=True),
        lambda a, b: anp.linalg.solve(a.T, b),
        (well(3), u(3, 2)),
    ),
    (
        lambda a, b: linalg.solve(a, b, assume_a="sym", lower=True),
        lambda a, b: anp.linalg.solve(symmetric_lower(a, anp), b),
        (noisy(spd(3), True), u(3)),
    ),
    (
        lambda a, b: linalg.solve(a, b, assume_a="diagonal"),
        lambda a, b: b / anp.diag(a),
        (well(3), u(3)),
    ),
]


@pytest.mark.parametrize("ours, theirs, args", PAIRS, ids=[str(i) for i in range(len(PAIRS))])
def test_against_autograds_numpy_rules(ours, theirs, args):
    """What autograd has only in numpy: the same function written with numpy (of the matrix
    scipy reads), differentiated by autograd, with the same random cotangent."""
    if autograd is None:
        pytest.skip("autograd is not installed")
    value, pullback = cpsad.vjp(ours, *args)
    np.testing.assert_allclose(value, theirs(*args), rtol=1e-10, atol=1e-12)
    c = R.standard_normal(np.shape(value))
    got = pullback(c)
    vjp, _ = autograd.make_vjp(theirs, tuple(range(len(args))))(*args)
    want = vjp(c)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-8, atol=1e-10)


# --------------------------------------------------------------------------- closed forms


def test_closed_forms():
    """Derivatives known on paper: of ``expm`` of a rotation's generator, of ``sqrtm`` and
    ``cholesky`` of a diagonal matrix, and Jacobi's formula of ``det``."""

    def rotation(theta):
        m = linalg.expm(theta * np.array([[0.0, -1.0], [1.0, 0.0]]))
        return m[0, 0] + 2.0 * m[1, 0]  # cos + 2 sin

    assert cpsad.grad(rotation)(0.7) == pytest.approx(-np.sin(0.7) + 2 * np.cos(0.7), rel=1e-10)
    d = np.array([1.5, 2.0, 3.5])
    g = cpsad.grad(lambda a: np.sum(linalg.sqrtm(a) * np.arange(1.0, 10.0).reshape(3, 3)))
    np.testing.assert_allclose(np.diag(g(np.diag(d))), np.array([1.0, 5.0, 9.0]) / (2 * np.sqrt(d)))
    g = cpsad.grad(lambda a: np.sum(np.diag(linalg.cholesky(a))))
    np.testing.assert_allclose(g(np.diag(d)), np.diag(1 / (2 * np.sqrt(d))), rtol=1e-12)
    a = well(3)
    np.testing.assert_allclose(
        cpsad.grad(lambda m: linalg.det(m))(a), np.linalg.det(a) * np.linalg.inv(a).T, rtol=1e-10
    )


def test_cho_factor_pair_reaches_the_matrix_through_both_calls():
    """``cho_solve(cho_factor(a), b)`` solves with the symmetric matrix of ``a``'s upper triangle:
    its gradient in ``a`` is on that triangle, ``-to_triangle(x y^T)`` for ``y = A^-1 c``."""
    a, b = noisy(spd(4), False), u(4)
    A = symmetric_upper(a, np)
    x = np.linalg.solve(A, b)
    c = u(4)
    _, pullback = cpsad.vjp(lambda m, v: linalg.cho_solve(linalg.cho_factor(m), v), a, b)
    ga, gb = pullback(c)
    y = np.linalg.solve(A, c)
    full = -np.outer(y, x)
    np.testing.assert_allclose(ga, np.triu(full + full.T, 1) + np.diag(np.diag(full)), rtol=1e-10)
    np.testing.assert_allclose(gb, y, rtol=1e-10)


# --------------------------------------------------------------------------- refused


SQRT_NEGATIVE = np.array([[-1.0, 0.2], [0.1, 2.0]])  # a complex square root
COMPLEX = "real values only"
OVERWRITE_A = "overwrite_a=True"
OVERWRITE_B = "overwrite_b=True"


@pytest.mark.parametrize(
    "call, x, message",
    [
        (lambda a: linalg.cholesky(a, overwrite_a=True), spd(3), OVERWRITE_A),
        (lambda a: linalg.cho_factor(a, overwrite_a=True)[0], spd(3), OVERWRITE_A),
        (
            lambda a: linalg.cho_solve(linalg.cho_factor(a), np.ones(3), overwrite_b=True),
            spd(3),
            OVERWRITE_B,
        ),
        (lambda b: linalg.solve_triangular(well(3), b, overwrite_b=True), u(3), OVERWRITE_B),
        (lambda a: linalg.inv(a, overwrite_a=True), well(3), OVERWRITE_A),
        (lambda a: linalg.det(a, overwrite_a=True), well(3), OVERWRITE_A),
        (lambda a: linalg.solve(a, np.ones(3), overwrite_a=True), well(3), OVERWRITE_A),
        (lambda b: linalg.solve(well(3), b, overwrite_b=True), u(3), OVERWRITE_B),
        (lambda a: linalg.sqrtm(a, disp=False)[0], near_identity(3), "disp=False"),
        (lambda a: linalg.solve(a, np.ones(3), assume_a="banded"), well(3), "not 'banded'"),
        (lambda b: linalg.solve(well(3), b, assume_a="tridiagonal"), u(3), "not 'tridiagonal'"),
        (lambda a: linalg.inv(a, assume_a="diagonal"), well(3), "assume_a='diagonal'"),
        (lambda a: linalg.sqrtm(a), SQRT_NEGATIVE, COMPLEX),
        (lambda a: linalg.cholesky(a), spd(3) * (1 + 0j), COMPLEX),
        (lambda a: linalg.solve_triangular(a, np.ones(3) * 1j), well(3), COMPLEX),
        (lambda a: linalg.expm(a), u(3, 3) * 1j, COMPLEX),
        (lambda a: linalg.inv(a), well(3) + 0j, COMPLEX),
    ],
)
def test_refused_in_both_modes(call, x, message):
    """Options a rule is not for and complex values: a TypeError that names the option, in
    reverse and in forward mode, never a silently wrong derivative. (The refusal comes with the
    derivative, after the call: scipy may have changed an ``overwrite_*`` array already -- each
    run here gets a copy.)"""
    import warnings

    def total(m):
        return np.sum(np.real(call(m)))

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (sqrtm's disp is deprecated)
        with pytest.raises(TypeError, match=message):
            cpsad.grad(total)(x.copy())
        with pytest.raises(TypeError, match=message):
            cpsad.jvp(call, (x.copy(),), (np.ones_like(x),))


def test_errors_name_scipys_function():
    """A refusal and a rule's label say ``scipy.linalg.sqrtm``, not its private module."""
    from cpsad.rules import core

    assert core.lookup(linalg.sqrtm).name == "scipy.linalg.sqrtm"
    assert core.lookup(linalg.cho_factor).name == "scipy.linalg.cho_factor"
    with pytest.raises(TypeError, match=r"scipy\.linalg\.sqrtm "):
        cpsad.grad(lambda a: np.sum(np.real(linalg.sqrtm(a))))(SQRT_NEGATIVE)
