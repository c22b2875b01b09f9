"""What a call of a user function outside the unit may do to what it is given, judged from its
source: change it in place (``may_change_arguments``, ``changed_parameters``) or keep it in state
outside the call (``may_keep_arguments``).

The invariant: an answer errs only towards "may" -- a function whose source cannot be read, a
function value it calls, a change through a name other than a parameter's, all count as a
change of anything. Answers are kept per function while it runs the same code object (a reload
or a swapped ``__code__`` asks again) and never keep the function alive.
"""

from __future__ import annotations

import types
import weakref

from .. import astlib as A
from ..parse import checked_tree
from .tables import MUTATING_METHODS

# function -> (its code, may it change an argument in place): held weakly, asked again when the
# code is replaced (a reload, ``__code__`` swapped)
_MUTATES = weakref.WeakKeyDictionary()


def may_change_arguments(fn, ctx) -> bool:
    """May calling the user function ``fn`` change a value it was given in place? Judged from
    its source: an augmented assignment, a store into an item or an attribute, a method that
    changes its object, or a call of a function value or of a user function that may (a
    cycle counts as may not: what it does is seen in its other statements)."""
    if getattr(fn, "__cpsad_composite__", None) is not None:
        return False  # a composite (``Context.composite``): numpy's function, which changes nothing
    return _by_code(_MUTATES, fn, lambda: _mutates(fn, ctx), False)


def _by_code(cache, fn, answer, looking=None):
    """``answer()`` for the function ``fn``, kept in ``cache`` (a ``WeakKeyDictionary``: the
    user's function is not kept alive) while ``fn`` runs the same code object; ``looking`` is
    the answer while it is worked out (a recursive call's)."""
    code = getattr(fn, "__code__", None)
    try:
        known = cache.get(fn)
    except TypeError:  # (not weakly referable)
        return answer()
    if known is None or known[0] is not code:
        cache[fn] = (code, looking)
        known = cache[fn] = (code, answer())
    return known[1]


def _mutates(fn, ctx) -> bool:
    tree = checked_tree(fn)  # None where unreadable, or the file changed
    if tree is None:
        return True
    params = set()
    for node in A.walk(tree):
        if isinstance(node, (A.FunctionDef, A.Lambda)):
            params |= set(A.arg_names(node.args))
    for node in A.walk(tree):
        if isinstance(node, A.AugAssign):
            return True
        if isinstance(node, (A.Subscript, A.Attribute)) and isinstance(node.ctx, A.Store):
            return True
        if isinstance(node, A.Call):
            f = node.func
            if isinstance(f, A.Attribute) and f.attr in MUTATING_METHODS:
                return True
            if isinstance(f, A.Name) and (f.id in params or _call_changes(fn, f.id, ctx)):
                return True  # (a function value it was given: anything)
    return False


def _call_changes(fn, name: str, ctx) -> bool:
    """May a call of ``name`` (not a parameter) in ``fn``'s body change what it is given: a
    function value the closure holds (unknown: anything), or a user function that may?"""
    g = _named(fn, name)
    if g is _CELL:
        return True
    return (
        isinstance(g, types.FunctionType)
        and ctx.classify(g) == "user"
        and (may_change_arguments(g, ctx))
    )


_DISPLAYS = (A.List, A.Dict, A.Set, A.ListComp, A.DictComp, A.SetComp)
VALUE_CALLS = "<calls a function value it is given>"  # in ``changed_parameters``


# function -> (its code, ``changed_parameters``' answer): a cache that lets the function go and
# is asked again when its code is replaced (a reload)
_CHANGED = weakref.WeakKeyDictionary()


def changed_parameters(fn, ctx):
    """The parameters of the user function ``fn`` that a call may change in place -- those it
    updates, stores into or calls a changing method of by their own name -- or None for any
    of them (a change through another name, a function value, a user function that may change
    what it is given; ``may_change_arguments``). An empty set: it changes none. ``VALUE_CALLS``
    among them: it calls a function value it was given, which may change anything it reaches
    (the caller knows which functions it gives)."""
    return _by_code(_CHANGED, fn, lambda: _changed_parameters(fn, ctx))


