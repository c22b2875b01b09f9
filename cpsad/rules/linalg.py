"""Rules of linear algebra: products and contractions (dot, outer, inner, tensordot, einsum),
diagonals and triangles, and ``np.linalg`` (inv, det, slogdet, solve, cholesky, norm, and the
decompositions eigh, eigvalsh, svd, qr, pinv, lstsq, eig, eigvals).

Every contraction's adjoint is again a contraction: ``contraction_adjoint`` writes it as an
``np.einsum`` once, for einsum itself and for tensordot and inner. Forward, every product is
linear in each operand: its tangent rule is the product with the tangent in the operand's place.
"""

from __future__ import annotations

import string

import numpy as np

from cpsad.rules import operators as op
from cpsad.rules.core import (
    defattribute,
    defjvp,
    defjvp_attribute,
    defjvp_method,
    defmethod,
    defvjp,
)
from cpsad.rules.elementwise import unit
from cpsad.runtime import (
    Sparse,
    as_array,
    foreign,
    item_adjoint,
    maybe_any,
    scatter_added,
    tangent_zeros,
    unbroadcast,
)

# --------------------------------------------------------------------------- contractions


def explicit(subscripts: str, shapes) -> tuple[list[str], str]:
    """``einsum`` subscripts with ``...`` spelled out in letters and the output made explicit."""
    spec = subscripts.replace(" ", "")
    inputs, arrow, output = spec.partition("->")
    ins = inputs.split(",")
    used = set(spec) - set(".,->")
    free = [c for c in string.ascii_letters if c not in used]
    ellipsis = max(
        (len(shape) - len(s.replace("...", "")) for s, shape in zip(ins, shapes) if "..." in s),
        default=0,
    )
    extra = "".join(free[:ellipsis])
    if not arrow:
        letters = "".join(ins).replace("...", "")
        output = ("..." if ellipsis or "..." in inputs else "") + "".join(
            sorted(c for c in set(letters) if letters.count(c) == 1)
        )
    spelled = []
    for s, shape in zip(ins, shapes):
        if "..." in s:
            k = len(shape) - len(s.replace("...", ""))
            s = s.replace("...", extra[len(extra) - k :] if k else "")
        spelled.append(s)
    return spelled, output.replace("...", extra)


def contraction_adjoint(g, subscripts, operands, i, optimize=False):
    """The adjoint of ``operands[i]`` in ``np.einsum(subscripts, *operands)``, given ``g``.

    It is an einsum of ``g`` and the other operands. A letter the operand repeats (a diagonal,
    ``"ii"``) gets a new letter tied to it by an identity matrix; a letter only the operand has (a
    sum over it, ``"ij->i"``) gets a row of ones; dimensions the operand broadcast are summed.
    Of three operands or more, or large ones, einsum finds a contraction order (``optimize``):
    unoptimized, a chain of three 300-wide matrices takes a second instead of half a millisecond.
    """
    ins, out = explicit(subscripts, [np.shape(x) for x in operands])
    x = operands[i]
    shape = np.shape(x)
    dtype = np.result_type(g, x)
    subs = [out] + [s for j, s in enumerate(ins) if j != i]
    args = [g] + [o for j, o in enumerate(operands) if j != i]
    used = set("".join(ins) + out)
    fresh = (c for c in string.ascii_letters if c not in used)
    target = ""
    for axis, c in enumerate(ins[i]):
        if c in target:  # a repeated letter: the adjoint lives on a diagonal
            new = next(fresh)
            subs.append(c + new)
            args.append(np.eye(shape[axis], dtype=dtype))
            c = new
        target += c
    present = set("".join(subs))
    for axis, c in enumerate(target):
        if c not in present:
            subs.append(c)
            args.append(np.ones(shape[axis], dtype=dtype))
    optimize = optimize or len(args) > 2 or sum(_size(a) for a in args) > 10_000
    adjoint = np.einsum(",".join(subs) + "->" + target, *args, optimize=optimize)
    return unbroadcast(adjoint, x)


def _size(a) -> int:
    """``np.size(a)``, read from an array's own ``size`` (np.size of a Dask array computes it)."""
    return a.size if hasattr(a, "size") and hasattr(a, "shape") else np.size(a)


def sublist_form(args) -> tuple[str, list, dict]:
    """``np.einsum(x, [0, 1], y, [1, 2], [0, 2])`` -- the sublist form -- as the subscripts form:
    ``("ab,bc->ac", [x, y], {0: 0, 2: 1})``, the last mapping each argument's position to its
    operand's. Labels are ints (or ``...``); an implicit output is, as numpy has it, the labels
    that occur once in increasing order, after ``...`` if there is one."""
    args = list(args)
    while args and args[-1] is None:
        args.pop()
    pairs = len(args) // 2
    operands, labels, where = [], [], {}
    for k in range(pairs):
        where[2 * k] = k
        operands.append(args[2 * k])
        labels.append(list(args[2 * k + 1]))
    seen = [x for ls in labels for x in ls if x is not Ellipsis]
    if len(args) % 2:  # an explicit output
        output = list(args[-1])
    else:
        output = [Ellipsis] if any(Ellipsis in ls for ls in labels) else []
        output += sorted(x for x in set(seen) if seen.count(x) == 1)

    def letters(ls) -> str:
        out = ""
        for x in ls:
            if x is Ellipsis:
                out += "..."
            elif isinstance(x, (int, np.integer)) and 0 <= x < 52:
                out += string.ascii_letters[int(x)]
            else:
                raise ValueError(f"einsum: a sublist label must be an int in [0, 52), not {x!r}")
        return out

    spec = ",".join(letters(ls) for ls in labels) + "->" + letters(output)
    return spec, operands, where


def einsum_parts(subscripts, a, b, c, d) -> tuple[str, list, dict]:
    """``(subscripts, operands, where)`` of either form of a call ``np.einsum(subscripts, a, b, c,
    d)``: the place among the operands of the argument in slot ``i`` -- -1 for ``subscripts``, 0
    to 3 for ``a`` to ``d`` -- is ``where[i]`` (absent for a subscripts string or a sublist)."""
    if isinstance(subscripts, str):
        operands = [o for o in (a, b, c, d) if o is not None]
        return subscripts, operands, {i: i for i in range(len(operands))}
    spec, operands, where = sublist_form((subscripts, a, b, c, d))
    return spec, operands, {p - 1: k for p, k in where.items()}


def einsum_adjoint(h, subscripts, i, a, b=None, c=None, d=None, *, optimize=False):
    """The adjoint of argument ``i`` of ``np.einsum(subscripts, a, b, c, d)`` (up to four operands,
    None for those it has not) given the adjoint ``h`` of the result: ``contraction_adjoint``
    with the operands as parameters of their own, each with its own rule. ``i`` is the argument's
    slot after ``subscripts``, 0 to 3; in the sublist form (``np.einsum(x, [0, 1], y, [1, 2])``,
    ``subscripts`` is the first operand) -1 is ``subscripts`` itself."""
    spec, operands, where = einsum_parts(subscripts, a, b, c, d)
    if i not in where:  # the subscripts string, a sublist: no derivative
        return None
    return contraction_adjoint(h, spec, operands, where[i], optimize=optimize)


