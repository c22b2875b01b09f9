"""Rules of the helpers of the rules of reductions (cpsad/rules/reductions.py): ``expand``, the
adjoint and tangent rules of ``max``/``min``, ``var``, ``std`` and ``cumsum``, and
``reverse_cumsum``.

Every helper here is linear in the adjoint or tangent it takes (``c``, ``v``); its tangent rule
there is the helper itself, its adjoint rule its transpose: the other direction's helper
(``max_vjp`` and ``max_jvp`` are each other's), or numpy's sum or cumulative sum. Which elements are
maximal is discrete. The helpers of ``var`` and ``std`` also read ``a`` (and ``std``'s ``out``):
their partial derivatives there are products of the same helpers, so the rules close on the family.
"""

from __future__ import annotations

import numpy as np

from cpsad.rules import reductions as rd
from cpsad.rules.core import defjvp, defvjp
from cpsad.runtime import unbroadcast


def expand_c(g, ans, c, x, axis=None, keepdims=False):
    """Broadcasting over the reduced axes transposes to summing over them."""
    return unbroadcast(np.sum(g, axis=axis, keepdims=keepdims), c)


defvjp(rd.expand, c=expand_c)


def expand_c_jvp(t, ans, c, x, axis=None, keepdims=False):
    return rd.expand(t, x, axis=axis, keepdims=keepdims)


defjvp(rd.expand, c=expand_c_jvp)


def max_vjp_c(g, ans, c, out, a, axis=None, *, keepdims=False):
    """Which elements are maximal is discrete: ``out`` and ``a`` have no derivative here."""
    return rd.max_jvp(g, out, a, axis=axis, keepdims=keepdims)


defvjp(rd.max_vjp, c=max_vjp_c)


def max_vjp_c_jvp(t, ans, c, out, a, axis=None, *, keepdims=False):
    return rd.max_vjp(t, out, a, axis=axis, keepdims=keepdims)


defjvp(rd.max_vjp, c=max_vjp_c_jvp)


def max_jvp_v(g, ans, v, out, a, axis=None, *, keepdims=False):
    return rd.max_vjp(g, out, a, axis=axis, keepdims=keepdims)


defvjp(rd.max_jvp, v=max_jvp_v)


def max_jvp_v_jvp(t, ans, v, out, a, axis=None, *, keepdims=False):
    return rd.max_jvp(t, out, a, axis=axis, keepdims=keepdims)


defjvp(rd.max_jvp, v=max_jvp_v_jvp)


def var_vjp_c(g, ans, c, out, a, axis=None, *, ddof=0, keepdims=False):
    return rd.var_jvp(g, out, a, axis=axis, ddof=ddof, keepdims=keepdims)


def var_vjp_a(g, ans, c, out, a, axis=None, *, ddof=0, keepdims=False):
    """``var_vjp`` is ``2 expand(c) (a - mean(a)) / (n - ddof)``, linear in ``a``; centring is
    its own transpose."""
    return rd.var_vjp(
        np.ones_like(c),
        out,
        rd.expand(c, a, axis=axis, keepdims=keepdims) * g,
        axis=axis,
        ddof=ddof,
        keepdims=keepdims,
    )


defvjp(rd.var_vjp, c=var_vjp_c, a=var_vjp_a)


def var_vjp_c_jvp(t, ans, c, out, a, axis=None, *, ddof=0, keepdims=False):
    return rd.var_vjp(t, out, a, axis=axis, ddof=ddof, keepdims=keepdims)


def var_vjp_a_jvp(t, ans, c, out, a, axis=None, *, ddof=0, keepdims=False):
    return rd.var_vjp(c, out, t, axis=axis, ddof=ddof, keepdims=keepdims)


defjvp(rd.var_vjp, c=var_vjp_c_jvp, a=var_vjp_a_jvp)


def var_jvp_v(g, ans, v, out, a, axis=None, *, ddof=0, keepdims=False):
    return rd.var_vjp(g, out, a, axis=axis, ddof=ddof, keepdims=keepdims)


def var_jvp_a(g, ans, v, out, a, axis=None, *, ddof=0, keepdims=False):
    return rd.var_vjp(
        np.ones_like(g),
        out,
        rd.expand(g, a, axis=axis, keepdims=keepdims) * v,
        axis=axis,
        ddof=ddof,
        keepdims=keepdims,
    )


defvjp(rd.var_jvp, v=var_jvp_v, a=var_jvp_a)


def var_jvp_v_jvp(t, ans, v, out, a, axis=None, *, ddof=0, keepdims=False):
    return rd.var_jvp(t, out, a, axis=axis, ddof=ddof, keepdims=keepdims)


