"""Cases for the rules of ``scipy.linalg`` (cpsad/rules/scipy_linalg.py): each rule against
central differences with random cotangents and directions, end to end in reverse and forward
mode, and against ``autograd.scipy.linalg`` where it has the function (``sqrtm``,
``solve_triangular`` without ``unit_diagonal``, ``solve_sylvester``: tests/oracles.py binds
``linalg`` to it). Importing this module adds the cases to ``corpus_rules.CASES``; without scipy
it adds none. Second derivatives, autograd's numpy rules as the oracle of the functions it has
only in numpy, a Gaussian process and the refusals are in tests/test_scipy_linalg.py.

Where scipy reads one triangle of a matrix, the cases' matrices have something else in the
other (a non-symmetric matrix, a triangle of noise): the rules' adjoints are on the triangle
scipy reads, so every direction -- random, not symmetric -- is a direction of what scipy computes.
"""

from __future__ import annotations

import numpy as np

from cpsad.rules import core
from tests.corpus_rules import case, end_to_end, spd, u

try:
    from scipy import linalg
except ImportError:  # pragma: no cover - scipy is in the test extra
    linalg = None

NO_AUTOGRAD = "autograd.scipy.linalg has no rule for it"
HELPER = "cpsad's own helper: autograd has no rule for it"
FLOAT64 = "scipy computes it in float64 of float32 matrices"


def triangular(*shape):
    """Matrices whose triangles are well conditioned (a diagonal away from zero)."""
    return u(*shape) + 3.0 * np.eye(shape[-1])


def near_identity(*shape, scale=0.3):
    """Matrices near the identity: a real square root, a tame exponential."""
    return np.eye(shape[-1]) + scale * u(*shape)


def noisy(a, lower):
    """``a`` with noise in the triangle (without the diagonal) scipy does not read."""
    noise = u(*np.shape(a))
    return a + (np.triu(noise, 1) if lower else np.tril(noise, -1))


