"""The rule table: which primitive has which adjoint rule, and which functions need none.

A rule is registered right beside its definition::

    def sin_vjp(g, ans, x):
        return g * np.cos(x)
    defvjp(np.sin, sin_vjp)

``g`` is the adjoint of the result, ``ans`` the result, then the primitive's own parameters (with
the defaults the rule understands). A primitive of several parameters gets one function per
parameter, ``None`` where it has no derivative. A rule whose body is one ``return`` is inlined into
emitted code; a longer one is called by name. Either way it is a plain, testable function.

Forward mode (``cpsad.jvp``) needs the other direction: per parameter, the tangent of the result
given that parameter's tangent ``t``, with the same parameters after it::

    def sin_jvp(t, ans, x):
        return t * np.cos(x)
    defjvp(np.sin, sin_jvp)

The result's tangent is the sum of the contributions of the parameters that have a tangent; each
contribution has the result's shape and float type -- broadcast up where the parameter was
broadcast (``t * y``, or ``broadcast_like(t, ans)`` for ``x + y``), never summed down. A primitive
linear in a parameter has the primitive itself, applied to the tangent, as its tangent rule
(``np.sum(t, axis=axis)``). A parameter that is a list or tuple of values (``np.stack(arrays)``)
gets the same container of tangents, zeros where an entry has none
(``cpsad.runtime.tangent_zeros``).
"""

from __future__ import annotations

import inspect
import sys
import types
from collections.abc import Callable
from typing import TypeVar

import numpy as np

from cpsad.runtime import broadcast_like  # noqa: F401  (rules import it from here)
from cpsad.transforms.context import Rule
from cpsad.transforms.templates import template

FUNCTIONS: dict = {}  # primitive object -> Rule
OPERATORS: dict[str, Rule] = {}  # "add", "mul", "neg", "getitem", "item", "unpack", ...
METHODS: dict[str, Rule] = {}  # array method name -> Rule (the receiver is the first parameter)
ATTRIBUTES: dict[str, Rule] = {}  # array attribute name -> Rule
NONDIFF: set = set()  # objects with no derivative (by identity)
NONDIFF_ATTRIBUTES: set[str] = set()  # x.shape, x.ndim, ...
SUBSCRIPTED: dict = {}  # id of an object like np.r_ -> the function of the index its subscript is
# a function with no rule of its own -> a Python function computing the same from primitives that
# have rules (``defcomposite``): cpsad transforms it like a function of yours
COMPOSITES: dict = {}
ONE_SHOT: dict = {}  # defcomposite(..., one_shot=True): iterators, computed as lists where consumed
# How many times the tables above changed: a transformation made before a change may have used
# what changed (a rule registered for a function it transformed instead), and is made again.
VERSION = [0]
P = TypeVar("P")  # a primitive: defvjp and defjvp return it (they serve as decorators)


def _changed() -> None:
    VERSION[0] += 1


class _Discrete:
    """Marks a parameter whose values are discrete -- an index, an axis, a shape: it has no
    derivative, and a value that merely looks differentiable to the analysis is fine there."""

    def __repr__(self):
        return "DISCRETE"


DISCRETE = _Discrete()


def make_rule(name: str, vjps, named=None) -> Rule:
    vjps = list(vjps)
    named = dict(named or {})
    discrete = set()
    sig_fns = [f for f in vjps + list(named.values()) if f is not None and f is not DISCRETE]
    if sig_fns:
        params0 = list(inspect.signature(sig_fns[0]).parameters)[2:]
        for i, f in enumerate(vjps):
            if f is DISCRETE:
                discrete.add(params0[i])
                vjps[i] = None
        for p, f in list(named.items()):
            if f is DISCRETE:
                discrete.add(p)
                named[p] = None
    fns = [f for f in vjps + list(named.values()) if f is not None]
    if not fns:
        raise ValueError(f"{name}: give at least one adjoint function")
    sig = inspect.signature(fns[0])
    head = list(sig.parameters)[:2]
    if head != ["g", "ans"]:
        raise ValueError(
            f"{name}: an adjoint rule's parameters start with (g, ans, ...), got {head}"
        )
    params = list(sig.parameters.values())[2:]
    prim_sig = sig.replace(parameters=params)
    adjoints: dict = {p.name: None for p in params}
    for p, f in zip(params, vjps):
        adjoints[p.name] = None if f is None else template(f)
    for pname, f in (named or {}).items():
        if pname not in adjoints:
            raise ValueError(f"{name}: no parameter {pname!r} in {prim_sig}")
        adjoints[pname] = None if f is None else template(f)
    for f in fns:
        if list(inspect.signature(f).parameters)[2:] != [p.name for p in params]:
            raise ValueError(f"{name}: every adjoint function takes the same parameters")
    # A parameter given None has no derivative rule: a differentiable value there is an error.
    # One not mentioned at all (an axis, keepdims, a shape) is discrete: it has no derivative.
    mentioned = {p.name for p, _ in zip(params, vjps)} | set(named)
    discrete |= {p.name for p in params if p.name not in mentioned}
    return Rule(name=name, signature=prim_sig, adjoints=adjoints, discrete=frozenset(discrete))


