"""np.linalg's decompositions (cpsad/rules/linalg.py): second derivatives against differences of
the gradient, what the rules do at repeated eigenvalues, and what they refuse. Their first
derivatives are cases of tests/test_rules.py (tests/corpus_linalg.py)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import cpsad
from tests.corpus_linalg import apart, sym

R = np.random.default_rng(11)


def u(*shape):
    return R.uniform(-1.0, 1.0, shape)


def eigh_loss(a):
    w, v = np.linalg.eigh(a)
    return np.sum(w**3) + np.sum(v * v * np.arange(1.0, 4.0)) + np.sum(v[..., 0] * v[..., 1]) ** 2


def eigh_upper_loss(a):
    r = np.linalg.eigh(a, UPLO="U")
    return np.sum(r.eigenvalues * r.eigenvectors[..., 1, :] ** 2)


def eigvalsh_loss(a):
    return np.sum(np.sin(np.linalg.eigvalsh(a)))


def eig_loss(a):
    w, v = np.linalg.eig(a)
    return np.sum(np.real(w) ** 3 + np.imag(w) ** 2) + np.sum(np.abs(v[..., 0, :]) ** 3)


def eig_raw_loss(a):
    """The raw eigenvectors, their phase numpy's."""
    w, v = np.linalg.eig(a)
    return np.sum(np.real(v) ** 2 * np.arange(3.0)) + np.sum(np.imag(v * w[..., None, :]))


def eigvals_loss(a):
    return np.sum(np.abs(np.linalg.eigvals(a)) ** 3)


def svd_loss(a):
    u_, s, vh = np.linalg.svd(a, full_matrices=False)
    return (
        np.sum(s**3) + np.sum((u_[..., :, 0:1] * vh[..., 0:1, :]) ** 2) + np.sum(u_[..., 0, :] ** 2)
    )


def svd_square_loss(a):
    u_, s, vh = np.linalg.svd(a)
    return np.sum(u_[:, 1:2] * vh[1:2, :] * a) + np.prod(s)


def svd_values_loss(a):
    return np.sum(np.exp(np.linalg.svd(a, compute_uv=False)))


def qr_loss(a):
    q, r = np.linalg.qr(a)
    return np.sum(q**3) + np.sum(r * r[..., 0:1, :])


def pinv_loss(a):
    return np.sum(np.linalg.pinv(a) ** 3)


def lstsq_loss(a, b):
    x, residuals, rank, s = np.linalg.lstsq(a, b)
    return np.sum(x**3) + np.sum(residuals) ** 2 + np.sum(s**2)


SECOND = [
    (eigh_loss, (sym(3),)),
    (eigh_loss, (sym(3, (2,)),)),
    (eigh_upper_loss, (sym(3) + np.tril(u(3, 3), -1),)),
    (eigvalsh_loss, (sym(4) + np.triu(u(4, 4), 1),)),
    (eig_loss, (u(3, 3),)),
    (eig_loss, (sym(3) + 0.2 * u(3, 3),)),
    (eig_raw_loss, (u(2, 3, 3),)),
    (eigvals_loss, (u(4, 4),)),
    (svd_loss, (apart(4, 3),)),
    (svd_loss, (apart(2, 4, (2,)),)),
    (svd_square_loss, (apart(3, 3),)),
    (svd_values_loss, (apart(3, 5),)),
    (qr_loss, (u(4, 3),)),
    (qr_loss, (u(2, 3, 3) + 2 * np.eye(3),)),
    (pinv_loss, (apart(4, 3),)),
    (pinv_loss, (apart(2, 4),)),
    (lstsq_loss, (apart(5, 3), u(5))),
    (lstsq_loss, (apart(3, 4), u(3, 2))),
]


