"""Derivatives you shape: ``stop_gradient``, ``custom_vjp`` (JAX's decorator) and ``checkpoint``.

Each is a function with a derivative rule (``cpsad.defvjp``), so the emitted code calls it in the
forward pass like any primitive and calls its rule in the backward pass:

* ``stop_gradient(x)`` is ``x`` with no derivative (a constant to whatever uses it);
* ``custom_vjp(f)`` differentiates ``f`` by the backward function you give
  (``f.defvjp(f_fwd, f_bwd)``): ``f_fwd(*args) -> (f(*args), residuals)`` and
  ``f_bwd(residuals, g) -> one gradient per positional parameter``;
* ``checkpoint(f)`` differentiates ``f`` as cpsad would, but keeps none of its intermediate
  values through the rest of the program: the backward pass runs ``f`` again (``cpsad.vjp``).

cpsad keeps no tape: a rule sees the arguments and the result, not what the forward pass
computed on the way. So ``f_fwd`` runs in the backward pass (once per call of ``f`` and adjoint),
and a checkpointed ``f`` runs twice -- which is the point of a checkpoint: what ``f`` computes
inside is freed as soon as ``f`` returns, where a call of ``f`` in continuation-passing style
keeps it alive until the backward pass comes back through ``f`` (see docs/api.md).
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from typing import TypeVar

from cpsad.api import jvp, vjp
from cpsad.rules import defjvp, defnondiff, defvjp

T = TypeVar("T")


def stop_gradient(x: T) -> T:
    """``x``, through which no derivative flows: a constant to whatever computes with it (JAX's
    ``lax.stop_gradient``). Its forward-mode tangent is zero too."""
    return x


defnondiff(stop_gradient)


def _positional(fn: Callable, what: str) -> inspect.Signature:
    """``fn``'s signature: parameters a call can give by position (a rule has one per
    parameter), with defaults and keyword-only parameters (passed on, not differentiated)."""
    sig = inspect.signature(fn)
    for p in sig.parameters.values():
        if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            raise TypeError(
                f"{what}: {getattr(fn, '__name__', fn)} takes *{p.name}; a rule needs one "
                "parameter per argument -- name them"
            )
    return sig


class _Memo:
    """The last backward computation of a function's rules: a rule is called once per
    parameter with the same adjoint and arguments, and each needs the whole tuple of gradients.
    Kept by identity of what it was computed from (held here, so an id is not reused)."""

    def __init__(self):
        self.key: tuple = ()
        self.value = None

    def get(self, compute, g, args, kwargs):
        key = (g, *args, *kwargs.values())
        if len(key) == len(self.key) and all(a is b for a, b in zip(key, self.key)):
            return self.value
        value = compute()
        self.key, self.value = key, value
        return value


def _differentiable(sig: inspect.Signature) -> list[str]:
    """The parameters a rule is given one function for: those a call may fill by position."""
    kinds = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    return [p.name for p in sig.parameters.values() if p.kind in kinds]


def _rule_signature(sig: inspect.Signature, first: str) -> inspect.Signature:
    """``(first, ans, *fn's parameters)``: the signature of a rule of a function of ``sig``."""
    head = [inspect.Parameter(n, inspect.Parameter.POSITIONAL_ONLY) for n in (first, "ans")]
    params = [
        p.replace(kind=p.POSITIONAL_OR_KEYWORD) if p.kind == p.POSITIONAL_ONLY else p
        for p in sig.parameters.values()
    ]
    return inspect.Signature([*head, *params])


def _rules(sig: inspect.Signature, gradients: Callable) -> dict:
    """One adjoint rule per positional parameter of ``sig``, by name: ``rule(g, ans, *params)``
    is entry i of ``gradients(g, args, kwargs)`` (the arguments bound, defaults filled)."""
    memo = _Memo()
    rules = {}
    for i, name in enumerate(_differentiable(sig)):

        def rule(g, ans, *args, _i=i, **kwargs):
            bound = sig.bind(*args, **kwargs)
            bound.apply_defaults()
            out = memo.get(lambda: gradients(g, bound.args, bound.kwargs), g, args, kwargs)
            return out[_i]

        rule.__signature__ = _rule_signature(sig, "g")
        rule.__name__ = f"{name}_adjoint"
        rules[name] = rule
    return rules


def custom_vjp(fn: Callable) -> Callable:
    """Decorate ``fn`` to be differentiated by a backward function of yours (JAX's
    ``jax.custom_vjp``)::

        @cpsad.custom_vjp
        def clip_gradient(x, lo, hi):
            return x

        def clip_fwd(x, lo, hi):
            return x, (lo, hi)                      # (the value, residuals)

        def clip_bwd(res, g):
            lo, hi = res
            return (np.clip(g, lo, hi), None, None)  # one per positional parameter

        clip_gradient.defvjp(clip_fwd, clip_bwd)

    ``f_bwd(residuals, g)`` returns a tuple with one gradient per positional parameter of
    ``fn`` (None: none flows there). cpsad keeps no tape, so ``f_fwd`` runs in the backward
    pass, at the same arguments, for its residuals. Reverse mode only: forward mode (``jvp``,
    Hessians) through ``fn`` is refused, as in JAX. Called before ``defvjp``, or outside a
    derivative, the decorated function is ``fn``."""
    sig = _positional(fn, "custom_vjp")
    nparams = len(_differentiable(sig))

    @functools.wraps(fn)
    def custom(*args, **kwargs):
        return fn(*args, **kwargs)

    def define(fwd: Callable, bwd: Callable) -> None:
        def gradients(g, args, kwargs):
            pair = fwd(*args, **kwargs)
            if not (isinstance(pair, tuple) and len(pair) == 2):
                raise TypeError(
                    f"custom_vjp: {getattr(fwd, '__name__', fwd)} must return (value, residuals)"
                )
            out = bwd(pair[1], g)
            if not isinstance(out, (tuple, list)) or len(out) != nparams:
                raise TypeError(
                    f"custom_vjp: {getattr(bwd, '__name__', bwd)} must return a tuple of "
                    f"{nparams} gradient(s), one per positional parameter of "
                    f"{fn.__name__} (None where none flows), got {out!r:.80}"
                )
            return tuple(out)

        defvjp(custom, **_rules(sig, gradients))

    custom.defvjp = define
    return custom


def checkpoint(fn: Callable) -> Callable:
    """``fn``, differentiated without keeping its intermediate values: the backward pass runs
    ``fn`` again (``cpsad.vjp``) where its adjoint arrives (JAX's ``jax.checkpoint``). A call
    of a function in continuation-passing style keeps what it computed inside alive until the
    backward pass returns through it; a checkpointed call keeps its arguments and result only,
    for one more forward run of ``fn`` -- memory for time (``benchmarks/checkpoint.py``).
    Reverse and forward mode (a forward-mode tangent is ``cpsad.jvp`` of ``fn``)."""
    sig = _positional(fn, "checkpoint")

    @functools.wraps(fn)
    def checkpointed(*args, **kwargs):
        return fn(*args, **kwargs)

    def gradients(g, args, kwargs):
        _, pullback = vjp(fn, *args, **kwargs)
        return pullback(g)

    defvjp(checkpointed, **_rules(sig, gradients))
    tangent_rules = {}
    for i, name in enumerate(_differentiable(sig)):

        def tangent(t, ans, *args, _i=i, **kwargs):
            bound = sig.bind(*args, **kwargs)
            bound.apply_defaults()
            tangents = [None] * len(bound.args)
            tangents[_i] = t
            return jvp(fn, bound.args, tangents, **bound.kwargs)[1]

        tangent.__signature__ = _rule_signature(sig, "t")
        tangent.__name__ = f"{name}_tangent"
        tangent_rules[name] = tangent
    defjvp(checkpointed, **tangent_rules)
    return checkpointed