def einsum_s(g, ans, subscripts, a, b=None, c=None, d=None, *, optimize=False):
    """The sublist form's first operand, ``x`` in ``np.einsum(x, [0, 1], [1, 0])``."""
    return einsum_adjoint(g, subscripts, -1, a, b, c, d, optimize=optimize)


def einsum_a(g, ans, subscripts, a, b=None, c=None, d=None, *, optimize=False):
    """``np.einsum(subscripts, a, b, ...)``, up to four operands: the adjoint of ``a``."""
    return einsum_adjoint(g, subscripts, 0, a, b, c, d, optimize=optimize)


def einsum_b(g, ans, subscripts, a, b=None, c=None, d=None, *, optimize=False):
    return einsum_adjoint(g, subscripts, 1, a, b, c, d, optimize=optimize)


def einsum_c(g, ans, subscripts, a, b=None, c=None, d=None, *, optimize=False):
    return einsum_adjoint(g, subscripts, 2, a, b, c, d, optimize=optimize)


def einsum_d(g, ans, subscripts, a, b=None, c=None, d=None, *, optimize=False):
    return einsum_adjoint(g, subscripts, 3, a, b, c, d, optimize=optimize)


defvjp(np.einsum, einsum_s, einsum_a, einsum_b, einsum_c, einsum_d)


def einsum_tangent(t, subscripts, operands, i, optimize=False):
    """``np.einsum(subscripts, *operands)`` with ``t`` in the place of ``operands[i]``."""
    operands = [t if j == i else o for j, o in enumerate(operands)]
    optimize = optimize or len(operands) > 2 or sum(_size(o) for o in operands) > 10_000
    return np.einsum(subscripts, *operands, optimize=optimize)


def einsum_with(v, subscripts, i, a, b=None, c=None, d=None, *, optimize=False):
    """``np.einsum(subscripts, a, b, c, d)`` with ``v`` in the place of argument ``i`` (the slot
    of ``einsum_adjoint``)."""
    spec, operands, where = einsum_parts(subscripts, a, b, c, d)
    return einsum_tangent(v, spec, operands, where[i], optimize=optimize)


def einsum_s_jvp(t, ans, subscripts, a, b=None, c=None, d=None, *, optimize=False):
    """The sublist form's first operand; a subscripts string has no tangent."""
    return (
        np.zeros_like(ans)
        if isinstance(subscripts, str)
        else einsum_with(t, subscripts, -1, a, b, c, d, optimize=optimize)
    )


def einsum_a_jvp(t, ans, subscripts, a, b=None, c=None, d=None, *, optimize=False):
    return einsum_with(t, subscripts, 0, a, b, c, d, optimize=optimize)


def einsum_b_jvp(t, ans, subscripts, a, b=None, c=None, d=None, *, optimize=False):
    return einsum_with(t, subscripts, 1, a, b, c, d, optimize=optimize)


def einsum_c_jvp(t, ans, subscripts, a, b=None, c=None, d=None, *, optimize=False):
    return einsum_with(t, subscripts, 2, a, b, c, d, optimize=optimize)


def einsum_d_jvp(t, ans, subscripts, a, b=None, c=None, d=None, *, optimize=False):
    return einsum_with(t, subscripts, 3, a, b, c, d, optimize=optimize)


defjvp(np.einsum, einsum_s_jvp, einsum_a_jvp, einsum_b_jvp, einsum_c_jvp, einsum_d_jvp)


def tensordot_subscripts(a, b, axes=2) -> str:
    """``np.tensordot(a, b, axes)`` as einsum subscripts."""
    na, nb = np.ndim(a), np.ndim(b)
    if np.ndim(axes) == 0:
        pairs = list(zip(range(na - axes, na), range(axes)))
    else:
        left, right = axes
        left = [left] if np.ndim(left) == 0 else list(left)
        right = [right] if np.ndim(right) == 0 else list(right)
        pairs = [(p % na, q % nb) for p, q in zip(left, right)]
    letters = iter(string.ascii_letters)
    sa = [next(letters) for _ in range(na)]
    sb = [next(letters) for _ in range(nb)]
    for p, q in pairs:
        sb[q] = sa[p]
    contracted = {p for p, _ in pairs}
    out = [c for k, c in enumerate(sa) if k not in contracted]
    out += [c for k, c in enumerate(sb) if k not in {q for _, q in pairs}]
    return "".join(sa) + "," + "".join(sb) + "->" + "".join(out)


def tensordot_a(g, ans, a, b, axes=2):
    return einsum_adjoint(g, tensordot_subscripts(a, b, axes), 0, a, b)


def tensordot_b(g, ans, a, b, axes=2):
    return einsum_adjoint(g, tensordot_subscripts(a, b, axes), 1, a, b)


defvjp(np.tensordot, tensordot_a, tensordot_b)


def tensordot_a_jvp(t, ans, a, b, axes=2):
    return np.tensordot(t, b, axes)


def tensordot_b_jvp(t, ans, a, b, axes=2):
    return np.tensordot(a, t, axes)


defjvp(np.tensordot, tensordot_a_jvp, tensordot_b_jvp)


def inner_subscripts(a, b) -> str:
    """``np.inner(a, b)`` as einsum subscripts: the last axes contracted (scalars multiply)."""
    na, nb = np.ndim(a), np.ndim(b)
    if na == 0 or nb == 0:
        return "...,...->..."
    sa = string.ascii_letters[: na - 1]
    sb = string.ascii_letters[na - 1 : na + nb - 2]
    return f"{sa}z,{sb}z->{sa}{sb}"


def inner_a(g, ans, a, b):
    return einsum_adjoint(g, inner_subscripts(a, b), 0, a, b)


def inner_b(g, ans, a, b):
    return einsum_adjoint(g, inner_subscripts(a, b), 1, a, b)


defvjp(np.inner, inner_a, inner_b)


def inner_a_jvp(t, ans, a, b):
    return np.inner(t, b)


def inner_b_jvp(t, ans, a, b):
    return np.inner(a, t)


defjvp(np.inner, inner_a_jvp, inner_b_jvp)


def dot_subscripts(a, b) -> str:
    """``np.dot(a, b)`` as einsum subscripts: the last axis of ``a`` with the second-to-last of
    ``b`` (the only axis of a vector)."""
    na, nb = np.ndim(a), np.ndim(b)
    if na == 0 or nb == 0:
        return "...,...->..."
    sa = string.ascii_letters[: na - 1]
    sb = string.ascii_letters[na - 1 : na + nb - 2]
    if nb == 1:
        return f"{sa}z,z->{sa}"
    return f"{sa}z,{sb[:-1]}z{sb[-1]}->{sa}{sb}"


