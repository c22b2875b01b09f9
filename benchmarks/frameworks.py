"""One runner per framework and workload: a call that computes the value and the gradient, and a
way to read its result as numpy.

Everything a framework needs before the call -- converting inputs to its arrays, transforming or
compiling the function -- is done when the runner is made (or by its first, untimed calls); the
timed call is what a training step pays: the value and the gradient, ready to use.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

import cpsad
from benchmarks import peers
from benchmarks.problem import Problem

HAND = "numpy (hand-written)"
CPSAD = "cpsad"
CPSAD_SHAPED = "cpsad shaped"
AUTOGRAD = "autograd"
TORCH = "PyTorch"
JAX_EAGER = "jax eager"
JAX_JIT = "jax jit"
FRAMEWORKS = [HAND, CPSAD, CPSAD_SHAPED, AUTOGRAD, TORCH, JAX_EAGER, JAX_JIT]

PEER_OF = {AUTOGRAD: "autograd", TORCH: "torch", JAX_EAGER: "jax", JAX_JIT: "jax"}
KEYS = {  # how the command line names them
    "hand": HAND,
    "cpsad": CPSAD,
    "cpsad-shaped": CPSAD_SHAPED,
    "autograd": AUTOGRAD,
    "torch": TORCH,
    "jax-eager": JAX_EAGER,
    "jax-jit": JAX_JIT,
}


@dataclass
class Runner:
    framework: str
    call: Callable[[], Any]  # the timed call: value and gradient
    result: Callable[[Any], tuple]  # its output -> (value as float, gradient as numpy)
    note: str = ""  # how this framework's version differs from the workload's loss, if it does


def why_not(framework: str, problem: Problem) -> str | None:
    """Why ``framework`` is not measured on this problem (None: it is)."""
    peer = PEER_OF.get(framework)
    if peer in peers.MISSING:
        return peers.MISSING[peer]
    return problem.skip.get(framework)


def make(framework: str, workload, problem: Problem) -> Runner:
    return _MAKERS[framework](workload, problem)


def _argnums(problem: Problem):
    """An int for one differentiated argument (the gradient is its structure), else a tuple."""
    nums = problem.argnums
    return nums[0] if len(nums) == 1 else nums


def _as_numpy(tree):
    """A gradient from any framework as numpy arrays and floats, in the same structure."""
    if isinstance(tree, dict):
        return {k: _as_numpy(v) for k, v in tree.items()}
    if isinstance(tree, (tuple, list)):
        return type(tree)(_as_numpy(v) for v in tree)
    if peers.torch is not None and isinstance(tree, peers.torch.Tensor):
        tree = tree.detach().numpy()
    out = np.asarray(tree, dtype=np.float64)
    return float(out) if out.ndim == 0 else out


def _plain(out):
    value, grads = out
    return float(_as_numpy(value)), _as_numpy(grads)


def _hand(w, problem):
    args = problem.args
    return Runner(HAND, lambda: w.handwritten(*args), _plain)


def _cpsad(w, problem):
    args = problem.args
    vg = cpsad.value_and_grad(w.loss, _argnums(problem))
    return Runner(CPSAD, lambda: vg(*args), _plain)


def _cpsad_shaped(w, problem):
    """``cpsad.shaped``: the backpropagator specialized to the shapes of the call's arrays."""
    args = problem.args
    vg = cpsad.value_and_grad(cpsad.shaped(w.loss), _argnums(problem))
    return Runner(CPSAD_SHAPED, lambda: vg(*args), _plain)


def _source_module(w):
    """The module that defines the workload's ``loss`` (a workload may reuse another's)."""
    return inspect.getmodule(w.loss)


def _autograd(w, problem):
    f = peers.rebind(_source_module(w), peers.anp).loss
    vg = peers.autograd.value_and_grad(f, _argnums(problem))
    args = problem.args
    return Runner(AUTOGRAD, lambda: vg(*args), _plain)


# --------------------------------------------------------------------------- PyTorch


def _to_torch(x, leaves: list | None):
    """Arrays and floats as float64 tensors; ``leaves`` collects those that need a gradient."""
    torch = peers.torch
    if isinstance(x, dict):
        return {k: _to_torch(v, leaves) for k, v in x.items()}
    if isinstance(x, (tuple, list)):
        return type(x)(_to_torch(v, leaves) for v in x)
    if isinstance(x, np.ndarray) or (isinstance(x, float) and leaves is not None):
        t = torch.tensor(x, dtype=torch.float64)
        if leaves is not None:
            t.requires_grad_(True)
            leaves.append(t)
        return t
    return x  # ints, trees of nodes: used as they are


def _unflatten(like, flat):
    """Put the tensors of ``flat`` back into the structure ``like`` was flattened from."""
    it = iter(flat)

    def go(x):
        if isinstance(x, dict):
            return {k: go(v) for k, v in x.items()}
        if isinstance(x, (tuple, list)):
            return type(x)(go(v) for v in x)
        return next(it)

    return go(like)


def _torch(w, problem):
    torch = peers.torch
    leaves: list = []
    args = [
        _to_torch(a, leaves if i in problem.argnums else None) for i, a in enumerate(problem.args)
    ]
    like = tuple(problem.args[i] for i in problem.argnums)
    loss = w.torch_loss

    def call():
        value = loss(*args)
        return value, torch.autograd.grad(value, leaves)

    def result(out):
        value, flat = out
        grads = _unflatten(like, flat)
        return float(value.item()), _as_numpy(grads[0] if len(like) == 1 else grads)

    return Runner(TORCH, call, result)


# --------------------------------------------------------------------------- JAX


def _to_jax(x):
    jnp = peers.jnp
    if isinstance(x, dict):
        return {k: _to_jax(v) for k, v in x.items()}
    if isinstance(x, (tuple, list)):
        return type(x)(_to_jax(v) for v in x)
    if isinstance(x, np.ndarray):
        return jnp.asarray(x)
    return x


def _jax(w, problem, jit: bool):
    """The workload's loss with ``np`` as ``jax.numpy`` -- or, under jit, its ``jax_jit_loss``
    where it has one (a loop jit could not compile as written)."""
    jax = peers.jax
    f = peers.rebind(_source_module(w), peers.jnp).loss
    note = ""
    if jit and hasattr(w, "jax_jit_loss"):
        f = w.jax_jit_loss
        note = " ".join(f.__doc__.split())
    vg = jax.value_and_grad(f, _argnums(problem))
    if jit:
        vg = jax.jit(vg, static_argnums=problem.static)
    args = [_to_jax(a) for a in problem.args]
    call = lambda: jax.block_until_ready(vg(*args))
    return Runner(JAX_JIT if jit else JAX_EAGER, call, _plain, note)


_MAKERS = {
    HAND: _hand,
    CPSAD: _cpsad,
    CPSAD_SHAPED: _cpsad_shaped,
    AUTOGRAD: _autograd,
    TORCH: _torch,
    JAX_EAGER: lambda w, p: _jax(w, p, jit=False),
    JAX_JIT: lambda w, p: _jax(w, p, jit=True),
}
