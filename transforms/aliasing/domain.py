"""Aliasing's abstract domain: a value is a set of abstract objects (``Val``), the heap maps an
object to the objects it holds (``_State``), and the function tree (``_Scopes``, ``_Func``,
``_Call``) says which function a name means.

The objects (see the package docstring): ``("site", key, i)``, made by statement ``i`` of the
function ``key`` in this activation; ``("call", k, o)``, the object ``o`` a local call at site
``k`` returned; ``("entry", key, var)`` and ``("contents", key, var)``, the value ``var`` holds
when ``key`` is entered and everything reachable from it; ``TOP`` (anything) and ``ESCAPED``
(what code the analysis cannot see may hold).

The invariant: joins only grow (``_join``, ``_State.join`` are unions), so every fixpoint over
them ends; an object's identity is fixed by where it was made, never by what it holds.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import NamedTuple

from .. import anno
from .. import astlib as A
from ..scoping import local_names, statements  # noqa: F401 (the package reads it here)

TOP = ("top",)
ESCAPED = ("escaped",)  # what code this analysis cannot see may hold (see the docstring)
_UNKNOWN = frozenset({TOP, ESCAPED})
_ENTRY_KINDS = ("entry", "contents")


class Val(NamedTuple):
    """A value: the abstract objects it may be, and for a tuple what each element may be."""

    objs: frozenset
    elts: tuple | None = None


EMPTY = Val(frozenset())


def _join(a: Val, b: Val) -> Val:
    if a is b or (not b.objs and b.elts is None):
        return a
    if not a.objs and a.elts is None:  # nothing (or a number): the other side's elements stay
        return b
    elts = None
    if a.elts is not None and b.elts is not None and len(a.elts) == len(b.elts):
        elts = tuple(_join(x, y) for x, y in zip(a.elts, b.elts))
    return Val(a.objs | b.objs, elts)


def _site_of(o):
    """The site that made the object (through the calls that returned it)."""
    while o is not TOP and o[0] == "call":
        o = o[2]
    return o


def _kept(key, var):
    """Not an object: what a caller gives the function ``key`` for ``var`` (``confined``)."""
    return ("kept", key, var)


def _entry(key, var):
    return ("entry", key, var)


def _contents(key, var):
    return ("contents", key, var)


class _State:
    """The variables' values and the heap (object -> objects it holds) at one point."""

    __slots__ = ("env", "heap", "same", "bound")

    def __init__(self, env=None, heap=None, same=None, bound=frozenset()):
        self.env: dict = env if env is not None else {}
        self.heap: dict = heap if heap is not None else {}
        self.same: dict = same if same is not None else {}  # var -> vars surely its copies
        self.bound: frozenset = bound  # variables assigned on every path here

    def copy(self) -> _State:
        return _State(dict(self.env), dict(self.heap), dict(self.same), self.bound)

    def join(self, other: _State) -> _State:
        env = dict(self.env)
        for v, val in other.env.items():
            env[v] = _join(env[v], val) if v in env else val
        heap = dict(self.heap)
        for o, t in other.heap.items():
            heap[o] = heap[o] | t if o in heap else t
        same = {
            v: g & other.same[v]
            for v, g in self.same.items()
            if v in other.same and g & other.same[v]
        }
        return _State(env, heap, same, self.bound & other.bound)

    def add_heap(self, objs, targets) -> bool:
        """Add the edges ``objs`` -> ``targets``; did the heap change?"""
        if not targets:
            return False
        changed = False
        for o in objs:
            if o is TOP:
                continue
            old = self.heap.get(o)
            if old is None or not targets <= old:
                self.heap[o] = targets if old is None else old | targets
                changed = True
        return changed


def _reach(objs, heap) -> frozenset:
    out = set(objs)
    todo = list(objs)
    while todo:
        o = todo.pop()
        for t in heap.get(o, ()):
            if t not in out:
                out.add(t)
                todo.append(t)
    return frozenset(out)


