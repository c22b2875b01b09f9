"""Rules of the helpers of ``np.linalg.solve``'s rules (cpsad/rules/linalg.py): with
``x = solve(a, b)``, ``solved(c, a, b) = solve(a.T, c)``, ``solve_a(c, x, a, b) = -solved(c) x.T``,
``solve_a_jvp(v, x, a, b) = -solve(a, v x)``; for a vector ``b``, ``x`` and ``c`` are vectors
(stacks of them).

Every helper here is linear in its adjoint or tangent (``c``, ``v``); ``b`` gives only its shape.
Their derivatives in ``a`` (and ``out``) are solves and products of the same three helpers:
the rules close on themselves.
"""

from __future__ import annotations

import numpy as np

from cpsad.rules import linalg as la
from cpsad.rules.core import defjvp, defnondiff, defvjp
from cpsad.runtime import unbroadcast


def transposed_times(b) -> str:
    """einsum subscripts of ``m.T @ y`` for a stack of matrices ``m`` and ``y`` shaped like
    ``solve(a, b)``: a vector when ``b`` is one."""
    return "...ji,...j->...i" if np.ndim(b) == 1 else "...ji,...jk->...ik"


def outer_times(b) -> str:
    """einsum subscripts of ``y @ z.T`` for ``y`` and ``z`` shaped like ``solve(a, b)``."""
    return "...i,...j->...ij" if np.ndim(b) == 1 else "...ik,...jk->...ij"


defnondiff(transposed_times, outer_times)


def solved_c(g, ans, c, a, b):
    return la.solved(g, la.mT(a), b)


def solved_a(g, ans, c, a, b):
    return -unbroadcast(np.einsum(outer_times(b), ans, la.solved(g, la.mT(a), b)), a)


defvjp(la.solved, c=solved_c, a=solved_a)


def solved_c_jvp(t, ans, c, a, b):
    return la.solved(t, a, b)


def solved_a_jvp(t, ans, c, a, b):
    """``d solve(a.T, c) = -solve(a.T, t.T solve(a.T, c))``."""
    return -la.solved(np.einsum(transposed_times(b), t, ans), a, b)


defjvp(la.solved, c=solved_c_jvp, a=solved_a_jvp)


def solve_a_c(g, ans, c, out, a, b):
    return la.solve_a_jvp(g, out, a, b)


def solve_a_out(g, ans, c, out, a, b):
    return unbroadcast(-np.einsum(transposed_times(b), g, la.solved(c, a, b)), out)


def solve_a_a(g, ans, c, out, a, b):
    return la.solve_a(c, la.solve_a_jvp(g, out, a, b), a, b)


defvjp(la.solve_a, c=solve_a_c, out=solve_a_out, a=solve_a_a)


def solve_a_c_jvp(t, ans, c, out, a, b):
    return la.solve_a(t, out, a, b)


def solve_a_out_jvp(t, ans, c, out, a, b):
    return la.solve_a(c, t, a, b)


def solve_a_a_jvp(t, ans, c, out, a, b):
    return la.solve_a(-np.einsum(transposed_times(b), t, la.solved(c, a, b)), out, a, b)


defjvp(la.solve_a, c=solve_a_c_jvp, out=solve_a_out_jvp, a=solve_a_a_jvp)


def solve_a_jvp_v(g, ans, v, out, a, b):
    return la.solve_a(g, out, a, b)


def solve_a_jvp_out(g, ans, v, out, a, b):
    return unbroadcast(-np.einsum(transposed_times(b), v, la.solved(g, a, b)), out)


def solve_a_jvp_a(g, ans, v, out, a, b):
    """``-solve(a, v x)`` moves with ``a`` as ``solve_a_jvp`` of the result itself."""
    return la.solve_a(g, ans, a, b)


defvjp(la.solve_a_jvp, v=solve_a_jvp_v, out=solve_a_jvp_out, a=solve_a_jvp_a)


def solve_a_jvp_v_jvp(t, ans, v, out, a, b):
    return la.solve_a_jvp(t, out, a, b)


def solve_a_jvp_out_jvp(t, ans, v, out, a, b):
    return la.solve_a_jvp(v, t, a, b)


def solve_a_jvp_a_jvp(t, ans, v, out, a, b):
    return la.solve_a_jvp(t, ans, a, b)


defjvp(la.solve_a_jvp, v=solve_a_jvp_v_jvp, out=solve_a_jvp_out_jvp, a=solve_a_jvp_a_jvp)
