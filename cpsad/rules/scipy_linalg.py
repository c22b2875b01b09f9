"""Rules of ``scipy.linalg``: triangular and Cholesky solves (``solve_triangular``, ``cho_factor``
with ``cho_solve``, ``cholesky``), the matrix square root and exponential (``sqrtm``, ``expm``,
``expm_frechet``), Sylvester equations (``solve_sylvester``), and scipy's own ``inv``, ``det`` and
``solve`` -- distinct functions from numpy's, with options numpy has not.

Optional, as scipy_special.py is: registered when scipy is importable. Each rule is one
expression of functions that have rules -- scipy's functions themselves, numpy's, the helpers of
np.linalg's rules (``cholesky_vjp``, ``cofactors``, ``to_triangle``: linalg.py, emitted/) and
the few below -- so emitted code is differentiated again (second order): ``sqrtm``'s derivative
solves a Sylvester equation, whose derivative solves another; ``expm``'s is a Fréchet derivative
(``expm_frechet``), whose derivative is one of a block matrix ``[[A, E], [0, A]]``.

Conventions:

* Where scipy reads one triangle of a matrix (``cholesky``, ``cho_factor``, ``solve_triangular``,
  ``inv`` and ``solve`` with ``assume_a='pos'`` or ``'sym'``) or its diagonal (``solve``), the adjoint lives
  on what it reads (``np.linalg.eigh``'s convention, ``to_triangle``): any direction, symmetric or
  not, is a direction of the function scipy computes.
* ``c, lower = cho_factor(a)``: ``c`` holds the factor in one triangle and, in the other, ``a``'s
  own entries (scipy leaves them there). The pair is ``cho_solve``'s argument, whose adjoint is a
  ``Sparse`` of ``c``'s; ``cho_factor``'s rule takes ``c``'s adjoint on the factor's triangle
  through the Cholesky factor's rule, and on the other through the identity.
* Refused with a ``TypeError`` (never a silent wrong number): complex values; ``overwrite_a=True``
  and ``overwrite_b=True`` (scipy may change the input in place); ``sqrtm``'s ``disp=False``;
  ``assume_a='tridiagonal'`` and ``'banded'``; ``inv``'s ``assume_a='diagonal'`` (scipy keeps
  ``a``'s off-diagonal entries in that result). ``check_finite`` changes nothing here.
"""

from __future__ import annotations

import numpy as np

try:  # scipy is optional: without it there is nothing to register
    from scipy import linalg
except ImportError:  # pragma: no cover - scipy is installed with the test extra
    linalg = None

from cpsad.rules import linalg as la
from cpsad.rules.core import defjvp, defnondiff, defvjp
from cpsad.runtime import Sparse, item_adjoint, tangent_zeros

# --------------------------------------------------------------------------- helpers


def accepted(x, a, b, name, refused=None):
    """``x``, once the rule of ``name`` is known to hold: ``refused`` (an option the rule is not
    for, and why) is None, and ``a`` and ``b`` are real (``b`` may be None). The identity in
    ``x``; ``a`` and ``b`` are read, not differentiated."""
    if refused:
        raise TypeError(f"cpsad does not differentiate `{name}` with {refused}")
    la.real_only(a, name)
    la.real_only(b, name)
    return x


def overwritten(overwrite_a, overwrite_b):
    """What ``accepted`` refuses of scipy's ``overwrite_*`` options (None: nothing)."""
    for flag, name in ((overwrite_a, "overwrite_a"), (overwrite_b, "overwrite_b")):
        if flag:
            return (
                f"{name}=True: scipy may change that array in place, which the derivative reads;"
                " leave it False"
            )
    return None


def triangle(x, lower, unit_diagonal=False):
    """The lower (``lower``) or upper triangle of (a stack of) matrices; with ``unit_diagonal``,
    without the diagonal. Linear, and its own transpose."""
    return (
        np.tril(x, -1 if unit_diagonal else 0) if lower else np.triu(x, 1 if unit_diagonal else 0)
    )


def outer(u, v):
    """``u v^T``: of vectors, their outer product; of (stacks of) matrices, ``u @ v.T``."""
    return np.outer(u, v) if np.ndim(u) == 1 else u @ la.mT(v)


