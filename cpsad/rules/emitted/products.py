"""Rules of the helpers of the rules of products: ``@`` (``matmul_x``, ``matmul_y``), ``np.dot``
(``dot_a``, ``dot_b``) and ``np.einsum``'s contractions (``einsum_adjoint``, ``einsum_with``).

Every helper here is multilinear: linear in its adjoint or tangent and in each operand it
multiplies by. The operand whose adjoint it computes (``x`` of ``matmul_x``, slot ``i`` of
``einsum_adjoint``) gives only its shape, and a subscripts string or sublist has no derivative.
Its rule in each other argument is a product of the same kind with ``g`` (``t``) in that
argument's place -- ``@``, ``np.dot``, or a helper of this module: the rules close on it.
"""

from __future__ import annotations

import numpy as np

from cpsad.rules import linalg as la
from cpsad.rules import operators as op
from cpsad.rules.core import defjvp, defvjp
from cpsad.runtime import zeros_like


def matmul_x_c(g, ans, c, out, x, y):
    """``matmul_x`` is linear in ``c`` and in ``y``; ``x`` gives only its shape."""
    return g @ y


def matmul_x_y(g, ans, c, out, x, y):
    return op.matmul_y(c, out, g, y)


defvjp(op.matmul_x, c=matmul_x_c, y=matmul_x_y)


def matmul_x_c_jvp(t, ans, c, out, x, y):
    return op.matmul_x(t, out, x, y)


def matmul_x_y_jvp(t, ans, c, out, x, y):
    return op.matmul_x(c, out, x, t)


defjvp(op.matmul_x, c=matmul_x_c_jvp, y=matmul_x_y_jvp)


def matmul_y_c(g, ans, c, out, x, y):
    return x @ g


def matmul_y_x(g, ans, c, out, x, y):
    return op.matmul_x(c, out, x, g)


defvjp(op.matmul_y, c=matmul_y_c, x=matmul_y_x)


def matmul_y_c_jvp(t, ans, c, out, x, y):
    return op.matmul_y(t, out, x, y)


def matmul_y_x_jvp(t, ans, c, out, x, y):
    return op.matmul_y(c, out, t, y)


defjvp(op.matmul_y, c=matmul_y_c_jvp, x=matmul_y_x_jvp)


def dot_a_c(g, ans, c, out, a, b):
    return np.dot(g, b)


def dot_a_b(g, ans, c, out, a, b):
    return la.dot_b(c, out, g, b)


defvjp(la.dot_a, c=dot_a_c, b=dot_a_b)


def dot_a_c_jvp(t, ans, c, out, a, b):
    return la.dot_a(t, out, a, b)


def dot_a_b_jvp(t, ans, c, out, a, b):
    return la.dot_a(c, out, a, t)


defjvp(la.dot_a, c=dot_a_c_jvp, b=dot_a_b_jvp)


def dot_b_c(g, ans, c, out, a, b):
    return np.dot(a, g)


def dot_b_a(g, ans, c, out, a, b):
    return la.dot_a(c, out, a, g)


defvjp(la.dot_b, c=dot_b_c, a=dot_b_a)


def dot_b_c_jvp(t, ans, c, out, a, b):
    return la.dot_b(t, out, a, b)


def dot_b_a_jvp(t, ans, c, out, a, b):
    return la.dot_b(c, out, t, b)


defjvp(la.dot_b, c=dot_b_c_jvp, a=dot_b_a_jvp)

# --------------------------------------------------------------------------- contractions
# einsum_adjoint(h, subscripts, i, a, b, c, d) is multilinear in h and in every operand but the
# argument in slot i (-1 for subscripts, the sublist form's first operand; 0 to 3 for a to d), which
# gives only its shape; einsum_with(v, subscripts, i, a, b, c, d) in v and every operand but slot i
# (v takes its place). Each is the other's transpose in h (v); in the operand of slot j, the
# transpose is the adjoint of slot j of the contraction with h (v) in slot i. A slot holding a
# subscripts string or a sublist is never differentiable, and gets no derivative.


def einsum_adjoint_h(g, ans, h, subscripts, i, a, b=None, c=None, d=None, *, optimize=False):
    return la.einsum_with(g, subscripts, i, a, b, c, d, optimize=optimize)