def _label(primitive) -> str:
    """How a user writes the primitive: ``np.sum``, ``np.linalg.inv``, ``math.exp``, ``abs``."""
    mod = getattr(primitive, "__module__", None) or ""
    name = getattr(primitive, "__name__", repr(primitive))
    if mod.startswith("numpy"):
        for sub in ("random", "linalg", "fft"):
            if mod.startswith(f"numpy.{sub}"):
                return f"np.{sub}.{name}"
        return f"np.{name}"
    if mod == "_operator":  # (the C module behind ``operator``)
        mod = "operator"
    owner = getattr(primitive, "__self__", None)  # a method of scipy.stats.norm, dirichlet, ...
    if mod.startswith("scipy.stats.") and owner is not None:
        dist = getattr(owner, "name", None) or type(owner).__name__.removesuffix("_gen")
        if getattr(sys.modules.get("scipy.stats"), dist, None) is owner:
            return f"scipy.stats.{dist}.{name}"
    if mod.startswith("scipy."):  # (scipy.special._ufuncs, scipy.linalg._matfuncs: private)
        mod = ".".join(part for part in mod.split(".") if not part.startswith("_"))
        package = ".".join(mod.split(".")[:2])  # (scipy.integrate._ivp.ivp.solve_ivp: exported)
        if getattr(sys.modules.get(package), name, None) is primitive:
            mod = package
    if not mod and type(primitive).__name__ == "ufunc":  # a ufunc of scipy's has no module
        scipy_special = sys.modules.get("scipy.special")
        if scipy_special is not None and getattr(scipy_special, name, None) is primitive:
            return f"scipy.special.{ {'psi': 'digamma'}.get(name, name) }"
    return f"{mod}.{name}" if mod and mod != "builtins" else name


def defvjp(
    primitive: P, *vjps: Callable | _Discrete | None, **named: Callable | _Discrete | None
) -> P:
    """Register the adjoint rule of ``primitive``: one function per parameter, in order.

    Each function is ``(g, ans, *params) -> contribution to that parameter's adjoint``; ``None``
    marks a parameter with no derivative; keyword arguments name parameters instead.
    """
    _changed()
    FUNCTIONS[primitive] = make_rule(_label(primitive), vjps, named)
    return primitive


def defnoderivative(primitive, like):
    """``primitive`` (of the parameters of the Python function ``like``) has no derivative in any
    parameter: a differentiable value passed to it is an error at the user's line, not a silent
    zero (``np.mgrid``, ``slice``)."""
    _changed()
    sig = inspect.signature(like)
    FUNCTIONS[primitive] = Rule(
        name=_label(primitive), signature=sig, adjoints={p: None for p in sig.parameters}
    )
    return primitive


def defoperator(name: str, *vjps):
    _changed()
    OPERATORS[name] = make_rule(f"operator {name}", vjps)


# --------------------------------------------------------------------------- forward mode


def attach_tangents(rule: Rule, jvps, named) -> Rule:
    """Give ``rule`` its forward-mode functions: one per parameter, in order, or by name."""
    _changed()
    params = list(rule.signature.parameters)
    given = dict(zip(params, jvps))
    for p, f in named.items():
        if p not in params:
            raise ValueError(f"{rule.name}: no parameter {p!r} in {rule.signature}")
        given[p] = f
    for p, f in given.items():
        if f is None or f is DISCRETE:
            continue
        head = list(inspect.signature(f).parameters)
        # (the tangent is ``t_dot`` where the primitive has a parameter ``t``: odeint's times)
        first = "t_dot" if "t" in params else "t"
        if head[:2] != [first, "ans"] or head[2:] != params:
            raise ValueError(
                f"{rule.name}: a tangent rule takes ({first}, ans, {', '.join(params)}), got {head}"
            )
        rule.tangents[p] = template(f)
    return rule


