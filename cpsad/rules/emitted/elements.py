"""Rules of the helpers of the rules of products of elements (cpsad/rules/reductions.py):
``cumprod`` and ``cumprod_jvp`` (``np.cumprod``'s adjoint and tangent), ``prod_vjp`` and
``prod_jvp`` (``np.prod``'s), and ``prod_hessian``, the second derivatives of the product.

Each switches formulas at zeros. Every rule here holds the zeros' positions fixed, and the
derivative along a zero reaches the result through ``ans`` (``out``): the two add up to the
derivative of the helper along ``ans = f(x)``. The rules are expressions of the same helpers and of
the masks of where a row has its first and second zeros (``first_zeros``, ``second_zeros``:
non-differentiable), along ``axis`` in the flattened layout ``along`` gives (``axis=None``: the
flattened array); a row's first zero is where the adjoint rule stops dividing. ``prod_hessian``'s
rules leave ``out`` and ``a`` out: those are third derivatives of the product, which no rule gives
yet (differentiating in them is an error that names the parameter).
"""

from __future__ import annotations

import numpy as np

from cpsad.rules import reductions as rd
from cpsad.rules.core import defjvp, defnondiff, defvjp
from cpsad.runtime import as_array, maybe_any


def along(x, axis):
    """``x`` as ``np.cumprod(x, axis)`` reads it: flattened when ``axis`` is None."""
    return np.ravel(x) if axis is None else x


def axis_or_0(axis):
    return 0 if axis is None else axis


def zeros_along(a, axis):
    """Where ``along(a, axis)`` is zero."""
    return along(a, axis) == 0


def first_zeros(a, axis):
    """Where each row of ``along(a, axis)`` has its first zero."""
    zero = zeros_along(a, axis)
    return zero & (np.cumsum(zero, axis=axis_or_0(axis)) == 1)


def from_first_zero(a, axis):
    """From each row's first zero on (the partial products that hold it)."""
    return np.cumsum(zeros_along(a, axis), axis=axis_or_0(axis)) > 0


def zero_count(a, axis):
    """How many zeros each row of ``along(a, axis)`` has up to each place."""
    return np.cumsum(zeros_along(a, axis), axis=axis_or_0(axis))


def second_zeros(a, axis):
    """Where each row of ``along(a, axis)`` has its second zero."""
    return zeros_along(a, axis) & (zero_count(a, axis) == 2)


defnondiff(axis_or_0, zeros_along, first_zeros, from_first_zero, zero_count, second_zeros)


def zeros_as_one(a, axis):
    """``along(a, axis)`` with its zeros made one (what the rules divide by)."""
    return np.where(zeros_along(a, axis), 1, along(a, axis))


def first_as_one(a, axis):
    """``along(a, axis)`` with each row's first zero made one (the products without it)."""
    return np.where(first_zeros(a, axis), 1, along(a, axis))


def along_x(g, ans, x, axis):
    return np.reshape(g, np.shape(x))


def along_x_jvp(t, ans, x, axis):
    return along(t, axis)


defvjp(along, x=along_x)
defjvp(along, x=along_x_jvp)


def zeros_as_one_a(g, ans, a, axis):
    return np.reshape(np.where(zeros_along(a, axis), 0, g), np.shape(a))


def zeros_as_one_a_jvp(t, ans, a, axis):
    return np.where(zeros_along(a, axis), 0, along(t, axis))


defvjp(zeros_as_one, a=zeros_as_one_a)
defjvp(zeros_as_one, a=zeros_as_one_a_jvp)


def first_as_one_a(g, ans, a, axis):
    return np.reshape(np.where(first_zeros(a, axis), 0, g), np.shape(a))


def first_as_one_a_jvp(t, ans, a, axis):
    return np.where(first_zeros(a, axis), 0, along(t, axis))


defvjp(first_as_one, a=first_as_one_a)
defjvp(first_as_one, a=first_as_one_a_jvp)

