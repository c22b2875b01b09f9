"""cpsad: reverse-mode automatic differentiation of Python + numpy by source transformation.

Reverse mode is continuation-passing (Wang et al., "Demystifying Differentiable Programming:
Shift/Reset the Penultimate Backpropagator", ICFP 2019): cpsad rewrites a function into a
backpropagator ``f_bp(k, *args)`` -- readable Python that runs the forward pass, calls the rest of
the program ``k``, and runs the backward pass when ``k`` returns.

``import cpsad`` loads nothing else: the API, the pipeline (gast) and the rule library load on the
first use of a name of ``__all__`` (``cpsad.grad``, ``cpsad.defvjp``, ...) -- all of them at once,
in one order, so a rule of yours registered then is registered after the library's -- or, at the
latest, when the first transformation starts. Black and pygments load only when code is shown.
"""

from __future__ import annotations

import threading

TYPE_CHECKING = False  # (typing.TYPE_CHECKING, without importing typing: type checkers know it)
if TYPE_CHECKING:  # what the names are, for type checkers and IDEs
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
    from cpsad.staging import JitWarning, jit, shaped
    from cpsad.transforms.errors import TransformError

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
    "jit",
    "shaped",
    "JitWarning",
]
__version__ = "0.1.0"

# where each name of __all__ lives, in the order the package loads: the dispatch first (it gives
# the compiler its runtime helpers)
_SOURCES = {
    "cpsad.dispatch": (),
    "cpsad.api": (
        "Transformed",
        "elementwise_grad",
        "grad",
        "jvp",
        "show",
        "transform",
        "value_and_grad",
        "vjp",
    ),
    "cpsad.custom": ("checkpoint", "custom_vjp", "stop_gradient"),
    "cpsad.diskcache": ("clear_cache",),
    "cpsad.higher": ("hessian", "hvp", "jacfwd", "jacobian", "jacrev"),
    "cpsad.staging": ("JitWarning", "jit", "shaped"),
    "cpsad.rules": ("defjvp", "defvjp"),
    "cpsad.runtime": ("register_pytree",),
    "cpsad.transforms.errors": ("TransformError",),
}
_LOCK = threading.RLock()
_LOADING: list = []  # not empty while the thread holding _LOCK loads the package


def _load() -> None:
    """Import the package -- the modules of ``_SOURCES``, in order -- and bind ``__all__``'s names
    here. Once; a call from inside the loading returns at once. Called by the first use of a name
    of ``__all__``, the first transformation (``compiler.run_pipeline``) and the rule table's
    listing (``rules.core.table``)."""
    if "grad" in globals():
        return
    with _LOCK:
        if "grad" in globals() or _LOADING:
            return
        _LOADING.append(True)
        try:
            import importlib

            found = {}
            for module, names in _SOURCES.items():
                mod = importlib.import_module(module)
                found.update({name: getattr(mod, name) for name in names})
            grad = found.pop("grad")
            globals().update(found)
            globals()["grad"] = grad  # (last: its presence says the package is loaded)
        finally:
            _LOADING.clear()


def __getattr__(name: str):
    """A name of ``__all__`` loads the package (``_load``); a submodule's name imports just that
    submodule (and what it imports), as ``import cpsad.compiler`` does."""
    if name in __all__:
        _load()
        return globals()[name]
    if not name.startswith("__"):
        import importlib

        try:
            return importlib.import_module(f"{__name__}.{name}")
        except ModuleNotFoundError as exc:
            if exc.name != f"{__name__}.{name}":
                raise
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
