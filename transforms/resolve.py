"""After Resolve, every call's callee is annotated with the object it refers to and its kind.

Names are looked up as Python would at call time -- the function's closure, its module's globals,
builtins -- unless the function binds them itself. Each call's ``func`` node gets ``CALLEE`` (the
object) and ``CALLEE_KIND``:

* ``primitive`` -- has a derivative rule (``np.sin``, ``math.exp``, ``abs``);
* ``nondiff``   -- has no derivative and needs none (``len``, ``np.zeros_like``, ``np.argmax``);
* ``user``      -- a Python function with source: transformed too, called in CPS;
* ``unknown``   -- neither: fine on inactive values, an error on active ones;
* ``local``     -- a function defined inside this one (``CALLEE`` is its ``def`` node);
* ``method``    -- ``value.name(...)`` on a local value, resolved by the rule table by name;
* ``dynamic``   -- known only at run time (a function passed in as an argument).

A subscript of a global object whose subscript computes a value from the index -- ``np.r_[x, y]``,
``np.c_[...]``, ``np.mgrid[0:1:5j]``, which the context names (``subscript_function``) -- is a
call of a function of the index, ``r_((x, y))``, its slices ``slice(a, b, c)``: a subscript's index
carries no derivative, so without this the values in it would silently get none.

In emitted code transformed again (a higher derivative), a call of the runtime's dispatch of a
call through a function value, ``call_bp(f, k, *args)``, becomes a call of the function the
dispatch would run, ``(bp_of(f, x)(k, x),)`` (``next_order_call``): a call through a value this
transformation differentiates like any other, one level of dispatch per order.

The dotted names the resolution depended on are recorded in ``unit.deps`` (``np.sin`` -> the
function it named) so a cached transformation can check, cheaply, that they still refer to the
same objects (a module reloaded, ``np.sin`` patched, ``helper`` rebound).
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
import sys
import sysconfig
import types

from . import anno
from . import astlib as A
from .scoping import (
    analyze,
    local_names,
    nonlocal_anywhere,
    own_nodes,
    own_scope,
    push_children,
    walk_own,
)
from .unit import SEED, LocalFunction, Unit


def local_defs(fdef, scope: tuple | None = None) -> dict[str, object]:
    """The functions defined directly in ``fdef``'s scope, by name (None if also rebound).
    ``scope``: ``scoping.own_scope(fdef)``, where the caller has it -- its counts answer without
    a walk, unless a def's name is bound other than by a def there (rare: walked then)."""
    if scope is not None:
        own, met = scope
        defs: dict[str, object] = {}
        made: dict[str, int] = {}  # name -> the defs of it
        for d in met:
            defs[d.name] = None if d.name in defs else d
            made[d.name] = made.get(d.name, 0) + 1
        # (a name the scan counts as stored only by its defs: no ``Name`` binds it, as below)
        if all(own.stores.get(n, 0) == c for n, c in made.items()):
            return {n: (None if n in own.params else d) for n, d in defs.items()}
    defs = {}
    stores: set[str] = set(A.arg_names(fdef.args))
    stack = list(fdef.body)
    while stack:
        node = stack.pop()
        if isinstance(node, A.FunctionDef):
            defs[node.name] = None if node.name in defs else node
            continue
        if node.__class__ is A.Name:
            if isinstance(node.ctx, A.Store):
                stores.add(node.id)
            continue
        push_children(node, stack)
    return {n: (None if n in stores else d) for n, d in defs.items()}


