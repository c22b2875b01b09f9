"""What to write instead of a call cpsad cannot differentiate: the hints that depend on what was
called, in one place, for the refusals made when a function is transformed and when it runs.

Each hint points to the documented fix -- docs/reference.md lists what is differentiated and what
is refused, and why -- and suggests ``cpsad.defvjp`` only where registering a rule is that fix: a
function with no alternative written with functions cpsad differentiates.

>>> import numpy as np
>>> no_rule(np.random.default_rng(0).normal, "rng.normal")[:70]
'a sample moves with its parameters but has no derivative rule: draw a '
>>> method("tolist")[:40]
'`list(x)` gives the rows of `x` as a lis'
"""

from __future__ import annotations

import inspect

import numpy

from . import astlib as A

REFERENCE = "docs/reference.md"

# numpy functions with a documented way to write them with functions that have rules
NUMPY_INSTEAD = {
    "vectorize": (
        "call the function on the array itself -- its numpy operations work element by "
        "element -- or build the result with a comprehension, `np.array([f(t) for t in x])`"
    ),
    "frompyfunc": (
        "call the function on the array itself, or build the result with a comprehension, "
        "`np.array([f(t) for t in x])`"
    ),
    "fromiter": "build the array with `np.array([...])` or `np.stack([...])`",
    "polyval": "write the polynomial out: `c[0] * x**2 + c[1] * x + c[2]`",
}

# the samplers of np.random's Generator and RandomState that move with their parameters (the
# others -- of integers, of standard distributions, of sizes and seeds -- are steps)
SAMPLE = (
    "a sample moves with its parameters but has no derivative rule: draw a standard sample and "
    "shift and scale it, `loc + scale * rng.standard_normal(size)`, which is differentiated in "
    "`loc` and `scale` ({}, np.random)"
)


USER_CLASS = (
    "make the class a dataclass or a namedtuple and compute with its fields (`p.w`) in "
    "functions rather than its methods -- cpsad differentiates through their fields -- or "
    "register it (`cpsad.register_pytree`) and pass the object in; or pass its arrays in a dict"
)


def no_rule(fn, shown: str) -> str:
    """The hint for a call of ``fn`` (shown as ``shown``) on differentiable values: ``fn`` has no
    derivative rule, and cpsad cannot read its source."""
    if fn is None:  # what the call calls is not known when the function is transformed
        return (
            f"call the function by name rather than as `{shown}`; a derivative taken inside a "
            "differentiated function is written `cpsad.grad(h, argnums)(...)` with `h` a def or "
            "lambda defined there (docs/api.md)"
        )
    if _random(fn):
        if getattr(fn, "__name__", "") in SHUFFLES:
            return (
                "draw the order apart from the values and index with it, `x[rng.permutation("
                "len(x))]`: indexing is differentiated"
            )
        return SAMPLE.format(REFERENCE)
    module = getattr(fn, "__module__", None) or type(fn).__module__ or ""
    name = getattr(fn, "__name__", "")
    if module.split(".")[0] == "numpy":
        instead = NUMPY_INSTEAD.get(name)
        if instead is not None:
            return instead
        return (
            f"compute it with numpy functions cpsad differentiates ({REFERENCE} lists them), or "
            f"register its derivative with `cpsad.defvjp({shown}, ...)` (docs/rules.md)"
        )
    if inspect.isfunction(fn) and not _has_file(fn):  # made by exec, or at a prompt
        return (
            "define the function in a .py file (cpsad transforms its source), or register its "
            f"derivative with `cpsad.defvjp({shown}, ...)` (docs/rules.md)"
        )
    if inspect.isfunction(fn):  # a library's (scipy's): its functions with rules are listed
        return (
            f"compute it with functions cpsad differentiates ({REFERENCE} lists them), or "
            f"register its derivative with `cpsad.defvjp({shown}, ...)` (docs/rules.md)"
        )
    receiver = getattr(fn, "__self__", None)
    if isinstance(receiver, (dict, list, set)) and name in CHANGES:  # (a.pop(), d.setdefault(k))
        return (
            f"`{shown}` changes the {type(receiver).__name__} in place, which cpsad does not "
            f"follow on differentiable values: {in_place(name)}"
        )
    if isinstance(receiver, (str, bytes, dict, list, tuple, set)):  # ("{}".format(x), d.get)
        return (
            f"`{shown}` makes something other than a number of what it is given: no derivative "
            "flows through it. Compute with the number itself; where it is used as data (a "
            "label, a key), pass `cpsad.stop_gradient(x)`"
        )
    return (
        f"`{shown}` is compiled code, which cpsad cannot read: compute it with functions cpsad "
        f"differentiates (numpy's, math's: {REFERENCE} lists them), or register its derivative "
        f"with `cpsad.defvjp({shown}, ...)` (docs/rules.md)"
    )