def _registered(table: dict, key, label: str) -> Rule:
    rule = table.get(key)
    if rule is None:
        raise ValueError(f"{label}: register its adjoint rule (defvjp) before its tangent rule")
    return rule


def defjvp(
    primitive: P, *jvps: Callable | _Discrete | None, **named: Callable | _Discrete | None
) -> P:
    """Register the tangent rules of ``primitive`` (which has an adjoint rule already): one
    function ``(t, ans, *params) -> the result's tangent from this parameter's`` per parameter."""
    attach_tangents(_registered(FUNCTIONS, primitive, _label(primitive)), jvps, named)
    return primitive


def defjvp_operator(name: str, *jvps):
    attach_tangents(_registered(OPERATORS, name, f"operator {name}"), jvps, {})


def defjvp_method(name: str, *jvps, **named):
    attach_tangents(_registered(METHODS, name, f".{name}()"), jvps, named)


def defjvp_attribute(name: str, jvp):
    attach_tangents(_registered(ATTRIBUTES, name, f".{name}"), [jvp], {})


def defjvp_as_vjp(primitive):
    """For an elementwise function of one argument whose adjoint rule is ``g * f'(x)`` (no
    unbroadcast): the tangent rule is the same expression with the tangent for ``g``. The same
    holds for a function of several numbers (``math.pow``): each adjoint is ``g`` times a partial
    derivative, and so is each tangent."""
    rule = _registered(FUNCTIONS, primitive, _label(primitive))
    rule.tangents.update({p: t for p, t in rule.adjoints.items() if t is not None})
    return primitive


def tangent_missing(rule: Rule) -> list[str]:
    """The differentiable parameters of ``rule`` that have no tangent rule yet."""
    return [p for p, t in rule.adjoints.items() if t is not None and p not in rule.tangents]


def defmethod(name: str, *vjps, **named):
    _changed()
    METHODS[name] = make_rule(f".{name}()", vjps, named)


def defattribute(name: str, vjp):
    _changed()
    ATTRIBUTES[name] = make_rule(f".{name}", [vjp])


def defnondiff(*objects):
    """Functions whose result has no derivative (``len``, ``np.argmax``, comparisons, ...)."""
    _changed()
    for o in objects:
        NONDIFF.add(o)


def defnondiff_attributes(*names: str):
    _changed()
    NONDIFF_ATTRIBUTES.update(names)


def defsubscript(obj, fn):
    """``obj[index]`` computes ``fn(index)`` (``np.r_[x, y]`` is ``r_((x, y))``): the pipeline
    calls ``fn`` instead -- a primitive with a rule, or a function of yours -- so that the values
    in the index are differentiated (a subscript's index otherwise carries no derivative)."""
    _changed()
    SUBSCRIPTED[id(obj)] = (obj, fn)
    return fn


def subscript_function(obj):
    entry = SUBSCRIPTED.get(id(obj))
    return entry[1] if entry is not None and entry[0] is obj else None


def lookup(obj) -> Rule | None:
    try:
        rule = FUNCTIONS.get(obj)
    except TypeError:  # unhashable
        return None
    if rule is None and isinstance(obj, types.MethodDescriptorType):
        return _unbound_method(obj)
    return rule


def _unbound_method(obj) -> Rule | None:
    """``np.ndarray.dot`` (or ``dict.get``), called with the object first: the method's rule,
    which takes it first -- what the dispatch calls for ``c.dot``, a method of compiled code
    bound to its object (``transforms.resolve.builtin_method_rule``)."""
    if issubclass(obj.__objclass__, (np.ndarray, np.generic, dict)):
        return METHODS.get(obj.__name__)
    return None


def defcomposite(primitive, implementation, one_shot=False):
    """Differentiate ``primitive`` as ``implementation``: a plain Python function of the same
    parameters (and defaults), written with functions that have rules, which returns what
    ``primitive`` returns. Calls of ``primitive`` -- written in the code, or through a value --
    run it, transformed like a function of yours: reverse and forward mode and any order come
    from the rules it calls (as ``jax.numpy`` is written on ``lax``).

    ``one_shot``: ``primitive`` returns an iterator (``reversed``, ``itertools.combinations``),
    which ``implementation`` computes as the list of its items. A list can be read twice where
    the iterator is empty the second time, so the composite runs only where the call is consumed
    where it is written -- ``list(...)``, ``sum(...)``, a ``for`` loop's or a comprehension's
    iterable, ``*...`` (the transformation marks those calls: ``one_shot_composite``); anywhere
    else, and through a value, the primitive is as it was, without a rule."""
    _changed()
    implementation.__cpsad_composite__ = primitive
    (ONE_SHOT if one_shot else COMPOSITES)[primitive] = implementation
    return implementation