def dot_a(g, ans, a, b):
    """np.dot: matmul's rule for operands of up to two dimensions; otherwise a contraction."""
    if 0 < np.ndim(a) <= 2 and 0 < np.ndim(b) <= 2:
        return op.matmul_x(g, ans, a, b)
    return contraction_adjoint(g, dot_subscripts(a, b), [a, b], 0)


def dot_b(g, ans, a, b):
    if 0 < np.ndim(a) <= 2 and 0 < np.ndim(b) <= 2:
        return op.matmul_y(g, ans, a, b)
    return contraction_adjoint(g, dot_subscripts(a, b), [a, b], 1)


defvjp(np.dot, dot_a, dot_b)
defmethod("dot", dot_a, dot_b)
defvjp(np.matmul, op.matmul_x, op.matmul_y)


def dot_a_jvp(t, ans, a, b):
    return np.dot(t, b)


def dot_b_jvp(t, ans, a, b):
    return np.dot(a, t)


defjvp(np.dot, dot_a_jvp, dot_b_jvp)
defjvp_method("dot", dot_a_jvp, dot_b_jvp)
defjvp(np.matmul, op.matmul_x_jvp, op.matmul_y_jvp)


def outer_a(g, ans, a, b):
    return np.reshape(g @ np.ravel(b), np.shape(a))


def outer_b(g, ans, a, b):
    return np.reshape(np.ravel(a) @ g, np.shape(b))


defvjp(np.outer, outer_a, outer_b)


def outer_a_jvp(t, ans, a, b):
    return np.outer(t, b)


def outer_b_jvp(t, ans, a, b):
    return np.outer(a, t)


defjvp(np.outer, outer_a_jvp, outer_b_jvp)


def vdot_a(g, ans, a, b):
    """``np.vdot`` conjugates ``a``: a function of ``conj(a)``, whose adjoint is ``conj(g b)``."""
    return np.reshape((g * np.ravel(b)).conj(), np.shape(a))


def vdot_b(g, ans, a, b):
    """``np.vdot`` conjugates ``a``: for complex ``a`` the transpose in ``b`` has ``conj(a)``."""
    return np.reshape(g * np.conj(np.ravel(a)), np.shape(b))


defvjp(np.vdot, vdot_a, vdot_b)


def vdot_a_jvp(t, ans, a, b):
    """``np.vdot`` conjugates its first operand, so does its tangent: not complex-linear in ``a``,
    for complex ``a`` it is not the transpose of ``vdot_a`` (right for real ``a``)."""
    return np.vdot(t, b)


def vdot_b_jvp(t, ans, a, b):
    return np.vdot(a, t)


defjvp(np.vdot, vdot_a_jvp, vdot_b_jvp)

# --------------------------------------------------------------------------- diagonals, triangles


def diagonal_vjp(g, ans, a, offset=0, axis1=0, axis2=1):
    """Put the adjoint of a diagonal (its last axis) back on the diagonal of zeros."""
    shape = np.shape(a)
    n = len(shape)
    axis1, axis2 = axis1 % n, axis2 % n
    k = np.arange(np.shape(g)[-1])
    if foreign(g) or foreign(a):  # a Dask or CuPy array: gathered, nothing written into
        moved = tuple(i for i in range(n) if i not in (axis1, axis2)) + (axis1, axis2)
        shape_moved = tuple(shape[i] for i in moved)
        index = (Ellipsis, k + max(-offset, 0), k + max(offset, 0))
        out = scatter_added(g, shape_moved, np.result_type(a, g), index, a)
        return np.moveaxis(out, (-2, -1), (axis1, axis2))
    out = np.zeros(shape, np.result_type(a, g))
    moved = np.moveaxis(out, (axis1, axis2), (-2, -1))  # a view: writing it writes out
    moved[..., k + max(-offset, 0), k + max(offset, 0)] = g
    return out


defvjp(np.diagonal, diagonal_vjp)
defmethod("diagonal", diagonal_vjp)


def diagonal_jvp(t, ans, a, offset=0, axis1=0, axis2=1):
    return np.diagonal(t, offset, axis1, axis2)


defjvp(np.diagonal, diagonal_jvp)
defjvp_method("diagonal", diagonal_jvp)


def trace_vjp(g, ans, a, offset=0, axis1=0, axis2=1):
    """Every element of the diagonal gets the trace's adjoint."""
    shape = np.shape(a)
    n = len(shape)
    axis1, axis2 = axis1 % n, axis2 % n
    eye = np.eye(shape[axis1], shape[axis2], k=offset, dtype=np.result_type(a, g))
    return np.moveaxis(np.expand_dims(g, (-2, -1)) * eye, (-2, -1), (axis1, axis2))


defvjp(np.trace, trace_vjp)
defmethod("trace", trace_vjp)


def trace_jvp(t, ans, a, offset=0, axis1=0, axis2=1):
    return np.trace(t, offset, axis1, axis2)


defjvp(np.trace, trace_jvp)
defjvp_method("trace", trace_jvp)


def diag(g, ans, v, k=0):
    """``np.diag`` builds a matrix from a vector, or takes a matrix's diagonal."""
    return np.diag(g, k) if np.ndim(v) == 1 else diagonal_vjp(g, ans, v, offset=k)


defvjp(np.diag, diag)


def diag_jvp(t, ans, v, k=0):
    return np.diag(t, k)


defjvp(np.diag, diag_jvp)


def tril(g, ans, m, k=0):
    return np.tril(g, k)


def triu(g, ans, m, k=0):
    return np.triu(g, k)


defvjp(np.tril, tril)
defvjp(np.triu, triu)


def tril_jvp(t, ans, m, k=0):
    return np.tril(t, k)


def triu_jvp(t, ans, m, k=0):
    return np.triu(t, k)


defjvp(np.tril, tril_jvp)
defjvp(np.triu, triu_jvp)

# --------------------------------------------------------------------------- np.linalg


def mT(x):
    """The matrix transpose of (a stack of) matrices."""
    return np.swapaxes(x, -1, -2)


def inv(g, ans, a):
    return -mT(ans) @ g @ mT(ans)


defvjp(np.linalg.inv, inv)


def inv_jvp(t, ans, a):
    return -ans @ t @ ans


defjvp(np.linalg.inv, inv_jvp)


def cofactors(a, det):
    """The cofactors of ``a`` (of each matrix of a stack), ``det(a) a^-T``: the derivative of the
    determinant. Where ``a`` is singular -- ``det`` 0, ``inv`` raises -- they are still defined
    (polynomials in the entries; of a matrix of rank n - 1, a nonzero matrix of rank 1), from
    the SVD ``a = U S V^H``: ``det(U) det(V^H) conj(U) adj(S) conj(V^H)``, ``adj(S)`` the
    diagonal of the products of the other singular values."""
    if not maybe_any(det == 0):
        return np.expand_dims(det, (-2, -1)) * mT(np.linalg.inv(a))
    u, s, vh = np.linalg.svd(a)
    ones = np.ones_like(s[..., :1])
    before = np.concatenate([ones, np.cumprod(s[..., :-1], axis=-1)], axis=-1)
    after = np.concatenate([np.cumprod(s[..., :0:-1], axis=-1)[..., ::-1], ones], axis=-1)
    phase = np.linalg.det(u) * np.linalg.det(vh)
    out = np.expand_dims(phase, (-2, -1)) * (
        (u.conj() * (before * after)[..., None, :]) @ vh.conj()
    )
    return out if np.iscomplexobj(a) else out.real