class Resolve:
    name = "resolve"
    invariant = "every called name is bound to a real object, a local function, or marked a method or dynamic"

    def run(self, unit: Unit) -> None:
        self.unit = unit
        self.deps: dict[str, object] = {}
        self.notes: list[str] = []
        for p, kinds in (unit.arg_kinds or {}).items():
            if kinds == {SEED}:
                seeded(unit, p)
        self.function(unit.tree, [])
        unit.deps = self.deps
        unit.notes[self.name] = self.notes

    def function(self, fdef, outer: list) -> None:
        """Resolve the calls of ``fdef``; ``outer`` holds (locals, defs) of the enclosing functions."""
        # (its facts, local names and local defs from one scan of its scope, for speed)
        own = own_scope(fdef)
        facts = analyze(fdef, own=own[0])
        scopes = outer + [scope_of(self.unit, fdef, own)]
        self.cells(fdef, facts)
        is_global = lambda root: not any(root in n for n, _ in scopes)  # noqa: E731
        if _subscripts_in(fdef.body):  # (for speed: a rewrite of every node only where one is)
            calls = _SubscriptCalls(self, is_global)
            fdef.body = [calls.visit(st) for st in fdef.body]
        if getattr(self.unit, "emitted", False):
            dispatch = _NextOrderCalls(self.unit, is_global, _through_names(self.unit, fdef))
            fdef.body = [dispatch.visit(st) for st in fdef.body]
        stack = list(fdef.body)
        while stack:
            node = stack.pop()
            if isinstance(node, A.FunctionDef):
                if not anno.hasanno(node, anno.DEF_KEY):  # rebound name: reached only dynamically
                    anno.setanno(node, anno.DEF_KEY, f"{node.name}@{len(self.unit.locals)}")
                    self.unit.locals[anno.getanno(node, anno.DEF_KEY)] = LocalFunction(node.name)
                self.function(node, scopes)
                stack.extend(node.args.defaults + [d for d in node.args.kw_defaults if d])
                continue
            if isinstance(node, A.Call):
                self.call(node, scopes)
            push_children(node, stack)

    def cells(self, fdef, facts: dict) -> None:
        """Names of ``fdef`` that nested functions share and that change: a nested function
        declares them ``nonlocal``, or captures one that ``fdef`` assigns more than once, or
        assigns after the function is defined (``g = lambda: y`` before ``y = ...``). Such a
        variable is one cell everyone reads and writes (it cannot be renamed per assignment).
        A store into an entry, ``y[i] = v``, counts as an assignment: into an array, it runs as
        ``y = stored(y, i, v)``, and the nested function must read the rebound name. (``facts``:
        ``analyze(fdef)``.)"""
        own = facts[id(fdef)]
        cells = set()
        stored_after = None
        entry_stores = None
        for g in own.nested:
            gf = facts[id(g)]
            for n in gf.free & own.local:
                if entry_stores is None:
                    entry_stores = _entry_stores(fdef)
                stores = own.stores.get(n, 0) + (n in own.params) + entry_stores.get(n, 0)
                if n in nonlocal_anywhere(g) or stores > 1:
                    cells.add(n)
                elif stores == 1 and n not in own.params:
                    if stored_after is None:
                        stored_after = _stored_after_defs(fdef)
                    if n in stored_after.get(id(g), ()):
                        cells.add(n)
        if cells:
            anno.setanno(fdef, anno.CELLS, cells)
            self.unit.cells |= cells

    def call(self, node, scopes) -> None:
        resolve_call(self.unit, node, scopes, self.deps, self.notes)

    @staticmethod
    def check(unit: Unit) -> None:
        for node in A.walk(unit.tree):
            if isinstance(node, A.Call):
                assert anno.hasanno(node.func, anno.CALLEE_KIND), A.expr_source(node)


def scope_of(unit: Unit, fdef, scope: tuple | None = None) -> tuple:
    """``(local names, local defs)`` of ``fdef``, what ``resolve_call`` needs of each function
    around a call; its local defs get their ``DEF_KEY`` (once). ``scope``: ``own_scope(fdef)``,
    where the caller has it (made here otherwise: one scan for both)."""
    if scope is None:
        scope = own_scope(fdef)
    defs = local_defs(fdef, scope)
    for d in defs.values():
        if d is not None and not anno.hasanno(d, anno.DEF_KEY):
            anno.setanno(d, anno.DEF_KEY, f"{d.name}@{len(unit.locals)}")
            unit.locals[anno.getanno(d, anno.DEF_KEY)] = LocalFunction(d.name)
    return scope[0].local, defs