def block(x, y):
    """The block matrix ``[[x, y], [0, x]]`` of square matrices (or stacks of them): its
    exponential is ``[[expm(x), L(x, y)], [0, expm(x)]]``, ``L`` the Fréchet derivative."""
    top = np.concatenate([x, y], axis=-1)
    return np.concatenate([top, np.concatenate([np.zeros_like(x), x], axis=-1)], axis=-2)


def corners(m):
    """The sum of the two diagonal blocks of a ``2n x 2n`` matrix: the transpose of ``block`` in
    its ``x``."""
    n = np.shape(m)[-1] // 2
    return m[..., :n, :n] + m[..., n:, n:]


STRUCTURES = (None, "general", "gen", "sym", "her", "pos", "diagonal")
TRIANGULAR = ("upper triangular", "lower triangular")


def structure(x, assume_a, lower, name):
    """The matrix scipy's ``inv`` and ``solve`` read from ``x`` given ``assume_a``: all of it,
    the symmetric matrix of one triangle (``lower``), the diagonal, or a triangle. Linear."""
    if assume_a in (None, "general", "gen"):
        return x
    if assume_a in ("sym", "her", "pos"):
        return la.from_triangle(x, "L" if lower else "U")
    if assume_a == "diagonal":
        return x * np.eye(np.shape(x)[-1], dtype=np.result_type(x))
    return triangle(x, known(assume_a, name) == "lower triangular")


def known(assume_a, name):
    """``assume_a``, where ``structure`` knows it; a ``TypeError`` elsewhere (a band), and for
    ``inv``'s ``'diagonal'``: scipy (1.17) leaves ``a``'s off-diagonal entries in that inverse."""
    if assume_a == "diagonal" and name == "scipy.linalg.inv":
        raise TypeError(
            f"cpsad does not differentiate `{name}` with assume_a='diagonal': scipy's result"
            " keeps the off-diagonal entries of `a` there; write 1 / np.diag(a)"
        )
    if assume_a in STRUCTURES + TRIANGULAR:
        return assume_a
    raise TypeError(
        f"cpsad differentiates `{name}` with assume_a one of "
        f"{', '.join(repr(s) for s in STRUCTURES + TRIANGULAR)}, not {assume_a!r}"
    )


def structure_adjoint(x, assume_a, lower, name):
    """The transpose of ``structure``: an adjoint of the matrix scipy reads as one of ``x``."""
    if assume_a in ("sym", "her", "pos"):
        return la.to_triangle(x, "L" if lower else "U")
    return structure(x, assume_a, lower, name)


