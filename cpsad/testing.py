"""Gradient checks users and tests share: central finite differences along random directions.

``check_grads(f, *args, argnums=0)`` compares ``cpsad.grad(f)`` with
``(f(x + eps v) - f(x - eps v)) / (2 eps)`` for a few random directions ``v`` (of the arguments'
pytree structure) and raises ``AssertionError`` with the numbers when they disagree.

For functions of any output, with a random cotangent ``c``: ``check_rule(primitive, *args,
wrt=...)`` checks a primitive's registered adjoint rules, called directly, and ``check_vjp(f,
*args)`` checks ``cpsad.vjp(f, *args)``, both as ``<adjoint, v> == <c, directional difference>``.
``check_rule`` checks the primitive's tangent (forward-mode) rules too, where it has them: their
sum against the directional difference itself, and each against its adjoint rule by the transpose
identity ``<tangent(v), c> == <v, adjoint(c)>``.
"""

from __future__ import annotations

import numpy as np

from cpsad.api import grad
from cpsad.deferred import Deferred
from cpsad.pytree import leaves  # noqa: F401  (part of the testing helpers' interface)


def _as_float(x):
    """``x`` in float64 -- complex128 where it is complex."""
    if isinstance(x, np.ndarray):
        return x.astype(np.complex128 if np.iscomplexobj(x) else np.float64)
    if isinstance(x, (complex, np.complexfloating)):
        return complex(x)
    return float(x)


def _normal_like(x, rng):
    """Standard normal numbers of ``x``'s shape: complex (both parts) where ``x`` is complex, so
    that a direction moves a complex number along its real and its imaginary axis."""
    shape = np.shape(x)
    if np.iscomplexobj(x):
        v = rng.standard_normal(shape) + 1j * rng.standard_normal(shape)
        return v if shape else complex(v)
    return rng.standard_normal(shape) if shape else float(rng.standard_normal())


def _real_inner(a, b) -> float:
    """``Re sum(a * b)``, no conjugate: for the gradient ``g = df/dx - i df/dy`` of a real
    function at a complex point (autograd's and JAX's convention, docs/reference.md), the
    derivative along ``v`` is ``Re sum(g * v)``; for real values, the plain inner product."""
    return float(np.real(np.sum(np.asarray(a) * np.asarray(b))))


def directional(f, args, argnums, direction_seed, eps):
    """(finite-difference slope, list of (argnum, direction pytree)) along one random direction."""
    rng = np.random.default_rng(direction_seed)
    plus, minus = list(args), list(args)
    dirs = []
    for i in argnums:
        ls, build = leaves(args[i])
        vs = [_normal_like(x, rng) for x in ls]
        plus[i] = build([_as_float(x) + eps * v for x, v in zip(ls, vs)])
        minus[i] = build([_as_float(x) - eps * v for x, v in zip(ls, vs)])
        dirs.append((i, vs))
    fd = (float(np.real(f(*plus))) - float(np.real(f(*minus)))) / (2 * eps)
    return fd, dirs


def dot_gradient(g, arg, vs) -> float:
    gl, _ = leaves(g)
    al, _ = leaves(arg)
    assert len(gl) == len(al), f"gradient structure differs from the argument's: {g!r}"
    total = 0.0
    for gi, ai, vi in zip(gl, al, vs):
        assert np.shape(gi) == np.shape(ai), f"gradient shape {np.shape(gi)} != {np.shape(ai)}"
        total += _real_inner(gi, vi)
    return total


def check_grads(
    f, *args, argnums=0, eps=1e-6, rtol=1e-4, atol=1e-6, directions=3, seed=0, gradient=None
):
    """Assert that cpsad's gradient of ``f`` matches central finite differences."""
    nums = (argnums,) if isinstance(argnums, int) else tuple(argnums)
    g = grad(f, argnums=argnums)(*args) if gradient is None else gradient
    gs = (g,) if isinstance(argnums, int) else tuple(g)
    for d in range(directions):
        fd, dirs = directional(f, args, nums, seed + d, eps)
        ad = sum(dot_gradient(gi, args[i], vs) for gi, (i, vs) in zip(gs, dirs))
        if not np.isclose(ad, fd, rtol=rtol, atol=atol):
            raise AssertionError(
                f"gradient of {getattr(f, '__name__', f)} disagrees with finite differences along "
                f"direction {d}: <grad, v> = {ad!r}, finite difference = {fd!r}"
            )
    return g