def resolve_call(unit: Unit, node, scopes: list, deps: dict, notes: list) -> None:
    """Annotate the callee of ``node`` as Python would find it there: ``scopes`` are the
    ``scope_of`` the functions around the call, innermost last; a global it resolves is
    recorded in ``deps`` (and described in ``notes``)."""
    func = node.func
    path = A.dotted(func)
    root = path.split(".")[0] if path else None
    binding = None
    for names, defs in reversed(scopes):
        if root is not None and root in names:
            binding = (names, defs)
            break
    if path is not None and binding is None:
        obj = annotate_global_call(unit, func, path)
        known_call(unit, node, obj)
        if obj is not _UNRESOLVED:
            if root not in unit.injected:  # (a name the pipeline gave an object: no reading of
                deps[path] = obj  # the function's world -- ``scalar_seed`` for a seeded ``k``)
            note = f"{path} -> {_describe(obj)} ({anno.getanno(func, anno.CALLEE_KIND)})"
            if note not in notes:
                notes.append(note)
    elif isinstance(func, A.Name) and binding is not None and binding[1].get(func.id) is not None:
        anno.setanno(func, anno.CALLEE, anno.getanno(binding[1][func.id], anno.DEF_KEY))
        anno.setanno(func, anno.CALLEE_KIND, "local")
    elif isinstance(func, A.Attribute):
        anno.setanno(func, anno.CALLEE_KIND, "method")
        if func.attr == "_replace" and not node.args:  # a namedtuple's functional update
            replace_call(unit, node, func.value)
    else:
        anno.setanno(func, anno.CALLEE_KIND, "dynamic")


class _NextOrderCalls(A.NodeTransformer):
    """The runtime dispatch's calls in one function's own scope of emitted code transformed
    again, as calls of the function the dispatch would run (``next_order_call``)."""

    def __init__(self, unit: Unit, is_global, through=frozenset()):
        self.unit, self.is_global, self.through = unit, is_global, through

    def visit_FunctionDef(self, node):
        return node  # its own scope: in its turn

    def visit_Call(self, node):
        self.generic_visit(node)
        through = through_call(self.unit, node, self.is_global, self.through)
        return through or next_order_call(self.unit, node, self.is_global) or node


def _through_names(unit: Unit, fdef) -> set[str]:
    """The names ``fdef``'s own scope binds to ``callee_function(f)`` or ``method_function(obj,
    m)`` (Shift/Reset's call of a differentiated function value, or of a method of a
    differentiated object)."""
    finders = (unit.ctx.runtime("callee_function"), unit.ctx.runtime("method_function"))
    out = set()
    for node in own_nodes(fdef):
        if not (
            isinstance(node, A.Assign)
            and isinstance(node.targets[0], A.Name)
            and isinstance(node.value, A.Call)
            and isinstance(node.value.func, A.Name)
        ):
            continue
        found, obj = unit.lookup(node.value.func.id)
        if found and any(obj is f for f in finders):
            out.add(node.targets[0].id)
    return out


def through_call(unit: Unit, node, is_global, through):
    """``call_bp(f_fn, k, f, x)`` with ``f_fn`` one of ``through`` (``callee_function(f)``), in
    emitted code transformed again: where ``f_fn`` turns out to run ``f`` as it is (``AsIs``:
    ``f`` a closure, a function), ``(zeros_like(f),) + <call_bp(f, k, x) of the next order>``
    -- the callee's own backpropagator, as before Shift/Reset made the call so -- else the
    call of ``f_fn``'s (a struct's method). (A wrapper made by ``bp_of`` for ``AsIs`` would be a
    new function, transformed anew, for each closure: each run.) None if it is no such call."""
    func = node.func
    if not (isinstance(func, A.Name) and is_global(func.id) and len(node.args) >= 4):
        return None
    f, k, first, *rest = node.args
    if not (isinstance(f, A.Name) and f.id in through) or node.keywords:
        return None
    if not all(_repeatable(a) and not isinstance(a, A.Starred) for a in [first, *rest]):
        return None
    found, obj = unit.lookup(func.id)
    if not found or obj is not unit.ctx.runtime("call_bp"):
        return None
    callee = A.Call(func=_helper(unit, "callee_of", func), args=[A.deepcopy(f)], keywords=[])
    args = [A.deepcopy(a) for a in rest]
    plain = A.Call(func=A.deepcopy(func), args=[callee, A.deepcopy(k), *args], keywords=[])
    plain = next_order_call(unit, A.copy_location(plain, node), is_global)
    full = next_order_call(unit, node, is_global)
    if plain is None or full is None:
        return None
    zero = A.Call(func=_helper(unit, "zeros_like", func), args=[A.deepcopy(first)], keywords=[])
    head = A.Tuple(elts=[zero], ctx=A.Load())
    test = A.Call(func=_helper(unit, "is_as_is", func), args=[A.deepcopy(f)], keywords=[])
    body = A.BinOp(left=head, op=A.Add(), right=plain)
    return A.copy_location(A.IfExp(test=test, body=body, orelse=full), node)