@pytest.mark.parametrize(
    "f, args", SECOND, ids=[f"{f.__name__}-{i}" for i, (f, _) in enumerate(SECOND)]
)
def test_second_derivatives_against_differences_of_the_gradient(f, args):
    """Reverse over reverse (``hvp``) and forward over reverse, in every argument, against
    central differences of the gradient along a random direction."""
    vs = tuple(u(*np.shape(x)) for x in args)
    eps = 1e-5
    for i in range(len(args)):  # (one argnum at a time: see the note below)
        grad = cpsad.grad(f, i)
        w = u(*np.shape(args[i]))
        fd = (
            grad(*[x + eps * v for x, v in zip(args, vs)])
            - grad(*[x - eps * v for x, v in zip(args, vs)])
        ) / (
            2 * eps
        )  # the Hessian's rows of argument i times v
        _, tangent = cpsad.jvp(grad, args, vs)  # forward over reverse
        np.testing.assert_allclose(tangent, fd, rtol=1e-5, atol=1e-6)
        _, pullback = cpsad.vjp(grad, *args)  # reverse over reverse: <H.T w, v> = <w, H v>
        hw = pullback(w)
        hw = hw if isinstance(hw, tuple) else (hw,)
        np.testing.assert_allclose(
            sum(np.sum(h * v) for h, v in zip(hw, vs)), np.sum(w * fd), rtol=1e-5, atol=1e-6
        )


# (cpsad.jvp of cpsad.grad(f, argnums) with a tuple argnums gives wrong tangents, of any f --
# np.sum(np.sin(a) * a[0]) too -- a bug of the pipeline, not of these rules: the test takes one
# argnum at a time.)


def test_second_derivative_of_a_scalar_through_eigvalsh():
    a = sym(3)

    def f(x):
        return np.sum(np.linalg.eigvalsh(x * a) ** 3)

    g = cpsad.grad(f)
    eps = 1e-5
    want = (g(0.7 + eps) - g(0.7 - eps)) / (2 * eps)
    assert cpsad.grad(cpsad.grad(f))(0.7) == pytest.approx(want, rel=1e-6)


# --------------------------------------------------------------------------- repeated values


def test_repeated_eigenvalues():
    """Functions of the eigenvalues alone have finite derivatives at repeated eigenvalues (the
    eigenvectors' term is left out when they get no adjoint); the eigenvectors have none there:
    infinities and NaN, with numpy's warnings, and no exception."""
    eye = np.eye(3)
    for f in (
        lambda a: np.sum(np.linalg.eigvalsh(a) ** 2),
        lambda a: np.sum(np.linalg.eigh(a)[0] ** 2),
        lambda a: np.sum(np.linalg.svd(a)[1] ** 2),
        lambda a: np.sum(np.linalg.svd(a, compute_uv=False) ** 2),
    ):
        np.testing.assert_allclose(cpsad.grad(f)(eye), 2 * eye, atol=1e-12)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        g = cpsad.grad(lambda a: np.sum(np.linalg.eigh(a)[1][0] ** 3))(eye)
    assert not np.all(np.isfinite(g))


# --------------------------------------------------------------------------- refused


@pytest.mark.parametrize(
    "call, x, message",
    [
        (lambda a: np.linalg.eigh(a)[0], sym(3) + 1j * np.eye(3), "real values only"),
        (lambda a: np.linalg.eigvalsh(a), sym(3) * (1 + 0j), "real values only"),
        (lambda a: np.linalg.svd(a)[1], u(4, 3), "full_matrices=False"),
        (lambda a: np.linalg.svd(a, full_matrices=False)[1], u(3, 3) + 0j, "real values only"),
        (lambda a: np.linalg.svd(a, hermitian=True)[1], sym(3), "hermitian=False"),
        (lambda a: np.linalg.qr(a)[1], u(3, 4), "at least as many rows"),
        (lambda a: np.linalg.qr(a, mode="complete")[1], u(4, 3), "mode='reduced'"),
        (lambda a: np.linalg.qr(a, mode="r"), u(4, 3), "mode='reduced'"),
        (lambda a: np.linalg.pinv(a, hermitian=True), sym(3), "hermitian=False"),
        (lambda a: np.linalg.lstsq(a, np.ones(3))[0], u(3, 2) + 0j, "real values only"),
        (lambda a: np.linalg.eig(a)[1], u(3, 3) + 0j, "real values only"),
        (lambda a: np.linalg.eigvals(a), u(3, 3) * 1j, "real values only"),
    ],
)
def test_refused_in_both_modes(call, x, message):
    """Complex matrices and options the formulas are not for: a TypeError that says what is
    differentiated, in reverse and in forward mode."""
    with pytest.raises(TypeError, match=message):
        cpsad.vjp(call, x)[1](np.ones_like(call(x)))
    with pytest.raises(TypeError, match=message):
        cpsad.jvp(call, (x,), (np.ones_like(x),))