# --------------------------------------------------------------------------- one rule at a time


def _random_like(x, rng):
    """A random value of ``x``'s structure: a cotangent of an output, or a direction of an input
    (of a ``Sparse``: a ``Sparse``)."""
    if isinstance(x, dict):
        return _same_dict(x, {k: _random_like(v, rng) for k, v in x.items()})
    if isinstance(x, (list, tuple)):
        return (
            type(x)(_random_like(v, rng) for v in x)
            if not hasattr(x, "_fields")
            else tuple(_random_like(v, rng) for v in x)
        )
    if x is None:
        return None
    if isinstance(x, Deferred):  # a weight's deferred adjoint: of the array it stands for
        x = x.array()
    if isinstance(x, np.ndarray):
        dtype = x.dtype if np.issubdtype(x.dtype, np.inexact) else np.float64
        return np.asarray(_normal_like(x, rng)).astype(dtype)
    if isinstance(x, np.generic):
        if not np.issubdtype(x.dtype, np.inexact):
            return 0.0
        return x.dtype.type(_normal_like(x, rng))
    if isinstance(x, complex):
        return _normal_like(x, rng)
    return float(rng.standard_normal())


def _same_dict(x, entries: dict):
    """``entries`` as a dict of ``x``'s kind: a ``Sparse`` stays one."""
    from cpsad.runtime import Sparse

    return Sparse(entries) if isinstance(x, Sparse) else entries


def _aligned(a, like):
    """``a`` with its dicts' entries in the order of ``like``'s, a missing one (an entry a
    ``Sparse`` leaves out) as zeros, and ``None`` as zero: two values' leaves then pair up."""
    from cpsad.runtime import tangent_zeros

    if a is None:
        return tangent_zeros(like)
    if isinstance(like, dict) and isinstance(a, dict):
        return {k: _aligned(a.get(k), v) for k, v in like.items()}
    if isinstance(like, (list, tuple)) and isinstance(a, dict):  # a Sparse adjoint of a list
        return [_aligned(a.get(i), v) for i, v in enumerate(like)]
    if isinstance(like, (list, tuple)) and isinstance(a, (list, tuple)) and len(a) == len(like):
        return [_aligned(x, v) for x, v in zip(a, like)]
    return a


def _inner(a, b) -> float:
    """``<a, b>``: the sum of the products of the leaves of two values of the same structure
    (entries of dicts paired by key, a ``Sparse``'s missing entries zeros)."""
    la, _ = leaves(_aligned(a, b))
    lb, _ = leaves(_aligned(b, a))
    assert len(la) == len(lb), f"structures differ: {a!r} and {b!r}"
    return sum(_real_inner(x, y) for x, y in zip(la, lb))


def _shift(x, v, eps):
    if isinstance(x, dict):
        return _same_dict(x, {k: _shift(a, v[k], eps) for k, a in x.items()})
    if isinstance(x, (list, tuple)):
        shifted = [_shift(a, b, eps) for a, b in zip(x, v)]
        return type(x)(*shifted) if hasattr(x, "_fields") else type(x)(shifted)
    if x is None:
        return None
    if isinstance(x, np.ndarray):
        return _as_float(x) + eps * np.asarray(v, dtype=_as_float(x).dtype)
    if isinstance(x, (complex, np.complexfloating)) or isinstance(v, complex):
        return complex(x) + eps * complex(v)
    return float(x) + eps * float(v)


def _positions(signature, n: int) -> list:
    """``(parameter name, j)`` of each of ``n`` positional arguments: ``j`` is the argument's place
    in a ``*items`` parameter, None for an ordinary one."""
    import inspect

    out: list = []
    for p in signature.parameters.values():
        if p.kind == inspect.Parameter.VAR_POSITIONAL:
            out += [(p.name, j) for j in range(n - len(out))]
        elif p.kind in (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD):
            out.append((p.name, None))
    return out[:n]


