"""Build code from templates: runnable Python functions whose parameters are holes.

A derivative rule is a plain function, ``def sin(g, ans, x): return g * np.cos(x)``. Its body is
parsed once; ``instantiate`` fills the holes with the caller's nodes by name and renames the
rule's free names (``np``) to what the emitted module calls them. A rule whose body is more than
one ``return`` is called by name instead, so every rule stays runnable and testable on its own.

>>> import numpy as np
>>> def sin(g, ans, x):
...     return g * np.cos(x)
>>> from cpsad.transforms import astlib as A
>>> t = template(sin)
>>> e = instantiate(t, {"g": A.name("y_bar"), "ans": A.name("y"), "x": A.name("z")},
...                 lambda obj, name: name)
>>> A.expr_source(e)
'y_bar * np.cos(z)'
"""

from __future__ import annotations

import builtins
import inspect
import linecache
import textwrap
from collections.abc import Callable

from . import astlib as A
from .context import Template

_PARSED: dict = {}


def template(fn: Callable) -> Template:
    """A rule function as a template (its source is parsed when first instantiated)."""
    return Template(fn=fn)


def parsed(fn: Callable):
    """``(expr, free)``: the body's single return expression and its free names, or ``(None, {})``
    when the body is more than one ``return`` (then the rule is called by name). Parsed once."""
    cached = _PARSED.get(fn)
    if cached is not None:
        return cached
    expr = None
    free: dict = {}
    try:
        fdef = _definition(fn)
    except (OSError, TypeError, SyntaxError, IndexError):
        fdef = None
    if isinstance(fdef, A.FunctionDef):
        body = fdef.body
        if body and isinstance(body[0], A.Expr) and isinstance(body[0].value, A.Constant):
            body = body[1:]
        if len(body) == 1 and isinstance(body[0], A.Return) and body[0].value is not None:
            expr = body[0].value
            params = set(A.arg_names(fdef.args))
            g = fn.__globals__
            for n in A.walk(expr):
                if isinstance(n, A.Name) and n.id not in params:
                    if n.id in g:
                        free[n.id] = g[n.id]
                    elif hasattr(builtins, n.id):
                        free[n.id] = getattr(builtins, n.id)
                    else:  # a name the template cannot resolve: call the function instead
                        expr, free = None, {}
                        break
            if expr is not None and any(
                isinstance(n, (A.Lambda, A.ListComp, A.GeneratorExp, A.NamedExpr))
                for n in A.walk(expr)
            ):
                expr, free = None, {}
    _PARSED[fn] = (expr, free)
    return expr, free


def _definition(fn: Callable):
    """The parsed ``def`` of ``fn``: its lines, up to the first line indented no deeper than the
    ``def``, read from ``linecache`` (``inspect.getsource`` tokenizes its way there instead, and
    took 170 us a rule, most of a first transformation's time in rules); where those lines do
    not parse alone (a string dedented inside), what ``inspect.getsource`` says."""
    code = fn.__code__
    lines = linecache.getlines(code.co_filename)
    start = code.co_firstlineno - 1
    if 0 <= start < len(lines):
        first = lines[start]
        indent = len(first) - len(first.lstrip())
        end = start + 1
        while end < len(lines):
            line = lines[end]
            stripped = line.strip()
            if (
                stripped
                and not stripped.startswith("#")
                and len(line) - len(line.lstrip()) <= indent
            ):
                if not stripped.startswith(")"):  # a signature's closing parenthesis
                    break
            end += 1
        try:
            fdef = A.parse(textwrap.dedent("".join(lines[start:end]))).body[0]
            if isinstance(fdef, A.FunctionDef) and fdef.name == fn.__name__:
                return fdef
        except SyntaxError:
            pass
    return A.parse(textwrap.dedent(inspect.getsource(fn))).body[0]


_PARAMETERS: dict = {}


def parameters(fn: Callable):
    """``inspect.signature(fn).parameters`` of a rule function, read once (like its source)."""
    out = _PARAMETERS.get(fn)
    if out is None:
        out = _PARAMETERS[fn] = inspect.signature(fn).parameters
    return out


