"""After Callees (staged code), the backpropagator of each user function it calls is defined in it.

The emitted code calls a user function's backpropagator by name, ``scale_bp(after_scale_L11, x,
2.0)``: a function of another module, linked at run time, given the rest of the caller as its
continuation. Numba compiles no call of a Python function value, and a continuation passed to
one is a closure. So for ``cpsad.jit`` the callee's own staged code -- its transformation, made
here up to this stage, with its own callees already in it -- is defined in the caller, a copy
just before each statement that calls it::

    def f_bp(k, x, y):                           def f_bp(k, x, y):
        ...                                          ...
        x_bar = scale_bp(after_scale_L11,   ->       def scale_bp(k, a, c):
                         x, 2.0)                         ...the callee's backpropagator...
                                                     x_bar = scale_bp(after_scale_L11, x, 2.0)

The program computes what it did: the copy is the code the call ran, and reads the same globals
-- a callee of another module reads its modules and functions under names the caller gives them
(``Unit.inject``); one that reads data of its module, or a name the caller binds, or a closure's
cells, is not copied. Flatten then inlines it where it is called, the continuation
with it; Defunctionalize first rewrites the loops in it and the loop around the call. The
helpers the callee's code calls (``unbroadcast``, ``acc``) get names in the caller
(``Unit.inject``) and are renamed where the names differ.

A callee left as it was -- one of those, recursion (a callee that calls, at any
depth, a function being copied) -- keeps its call, and Flatten says why Numba cannot compile it.
"""

from __future__ import annotations

import inspect
import threading
import types

from . import astlib as A
from .joins import statement_lists
from .scoping import free_names, rename_free
from .unit import Callee, Unit, is_itself

_COPYING = threading.local()  # the functions whose staged code is being made (recursion)


class Callees:
    name = "callees"
    invariant = "staged: each user function it calls has its backpropagator defined in it"

    def run(self, unit: Unit) -> None:
        if getattr(_COPYING, "root", None) is None:  # (the function being staged, not a callee)
            _COPYING.root = (unit.fn, unit.active, unit.mode, unit.bp_name)
            try:
                self._run(unit)
            finally:
                _COPYING.root = None
        else:
            self._run(unit)

    def _run(self, unit: Unit) -> None:
        self.unit = unit
        copied = []
        made: dict[str, A.FunctionDef] = {}  # the callee's name here -> its staged code
        fn, active, mode, root_name = _COPYING.root
        for name, c in sorted(unit.callees.items()):
            if (
                unit.fn is not fn
                and is_itself(c, fn, active, mode)
                and root_name not in _bound(unit.tree)
            ):
                # (mutual recursion: a call of the function being staged, which this code is
                # copied into -- a call of itself there, by its name)
                rename_free(unit.tree, {name: root_name})
                del unit.callees[name]
                continue
            tree = self.staged(c)
            if isinstance(tree, str):
                unit.not_copied[name] = tree
            else:
                made[name] = tree
        if made:
            bound = _bound(unit.tree)
            if unit.fn is fn:  # (a callee's call of the root, here: a call of itself)
                bound.discard(root_name)
            for name, tree in list(made.items()):
                hidden = sorted(free_names(tree) & bound)
                if hidden:  # (the caller's own name would hide a global)
                    unit.not_copied[name] = f"it reads `{hidden[0]}`, a name this function binds"
                    del made[name]
        for f in A.function_defs(unit.tree):
            for block in statement_lists(f):
                at = 0
                while at < len(block):
                    calls = _called(block[at], made)
                    for call in calls:
                        copy = A.deepcopy(made[call.func.id])
                        copy.name = call.func.id = unit.namer.fresh(call.func.id)
                        block.insert(at, A.copy_location(copy, block[at]))
                        at += 1
                        copied.append(copy.name)
                    at += 1
        for name in made:
            del unit.callees[name]
        unit.notes[self.name] = [", ".join(copied) or "nothing to copy"]

    def staged(self, c: Callee):
        """The callee's staged code, its names the caller's -- or why it is not copied."""
        unit = self.unit
        fn = c.fn
        code = getattr(fn, "__code__", None)
        if code is None:
            return "it is not a Python function"
        if code.co_freevars:
            return "it reads variables of a function around it (a closure)"
        if code.co_flags & (inspect.CO_VARARGS | inspect.CO_VARKEYWORDS):
            return "it takes `*args` or `**kwargs`"
        copying = getattr(_COPYING, "functions", None)
        if copying is None:
            copying = _COPYING.functions = []
        if fn in copying or fn is unit.fn:
            return "recursion"
        copying.append(fn)
        try:
            sub = unit.ctx.runtime("staged_callee")(fn, c.active, c.kinds, c.mode)
        finally:
            copying.pop()
        if isinstance(sub, str):
            return sub
        if any(isinstance(n, A.Call) and A.is_name(n.func, sub.bp_name) for n in A.walk(sub.tree)):
            return "recursion (it calls itself)"  # (a copy could not call itself: compiled apart)
        if sub.callees or any(isinstance(o, Callee) for o in sub.injected.values()):
            why = "; ".join(f"{n}: {w}" for n, w in sorted(sub.not_copied.items()))
            return "a function it calls is not compiled in" + (f" ({why})" if why else "")
        tree = sub.tree
        renames = {}
        for name, obj in sub.injected.items():
            new = unit.inject(obj, name)
            if new != name:
                renames[name] = new
        if fn.__globals__ is not unit.env_globals:  # another module's: what its names are there
            for name in sorted(free_names(tree) - set(sub.injected)):
                found, obj = sub.lookup(name)
                if not found or not (isinstance(obj, types.ModuleType) or callable(obj)):
                    # (data of its module: not a parameter of the caller's compiled code)
                    return f"it reads `{name}` of its module"
                new = unit.inject(obj, name)
                if new != name:
                    renames[name] = new
        rename_free(tree, renames)
        return tree


def _called(stmt, made: dict) -> list:
    """The calls of the functions ``made`` in ``stmt`` itself: in its test where it is an ``if``
    or a ``while`` (the statements in its blocks are in lists of their own), none in a ``def``."""
    if isinstance(stmt, A.FunctionDef):
        return []
    nodes = A.walk(stmt.test) if isinstance(stmt, (A.If, A.While)) else A.walk(stmt)
    return [
        n
        for n in nodes
        if isinstance(n, A.Call) and isinstance(n.func, A.Name) and n.func.id in made
    ]


def _bound(tree) -> set[str]:
    """Every name ``tree`` or a function in it binds: parameters, assignments, definitions."""
    out = set()
    for n in A.walk(tree):
        if isinstance(n, A.Name) and not isinstance(n.ctx, A.Load):
            out.add(n.id)
        elif isinstance(n, A.FunctionDef):
            out.add(n.name)
            out.update(A.arg_names(n.args))
    return out