def einsum_adjoint_s(g, ans, h, subscripts, i, a, b=None, c=None, d=None, *, optimize=False):
    return (
        zeros_like(subscripts)
        if i == -1
        else la.einsum_adjoint(
            h,
            subscripts,
            -1,
            g if i == 0 else a,
            g if i == 1 else b,
            g if i == 2 else c,
            g if i == 3 else d,
            optimize=optimize,
        )
    )


def einsum_adjoint_a(g, ans, h, subscripts, i, a, b=None, c=None, d=None, *, optimize=False):
    return (
        zeros_like(a)
        if i == 0
        else la.einsum_adjoint(
            h,
            g if i == -1 else subscripts,
            0,
            a,
            g if i == 1 else b,
            g if i == 2 else c,
            g if i == 3 else d,
            optimize=optimize,
        )
    )


def einsum_adjoint_b(g, ans, h, subscripts, i, a, b=None, c=None, d=None, *, optimize=False):
    return (
        zeros_like(b)
        if i == 1
        else la.einsum_adjoint(
            h,
            g if i == -1 else subscripts,
            1,
            g if i == 0 else a,
            b,
            g if i == 2 else c,
            g if i == 3 else d,
            optimize=optimize,
        )
    )


def einsum_adjoint_c(g, ans, h, subscripts, i, a, b=None, c=None, d=None, *, optimize=False):
    return (
        zeros_like(c)
        if i == 2
        else la.einsum_adjoint(
            h,
            g if i == -1 else subscripts,
            2,
            g if i == 0 else a,
            g if i == 1 else b,
            c,
            g if i == 3 else d,
            optimize=optimize,
        )
    )


def einsum_adjoint_d(g, ans, h, subscripts, i, a, b=None, c=None, d=None, *, optimize=False):
    return (
        zeros_like(d)
        if i == 3
        else la.einsum_adjoint(
            h,
            g if i == -1 else subscripts,
            3,
            g if i == 0 else a,
            g if i == 1 else b,
            g if i == 2 else c,
            d,
            optimize=optimize,
        )
    )


defvjp(
    la.einsum_adjoint,
    h=einsum_adjoint_h,
    subscripts=einsum_adjoint_s,
    a=einsum_adjoint_a,
    b=einsum_adjoint_b,
    c=einsum_adjoint_c,
    d=einsum_adjoint_d,
)


def einsum_adjoint_h_jvp(t, ans, h, subscripts, i, a, b=None, c=None, d=None, *, optimize=False):
    return la.einsum_adjoint(t, subscripts, i, a, b, c, d, optimize=optimize)


def einsum_adjoint_s_jvp(t, ans, h, subscripts, i, a, b=None, c=None, d=None, *, optimize=False):
    return (
        np.zeros_like(ans) if i == -1 else la.einsum_adjoint(h, t, i, a, b, c, d, optimize=optimize)
    )


def einsum_adjoint_a_jvp(t, ans, h, subscripts, i, a, b=None, c=None, d=None, *, optimize=False):
    return (
        np.zeros_like(ans)
        if i == 0
        else la.einsum_adjoint(h, subscripts, i, t, b, c, d, optimize=optimize)
    )


def einsum_adjoint_b_jvp(t, ans, h, subscripts, i, a, b=None, c=None, d=None, *, optimize=False):
    return (
        np.zeros_like(ans)
        if i == 1
        else la.einsum_adjoint(h, subscripts, i, a, t, c, d, optimize=optimize)
    )


def einsum_adjoint_c_jvp(t, ans, h, subscripts, i, a, b=None, c=None, d=None, *, optimize=False):
    return (
        np.zeros_like(ans)
        if i == 2
        else la.einsum_adjoint(h, subscripts, i, a, b, t, d, optimize=optimize)
    )


def einsum_adjoint_d_jvp(t, ans, h, subscripts, i, a, b=None, c=None, d=None, *, optimize=False):
    return (
        np.zeros_like(ans)
        if i == 3
        else la.einsum_adjoint(h, subscripts, i, a, b, c, t, optimize=optimize)
    )


defjvp(
    la.einsum_adjoint,
    h=einsum_adjoint_h_jvp,
    subscripts=einsum_adjoint_s_jvp,
    a=einsum_adjoint_a_jvp,
    b=einsum_adjoint_b_jvp,
    c=einsum_adjoint_c_jvp,
    d=einsum_adjoint_d_jvp,
)