def inverse(a):
    """``np.linalg.inv(a)``; where ``a`` is singular, where ``inv`` raises, numpy's answer to
    ``adj(a) / det(a)``: infinities (NaN where a cofactor is 0 too), with numpy's warning."""
    try:
        return np.linalg.inv(a)
    except np.linalg.LinAlgError:
        det = np.linalg.det(a)
        return mT(cofactors(a, det)) / np.expand_dims(det, (-2, -1))


def det(g, ans, a):
    """Jacobi's formula: ``g`` times the cofactors (also of a singular matrix, where they are
    not zero: ``inv`` would raise)."""
    return np.expand_dims(g, (-2, -1)) * cofactors(a, ans)


defvjp(np.linalg.det, det)


def det_jvp(t, ans, a):
    """``tr(adj(a) t)``: the cofactors times ``t``, summed."""
    return np.sum(cofactors(a, ans) * t, axis=(-2, -1))


defjvp(np.linalg.det, det_jvp)


def slogdet(g, ans, a):
    """``sign, logdet = np.linalg.slogdet(a)``: ``log det a = logdet + i angle`` has the adjoint
    ``c a^-T`` for the adjoint ``c`` of ``log det a``. ``logdet`` is its real part, so ``c`` gets
    the real part of its adjoint; the sign of a real matrix is a step, of a complex one
    ``exp(i angle)``, which gives ``c`` the imaginary part of ``g_sign sign``. (Of a singular
    matrix, ``logdet`` -inf: infinities, ``inverse``'s.)"""
    return np.expand_dims(
        np.real(item_adjoint(g, 1, ans[1]))
        + (1j * np.imag(item_adjoint(g, 0, ans[0]) * ans[0]) if np.iscomplexobj(a) else 0.0),
        (-2, -1),
    ) * mT(inverse(a))


defvjp(np.linalg.slogdet, slogdet)


def slogdet_jvp(t, ans, a):
    """The pair's tangent from ``d log det a = tr(a^-1 t)``: its real part for ``logabsdet``; for
    the sign zero (a step) of a real matrix, ``i sign`` times the imaginary part of a complex one.
    """
    return pair_like(
        ans,
        (
            1j * ans[0] * np.imag(np.sum(mT(inverse(a)) * t, axis=(-2, -1)))
            if np.iscomplexobj(a)
            else np.zeros_like(ans[0])
        ),
        np.real(np.sum(mT(inverse(a)) * t, axis=(-2, -1))),
    )


def pair_like(ans, first, second):
    """``(first, second)`` of the type of the pair ``ans`` (numpy's named tuple, or a tuple)."""
    return type(ans)(first, second) if hasattr(ans, "_fields") else (first, second)


defjvp(np.linalg.slogdet, slogdet_jvp)


def logabsdet(g, ans, result):
    """``np.linalg.slogdet(a).logabsdet``: the adjoint of the pair ``(sign, logabsdet)``."""
    return Sparse({1: g})


defattribute("logabsdet", logabsdet)


def logabsdet_jvp(t, ans, result):
    return t[1]


defjvp_attribute("logabsdet", logabsdet_jvp)


def solved(g, a, b):
    """``solve(a.T, g)``: the adjoint of ``b`` in ``x = solve(a, b)`` before any broadcasting of
    ``b`` is undone (``b`` a vector, or a stack of matrices)."""
    if np.ndim(b) == 1:
        return np.linalg.solve(mT(a), as_array(g)[..., None])[..., 0]
    return np.linalg.solve(mT(a), g)


def solve_a(g, ans, a, b):
    """``x = solve(a, b)``: ``a_bar = -solve(a.T, g) x.T``."""
    if np.ndim(b) == 1:
        return unbroadcast(-solved(g, a, b)[..., :, None] * ans[..., None, :], a)
    return unbroadcast(-solved(g, a, b) @ mT(ans), a)


def solve_b(g, ans, a, b):
    return unbroadcast(solved(g, a, b), b)


defvjp(np.linalg.solve, solve_a, solve_b)


def solve_a_jvp(t, ans, a, b):
    """``x = solve(a, b)``: ``dx = -solve(a, t x)``."""
    if np.ndim(b) == 1:  # x a vector (or a stack of them, for a stack of matrices a)
        return -np.linalg.solve(a, t @ ans[..., None])[..., 0]
    return -np.linalg.solve(a, t @ ans)


def solve_b_jvp(t, ans, a, b):
    return np.linalg.solve(a, t)


defjvp(np.linalg.solve, solve_a_jvp, solve_b_jvp)


def real_only(x, name: str) -> None:
    """Refuse a complex ``x`` where a rule is derived, and checked, for real numbers only."""
    if np.iscomplexobj(x):
        raise TypeError(
            f"cpsad: the derivative of {name} is implemented for real values only, not complex "
            "ones (see docs/reference.md, complex numbers)"
        )


def cholesky_vjp(g, ans, a, *, upper=False):
    """Murray (2016), eq. 10: ``a_bar = sym(L^-T phi(L^T g) L^-1)``, ``phi`` the lower triangle
    with half the diagonal. numpy reads only ``a``'s lower triangle (upper: its upper one); the
    adjoint is symmetric, the derivative along symmetric directions."""
    real_only(a, "np.linalg.cholesky")
    L = mT(ans) if upper else ans
    g = mT(g) if upper else g
    n = np.shape(L)[-1]
    phi = np.tril(mT(L) @ g) * (1 - 0.5 * np.eye(n, dtype=np.result_type(L)))
    s = np.linalg.solve(mT(L), mT(np.linalg.solve(mT(L), mT(phi))))
    return 0.5 * (s + mT(s))


defvjp(np.linalg.cholesky, cholesky_vjp)


def cholesky_jvp(t, ans, a, *, upper=False):
    """``dL = L phi(L^-1 sym(t) L^-T)``, ``phi`` the lower triangle with half the diagonal. The
    direction is made symmetric, as the adjoint is: the transpose of the adjoint rule."""
    real_only(a, "np.linalg.cholesky")
    L = mT(ans) if upper else ans
    n = np.shape(L)[-1]
    s = 0.5 * (t + mT(t))
    inner = mT(np.linalg.solve(L, mT(np.linalg.solve(L, s))))  # L^-1 s L^-T
    dL = L @ (np.tril(inner) * (1 - 0.5 * np.eye(n, dtype=np.result_type(L))))
    return mT(dL) if upper else dL


defjvp(np.linalg.cholesky, cholesky_jvp)