if linalg is not None:
    defnondiff(overwritten, known)

    def accepted_x(g, ans, x, a, b, name, refused=None):
        return g

    def accepted_x_jvp(t, ans, x, a, b, name, refused=None):
        return t

    defvjp(accepted, accepted_x)
    defjvp(accepted, accepted_x_jvp)

    def triangle_x(g, ans, x, lower, unit_diagonal=False):
        return triangle(g, lower, unit_diagonal)

    def triangle_x_jvp(t, ans, x, lower, unit_diagonal=False):
        return triangle(t, lower, unit_diagonal)

    defvjp(triangle, triangle_x)
    defjvp(triangle, triangle_x_jvp)

    def outer_u(g, ans, u, v):
        return g @ v

    def outer_v(g, ans, u, v):
        return la.mT(g) @ u

    def outer_u_jvp(t, ans, u, v):
        return outer(t, v)

    def outer_v_jvp(t, ans, u, v):
        return outer(u, t)

    defvjp(outer, outer_u, outer_v)
    defjvp(outer, outer_u_jvp, outer_v_jvp)

    def block_x(g, ans, x, y):
        return corners(g)

    def block_y(g, ans, x, y):
        return g[..., : np.shape(x)[-1], np.shape(x)[-1] :]

    def block_x_jvp(t, ans, x, y):
        return block(t, np.zeros_like(y))

    def block_y_jvp(t, ans, x, y):
        return block(np.zeros_like(x), t)

    defvjp(block, block_x, block_y)
    defjvp(block, block_x_jvp, block_y_jvp)

    def corners_m(g, ans, m):
        return block(g, np.zeros_like(g))

    def corners_m_jvp(t, ans, m):
        return corners(t)

    defvjp(corners, corners_m)
    defjvp(corners, corners_m_jvp)

    def structure_x(g, ans, x, assume_a, lower, name):
        return structure_adjoint(g, assume_a, lower, name)

    def structure_x_jvp(t, ans, x, assume_a, lower, name):
        return structure(t, assume_a, lower, name)

    defvjp(structure, structure_x)
    defjvp(structure, structure_x_jvp)

    def structure_adjoint_x(g, ans, x, assume_a, lower, name):
        return structure(g, assume_a, lower, name)

    def structure_adjoint_x_jvp(t, ans, x, assume_a, lower, name):
        return structure_adjoint(t, assume_a, lower, name)

    defvjp(structure_adjoint, structure_adjoint_x)
    defjvp(structure_adjoint, structure_adjoint_x_jvp)

    # ------------------------------------------------------------------ triangular solves

    def solve_triangular_a(
        g,
        ans,
        a,
        b,
        trans=0,
        lower=False,
        unit_diagonal=False,
        overwrite_b=False,
        check_finite=True,
    ):
        """``x = op(T)^-1 b``, ``T`` the triangle of ``a`` scipy reads (its strict triangle and
        ones of ``unit_diagonal``), ``op`` the transpose of ``trans`` 1, 'T' or 'C' (of real
        matrices): ``op(T)_bar = -y x^T``, ``y = op(T)^-T g``, on that triangle."""
        return accepted(
            -triangle(
                (
                    outer(
                        linalg.solve_triangular(
                            a, g, 1 if trans in (0, "N") else 0, lower, unit_diagonal
                        ),
                        ans,
                    )
                    if trans in (0, "N")
                    else outer(ans, linalg.solve_triangular(a, g, 0, lower, unit_diagonal))
                ),
                lower,
                unit_diagonal,
            ),
            a,
            b,
            "scipy.linalg.solve_triangular",
            overwritten(False, overwrite_b),
        )

    def solve_triangular_b(
        g,
        ans,
        a,
        b,
        trans=0,
        lower=False,
        unit_diagonal=False,
        overwrite_b=False,
        check_finite=True,
    ):
        """``op(T)^-T g``: the other ``trans``."""
        return accepted(
            linalg.solve_triangular(a, g, 1 if trans in (0, "N") else 0, lower, unit_diagonal),
            a,
            b,
            "scipy.linalg.solve_triangular",
            overwritten(False, overwrite_b),
        )

    defvjp(linalg.solve_triangular, solve_triangular_a, solve_triangular_b)

    def solve_triangular_a_jvp(
        t,
        ans,
        a,
        b,
        trans=0,
        lower=False,
        unit_diagonal=False,
        overwrite_b=False,
        check_finite=True,
    ):
        """``dx = -op(T)^-1 op(dT) x``, ``dT`` the direction's triangle scipy reads."""
        return accepted(
            -linalg.solve_triangular(
                a,
                (
                    triangle(t, lower, unit_diagonal)
                    if trans in (0, "N")
                    else la.mT(triangle(t, lower, unit_diagonal))
                )
                @ ans,
                trans,
                lower,
                unit_diagonal,
            ),
            a,
            b,
            "scipy.linalg.solve_triangular",
            overwritten(False, overwrite_b),
        )

    def solve_triangular_b_jvp(
        t,
        ans,
        a,
        b,
        trans=0,
        lower=False,
        unit_diagonal=False,
        overwrite_b=False,
        check_finite=True,
    ):
        return accepted(
            linalg.solve_triangular(a, t, trans, lower, unit_diagonal),
            a,
            b,
            "scipy.linalg.solve_triangular",
            overwritten(False, overwrite_b),
        )

    defjvp(linalg.solve_triangular, solve_triangular_a_jvp, solve_triangular_b_jvp)

    # ------------------------------------------------------------------ Cholesky

    def cholesky_a(g, ans, a, lower=False, overwrite_a=False, check_finite=True):
        """``np.linalg.cholesky``'s rule (symmetric), on the triangle scipy reads: the upper one
        unless ``lower``."""
        return la.to_triangle(
            la.cholesky_vjp(
                g,
                accepted(ans, a, None, "scipy.linalg.cholesky", overwritten(overwrite_a, False)),
                a,
                upper=not lower,
            ),
            "L" if lower else "U",
        )

    defvjp(linalg.cholesky, cholesky_a)

    def cholesky_a_jvp(t, ans, a, lower=False, overwrite_a=False, check_finite=True):
        """``np.linalg.cholesky``'s along the symmetric matrix of the triangle scipy reads."""
        return la.cholesky_jvp(
            la.from_triangle(t, "L" if lower else "U"),
            accepted(ans, a, None, "scipy.linalg.cholesky", overwritten(overwrite_a, False)),
            a,
            upper=not lower,
        )

    defjvp(linalg.cholesky, cholesky_a_jvp)

    def cho_factor_a(g, ans, a, lower=False, overwrite_a=False, check_finite=True):
        """``c, lower = cho_factor(a)``: ``cholesky_a`` of the adjoint of the factor in ``c``'s
        triangle, plus the adjoint of ``c``'s other strict triangle (``a``'s own entries)."""
        return accepted(
            la.to_triangle(
                la.cholesky_vjp(
                    item_adjoint(g, 0, ans[0]), triangle(ans[0], lower), a, upper=not lower
                ),
                "L" if lower else "U",
            )
            + triangle(item_adjoint(g, 0, ans[0]), not lower, True),
            a,
            None,
            "scipy.linalg.cho_factor",
            overwritten(overwrite_a, False),
        )

    defvjp(linalg.cho_factor, cho_factor_a)

    def cho_factor_a_jvp(t, ans, a, lower=False, overwrite_a=False, check_finite=True):
        """The factor's tangent in its triangle, the direction's own in the other; none of the
        flag ``lower``."""
        return la.pair_like(
            accepted(ans, a, None, "scipy.linalg.cho_factor", overwritten(overwrite_a, False)),
            la.cholesky_jvp(
                la.from_triangle(t, "L" if lower else "U"),
                triangle(ans[0], lower),
                a,
                upper=not lower,
            )
            + triangle(t, not lower, True),
            tangent_zeros(ans[1]),
        )

    defjvp(linalg.cho_factor, cho_factor_a_jvp)

    def cho_solve_c(g, ans, c_and_lower, b, overwrite_b=False, check_finite=True):
        """``x = A^-1 b``, ``A = F F^T`` (``F`` the lower triangle of ``c``) or ``F^T F`` (the
        upper): of ``A_bar = -y x^T``, ``y = A^-1 g``, ``F_bar = -(y x^T + x y^T) F`` (``-F (y
        x^T + x y^T)``) on ``F``'s triangle; the adjoint of the pair ``(c, lower)``."""
        return Sparse(
            {
                0: accepted(
                    -triangle(
                        (
                            (
                                outer(linalg.cho_solve(c_and_lower, g), ans)
                                + outer(ans, linalg.cho_solve(c_and_lower, g))
                            )
                            @ triangle(c_and_lower[0], True)
                            if c_and_lower[1]
                            else triangle(c_and_lower[0], False)
                            @ (
                                outer(linalg.cho_solve(c_and_lower, g), ans)
                                + outer(ans, linalg.cho_solve(c_and_lower, g))
                            )
                        ),
                        c_and_lower[1],
                    ),
                    c_and_lower[0],
                    b,
                    "scipy.linalg.cho_solve",
                    overwritten(False, overwrite_b),
                )
            }
        )

    def cho_solve_b(g, ans, c_and_lower, b, overwrite_b=False, check_finite=True):
        """``A^-1 g`` (``A`` is symmetric)."""
        return accepted(
            linalg.cho_solve(c_and_lower, g),
            c_and_lower[0],
            b,
            "scipy.linalg.cho_solve",
            overwritten(False, overwrite_b),
        )

    defvjp(linalg.cho_solve, cho_solve_c, cho_solve_b)

    def cho_solve_c_jvp(t, ans, c_and_lower, b, overwrite_b=False, check_finite=True):
        """``dx = -A^-1 dA x``, ``dA x = dF (F^T x) + F (dF^T x)`` (upper: ``dF^T (F x) + F^T
        (dF x)``), ``dF`` the triangle of the tangent of ``c``."""
        return accepted(
            -linalg.cho_solve(
                c_and_lower,
                (
                    triangle(t[0], True) @ (la.mT(triangle(c_and_lower[0], True)) @ ans)
                    + triangle(c_and_lower[0], True) @ (la.mT(triangle(t[0], True)) @ ans)
                    if c_and_lower[1]
                    else la.mT(triangle(t[0], False)) @ (triangle(c_and_lower[0], False) @ ans)
                    + la.mT(triangle(c_and_lower[0], False)) @ (triangle(t[0], False) @ ans)
                ),
            ),
            c_and_lower[0],
            b,
            "scipy.linalg.cho_solve",
            overwritten(False, overwrite_b),
        )

    def cho_solve_b_jvp(t, ans, c_and_lower, b, overwrite_b=False, check_finite=True):
        return accepted(
            linalg.cho_solve(c_and_lower, t),
            c_and_lower[0],
            b,
            "scipy.linalg.cho_solve",
            overwritten(False, overwrite_b),
        )

    defjvp(linalg.cho_solve, cho_solve_c_jvp, cho_solve_b_jvp)

    # ------------------------------------------------------------------ matrix functions

    def sqrtm_A(g, ans, A, disp=True, blocksize=64):
        """``X X = A``: ``dX X + X dX = dA``, a Sylvester equation; its transpose
        ``solve_sylvester(X^T, X^T, g)``. A complex root (of negative eigenvalues) is refused."""
        return linalg.solve_sylvester(
            la.mT(
                accepted(
                    ans,
                    A,
                    ans,
                    "scipy.linalg.sqrtm",
                    None if disp else "disp=False (it returns an error estimate too)",
                )
            ),
            la.mT(ans),
            g,
        )

    defvjp(linalg.sqrtm, sqrtm_A)

    def sqrtm_A_jvp(t, ans, A, disp=True, blocksize=64):
        return linalg.solve_sylvester(
            accepted(
                ans,
                A,
                ans,
                "scipy.linalg.sqrtm",
                None if disp else "disp=False (it returns an error estimate too)",
            ),
            ans,
            t,
        )

    defjvp(linalg.sqrtm, sqrtm_A_jvp)

    def solve_sylvester_a(g, ans, a, b, q):
        """``a x + x b = q``: of ``y = solve_sylvester(a^T, b^T, g)``, ``a_bar = -y x^T``,
        ``b_bar = -x^T y``, ``q_bar = y``."""
        return -linalg.solve_sylvester(
            la.mT(accepted(a, ans, None, "scipy.linalg.solve_sylvester")), la.mT(b), g
        ) @ la.mT(ans)

    def solve_sylvester_b(g, ans, a, b, q):
        return -la.mT(ans) @ linalg.solve_sylvester(
            la.mT(accepted(a, ans, None, "scipy.linalg.solve_sylvester")), la.mT(b), g
        )

    def solve_sylvester_q(g, ans, a, b, q):
        return linalg.solve_sylvester(
            la.mT(accepted(a, ans, None, "scipy.linalg.solve_sylvester")), la.mT(b), g
        )

    defvjp(linalg.solve_sylvester, solve_sylvester_a, solve_sylvester_b, solve_sylvester_q)

    def solve_sylvester_a_jvp(t, ans, a, b, q):
        return linalg.solve_sylvester(
            accepted(a, ans, None, "scipy.linalg.solve_sylvester"), b, -(t @ ans)
        )

    def solve_sylvester_b_jvp(t, ans, a, b, q):
        return linalg.solve_sylvester(
            accepted(a, ans, None, "scipy.linalg.solve_sylvester"), b, -(ans @ t)
        )

    def solve_sylvester_q_jvp(t, ans, a, b, q):
        return linalg.solve_sylvester(accepted(a, ans, None, "scipy.linalg.solve_sylvester"), b, t)

    defjvp(
        linalg.solve_sylvester, solve_sylvester_a_jvp, solve_sylvester_b_jvp, solve_sylvester_q_jvp
    )

    def expm_A(g, ans, A):
        """The Fréchet derivative ``L(A, E)`` is the tangent; its transpose is ``L(A^T, g)``
        (scipy computes it in float64: cast back to the result's type)."""
        return np.asarray(
            linalg.expm_frechet(
                la.mT(accepted(A, A, None, "scipy.linalg.expm")), g, compute_expm=False
            ),
            dtype=np.result_type(ans, g),
        )

    defvjp(linalg.expm, expm_A)

    def expm_A_jvp(t, ans, A):
        return np.asarray(
            linalg.expm_frechet(accepted(A, A, None, "scipy.linalg.expm"), t, compute_expm=False),
            dtype=np.result_type(ans, t),
        )

    defjvp(linalg.expm, expm_A_jvp)

    def expm_frechet_A(g, ans, A, E, method=None, compute_expm=True, check_finite=True):
        """``L(A, E)`` is the upper right block of ``expm(block(A, E))``, ``block(A, E) = [[A,
        E], [0, A]]``: its derivative along ``dA`` that block of ``L(block(A, E), block(dA,
        0))``, whose transpose is ``corners(L(block(A, E)^T, block(0, g)))``; of
        ``compute_expm``, ``expm_A`` of the exponential's adjoint besides."""
        return corners(
            linalg.expm_frechet(
                la.mT(block(accepted(A, A, E, "scipy.linalg.expm_frechet"), E)),
                block(np.zeros_like(A), item_adjoint(g, 1, ans[1]) if compute_expm else g),
                compute_expm=False,
            )
        ) + (
            linalg.expm_frechet(la.mT(A), item_adjoint(g, 0, ans[0]), compute_expm=False)
            if compute_expm
            else 0.0
        )

    def expm_frechet_E(g, ans, A, E, method=None, compute_expm=True, check_finite=True):
        """Linear in ``E``: ``L(A^T, g)``."""
        return linalg.expm_frechet(
            la.mT(accepted(A, A, E, "scipy.linalg.expm_frechet")),
            item_adjoint(g, 1, ans[1]) if compute_expm else g,
            compute_expm=False,
        )

    defvjp(linalg.expm_frechet, expm_frechet_A, expm_frechet_E)

    def expm_frechet_A_jvp(t, ans, A, E, method=None, compute_expm=True, check_finite=True):
        return (
            la.pair_like(
                ans,
                linalg.expm_frechet(A, t, compute_expm=False),
                linalg.expm_frechet(
                    block(accepted(A, A, E, "scipy.linalg.expm_frechet"), E),
                    block(t, np.zeros_like(E)),
                    compute_expm=False,
                )[..., : np.shape(A)[-1], np.shape(A)[-1] :],
            )
            if compute_expm
            else linalg.expm_frechet(
                block(accepted(A, A, E, "scipy.linalg.expm_frechet"), E),
                block(t, np.zeros_like(E)),
                compute_expm=False,
            )[..., : np.shape(A)[-1], np.shape(A)[-1] :]
        )

    def expm_frechet_E_jvp(t, ans, A, E, method=None, compute_expm=True, check_finite=True):
        return (
            la.pair_like(
                ans,
                np.zeros_like(ans[0]),
                linalg.expm_frechet(
                    accepted(A, A, E, "scipy.linalg.expm_frechet"), t, compute_expm=False
                ),
            )
            if compute_expm
            else linalg.expm_frechet(
                accepted(A, A, E, "scipy.linalg.expm_frechet"), t, compute_expm=False
            )
        )

    defjvp(linalg.expm_frechet, expm_frechet_A_jvp, expm_frechet_E_jvp)

    # ------------------------------------------------------------------ inv, det, solve
    # np.linalg's formulas, of the matrix scipy reads given ``assume_a`` (``structure``)

    def inv_a(g, ans, a, overwrite_a=False, check_finite=True, *, assume_a=None, lower=False):
        """``-ans^T g ans^T`` (``np.linalg.inv``'s), on what scipy reads of ``a``."""
        return structure_adjoint(
            -la.mT(accepted(ans, a, None, "scipy.linalg.inv", overwritten(overwrite_a, False)))
            @ g
            @ la.mT(ans),
            known(assume_a, "scipy.linalg.inv"),
            lower,
            "scipy.linalg.inv",
        )

    defvjp(linalg.inv, inv_a)

    def inv_a_jvp(t, ans, a, overwrite_a=False, check_finite=True, *, assume_a=None, lower=False):
        return (
            -accepted(ans, a, None, "scipy.linalg.inv", overwritten(overwrite_a, False))
            @ structure(t, known(assume_a, "scipy.linalg.inv"), lower, "scipy.linalg.inv")
            @ ans
        )

    defjvp(linalg.inv, inv_a_jvp)

    def det_a(g, ans, a, overwrite_a=False, check_finite=True):
        """Jacobi's formula, ``np.linalg.det``'s: ``g`` times the cofactors."""
        return np.expand_dims(g, (-2, -1)) * la.cofactors(
            accepted(a, a, None, "scipy.linalg.det", overwritten(overwrite_a, False)), ans
        )

    defvjp(linalg.det, det_a)

    def det_a_jvp(t, ans, a, overwrite_a=False, check_finite=True):
        return np.sum(
            la.cofactors(
                accepted(a, a, None, "scipy.linalg.det", overwritten(overwrite_a, False)), ans
            )
            * t,
            axis=(-2, -1),
        )

    defjvp(linalg.det, det_a_jvp)

    def solve_a(
        g,
        ans,
        a,
        b,
        lower=False,
        overwrite_a=False,
        overwrite_b=False,
        check_finite=True,
        assume_a=None,
        transposed=False,
    ):
        """``op(M) x = b``, ``M`` what scipy reads of ``a``, ``op`` the transpose of
        ``transposed``: ``op(M)_bar = -y x^T``, ``y = op(M)^-T g`` (scipy's ``solve`` with the
        other ``transposed``)."""
        return accepted(
            -structure_adjoint(
                (
                    outer(
                        ans,
                        linalg.solve(a, g, lower=lower, assume_a=assume_a, transposed=False),
                    )
                    if transposed
                    else outer(
                        linalg.solve(a, g, lower=lower, assume_a=assume_a, transposed=True),
                        ans,
                    )
                ),
                assume_a,
                lower,
                "scipy.linalg.solve",
            ),
            a,
            b,
            "scipy.linalg.solve",
            overwritten(overwrite_a, overwrite_b),
        )

    def solve_b(
        g,
        ans,
        a,
        b,
        lower=False,
        overwrite_a=False,
        overwrite_b=False,
        check_finite=True,
        assume_a=None,
        transposed=False,
    ):
        return accepted(
            linalg.solve(
                a,
                g,
                lower=lower,
                assume_a=known(assume_a, "scipy.linalg.solve"),
                transposed=not transposed,
            ),
            a,
            b,
            "scipy.linalg.solve",
            overwritten(overwrite_a, overwrite_b),
        )

    defvjp(linalg.solve, solve_a, solve_b)

    def solve_a_jvp(
        t,
        ans,
        a,
        b,
        lower=False,
        overwrite_a=False,
        overwrite_b=False,
        check_finite=True,
        assume_a=None,
        transposed=False,
    ):
        """``dx = -op(M)^-1 op(dM) x``."""
        return accepted(
            -linalg.solve(
                a,
                (
                    la.mT(structure(t, assume_a, lower, "scipy.linalg.solve"))
                    if transposed
                    else structure(t, assume_a, lower, "scipy.linalg.solve")
                )
                @ ans,
                lower=lower,
                assume_a=assume_a,
                transposed=transposed,
            ),
            a,
            b,
            "scipy.linalg.solve",
            overwritten(overwrite_a, overwrite_b),
        )

    def solve_b_jvp(
        t,
        ans,
        a,
        b,
        lower=False,
        overwrite_a=False,
        overwrite_b=False,
        check_finite=True,
        assume_a=None,
        transposed=False,
    ):
        return accepted(
            linalg.solve(
                a,
                t,
                lower=lower,
                assume_a=known(assume_a, "scipy.linalg.solve"),
                transposed=transposed,
            ),
            a,
            b,
            "scipy.linalg.solve",
            overwritten(overwrite_a, overwrite_b),
        )

    defjvp(linalg.solve, solve_a_jvp, solve_b_jvp)