# cumprod(c, out, a, axis): rows without a zero, reverse_cumsum(c out) / a; with one, at the
# first zero reverse_cumsum(c W) with W = cumprod(first_as_one(a)), elsewhere
# reverse_cumsum(c out) / zeros_as_one(a). Moving a zero of a (out held) jumps to the other
# formula: along the zeros the partial derivatives are what the derivative along out = cumprod(a)
# needs beyond what reaches it through out -- at a row's second zero, the moving first zero's
# share (cumprod's gradient there sums c times the products without both zeros).


def beyond_second_zero(c, a, axis):
    """What moving each row's first zero adds, per unit, to ``cumprod(c, ., a)`` at its second
    zero: the sum from there to the third zero of ``c`` times the products without the zeros."""
    return rd.reverse_cumsum(
        c * np.cumprod(zeros_as_one(a, axis), axis=axis_or_0(axis)) * (zero_count(a, axis) <= 2),
        axis_or_0(axis),
    )


def cumprod_c(g, ans, c, out, a, axis=None):
    return rd.cumprod_jvp(g, out, a, axis=axis)


def cumprod_out(g, ans, c, out, a, axis=None):
    return c * np.cumsum(
        np.where(first_zeros(a, axis), 0, along(g, axis)) / zeros_as_one(a, axis),
        axis=axis_or_0(axis),
    )


def cumprod_a(g, ans, c, out, a, axis=None):
    return np.reshape(
        np.where(
            first_zeros(a, axis),
            0,
            rd.cumprod(
                c
                * np.cumsum(
                    np.where(first_zeros(a, axis), along(g, axis), 0), axis=axis_or_0(axis)
                ),
                np.cumprod(first_as_one(a, axis), axis=axis_or_0(axis)),
                first_as_one(a, axis),
                axis=axis_or_0(axis),
            ),
        )
        + np.where(
            zeros_along(a, axis), 0, -along(ans, axis) * along(g, axis) / zeros_as_one(a, axis)
        )
        + first_zeros(a, axis)
        * np.sum(
            np.where(second_zeros(a, axis), along(g, axis), 0) * beyond_second_zero(c, a, axis),
            axis=axis_or_0(axis),
            keepdims=True,
        ),
        np.shape(a),
    )


defvjp(rd.cumprod, c=cumprod_c, out=cumprod_out, a=cumprod_a)


def cumprod_c_jvp(t, ans, c, out, a, axis=None):
    return rd.cumprod(t, out, a, axis=axis)


def cumprod_out_jvp(t, ans, c, out, a, axis=None):
    return np.where(
        np.reshape(first_zeros(a, axis), np.shape(a)), 0, rd.cumprod(c, t, a, axis=axis)
    )


def cumprod_a_jvp(t, ans, c, out, a, axis=None):
    """At a row's first zero, ``W`` moves as ``cumprod_jvp``; elsewhere the divisor moves."""
    return np.reshape(
        np.where(
            first_zeros(a, axis),
            rd.reverse_cumsum(
                c
                * rd.cumprod_jvp(
                    np.where(first_zeros(a, axis), 0, along(t, axis)),
                    np.cumprod(first_as_one(a, axis), axis=axis_or_0(axis)),
                    first_as_one(a, axis),
                    axis=axis_or_0(axis),
                ),
                axis_or_0(axis),
            ),
            -along(ans, axis)
            * np.where(zeros_along(a, axis), 0, along(t, axis))
            / zeros_as_one(a, axis),
        )
        + np.where(
            second_zeros(a, axis),
            np.sum(along(t, axis) * first_zeros(a, axis), axis=axis_or_0(axis), keepdims=True)
            * beyond_second_zero(c, a, axis),
            0,
        ),
        np.shape(a),
    )


defjvp(rd.cumprod, c=cumprod_c_jvp, out=cumprod_out_jvp, a=cumprod_a_jvp)