def _changed_parameters(fn, ctx):
    if not may_change_arguments(fn, ctx):
        return frozenset()
    tree = checked_tree(fn)  # None where unreadable, or the file changed
    if tree is None:
        return None
    defs = [n for n in tree.body if isinstance(n, A.FunctionDef)]
    if len(defs) != 1 or any(
        isinstance(n, (A.FunctionDef, A.Lambda)) and n is not defs[0] for n in A.walk(defs[0])
    ):
        return None
    params = set(A.arg_names(defs[0].args))
    # names bound only to new containers (``out = []``): changing them changes nothing given
    bound: dict = {}
    for node in A.walk(defs[0]):
        if isinstance(node, A.Assign):
            for t in node.targets:
                for n in A.walk(t):
                    if isinstance(n, A.Name) and isinstance(n.ctx, A.Store):
                        fresh = t is n and isinstance(node.value, _DISPLAYS)
                        bound[n.id] = bound.get(n.id, True) and fresh
        elif isinstance(node, (A.For, A.With, A.AugAssign, A.NamedExpr, A.comprehension)):
            for n in A.walk(getattr(node, "target", None) or node):
                if isinstance(n, A.Name) and isinstance(n.ctx, A.Store):
                    bound[n.id] = False
    own = {n for n, fresh in bound.items() if fresh and n not in params}
    changed = set()
    for node in A.walk(defs[0]):
        if isinstance(node, A.AugAssign):
            target = node.target
        elif isinstance(node, (A.Subscript, A.Attribute)) and isinstance(node.ctx, A.Store):
            target = node.value
        elif (
            isinstance(node, A.Call)
            and isinstance(node.func, A.Attribute)
            and node.func.attr in MUTATING_METHODS
        ):
            target = node.func.value
        elif isinstance(node, A.Call):
            if isinstance(node.func, A.Name) and node.func.id in params:
                # a function value it was given: what that changes (``VALUE_CALLS``)
                changed.add(VALUE_CALLS)
            elif isinstance(node.func, A.Name) and _call_changes(fn, node.func.id, ctx):
                return None  # what the callee changes of what it is given is not followed
            continue
        else:
            continue
        while isinstance(target, (A.Subscript, A.Attribute)):
            target = target.value
        if isinstance(target, A.Name) and target.id in own:
            continue
        if not (isinstance(target, A.Name) and target.id in params):
            return None  # through another name: which parameter it holds is not known here
        changed.add(target.id)
    return frozenset(changed)


_CELL = object()  # ``_named``: a closure's variable that holds no user function


def _named(fn, name: str):
    """What ``name`` means in the body of ``fn``: the function a closure cell holds (a
    decorator's wrapper calling the ``fn`` it wraps), else ``_CELL`` for a cell holding anything
    else; a global otherwise (None where there is none)."""
    code = getattr(fn, "__code__", None)
    if code is not None and name in code.co_freevars:
        cell = (fn.__closure__ or ())[code.co_freevars.index(name)]
        try:
            value = cell.cell_contents
        except ValueError:  # an empty cell
            return _CELL
        return value if isinstance(value, types.FunctionType) else _CELL
    return getattr(fn, "__globals__", {}).get(name)


# function -> (its code, may it keep an argument in state outside it), as ``_MUTATES``
_KEEPS = weakref.WeakKeyDictionary()


def may_keep_arguments(fn, ctx) -> bool:
    """May calling the user function ``fn`` store what it was given into state outside it -- a
    method that changes, or a store into an item or attribute of, a name it does not bind (a
    global, an enclosing function's variable) -- or call a function value or a user function
    that may? Judged from its source, as ``may_change_arguments``."""
    return _by_code(_KEEPS, fn, lambda: _keeps(fn, ctx), False)


def _keeps(fn, ctx) -> bool:
    tree = checked_tree(fn)  # None where unreadable, or the file changed
    if tree is None:
        return True
    own = set()
    for node in A.walk(tree):
        if isinstance(node, (A.FunctionDef, A.Lambda)):
            own |= set(A.arg_names(node.args))
        if isinstance(node, A.Name) and isinstance(node.ctx, A.Store):
            own.add(node.id)
    for node in A.walk(tree):
        base = None
        if isinstance(node, (A.Subscript, A.Attribute)) and isinstance(node.ctx, A.Store):
            base = node.value
        elif isinstance(node, A.Call):
            f = node.func
            if isinstance(f, A.Attribute) and f.attr in MUTATING_METHODS:
                base = f.value
            elif isinstance(f, A.Name):
                if f.id in own:
                    return True  # a function value: anything
                g = _named(fn, f.id)
                if g is _CELL:
                    return True
                if isinstance(g, types.FunctionType) and ctx.classify(g) == "user":
                    if may_keep_arguments(g, ctx):
                        return True
        while isinstance(base, (A.Subscript, A.Attribute)):
            base = base.value
        if isinstance(base, A.Name) and base.id not in own:
            return True
    return False