def norm_vjp(g, ans, x, ord=None, axis=None, keepdims=False):
    """Vector norms (any ``ord``) and matrix norms (``fro``, ``nuc``, 1, -1, 2, -2, inf, -inf)."""
    out = _norm_gradient(np.real(g), ans, x, ord, axis, keepdims)
    return out.conj()  # of complex x, conj(x / |x|) and the like (the identity on real arrays)


def _norm_gradient(g, ans, x, ord, axis, keepdims):
    """``norm_vjp`` but for the conjugate: ``2 g d norm / d conj(x)`` -- of real ``x``, the
    gradient, and of complex ``x`` what the real formulas compute with ``x / |x|`` for the sign."""
    x = as_array(x)
    nd = x.ndim
    if axis is None:  # the whole array: a matrix norm when ord says so, else flattened
        axes = tuple(range(nd))
        matrix = nd == 2 and ord is not None
    else:
        axes = (axis,) if np.ndim(axis) == 0 else tuple(axis)
        matrix = len(axes) == 2
    axes = tuple(a % nd for a in axes)
    if not keepdims:  # put the reduced axes back, as size 1
        g = np.expand_dims(g, axes)
        ans = np.expand_dims(ans, axes)
    dtype = np.result_type(x, g)
    if not matrix:
        if ord is None or ord == 2:
            return (g / np.where(ans == 0, 1, ans) * x).astype(dtype, copy=False)
        if ord == 1:
            return (g * unit(x)).astype(dtype, copy=False)
        if ord == np.inf or ord == -np.inf:
            hits = np.abs(x) == ans
            share = g * unit(x) * hits
            return (share / np.sum(hits, axis=axes, keepdims=True)).astype(dtype, copy=False)
        if ord == 0:
            return np.zeros(x.shape, dtype)
        p = ord  # sign(x) |x|^(p-1), not x |x|^(p-2): 0 at a zero element (p > 1), and at 0
        share = g * unit(x) * np.abs(x) ** (p - 1) / np.where(ans == 0, 1, ans) ** (p - 1)
        return share.astype(dtype, copy=False)
    # matrix norms: the two axes moved to the end
    rows, cols = axes
    xm = np.moveaxis(x, (rows, cols), (-2, -1))
    gm = np.moveaxis(g, (rows, cols), (-2, -1))
    am = np.moveaxis(ans, (rows, cols), (-2, -1))
    if ord is None or ord == "fro":
        out = gm / np.where(am == 0, 1, am) * xm  # 0 at 0, as the vector norm
    elif ord == "nuc" or ord in (2, -2):
        u, s, vt = np.linalg.svd(xm, full_matrices=False)
        if ord == "nuc":
            out = gm * (u @ vt)
        else:
            k = 0 if ord == 2 else -1
            out = gm * (u[..., :, k, None] * vt[..., k, None, :])
    elif ord in (1, -1, np.inf, -np.inf):
        along = -2 if ord in (1, -1) else -1  # column sums (1) or row sums (inf)
        sums = np.sum(np.abs(xm), axis=along, keepdims=True)
        hits = sums == am
        out = gm * unit(xm) * hits / np.sum(hits, axis=(-2, -1), keepdims=True)
    else:
        raise NotImplementedError(f"cpsad: no derivative of the matrix norm ord={ord!r}")
    return np.moveaxis(out, (-2, -1), (rows, cols)).astype(dtype, copy=False)


defvjp(np.linalg.norm, norm_vjp, ord=None)  # a differentiable p of a p-norm: an error, not 0


def norm_jvp(t, ans, x, ord=None, axis=None, keepdims=False):
    """Every norm's adjoint is the (expanded) adjoint times a gradient of ``x``'s shape: the
    adjoint of a unit adjoint. The tangent is that gradient's inner product with ``t`` over the
    reduced axes."""
    gradient = norm_vjp(np.ones_like(ans), ans, x, ord=ord, axis=axis, keepdims=keepdims)
    return np.real(np.sum(gradient * t, axis=axis, keepdims=keepdims))


defjvp(np.linalg.norm, norm_jvp)

# --------------------------------------------------------------------------- decompositions
# eigh, eigvalsh, svd, qr, pinv, lstsq, eig, eigvals. Each rule is one expression of functions that
# have rules (so that emitted code is differentiated again: second derivatives), with these helpers,
# whose rules are in emitted/decompositions.py; an expression cannot name a value it computes, so a
# few compute one twice (the decomposition ``eigvalsh`` and ``svd(compute_uv=False)`` do not return,
# a product ``svd_jvp`` uses thrice). The formulas are for real matrices: ``checked`` refuses
# complex ones, and options a formula is not for, before it fails on them.

SUPPORTED = {
    "np.linalg.svd": "with full_matrices=False (or of square matrices) and hermitian=False",
    "np.linalg.qr": "with mode='reduced', of matrices with at least as many rows as columns",
    "np.linalg.pinv": "with hermitian=False",
}


def checked(x, a, name, refuse=False):
    """``x``, once the rule of ``name`` is known to hold at ``a``: a complex ``a`` is refused
    (``real_only``), and so is a call ``refuse`` says the formula is not for (``SUPPORTED[name]``
    says what it is for). A rule wraps the first value it reads in it where such a call would
    make the formula fail before (a full ``u`` of a matrix that is not square, say), and its
    whole result elsewhere. (The identity in ``x``: emitted/decompositions.py.)"""
    real_only(a, name)
    if refuse:
        raise TypeError(
            f"cpsad differentiates `{name}` only {SUPPORTED[name]}; compute it another way there"
        )
    return x


def gaps(x):
    """``1 / (x_j - x_i)`` at ``[..., i, j]`` off the diagonal, 0 on it: the factor of the
    derivatives of eigenvectors (of ``x`` the eigenvalues) and of singular vectors (of ``x`` the
    squared singular values). Where two values are equal, an infinity: the vectors have no
    derivative there."""
    eye = np.eye(np.shape(x)[-1], dtype=np.result_type(x))
    return 1 / (x[..., None, :] - x[..., :, None] + eye) - eye


def from_triangle(x, UPLO="L"):
    """The symmetric matrix made of the lower (``UPLO="L"``) or upper triangle of ``x``: what
    ``np.linalg.eigh`` decomposes. Linear; its transpose is ``to_triangle``."""
    half = np.tril(x) if UPLO in ("L", "l") else np.triu(x)
    return half + mT(half) - x * np.eye(np.shape(x)[-1], dtype=np.result_type(x))


def to_triangle(x, UPLO="L"):
    """The transpose of ``from_triangle``: ``x + x.T`` on the lower (upper) triangle, ``x`` on
    the diagonal, zeros elsewhere -- the adjoint of a function of the triangle numpy reads."""
    eye = np.eye(np.shape(x)[-1], dtype=np.result_type(x))
    both = x + mT(x)
    return (np.tril(both) if UPLO in ("L", "l") else np.triu(both)) - x * eye


def triple_like(out, first, second, third):
    """``(first, second, third)`` of the type of the triple ``out`` (numpy's named tuple)."""
    return type(out)(first, second, third) if hasattr(out, "_fields") else (first, second, third)