class _Scopes:
    """The function tree: each function's locals, its parent, Python's name resolution. A
    function is keyed by its ``DEF_KEY`` (Resolve's; made unique), the entry function by
    ``""``."""

    def __init__(self, root):
        self.node: dict = {}
        self.parent: dict = {}
        self.locals: dict = {}
        # (owner key, name) -> keys of the functions defined by that name there, in order (a
        # name may be defined again: a value read of it may be any of them)
        self.defs: dict = {}
        self.keys: dict = {}  # id(def) -> its key
        stack = [(root, None)]
        while stack:
            fdef, parent = stack.pop()
            key = self.keys[id(fdef)] if fdef is not root else ""
            self.node[key], self.parent[key] = fdef, parent
            self.locals[key] = local_names(fdef)
            for s in statements(fdef.body):
                if isinstance(s, A.FunctionDef):
                    # Resolve's key, made unique: a helper inlined twice copies its functions
                    k = base = str(anno.getanno(s, anno.DEF_KEY))
                    while k in self.node or k in self.keys.values():
                        k = f"{base}#{len(self.keys)}"
                    self.keys[id(s)] = k
                    self.defs.setdefault((key, s.name), []).append(k)
                    stack.append((s, key))

    def resolve(self, key, name):
        """The variable ``name`` means inside function ``key``: (owner key, name), or None."""
        while key is not None:
            if name in self.locals[key]:
                return (key, name)
            key = self.parent[key]
        return None

    def functions(self):
        return list(self.node.items())


@dataclass
class _Call:
    """A call of a local function, as its caller saw it."""

    caller: str
    callee: str
    images: dict  # callee's entry variable -> its value in the caller
    state: _State  # the caller's state at the call
    live: set  # caller's variables read after the call (its targets left out)
    stmt: object


@dataclass
class _Func:
    key: str
    fdef: object
    params: list  # variables
    entry_vars: set = field(default_factory=set)  # params + outer variables it may read
    escapes: bool = False
    ret: Val = EMPTY
    heap_out: dict = field(default_factory=dict)  # edges it adds, in its objects
    # pairs {(kind, var), (kind, var)} of its entry objects (kind: entry or contents) that may
    # share memory, and for each entry object the callers' variables (or "?") that may hold it
    # and read it after the call
    related: set = field(default_factory=set)
    holders: dict = field(default_factory=dict)
    records: tuple = ((), ())  # its last pass's calls and updates


def _objs_of(elts) -> set:
    out: set = set()
    for v in elts or ():
        out |= v.objs | _objs_of(v.elts)
    return out


def _depth(scopes, key) -> int:
    d = 0
    while scopes.parent.get(key) is not None:
        key, d = scopes.parent[key], d + 1
    return d


def _initial_edges(o) -> frozenset:
    if o[0] in ("entry", "contents"):
        return frozenset({_contents(o[1], o[2])})
    return frozenset()


def _walk_own(node):
    """``node`` and what is below it in its scope (nested functions' bodies left out)."""
    stack = [node]
    while stack:
        n = stack.pop()
        yield n
        if isinstance(n, A.FunctionDef) and n is not node:
            continue
        if isinstance(n, A.FunctionDef):
            stack.extend(d for d in [*n.args.defaults, *n.args.kw_defaults] if d is not None)
            continue
        stack.extend(A.iter_child_nodes(n))


def _stays_local(st) -> bool:
    """A statement through which a value cannot leave the function or reach a derivative rule
    of another: arithmetic, a primitive's call, a copy, a branch's test, a new container (a
    holder itself: what is then done with it is asked of its own statements)."""
    if isinstance(st, A.If):
        return True
    if isinstance(st, A.Expr):
        v = st.value
        return isinstance(v, A.Call) and anno.getanno(v.func, anno.CALLEE_KIND) in (
            "primitive",
            "nondiff",
        )
    if not isinstance(st, A.Assign) or not isinstance(st.targets[0], (A.Name, A.Tuple)):
        return False
    v = st.value
    if isinstance(v, A.Call):
        return anno.getanno(v.func, anno.CALLEE_KIND) in ("primitive", "nondiff")
    return isinstance(
        v,
        (A.Name, A.Constant, A.BinOp, A.UnaryOp, A.Compare, A.Attribute, A.Subscript, A.Tuple)
        + (A.List, A.Dict, A.Set),
    )
