"""Rules of the helpers of ``np.linalg.cholesky``'s rules (cpsad/rules/linalg.py). With ``L`` lower
triangular (the transpose of the factor for ``upper=True``) and ``phi`` the lower triangle with
half the diagonal: ``cholesky_vjp = sym(cholesky_s(c, L))``, ``cholesky_s(c, L) =
L^-T phi(L^T c) L^-1``, and ``cholesky_jvp = cholesky_w(sym(v), L)``, ``cholesky_w(h, L) =
L phi(L^-1 h L^-T)``, the transpose of ``cholesky_s`` in ``c``.

Every helper here is linear in its adjoint or tangent (``c``, ``v``, ``h``; ``phi``, ``sym`` and
``lower`` in their argument, each its own transpose). Their derivatives in ``L`` are sums of the
same functions, solves and products: the rules close on themselves.
"""

from __future__ import annotations

import numpy as np

from cpsad.rules import linalg as la
from cpsad.rules.core import defjvp, defvjp


def phi(x):
    """The lower triangle of (a stack of) matrices with half the diagonal."""
    return np.tril(x) * (1 - 0.5 * np.eye(np.shape(x)[-1], dtype=np.result_type(x)))


def sym(x):
    """The symmetric part of (a stack of) matrices."""
    return 0.5 * (x + la.mT(x))


def lower(x, upper):
    """The lower factor from the factor ``np.linalg.cholesky`` returned (``upper``: its
    transpose), or an adjoint or tangent of one from the other's."""
    return la.mT(x) if upper else x


def cholesky_s(c, L):
    return np.linalg.solve(la.mT(L), la.mT(np.linalg.solve(la.mT(L), la.mT(phi(la.mT(L) @ c)))))


def cholesky_w(h, L):
    return L @ phi(np.linalg.solve(L, la.mT(np.linalg.solve(L, la.mT(h)))))


def phi_x(g, ans, x):
    """A mask: its own transpose."""
    return phi(g)


def phi_x_jvp(t, ans, x):
    return phi(t)


def sym_x(g, ans, x):
    return sym(g)


def sym_x_jvp(t, ans, x):
    return sym(t)


def lower_x(g, ans, x, upper):
    return lower(g, upper)


def lower_x_jvp(t, ans, x, upper):
    return lower(t, upper)


defvjp(phi, x=phi_x)
defjvp(phi, x=phi_x_jvp)
defvjp(sym, x=sym_x)
defjvp(sym, x=sym_x_jvp)
defvjp(lower, x=lower_x)
defjvp(lower, x=lower_x_jvp)


def cholesky_s_c(g, ans, c, L):
    return cholesky_w(g, L)


def cholesky_s_L(g, ans, c, L):
    return (
        -ans @ la.mT(np.linalg.solve(L, g))
        + c @ la.mT(np.linalg.solve(L, cholesky_w(g, L)))
        - la.mT(ans) @ la.mT(np.linalg.solve(L, la.mT(g)))
    )


defvjp(cholesky_s, c=cholesky_s_c, L=cholesky_s_L)


def cholesky_s_c_jvp(t, ans, c, L):
    return cholesky_s(t, L)


def cholesky_s_L_jvp(t, ans, c, L):
    """``d(L^-T phi(L^T c) L^-1) = -L^-T t^T S + cholesky_s(L^-T t^T c, L) - S t L^-1``."""
    return (
        -np.linalg.solve(la.mT(L), la.mT(t) @ ans)
        + cholesky_s(np.linalg.solve(la.mT(L), la.mT(t) @ c), L)
        - ans @ la.mT(np.linalg.solve(la.mT(L), la.mT(t)))
    )


defjvp(cholesky_s, c=cholesky_s_c_jvp, L=cholesky_s_L_jvp)


def cholesky_w_h(g, ans, h, L):
    return cholesky_s(g, L)


def cholesky_w_L(g, ans, h, L):
    return (
        g @ la.mT(np.linalg.solve(L, ans))
        - cholesky_s(g, L) @ la.mT(np.linalg.solve(L, h))
        - la.mT(cholesky_s(g, L)) @ la.mT(np.linalg.solve(L, la.mT(h)))
    )


defvjp(cholesky_w, h=cholesky_w_h, L=cholesky_w_L)