def beyond_second_zero_c(g, ans, c, a, axis):
    return (
        np.cumsum(g, axis=axis_or_0(axis))
        * np.cumprod(zeros_as_one(a, axis), axis=axis_or_0(axis))
        * (zero_count(a, axis) <= 2)
    )


def beyond_second_zero_a(g, ans, c, a, axis):
    return np.reshape(
        np.where(
            zeros_along(a, axis),
            0,
            rd.cumprod(
                c * (zero_count(a, axis) <= 2) * np.cumsum(g, axis=axis_or_0(axis)),
                np.cumprod(zeros_as_one(a, axis), axis=axis_or_0(axis)),
                zeros_as_one(a, axis),
                axis=axis_or_0(axis),
            ),
        ),
        np.shape(a),
    )


defvjp(beyond_second_zero, c=beyond_second_zero_c, a=beyond_second_zero_a)


def beyond_second_zero_c_jvp(t, ans, c, a, axis):
    return beyond_second_zero(t, a, axis)


def beyond_second_zero_a_jvp(t, ans, c, a, axis):
    return rd.reverse_cumsum(
        c
        * rd.cumprod_jvp(
            np.where(zeros_along(a, axis), 0, along(t, axis)),
            np.cumprod(zeros_as_one(a, axis), axis=axis_or_0(axis)),
            zeros_as_one(a, axis),
            axis=axis_or_0(axis),
        )
        * (zero_count(a, axis) <= 2),
        axis_or_0(axis),
    )


defjvp(beyond_second_zero, c=beyond_second_zero_c_jvp, a=beyond_second_zero_a_jvp)


# cumprod_jvp(v, out, a, axis): rows without a zero, out cumsum(v / a); with one, from the first
# zero on (v at that zero) times W, before it out cumsum(v / zeros_as_one(a)). Along a row's first
# zero, from there on, the partial derivative in a holds what moving it adds to the other
# elements' terms (out is zero there, nothing reaches them through it).


def past_first_zero(v, a, axis):
    """What moving each row's first zero adds, per unit, to ``cumprod_jvp(v, ., a)`` from there
    on: up to the second zero, the products without the zero times the sum of the others'
    ``v / a``; from the second zero to the third, those products times ``v`` at the second."""
    return np.cumprod(zeros_as_one(a, axis), axis=axis_or_0(axis)) * (
        (zero_count(a, axis) == 1)
        * np.cumsum(
            np.where(zeros_along(a, axis), 0, along(v, axis)) / zeros_as_one(a, axis),
            axis=axis_or_0(axis),
        )
        + (zero_count(a, axis) == 2)
        * np.sum(along(v, axis) * second_zeros(a, axis), axis=axis_or_0(axis), keepdims=True)
    )


def past_first_zero_v(g, ans, v, a, axis):
    return np.reshape(
        np.where(
            zeros_along(a, axis),
            0,
            rd.reverse_cumsum(
                g
                * np.cumprod(zeros_as_one(a, axis), axis=axis_or_0(axis))
                * (zero_count(a, axis) == 1),
                axis_or_0(axis),
            )
            / zeros_as_one(a, axis),
        )
        + second_zeros(a, axis)
        * np.sum(
            g
            * np.cumprod(zeros_as_one(a, axis), axis=axis_or_0(axis))
            * (zero_count(a, axis) == 2),
            axis=axis_or_0(axis),
            keepdims=True,
        ),
        np.shape(v),
    )


