"""After Inline, calls of small helper functions are replaced by the expressions they compute.

A module-level function whose body is one ``return`` of a small expression -- ``sigmoid(z)``,
``relu(x)``, ``scaled(x, factor=2.0)`` -- is substituted at the call site, its parameters replaced
by the arguments and the names it uses from its own module made available to the emitted code.
The backpropagator then stays flat instead of running the helper as a continuation call::

    h = sigmoid(W @ x + b)     ->     h = 1.0 / (1.0 + np.exp(-(W @ x + b)))

A helper is left alone when inlining could change what the program does: it is recursive, a
closure, takes ``*args``, has a default that is not a plain constant, is large, or an argument
would be evaluated a different number of times or in a different order (an argument with a call
of an arbitrary function, used other than exactly once).
"""

from __future__ import annotations

import builtins
import functools
import inspect
import types
import weakref

from . import anno
from . import astlib as A
from .parse import checked_tree
from .resolve import (
    annotate_global_call,
    known_call,
    resolve_call,
    scope_of,
    subscript_call,
)
from .scoping import push_children
from .unit import ABSENT, Unit

MAX_NODES = 60  # a helper's expression larger than this is called, not inlined
ROUNDS = 3  # helpers inlined into helpers, this deep at most
_PARSED: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # code -> _parse's answer


def body_of(fn):
    """``(signature, defaults, expression, globals it uses)`` of an inlinable helper, or None.
    (The source is parsed once per code object; defaults and globals are read each time: they
    may have changed since.)"""
    if not isinstance(fn, types.FunctionType) or fn.__closure__ or fn.__name__ == "<lambda>":
        return None
    code = fn.__code__
    if code not in _PARSED:
        _PARSED[code] = _parse(fn)
    parsed = _PARSED[code]
    if parsed is None:
        return None
    expr, nodes, params = parsed
    try:
        sig = inspect.signature(fn, follow_wrapped=False)
    except (TypeError, ValueError):
        return None
    defaults = {}
    for p in sig.parameters.values():
        if p.default is not inspect.Parameter.empty:
            if not isinstance(p.default, (int, float, complex, str, bool, type(None))):
                return None
            defaults[p.name] = p.default
    free = {n.id for n in nodes if isinstance(n, A.Name) and n.id not in params}
    env = {}
    for n in free:
        if n in fn.__globals__:
            env[n] = fn.__globals__[n]
        elif hasattr(builtins, n):
            env[n] = getattr(builtins, n)
        else:
            return None
    if any(_desugared_call(n, env) for n in nodes):
        return None  # (Desugar, which ran before, rewrites it: transformed as a function)
    return sig, defaults, expr, env


def _desugared_call(n, env) -> bool:
    """Is ``n`` a call Desugar rewrites into a loop (``functools.reduce(f, xs)``, ``map(f,
    xs)``)?"""
    if not isinstance(n, A.Call):
        return False
    path = A.dotted(n.func)
    if path is None:
        return False
    head, *rest = path.split(".")
    obj = env.get(head)
    for part in rest:
        obj = getattr(obj, part, None)
    return obj is functools.reduce or (obj is builtins.map and len(n.args) >= 2)


def _parse(fn):
    """``(expression, its nodes, parameters)`` of a helper whose body is one small ``return``."""
    code = fn.__code__
    if code.co_flags & (inspect.CO_VARARGS | inspect.CO_VARKEYWORDS | inspect.CO_GENERATOR):
        return None
    tree = checked_tree(fn)  # the code's, not __wrapped__'s; None if the file changed
    if tree is None or not tree.body:
        return None
    fdef = tree.body[0]
    if not isinstance(fdef, A.FunctionDef) or fdef.decorator_list:
        return None
    body = fdef.body
    if body and isinstance(body[0], A.Expr) and isinstance(body[0].value, A.Constant):
        body = body[1:]
    if len(body) != 1 or not isinstance(body[0], A.Return) or body[0].value is None:
        return None
    expr = body[0].value
    nodes = list(A.walk(expr))
    if len(nodes) > MAX_NODES:
        return None
    forbidden = (
        A.Lambda,
        A.ListComp,
        A.SetComp,
        A.DictComp,
        A.GeneratorExp,
        A.NamedExpr,
        A.Yield,
        A.YieldFrom,
        A.Await,
        A.IfExp,
        A.BoolOp,
    )
    if any(isinstance(n, forbidden) for n in nodes):
        return None
    if any(isinstance(n, A.Name) and n.id == fn.__name__ for n in nodes):
        return None  # recursive
    return expr, nodes, A.arg_names(fdef.args)