def next_order_call(unit: Unit, node, is_global):
    """``call_bp(f, k, *args)`` -- the runtime dispatch of a call through a function value, in
    emitted code transformed again -- as a call of the function value the dispatch would run,
    which this transformation differentiates as it does any call through a value (the
    context's ``bp_of`` picks it, and is not differentiated); None if ``node`` is no such call.

    * ``call_bp(f, k, x)`` -> ``(bp_of(f, x)(k, x),)``: what the backpropagator returns, one
      adjoint, as the dispatch returns it, a tuple; ``call_bp(f, k, x, y)`` ->
      ``bp_of(f, x, y)(k, x, y)`` (a tuple both);
    * with ``*args`` or ``**kwargs`` spread (a decorator's wrapper), or no argument:
      ``bp_of_spread``, which returns the tuple whatever the number (``bp_of`` refuses keywords
      when there are some);
    * where an argument is not a name or a constant (they are read twice): ``bp_later(f, n)``,
      a function that makes the dispatch's call of its own parameters (rewritten so when it is
      transformed in turn).

    A keyword argument by name is left as it is: refused (Shift/Reset's ``refuse_dispatch``)."""
    func = node.func
    if not (isinstance(func, A.Name) and is_global(func.id)) or len(node.args) < 2:
        return None
    found, obj = unit.lookup(func.id)
    if not found or obj is not unit.ctx.runtime("call_bp"):
        return None
    if any(w.arg is not None for w in node.keywords):
        return None
    f, k, *args = node.args
    spread = bool(node.keywords) or any(isinstance(a, A.Starred) for a in args)
    if all(_repeatable(a) for a in args) and all(_repeatable(w.value) for w in node.keywords):
        helper = "bp_of" if args and not spread else "bp_of_spread"
        picked = A.Call(func=_helper(unit, helper, func), args=[f, *args], keywords=node.keywords)
        args, keywords = [A.deepcopy(a) for a in args], [A.deepcopy(w) for w in node.keywords]
    elif not spread:
        helper, n = "bp_later", A.copy_location(A.const(len(args)), node)
        picked = A.Call(func=_helper(unit, helper, func), args=[f, n], keywords=[])
        keywords = []
    else:
        return None
    picked = A.copy_location(picked, node)
    call = A.copy_location(A.Call(func=picked, args=[k, *args], keywords=keywords), node)
    if helper == "bp_of" and len(args) == 1:  # (bp_of's function returns the one adjoint)
        return A.copy_location(A.Tuple(elts=[call], ctx=A.Load()), node)
    return call


def _helper(unit: Unit, name: str, where):
    """A name for the context's runtime helper ``name``, at ``where``."""
    return A.copy_location(A.name(unit.inject(unit.ctx.runtime(name), name)), where)


def _repeatable(node) -> bool:
    """A name or a constant (``*name`` too): reading it twice reads the same value."""
    if isinstance(node, A.Starred):
        node = node.value
    return isinstance(node, (A.Name, A.Constant))


def _entry_stores(fdef) -> dict[str, int]:
    """How many statements of ``fdef``'s own scope store into an entry of each name (``y[i] =
    v``, ``y[i] += v``)."""
    out: dict[str, int] = {}
    for node in own_nodes(fdef):
        if isinstance(node, (A.Assign, A.AugAssign)):
            targets = node.targets if isinstance(node, A.Assign) else [node.target]
            for t in targets:
                if isinstance(t, A.Subscript) and isinstance(t.value, A.Name):
                    out[t.value.id] = out.get(t.value.id, 0) + 1
    return out


def composite_call(unit: Unit, node, obj) -> bool:
    """``np.cross(a, b)`` where the context computes ``np.cross`` from functions with rules
    (``Context.composite``): a call of that function instead, transformed like one of yours."""
    find = getattr(unit.ctx, "composite", None)
    fn = find(obj) if find is not None else None
    if fn is None and anno.getanno(node, anno.CONSUMED):  # (an iterator read once, right there)
        find = getattr(unit.ctx, "one_shot_composite", None)
        fn = find(obj) if find is not None else None
    if fn is None:
        return False
    name = unit.inject(fn, fn.__name__)
    func = A.copy_location(A.name(name), node.func)
    anno.setanno(func, anno.CALLEE, fn)
    anno.setanno(func, anno.CALLEE_KIND, "user")
    node.func = func
    return True


