"""Gradient checks users and tests share: central finite differences along random directions.

``check_grads(f, *args, argnums=0)`` compares ``cpsad.grad(f)`` with
``(f(x + eps v) - f(x - eps v)) / (2 eps)`` for a few random directions ``v`` (of the arguments'
pytree structure) and raises ``AssertionError`` with the numbers when they disagree.
"""

from __future__ import annotations

import numpy as np

from cpsad.api import grad


def leaves(tree):
    """The float / array leaves of a pytree, in a fixed order, with a way to rebuild it."""
    if isinstance(tree, dict):
        keys = list(tree)
        parts = [leaves(tree[k]) for k in keys]

        def build(vals, parts=parts, keys=keys):
            out, i = {}, 0
            for k, (ls, b) in zip(keys, parts):
                out[k] = b(vals[i : i + len(ls)])
                i += len(ls)
            return out

        return [x for ls, _ in parts for x in ls], build
    if isinstance(tree, (list, tuple)):
        parts = [leaves(v) for v in tree]
        kind = type(tree)

        def build(vals, parts=parts, kind=kind):
            out, i = [], 0
            for ls, b in parts:
                out.append(b(vals[i : i + len(ls)]))
                i += len(ls)
            return kind(out)

        return [x for ls, _ in parts for x in ls], build
    if isinstance(tree, (float, int, np.ndarray, np.generic)) and not isinstance(tree, bool):
        return [tree], lambda vals: vals[0]
    return [], lambda vals, t=tree: t


def _as_float(x):
    if isinstance(x, np.ndarray):
        return x.astype(np.float64)
    return float(x)


def directional(f, args, argnums, direction_seed, eps):
    """(finite-difference slope, list of (argnum, direction pytree)) along one random direction."""
    rng = np.random.default_rng(direction_seed)
    plus, minus = list(args), list(args)
    dirs = []
    for i in argnums:
        ls, build = leaves(args[i])
        vs = [
            rng.standard_normal(np.shape(x)) if np.ndim(x) else float(rng.standard_normal())
            for x in ls
        ]
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
        total += float(np.sum(np.asarray(gi, dtype=np.float64) * vi))
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