class Inline:
    name = "inline"
    invariant = "calls of small helper functions are replaced by the expressions they compute"

    def run(self, unit: Unit) -> None:
        self.unit = unit
        self.inlined: list[str] = []
        self.notes = unit.notes.setdefault("resolve", [])
        for _ in range(ROUNDS):
            if not _user_calls(unit.tree):
                break  # nothing to inline (for speed: a look at the calls, not a rewrite walk)
            before = len(self.inlined)
            _Substitute(self).visit(unit.tree)
            if len(self.inlined) == before:
                break
        unit.notes[self.name] = [f"inlined {name}" for name in dict.fromkeys(self.inlined)]

    def expression(self, call, scopes: list):
        """The helper's expression for this call, or None to keep the call. (``scopes``: those
        of the functions around the call, as ``resolve.scope_of`` gives them.)"""
        if anno.getanno(call.func, anno.CALLEE_KIND) != "user":
            return None
        fn = anno.getanno(call.func, anno.CALLEE)
        found = body_of(fn)
        if found is None or any(isinstance(a, A.Starred) for a in call.args):
            return None
        sig, defaults, expr, env = found
        try:
            bound = sig.bind(*call.args, **{k.arg: k.value for k in call.keywords})
        except TypeError:
            return None
        args = dict(bound.arguments)
        for p, v in defaults.items():
            args.setdefault(p, A.const(v))
        uses = {p: 0 for p in args}
        for n in A.walk(expr):
            if isinstance(n, A.Name) and n.id in uses:
                uses[n.id] += 1
        for p, a in args.items():
            if uses[p] != 1 and not A.is_atom(a):
                return None  # would evaluate the argument twice, or not at all
            if not _pure(a):
                return None  # would change when the argument's calls run
        # what the emitted code now holds of the helper: valid while the helper is the same
        self.unit.depend(fn, "__code__", fn.__code__)
        self.unit.depend(fn, "__defaults__", fn.__defaults__)
        self.unit.depend(fn, "__kwdefaults__", fn.__kwdefaults__)
        for n, obj in env.items():
            self.unit.depend(fn.__globals__, n, obj if n in fn.__globals__ else ABSENT)  # a builtin
        names = {n: self.unit.inject(obj, n) for n, obj in env.items()}
        fill = _Fill(args, names)
        out = fill.visit(A.deepcopy(expr))
        out = _SubscriptCalls(self.unit, set(names.values())).visit(out)
        for n in A.walk(out):  # the emitted code shows the caller's line
            for field in A.LOCATION:
                if hasattr(call, field):
                    setattr(n, field, getattr(call, field))
        for n in A.walk(out):
            if isinstance(n, A.Call) and not anno.hasanno(n.func, anno.CALLEE_KIND):
                path = A.dotted(n.func)
                if id(_base(n.func)) in fill.placed:
                    # the callee is what the caller passed (``apply(g, v)`` -> ``g(v)``): a name
                    # of the caller's, found where the call now is
                    resolve_call(self.unit, n, scopes, self.unit.deps, self.notes)
                elif path is None:  # `(a - b).sum()`, `np.ones(3).dot(a)`: a method, or a value
                    kind = "method" if isinstance(n.func, A.Attribute) else "dynamic"
                    anno.setanno(n.func, anno.CALLEE_KIND, kind)
                else:
                    obj = annotate_global_call(self.unit, n.func, path)
                    # (as ``resolve_call`` does: a method of an object too, ``LAYER(x)``)
                    known_call(self.unit, n, obj)
        self.inlined.append(fn.__qualname__)
        return out


def _user_calls(tree) -> bool:
    """Is there a call of a user function (what ``Inline.expression`` may inline) in ``tree``?"""
    stack = [tree]
    Call, kind, get = A.Call, anno.CALLEE_KIND, anno.getanno
    while stack:
        n = stack.pop()
        if n.__class__ is Call and get(n.func, kind) == "user":
            return True
        push_children(n, stack)
    return False


def _pure(e) -> bool:
    """Evaluating ``e`` calls nothing but primitives and non-differentiable functions."""
    for n in A.walk(e):
        if isinstance(n, A.Call) and anno.getanno(n.func, anno.CALLEE_KIND) not in (
            "primitive",
            "nondiff",
        ):
            return False
        if isinstance(n, (A.Lambda, A.NamedExpr, A.Yield, A.Await)):
            return False
    return True


def _base(e):
    """The node an attribute or subscript chain starts from (``g`` of ``g.f[0].h``)."""
    while isinstance(e, (A.Attribute, A.Subscript)):
        e = e.value
    return e


class _Substitute(A.NodeTransformer):
    def __init__(self, inline: Inline):
        self.inline = inline
        self.scopes: list = []

    def visit_FunctionDef(self, node):
        self.scopes.append(scope_of(self.inline.unit, node))
        try:
            self.generic_visit(node)
        finally:
            self.scopes.pop()
        return node

    def visit_Call(self, node):
        self.generic_visit(node)
        out = self.inline.expression(node, self.scopes)
        return node if out is None else out


class _SubscriptCalls(A.NodeTransformer):
    """``np.r_[...]`` in a helper's expression as a call, as Resolve makes it in the caller's."""

    def __init__(self, unit: Unit, helper_globals: set):
        self.unit, self.helper_globals = unit, helper_globals

    def visit_Subscript(self, node):
        self.generic_visit(node)
        found = subscript_call(self.unit, node, self.helper_globals.__contains__)
        return node if found is None else found[0]


class _Fill(A.NodeTransformer):
    """The helper's expression with its parameters replaced by copies of the arguments (each
    copy's root kept in ``placed``) and its globals by the names the emitted code has for them."""

    def __init__(self, args, names):
        self.args = args
        self.names = names
        self.placed: set[int] = set()

    def visit_Name(self, node):
        if node.id in self.args:
            copy = A.deepcopy(self.args[node.id])
            self.placed.add(id(copy))
            return copy
        if node.id in self.names:
            node.id = self.names[node.id]
        return node