def check_rule(
    primitive,
    *args,
    wrt=0,
    rule=None,
    seed=0,
    eps=1e-6,
    rtol=1e-5,
    atol=1e-7,
    directions=2,
    direction=None,
    tangents=True,
    adjoint_form=None,
    **kwargs,
):
    """Check the adjoint rules of ``primitive`` at ``primitive(*args, **kwargs)`` against central
    finite differences, with a random cotangent ``c`` and random directions ``v``::

        <rule(c), v>  ==  <c, (primitive(x + eps v) - primitive(x - eps v)) / (2 eps)>

    ``wrt`` is the position (or tuple of positions) in ``args`` of the arguments to check; the rule
    is the one registered for ``primitive`` unless ``rule`` (a ``Rule`` of ``cpsad.rules.core``,
    e.g. of a method) is given. ``direction(i, v)`` may constrain the direction of argument ``i``
    (to symmetric matrices, say). Each contribution must have its argument's shape (broadcasting
    undone). Returns the contributions, in the order of ``wrt``. ``adjoint_form(c)`` is the form the
    rule receives the cotangent in: by default ``as_adjoint`` (containers become ``Sparse``).

    Where the checked arguments' parameters have tangent rules, those are checked too (unless
    ``tangents=False``): each contribution has the result's structure, shapes and float types, each
    is the transpose of its adjoint rule, ``<tangent(v), c> == <v, rule(c)>``, and their sum is the
    directional derivative, ``(primitive(x + eps v) - primitive(x - eps v)) / (2 eps)``.
    """
    from cpsad.pytree import densify
    from cpsad.rules import core
    from cpsad.runtime import as_adjoint

    rule = core.lookup(primitive) if rule is None else rule
    if rule is None:
        raise ValueError(f"{primitive!r} has no registered rule")
    nums = (wrt,) if isinstance(wrt, int) else tuple(wrt)
    rule.signature.bind(*args, **kwargs)  # the call must be one the rule understands
    where = _positions(rule.signature, len(args))
    rng = np.random.default_rng(seed)
    ans = primitive(*args, **kwargs)
    c = _random_like(ans, rng)
    g = (adjoint_form or as_adjoint)(c)
    out = []
    for i in nums:
        param, j = where[i]
        template = rule.adjoints.get(param)
        if template is None:
            raise AssertionError(f"{rule.name} has no rule for its argument {param!r}")
        contribution = template.fn(g, ans, *args, **kwargs)
        if j is not None:  # *items: one adjoint per item
            contribution = contribution[j]
        x = args[i]
        if not isinstance(x, (list, tuple)) and np.shape(contribution) != np.shape(x):
            raise AssertionError(
                f"{rule.name}: the adjoint of argument {i} has shape {np.shape(contribution)}, "
                f"the argument {np.shape(x)}"
            )
        out.append(densify(contribution, x))
    _agree(primitive, args, kwargs, nums, c, out, rng, eps, rtol, atol, directions, direction)
    if tangents:
        forward = [i for i in nums if where[i][0] in rule.tangents]
        if forward:
            adjoints = {i: a for i, a in zip(nums, out)}
            _check_tangents(
                rule, primitive, args, kwargs, forward, where, ans, c, adjoints, seed, eps,
                rtol, atol, directions, direction,
            )  # fmt: skip
    return out


def _tangents_of(rule, args, kwargs, where, ans, vs):
    """``{parameter: its tangent rule's contribution}`` for the directions ``vs`` of the
    arguments (a ``*items`` parameter gets the tuple of its items' directions, zeros where an item
    has none)."""
    from cpsad.runtime import tangent_zeros

    per_param: dict = {}
    for i, (param, j) in enumerate(where):
        if param not in rule.tangents or not any(where[k][0] == param for k in vs):
            continue
        if j is None:
            per_param[param] = vs[i]
        else:
            v = vs[i] if i in vs else tangent_zeros(args[i])
            per_param[param] = per_param.get(param, ()) + (v,)
    return {
        p: rule.tangents[p].fn(t, ans, *args, **kwargs)
        for p, t in per_param.items()
        if t is not None
    }


