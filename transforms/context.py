"""What the pipeline needs from the outside world, as one object: the derivative rules and the runtime.

``transforms/`` never imports ``cpsad``; cpsad hands the pipeline an object with these methods.
A ``Rule`` is data: the primitive's signature and, per parameter, a ``Template`` -- a small runnable
Python function ``(g, ans, *params) -> adjoint contribution`` whose body the emitted code inlines
when it is one ``return`` expression, and calls by name otherwise.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol


@dataclass
class Template:
    fn: Callable  # (g, ans, *params) -> contribution to the adjoint of one parameter

    @property
    def name(self) -> str:
        return self.fn.__name__


@dataclass
class Rule:
    """The derivative of one primitive: which parameter gets which adjoint template."""

    name: str  # for messages: "np.sum", "operator *"
    signature: inspect.Signature  # the primitive's parameters (those the rule understands)
    adjoints: dict[str, Template | None]  # parameter -> template (None: not differentiable)
    discrete: frozenset = frozenset()  # parameters whose values are discrete (an index, a shape)
    # Forward mode: parameter -> template ``(t, ans, *params) -> the result's tangent`` from that
    # parameter's tangent ``t``; the result's tangent is the sum over the parameters that have one.
    tangents: dict = field(default_factory=dict)

    # (a call's number of arguments and keywords -> how ``bind`` places them: see ``_plan``)
    _plans: dict = field(default_factory=dict, init=False, compare=False, repr=False)

    def bind(self, args, keywords) -> dict[str, Any]:
        """Map a call's argument nodes to parameter names; defaults fill the rest (as values)."""
        key = (len(args), tuple(keywords))
        plan = self._plans.get(key)
        if plan is None:
            plan = self._plans[key] = self._plan(*key)
        out = {}
        for name, how, where in plan:
            if how is _POSITION:
                out[name] = args[where]
            elif how is _KEYWORD:
                out[name] = keywords[where]
            elif how is _POSITIONS:
                out[name] = tuple(args[i] for i in where)
            elif how is _KEYWORDS:
                out[name] = {k: keywords[k] for k in where}
            else:
                out[name] = where  # a default
        return out

    def _plan(self, nargs: int, names: tuple) -> tuple:
        """How ``signature.bind`` places a call of ``nargs`` positional arguments and keywords
        ``names``: ``(parameter, how, where)`` in the order of its result (a ``TypeError``
        where it refuses the call), then the parameters left out."""
        bound = self.signature.bind(
            *map(_Position, range(nargs)), **{k: _Keyword(k) for k in names}
        )
        plan = []
        for name, v in bound.arguments.items():
            if isinstance(v, _Position):
                plan.append((name, _POSITION, v.i))
            elif isinstance(v, _Keyword):
                plan.append((name, _KEYWORD, v.k))
            elif isinstance(v, tuple):
                plan.append((name, _POSITIONS, tuple(x.i for x in v)))
            else:
                plan.append((name, _KEYWORDS, tuple(v)))
        for p in self.signature.parameters.values():
            if p.name in bound.arguments:
                continue
            if p.kind == inspect.Parameter.VAR_POSITIONAL:
                plan.append((p.name, _POSITIONS, ()))
            elif p.kind == inspect.Parameter.VAR_KEYWORD:
                plan.append((p.name, _KEYWORDS, ()))
            elif p.default is not inspect.Parameter.empty:
                plan.append((p.name, _DEFAULT, Default(p.default)))
        return tuple(plan)


_POSITION, _KEYWORD, _POSITIONS, _KEYWORDS, _DEFAULT = (
    "position keyword *args **kwargs default".split()
)


@dataclass(frozen=True)
class _Position:
    i: int


@dataclass(frozen=True)
class _Keyword:
    k: str


@dataclass(frozen=True)
class Default:
    """A parameter the call left out: its default value."""

    value: Any


class Context(Protocol):  # pragma: no cover - an interface
    def classify(self, obj) -> str:
        """'primitive' | 'nondiff' | 'user' | 'unknown'."""

    def rule(self, obj) -> Rule | None: ...

    def operator_rule(self, op: type) -> Rule | None:
        """The rule of a binary or unary operator node class (``gast.Mult``, ``gast.USub``)."""

    def method_rule(self, method: str) -> Rule | None:
        """``value.method(...)`` on an array: the receiver is the rule's first parameter."""

    def attribute_rule(self, attr: str) -> Rule | None:
        """``value.attr`` (``x.T``): a rule of one parameter."""

    def is_nondiff_attribute(self, attr: str) -> bool:
        """``x.shape``, ``x.ndim``, ``x.dtype``: values with no derivative."""

    def runtime(self, name: str) -> Any:
        """A helper of the runtime the emitted code calls by name (``acc``, ``zeros_like``)."""

    def subscript_function(self, obj):
        """For an object whose subscript computes a value from the index (``np.r_``), the
        function of the index that computes it -- called instead, so that the index can carry a
        derivative -- or None. (Optional: a context without it leaves subscripts as they are.)"""

    def composite(self, obj):
        """For a function without a rule of its own, a Python function that computes the same
        from functions that have rules -- called instead, and transformed like the user's own
        -- or None. (Optional: a context without it has no composites.) The function carries
        the attribute ``__cpsad_composite__``: like numpy's, it changes nothing it is given."""

    def shape_only(self, fn) -> frozenset:
        """The parameters of a helper or rule function ``fn`` the emitted code calls by name that
        read only their argument's shape and type, never its values (``unbroadcast``'s ``x``)."""
