"""cpsad's answer to the pipeline's questions (``cpsad.transforms.context.Context``): rules and runtime."""

from __future__ import annotations

import inspect
import types

from cpsad import runtime
from cpsad.rules import core
from cpsad.transforms import astlib as A

OPERATOR_NAMES = {
    A.Add: "add",
    A.Sub: "sub",
    A.Mult: "mul",
    A.Div: "div",
    A.Pow: "pow",
    A.MatMult: "matmul",
    A.Mod: "mod",
    A.USub: "neg",
    A.UAdd: "pos",
    A.Subscript: "getitem",
    A.Tuple: "item",
    "unpack": "unpack",
    "add_any": "add_any",
    "getitem_any": "getitem_any",
    "pow_number": "pow_number",
    "div_numpy": "div_numpy",
    "pow_any": "pow_any",
    "repeat_x": "repeat_x",
    "repeat_y": "repeat_y",
}

FACTORY = "__cpsad_factory__"  # the function an emitted module is compiled in (compiler._compile)
EMITTED = FACTORY + "."  # the start of the qualified name of every function emitted code defines
# Python functions from these packages are not transformed: they need a rule (or are non-differentiable).
OPAQUE_PACKAGES = ("numpy", "cpsad", "scipy", "math", "builtins", "functools")


class Context:
    """Rules from ``cpsad.rules``; runtime helpers from ``cpsad.runtime`` and ``helpers``."""

    def __init__(self, helpers: dict | None = None):
        self.helpers = dict(helpers or {})

    def classify(self, obj) -> str:
        if core.lookup(obj) is not None:
            return "primitive"
        if getattr(obj, "__cpsad_composite__", None) is not None:
            return "user"  # a composite's implementation (``defcomposite``): transformed
        if core.is_nondiff(obj):
            return "nondiff"
        if getattr(obj, "__cpsad_operator__", None) in ("jvp", "vjp"):
            # cpsad.jvp(h, ...) that Nested did not rewrite (h a function of yours, not one
            # defined here): computes a derivative, which the runtime dispatch differentiates.
            # (cpsad.grad(h) makes a function: "unknown", fine on an h that is a constant,
            # refused on one that closes over differentiated values; calling the function it
            # made goes through the dispatch.)
            return "dynamic"
        if getattr(obj, "__cpsad_derivative__", None) is not None:
            # cpsad.grad(h) (or another derivative cpsad made) called in differentiated code:
            # the dispatch differentiates it through h's backpropagator (not cpsad's own source)
            return "dynamic"
        if isinstance(obj, runtime.Closure):
            # a function of emitted code, as a value (a closure made by a plain call held it):
            # calling it runs its backpropagator through the dispatch
            return "dynamic"
        if isinstance(obj, types.FunctionType):
            if getattr(obj, "__cpsad_source__", False):
                return "user"  # cpsad's own code, written to be transformed (dispatch.bp_of)
            mod = (getattr(obj, "__module__", None) or "").split(".")[0]
            if obj.__code__.co_filename.startswith("<frozen "):
                return "unknown"  # (os.path.join: the standard library's, frozen: no source)
            if mod not in OPAQUE_PACKAGES or obj.__qualname__.startswith(EMITTED):
                # (emitted code -- a continuation of a backpropagator of cpsad's own, a
                # composite's or a jacobian's, passed as a value -- is transformed like yours)
                return "user"
        if inspect.ismethod(obj) and isinstance(obj.__func__, types.FunctionType):
            return "unknown"
        return "unknown"

    def rule(self, obj):
        return core.lookup(obj)

    def operator_rule(self, op):
        name = OPERATOR_NAMES.get(op)
        return core.OPERATORS.get(name) if name else None

    def method_rule(self, method: str):
        return core.METHODS.get(method)

    def attribute_rule(self, attr: str):
        return core.ATTRIBUTES.get(attr)

    def is_nondiff_attribute(self, attr: str) -> bool:
        return attr in core.NONDIFF_ATTRIBUTES

    def runtime(self, name: str):
        if name not in self.helpers and not hasattr(runtime, name):
            # the dispatch's helpers (call_bp, ...) register themselves when it is imported,
            # which a pass may be the first to need (tests/test_passes.py run alone)
            import cpsad.dispatch  # noqa: F401
        if name in self.helpers:
            return self.helpers[name]
        return getattr(runtime, name)

    def subscript_function(self, obj):
        return core.subscript_function(obj)

    def composite(self, obj):
        return core.composite(obj)

    def one_shot_composite(self, obj):
        return core.one_shot_composite(obj)

    def shape_only(self, fn) -> frozenset:
        return getattr(fn, "__cpsad_shape_only__", frozenset())
