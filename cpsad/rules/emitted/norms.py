"""Rules of the helpers of ``np.linalg.norm``'s rules (cpsad/rules/linalg.py): ``norm_vjp``,
``norm_jvp``, and ``norm_hessian``, the second derivatives of the norm. ``norm_vjp(c, out, x)``
is ``expand(c)`` times a gradient ``D(out, x)`` of the norm; ``D`` moves with ``out`` as
``out^-(p - 1)`` for a p-norm (not at all for the norms that are steps or singular values).

Every helper here is linear in its adjoint or tangent (``c``, ``v``); its rules in ``x`` are
``norm_hessian``, in ``out`` the helpers themselves scaled by ``-norm_exponent / out``.
``norm_hessian``'s rules leave ``out`` and ``x`` out: those are third derivatives of the norm,
which no rule gives yet (differentiating in them is an error that names the parameter).
"""

from __future__ import annotations

import numpy as np

from cpsad.rules import linalg as la
from cpsad.rules.core import defjvp, defnondiff, defvjp
from cpsad.runtime import as_array


def norm_axes(x, ord, axis):
    """``(axes, matrix)``: the axes ``np.linalg.norm`` reduces, and whether it is a matrix norm."""
    nd = np.ndim(x)
    if axis is None:
        return tuple(range(nd)), nd == 2 and ord is not None
    axes = (axis,) if np.ndim(axis) == 0 else tuple(axis)
    return tuple(a % nd for a in axes), len(axes) == 2


def norm_exponent(x, ord, axis):
    """``p - 1`` for a norm whose gradient divides by ``out ** (p - 1)``; 0 where it does not
    depend on ``out`` (1, inf, 0 and the singular-value norms)."""
    _, matrix = norm_axes(x, ord, axis)
    if matrix:
        return 1 if ord is None or ord == "fro" else 0
    if ord is None:
        return 1
    return 0 if ord in (1, 0, np.inf, -np.inf) else ord - 1


defnondiff(norm_axes, norm_exponent)


def norm_hessian(v, c, out, x, ord=None, axis=None, keepdims=False):
    """How ``norm_vjp(c, out, x)`` moves with ``x`` along ``v``, ``out`` held: ``expand(c)`` times
    the derivative of the norm's gradient (for the nuclear and spectral norms, of the polar factor
    ``U V^T`` and of ``u v^T``, from the SVD: distinct singular values, full rank). Symmetric in
    ``v``; linear in ``v`` and ``c``."""
    x = as_array(x)
    axes, matrix = norm_axes(x, ord, axis)
    if not keepdims:
        c, out = np.expand_dims(c, axes), np.expand_dims(out, axes)
    dtype = np.result_type(x, c, v)
    if not matrix:
        if ord is None or ord == 2:
            return (c / np.where(out == 0, 1, out) * v).astype(dtype, copy=False)
        if ord in (1, 0, np.inf, -np.inf):
            return np.zeros(x.shape, dtype)
        p = ord
        return (c * (p - 1) * np.abs(x) ** (p - 2) * v / out ** (p - 1)).astype(dtype, copy=False)
    rows, cols = axes
    xm, vm = (np.moveaxis(np.broadcast_to(y, x.shape), (rows, cols), (-2, -1)) for y in (x, v))
    cm = np.moveaxis(c, (rows, cols), (-2, -1))
    if ord is None or ord == "fro":
        d = vm / np.moveaxis(out, (rows, cols), (-2, -1))
    elif ord == "nuc" or ord in (2, -2):
        u, s, vt = np.linalg.svd(xm, full_matrices=False)
        w = la.mT(vt)
        p = la.mT(u) @ vm @ w  # the direction in the singular bases
        outside_u = vm @ w - u @ (la.mT(u) @ vm @ w)  # (I - U U^T) v V: beyond U's columns
        outside_v = la.mT(vm) @ u - w @ (vt @ la.mT(vm) @ u)  # (I - V V^T) v^T U
        if ord == "nuc":  # d(U V^T)
            omega = (p - la.mT(p)) / (s[..., :, None] + s[..., None, :])
            d = (
                u @ omega @ vt
                + (outside_u / s[..., None, :]) @ vt
                + u @ la.mT(outside_v / s[..., None, :])
            )
        else:  # d(u_k v_k^T), k the largest (2) or smallest (-2) singular value
            k = 0 if ord == 2 else -1
            sk = s[..., k, None]
            gap = sk**2 - s**2
            gap = np.where(np.arange(s.shape[-1]) == k % s.shape[-1], np.inf, gap)
            du = u @ ((sk * p[..., :, k] + s * p[..., k, :]) / gap)[..., None]
            du = du[..., 0] + outside_u[..., k] / sk
            dv = w @ ((s * p[..., :, k] + sk * p[..., k, :]) / gap)[..., None]
            dv = dv[..., 0] + outside_v[..., k] / sk
            d = du[..., :, None] * vt[..., k, None, :] + u[..., :, k, None] * dv[..., None, :]
    else:  # 1, -1, inf, -inf: a step
        d = np.zeros(xm.shape, dtype)
    return np.moveaxis(cm * d, (-2, -1), (rows, cols)).astype(dtype, copy=False)


