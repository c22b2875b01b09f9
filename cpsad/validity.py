"""What a transformation was made from, and whether it still is (DESIGN.md 8, the cache contract).

A transformation is a function of the code object it was made from, the kinds of the arguments
(both part of its cache key), the rule table, and everything the pipeline read of the world:

* every name it resolved, as the function sees it -- a closure cell, a global of its module, a
  builtin, in Python's order -- and along attributes (``np.sin``, ``H.helper``): ``unit.deps``;
* everything else it read (``unit.external``): an inlined helper's code, defaults and globals.

``Needs`` keeps those *relative to the function*, so that a new function object of the same code
-- a closure made on every step of a training loop -- is checked against them and reuses the
transformation. ``Needs.guards(fn)`` turns them into identity checks on the very cells and dicts
of one function object, run on every call (microseconds): a module reloaded, a helper rebound or
monkeypatched, ``np.sin`` patched, a helper's ``__code__`` swapped (what IPython's autoreload
does), a rule registered -- each makes the check fail, and the function is transformed again.

Objects are held by weak reference wherever they allow one, so a cached transformation keeps
alive nothing of the user's that the user dropped (what allows none -- a builtin, a constant,
a tuple of constant defaults -- holds no user code).

>>> import math
>>> def f(x):
...     return math.sin(x)
>>> needs = Needs({"math.sin": math.sin}, [])
>>> needs.holds_for(f) and all_hold(needs.guards(f))
True
"""

from __future__ import annotations

import builtins
import sys
import types
import weakref

from cpsad.rules import core
from cpsad.transforms.unit import ABSENT


class _Dead:
    def __repr__(self) -> str:
        return "<an object that no longer exists>"


DEAD = _Dead()  # what a weak reference to a collected object gives: equal to nothing


WEAK = (types.FunctionType, types.ModuleType, type, types.CodeType)


def hold(obj):
    """A function returning ``obj``: by weak reference for a function, a module, a class or a
    code object (what lives as long as the user's program does, and may refer back to the
    function a cache is keyed by); a bound method by weak references to its function and object
    (a new one is made at every attribute lookup: ``same`` compares those); anything else --
    a builtin, a constant, a value made while transforming -- by a strong reference."""
    if isinstance(obj, types.MethodType):
        func, self = hold(obj.__func__), hold(obj.__self__)
        return lambda: _method(func(), self())
    if not isinstance(obj, WEAK):
        return lambda: obj
    ref = weakref.ref(obj)

    def get():
        o = ref()
        return DEAD if o is None else o

    return get


def _method(func, self):
    if func is DEAD or self is DEAD:
        return DEAD
    return types.MethodType(func, self)


def same(a, b) -> bool:
    """Is ``a`` the object ``b`` (a bound method: of the same function and object)?"""
    if a is b:
        return a is not DEAD
    return (
        type(a) is types.MethodType
        and type(b) is types.MethodType
        and a.__func__ is b.__func__
        and a.__self__ is b.__self__
    )


def _follow(obj, attrs):
    for a in attrs:
        try:
            obj = getattr(obj, a)
        except Exception:  # noqa: BLE001 - a property that raises: not the object it was
            return ABSENT
    return obj


def _step(obj, step):
    kind, key = step
    if kind == "item":
        try:
            return obj.get(key, ABSENT)
        except Exception:  # noqa: BLE001
            return ABSENT
    return _follow(obj, (key,))


def _builtins_of(g: dict) -> dict:
    b = g.get("__builtins__", builtins)
    return b if isinstance(b, dict) else vars(b)


def lookup(fn, name: str):
    """What ``name`` means in ``fn``'s body (not assigned there): a closure cell's contents, a
    global, a builtin -- or ``ABSENT``."""
    code = fn.__code__
    if name in code.co_freevars:
        try:
            return fn.__closure__[code.co_freevars.index(name)].cell_contents
        except ValueError:  # an empty cell
            return ABSENT
    g = fn.__globals__
    if name in g:
        return g[name]
    return _builtins_of(g).get(name, ABSENT)