def past_first_zero_a(g, ans, v, a, axis):
    return np.reshape(
        np.where(
            zeros_along(a, axis),
            0,
            rd.cumprod(
                g
                * (
                    (zero_count(a, axis) == 1)
                    * np.cumsum(
                        np.where(zeros_along(a, axis), 0, along(v, axis)) / zeros_as_one(a, axis),
                        axis=axis_or_0(axis),
                    )
                    + (zero_count(a, axis) == 2)
                    * np.sum(
                        along(v, axis) * second_zeros(a, axis),
                        axis=axis_or_0(axis),
                        keepdims=True,
                    )
                ),
                np.cumprod(zeros_as_one(a, axis), axis=axis_or_0(axis)),
                zeros_as_one(a, axis),
                axis=axis_or_0(axis),
            )
            - np.where(zeros_along(a, axis), 0, along(v, axis))
            / zeros_as_one(a, axis) ** 2
            * rd.reverse_cumsum(
                g
                * np.cumprod(zeros_as_one(a, axis), axis=axis_or_0(axis))
                * (zero_count(a, axis) == 1),
                axis_or_0(axis),
            ),
        ),
        np.shape(a),
    )


defvjp(past_first_zero, v=past_first_zero_v, a=past_first_zero_a)


def past_first_zero_v_jvp(t, ans, v, a, axis):
    return past_first_zero(t, a, axis)


def past_first_zero_a_jvp(t, ans, v, a, axis):
    return rd.cumprod_jvp(
        np.where(zeros_along(a, axis), 0, along(t, axis)),
        np.cumprod(zeros_as_one(a, axis), axis=axis_or_0(axis)),
        zeros_as_one(a, axis),
        axis=axis_or_0(axis),
    ) * (
        (zero_count(a, axis) == 1)
        * np.cumsum(
            np.where(zeros_along(a, axis), 0, along(v, axis)) / zeros_as_one(a, axis),
            axis=axis_or_0(axis),
        )
        + (zero_count(a, axis) == 2)
        * np.sum(along(v, axis) * second_zeros(a, axis), axis=axis_or_0(axis), keepdims=True)
    ) + np.cumprod(
        zeros_as_one(a, axis), axis=axis_or_0(axis)
    ) * (
        zero_count(a, axis) == 1
    ) * np.cumsum(
        -np.where(zeros_along(a, axis), 0, along(v, axis))
        * np.where(zeros_along(a, axis), 0, along(t, axis))
        / zeros_as_one(a, axis) ** 2,
        axis=axis_or_0(axis),
    )


defjvp(past_first_zero, v=past_first_zero_v_jvp, a=past_first_zero_a_jvp)


def cumprod_jvp_v(g, ans, v, out, a, axis=None):
    return rd.cumprod(g, out, a, axis=axis)


def cumprod_jvp_out(g, ans, v, out, a, axis=None):
    return np.where(
        from_first_zero(a, axis),
        0,
        g * np.cumsum(along(v, axis) / zeros_as_one(a, axis), axis=axis_or_0(axis)),
    )


def cumprod_jvp_a(g, ans, v, out, a, axis=None):
    return np.reshape(
        np.where(
            first_zeros(a, axis),
            0,
            rd.cumprod(
                np.sum(along(v, axis) * first_zeros(a, axis), axis=axis_or_0(axis), keepdims=True)
                * np.where(from_first_zero(a, axis), g, 0),
                np.cumprod(first_as_one(a, axis), axis=axis_or_0(axis)),
                first_as_one(a, axis),
                axis=axis_or_0(axis),
            ),
        )
        + np.where(
            zeros_along(a, axis),
            0,
            -rd.reverse_cumsum(out * np.where(from_first_zero(a, axis), 0, g), axis_or_0(axis))
            * along(v, axis)
            / zeros_as_one(a, axis) ** 2,
        )
        + first_zeros(a, axis)
        * np.sum(g * past_first_zero(v, a, axis), axis=axis_or_0(axis), keepdims=True),
        np.shape(a),
    )


defvjp(rd.cumprod_jvp, v=cumprod_jvp_v, out=cumprod_jvp_out, a=cumprod_jvp_a)


def cumprod_jvp_v_jvp(t, ans, v, out, a, axis=None):
    return rd.cumprod_jvp(t, out, a, axis=axis)