def cholesky_w_h_jvp(t, ans, h, L):
    return cholesky_w(t, L)


def cholesky_w_L_jvp(t, ans, h, L):
    """``d(L phi(L^-1 h L^-T)) = t L^-1 W + cholesky_w(-t L^-1 h - h L^-T t^T, L)``."""
    return t @ np.linalg.solve(L, ans) + cholesky_w(
        -(t @ np.linalg.solve(L, h)) - h @ np.linalg.solve(la.mT(L), la.mT(t)), L
    )


defjvp(cholesky_w, h=cholesky_w_h_jvp, L=cholesky_w_L_jvp)


def cholesky_vjp_c(g, ans, c, out, a, *, upper=False):
    return la.cholesky_jvp(g, out, a, upper=upper)


def cholesky_vjp_out(g, ans, c, out, a, *, upper=False):
    """The transpose of ``cholesky_s_L_jvp`` at ``sym(g)``, for the lower factor."""
    return lower(
        -cholesky_s(lower(c, upper), lower(out, upper))
        @ la.mT(np.linalg.solve(lower(out, upper), sym(g)))
        + lower(c, upper)
        @ la.mT(np.linalg.solve(lower(out, upper), cholesky_w(sym(g), lower(out, upper))))
        - la.mT(cholesky_s(lower(c, upper), lower(out, upper)))
        @ la.mT(np.linalg.solve(lower(out, upper), la.mT(sym(g)))),
        upper,
    )


defvjp(la.cholesky_vjp, c=cholesky_vjp_c, out=cholesky_vjp_out)


def cholesky_vjp_c_jvp(t, ans, c, out, a, *, upper=False):
    return la.cholesky_vjp(t, out, a, upper=upper)


def cholesky_vjp_out_jvp(t, ans, c, out, a, *, upper=False):
    """``sym`` of ``cholesky_s_L_jvp`` for the lower factor ``L`` and its tangent."""
    return sym(
        -np.linalg.solve(
            la.mT(lower(out, upper)),
            la.mT(lower(t, upper)) @ cholesky_s(lower(c, upper), lower(out, upper)),
        )
        + cholesky_s(
            np.linalg.solve(la.mT(lower(out, upper)), la.mT(lower(t, upper)) @ lower(c, upper)),
            lower(out, upper),
        )
        - cholesky_s(lower(c, upper), lower(out, upper))
        @ la.mT(np.linalg.solve(la.mT(lower(out, upper)), la.mT(lower(t, upper))))
    )


defjvp(la.cholesky_vjp, c=cholesky_vjp_c_jvp, out=cholesky_vjp_out_jvp)


def cholesky_jvp_v(g, ans, v, out, a, *, upper=False):
    return la.cholesky_vjp(g, out, a, upper=upper)


def cholesky_jvp_out(g, ans, v, out, a, *, upper=False):
    """The transpose of ``cholesky_w_L_jvp`` at ``h = sym(v)``, for the lower factor."""
    return lower(
        lower(g, upper)
        @ la.mT(np.linalg.solve(lower(out, upper), cholesky_w(sym(v), lower(out, upper))))
        - cholesky_s(lower(g, upper), lower(out, upper))
        @ la.mT(np.linalg.solve(lower(out, upper), sym(v)))
        - la.mT(cholesky_s(lower(g, upper), lower(out, upper)))
        @ la.mT(np.linalg.solve(lower(out, upper), la.mT(sym(v)))),
        upper,
    )


defvjp(la.cholesky_jvp, v=cholesky_jvp_v, out=cholesky_jvp_out)


def cholesky_jvp_v_jvp(t, ans, v, out, a, *, upper=False):
    return la.cholesky_jvp(t, out, a, upper=upper)


def cholesky_jvp_out_jvp(t, ans, v, out, a, *, upper=False):
    return lower(
        lower(t, upper) @ np.linalg.solve(lower(out, upper), cholesky_w(sym(v), lower(out, upper)))
        + cholesky_w(
            -(lower(t, upper) @ np.linalg.solve(lower(out, upper), sym(v)))
            - sym(v) @ np.linalg.solve(la.mT(lower(out, upper)), la.mT(lower(t, upper))),
            lower(out, upper),
        ),
        upper,
    )


defjvp(la.cholesky_jvp, v=cholesky_jvp_v_jvp, out=cholesky_jvp_out_jvp)