def struct_call(unit: Unit, node, cls) -> bool:
    """``P(a, b=c)`` with ``P`` a namedtuple or a dataclass whose ``__init__`` only stores its
    arguments (``struct_fields``): ``struct_of(P, (a, c), ("a", "b"))``, a call of the runtime's
    function with a rule -- each value's adjoint is its field's."""
    fields = struct_fields(cls)
    if fields is None or any(isinstance(a, A.Starred) for a in node.args):
        return False
    if len(node.args) > len(fields) or any(k.arg is None for k in node.keywords):
        return False
    names = fields[: len(node.args)] + [k.arg for k in node.keywords]
    if len(set(names)) != len(names) or not set(names) <= set(fields):
        return False  # (Python's TypeError, when it runs)
    fn = unit.ctx.runtime("struct_of")
    func = A.copy_location(A.name(unit.inject(fn, "struct_of")), node.func)
    anno.setanno(func, anno.CALLEE, fn)
    anno.setanno(func, anno.CALLEE_KIND, unit.ctx.classify(fn))
    values = A.Tuple(elts=[*node.args, *(k.value for k in node.keywords)], ctx=A.Load())
    owner = A.copy_location(A.name(unit.inject(cls, cls.__name__)), node.func)
    node.args = [owner, A.copy_location(values, node), A.copy_location(A.const(tuple(names)), node)]
    node.keywords = []
    node.func = func
    return True


def keyed_call(unit: Unit, node, obj) -> bool:
    """``max(xs, key=f)``, ``min(a, b, key=f)``: a call of the runtime's ``max_keyed(xs, f)``
    (``min_keyed``) -- the item picked, carrying its own adjoint -- and ``max(xs, default=d)``
    (``key=f`` too) one of ``extreme_or_default(xs, d, f, True)``, transformed like a function of
    yours.
    (``default=`` beside several items is Python's TypeError: left to the rule.)"""
    given = {k.arg: k.value for k in node.keywords}
    if not node.args or any(isinstance(a, A.Starred) for a in node.args):
        return False
    if set(given) == {"key"}:
        fn = unit.ctx.runtime("max_keyed" if obj is max else "min_keyed")
        items = node.args[0] if len(node.args) == 1 else A.Tuple(elts=node.args, ctx=A.Load())
        args = [A.copy_location(items, node), given["key"]]
    elif "default" in given and set(given) <= {"key", "default"} and len(node.args) == 1:
        fn = unit.ctx.runtime("extreme_or_default")
        key = given.get("key", A.const(None))
        args = [node.args[0], given["default"], key, A.const(obj is max)]
    else:
        return False
    func = A.copy_location(A.name(unit.inject(fn, fn.__name__)), node.func)
    anno.setanno(func, anno.CALLEE, fn)
    anno.setanno(func, anno.CALLEE_KIND, "user")
    node.args = args
    node.keywords = []
    node.func = func
    return True


def replace_call(unit: Unit, node, obj) -> bool:
    """``dataclasses.replace(p, w=a)`` and ``p._replace(w=a)`` (a namedtuple's; ``obj`` is ``p``),
    the fields by keyword: ``struct_replaced(p, (a,), ("w",))``, a call of the runtime's
    function with a rule -- each value's adjoint is its field's, ``p``'s the others'."""
    names = [k.arg for k in node.keywords]
    if not names or None in names or len(set(names)) != len(names):
        return False  # (nothing replaced, `**changes`, or Python's TypeError when it runs)
    fn = unit.ctx.runtime("struct_replaced")
    func = A.copy_location(A.name(unit.inject(fn, "struct_replaced")), node.func)
    anno.setanno(func, anno.CALLEE, fn)
    anno.setanno(func, anno.CALLEE_KIND, unit.ctx.classify(fn))
    values = A.copy_location(A.Tuple(elts=[k.value for k in node.keywords], ctx=A.Load()), node)
    node.args = [obj, values, A.copy_location(A.const(tuple(names)), node)]
    node.keywords = []
    node.func = func
    return True