def cumprod_jvp_out_jvp(t, ans, v, out, a, axis=None):
    return np.where(
        from_first_zero(a, axis),
        0,
        t * np.cumsum(along(v, axis) / zeros_as_one(a, axis), axis=axis_or_0(axis)),
    )


def cumprod_jvp_a_jvp(t, ans, v, out, a, axis=None):
    return np.where(
        from_first_zero(a, axis),
        np.sum(along(v, axis) * first_zeros(a, axis), axis=axis_or_0(axis), keepdims=True)
        * rd.cumprod_jvp(
            np.where(first_zeros(a, axis), 0, along(t, axis)),
            np.cumprod(first_as_one(a, axis), axis=axis_or_0(axis)),
            first_as_one(a, axis),
            axis=axis_or_0(axis),
        ),
        -out
        * np.cumsum(
            along(v, axis)
            * np.where(zeros_along(a, axis), 0, along(t, axis))
            / zeros_as_one(a, axis) ** 2,
            axis=axis_or_0(axis),
        ),
    ) + np.sum(
        along(t, axis) * first_zeros(a, axis), axis=axis_or_0(axis), keepdims=True
    ) * past_first_zero(
        v, a, axis
    )


defjvp(rd.cumprod_jvp, v=cumprod_jvp_v_jvp, out=cumprod_jvp_out_jvp, a=cumprod_jvp_a_jvp)


def prod_hessian(v, c, out, a, axis=None, keepdims=False):
    """How ``prod_vjp(c, out, a)`` moves with ``a`` along ``v``, ``out`` held: ``expand(c)`` times
    the second derivatives of the product. Without zeros that is ``-prod_vjp(c, out, a) v / a``;
    with them, each element's product of the others is the product of those before it and those
    after it, and their tangents are tangents of cumulative products (zeros handled there).
    Symmetric in ``v``; linear in ``v`` and ``c``."""
    a = as_array(a)
    if not maybe_any(a == 0):
        return -rd.prod_vjp(c, out, a, axis=axis, keepdims=keepdims) * v / a
    ax = tuple(range(a.ndim)) if axis is None else ((axis,) if np.ndim(axis) == 0 else tuple(axis))
    ax = tuple(i % a.ndim for i in ax)
    front = tuple(range(len(ax)))
    moved = np.moveaxis(a, ax, front)
    fa = moved.reshape((-1,) + moved.shape[len(ax) :])
    fv = np.moveaxis(np.broadcast_to(v, a.shape), ax, front).reshape(fa.shape)
    ones, zeros = np.ones_like(fa[:1]), np.zeros_like(fv[:1])
    before, dbefore = np.concatenate([ones, fa[:-1]]), np.concatenate([zeros, fv[:-1]])
    left = np.cumprod(before, axis=0)
    dleft = rd.cumprod_jvp(dbefore, left, before, axis=0)
    after, dafter = np.concatenate([ones, fa[::-1][:-1]]), np.concatenate([zeros, fv[::-1][:-1]])
    right = np.cumprod(after, axis=0)
    dright = rd.cumprod_jvp(dafter, right, after, axis=0)
    d = (dleft * right[::-1] + left * dright[::-1]).reshape(moved.shape)
    return rd.expand(c, a, axis=axis, keepdims=keepdims) * np.moveaxis(d, front, ax)


def prod_hessian_v(g, ans, v, c, out, a, axis=None, keepdims=False):
    return prod_hessian(g, c, out, a, axis=axis, keepdims=keepdims)


def prod_hessian_c(g, ans, v, c, out, a, axis=None, keepdims=False):
    return np.sum(
        prod_hessian(v, np.ones_like(c), out, a, axis=axis, keepdims=keepdims) * g,
        axis=axis,
        keepdims=keepdims,
    )


# out and a: third derivatives of the product, which no rule gives yet
defvjp(prod_hessian, v=prod_hessian_v, c=prod_hessian_c, out=None, a=None)


