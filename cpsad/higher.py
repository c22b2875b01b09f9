"""Derivatives built from the two modes: Hessian-vector products, Hessians and Jacobians.

Each is a composition of transformations, not a new one:

* ``hvp(f)(x, v)`` is forward over reverse, ``jvp(grad(f), (x,), (v,))``: the tangent function of
  ``f``'s emitted backpropagator -- cpsad transforms its own output;
* ``hessian(f)(x)`` is that, once per basis direction of ``x``;
* ``jacobian(f)(x)`` runs forward mode once per input element when there are fewer inputs than
  outputs, else reverse mode once per output element.

Arguments and results may be pytrees (nested tuples, lists and dicts of numbers and arrays): a
Jacobian then has the result's structure, each leaf holding the argument's structure with
arrays of shape ``result_leaf.shape + argument_leaf.shape``.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from cpsad.api import grad, jvp, vjp
from cpsad.calls import argnums_tuple, check_argnums
from cpsad.pytree import gradient_adjoint, gradient_of, leaves, promote
from cpsad.rules import DISCRETE, defjvp, defvjp
from cpsad.tracebacks import boundary


def hvp(f: Callable, argnums: int | tuple[int, ...] = 0) -> Callable:
    """``hvp(f)(*args, v)``: the Hessian of the scalar ``f`` with respect to ``args[argnums]``
    times ``v`` (of that argument's structure), by forward mode over reverse mode."""
    if not isinstance(argnums, int):
        raise TypeError("hvp differentiates with respect to one argument: give argnums an int")
    g = grad(f, argnums)

    @boundary
    def hvp_f(*args_and_v, **kwargs):
        *args, v = args_and_v
        check_argnums(f, argnums, args, kwargs)
        tangents = [None] * len(args)
        tangents[argnums] = v
        return jvp(g, args, tangents, **kwargs)[1]

    hvp_f.__name__ = f"hvp_{getattr(f, '__name__', 'f')}"
    hvp_f.__cpsad_derivative__ = ("hvp", f, argnums)  # not differentiated again: see call_bp
    return hvp_f


def hessian(f: Callable, argnums: int | tuple[int, ...] = 0) -> Callable:
    """``hessian(f)(*args)``: the matrix of second derivatives of the scalar ``f`` with respect
    to ``args[argnums]`` -- shape ``x.shape + x.shape`` for an array ``x`` -- one Hessian-vector
    product (forward over reverse) per element of ``x``. With a tuple ``argnums``, the blocks
    ``H[i][j]`` (second derivatives in ``args[argnums[i]]`` and ``args[argnums[j]]``), as JAX."""
    return jacobian(grad(f, argnums), argnums, mode="forward")


def jacobian(f: Callable, argnums: int | tuple[int, ...] = 0, mode: str | None = None) -> Callable:
    """``jacobian(f)(*args)``: the derivatives of every element of ``f``'s result with respect
    to every element of ``args[argnums]``. ``mode`` "forward" (one jvp per input element) or
    "reverse" (one vjp per output element); by default the one with fewer passes. With a tuple
    ``argnums``, each leaf of the result holds a tuple: its Jacobian with respect to each of
    those arguments (JAX's structure)."""
    if mode not in (None, "forward", "reverse"):
        raise ValueError(f"mode is 'forward' or 'reverse', not {mode!r}")
    nums = argnums_tuple(argnums)

    @boundary
    def jacobian_f(*args, **kwargs):
        check_argnums(f, argnums, args, kwargs)
        args = list(args)
        for i in nums:
            args[i] = promote(args[i])
        inner = getattr(f, "__cpsad_derivative__", None)
        if inner is not None and inner[0] == "jacobian":  # jacobian(jacobian(g))
            return _jacobian_of_jacobian(inner[1], inner[2], argnums, args, kwargs)
        value = f(*args, **kwargs)
        out_leaves, out_build = leaves(value)
        blocks = [_blocks(f, args, kwargs, i, mode, value) for i in nums]
        if isinstance(argnums, int):
            return out_build(blocks[0])
        return out_build([tuple(b[r] for b in blocks) for r in range(len(out_leaves))])

    jacobian_f.__name__ = f"jacobian_{getattr(f, '__name__', 'f')}"
    jacobian_f.__cpsad_derivative__ = ("jacobian", f, argnums)  # not differentiated again
    return jacobian_f


def jacfwd(f: Callable, argnums: int | tuple[int, ...] = 0) -> Callable:
    """``jacobian(f, argnums, mode="forward")``: one forward-mode pass per input element (JAX's
    name)."""
    return jacobian(f, argnums, mode="forward")


def jacrev(f: Callable, argnums: int | tuple[int, ...] = 0) -> Callable:
    """``jacobian(f, argnums, mode="reverse")``: one reverse-mode pass per output element (JAX's
    name)."""
    return jacobian(f, argnums, mode="reverse")


def _blocks(f, args, kwargs, argnums, mode, value) -> list:
    """The Jacobian of ``f`` at ``args`` with respect to ``args[argnums]``, one entry per leaf
    of ``f``'s result ``value``: the argument's structure, with arrays of shape
    ``result_leaf.shape + argument_leaf.shape``."""
    in_leaves, in_build = leaves(args[argnums])
    n_in = sum(int(np.size(a)) for a in in_leaves)
    out_leaves, out_build = leaves(value)
    n_out = sum(int(np.size(o)) for o in out_leaves)
    use = mode or ("forward" if n_in <= n_out else "reverse")
    if use == "forward":
        columns = []
        for j in range(n_in):
            direction = in_build(_unit(in_leaves, j))
            tangents = [None] * len(args)
            tangents[argnums] = direction
            _, t = jvp(f, args, tangents, **kwargs)
            columns.append(_flat(leaves(t)[0], out_leaves))
        matrix = np.array(columns, dtype=float).T.reshape(n_out, n_in)
    else:
        rows = []
        _, pullback = vjp(f, *args, **kwargs)
        for i in range(n_out):
            cotangent = out_build(_unit(out_leaves, i))
            g = pullback(cotangent)[argnums]
            rows.append(_flat(leaves(g)[0], in_leaves))
        matrix = np.array(rows, dtype=float).reshape(n_out, n_in)
    return _structure(matrix, out_leaves, in_leaves, in_build)


def _jacobian_of_jacobian(g, inner, outer, args, kwargs):
    """``jacobian(jacobian(g, inner), outer)(*args)``: the second derivatives of ``g``'s result,
    shape ``result.shape + args[inner].shape + args[outer].shape`` (JAX's layout) -- for each
    element ``o`` of the result, ``jacobian(grad(g_o, inner), outer)`` of the scalar ``g_o``, its
    ``o``-th element: forward mode over reverse mode, as ``hessian``. The jacobian made by
    ``jacobian(g)`` is no function cpsad can transform (it loops over basis vectors in Python),
    so the outer one differentiates ``g`` twice instead."""
    if not (isinstance(inner, int) and isinstance(outer, int)):
        raise TypeError(
            "cpsad: jacobian(jacobian(f)) takes one argument each (an int argnums); for several, "
            "take the blocks one pair at a time"
        )
    if kwargs or not 1 <= len(args) <= 4:
        raise TypeError(
            "cpsad: jacobian(jacobian(f)) is supported for a function of one to four positional "
            "arguments, without keywords (bind the others with a lambda)"
        )
    value = g(*args, **kwargs)
    for where, x in (("result", value), ("argument", args[inner]), ("argument", args[outer])):
        if not isinstance(x, (np.ndarray, np.generic, float, int)) or isinstance(x, bool):
            raise TypeError(
                f"cpsad: jacobian(jacobian(f)) of a function whose {where} is a "
                f"{type(x).__name__}: supported for arrays and numbers (a pytree's second "
                "derivatives: cpsad.hessian of each scalar output)"
            )
    shape = np.shape(value)
    rows = []
    for o in range(int(np.size(value))):
        e = np.zeros(int(np.size(value)))
        e[o] = 1.0
        g_o = _element(g, e.reshape(shape), len(args))
        rows.append(np.asarray(jacobian(grad(g_o, inner), outer, mode="forward")(*args)))
    x_in, x_out = np.shape(args[inner]), np.shape(args[outer])
    return np.array(rows, dtype=float).reshape(shape + x_in + x_out)


def _element(g, e, n: int):
    """The element of ``g``'s result that the one-hot ``e`` picks, as a function of ``n``
    parameters that cpsad transforms (it calls ``g``, a function of the user's; cpsad
    differentiates named parameters, not items of ``*args``)."""

    def element_1(a):
        return np.sum(g(a) * e)

    def element_2(a, b):
        return np.sum(g(a, b) * e)

    def element_3(a, b, c):
        return np.sum(g(a, b, c) * e)

    def element_4(a, b, c, d):
        return np.sum(g(a, b, c, d) * e)

    return {1: element_1, 2: element_2, 3: element_3, 4: element_4}[n]


def _unit(template_leaves, k: int):
    """Leaves like ``template_leaves``, zero except a 1 at flattened position ``k``."""
    out = []
    for leaf in template_leaves:
        n = int(np.size(leaf))
        flat = np.zeros(n)
        if 0 <= k < n:
            flat[k] = 1.0
        k -= n
        if isinstance(leaf, np.ndarray):
            out.append(flat.reshape(leaf.shape).astype(np.result_type(leaf, 1.0)))
        else:
            out.append(float(flat[0]))
    return out


def _flat(values, template_leaves) -> np.ndarray:
    parts = [np.ravel(np.asarray(v, dtype=float)) for v in values]
    n = sum(int(np.size(t)) for t in template_leaves)
    return np.concatenate(parts) if parts else np.zeros(n)


def _structure(matrix, out_leaves, in_leaves, in_build) -> list:
    """The Jacobian matrix as one block per result leaf, each in the argument's structure."""
    blocks = []
    r = 0
    for o in out_leaves:
        no = int(np.size(o))
        c = 0
        row = []
        for a in in_leaves:
            na = int(np.size(a))
            block = matrix[r : r + no, c : c + na].reshape(np.shape(o) + np.shape(a))
            row.append(block if block.ndim else float(block))
            c += na
        blocks.append(in_build(row))
        r += no
    return blocks


hvp.__cpsad_operator__ = "hvp"  # makes a function; inside a derivative: see dispatch.call_bp
hessian.__cpsad_operator__ = "hessian"
jacobian.__cpsad_operator__ = "jacobian"
jacfwd.__cpsad_operator__ = "jacobian"
jacrev.__cpsad_operator__ = "jacobian"


# --------------------------------------------------------------------------- inside a derivative
#
# A gradient taken inside a differentiated function is its backpropagator's adjoint made into
# what cpsad.grad returns (``gradient_of``: a list for a list, zeros where nothing flowed). Both
# are linear in the adjoint and transposes of each other; the argument they are shaped like only
# gives the structure.


def gradient_of_adj(g, ans, adj, like):
    return gradient_adjoint(g, adj, like)


def gradient_of_adj_jvp(t, ans, adj, like):
    return gradient_of(t, like)


defvjp(gradient_of, gradient_of_adj, DISCRETE)
defjvp(gradient_of, gradient_of_adj_jvp, None)


def gradient_adjoint_g(g, ans, c, adj, like):
    return gradient_of(g, like)


def gradient_adjoint_g_jvp(t, ans, c, adj, like):
    return gradient_adjoint(t, adj, like)


defvjp(gradient_adjoint, gradient_adjoint_g, DISCRETE, DISCRETE)
defjvp(gradient_adjoint, gradient_adjoint_g_jvp, None, None)
