"""Scalar loop: 1,000 iterations of scalar math on Python floats; the gradient with respect to
the three scalar inputs.

Nothing here is an array: the cost of a framework is its cost per operation, so this measures
the overhead every framework adds to an operation that itself takes tens of nanoseconds.
"""

import math

from benchmarks.peers import jnp, lax, torch
from benchmarks.problem import Problem

NAME = "scalar loop"
TITLE = "1,000 iterations of scalar math (`math.sin`, `math.tanh`), gradient w.r.t. 3 floats"
N = 1_000


def loss(x, w, c, n):
    s = 0.0
    for _ in range(n):
        x = x * w + math.sin(x) * c + 0.1
        s = s + math.tanh(x) * c
    return s / n


def handwritten(x, w, c, n):
    sin, cos, tanh = math.sin, math.cos, math.tanh
    xs = [0.0] * n  # x before each step
    sins = [0.0] * n
    tanhs = [0.0] * n
    s = 0.0
    for i in range(n):
        xs[i] = x
        sins[i] = sx = sin(x)
        x = x * w + sx * c + 0.1
        tanhs[i] = t = tanh(x)
        s = s + t * c
    value = s / n
    gs = 1.0 / n  # the adjoint of s
    gsc = gs * c
    gx = gw = gc = 0.0  # gx: the adjoint of x after the step being undone
    for i in range(n - 1, -1, -1):
        t = tanhs[i]
        gc += gs * t
        gx += gsc * (1.0 - t * t)
        xp = xs[i]
        gw += gx * xp
        gc += gx * sins[i]
        gx = gx * (w + c * cos(xp))
    return value, (gx, gw, gc)


def torch_loss(x, w, c, n):
    s = 0.0
    for _ in range(n):
        x = x * w + torch.sin(x) * c + 0.1
        s = s + torch.tanh(x) * c
    return s / n


def jax_jit_loss(x, w, c, n):
    """The loop as `lax.fori_loop`: jit unrolls a Python loop, and XLA's compile time grows
    faster than its length (measured: 100 steps 5 s, 200 steps 35 s, 400 steps 126 s)."""

    def step(_, carry):
        x, s = carry
        x = x * w + jnp.sin(x) * c + 0.1
        return x, s + jnp.tanh(x) * c

    _, s = lax.fori_loop(0, n, step, (x, 0.0))
    return s / n


def problem(tiny: bool) -> Problem:
    return Problem(args=(0.5, 0.7, 0.3, 5 if tiny else N), argnums=(0, 1, 2), static=(3,))