class Needs:
    """What one transformation read, relative to the function it was made from."""

    __slots__ = ("names", "external", "rules")

    def __init__(self, deps: dict, external: list):
        # ``(root, attributes, expected)``: a dotted name the function resolved
        self.names = tuple(
            (path.split(".")[0], tuple(path.split(".")[1:]), hold(obj))
            for path, obj in deps.items()
        )
        # ``(holder, steps, expected)``: ``holder`` then ``("attr", a)`` / ``("item", k)`` steps
        ext = []
        for holder, key, obj in external:
            steps = (("item", key),) if isinstance(holder, dict) else (("attr", key),)
            if isinstance(holder, dict) and holder.get("__name__") is not None:
                # a module's globals (no weak reference to a dict): through the module
                module = _module_of(holder)
                if module is not None:
                    holder, steps = module, (("attr", "__dict__"), ("item", key))
            ext.append((hold(holder), steps, hold(obj)))
        self.external = tuple(ext)
        self.rules = core.VERSION[0]

    def holds_for(self, fn) -> bool:
        """Is every object still what the transformation read, seen from ``fn`` (a function of
        the code it was made from: the same one, or another closure of it)?"""
        if self.rules != core.VERSION[0]:
            return False
        for root, attrs, want in self.names:
            got = _follow(lookup(fn, root), attrs) if attrs else lookup(fn, root)
            expected = want()
            if got is not expected and not same(got, expected):
                return False
        for holder, steps, want in self.external:
            obj = holder()
            for step in steps:
                obj = ABSENT if obj is DEAD or obj is ABSENT else _step(obj, step)
            expected = want()
            if obj is not expected and not same(obj, expected):
                return False
        return True

    def guards(self, fn) -> tuple:
        """The same checks bound to ``fn``'s own cells and globals: ``(get, expected)`` pairs,
        each ``get()`` what is there now (``all_hold`` runs them)."""
        out = [(lambda: core.VERSION[0], hold(self.rules))]
        code, g = fn.__code__, fn.__globals__
        for root, attrs, want in self.names:
            if root in code.co_freevars:
                cell = fn.__closure__[code.co_freevars.index(root)]
                out.append((_cell_getter(cell, attrs), want))
            else:
                out.append((_global_getter(g, root, attrs), want))
        for holder, steps, want in self.external:
            out.append((_external_getter(holder, steps), want))
        return tuple(out)


def _module_of(g: dict):
    m = sys.modules.get(g.get("__name__"))
    return m if m is not None and getattr(m, "__dict__", None) is g else None


def _cell_getter(cell, attrs):
    def get():
        try:
            obj = cell.cell_contents
        except ValueError:
            return ABSENT
        return _follow(obj, attrs)

    return get


def _global_getter(g: dict, name: str, attrs):
    b = _builtins_of(g)

    def get():
        obj = g.get(name, ABSENT)
        if obj is ABSENT:
            obj = b.get(name, ABSENT)
        return _follow(obj, attrs)

    return get


def _external_getter(holder, steps):
    def get():
        obj = holder()
        for step in steps:
            if obj is DEAD or obj is ABSENT:
                return ABSENT
            obj = _step(obj, step)
        return obj

    return get


def all_hold(guards) -> bool:
    """Does every ``(get, expected)`` guard still find what it expects?"""
    for get, want in guards:
        got = get()
        if got is not want() and not same(got, want()):
            return False
    return True


def function_guard(fn, code: types.CodeType, bp: types.FunctionType):
    """The function object itself: still of ``code``, with the defaults the linked ``bp`` was
    given."""
    ref = weakref.ref(fn)

    def get():
        f = ref()
        if f is None or f.__code__ is not code:
            return ABSENT
        if f.__defaults__ is not bp.__defaults__ or f.__kwdefaults__ is not bp.__kwdefaults__:
            return ABSENT
        return code

    return (get, lambda: code)
