"""Release: an array is let go after its last use, as a hand-written backward pass lets go of
its temporaries.

A backpropagator keeps every forward value it names until it returns: the backward part reads
them in reverse order, so the first intermediates of the forward pass, and the adjoints already
used, stay alive while the rest runs. A hand-written pass holds far fewer at a time (its
temporaries die in the expression that made them, it updates one adjoint in place). The extra
memory costs twice: the allocator cannot hand the freed, cache-warm blocks to the next
allocation, and a process whose heap was given back to the system faults every new page in again
(measured on the CNN benchmark: 919 page faults a call against the hand-written pass's 581, and
about 0.3 ms of its 1.1 ms).

The pass adds ``del a, b`` after the statement of a function's body that mentions ``a`` and ``b``
last. Only where that is safe and may matter:

* a name the function assigns only in statements of its own top level (so it is bound after
  them, whatever branches ran) -- not a parameter, nothing declared ``nonlocal`` or ``global``,
  nothing a nested function mentions (a closure reads it when it runs);
* that may hold an array (``Kinds``: not surely a number or numpy scalar) -- a float's ``del``
  frees nothing;
* not where only a ``return`` follows (returning releases everything).

Invariant: in every function, a local that may hold an array, assigned only at the function's top
level and mentioned by no nested function, is deleted after the top-level statement that
mentions it last, unless only a ``return`` follows it.
"""

from __future__ import annotations

import re

from . import anno
from . import astlib as A
from .kinds import is_scalar
from .scoping import walk_own
from .unit import Unit

_VERSION = re.compile(r"_\d+$")


class Release:
    name = "release"
    invariant = "each local array is deleted after the top-level statement that mentions it last"

    def __init__(self):
        self.kinds: dict = {}  # name -> what it may hold, in any function Kinds saw
        self.mentions: dict[int, set] = {}  # id(function) -> every name it (or one in it) mentions
        self.functions: list = []  # function bodies still to release in
        self.split: set[str] = set()  # the names of split_ties in the emitted module
        self.picked = False  # a split_ties became a pick_into

    def run(self, unit: Unit) -> None:
        self.unit = unit
        split = unit.ctx.runtime("split_ties")
        self.split = {n for n, o in unit.injected.items() if o is split}
        self.picked = False  # a split_ties became a pick_into
        self.kinds = {}
        for view in unit.kinds.values():
            for n, k in view.items():
                self.kinds[n] = self.kinds.get(n, frozenset()) | k
        self.mentions = {}
        self.functions = [unit.tree]  # and those nested in it, met as they are walked
        while self.functions:
            f = self.functions.pop()
            f.body = self.function(f)
        if self.picked:
            used = A.names_in(unit.tree)
            for n in self.split - used:
                del unit.injected[n]

    def mentioned(self, fn) -> set:
        """The names the nested function (or lambda, or class) ``fn`` mentions anywhere: each
        function is walked once, however deep it is nested."""
        out = self.mentions.get(id(fn))
        if out is None:
            out = self.mentions[id(fn)] = set()
            inner: list = []
            for n in _scope_names(fn, inner, top=True):
                out.add(n.id)
            for g in inner:
                out |= self.mentioned(g)
                if not isinstance(g, A.Lambda):
                    out.add(g.name)
        return out

    def maybe_array(self, name: str) -> bool:
        """Not surely a number or numpy scalar: an adjoint has its primal's kind, a version
        (``x_3``) its user name's; a name Kinds never saw may be anything."""
        primal = self.unit.namer.primal(name)
        for n in (name, primal, _VERSION.sub("", primal or name)):
            if n is not None and n in self.kinds:
                return not is_scalar(self.kinds[n])
        return True

    def function(self, f) -> list:
        body = f.body
        kept = set(A.arg_names(f.args))  # parameters, declared names, what closures mention
        last: dict[str, int] = {}  # name -> the top-level statement that mentions it last
        first: dict[str, int] = {}  # name -> the top-level statement that assigns it first
        below: set[str] = set()  # names bound other than by a top-level assignment
        for i, s in enumerate(body):
            if isinstance(s, (A.Nonlocal, A.Global)):
                kept.update(s.names)
                continue
            if _borrowed(s, kept):  # an entry of a parameter: deleting it frees nothing
                kept.update(n.id for t in s.targets for n in A.walk(t) if isinstance(n, A.Name))
            own = set()
            for t in _targets(s):
                # (most targets are one name: walked only where they are not, for speed)
                for n in (t,) if t.__class__ is A.Name else A.walk(t):
                    own.add(id(n))
                    # (``d["c"] = v`` binds nothing: ``d`` may be a variable of the function
                    # around this one, which a ``del`` here would make local)
                    if isinstance(n, A.Name) and isinstance(n.ctx, A.Store):
                        first.setdefault(n.id, i)
            inner: list = []
            for n in _scope_names(s, inner):
                last[n.id] = i
                if n.ctx.__class__ is not A.Load and id(n) not in own:  # (most are loads)
                    below.add(n.id)
            for g in inner:  # a closure reads what it mentions whenever it runs
                kept |= self.mentioned(g)
                self.functions += [x for x in _defs(g) if isinstance(x, A.FunctionDef)]
        returning = len(body)  # from here on only a return (or pass): returning releases all
        while returning and isinstance(body[returning - 1], (A.Return, A.Pass)):
            returning -= 1
        # the last of the statements of each one's user line that follow it: one del a line
        line_end = list(range(len(body)))
        for i in range(len(body) - 2, -1, -1):
            if _line(body[i + 1]) == _line(body[i]):
                line_end[i] = line_end[i + 1]
        after: dict[int, list[str]] = {}
        for name, i in last.items():
            if name in kept or name in below or name not in first or not self.maybe_array(name):
                continue
            if first[name] < i and self.split:
                self.pick_in_place(body[i], name)
            i = line_end[i]  # at the end of the statements of the user's line
            if i + 1 >= returning:
                continue  # returning releases it
            after.setdefault(i, []).append(name)
        if not after:
            return body
        out = []
        for i, s in enumerate(body):
            out.append(s)
            if i in after:
                names = sorted(after[i], key=lambda n: (first[n], n))
                out.append(
                    anno.setanno(A.copy_location(A.delete(names), s), anno.BOOKKEEPING, True)
                )
        return out

    def pick_in_place(self, s, name: str) -> None:
        """``split_ties(g * keep, g, x, y)`` (the adjoint of ``np.maximum(z, 0.0)``'s operand)
        in the top-level statement that reads ``g`` last: ``pick_into(g, keep, x, y)``, which
        multiplies ``g`` in place where nothing else holds it. Only in a simple statement (no
        loop runs it again) whose two mentions of ``g`` are these."""
        if not isinstance(s, (A.Assign, A.Expr, A.Return)):
            return
        mentions = [n for n in walk_own(s) if isinstance(n, A.Name) and n.id == name]
        if len(mentions) != 2:
            return
        for call in walk_own(s):
            if (
                isinstance(call, A.Call)
                and isinstance(call.func, A.Name)
                and call.func.id in self.split
                and len(call.args) == 4
                and not call.keywords
                and isinstance(call.args[0], A.BinOp)
                and isinstance(call.args[0].op, A.Mult)
                and A.is_name(call.args[0].left, name)
                and A.is_name(call.args[1], name)
            ):
                pick = self.unit.inject(self.unit.ctx.runtime("pick_into"), "pick_into")
                call.func = A.name(pick)
                call.args = [call.args[0].left, call.args[0].right, *call.args[2:]]
                self.picked = True
                return