def prod_hessian_v_jvp(t, ans, v, c, out, a, axis=None, keepdims=False):
    return prod_hessian(t, c, out, a, axis=axis, keepdims=keepdims)


def prod_hessian_c_jvp(t, ans, v, c, out, a, axis=None, keepdims=False):
    return prod_hessian(v, t, out, a, axis=axis, keepdims=keepdims)


defjvp(prod_hessian, v=prod_hessian_v_jvp, c=prod_hessian_c_jvp)

# prod_vjp(c, out, a) is expand(c out) / a without zeros, expand(c) times the products of the
# others with them (then it does not read out).


def prod_vjp_c(g, ans, c, out, a, axis=None, *, keepdims=False):
    return rd.prod_jvp(g, out, a, axis=axis, keepdims=keepdims)


def prod_vjp_out(g, ans, c, out, a, axis=None, *, keepdims=False):
    return (
        c * np.sum(g / a, axis=axis, keepdims=keepdims)
        if not maybe_any(a == 0)
        else 0.0 * c * np.sum(g, axis=axis, keepdims=keepdims)
    )


def prod_vjp_a(g, ans, c, out, a, axis=None, *, keepdims=False):
    return prod_hessian(g, c, out, a, axis=axis, keepdims=keepdims)


defvjp(rd.prod_vjp, c=prod_vjp_c, out=prod_vjp_out, a=prod_vjp_a)


def prod_vjp_c_jvp(t, ans, c, out, a, axis=None, *, keepdims=False):
    return rd.prod_vjp(t, out, a, axis=axis, keepdims=keepdims)


def prod_vjp_out_jvp(t, ans, c, out, a, axis=None, *, keepdims=False):
    return (
        rd.expand(c * t, a, axis=axis, keepdims=keepdims) / a
        if not maybe_any(a == 0)
        else 0.0 * rd.expand(c * t, a, axis=axis, keepdims=keepdims)
    )


def prod_vjp_a_jvp(t, ans, c, out, a, axis=None, *, keepdims=False):
    return prod_hessian(t, c, out, a, axis=axis, keepdims=keepdims)


defjvp(rd.prod_vjp, c=prod_vjp_c_jvp, out=prod_vjp_out_jvp, a=prod_vjp_a_jvp)


def prod_jvp_v(g, ans, v, out, a, axis=None, *, keepdims=False):
    return rd.prod_vjp(g, out, a, axis=axis, keepdims=keepdims)


def prod_jvp_out(g, ans, v, out, a, axis=None, *, keepdims=False):
    return (
        np.sum(rd.expand(g, a, axis=axis, keepdims=keepdims) * v / a, axis=axis, keepdims=keepdims)
        if not maybe_any(a == 0)
        else 0.0 * g
    )


def prod_jvp_a(g, ans, v, out, a, axis=None, *, keepdims=False):
    return prod_hessian(v, g, out, a, axis=axis, keepdims=keepdims)


defvjp(rd.prod_jvp, v=prod_jvp_v, out=prod_jvp_out, a=prod_jvp_a)


def prod_jvp_v_jvp(t, ans, v, out, a, axis=None, *, keepdims=False):
    return rd.prod_jvp(t, out, a, axis=axis, keepdims=keepdims)


def prod_jvp_out_jvp(t, ans, v, out, a, axis=None, *, keepdims=False):
    return (
        np.sum(v * rd.expand(t, a, axis=axis, keepdims=keepdims) / a, axis=axis, keepdims=keepdims)
        if not maybe_any(a == 0)
        else 0.0 * t
    )


def prod_jvp_a_jvp(t, ans, v, out, a, axis=None, *, keepdims=False):
    return np.sum(
        v * prod_hessian(t, np.ones_like(out), out, a, axis=axis, keepdims=keepdims),
        axis=axis,
        keepdims=keepdims,
    )


defjvp(rd.prod_jvp, v=prod_jvp_v_jvp, out=prod_jvp_out_jvp, a=prod_jvp_a_jvp)
