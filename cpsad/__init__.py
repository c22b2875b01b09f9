"""cpsad: reverse-mode automatic differentiation of Python + numpy by source transformation.

Reverse mode is continuation-passing (Wang et al., "Demystifying Differentiable Programming:
Shift/Reset the Penultimate Backpropagator", ICFP 2019): cpsad rewrites a function into a
backpropagator ``f_bp(k, *args)`` -- readable Python that runs the forward pass, calls the rest of
the program ``k``, and runs the backward pass when ``k`` returns.
"""

from cpsad import dispatch  # noqa: F401  (gives the compiler its runtime dispatch)
from cpsad.api import (
    Transformed,
    elementwise_grad,
    grad,
    jvp,
    show,
    transform,
    value_and_grad,
    vjp,
)
from cpsad.custom import checkpoint, custom_vjp, stop_gradient
from cpsad.diskcache import clear_cache
from cpsad.higher import hessian, hvp, jacfwd, jacobian, jacrev
from cpsad.rules import defjvp, defvjp
from cpsad.runtime import register_pytree
from transforms.errors import TransformError

__all__ = [
    "grad",
    "value_and_grad",
    "vjp",
    "jvp",
    "elementwise_grad",
    "hvp",
    "hessian",
    "jacobian",
    "jacfwd",
    "jacrev",
    "stop_gradient",
    "custom_vjp",
    "checkpoint",
    "register_pytree",
    "transform",
    "show",
    "defvjp",
    "defjvp",
    "Transformed",
    "TransformError",
    "clear_cache",
]
__version__ = "0.1.0"