def var_jvp_a_jvp(t, ans, v, out, a, axis=None, *, ddof=0, keepdims=False):
    return rd.var_jvp(v, out, t, axis=axis, ddof=ddof, keepdims=keepdims)


defjvp(rd.var_jvp, v=var_jvp_v_jvp, a=var_jvp_a_jvp)


def std_vjp_c(g, ans, c, out, a, axis=None, *, ddof=0, keepdims=False):
    return rd.std_jvp(g, out, a, axis=axis, ddof=ddof, keepdims=keepdims)


def std_vjp_a(g, ans, c, out, a, axis=None, *, ddof=0, keepdims=False):
    """``std_vjp`` is ``expand(c / out) (a - mean(a)) / (n - ddof)``: ``c = out`` makes the first
    factor one."""
    return rd.std_vjp(
        out,
        out,
        rd.expand(c / out, a, axis=axis, keepdims=keepdims) * g,
        axis=axis,
        ddof=ddof,
        keepdims=keepdims,
    )


def std_vjp_out(g, ans, c, out, a, axis=None, *, ddof=0, keepdims=False):
    return -c * rd.std_jvp(g, out, a, axis=axis, ddof=ddof, keepdims=keepdims) / out


defvjp(rd.std_vjp, c=std_vjp_c, a=std_vjp_a, out=std_vjp_out)


def std_vjp_c_jvp(t, ans, c, out, a, axis=None, *, ddof=0, keepdims=False):
    return rd.std_vjp(t, out, a, axis=axis, ddof=ddof, keepdims=keepdims)


def std_vjp_a_jvp(t, ans, c, out, a, axis=None, *, ddof=0, keepdims=False):
    return rd.std_vjp(c, out, t, axis=axis, ddof=ddof, keepdims=keepdims)


def std_vjp_out_jvp(t, ans, c, out, a, axis=None, *, ddof=0, keepdims=False):
    return rd.std_vjp(-c * t / out, out, a, axis=axis, ddof=ddof, keepdims=keepdims)


defjvp(rd.std_vjp, c=std_vjp_c_jvp, a=std_vjp_a_jvp, out=std_vjp_out_jvp)


def std_jvp_v(g, ans, v, out, a, axis=None, *, ddof=0, keepdims=False):
    return rd.std_vjp(g, out, a, axis=axis, ddof=ddof, keepdims=keepdims)


def std_jvp_a(g, ans, v, out, a, axis=None, *, ddof=0, keepdims=False):
    return rd.std_vjp(
        out,
        out,
        rd.expand(g / out, a, axis=axis, keepdims=keepdims) * v,
        axis=axis,
        ddof=ddof,
        keepdims=keepdims,
    )


def std_jvp_out(g, ans, v, out, a, axis=None, *, ddof=0, keepdims=False):
    return -g * rd.std_jvp(v, out, a, axis=axis, ddof=ddof, keepdims=keepdims) / out


defvjp(rd.std_jvp, v=std_jvp_v, a=std_jvp_a, out=std_jvp_out)


def std_jvp_v_jvp(t, ans, v, out, a, axis=None, *, ddof=0, keepdims=False):
    return rd.std_jvp(t, out, a, axis=axis, ddof=ddof, keepdims=keepdims)


def std_jvp_a_jvp(t, ans, v, out, a, axis=None, *, ddof=0, keepdims=False):
    return rd.std_jvp(v, out, t, axis=axis, ddof=ddof, keepdims=keepdims)


def std_jvp_out_jvp(t, ans, v, out, a, axis=None, *, ddof=0, keepdims=False):
    return -t * rd.std_jvp(v, out, a, axis=axis, ddof=ddof, keepdims=keepdims) / out


defjvp(rd.std_jvp, v=std_jvp_v_jvp, a=std_jvp_a_jvp, out=std_jvp_out_jvp)


def cumsum_c(g, ans, c, out, a, axis=None):
    """A cumulative sum from the end transposes to one from the start."""
    return np.cumsum(g, axis=axis)


defvjp(rd.cumsum, c=cumsum_c)


def cumsum_c_jvp(t, ans, c, out, a, axis=None):
    return rd.cumsum(t, out, a, axis=axis)


defjvp(rd.cumsum, c=cumsum_c_jvp)


def reverse_cumsum_x(g, ans, x, axis):
    return np.cumsum(g, axis=axis)


defvjp(rd.reverse_cumsum, x=reverse_cumsum_x)


def reverse_cumsum_x_jvp(t, ans, x, axis):
    return rd.reverse_cumsum(t, axis)


defjvp(rd.reverse_cumsum, x=reverse_cumsum_x_jvp)