def eigh_vjp(g, ans, a, UPLO="L"):
    """``w, v = np.linalg.eigh(a)``: ``a_bar = v (diag(w_bar) + F * (v.T v_bar)) v.T``, ``F`` the
    ``gaps`` of ``w``, on the triangle numpy reads (``to_triangle``; autograd's convention). The
    eigenvectors' term is left out where they got no adjoint, so that a function of the
    eigenvalues alone stays finite at repeated eigenvalues (autograd does the same)."""
    return to_triangle(
        checked(ans, a, "np.linalg.eigh")[1]
        @ (
            item_adjoint(g, 0, ans[0])[..., :, None]
            * np.eye(np.shape(ans[0])[-1], dtype=np.result_type(ans[0]))
            + (
                gaps(ans[0]) * (mT(ans[1]) @ item_adjoint(g, 1, ans[1]))
                if maybe_any(item_adjoint(g, 1, ans[1]))
                else 0.0
            )
        )
        @ mT(ans[1]),
        UPLO,
    )


defvjp(np.linalg.eigh, eigh_vjp)


def eigh_jvp(t, ans, a, UPLO="L"):
    """``dw = diag(v.T s v)``, ``dv = v (F * (v.T s v))``, ``s`` the symmetric direction numpy
    reads (``from_triangle``): the transpose of ``eigh_vjp`` (with its eigenvectors' term)."""
    return pair_like(
        checked(ans, a, "np.linalg.eigh"),
        np.diagonal(mT(ans[1]) @ from_triangle(t, UPLO) @ ans[1], 0, -2, -1),
        ans[1] @ (gaps(ans[0]) * (mT(ans[1]) @ from_triangle(t, UPLO) @ ans[1])),
    )


defjvp(np.linalg.eigh, eigh_jvp)


def eigvalsh_vjp(g, ans, a, UPLO="L"):
    """``v diag(g) v.T`` on the triangle numpy reads, ``v`` the eigenvectors (computed again:
    ``eigvalsh`` returns none). Finite at repeated eigenvalues."""
    return to_triangle(
        checked(np.linalg.eigh(a, UPLO)[1], a, "np.linalg.eigvalsh")
        * g[..., None, :]
        @ mT(np.linalg.eigh(a, UPLO)[1]),
        UPLO,
    )


defvjp(np.linalg.eigvalsh, eigvalsh_vjp)


def eigvalsh_jvp(t, ans, a, UPLO="L"):
    """``diag(v.T s v)``, ``s`` the symmetric direction numpy reads."""
    return np.sum(
        checked(np.linalg.eigh(a, UPLO)[1], a, "np.linalg.eigvalsh")
        * (from_triangle(t, UPLO) @ np.linalg.eigh(a, UPLO)[1]),
        axis=-2,
    )


defjvp(np.linalg.eigvalsh, eigvalsh_jvp)


def svd_vjp(g, ans, a, full_matrices=True, compute_uv=True, hermitian=False):
    """``u, s, vh = np.linalg.svd(a, full_matrices=False)``: Townsend's formula,
    ``u (F * (u.T u_bar - u_bar.T u) s + diag(s_bar) + s F * (vh vh_bar.T - vh_bar vh.T)) vh``,
    ``F`` the ``gaps`` of ``s**2``, plus ``(1 - u u.T) u_bar / s vh`` of a tall matrix and
    ``u (vh_bar (1 - vh.T vh)) / s`` of a wide one. A vectors' term is left out where they got no
    adjoint (finite at repeated singular values, as ``eigh_vjp``). ``compute_uv=False``: ``u
    diag(s_bar) vh``, of the vectors computed again. Full matrices of a matrix that is not square
    have no derivative (the extra columns are any basis): refused, as ``hermitian=True`` (numpy
    reads one triangle then)."""
    return (
        checked(
            ans,
            a,
            "np.linalg.svd",
            hermitian or full_matrices and np.shape(a)[-1] != np.shape(a)[-2],
        )[0]
        @ (
            (
                gaps(ans[1] ** 2)
                * (
                    mT(ans[0]) @ item_adjoint(g, 0, ans[0])
                    - mT(item_adjoint(g, 0, ans[0])) @ ans[0]
                )
                * ans[1][..., None, :]
                if maybe_any(item_adjoint(g, 0, ans[0]))
                else 0.0
            )
            + item_adjoint(g, 1, ans[1])[..., :, None]
            * np.eye(np.shape(ans[1])[-1], dtype=np.result_type(ans[1]))
            + (
                ans[1][..., :, None]
                * gaps(ans[1] ** 2)
                * (
                    ans[2] @ mT(item_adjoint(g, 2, ans[2]))
                    - item_adjoint(g, 2, ans[2]) @ mT(ans[2])
                )
                if maybe_any(item_adjoint(g, 2, ans[2]))
                else 0.0
            )
        )
        @ ans[2]
        + (
            (item_adjoint(g, 0, ans[0]) - ans[0] @ (mT(ans[0]) @ item_adjoint(g, 0, ans[0])))
            / ans[1][..., None, :]
            @ ans[2]
            if np.shape(a)[-2] > np.shape(a)[-1] and maybe_any(item_adjoint(g, 0, ans[0]))
            else 0.0
        )
        + (
            ans[0]
            @ (
                (item_adjoint(g, 2, ans[2]) - item_adjoint(g, 2, ans[2]) @ mT(ans[2]) @ ans[2])
                / ans[1][..., :, None]
            )
            if np.shape(a)[-2] < np.shape(a)[-1] and maybe_any(item_adjoint(g, 2, ans[2]))
            else 0.0
        )
        if compute_uv
        else checked(np.linalg.svd(a, full_matrices=False)[0], a, "np.linalg.svd", hermitian)
        * g[..., None, :]
        @ np.linalg.svd(a, full_matrices=False)[2]
    )


defvjp(np.linalg.svd, svd_vjp)