def norm_hessian_v(g, ans, v, c, out, x, ord=None, axis=None, keepdims=False):
    return norm_hessian(g, c, out, x, ord=ord, axis=axis, keepdims=keepdims)


def norm_hessian_c(g, ans, v, c, out, x, ord=None, axis=None, keepdims=False):
    return np.sum(
        norm_hessian(v, np.ones_like(c), out, x, ord=ord, axis=axis, keepdims=keepdims) * g,
        axis=axis,
        keepdims=keepdims,
    )


# out and x: third derivatives of the norm, which no rule gives yet
defvjp(norm_hessian, v=norm_hessian_v, c=norm_hessian_c, out=None, x=None)


def norm_hessian_v_jvp(t, ans, v, c, out, x, ord=None, axis=None, keepdims=False):
    return norm_hessian(t, c, out, x, ord=ord, axis=axis, keepdims=keepdims)


def norm_hessian_c_jvp(t, ans, v, c, out, x, ord=None, axis=None, keepdims=False):
    return norm_hessian(v, t, out, x, ord=ord, axis=axis, keepdims=keepdims)


defjvp(norm_hessian, v=norm_hessian_v_jvp, c=norm_hessian_c_jvp)


def norm_vjp_c(g, ans, c, out, x, ord=None, axis=None, keepdims=False):
    return la.norm_jvp(g, out, x, ord=ord, axis=axis, keepdims=keepdims)


def norm_vjp_out(g, ans, c, out, x, ord=None, axis=None, keepdims=False):
    return (
        -norm_exponent(x, ord, axis)
        * c
        * la.norm_jvp(g, out, x, ord=ord, axis=axis, keepdims=keepdims)
        / np.where(out == 0, 1, out)
    )


def norm_vjp_x(g, ans, c, out, x, ord=None, axis=None, keepdims=False):
    return norm_hessian(g, c, out, x, ord=ord, axis=axis, keepdims=keepdims)


defvjp(la.norm_vjp, c=norm_vjp_c, out=norm_vjp_out, x=norm_vjp_x)


def norm_vjp_c_jvp(t, ans, c, out, x, ord=None, axis=None, keepdims=False):
    return la.norm_vjp(t, out, x, ord=ord, axis=axis, keepdims=keepdims)


def norm_vjp_out_jvp(t, ans, c, out, x, ord=None, axis=None, keepdims=False):
    return la.norm_vjp(
        -norm_exponent(x, ord, axis) * c * t / np.where(out == 0, 1, out),
        out,
        x,
        ord=ord,
        axis=axis,
        keepdims=keepdims,
    )


def norm_vjp_x_jvp(t, ans, c, out, x, ord=None, axis=None, keepdims=False):
    return norm_hessian(t, c, out, x, ord=ord, axis=axis, keepdims=keepdims)


defjvp(la.norm_vjp, c=norm_vjp_c_jvp, out=norm_vjp_out_jvp, x=norm_vjp_x_jvp)


def norm_jvp_v(g, ans, v, out, x, ord=None, axis=None, keepdims=False):
    return la.norm_vjp(g, out, x, ord=ord, axis=axis, keepdims=keepdims)


def norm_jvp_out(g, ans, v, out, x, ord=None, axis=None, keepdims=False):
    return (
        -norm_exponent(x, ord, axis)
        * g
        * la.norm_jvp(v, out, x, ord=ord, axis=axis, keepdims=keepdims)
        / np.where(out == 0, 1, out)
    )


def norm_jvp_x(g, ans, v, out, x, ord=None, axis=None, keepdims=False):
    return norm_hessian(v, g, out, x, ord=ord, axis=axis, keepdims=keepdims)


defvjp(la.norm_jvp, v=norm_jvp_v, out=norm_jvp_out, x=norm_jvp_x)


def norm_jvp_v_jvp(t, ans, v, out, x, ord=None, axis=None, keepdims=False):
    return la.norm_jvp(t, out, x, ord=ord, axis=axis, keepdims=keepdims)


def norm_jvp_out_jvp(t, ans, v, out, x, ord=None, axis=None, keepdims=False):
    return (
        -norm_exponent(x, ord, axis)
        * t
        * la.norm_jvp(v, out, x, ord=ord, axis=axis, keepdims=keepdims)
        / np.where(out == 0, 1, out)
    )


def norm_jvp_x_jvp(t, ans, v, out, x, ord=None, axis=None, keepdims=False):
    return np.sum(
        norm_hessian(t, np.ones_like(out), out, x, ord=ord, axis=axis, keepdims=keepdims) * v,
        axis=axis,
        keepdims=keepdims,
    )


defjvp(la.norm_jvp, v=norm_jvp_v_jvp, out=norm_jvp_out_jvp, x=norm_jvp_x_jvp)