def _check_tangents(
    rule, f, args, kwargs, nums, where, ans, c, adjoints, seed, eps, rtol, atol, directions,
    direction,
):  # fmt: skip
    """The tangent rules of the arguments ``nums``: shapes and types, transposes of the adjoint
    rules, and their sum against central finite differences."""
    rng = np.random.default_rng(seed + 7919)
    name = rule.name
    ans_leaves, _ = leaves(ans)
    for d in range(directions):
        vs = {i: _random_like(args[i], rng) for i in nums}
        if direction is not None:
            vs = {i: direction(i, v) for i, v in vs.items()}
        contributions = _tangents_of(rule, args, kwargs, where, ans, vs)
        for param, t in contributions.items():
            _same_entries(name, param, t, ans)
            t = contributions[param] = _aligned(t, ans)
            _same_kind(name, param, t, ans, ans_leaves)
            # transpose: <tangent(v), c> == <v, adjoint(c)>, summed over the parameter's arguments
            forward = _inner(t, c)
            backward = sum(_inner(vs[i], adjoints[i]) for i in nums if where[i][0] == param)
            scale = _inner_abs(t, c) + sum(
                _inner_abs(vs[i], adjoints[i]) for i in nums if where[i][0] == param
            )
            # rounding only: relative to the sizes of the products, in the coarsest float type
            tol = 1e3 * _coarsest_eps(t, c, [vs[i] for i in nums], [adjoints[i] for i in nums])
            if not abs(forward - backward) <= tol * scale + 1e-300:
                raise AssertionError(
                    f"{name}: the tangent rule of {param!r} is not the transpose of its adjoint "
                    f"rule: <tangent(v), c> = {forward!r} but <v, adjoint(c)> = {backward!r} "
                    f"(direction {d})"
                )
        plus = [_shift(a, vs[i], eps) if i in vs else a for i, a in enumerate(args)]
        minus = [_shift(a, vs[i], -eps) if i in vs else a for i, a in enumerate(args)]
        hi, _ = leaves(f(*plus, **kwargs))
        lo, _ = leaves(f(*minus, **kwargs))
        total = [np.zeros(np.shape(x)) for x in ans_leaves]
        for t in contributions.values():
            for k, leaf in enumerate(leaves(t)[0]):
                total[k] = total[k] + np.asarray(_as_float(leaf))
        for k, (ad, h, low) in enumerate(zip(total, hi, lo)):
            fd = (np.asarray(_as_float(h)) - np.asarray(_as_float(low))) / (2 * eps)
            err = np.max(np.abs(ad - fd), initial=0.0)
            size = max(np.max(np.abs(fd), initial=0.0), np.max(np.abs(ad), initial=0.0))
            if not err <= atol + rtol * size:
                raise AssertionError(
                    f"{name}: the tangent is {ad!r} but the finite difference is {fd!r} "
                    f"(direction {d}, arguments {tuple(nums)}, part {k} of the result)"
                )


def _same_entries(name, param, t, ans):
    """A tangent of a dict (a ``Sparse``) has no entry the dict has not, and is a ``Sparse``
    where the dict is one; a tangent of ``None`` is ``None``."""
    from cpsad.runtime import Sparse

    if ans is None and t is not None:
        raise AssertionError(f"{name}: the tangent from {param!r} of a None result is {t!r}")
    if isinstance(ans, dict) and isinstance(t, dict):
        extra = set(t) - set(ans)
        if extra:
            raise AssertionError(f"{name}: the tangent from {param!r} has entries {extra} more")
        if isinstance(ans, Sparse) and not isinstance(t, Sparse):
            raise AssertionError(f"{name}: the tangent from {param!r} of a Sparse is a {type(t)}")
        for k, v in t.items():
            _same_entries(name, param, v, ans[k])


def _same_kind(name, param, t, ans, ans_leaves):
    """A tangent contribution has the result's structure, shapes and (float) types."""
    tl, _ = leaves(t)
    if len(tl) != len(ans_leaves):
        raise AssertionError(
            f"{name}: the tangent from {param!r} has {len(tl)} parts, the result {len(ans_leaves)}:"
            f" {t!r} for {ans!r}"
        )
    for x, y in zip(tl, ans_leaves):
        if np.shape(x) != np.shape(y):
            raise AssertionError(
                f"{name}: the tangent from {param!r} has shape {np.shape(x)}, the result "
                f"{np.shape(y)}"
            )
        want = np.result_type(y)
        if isinstance(y, (np.ndarray, np.generic)) and np.issubdtype(want, np.inexact):
            if np.result_type(x) != want:
                raise AssertionError(
                    f"{name}: the tangent from {param!r} is {np.result_type(x)}, the result {want}"
                )


def _coarsest_eps(*values) -> float:
    """The machine epsilon of the least precise float type among the values' leaves."""
    eps = float(np.finfo(np.float64).eps)
    for v in values:
        for leaf in leaves(v)[0]:
            kind = np.result_type(leaf)
            if np.issubdtype(kind, np.inexact):
                eps = max(eps, float(np.finfo(kind).eps))
    return eps


def _inner_abs(a, b) -> float:
    """``<|a|, |b|>``: the scale of ``<a, b>``, for a tolerance of rounding."""
    la, _ = leaves(_aligned(a, b))
    lb, _ = leaves(_aligned(b, a))
    return sum(float(np.sum(np.abs(np.asarray(x) * np.asarray(y)))) for x, y in zip(la, lb))