def svd_jvp(t, ans, a, full_matrices=True, compute_uv=True, hermitian=False):
    """With ``p = u.T t vh.T``: ``ds = diag(p)``, ``du = u (F * (p s + s p.T)) + (1 - u u.T) t
    vh.T / s``, ``dvh = -(F * (s p + p.T s)) vh + u.T t (1 - vh.T vh) / s`` (the last terms of
    a tall and of a wide matrix): the transpose of ``svd_vjp``."""
    return (
        triple_like(
            checked(
                ans,
                a,
                "np.linalg.svd",
                hermitian or full_matrices and np.shape(a)[-1] != np.shape(a)[-2],
            ),
            ans[0]
            @ (
                gaps(ans[1] ** 2)
                * (
                    (mT(ans[0]) @ t @ mT(ans[2])) * ans[1][..., None, :]
                    + ans[1][..., :, None] * mT(mT(ans[0]) @ t @ mT(ans[2]))
                )
            )
            + (
                (t @ mT(ans[2]) - ans[0] @ (mT(ans[0]) @ t @ mT(ans[2]))) / ans[1][..., None, :]
                if np.shape(a)[-2] > np.shape(a)[-1]
                else 0.0
            ),
            np.diagonal(mT(ans[0]) @ t @ mT(ans[2]), 0, -2, -1),
            -(
                gaps(ans[1] ** 2)
                * (
                    ans[1][..., :, None] * (mT(ans[0]) @ t @ mT(ans[2]))
                    + mT(mT(ans[0]) @ t @ mT(ans[2])) * ans[1][..., None, :]
                )
            )
            @ ans[2]
            + (
                (mT(ans[0]) @ t - (mT(ans[0]) @ t @ mT(ans[2])) @ ans[2]) / ans[1][..., :, None]
                if np.shape(a)[-2] < np.shape(a)[-1]
                else 0.0
            ),
        )
        if compute_uv
        else np.sum(
            checked(np.linalg.svd(a, full_matrices=False)[0], a, "np.linalg.svd", hermitian)
            * (t @ mT(np.linalg.svd(a, full_matrices=False)[2])),
            axis=-2,
        )
    )


defjvp(np.linalg.svd, svd_jvp)


def qr_vjp(g, ans, a, mode="reduced"):
    """``q, r = np.linalg.qr(a)`` (m >= n): ``a_bar = (q_bar + q copyltu(m)) r^-T``, ``m = r_bar
    r.T - q.T q_bar``, ``copyltu`` its upper triangle mirrored (``from_triangle(m, "U")``); a
    singular ``r`` gives infinities (``inverse``)."""
    return (
        checked(
            item_adjoint(g, 0, ans[0]),
            a,
            "np.linalg.qr",
            mode != "reduced" or np.shape(a)[-2] < np.shape(a)[-1],
        )
        + ans[0]
        @ from_triangle(
            item_adjoint(g, 1, ans[1]) @ mT(ans[1]) - mT(ans[0]) @ item_adjoint(g, 0, ans[0]),
            "U",
        )
    ) @ mT(inverse(ans[1]))


defvjp(np.linalg.qr, qr_vjp)


def qr_jvp(t, ans, a, mode="reduced"):
    """With ``c = q.T t r^-1`` and ``b = to_triangle(c, "U")`` (its upper triangle, plus the
    transpose of its strict lower one): ``dq = t r^-1 - q b``, ``dr = b r``."""
    return pair_like(
        checked(ans, a, "np.linalg.qr", mode != "reduced" or np.shape(a)[-2] < np.shape(a)[-1]),
        t @ inverse(ans[1]) - ans[0] @ to_triangle(mT(ans[0]) @ t @ inverse(ans[1]), "U"),
        to_triangle(mT(ans[0]) @ t @ inverse(ans[1]), "U") @ ans[1],
    )


defjvp(np.linalg.qr, qr_jvp)


def pinv_vjp(g, ans, a, rcond=None, hermitian=False, *, rtol=None):
    """Golub and Pereyra's derivative of ``p = pinv(a)`` (of constant rank), transposed:
    ``-p.T g p.T + (1 - a p) g.T p p.T + p.T p g.T (1 - p a)``."""
    return (
        -mT(checked(ans, a, "np.linalg.pinv", hermitian)) @ g @ mT(ans)
        + (mT(g) - a @ (ans @ mT(g))) @ (ans @ mT(ans))
        + (mT(ans) @ ans) @ (mT(g) - (mT(g) @ ans) @ a)
    )


defvjp(np.linalg.pinv, pinv_vjp)


def pinv_jvp(t, ans, a, rcond=None, hermitian=False, *, rtol=None):
    """``dp = -p t p + p p.T t.T (1 - a p) + (1 - p a) t.T p.T p``."""
    return (
        -checked(ans, a, "np.linalg.pinv", hermitian) @ t @ ans
        + (ans @ mT(ans)) @ (mT(t) - (mT(t) @ a) @ ans)
        + (mT(t) - ans @ (a @ mT(t))) @ (mT(ans) @ ans)
    )


defjvp(np.linalg.pinv, pinv_jvp)


def lstsq_a(g, ans, a, b, rcond=None):
    """``x, residuals, rank, s = np.linalg.lstsq(a, b)``: ``x = p b``, ``p = pinv(a)`` of the
    singular values lstsq keeps, so ``pinv_vjp`` at ``x_bar b.T``: ``-(p.T x_bar) x.T + r (p
    p.T x_bar).T + (p.T x) ((1 - p a) x_bar).T``, ``r = b - a x`` (the second term is zero of a
    matrix of full row rank, the third of full column rank: left out there), each product with
    ``p`` or ``p.T`` a least squares solution (``lstsq`` of ``a`` or ``a.T``, the same
    ``rcond``); the residuals (``|r|**2``, at the minimum) add ``-2 r residuals_bar x.T``, the
    singular values ``u diag(s_bar) vh``. The rank is a step. A rank of another library (CuPy's
    lstsq returns a 0-d array, Dask's a lazy one) is not read: the terms it guards are computed
    -- each is zero at full rank, so that costs time, not the value."""
    return (
        np.einsum(
            "ik,jk->ij" if np.ndim(b) == 2 else "i,j->ij",
            -np.linalg.lstsq(
                mT(checked(a, a, "np.linalg.lstsq")), item_adjoint(g, 0, ans[0]), rcond
            )[0]
            - (
                2 * (b - a @ ans[0]) * item_adjoint(g, 1, ans[1])
                if 0 not in np.shape(ans[1])
                else 0.0
            ),
            ans[0],
        )
        + (
            np.einsum(
                "ik,jk->ij" if np.ndim(b) == 2 else "i,j->ij",
                b - a @ ans[0],
                np.linalg.lstsq(
                    a, np.linalg.lstsq(mT(a), item_adjoint(g, 0, ans[0]), rcond)[0], rcond
                )[0],
            )
            if foreign(ans[2]) or ans[2] < np.shape(a)[0]
            else 0.0
        )
        + (
            np.einsum(
                "ik,jk->ij" if np.ndim(b) == 2 else "i,j->ij",
                np.linalg.lstsq(mT(a), ans[0], rcond)[0],
                item_adjoint(g, 0, ans[0])
                - np.linalg.lstsq(a, a @ item_adjoint(g, 0, ans[0]), rcond)[0],
            )
            if foreign(ans[2]) or ans[2] < np.shape(a)[1]
            else 0.0
        )
        + (
            np.linalg.svd(a, full_matrices=False)[0]
            * item_adjoint(g, 3, ans[3])
            @ np.linalg.svd(a, full_matrices=False)[2]
            if maybe_any(item_adjoint(g, 3, ans[3]))
            else 0.0
        )
    )


def lstsq_b(g, ans, a, b, rcond=None):
    """``p.T x_bar``, and ``2 r residuals_bar`` of the residuals."""
    return checked(
        np.linalg.lstsq(mT(a), item_adjoint(g, 0, ans[0]), rcond)[0]
        + (2 * (b - a @ ans[0]) * item_adjoint(g, 1, ans[1]) if 0 not in np.shape(ans[1]) else 0.0),
        a,
        "np.linalg.lstsq",
    )