def struct_fields(cls) -> list | None:
    """The fields a call of the class ``cls`` fills, in order, if it is a namedtuple or a
    dataclass whose ``__init__`` is the one ``dataclasses`` wrote (no ``__post_init__``, no
    ``InitVar``): what the call makes is then its arguments and nothing else. None otherwise."""
    if not isinstance(cls, type):
        return None
    if issubclass(cls, tuple) and hasattr(cls, "_fields") and hasattr(cls, "_make"):
        maker = next(c for c in cls.__mro__ if "__new__" in c.__dict__)
        return list(cls._fields) if "_fields" in maker.__dict__ else None
    if not dataclasses.is_dataclass(cls) or hasattr(cls, "__post_init__"):
        return None
    init = cls.__dict__.get("__init__") or getattr(cls, "__init__", None)
    code = getattr(init, "__code__", None)
    if code is None or code.co_filename != "<string>" or cls.__new__ is not object.__new__:
        return None  # an __init__ of the user's: it may compute from its arguments
    if not all(f.init for f in dataclasses.fields(cls)):
        return None  # (a field the call does not fill holds what its tangent would hold too)
    fields = [f.name for f in dataclasses.fields(cls)]
    try:
        params = list(inspect.signature(cls).parameters)
    except (TypeError, ValueError):
        return None
    return fields if params == fields else None


def field_names(cls) -> list | None:
    """The fields of the class ``cls`` if it is a namedtuple or a dataclass (whatever its
    ``__init__`` computes: ``struct_fields`` says when a call of it is its arguments), else None."""
    if not isinstance(cls, type):
        return None
    if issubclass(cls, tuple) and isinstance(getattr(cls, "_fields", None), tuple):
        return list(cls._fields)
    if dataclasses.is_dataclass(cls):
        return [f.name for f in dataclasses.fields(cls)]
    return None


def structs_in_reach(unit: Unit, wanted) -> set:
    """The fields ``wanted(name)`` picks of the struct classes (``field_names``) the function can
    reach: the globals of its module and its closure, then the globals of the modules of the
    functions of yours found there (``from mylib import make``) and of your modules imported
    (``import mylib``), module after module -- not the libraries installed, nor the standard
    library. A struct of such a class may come to the function from anywhere (a helper's result,
    a list), where no analysis follows it."""
    out: set = set()
    seen: set = set()
    spaces = [unit.closure_vars(), unit.env_globals]
    while spaces:
        space = spaces.pop()
        if id(space) in seen:
            continue
        seen.add(id(space))
        for value in list(space.values()):
            if isinstance(value, type):
                out.update(n for n in field_names(value) or () if wanted(n))
            elif isinstance(value, types.FunctionType) and yours(value.__module__):
                spaces.append(value.__globals__)
            elif isinstance(value, types.ModuleType) and yours(value.__name__):
                spaces.append(vars(value))
    return out


def yours(module) -> bool:
    """Is the module of that name the user's: neither installed (``site-packages``) nor of the
    standard library (nor cpsad)?"""
    mod = sys.modules.get(module) if isinstance(module, str) else None
    if mod is None or module.split(".")[0] in ("cpsad", "transforms"):
        return False
    path = getattr(mod, "__file__", None)
    if path is None:
        return module == "__main__"  # (a session's own)
    return not path.startswith(_LIBRARIES)


_LIBRARIES = tuple(
    {sysconfig.get_paths()[k] for k in ("stdlib", "platstdlib", "purelib", "platlib")}
)


def known_call(unit: Unit, node, obj) -> None:
    """A call of ``obj`` (a global ``annotate_global_call`` found) that is "unknown" as a
    function: a composite's, a struct's constructor, or a method of an object of yours -- the
    call rewritten so that it is differentiated as such (where it is one of them)."""
    if obj is dataclasses.replace and len(node.args) == 1:
        replace_call(unit, node, node.args[0])
    elif (obj is max or obj is min) and any(k.arg in ("key", "default") for k in node.keywords):
        keyed_call(unit, node, obj)
    elif obj is not _UNRESOLVED and anno.getanno(node.func, anno.CALLEE_KIND) == "unknown":
        if not composite_call(unit, node, obj) and not struct_call(unit, node, obj):
            _method_of_object(unit, node, obj)