def einsum_with_v(g, ans, v, subscripts, i, a, b=None, c=None, d=None, *, optimize=False):
    return la.einsum_adjoint(g, subscripts, i, a, b, c, d, optimize=optimize)


def einsum_with_s(g, ans, v, subscripts, i, a, b=None, c=None, d=None, *, optimize=False):
    return (
        zeros_like(subscripts)
        if i == -1
        else la.einsum_adjoint(
            g,
            subscripts,
            -1,
            v if i == 0 else a,
            v if i == 1 else b,
            v if i == 2 else c,
            v if i == 3 else d,
            optimize=optimize,
        )
    )


def einsum_with_a(g, ans, v, subscripts, i, a, b=None, c=None, d=None, *, optimize=False):
    return (
        zeros_like(a)
        if i == 0
        else la.einsum_adjoint(
            g,
            v if i == -1 else subscripts,
            0,
            a,
            v if i == 1 else b,
            v if i == 2 else c,
            v if i == 3 else d,
            optimize=optimize,
        )
    )


def einsum_with_b(g, ans, v, subscripts, i, a, b=None, c=None, d=None, *, optimize=False):
    return (
        zeros_like(b)
        if i == 1
        else la.einsum_adjoint(
            g,
            v if i == -1 else subscripts,
            1,
            v if i == 0 else a,
            b,
            v if i == 2 else c,
            v if i == 3 else d,
            optimize=optimize,
        )
    )


def einsum_with_c(g, ans, v, subscripts, i, a, b=None, c=None, d=None, *, optimize=False):
    return (
        zeros_like(c)
        if i == 2
        else la.einsum_adjoint(
            g,
            v if i == -1 else subscripts,
            2,
            v if i == 0 else a,
            v if i == 1 else b,
            c,
            v if i == 3 else d,
            optimize=optimize,
        )
    )


def einsum_with_d(g, ans, v, subscripts, i, a, b=None, c=None, d=None, *, optimize=False):
    return (
        zeros_like(d)
        if i == 3
        else la.einsum_adjoint(
            g,
            v if i == -1 else subscripts,
            3,
            v if i == 0 else a,
            v if i == 1 else b,
            v if i == 2 else c,
            d,
            optimize=optimize,
        )
    )


defvjp(
    la.einsum_with,
    v=einsum_with_v,
    subscripts=einsum_with_s,
    a=einsum_with_a,
    b=einsum_with_b,
    c=einsum_with_c,
    d=einsum_with_d,
)


def einsum_with_v_jvp(t, ans, v, subscripts, i, a, b=None, c=None, d=None, *, optimize=False):
    return la.einsum_with(t, subscripts, i, a, b, c, d, optimize=optimize)


def einsum_with_s_jvp(t, ans, v, subscripts, i, a, b=None, c=None, d=None, *, optimize=False):
    return np.zeros_like(ans) if i == -1 else la.einsum_with(v, t, i, a, b, c, d, optimize=optimize)


def einsum_with_a_jvp(t, ans, v, subscripts, i, a, b=None, c=None, d=None, *, optimize=False):
    return (
        np.zeros_like(ans)
        if i == 0
        else la.einsum_with(v, subscripts, i, t, b, c, d, optimize=optimize)
    )


def einsum_with_b_jvp(t, ans, v, subscripts, i, a, b=None, c=None, d=None, *, optimize=False):
    return (
        np.zeros_like(ans)
        if i == 1
        else la.einsum_with(v, subscripts, i, a, t, c, d, optimize=optimize)
    )


def einsum_with_c_jvp(t, ans, v, subscripts, i, a, b=None, c=None, d=None, *, optimize=False):
    return (
        np.zeros_like(ans)
        if i == 2
        else la.einsum_with(v, subscripts, i, a, b, t, d, optimize=optimize)
    )


def einsum_with_d_jvp(t, ans, v, subscripts, i, a, b=None, c=None, d=None, *, optimize=False):
    return (
        np.zeros_like(ans)
        if i == 3
        else la.einsum_with(v, subscripts, i, a, b, c, t, optimize=optimize)
    )


defjvp(
    la.einsum_with,
    v=einsum_with_v_jvp,
    subscripts=einsum_with_s_jvp,
    a=einsum_with_a_jvp,
    b=einsum_with_b_jvp,
    c=einsum_with_c_jvp,
    d=einsum_with_d_jvp,
)