defvjp(np.linalg.lstsq, lstsq_a, lstsq_b)


def lstsq_a_jvp(t, ans, a, b, rcond=None):
    """``dx = -p t x + p p.T t.T r + (1 - p a) t.T p.T x`` (``pinv_jvp`` times ``b``), the
    residuals' ``-2 sum(r t x)``, the singular values' ``diag(u.T t vh.T)``; no tangent of the
    rank (a step)."""
    return (
        np.linalg.lstsq(
            checked(a, a, "np.linalg.lstsq"),
            -(t @ ans[0])
            + (
                np.linalg.lstsq(mT(a), mT(t) @ (b - a @ ans[0]), rcond)[0]
                if foreign(ans[2]) or ans[2] < np.shape(a)[0]
                else 0.0
            ),
            rcond,
        )[0]
        + (
            mT(t) @ np.linalg.lstsq(mT(a), ans[0], rcond)[0]
            - np.linalg.lstsq(a, a @ (mT(t) @ np.linalg.lstsq(mT(a), ans[0], rcond)[0]), rcond)[0]
            if foreign(ans[2]) or ans[2] < np.shape(a)[1]
            else 0.0
        ),
        (
            -2 * np.sum((b - a @ ans[0]) * (t @ ans[0]), axis=0, keepdims=np.ndim(b) == 1)
            if 0 not in np.shape(ans[1])
            else tangent_zeros(ans[1])
        ),
        tangent_zeros(ans[2]),
        np.sum(
            np.linalg.svd(a, full_matrices=False)[0]
            * (t @ mT(np.linalg.svd(a, full_matrices=False)[2])),
            axis=-2,
        ),
    )


def lstsq_b_jvp(t, ans, a, b, rcond=None):
    """``p t``, and ``2 sum(r t)`` of the residuals."""
    return (
        np.linalg.lstsq(checked(a, a, "np.linalg.lstsq"), t, rcond)[0],
        (
            2 * np.sum((b - a @ ans[0]) * t, axis=0, keepdims=np.ndim(b) == 1)
            if 0 not in np.shape(ans[1])
            else tangent_zeros(ans[1])
        ),
        tangent_zeros(ans[2]),
        tangent_zeros(ans[3]),
    )


defjvp(np.linalg.lstsq, lstsq_a_jvp, lstsq_b_jvp)


def eig_vjp(g, ans, a):
    """``w, v = np.linalg.eig(a)`` of a real ``a``: of ``dw = diag(v^-1 t v)`` and ``dv = v (F *
    (v^-1 t v))`` (``F`` the ``gaps`` of ``w``; holomorphic, so no conjugates: the convention of
    complex adjoints) with numpy's normalization of each column -- norm 1, its largest entry real
    -- the transpose: ``a_bar = Re(v^-T (diag(w_bar) + F * (v.T c)) v.T)``, ``c`` the adjoint of
    ``v`` less the normalization's part. The eigenvectors' term is left out where they got no
    adjoint (finite at repeated eigenvalues, as ``eigh_vjp``)."""
    return np.real(
        mT(inverse(checked(ans, a, "np.linalg.eig")[1]))
        @ (
            item_adjoint(g, 0, ans[0])[..., :, None]
            * np.eye(np.shape(ans[0])[-1], dtype=np.result_type(ans[0]))
            + (
                gaps(ans[0])
                * (
                    mT(ans[1])
                    @ (
                        item_adjoint(g, 1, ans[1])
                        - np.conj(ans[1])
                        * np.real(np.sum(item_adjoint(g, 1, ans[1]) * ans[1], axis=-2))[
                            ..., None, :
                        ]
                        - (
                            1j
                            * (np.abs(ans[1]) == np.max(np.abs(ans[1]), axis=-2, keepdims=True))
                            * (
                                np.imag(np.sum(item_adjoint(g, 1, ans[1]) * ans[1], axis=-2))
                                / np.sum(
                                    (
                                        np.abs(ans[1])
                                        == np.max(np.abs(ans[1]), axis=-2, keepdims=True)
                                    )
                                    * ans[1],
                                    axis=-2,
                                )
                            )[..., None, :]
                            if np.iscomplexobj(ans[1])
                            else 0.0
                        )
                    )
                )
                if maybe_any(item_adjoint(g, 1, ans[1]))
                else 0.0
            )
        )
        @ mT(ans[1])
    )


defvjp(np.linalg.eig, eig_vjp)


def eig_jvp(t, ans, a):
    """``dw = diag(v^-1 t v)``; ``dv = v (F * (v^-1 t v))`` less its part that numpy's
    normalization takes out: ``v Re(v^H dv)`` (the norm) and ``i v Im(dv_k / v_k)`` of the
    largest entry ``v_k`` of each column (kept real)."""
    return pair_like(
        checked(ans, a, "np.linalg.eig"),
        np.diagonal(inverse(ans[1]) @ t @ ans[1], 0, -2, -1),
        ans[1] @ (gaps(ans[0]) * (inverse(ans[1]) @ t @ ans[1]))
        - ans[1]
        * np.real(
            np.sum(
                np.conj(ans[1]) * (ans[1] @ (gaps(ans[0]) * (inverse(ans[1]) @ t @ ans[1]))),
                axis=-2,
            )
        )[..., None, :]
        - (
            1j
            * ans[1]
            * np.imag(
                np.sum(
                    (np.abs(ans[1]) == np.max(np.abs(ans[1]), axis=-2, keepdims=True))
                    * (ans[1] @ (gaps(ans[0]) * (inverse(ans[1]) @ t @ ans[1]))),
                    axis=-2,
                )
                / np.sum(
                    (np.abs(ans[1]) == np.max(np.abs(ans[1]), axis=-2, keepdims=True)) * ans[1],
                    axis=-2,
                )
            )[..., None, :]
            if np.iscomplexobj(ans[1])
            else 0.0
        ),
    )


defjvp(np.linalg.eig, eig_jvp)


def eigvals_vjp(g, ans, a):
    """``Re(v^-T diag(g) v.T)`` of a real ``a``, ``v`` the eigenvectors (computed again:
    ``eigvals`` returns none; numpy gives the eigenvalues in the same order)."""
    return np.real(
        mT(inverse(checked(np.linalg.eig(a)[1], a, "np.linalg.eigvals")))
        * g[..., None, :]
        @ mT(np.linalg.eig(a)[1])
    )


defvjp(np.linalg.eigvals, eigvals_vjp)


def eigvals_jvp(t, ans, a):
    """``diag(v^-1 t v)``."""
    return np.sum(
        mT(inverse(checked(np.linalg.eig(a)[1], a, "np.linalg.eigvals")))
        * (t @ np.linalg.eig(a)[1]),
        axis=-2,
    )


defjvp(np.linalg.eigvals, eigvals_jvp)