if linalg is not None:
    from cpsad.rules import scipy_linalg as sl

    # ------------------------------------------------------------------ solve_triangular

    def solve_triangular(a, b, trans=0, lower=False, unit_diagonal=False):
        return linalg.solve_triangular(a, b, trans=trans, lower=lower, unit_diagonal=unit_diagonal)

    UNIT = "autograd's solve_triangular ignores unit_diagonal in its rule"
    STACK = "autograd's solve_triangular is of single matrices"
    for b, options, ag in [
        (u(3), dict(lower=True), None),
        (u(3, 2), dict(lower=False), None),
        (u(3, 2), dict(trans=1, lower=True), None),
        (u(3), dict(trans="T", lower=False), None),
        (u(3), dict(trans="C", lower=True), None),
        (u(3, 2), dict(trans=2, lower=False), None),
        (u(3, 2), dict(lower=True, unit_diagonal=True), UNIT),
        (u(3), dict(trans="T", lower=False, unit_diagonal=True), UNIT),
        (u(4, 1), dict(trans="N", lower=True), None),
    ]:
        a = triangular(np.shape(b)[0], np.shape(b)[0])  # (and noise in the other triangle)
        case(solve_triangular, linalg.solve_triangular, a, b, wrt=(0, 1), kw=options, autograd=ag)
    case(
        solve_triangular,
        linalg.solve_triangular,
        triangular(2, 3, 3),
        u(2, 3, 2),
        wrt=(0, 1),
        kw=dict(lower=True),
        autograd=STACK,
    )

    def solve_triangular_twice(a, b):
        """``L^-T L^-1 b``: a solve with ``L L^T`` (a Cholesky factor's use)."""
        L = np.tril(a)
        y = linalg.solve_triangular(L, b, lower=True)
        return linalg.solve_triangular(L, y, lower=True, trans="T")

    end_to_end(solve_triangular_twice, triangular(4, 4), u(4, 2))

    # ------------------------------------------------------------------ cholesky

    def cholesky(a, lower=False):
        return linalg.cholesky(a, lower=lower)

    for lower in (False, True):
        case(
            cholesky,
            linalg.cholesky,
            noisy(spd(3), lower),
            kw=dict(lower=lower),
            autograd=NO_AUTOGRAD,
        )
    case(cholesky, linalg.cholesky, spd(3, batch=(2,)), kw=dict(lower=True), autograd=NO_AUTOGRAD)

    # (Transformed functions inside this `if` keep to one-line docstrings: cpsad takes a
    # multi-line one, dedented, for a changed source file -- a bug of the parse stage.)

    def cholesky_of_gram(x):
        return linalg.cholesky(x @ x.T + 3.0 * np.eye(3), lower=True)

    end_to_end(cholesky_of_gram, u(3, 3), autograd=NO_AUTOGRAD)

    # ------------------------------------------------------------------ cho_factor, cho_solve

    class FactorOfPair:
        """``cho_factor`` with the pair's flag as None. (The flag ``lower``, a bool, has no
        cotangent, but the checks draw a random number for it: cpsad/testing.py.)"""

        __name__ = "cho_factor"

        def __init__(self):
            self.rule = core.lookup(linalg.cho_factor)

        def __call__(self, a, lower=False, overwrite_a=False, check_finite=True):
            return linalg.cho_factor(a, lower, overwrite_a, check_finite)[0], None

    def cho_factor(a, lower=False):
        return linalg.cho_factor(a, lower=lower)[0], None

    def cho_solve(c_and_lower, b):
        return linalg.cho_solve(c_and_lower, b)

    def keep_flag(i, v):
        """The pair ``(c, lower)``: directions of ``c`` only (``lower`` a bool)."""
        return (v[0], 0.0) if i == 0 else v

    CHO = FactorOfPair()
    for lower in (False, True):
        # c's other triangle holds a's own entries: a's noise there reaches c
        case(cho_factor, CHO, noisy(spd(3), lower), kw=dict(lower=lower), autograd=NO_AUTOGRAD)
        pair = linalg.cho_factor(spd(3), lower=lower)
        for b in (u(3), u(3, 2)):
            case(
                cho_solve,
                linalg.cho_solve,
                pair,
                b,
                wrt=(0, 1),
                direction=keep_flag,
                autograd=NO_AUTOGRAD,
            )
    case(cho_factor, CHO, spd(4, batch=(2,)), kw=dict(lower=True), autograd=NO_AUTOGRAD)

    def cho_solve_of(a, b):
        """The gradient reaches ``a`` through both calls."""
        return linalg.cho_solve(linalg.cho_factor(a), b)

    def cho_solve_lower(a, b):
        c, lower = linalg.cho_factor(a, lower=True)
        return linalg.cho_solve((c, lower), b) * np.sum(np.log(np.diag(c)))

    end_to_end(cho_solve_of, noisy(spd(4), False), u(4), autograd=NO_AUTOGRAD)
    end_to_end(cho_solve_lower, noisy(spd(3), True), u(3, 2), autograd=NO_AUTOGRAD)

    # ------------------------------------------------------------------ sqrtm, solve_sylvester

    def sqrtm(A):
        return linalg.sqrtm(A)

    case(sqrtm, linalg.sqrtm, near_identity(3, 3))
    case(sqrtm, linalg.sqrtm, spd(4))  # symmetric positive definite
    case(sqrtm, linalg.sqrtm, near_identity(2, 3, 3), autograd="autograd's sqrtm: one matrix")

    def sqrtm_squared(A):
        """``sqrtm(A) @ sqrtm(A)`` is ``A``."""
        r = linalg.sqrtm(A)
        return r @ r

    end_to_end(sqrtm_squared, near_identity(3, 3))

    def solve_sylvester(a, b, q):
        return linalg.solve_sylvester(a, b, q)

    for a, b, q in [
        (triangular(3, 3), triangular(3, 3).T, u(3, 3)),
        (triangular(3, 3), triangular(2, 2), u(3, 2)),  # rectangular x
    ]:
        case(solve_sylvester, linalg.solve_sylvester, a, b, q, wrt=(0, 1, 2))

    # ------------------------------------------------------------------ expm, expm_frechet

    def expm(A):
        return linalg.expm(A)

    case(expm, linalg.expm, u(3, 3), autograd=NO_AUTOGRAD)
    case(expm, linalg.expm, near_identity(4, 4, scale=0.5), autograd=NO_AUTOGRAD)
    case(expm, linalg.expm, u(2, 3, 3), autograd=NO_AUTOGRAD)

    def expm_frechet(A, E, compute_expm=True):
        return linalg.expm_frechet(A, E, compute_expm=compute_expm)

    for compute in (True, False):
        case(
            expm_frechet,
            linalg.expm_frechet,
            u(3, 3),
            u(3, 3),
            wrt=(0, 1),
            kw=dict(compute_expm=compute),
            autograd=NO_AUTOGRAD,
            float64=FLOAT64,
        )

    # ``expm`` of a skew-symmetric matrix: a rotation by ``theta``, its entries cos and sin.
    def expm_of_rotation(theta):
        gen = np.array([[0.0, -1.0], [1.0, 0.0]])
        return linalg.expm(theta * gen)[0, 0] + 2.0 * linalg.expm(theta * gen)[1, 0]

    end_to_end(expm_of_rotation, 0.7, autograd=NO_AUTOGRAD)

    # ------------------------------------------------------------------ inv, det, solve

    def inv(a, assume_a=None, lower=False):
        return linalg.inv(a, assume_a=assume_a, lower=lower)

    WELL = triangular(3, 3)
    for a, options in [
        (WELL, {}),
        (WELL, dict(assume_a="general")),
        (noisy(spd(3), False), dict(assume_a="pos")),
        (noisy(spd(3), True), dict(assume_a="sym", lower=True)),
        (noisy(spd(3), True), dict(assume_a="her", lower=True)),
        (WELL, dict(assume_a="upper triangular")),
        (WELL, dict(assume_a="lower triangular")),
        (triangular(2, 3, 3), {}),
    ]:
        case(inv, linalg.inv, a, kw=options, autograd=NO_AUTOGRAD)

    def det(a):
        return linalg.det(a)

    case(det, linalg.det, WELL, autograd=NO_AUTOGRAD, float64=FLOAT64)
    case(det, linalg.det, -triangular(2, 3, 3), autograd=NO_AUTOGRAD, float64=FLOAT64)
    case(
        det,
        linalg.det,
        # singular, its determinant exactly 0: the cofactors are not. (Of a singular matrix whose
        # determinant rounds to 1e-19 instead, np.linalg's `cofactors` multiplies it by an
        # inverse of 1e16 entries, and the gradient is wrong: cpsad/rules/linalg.py.)
        np.array([[1.0, 2.0, 0.5], [2.0, 4.0, 1.0], [0.3, -0.7, 1.1]]),
        autograd=NO_AUTOGRAD,
        float64=FLOAT64,
    )

    def solve(a, b, lower=False, assume_a=None, transposed=False):
        return linalg.solve(a, b, lower=lower, assume_a=assume_a, transposed=transposed)

    for a, b, options in [
        (WELL, u(3), {}),
        (WELL, u(3, 2), dict(transposed=True)),
        (noisy(spd(3), False), u(3), dict(assume_a="pos")),
        (noisy(spd(3), True), u(3, 2), dict(assume_a="sym", lower=True, transposed=True)),
        (WELL, u(3), dict(assume_a="diagonal")),
        (WELL, u(3, 2), dict(assume_a="upper triangular", transposed=True)),
        (WELL, u(3), dict(assume_a="lower triangular")),
        (triangular(2, 3, 3), u(2, 3, 2), {}),
    ]:
        case(solve, linalg.solve, a, b, wrt=(0, 1), kw=options, autograd=NO_AUTOGRAD)

    def inv_det_solve(a, b):
        return linalg.solve(a, b) + linalg.inv(a) @ b * linalg.det(a)

    end_to_end(inv_det_solve, WELL, u(3), autograd=NO_AUTOGRAD)

    # ------------------------------------------------------------------ the helpers

    def accepted_(x, a, b, name):
        return sl.accepted(x, a, b, name)

    def triangle_(x, lower, unit_diagonal=False):
        return sl.triangle(x, lower, unit_diagonal)

    def outer_(u_, v):
        return sl.outer(u_, v)

    def block_(x, y):
        return sl.block(x, y)

    def corners_(m):
        return sl.corners(m)

    def structure_(x, assume_a, lower, name):
        return sl.structure(x, assume_a, lower, name)

    def structure_adjoint_(x, assume_a, lower, name):
        return sl.structure_adjoint(x, assume_a, lower, name)

    NAME = "scipy.linalg.inv"
    case(accepted_, sl.accepted, u(3, 2), u(3, 3), None, NAME, autograd=HELPER)
    for lower, unit in ((True, False), (False, True)):
        case(triangle_, sl.triangle, u(2, 3, 3), lower, unit, autograd=HELPER)
    case(outer_, sl.outer, u(3), u(4), wrt=(0, 1), autograd=HELPER)
    case(outer_, sl.outer, u(2, 3, 2), u(2, 4, 2), wrt=(0, 1), autograd=HELPER)
    case(block_, sl.block, u(3, 3), u(3, 3), wrt=(0, 1), autograd=HELPER)
    case(corners_, sl.corners, u(2, 4, 4), autograd=HELPER)
    for assume_a, lower in (
        (None, False),
        ("pos", False),
        ("sym", True),
        ("diagonal", False),
        ("upper triangular", False),
        ("lower triangular", True),
    ):
        for fn, helper in ((structure_, sl.structure), (structure_adjoint_, sl.structure_adjoint)):
            case(fn, helper, u(3, 3), assume_a, lower, NAME, autograd=HELPER)
