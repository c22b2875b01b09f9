"""The optional peers -- HIPS autograd, PyTorch, JAX -- each imported once, or ``None`` with the
reason it is missing (``make bench`` installs them: ``pip install -e '.[bench]'``).

autograd and JAX differentiate the same source as cpsad: ``rebind`` copies a workload's functions
with ``np`` bound to ``autograd.numpy`` or ``jax.numpy`` (and ``math`` to their elementwise
functions, since neither can trace ``math.sin``), which is what a user of those libraries writes.
"""

from __future__ import annotations

import types

MISSING: dict[str, str] = {}  # peer -> why it is not measured

try:
    import autograd
    import autograd.numpy as anp
except ImportError as exc:  # pragma: no cover - a test dependency
    autograd = anp = None
    MISSING["autograd"] = f"not installed ({exc})"

try:
    import torch

    torch.set_num_threads(1)
    torch.set_num_interop_threads(1)
except ImportError as exc:
    torch = None
    MISSING["torch"] = f"not installed ({exc}); `make bench` installs torch==2.13.0"

try:
    import jax
    import jax.numpy as jnp
    from jax import lax

    jax.config.update("jax_enable_x64", True)
    jax.config.update("jax_platforms", "cpu")
except ImportError as exc:
    jax = jnp = lax = None
    MISSING["jax"] = f"not installed ({exc}); `make bench` installs jax and jaxlib"


def math_of(xnp) -> types.SimpleNamespace:
    """The ``math`` functions the workloads use, as the array library's elementwise functions."""
    names = ("sin", "cos", "tanh", "exp", "log", "sqrt")
    return types.SimpleNamespace(**{n: getattr(xnp, n) for n in names})


def rebind(module: types.ModuleType, xnp) -> types.SimpleNamespace:
    """The module's functions, with ``np`` meaning ``xnp`` and ``math`` its elementwise functions.

    Every function defined in the module is copied into one new globals dict, so calls between
    them (helpers, recursion) stay inside the copy.
    """
    env = dict(vars(module))
    env["np"] = xnp
    env["math"] = math_of(xnp)
    out = {}
    for name, obj in vars(module).items():
        if isinstance(obj, types.FunctionType) and obj.__module__ == module.__name__:
            copy = types.FunctionType(
                obj.__code__, env, obj.__name__, obj.__defaults__, obj.__closure__
            )
            copy.__kwdefaults__ = obj.__kwdefaults__
            env[name] = out[name] = copy
    return types.SimpleNamespace(**out)