def check_vjp(
    f, *args, seed=0, eps=1e-6, rtol=1e-5, atol=1e-7, directions=2, direction=None, **kwargs
):
    """Check ``cpsad.vjp(f, *args, **kwargs)`` against central finite differences, like
    ``check_rule``: a random cotangent, random directions of every positional argument. Returns
    the gradients."""
    from cpsad.api import vjp

    rng = np.random.default_rng(seed)
    ans, pullback = vjp(f, *args, **kwargs)
    c = _random_like(ans, rng)
    grads = pullback(c)
    nums = tuple(range(len(args)))
    for i in nums:
        la, _ = leaves(args[i])
        lg, _ = leaves(grads[i])
        shapes = [np.shape(x) for x in la], [np.shape(x) for x in lg]
        assert shapes[0] == shapes[1], f"gradient {i} has shapes {shapes[1]}, not {shapes[0]}"
    _agree(f, args, kwargs, nums, c, grads, rng, eps, rtol, atol, directions, direction)
    return grads


def check_jvp(
    f, *args, seed=0, eps=1e-6, rtol=1e-5, atol=1e-7, directions=2, direction=None, **kwargs
):
    """Check ``cpsad.jvp(f, args, v)`` along random directions ``v`` of every positional argument:
    against central finite differences, ``(f(x + eps v) - f(x - eps v)) / (2 eps)``, and against
    reverse mode, ``<c, jvp(v)> == <vjp(c), v>`` for a random cotangent ``c``. Returns the last
    tangent."""
    from cpsad.api import jvp, vjp

    rng = np.random.default_rng(seed)
    name = getattr(f, "__name__", repr(f))
    ans, pullback = vjp(f, *args, **kwargs)
    c = _random_like(ans, rng)
    grads = pullback(c)
    tangent = None
    for d in range(directions):
        vs = [_random_like(a, rng) for a in args]
        if direction is not None:
            vs = [direction(i, v) for i, v in enumerate(vs)]
        value, tangent = jvp(f, args, vs, **kwargs)
        lv, _ = leaves(value)
        lt, _ = leaves(tangent)
        shapes = [np.shape(x) for x in lv], [np.shape(x) for x in lt]
        assert (
            shapes[0] == shapes[1]
        ), f"{name}: the tangent has shapes {shapes[1]}, not {shapes[0]}"
        plus = [_shift(a, v, eps) for a, v in zip(args, vs)]
        minus = [_shift(a, v, -eps) for a, v in zip(args, vs)]
        fd = (_inner(c, f(*plus, **kwargs)) - _inner(c, f(*minus, **kwargs))) / (2 * eps)
        forward = _inner(c, tangent)
        if not np.isclose(forward, fd, rtol=rtol, atol=atol):
            raise AssertionError(
                f"{name}: <c, jvp(v)> = {forward!r} but the finite difference is {fd!r} "
                f"(direction {d})"
            )
        reverse = sum(_inner(g, v) for g, v in zip(grads, vs))
        if not np.isclose(forward, reverse, rtol=1e-7, atol=1e-10):
            raise AssertionError(
                f"{name}: <c, jvp(v)> = {forward!r} but <vjp(c), v> = {reverse!r} (direction {d})"
            )
    return tangent


def _agree(f, args, kwargs, nums, c, grads, rng, eps, rtol, atol, directions, direction):
    """``<grads, v> == <c, (f(x + eps v) - f(x - eps v)) / (2 eps)>`` along random directions."""
    name = getattr(f, "__name__", repr(f))
    for d in range(directions):
        vs = {i: _random_like(args[i], rng) for i in nums}
        if direction is not None:
            vs = {i: direction(i, v) for i, v in vs.items()}
        plus = [_shift(a, vs[i], eps) if i in vs else a for i, a in enumerate(args)]
        minus = [_shift(a, vs[i], -eps) if i in vs else a for i, a in enumerate(args)]
        fd = (_inner(c, f(*plus, **kwargs)) - _inner(c, f(*minus, **kwargs))) / (2 * eps)
        ad = sum(_inner(g, vs[i]) for g, i in zip(grads, nums))
        if not np.isclose(ad, fd, rtol=rtol, atol=atol):
            raise AssertionError(
                f"{name}: <adjoint, v> = {ad!r} but the finite difference is {fd!r} "
                f"(direction {d}, arguments {nums})"
            )