def composite(obj):
    """The implementation ``defcomposite`` gave ``obj``, or None."""
    try:
        return COMPOSITES.get(obj)
    except TypeError:  # unhashable
        return None


def one_shot_composite(obj):
    """The implementation ``defcomposite(..., one_shot=True)`` gave ``obj``, or None."""
    try:
        return ONE_SHOT.get(obj)
    except TypeError:  # unhashable
        return None


def is_nondiff(obj) -> bool:
    try:
        return obj in NONDIFF
    except TypeError:
        return False


_OPTIONAL = " (optional: when scipy is installed)"


def table() -> str:
    """Markdown listing of every rule and non-differentiable function (for docs/reference.md)."""
    import cpsad

    cpsad._load()  # the rules registered outside this package too (cpsad.stop_gradient's, ...)
    fam: dict[str, list[str]] = {}
    helpers: set[str] = set()  # the functions emitted code calls, for transforming it again
    for prim, rule in FUNCTIONS.items():
        if not any(
            t is not None and t.fn.__module__.startswith("cpsad.rules")
            for t in rule.adjoints.values()
        ):
            continue  # a user's own rule
        mod = getattr(prim, "__module__", None) or ""
        if mod.startswith("cpsad"):
            helpers.add(prim.__name__)
            continue
        family = "math module" if mod == "math" else "builtins" if mod == "builtins" else "numpy"
        label = _label(prim)
        if label.startswith("scipy."):  # scipy.special, scipy.linalg, scipy.stats, ...
            family = ".".join(label.split(".")[:2]) + _OPTIONAL
        if isinstance(prim, type) and prim.__module__ == "builtins":
            family = "builtins"
        params = ", ".join(
            p if rule.adjoints.get(p) is not None else f"~~{p}~~" for p in rule.signature.parameters
        )
        fam.setdefault(family, []).append(f"`{rule.name}({params})`")
    lines = ["| family | functions (struck-through parameters get no gradient) |", "|---|---|"]
    scipy = sorted(f for f in fam if f.startswith("scipy."))
    for family in ("numpy", *scipy, "math module", "builtins"):
        if family in fam:
            lines.append(f"| {family} | " + ", ".join(sorted(set(fam[family]))) + " |")
    composites = []
    for prim, fn in (*COMPOSITES.items(), *ONE_SHOT.items()):
        params = ", ".join(inspect.signature(fn).parameters)
        composites.append(
            f"`{_label(prim)}({params})`" + " (consumed where made)" * (prim in ONE_SHOT)
        )
    lines.append(
        "| numpy, computed with the functions above (cpsad/rules/composite.py: any order, both"
        " modes) | " + ", ".join(sorted(composites)) + " |"
    )
    ops = ", ".join(f"`{n}`" for n in sorted(OPERATORS))
    lines.append(f"| operators | {ops} |")
    lines.append("| array methods | " + ", ".join(f"`.{n}()`" for n in sorted(METHODS)) + " |")
    lines.append("| array attributes | " + ", ".join(f"`.{n}`" for n in sorted(ATTRIBUTES)) + " |")
    lines.append(
        "| emitted code's own functions (see rules.md) | "
        + ", ".join(f"`{n}`" for n in sorted(helpers))
        + " |"
    )
    api = ("cpsad.custom.",)  # the API's own (stop_gradient): cpsad.<name> to a user
    nondiff = sorted(
        {_label(o) for o in NONDIFF if not _label(o).startswith(("np.random.", "cpsad."))}
        | {"cpsad." + o.__name__ for o in NONDIFF if _label(o).startswith(api)}
    )
    steps = sorted(
        o.__name__
        for o in NONDIFF
        if _label(o).startswith("cpsad.")
        and not _label(o).startswith(("cpsad.rules.composite", *api))
    )
    lines.append("")
    lines.append(
        "Non-differentiable (results pass through with no adjoint): "
        + ", ".join(f"`{n}`" for n in nondiff)
        + ", the functions of `np.random` of sizes and seeds and its samplers of integers (its"
        " other samplers, `permutation` and `choice` refuse differentiable arguments), the"
        " attributes "
        + ", ".join(f"`.{n}`" for n in sorted(NONDIFF_ATTRIBUTES))
        + ", and emitted code's functions of shapes, counts and masks: "
        + ", ".join(f"`{n}`" for n in steps)
        + "."
    )
    return "\n".join(lines) + "\n"