def no_derivative(rule_name: str, param: str) -> str:
    """The hint for a differentiable value passed to ``param`` of a function whose rule gives
    that parameter no derivative (``np.random.normal``'s ``loc``)."""
    if rule_name.startswith("np.random."):
        return SAMPLE.format(REFERENCE)
    return f"make `{param}` a constant, or stop the gradient: `cpsad.stop_gradient({param})`"


def receiver(unit, node) -> str:
    """The object a method with no derivative rule is called on, as a refusal names it: a
    parameter being differentiated by name (``rng``, which the command line differentiates
    unless ``--wrt`` says otherwise), a differentiable value otherwise."""
    if isinstance(node, A.Name) and node.id in unit.active:
        return f"`{node.id}`, a parameter being differentiated,"
    if isinstance(node, A.Name) and node.id not in unit.namer.generated:
        return f"`{node.id}`, a differentiable value (or a container of them),"
    return "a differentiable value (or a container of them)"


def method(name: str, of_parameter: bool = False) -> str:
    """The hint for ``x.name()`` on a differentiable value, a method with no derivative rule
    (``of_parameter``: ``x`` a parameter being differentiated)."""
    if of_parameter:
        return (
            "if the parameter is not a number to differentiate (a random generator, a model "
            "object), differentiate with respect to the others only: `argnums` (`--wrt` on the "
            f"command line); else {method(name)}"
        )
    if name == "tolist":
        return (
            "`list(x)` gives the rows of `x` as a list, differentiated; for the others, the array "
            f"methods and numpy functions cpsad differentiates are listed in {REFERENCE}"
        )
    instead = f"call `np.{name}(x, ...)` instead, or " if hasattr(numpy, name) else ""
    return (
        f"{instead}compute it with the array methods and numpy functions cpsad differentiates "
        f"({REFERENCE} lists them). Where the result is data, not a number to differentiate (an "
        "index, a count, a string), call the method on `cpsad.stop_gradient(x)`"
    )


# the methods of lists, dicts and sets that change their object (besides those cpsad follows:
# ``append``, ``extend``)
CHANGES = frozenset(
    {"pop", "remove", "insert", "clear", "setdefault", "popitem", "sort", "reverse", "update"}
    | {"discard", "add", "difference_update", "intersection_update"}
)


def in_place(name: str) -> str:
    """The hint for ``obj.name(...)`` called for its effect -- a change in place -- on a
    differentiable value or a container of them."""
    if name == "sort":
        return "make a new value: `y = np.sort(x)` for an array, `ys = sorted(xs)` for a list"
    if name in ("update", "setdefault", "popitem"):
        return "make a new dict, `d = {**d, k: v}`, or store the entry, `d[k] = v` (supported)"
    if name in ("insert", "remove", "reverse"):
        return "make a new list (`xs = xs[:i] + [v] + xs[i:]`, `xs = xs[::-1]`), or `xs.append(v)`"
    if name == "pop":
        return "read the entry and make a new value: `v = xs[-1]; xs = xs[:-1]`, `v = d[k]`"
    return (
        "make a new value instead (`xs = xs[:-1]`, `d = {k: v for k, v in d.items() if ...}`); "
        f"{REFERENCE} lists the changes in place that are supported (`xs.append(v)`, `d[k] = v`)"
    )


def attribute(name: str) -> str:
    """The hint for ``x.name`` of a differentiable value, an attribute with no derivative rule."""
    return (
        f"compute it with numpy functions cpsad differentiates ({REFERENCE} lists them and the "
        "array attributes it differentiates); for an object of a class of yours, register the "
        "class with cpsad.register_pytree (its fields are then read with their derivatives)"
    )


def _has_file(fn) -> bool:
    try:
        return inspect.getsourcefile(fn) is not None
    except TypeError:
        return False


SHUFFLES = ("choice", "permutation", "permuted", "shuffle")  # they move values about


def _random(fn) -> bool:
    """A method of a ``np.random.Generator`` or ``RandomState`` (``rng.normal``)."""
    receiver = getattr(fn, "__self__", None)
    kind = type(receiver).__name__
    return type(receiver).__module__.startswith("numpy.random") and kind in (
        "Generator",
        "RandomState",
    )