def _method_of_object(unit: Unit, node, obj) -> None:
    """``layer.apply(x)`` or ``layer(x)`` with ``layer`` an object of a class of yours: the
    call of the method's function with the object first -- ``Layer.apply(layer, x)`` -- so
    the method is transformed like any function of yours."""
    fn = user_method(unit.ctx, obj)
    if fn is None:
        return
    if not inspect.ismethod(obj):
        receiver = node.func  # (the object called: its ``__call__``)
    elif isinstance(node.func, A.Attribute):
        receiver = node.func.value
    else:  # a name bound to a bound method (``m = layer.apply``): the object it is bound to
        owner = obj.__self__
        receiver = A.copy_location(A.name(unit.inject(owner, type(owner).__name__.lower())), node)
    name = unit.inject(fn, f"{type(getattr(obj, '__self__', obj)).__name__}_{fn.__name__}")
    func = A.copy_location(A.name(name), node.func)
    anno.setanno(func, anno.CALLEE, fn)
    anno.setanno(func, anno.CALLEE_KIND, "user")
    node.func = func
    node.args = [A.deepcopy(receiver), *node.args]


_UNRESOLVED = object()


class _SubscriptCalls(A.NodeTransformer):
    """``np.r_[...]`` and the like in one function's own scope as calls (``subscript_call``)."""

    def __init__(self, resolve: Resolve, is_global):
        self.resolve, self.is_global = resolve, is_global

    def visit_FunctionDef(self, node):
        return node  # its own scope: resolved in its turn

    def visit_Subscript(self, node):
        self.generic_visit(node)
        found = subscript_call(self.resolve.unit, node, self.is_global)
        if found is None:
            return node
        call, path, obj = found
        self.resolve.deps[path] = obj
        return call


def _subscripts_in(stmts) -> bool:
    """Is there a subscript in the statements' own scope (where ``_SubscriptCalls`` looks)?"""
    stack = list(stmts)
    Subscript, FunctionDef = A.Subscript, A.FunctionDef
    while stack:
        n = stack.pop()
        cls = n.__class__
        if cls is Subscript:
            return True
        if cls is not FunctionDef:
            push_children(n, stack)
    return False


def subscript_call(unit: Unit, node, is_global):
    """``(call, dotted name, object)`` for ``OBJ[index]`` -- ``OBJ`` a dotted global name (``is_global`` of
    its root) of an object whose subscript the context computes with a function ``f`` -- as
    ``f(index)``, or None. An index of constants alone stays a subscript: it has nothing to
    differentiate."""
    if not isinstance(node.ctx, A.Load):
        return None
    path = A.dotted(node.value)
    lookup = getattr(unit.ctx, "subscript_function", None)
    if path is None or lookup is None or not is_global(path.split(".")[0]):
        return None
    if not any(isinstance(n, A.Name) for n in A.walk(node.slice)):
        return None
    root, *rest = path.split(".")
    found, obj = unit.lookup(root)
    if not found:
        return None
    for part in rest:
        obj = getattr(obj, part, _UNRESOLVED)
        if obj is _UNRESOLVED:
            return None
    fn = lookup(obj)
    if fn is None:
        return None
    index = node.slice
    items = index.elts if isinstance(index, A.Tuple) else [index]
    items = [_slice_call(unit, e) if isinstance(e, A.Slice) else e for e in items]
    key = A.tuple_(items) if isinstance(index, A.Tuple) else items[0]
    func = A.name(unit.inject(fn, fn.__name__))
    anno.setanno(func, anno.CALLEE, fn)
    anno.setanno(func, anno.CALLEE_KIND, unit.ctx.classify(fn))
    return A.copy_location(A.call(func, [key]), node), path, obj


def _slice_call(unit: Unit, s):
    """``a:b:c`` as ``slice(a, b, c)``."""
    parts = [p if p is not None else A.const(None) for p in (s.lower, s.upper, s.step)]
    func = A.name(unit.inject(slice, "slice"))
    anno.setanno(func, anno.CALLEE, slice)
    anno.setanno(func, anno.CALLEE_KIND, unit.ctx.classify(slice))
    return A.copy_location(A.call(func, parts), s)


LRU_CACHE = type(functools.lru_cache(maxsize=None)(lambda: None))  # (functools.cache's too)