def instantiate(t: Template, holes: dict, inject: Callable[[object, str], str]):
    """The template's expression with holes filled, or a call of the rule by name.

    ``holes`` maps every parameter of the rule to a gast expression; ``inject(obj, name)`` returns
    the name under which emitted code refers to ``obj``.
    """
    expr, free = parsed(t.fn)
    if expr is None:  # called by name: parameters with defaults by keyword, defaults left out
        fname = inject(t.fn, t.fn.__name__)
        args, keywords = [], {}
        for p in parameters(t.fn).values():
            hole = holes[p.name]
            if p.kind == inspect.Parameter.VAR_POSITIONAL:
                star = A.Starred(value=A.name(p.name), ctx=A.Load())
                spliced = _spliced(star, holes)
                default = [A.Starred(value=A.deepcopy(hole), ctx=A.Load())]
                args += spliced if spliced is not None else default
            elif p.kind == inspect.Parameter.VAR_KEYWORD:
                keywords[None] = A.deepcopy(hole)
            elif p.default is inspect.Parameter.empty:
                args.append(A.deepcopy(hole))
            elif not (isinstance(hole, A.Constant) and _same_constant(hole.value, p.default)):
                keywords[p.name] = A.deepcopy(hole)
        return A.call(fname, args, keywords)
    renames = {n: inject(obj, n) for n, obj in free.items()}
    planned = _PLANS.get(t.fn)
    if planned is None or planned[0] is not expr:  # (kept with the expression it was made from)
        planned = _PLANS[t.fn] = (expr, _plan(expr))
    return _filled(planned[1], holes, renames)


def _spliced(node, holes: dict):
    """``*items`` of a hole that a tuple display fills -- the call's own arguments -- as copies
    of them, each by position (``f(g, x, y)``, not ``f(g, *(x, y))``); None otherwise."""
    if node.value.__class__ is A.Name:
        hole = holes.get(node.value.id)
        if isinstance(hole, A.Tuple):
            return [A.deepcopy(e) for e in hole.elts]
    return None


def _same_constant(a, b) -> bool:
    return type(a) is type(b) and a == b


# A template's expression, worked out once into how ``_filled`` copies each node (for speed: every
# rule a function uses is filled once per operation, and looking at each field of each node again
# to tell nodes from values was most of that): ``(class, its instance dict with the places of the
# nodes it holds left None, [(field, plan)] of the fields that hold a node, [(field, items)] of
# those that hold a list, its id if it is a Name, its annotations)``. An item of a list is
# ``(_NODE, plan, None)``, ``(_STARRED, the id it stars if a Name, plan)`` or ``(_VALUE, it, None)``.
_PLANS: dict = {}  # rule function -> (its expression, as ``parsed`` gives it; the plan of it)
_NODE, _STARRED, _VALUE = 0, 1, 2


def _plan(node) -> tuple:
    """How ``_filled`` copies the template expression ``node`` (see ``_PLANS``)."""
    static: dict = {}
    nodes, lists, annotations = [], [], None
    for k, v in node.__dict__.items():
        static[k] = v
        if isinstance(v, A.AST):
            static[k] = None
            nodes.append((k, _plan(v)))
        elif isinstance(v, list):
            static[k] = None
            lists.append((k, [_item(x) for x in v]))
        elif k == "_cpsad":
            annotations = v
    name = node.id if node.__class__ is A.Name else None
    return node.__class__, static, nodes, lists, name, annotations


def _item(x) -> tuple:
    if not isinstance(x, A.AST):
        return _VALUE, x, None
    if x.__class__ is A.Starred:
        return _STARRED, x.value.id if x.value.__class__ is A.Name else None, _plan(x)
    return _NODE, _plan(x), None


def _filled(plan: tuple, holes: dict, renames: dict):
    """A copy of the template expression ``plan`` describes (as ``A.deepcopy`` copies) with each
    name of a hole replaced by a copy of what fills it, each ``*hole`` a tuple display fills by
    copies of its items (``_spliced``), and each free name renamed -- in one walk: every rule a
    function uses is instantiated once per operation, so this copy is most of Shift/Reset's
    time on a long function."""
    cls, static, nodes, lists, name, annotations = plan
    if name is not None and name in holes:
        return A.deepcopy(holes[name])
    new = cls.__new__(cls)
    d = new.__dict__
    d.update(static)  # (the fields in their order; those of nodes are set below)
    for k, p in nodes:
        d[k] = _filled(p, holes, renames)
    for k, items in lists:
        out = d[k] = []
        for how, a, b in items:
            if how == _NODE:
                out.append(_filled(a, holes, renames))
            elif how == _STARRED:
                hole = holes.get(a) if a is not None else None
                if isinstance(hole, A.Tuple):
                    out += [A.deepcopy(e) for e in hole.elts]
                else:
                    out.append(_filled(b, holes, renames))
            else:
                out.append(a)
    if annotations is not None:
        d["_cpsad"] = dict(annotations)
    if name is not None and name in renames:
        d["id"] = renames[name]
    return new
