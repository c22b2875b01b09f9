"""A second opinion: HIPS autograd, run on the same source with ``np`` bound to autograd's numpy."""

from __future__ import annotations

import types

import pytest

autograd = pytest.importorskip("autograd")
import autograd.numpy as anp  # noqa: E402


def _rebind(module_globals: dict, seen: dict) -> dict:
    key = id(module_globals)
    if key in seen:
        return seen[key]
    g = dict(module_globals)
    seen[key] = g
    if "np" in g:
        g["np"] = anp
    if "special" in g:  # scipy.special, as autograd has it (tests/corpus_scipy.py)
        import autograd.scipy.special

        g["special"] = autograd.scipy.special
    if getattr(g.get("linalg"), "__name__", None) == "scipy.linalg":  # tests/corpus_scipy_linalg.py
        import autograd.scipy.linalg

        g["linalg"] = autograd.scipy.linalg
    if getattr(g.get("integrate"), "__name__", None) == "scipy.integrate":  # corpus_scipy_integrate
        import autograd.scipy.integrate

        g["integrate"] = autograd.scipy.integrate
    for name, obj in list(g.items()):
        if isinstance(obj, types.FunctionType) and obj.__globals__ is module_globals:
            g[name] = types.FunctionType(
                obj.__code__, g, obj.__name__, obj.__defaults__, obj.__closure__
            )
            g[name].__kwdefaults__ = obj.__kwdefaults__
        elif isinstance(obj, types.ModuleType) and obj.__name__.startswith("tests."):
            mod = types.ModuleType(obj.__name__)
            mod.__dict__.update(_rebind(obj.__dict__, seen))
            g[name] = mod
        elif isinstance(obj, types.FunctionType) and obj.__module__.startswith("tests."):
            other = _rebind(obj.__globals__, seen)
            g[name] = other.get(obj.__name__, obj)
    return g


def autograd_version(f):
    """``f`` with every function of its module (and the tests modules it uses) on autograd's numpy."""
    g = _rebind(f.__globals__, {})
    return g[f.__name__]


def autograd_grad(f, args, argnums):
    nums = argnums if isinstance(argnums, tuple) else (argnums,)
    af = autograd_version(f)
    out = [autograd.grad(af, i)(*args) for i in nums]
    return out[0] if isinstance(argnums, int) else tuple(out)