def annotate_global_call(unit: Unit, func, path: str):
    """Annotate a call's ``func`` (a dotted name not bound by the function) with the object it
    refers to and its kind; return the object (``_UNRESOLVED`` if it names nothing)."""
    root, *rest = path.split(".")
    found, obj = unit.lookup(root)
    if not found:
        anno.setanno(func, anno.CALLEE_KIND, "unknown")
        return _UNRESOLVED
    for part in rest:
        try:
            obj = getattr(obj, part)
        except AttributeError:
            anno.setanno(func, anno.CALLEE_KIND, "unknown")
            return _UNRESOLVED
    callee = obj
    wrapped = getattr(obj, "__wrapped__", None)
    if isinstance(obj, LRU_CACHE) and isinstance(wrapped, types.FunctionType):
        callee = wrapped  # (functools.lru_cache, functools.cache: what the function returns)
    anno.setanno(func, anno.CALLEE, callee)
    anno.setanno(func, anno.CALLEE_KIND, unit.ctx.classify(callee))
    return obj


def user_method(ctx, obj):
    """The function of yours a bound method or a callable object runs, or None."""
    if inspect.ismethod(obj):
        fn = obj.__func__
    elif not isinstance(obj, (type, types.FunctionType, types.BuiltinFunctionType)):
        fn = type(obj).__call__ if callable(obj) else None
    else:
        return None
    if isinstance(fn, types.FunctionType) and ctx.classify(fn) == "user":
        return fn
    return None


def builtin_method_rule(ctx, obj):
    """For a bound method of compiled code (``c.dot`` of an array, numpy's or a duck array's;
    ``d.get`` of a dict) named as a method with a rule (``ctx.method_rule``), that rule, which
    takes the object first; else None -- a module's function (``np.sum``: ``__self__`` is the
    module), a method of yours, a method no rule knows."""
    if not isinstance(obj, types.BuiltinMethodType):
        return None
    receiver = getattr(obj, "__self__", None)
    if receiver is None or isinstance(receiver, types.ModuleType):
        return None
    return ctx.method_rule(obj.__name__)


def _stored_after_defs(fdef) -> dict[int, set[str]]:
    """For each function defined in ``fdef``'s own scope (by ``id``): the names ``fdef``
    assigns after that definition, in the order the statements are written."""
    out: dict[int, set[str]] = {}
    defs: list = []

    def visit(stmts):
        for st in stmts:
            if isinstance(st, A.FunctionDef):
                out[id(st)] = set()
                defs.append(st)
                continue
            stored = {
                n.id for n in walk_own(st) if isinstance(n, A.Name) and isinstance(n.ctx, A.Store)
            }
            for d in defs:
                out[id(d)] |= stored
            if isinstance(st, A.If):
                visit(st.body)
                visit(st.orelse)

    visit(fdef.body)
    visit = (
        None  # (it calls itself: a reference cycle, which kept the tree alive until a collection)
    )
    return out


def _describe(obj) -> str:
    mod = getattr(obj, "__module__", None) or type(obj).__module__
    qn = getattr(obj, "__qualname__", None) or getattr(obj, "__name__", None) or type(obj).__name__
    return f"{mod}.{qn}" if mod else qn


def seeded(unit: Unit, param: str) -> None:
    """The parameter ``param`` is given the runtime's ``scalar_seed`` (grad's seed continuation,
    kind ``SEED``): each read of it, here and in nested functions that do not bind the name, reads
    that function instead -- so the continuation a backpropagator calls is a primitive called by
    name, and the code transformed again calls no function value (a derivative of order three is
    a transformation of a transformation of a transformation). Left as it is if the function
    assigns it."""
    root = unit.tree
    if param in local_names(root) - set(A.arg_names(root.args)) or param not in set(
        A.arg_names(root.args)
    ):
        return
    seed = unit.inject(unit.ctx.runtime("scalar_seed"), "scalar_seed")
    stack = list(root.body)
    while stack:
        node = stack.pop()
        if isinstance(node, A.FunctionDef):
            stack.extend(node.decorator_list + node.args.defaults)
            stack.extend(d for d in node.args.kw_defaults if d is not None)
            if param not in local_names(node):
                stack.extend(node.body)
            continue
        if isinstance(node, A.Name) and node.id == param:
            if not isinstance(node.ctx, A.Load):
                raise AssertionError("a store of a parameter that is no local")  # pragma: no cover
            node.id = seed
            continue
        stack.extend(A.iter_child_nodes(node))