def _scope_names(node, inner: list, top: bool = False) -> list:
    """The ``Name`` nodes of ``node``'s scope (``scoping.walk_own``; with ``top``, ``node`` is a
    function, lambda or class and its body is walked): the functions, lambdas and classes defined
    there go to ``inner``, in the order met. (One loop, not ``walk_own``'s generator of every
    node, for speed: the pass looks at each name of every top-level statement.)"""
    if not top:
        roots = [node]
    elif isinstance(node, A.Lambda):
        roots = [node.body]
    else:
        roots = node.body
    out = []
    # walked in ``walk_own``'s pre-order (each node's children pushed last first), so that
    # ``inner`` is in the order met
    stack = roots[::-1]
    pop, push, extend = stack.pop, stack.append, stack.extend
    Name, FunctionDef, Lambda, ClassDef, AST = A.Name, A.FunctionDef, A.Lambda, A.ClassDef, A.AST
    NODES, NODE = A.NODES, A.NODE
    while stack:
        n = pop()
        cls = n.__class__
        if cls is Name:
            out.append(n)
            continue
        if cls is FunctionDef or cls is Lambda:
            inner.append(n)
            continue  # its body is another scope
        if cls is ClassDef:
            inner.append(n)  # (its body is walked, as ``walk_own`` walks it)
        fields = _BACKWARDS.get(cls)
        if fields is None:
            fields = _BACKWARDS[cls] = (A.CHILDREN.get(cls) or A.children_of(cls))[::-1]
        for name, holds in fields:
            v = getattr(n, name, None)
            if v is None:
                continue
            if holds == NODES:
                extend(reversed(v))
            elif holds == NODE:
                if isinstance(v, AST):
                    push(v)
            else:
                for x in reversed(v) if v.__class__ is list else (v,):
                    if isinstance(x, AST):
                        push(x)
    return out


_BACKWARDS: dict = {}  # node class -> its ``CHILDREN``, last field first


def _defs(g) -> list:
    """``g`` if a function, and the functions directly inside a lambda or class."""
    if isinstance(g, A.FunctionDef):
        return [g]
    inner: list = []
    _scope_names(g, inner, top=True)
    return [d for x in inner for d in _defs(x)]


def _borrowed(s, params) -> bool:
    """``w = params["w"]`` or ``h = node.h``: a name for part of a parameter."""
    if s.__class__ is not A.Assign:
        return False
    v = s.value
    if v.__class__ is not A.Subscript and v.__class__ is not A.Attribute:
        return False  # (most values, asked first for speed: the pass asks every statement)
    if not (len(s.targets) == 1 and isinstance(s.targets[0], A.Name)):
        return False
    while isinstance(v, (A.Subscript, A.Attribute)):
        if isinstance(v, A.Subscript) and not isinstance(v.slice, A.Constant):
            return False
        v = v.value
    return v is not s.value and isinstance(v, A.Name) and v.id in params


def _line(s):
    return getattr(s, "lineno", None)


def _targets(s) -> list:
    """The targets the top-level statement ``s`` itself assigns."""
    if isinstance(s, A.Assign):
        return list(s.targets)
    if isinstance(s, (A.AugAssign, A.AnnAssign)):
        return [s.target]
    return []
