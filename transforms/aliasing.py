"""Aliasing: after it, each augmented assignment knows who else may read the value it changes.

cpsad runs ``y += v`` as ``y = y + v``: it *rebinds* ``y``, as Python does for a number. For an
array (or a list) Python changes the value in place, and every other name, container, closure or
caller that holds the same array -- or a view of it -- sees the change. The two agree exactly
when none of those reads it after the update. This analysis finds, for every update, the ones
that may; it is read by Normalize, which leaves an update with none as the rebinding and puts a
run-time check (``check_in_place``) before the others.

The invariant: ``analyze(unit)`` maps the statement of each update (Normalize's ``y = y op v``
with an ``Update`` in ``anno.AUG``) to ``None`` only if no variable but ``y`` -- of the function
or of one enclosing it --, no container, no closure and no caller that may hold ``y``'s value
then can read it after the statement; else to a ``Sharing``: the names visible there that may
hold it and are read afterwards (the check compares their values with ``y``'s at run time), and
a description of any holder that cannot be named there (a caller, a function used as a value)::

    w = v          # w holds v's array
    v += x         # Sharing(names=["w"])   -- w is read below
    return w * w

    acc = np.zeros(3)
    for t in ts:
        acc += t   # None: no other name holds acc's array, in any iteration

How: a flow-sensitive may-alias (points-to) analysis over the normalized functions.

* A value is a set of abstract objects: one a statement of this activation made (``site``), one a
  call of a local function made (``call``), the value a parameter or an enclosing function's
  variable holds during the activation (``entry``) and everything reachable from it
  (``contents``), ``ESCAPED`` (whatever code the analysis cannot see may hold: what a user's
  function or a function value returns may be anything it was ever given or keeps in a global)
  or ``TOP`` (anything). Containers, views and calls that may return their arguments make values
  that reach their operands' objects; arithmetic and numpy's functions that return new arrays
  make new ones (``VIEWS`` lists those that may not). Neither ``TOP`` nor ``ESCAPED`` is an
  object that only this function's own variables ever held (``confined``).
* Desugar made loops recursion, so within one activation each statement runs at most once: what
  a statement makes is one object, distinct from everything that existed when the function was
  entered. That keeps ``acc += t`` apart from what earlier iterations stored: those came in
  through parameters and free variables.
* Which entry values may share is decided where the function is called (the relation ``related``,
  to a fixpoint over the local functions): a later iteration sees, through its parameters, the
  aliases earlier ones made. The entry function's parameters and globals may all share (its
  caller is unknown; the run-time check looks). A function used as a value may be called with
  anything, by anyone, at any time.
* Reads are per variable (liveness); a call of a local function reads what it, and what it
  calls, reads; a function used as a value reads it where a call that was given it (a
  function value called, a function it was passed to) runs.
* The callers of a local function may still hold what they passed to it (``held``): an update of
  a parameter's array is seen by the caller who reads its argument afterwards. The entry
  function's own caller is not counted: cpsad never changes its arguments in place -- the result
  is Python's, the caller's arrays keep their values (autograd and JAX do the same).

Python semantics for numbers need nothing: the run-time check lets every value whose type has no
in-place operator (``__iadd__``...) through, since for those Python rebinds too.

``x[i] op= v`` updates the entry ``old = x[i]``: an array ``x`` is changed in place by the store
that follows, as in Python; a list's or a dict's other entries may hold the same value (``[a] *
2``), so a container that may hold an object twice and is read later is one of the names.

Where no derivative can see the value -- it was made in the function (or is an argument of the
entry function), stays there, and no statement naming a variable that may hold it computes an
active value (``python_may_run_in_place``, asked after Activity) -- the update is Python's own
``operator.iadd``: an argument changes for the caller, as in Python, and a buffer's views see it.

>>> from cpsad.transforms.testing import stage_source
>>> src = "def f(x):\\n    w = x * 1.0\\n    v = w[1:]\\n    w += x\\n    return np.sum(v)\\n"
>>> print(stage_source(src, "normalize", ctx, kinds={"x": {"array"}}))
def f(x):
    w = x * 1.0
    v = w[1:]
    check_in_place(w, '+=', 'w += x', 6, None, ('v',), v)
    w = w + x
    sum_v = np.sum(v)
    return sum_v
<BLANKLINE>
"""

from __future__ import annotations

import builtins
import types
import weakref
from dataclasses import dataclass, field
from typing import NamedTuple

import numpy

from . import anno
from . import astlib as A
from .parse import checked_tree
from .scoping import local_names, push_children

# --------------------------------------------------------------------------- what Normalize marks


@dataclass
class Update:
    """``y op= v`` as Normalize lowered it: ``target = operand op v`` (the statement carrying this
    in ``anno.AUG``). ``operand`` is the name whose value Python would change in place: ``y``,
    or for ``x[i] op= v`` the temporary holding ``x[i]`` (``container`` is ``x``: the new value
    is stored back into it)."""

    operand: str
    target: str
    op: str  # "+=", ...
    python_op: str  # "iadd", ...: the operator module's in-place function
    node: object  # the user's statement (an AugAssign), for messages
    line: int
    container: str | None = None
    name: str | None = None  # the user's variable, where it is rebound after ``target``
    # a change of ``operand``'s value in place that cpsad makes too (``xs.append(v)``,
    # ``d[k] = v``: ``op`` is ".append", "[]="): whoever else reads the value after it sees
    # the change, which the adjoints of ``operand``'s entries do not reach
    mutation: bool = False

    @property
    def text(self) -> str:
        return A.to_source(self.node).strip()


@dataclass
class Sharing:
    """Who may read, after an update, the value it changes (see the module docstring)."""

    names: list[str]  # variables visible at the update that may hold the value and are read later
    held: str | None  # a holder that cannot be named there, described; None if there is none
    must: list[str]  # of ``names``, those that surely hold the very same value (copies)
    # for Python's own in-place operation (``operator.iadd``), where no derivative can see it:
    confined: bool = False  # the value was made in this activation and never left it
    mentions: list = field(default_factory=list)  # statements naming a variable that may hold it
    # the parameters and globals that hold it only if the caller passed one array twice
    related: list = field(default_factory=list)


# --------------------------------------------------------------------------- callees

VIEWS = {  # numpy functions whose result may share memory with an argument (or be it)
    "array_split",
    "asanyarray",
    "asarray",
    "asarray_chkfinite",
    "ascontiguousarray",
    "asfortranarray",
    "asmatrix",
    "atleast_1d",
    "atleast_2d",
    "atleast_3d",
    "broadcast_arrays",
    "broadcast_to",
    "diag",
    "diagonal",
    "diff",
    "dsplit",
    "einsum",
    "expand_dims",
    "fix",
    "flip",
    "fliplr",
    "flipud",
    "from_dlpack",
    "histogram",
    "histogram_bin_edges",
    "histogramdd",
    "hsplit",
    "imag",
    "isneginf",
    "isposinf",
    "ix_",
    "matrix_power",
    "matrix_transpose",
    "moveaxis",
    "nan_to_num",
    "permute_dims",
    "polyder",
    "polyint",
    "ravel",
    "real",
    "real_if_close",
    "require",
    "reshape",
    "rollaxis",
    "rot90",
    "split",
    "squeeze",
    "swapaxes",
    "transpose",
    "trim_zeros",
    "unstack",
    "vsplit",
}
# (found by calling every function of numpy, numpy.linalg and numpy.fft on arrays and asking
# numpy.shares_memory, plus those whose documentation says they return views)

FRESH_METHODS = {  # methods of an array whose result is a new value
    "all",
    "any",
    "argmax",
    "argmin",
    "argsort",
    "astype",
    "clip",
    "count",
    "cumprod",
    "cumsum",
    "dot",
    "flatten",
    "index",
    "item",
    "max",
    "mean",
    "min",
    "nonzero",
    "prod",
    "round",
    "std",
    "sum",
    "tolist",
    "trace",
    "var",
}
SHALLOW_METHODS = {"copy"}  # a new container of the same elements (an array's copy: a new array)
CONTAINER_MUTATORS = {"append", "extend", "insert", "add", "update", "setdefault"}
NONE_METHODS = {"append", "extend", "insert", "add", "update", "clear", "sort", "reverse", "remove"}
IMMUTABLE_ATTRIBUTES = {"shape", "ndim", "size", "dtype", "itemsize", "nbytes", "__name__"}
FRESH_BUILTINS = {
    abs,
    all,
    any,
    bool,
    callable,
    chr,
    complex,
    divmod,
    float,
    format,
    hasattr,
    hash,
    id,
    int,
    isinstance,
    issubclass,
    len,
    ord,
    pow,
    print,
    range,
    repr,
    round,
    str,
    sum,
    type,
}


_CONTAINERS = (list, dict, set, bytearray, numpy.ndarray)
_IMMUTABLE_GLOBALS = (
    types.ModuleType,
    types.FunctionType,
    types.BuiltinFunctionType,
    type,
    numpy.ufunc,
    int,
    float,
    complex,
    str,
    bytes,
)


def _fresh_callee(fn, call) -> bool:
    """Does a call of the primitive or non-differentiable ``fn`` return a value that shares
    nothing with its arguments?"""
    if any(k.arg in ("out", "copy") for k in call.keywords):
        return False
    if isinstance(fn, numpy.ufunc):
        return len(call.args) <= fn.nin and not any(isinstance(a, A.Starred) for a in call.args)
    module = getattr(fn, "__module__", None) or ""
    name = getattr(fn, "__name__", "")
    if module == "math":
        return True
    if module.startswith("numpy"):
        return name not in VIEWS
    try:
        return fn in FRESH_BUILTINS
    except TypeError:  # unhashable
        return False


# numpy functions whose fresh result (``_fresh_callee``) is an array, never a list or a tuple
_NEW_ARRAYS = frozenset(
    getattr(numpy, n)
    for n in (
        "zeros ones full eye identity zeros_like ones_like full_like empty empty_like array "
        "arange linspace dot vdot inner outer matmul tensordot einsum kron sum mean prod std var "
        "cumsum cumprod stack vstack hstack concatenate where clip trace sort"
    ).split()
)


# --------------------------------------------------------------------------- abstract values

_UPTO_PASSES = 32  # ``values_ever`` passes up to a statement, per function
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


_FULL_REDUCTIONS = tuple(
    getattr(numpy, n)
    for n in ("sum", "mean", "prod", "max", "min", "amax", "amin", "std", "var", "median")
    if hasattr(numpy, n)
) + (numpy.linalg.norm,)
_NUMBER_KINDS = frozenset({"number", "npscalar"})  # immutable: an update rebinds


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


# --------------------------------------------------------------------------- the functions


def statements(block):
    """Every statement of a normalized block, depth first (branches included, not nested defs)."""
    for s in block:
        yield s
        if isinstance(s, A.If):
            yield from statements(s.body)
            yield from statements(s.orelse)


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


class _Analysis:
    def __init__(self, unit):
        self.unit = unit
        self._nodes: dict = {}  # id(def) -> the nodes of its own scope
        self._below: dict = {}  # id(statement) -> its nodes in its scope
        self.scopes = _Scopes(unit.tree)
        g = getattr(unit.fn, "__globals__", {})
        self.globals = g
        self.funcs: dict[str, _Func] = {}
        for key, fdef in self.scopes.functions():
            params = [(key, p) for p in A.arg_names(fdef.args)]
            self.funcs[key] = _Func(key, fdef, params)
        self.arg_kinds = {p: set(k) for p, k in (unit.arg_kinds or {}).items()}
        self.held = held_parameters(unit.arg_kinds)
        self._escaping()  # (before the number cells: an escaping function's parameters are any)
        self.cells = self._cells()
        self.number_cells = self._number_cells()
        # what each other cell may hold, from every assignment of it anywhere (a fixpoint over
        # the whole analysis, ``run``): arrays and numbers made fresh (``plain`` sites), or TOP
        self.cell_values: dict = {}
        self.plain: set = set()  # sites that make a new array or number, never a container
        self.fresh: set = set()  # sites that make a new object (arithmetic, a display, ...)
        self.call_sites: dict = {}  # the index of a local call's site -> (caller, callee)
        self.cell_sites: set = set()  # the sites of what cells hold (``overlap``)
        self.sites: dict = {}  # id(statement) -> its site object
        self.sequences: set = set()  # sites that may make a list or a tuple
        self.duplicates: set = set()  # containers that may hold an object twice
        self._stored = None  # (container, new value) of the last ``x[i] op= v``
        self._track = None  # (key in ``ever``, upto) while recording (``values_ever``)
        self._upto_passes: dict = {}  # function -> ``values_ever`` passes with ``upto``
        self.ever: dict = {}
        self._confined_memo: dict = {}  # (function, object, upto) -> ``confined``'s answer
        self._order: dict = {}  # function -> ``order``
        self._free_vars()
        self.live_after: dict = {}  # id(statement) -> variables read after it
        self.next: dict = {}  # id(statement) -> the statement after it in its block
        self.closures: dict = {}  # site of a def -> its function's key
        self.invokes: dict = {}  # id(statement) -> functions used as values it may call
        self.given: dict = {}  # id(call statement) -> (function, the objects it was given)
        self.user_calls: dict = (
            {}
        )  # id(call) -> (function, statement, call, argument values, state)

    # ---------------------------------------------------------------- names and variables

    def var(self, key, name):
        v = self.scopes.resolve(key, name)
        return v if v is not None else (None, name)

    def visible(self, key, var) -> bool:
        return self.var(key, var[1]) == var

    def _cells(self) -> set:
        """Variables a nested function rebinds (``nonlocal``): their values change behind the
        back of the function that owns them. (Resolve's other cells, variables a closure reads
        and their function assigns again, change only where that function assigns them: they
        are followed as any variable.)"""
        out = set()
        for key, f in self.funcs.items():
            parent = self.scopes.parent[key]
            for node in self._own_nodes(f.fdef):
                if isinstance(node, A.Nonlocal) and parent is not None:
                    out |= {self.var(parent, n) for n in node.names}
        return out

    def _number_cells(self) -> set:
        """The cells that only ever hold numbers -- constants, arithmetic and comparisons of
        numbers, ``len``, a loop's counter -- immutable, so that no update in place can be
        seen through them. (A variable holds numbers when every assignment of it gives one, a
        parameter when every call of its function by name passes one; to a greatest
        fixpoint.)"""
        if not self.cells:
            return set()
        defs: dict = {}  # variable -> [(function key, expression or None: unknown)]

        def add(v, key, e):
            defs.setdefault(v, []).append((key, e))

        for key, f in self.funcs.items():
            if key == "" or f.escapes:
                for p in f.params:
                    # the entry function's argument of a number's kind (the specialization's)
                    given = self.arg_kinds.get(p[1]) if key == "" and not f.escapes else None
                    add(p, key, A.const(0.0) if given and given <= _NUMBER_KINDS else None)
            for st in statements(f.fdef.body):
                if isinstance(st, A.Assign):
                    t = st.targets[0]
                    if isinstance(t, A.Name):
                        add(self.var(key, t.id), key, st.value)
                    else:
                        for n in A.walk(t):
                            if isinstance(n, A.Name):
                                add(self.var(key, n.id), key, None)
                elif isinstance(st, A.FunctionDef):
                    add(self.var(key, st.name), key, None)
                for n in self._statement_nodes(st):
                    g = self.local_callee(key, n)
                    if g is None:
                        continue
                    names = A.arg_names(self.funcs[g].fdef.args)
                    given = dict(zip(names, n.args))
                    given.update({k.arg: k.value for k in n.keywords if k.arg is not None})
                    spread = any(isinstance(a, A.Starred) for a in n.args) or any(
                        k.arg is None for k in n.keywords
                    )
                    for p in names:
                        add((g, p), key, None if spread else given.get(p))

        def number(key, e, numbers) -> bool:
            if e is None:
                return False
            if isinstance(e, A.Constant):
                return type(e.value) in (int, float, bool, complex) or e.value is None
            if isinstance(e, A.Name):
                return self.var(key, e.id) in numbers
            if isinstance(e, A.BinOp):
                return number(key, e.left, numbers) and number(key, e.right, numbers)
            if isinstance(e, A.UnaryOp):
                return number(key, e.operand, numbers)
            if isinstance(e, A.Compare):
                return all(number(key, x, numbers) for x in [e.left, *e.comparators])
            if isinstance(e, A.Call) and not e.keywords:
                fn = anno.getanno(e.func, anno.CALLEE)
                # (a ufunc of numbers makes a numpy scalar: immutable too)
                if (
                    fn is len
                    or getattr(fn, "__module__", None) == "math"
                    or isinstance(fn, numpy.ufunc)
                ):
                    return fn is len or all(number(key, a, numbers) for a in e.args)
                if len(e.args) == 1 and any(fn is r for r in _FULL_REDUCTIONS):
                    return True  # a reduction of everything: a numpy scalar, of anything
            return False

        numbers = set(defs)
        changed = True
        while changed:
            changed = False
            for v in list(numbers):
                if not all(number(key, e, numbers) for key, e in defs[v]):
                    numbers.discard(v)
                    changed = True
        number = None  # (it calls itself: a reference cycle, which kept the tree alive until a collection)
        return self.cells & numbers

    def irrelevant_global(self, var) -> bool:
        """A global that holds no value an update could change: a module, a function, a class,
        a number, a string."""
        if var[0] is not None:
            return False
        name = var[1]
        if name in self.globals:
            obj = self.globals[name]
        elif hasattr(builtins, name):
            obj = getattr(builtins, name)
        elif name in self.unit.injected:  # a name the pipeline gave an object (``MISSING``)
            obj = self.unit.injected[name]
            if not hasattr(obj, "__dict__") and not isinstance(obj, _CONTAINERS):
                return True  # an object with no state of its own
        else:
            return False  # not known (yet): anything
        return obj is None or isinstance(obj, _IMMUTABLE_GLOBALS)

    def _own_nodes(self, fdef) -> list:
        """The nodes of ``fdef``'s own scope (walked once)."""
        found = self._nodes.get(id(fdef))
        if found is None:
            found = self._nodes[id(fdef)] = [n for st in fdef.body for n in _walk_own(st)]
        return found

    def _statement_nodes(self, node) -> list:
        """The nodes of a statement in its scope (a def: itself and its defaults)."""
        found = self._below.get(id(node))
        if found is None:
            found = self._below[id(node)] = list(_walk_own(node))
        return found

    def local_callee(self, key, call):
        """The key of the local function ``call`` (in function ``key``) calls, or None: the
        function its name means there."""
        if isinstance(call, A.Call) and anno.getanno(call.func, anno.CALLEE_KIND) == "local":
            g = anno.getanno(call.func, anno.CALLEE)
            if isinstance(call.func, A.Name):  # (the one Resolve bound it to, of those named so)
                named = self.scopes.defs.get(self.scopes.resolve(key, call.func.id), ())
                bound = [k for k in named if k.split("#")[0] == str(g)] or named[-1:]
                if bound and bound[-1] in self.funcs:
                    return bound[-1]
            if g in self.funcs:
                return g
        return None

    def _function_refs(self, key):
        """(local calls, local functions referenced as values) of the function ``key``."""
        calls, values = [], []
        fdef = self.funcs[key].fdef
        call_funcs = set()
        for n in self._own_nodes(fdef):
            g = self.local_callee(key, n)
            if g is not None:
                calls.append(g)
                call_funcs.add(id(n.func))
        for n in self._own_nodes(fdef):
            if isinstance(n, A.Name) and isinstance(n.ctx, A.Load) and id(n) not in call_funcs:
                for g in self.scopes.defs.get(self.scopes.resolve(key, n.id) or ("?", n.id), ()):
                    if g in self.funcs:
                        values.append(g)
        return calls, values

    def _escaping(self) -> None:
        for key in self.funcs:
            _, values = self._function_refs(key)
            for g in values:
                self.funcs[g].escapes = True

    def _free_vars(self) -> None:
        """Each function's entry variables: parameters, and the outer variables it -- or a local
        function it calls or lets escape -- may read."""
        reads: dict = {}
        refs: dict = {}
        for key, f in self.funcs.items():
            own = {v for v in self.value_reads(key, f.fdef.body) if v[0] != key}
            reads[key] = own
            calls, values = self._function_refs(key)
            refs[key] = set(calls) | set(values)
        free = {k: set(r) for k, r in reads.items()}
        changed = True
        while changed:
            changed = False
            for key in self.funcs:
                for g in refs[key]:
                    extra = {v for v in free[g] if v[0] != key} - free[key]
                    if extra:
                        free[key] |= extra
                        changed = True
        self.free = free
        # what a function used as a value reads, it reads wherever it is called: by a call
        # that was given it (``invokes``), which may be in a function it was passed to
        self.escaped = set()
        for f in self.funcs.values():
            if f.escapes:
                self.escaped |= free[f.key]
        runs = self._runs_values()
        for key, f in self.funcs.items():
            seen = set()
            if key in runs:
                seen = {v for v in self.escaped if v[0] != key and self.visible(key, v)}
            f.entry_vars = set(f.params) | free[key] | seen

    def _runs_values(self) -> set:
        """The functions that may run a function used as a value: they call something that is
        not a primitive, nor a local function by name -- or a local function that may. (One
        that does not -- a loop's function of arithmetic -- reads no escaped closure's
        variables.)"""
        direct = {
            key
            for key, f in self.funcs.items()
            if any(
                isinstance(n, A.Call)
                and anno.getanno(n.func, anno.CALLEE_KIND) not in ("primitive", "nondiff", "local")
                for n in self._own_nodes(f.fdef)
            )
        }
        calls = {key: set(self._function_refs(key)[0]) for key in self.funcs}
        grew = True
        while grew:
            grew = False
            for key in self.funcs:
                if key not in direct and calls[key] & direct:
                    direct.add(key)
                    grew = True
        return direct

    # ---------------------------------------------------------------- liveness

    def value_reads(self, key, nodes) -> set:
        """Variables read as values below ``nodes`` (of ``key``'s own scope): the name of a
        resolved function called is not a value read."""
        out = set()
        skip = set()
        below = [m for node in nodes for m in self._statement_nodes(node)]
        for n in below:
            if isinstance(n, A.Call) and isinstance(n.func, A.Name):
                if anno.getanno(n.func, anno.CALLEE_KIND) not in (None, "dynamic"):
                    skip.add(id(n.func))
        for n in below:
            if isinstance(n, A.Name) and isinstance(n.ctx, A.Load) and id(n) not in skip:
                out.add(self.var(key, n.id))
        return out

    def reads(self, key, node) -> set:
        """Variables a statement (or an expression) reads, calls of local functions included."""
        out = set()
        skip = set()
        below = self._statement_nodes(node)
        for n in below:
            if isinstance(n, A.Call):
                kind = anno.getanno(n.func, anno.CALLEE_KIND)
                g = self.local_callee(key, n)
                if g is not None:
                    out |= self.free[g]
                    skip.add(id(n.func))
                elif kind in ("primitive", "nondiff", "user", "unknown") and isinstance(
                    n.func, A.Name
                ):
                    skip.add(id(n.func))
        for n in below:
            if isinstance(n, A.Name) and isinstance(n.ctx, A.Load) and id(n) not in skip:
                v = self.var(key, n.id)
                out.add(v)
                for g in self.scopes.defs.get(v, ()):
                    if g in self.funcs:
                        out |= self.free[g]
        for c in self.invokes.get(id(node), ()):  # functions used as values it may call
            out |= self.free[c]
        if isinstance(node, A.FunctionDef):  # its defaults, evaluated where it is defined
            out = set()
            for d in [*node.args.defaults, *node.args.kw_defaults]:
                if d is not None:
                    out |= self.reads(key, d)
        return out

    def _liveness(self, f: _Func) -> None:
        key = f.key

        def block(stmts, live):
            for s, after in zip(stmts, stmts[1:]):
                self.next[id(s)] = after
            for s in reversed(stmts):
                self.live_after[id(s)] = live
                if isinstance(s, A.If):
                    live = block(s.body, live) | block(s.orelse, live) | self.reads(key, s.test)
                elif isinstance(s, A.Return):
                    live = self.reads(key, s) if s.value is not None else set()
                elif isinstance(s, A.FunctionDef):
                    live = (live - {(key, s.name)}) | self.reads(key, s)
                elif isinstance(s, A.Assign):
                    live = (live - self.defs(key, s)) | self.reads(key, s)
                else:
                    live = live | self.reads(key, s)
            return live

        block(f.fdef.body, set())
        block = None  # (it calls itself: a reference cycle, which kept the tree alive until a collection)

    def defs(self, key, s) -> set:
        if not isinstance(s, A.Assign):
            return set()
        t = s.targets[0]
        if isinstance(t, A.Name):
            return {(key, t.id)}
        if isinstance(t, (A.Tuple, A.List)):
            return {(key, e.id) for e in t.elts if isinstance(e, A.Name)}
        return set()

    # ---------------------------------------------------------------- points-to

    def site(self, key, stmt, n=0):
        i = self.sites.setdefault((id(stmt), n), len(self.sites))
        return ("site", key, i)

    def run(self) -> dict:
        """Each function's summary to a fixpoint, callees first: a function's summary is in its
        own objects, so it depends only on the functions it calls. A function is analysed again
        while its own summary changes (it calls itself: a loop) or one it calls changed since;
        what its last pass recorded (its calls and updates) is what the answers read."""
        callees: dict = {}
        # key -> the functions it calls or refers to as values: it reads their summaries
        uses: dict = {}
        callers: dict = {k: set() for k in self.funcs}
        for key in self.funcs:
            calls, values = self._function_refs(key)
            callees[key] = set(calls)
            uses[key] = set(calls) | set(values)
            for g in uses[key]:
                callers[g].add(key)
        order = sorted(self.funcs, key=lambda k: -_depth(self.scopes, k))  # inner ones first
        # every function again while what the cells hold grows: a function read a cell before
        # another one assigned it
        for _ in range(100):
            cells = dict(self.cell_values)
            self.plain = set()  # (judged again with what the cells hold now)
            self._summaries(order, callees, uses, callers)
            if self.cell_values == cells:
                break
        else:  # pragma: no cover - a finite lattice
            raise AssertionError("aliasing: no fixpoint for the cells")
        self.calls = [c for k in order for c in self.funcs[k].records[0]]
        self.updates = [u for k in order for u in self.funcs[k].records[1]]
        self._invoked()
        self._invoked_reads(callees)
        for f in self.funcs.values():  # (reads through function values: known now)
            self._liveness(f)
        for c in self.calls:
            c.live = self.live_after.get(id(c.stmt), set()) - self.defs(c.caller, c.stmt)
        self._relations()
        self._held_arguments()
        out = {id(s): self._decide(f, s, u, state) for f, s, u, state in self.updates}
        for f in self.funcs.values():  # (they name their function: a cycle that kept the tree)
            f.records = ((), ())
        return out

    def _summaries(self, order, callees, uses, callers) -> None:
        """Each function's summary to a fixpoint, callees first (see ``run``): one is analysed
        again when a function it ``uses`` changed since it last was."""
        version = dict.fromkeys(self.funcs, 0)
        seen: dict = {}
        todo = list(order)
        for _ in range(100 * len(order)):
            if not todo:
                break
            key = todo.pop(0)
            f = self.funcs[key]
            while True:
                seen[key] = {g: version[g] for g in uses[key]}
                self.calls, self.updates = [], []
                ret, heap_out = self._points_to(f)
                f.records = (self.calls, self.updates)
                if ret == f.ret and heap_out == f.heap_out:
                    break
                f.ret, f.heap_out = ret, heap_out
                version[key] += 1
                if key not in callees[key]:
                    break
            for c in callers[key]:
                if c in seen and c not in todo and seen[c].get(key) != version[key]:
                    todo.append(c)
        else:  # pragma: no cover - a finite lattice
            raise AssertionError("aliasing: no fixpoint")

    def _held_arguments(self) -> None:
        """For each call of a user function: the arguments whose values someone may read after
        it returns -- a variable read later, a caller of this function (``holders``), anyone
        (TOP) -- in ``anno.HELD_ARGS``. The callee, transformed apart, counts them as its
        caller's (an update of one in place would be seen there)."""
        for f, s, call, args, state in self.user_calls.values():
            live = self.live_after.get(id(s), set()) - self.defs(f.key, s)
            # and a variable another statement reads: read before the call, its value may be
            # what the backward pass reads (``v @ A``'s adjoint reads ``v``)
            live = live | {
                v
                for st in statements(f.fdef.body)
                if st is not s
                for v in self.value_reads(f.key, [st])
                if v[0] == f.key or self.visible(f.key, v)
            }
            live = sorted(live, key=repr)
            reaches = [self.reach(self.var_value(f, state, n).objs, state) for n in live]
            held, readers = set(), {}
            slots = list(range(len(call.args))) + [k.arg for k in call.keywords]
            for slot, val in zip(slots, args):
                objs = self.reach(val.objs, state)
                if not objs:
                    continue
                # (the names that hold the very objects made here: Activity's check of what
                # the backward pass reads, ``_changed_after_read``)
                readers[slot] = frozenset(
                    n[1]
                    for n, r in zip(live, reaches)
                    if self.visible(f.key, n)
                    and self.readable(f, state, n)  # (assigned there: the check reads it)
                    and self.overlap(f, objs - _UNKNOWN, r - _UNKNOWN, s)
                )
                if TOP in objs or any(self.overlap(f, objs, r, s) for r in reaches):
                    held.add(slot)
                    continue
                for e, hold in f.holders.items():
                    if hold and self.overlap(f, objs, frozenset({(e[0], f.key, e[1])}), s):
                        held.add(slot)
                        break
            anno.setanno(call, anno.HELD_ARGS, frozenset(held))
            anno.setanno(call, anno.HELD_READERS, readers)

    def _invoked_reads(self, callees) -> None:
        """A call of a local function reads, too, what the function values it calls read."""
        for key, f in self.funcs.items():
            for st in statements(f.fdef.body):
                for c in self.invokes.get(id(st), ()):
                    self.free[key] |= {v for v in self.free[c] if v[0] != key}
        changed = True
        while changed:
            changed = False
            for key in self.funcs:
                for g in callees[key]:
                    extra = {v for v in self.free[g] if v[0] != key} - self.free[key]
                    if extra:
                        self.free[key] |= extra
                        changed = True

    def value(self, f, state, node) -> Val:
        """The value of an atom (a name or a constant) at ``state``."""
        if isinstance(node, A.Constant):
            return EMPTY
        if isinstance(node, A.Starred):
            return Val(self.reach(self.value(f, state, node.value).objs, state))
        if not isinstance(node, A.Name):
            return Val(frozenset({TOP}))
        v = self.var(f.key, node.id)
        return self.var_value(f, state, v)

    def var_value(self, f, state, v) -> Val:
        if v in self.cells:
            # one of numbers only (``_number_cells``) holds nothing an update could change;
            # another what any assignment of it gave it -- and, read by a nested function, its
            # value at the function's entry, which the callers' relations speak of
            if v in self.number_cells:
                return EMPTY
            held = self.cell_values.get(v, frozenset())
            if TOP in held:
                return Val(frozenset({TOP}))
            if v[0] == f.key and v in f.params:
                # a parameter: also what it was given (its entry object, never one made here)
                held = held | {_entry(f.key, v)}
            elif v[0] != f.key:
                held = held | {_entry(f.key, v)}
                e, c = _entry(f.key, v), _contents(f.key, v)
                if e not in state.heap:
                    state.heap[e] = frozenset({c})
                    state.heap[c] = frozenset({c})
            return Val(frozenset(held))
        if v[0] == f.key:
            return state.env.get(v, EMPTY)
        if self.irrelevant_global(v):
            return EMPTY
        e, c = _entry(f.key, v), _contents(f.key, v)
        outside = v[0] is None  # a global, a variable of the user's enclosing function
        if e not in state.heap:
            state.heap[e] = frozenset({c})
            # (what code the analysis cannot see stored there: a user's function may keep
            # what it was given in a global, and the next read of it return that)
            state.heap[c] = frozenset({c, ESCAPED}) if outside else frozenset({c})
        return Val(frozenset({e, ESCAPED}) if outside else frozenset({e}))

    def _invoked(self) -> None:
        """Which functions used as values each call may call (``invokes``): those whose
        values it was given -- a parameter or free variable standing for what the callers gave
        it (to a fixpoint over the calls), anything where nothing is known of it."""
        escaping = {k for k, f in self.funcs.items() if f.escapes}
        entry: dict = {}  # (function, kind, var) -> functions its entry object may be

        def closures(key, objs) -> set:
            out = set()
            for o in objs:
                site = o[2] if o[0] == "call" else o
                if site in self.closures:
                    out.add(self.closures[site])
                elif o in _UNKNOWN or (o[0] in _ENTRY_KINDS and self.funcs[key].escapes):
                    out |= escaping
                elif o[0] in _ENTRY_KINDS:
                    out |= entry.get((key, o[0], o[2]), set())
            return out

        changed = True
        while changed:
            changed = False
            for c in self.calls:
                g = self.funcs[c.callee]
                if g.escapes:
                    continue
                h = self.funcs[c.caller]
                for v in g.entry_vars:
                    for kind in _ENTRY_KINDS:
                        found = closures(c.caller, self.entry_image(h, c, (kind, v)))
                        old = entry.setdefault((c.callee, kind, v), set())
                        if not found <= old:
                            old |= found
                            changed = True
        for sid, (key, given) in self.given.items():
            found = {k for k in closures(key, given) if k in self.funcs}
            if found:
                self.invokes[sid] = found

    def add_entries(self, state, holders, new) -> bool:
        """``new`` stored into the containers ``holders``: one that may then hold an object
        twice (``[a, a]``, appending what it holds) is marked, for ``x[i] op= v``. Did the
        heap change?"""
        new = frozenset(new)
        if not new:
            return False
        held = self.reach(
            frozenset().union(*(state.heap.get(o, frozenset()) for o in holders)), state
        )
        if new & held or (
            any(o[0] in _ENTRY_KINDS or o in _UNKNOWN for o in new)
            and any(o[0] in _ENTRY_KINDS for o in held)
        ):
            self.duplicates |= {o for o in holders if o is not TOP}
        return state.add_heap(holders, new)

    def may_hold_twice(self, o) -> bool:
        """May the container ``o`` hold one object in two entries?"""
        if o in _UNKNOWN or o in self.duplicates:
            return True
        if o[0] == "call":
            return o[2] in self.duplicates or o[2][0] != "site"
        if o[0] in _ENTRY_KINDS:
            if self.plain_cell(o[2]):
                return False
            return self.may_be_sequence(o) or o[0] == "contents"
        return False

    def plain_entry(self, o) -> bool:
        """A cell's value at a nested function's entry, where it holds only new arrays."""
        return o is not TOP and o[0] == "entry" and self.plain_cell(o[2])

    def plain_cell(self, var) -> bool:
        """A cell that holds only new arrays and numbers (what ``cell_write`` saw so far)."""
        if var not in self.cells or var in self.number_cells:
            return var in self.number_cells
        held = self.cell_values.get(var, frozenset())
        return TOP not in held and not (var[0] in self.funcs and var in self.funcs[var[0]].params)

    def may_be_sequence(self, o) -> bool:
        """May the object ``o`` be a list or a tuple (whose sum with another holds elements)?
        Not one made by arithmetic on arrays or numbers, nor a parameter of the entry function
        known (from its argument) to be an array or a number."""
        kind = o[0]
        if kind in _ENTRY_KINDS and self.plain_cell(o[2]):
            return False
        if kind == "site":
            return o in self.sequences
        if kind == "call":
            return o[2] in self.sequences or o[2][0] != "site"
        if kind in _ENTRY_KINDS:
            var = o[2]
            if var[0] == "" and var[1] in self.arg_kinds:
                return "other" in self.arg_kinds[var[1]]
            if var[0] is None and var[1] in self.globals:
                return isinstance(self.globals[var[1]], (list, tuple))
        return True

    def reach(self, objs, state) -> frozenset:
        return _reach(objs, state.heap)

    def contents(self, val: Val, state) -> frozenset:
        out = set()
        for o in val.objs:
            out |= state.heap.get(o, frozenset())
        return self.reach(out, state)

    def _points_to(self, f: _Func):
        key = f.key
        state = _State(bound=frozenset(f.params))
        for p in f.params:
            # (a function used as a value, called by anyone with anything: its entry objects
            # all may share, and its callers hold them -- ``_relations`` -- as the entry
            # function's; a call of it by name maps them to what it is given)
            e, c = _entry(key, p), _contents(key, p)
            state.env[p] = Val(frozenset({e}))
            state.heap[e] = frozenset({c})
            state.heap[c] = frozenset({c})
        self._ret, self._heap_out = EMPTY, {}
        self._block(f, f.fdef.body, state)
        # what a caller can see of it: from the result and from what it was given
        roots = set(self._ret.objs) | _objs_of(self._ret.elts)
        roots |= {o for o in self._heap_out if o[0] in _ENTRY_KINDS}
        keep = _reach(roots, self._heap_out)
        heap_out = {o: t for o, t in self._heap_out.items() if o in keep}
        return self._ret, heap_out

    def _block(self, f, stmts, state):
        """Run ``stmts`` from ``state``; the state at their end, or None if they all return."""
        for s in stmts:
            if state is None:
                return None
            if isinstance(s, A.If):
                a = self._block(f, s.body, state.copy())
                b = self._block(f, s.orelse, state.copy())
                state = a if b is None else b if a is None else a.join(b)
            elif isinstance(s, A.Return):
                val = EMPTY if s.value is None else self.value(f, state, s.value)
                self._ret = _join(self._ret, val)
                for o, t in state.heap.items():
                    t = t - _initial_edges(o)
                    if t:
                        old = self._heap_out.get(o)
                        self._heap_out[o] = t if old is None else old | t
                return None
            else:
                self._statement(f, s, state)
                if self._track and (
                    self._track[1] is None or self.order(f)[id(s)] <= self._track[1]
                ):
                    ever, heap = self.ever[self._track[0]]
                    for v, val in state.env.items():
                        old = ever.get(v)
                        ever[v] = val if old is None else _join(old, val)
                    for o, t in state.heap.items():
                        heap[o] = heap.get(o, frozenset()) | t
        return state

    def _statement(self, f, s, state) -> None:
        key = f.key
        m = mutation(s) if not getattr(self.unit, "emitted", False) else None
        if m is not None:
            self.updates.append((f, s, m, state.copy()))
        if isinstance(s, A.Assign):
            u = anno.getanno(s, anno.AUG)
            if u is not None:
                self.updates.append((f, s, u, state.copy()))
            target = s.targets[0]
            value = s.value
            if isinstance(target, (A.Subscript, A.Attribute)):
                holder = self.value(f, state, target.value)
                new = self.value(f, state, value).objs
                if (target.value.id, getattr(value, "id", None)) == self._stored:
                    state.add_heap(holder.objs, new)  # `x[i] op= v`: the entry replaced
                else:
                    self.add_entries(state, holder.objs, new)
                return
            self._stored = None
            if u is not None and u.container is not None:
                self._stored = (u.container, u.target)
            val = self.expression(f, s, value, state)
            if u is not None:  # Python may have changed the operand's value in place
                val = Val(val.objs | self.value(f, state, A.name(u.operand)).objs)
            self.bind(f, state, target, val, value)
        elif isinstance(s, A.Expr):
            self.expression(f, s, s.value, state)
        elif isinstance(s, A.FunctionDef):
            site = self.site(key, s)
            self.closures[site] = self.scopes.keys[id(s)]
            state.env[(key, s.name)] = Val(frozenset({site}))
            state.bound = state.bound | {(key, s.name)}

    def bind(self, f, state, target, val: Val, value=None) -> None:
        key = f.key
        if isinstance(target, A.Name):
            owner = self.var(key, target.id)
            if owner in self.cells and owner not in self.number_cells:
                self.cell_write(owner, val)
            v = (key, target.id)
            state.env[v] = val
            state.bound = state.bound | {v}
            for g in list(state.same):  # v is no longer a copy of anything
                if v in state.same[g]:
                    state.same[g] = state.same[g] - {v}
            state.same.pop(v, None)
            if isinstance(value, A.Name):
                src = self.var(key, value.id)
                group = state.same.get(src, frozenset()) | {src}
                state.same[v] = group
                for w in group:
                    state.same[w] = (state.same.get(w, frozenset()) | {v}) - {w}
            return
        elts = target.elts
        if val.elts is not None and len(val.elts) == len(elts):
            parts = list(val.elts)
        else:
            every = Val(self.reach(val.objs, state))
            parts = [every] * len(elts)
        for e, part in zip(elts, parts):
            if isinstance(e, A.Starred):
                e = e.value
            if isinstance(e, A.Name):
                self.bind(f, state, e, part)

    def cell_write(self, cell, val: Val) -> None:
        """``cell = value`` somewhere: what the cell may hold grows (TOP unless every object is
        a new array or number, which means the same wherever it is read)."""
        objs = set(val.objs) | _objs_of(val.elts)
        # (the cell's own value, read at a nested function's entry: what it holds already)
        objs = {o for o in objs if not (o is not TOP and o[0] in _ENTRY_KINDS and o[2] == cell)}
        if not all(self.is_plain(o) for o in objs):
            objs = {TOP}
        old = self.cell_values.get(cell, frozenset())
        if not objs <= old:
            self.cell_values[cell] = old | objs
            self.cell_sites |= {_site_of(o) for o in objs}

    def is_plain(self, o) -> bool:
        """A new array or number made at a site (or returned from one by a call)."""
        return _site_of(o) in self.plain

    def expression(self, f, s, e, state) -> Val:
        """The value of a normalized right-hand side (and its effects on the heap)."""
        key = f.key
        if isinstance(e, (A.Name, A.Constant)):
            return self.value(f, state, e)
        if isinstance(e, A.BinOp):
            site = self.site(key, s)
            self.fresh.add(site)
            held = frozenset()
            vals = [self.value(f, state, x) for x in (e.left, e.right)]
            # (an array or a number joins no list: `a + lst` is an array or an error)
            joins = isinstance(e.op, A.Mult) or not any(
                v.objs and all(self.is_plain(o) or self.plain_entry(o) for o in v.objs)
                for v in vals
            )
            if isinstance(e.op, (A.Add, A.Mult)) and joins:  # lists and tuples joined, repeated
                for val in vals:
                    if any(self.may_be_sequence(o) for o in val.objs):
                        held |= self.contents(val, state)
                if held:
                    state.add_heap({site}, held)
                    self.sequences.add(site)
                    self.duplicates.add(site)  # [a] * 2 holds a twice
            if not held and not isinstance(e.op, A.BitOr):  # (`d1 | d2`: a dict of d1's values)
                self.plain.add(site)
            return Val(frozenset({site}))
        if isinstance(e, (A.UnaryOp, A.Compare)):
            site = self.site(key, s)
            self.plain.add(site)
            self.fresh.add(site)
            return Val(frozenset({site}))
        if isinstance(e, A.JoinedStr):
            return Val(frozenset({self.site(key, s)}))
        if isinstance(e, A.Attribute):
            if e.attr in IMMUTABLE_ATTRIBUTES:
                return Val(frozenset({self.site(key, s)}))
            return Val(self.reach(self.value(f, state, e.value).objs, state))
        if isinstance(e, A.Subscript):
            base = self.value(f, state, e.value)
            i = e.slice
            if (
                base.elts is not None
                and isinstance(i, A.Constant)
                and type(i.value) is int
                and -len(base.elts) <= i.value < len(base.elts)
            ):
                return base.elts[i.value]
            return Val(self.reach(base.objs, state))
        if isinstance(e, (A.Tuple, A.List, A.Set)):
            site = self.site(key, s)
            self.sequences.add(site)
            self.fresh.add(site)
            vals = [self.value(f, state, x) for x in e.elts]
            for v in vals:
                self.add_entries(state, {site}, v.objs)
            starred = any(isinstance(x, A.Starred) for x in e.elts)
            elts = tuple(vals) if isinstance(e, A.Tuple) and not starred else None
            return Val(frozenset({site}), elts)
        if isinstance(e, A.Dict):
            site = self.site(key, s)
            self.fresh.add(site)
            for k, v in zip(e.keys, e.values):
                val = self.value(f, state, v)
                if k is None:
                    self.duplicates.add(site)
                    state.add_heap({site}, self.reach(val.objs, state))
                else:
                    self.add_entries(state, {site}, val.objs)
            return Val(frozenset({site}))
        if isinstance(e, A.Call):
            return self.call(f, s, e, state)
        return Val(frozenset({self.site(key, s)}))  # an f-string, an opaque expression

    def call(self, f, s, call, state) -> Val:
        key = f.key
        site = frozenset({self.site(key, s)})
        kind = anno.getanno(call.func, anno.CALLEE_KIND)
        args = [self.value(f, state, a) for a in call.args]
        args += [self.value(f, state, k.value) for k in call.keywords]
        reach_args = (
            frozenset().union(*(self.reach(a.objs, state) for a in args)) if args else frozenset()
        )
        g = self.local_callee(key, call)
        if g is not None:
            return self.local_call(f, s, call, g, state)
        given = reach_args
        if kind in ("dynamic", "method"):
            given = given | self.reach(
                self.value(f, state, call.func.value if kind == "method" else call.func).objs, state
            )
        self.given[id(s)] = (f.key, given)
        if kind == "user":  # (its last pass's: a fixpoint's)
            self.user_calls[id(call)] = (f, s, call, args, state.copy())
        if kind == "method":
            receiver = self.value(f, state, call.func.value)
            attr = call.func.attr
            if attr in FRESH_METHODS:
                return Val(site)
            if attr in SHALLOW_METHODS:
                state.add_heap(site, self.contents(receiver, state))
                return Val(site)
            self.add_entries(state, receiver.objs, reach_args)
            if attr in CONTAINER_MUTATORS and attr in NONE_METHODS:
                return Val(site)
            return Val(site | self.reach(receiver.objs, state) | reach_args)
        if kind in ("primitive", "nondiff"):
            fn = anno.getanno(call.func, anno.CALLEE)
            if _fresh_callee(fn, call):
                if isinstance(fn, numpy.ufunc) or fn in _NEW_ARRAYS:
                    self.plain |= site
                self.fresh |= site
                return Val(site)
            state.add_heap(site, reach_args)
            return Val(site | reach_args)
        # a user's function, a function value: it may return what it was given, and store any
        # of its arguments into another
        if kind == "dynamic":
            fobjs = self.reach(self.value(f, state, call.func).objs, state)
            reach_args = reach_args | fobjs | self.closure_reads(f, state, fobjs)
        elif any(o in self.closures for o in reach_args):  # given a closure: it may return
            reach_args = reach_args | self.closure_reads(f, state, reach_args)  # what that reads
        state.add_heap(reach_args, reach_args)
        return Val(site | reach_args | {ESCAPED})

    def closure_reads(self, f, state, fobjs) -> frozenset:
        """What the closures among ``fobjs`` may return or store: the values of the variables
        they read (``g = lambda: acc`` ... ``v = fs[0](v)`` makes ``v`` the very ``acc``) --
        of every variable a function used as a value reads where the function is not known."""
        keys = {self.closures[o] for o in fobjs if o in self.closures}
        free = set().union(*(self.free[k] for k in keys)) if keys else set()
        if any(o is TOP or o is ESCAPED or o[0] in _ENTRY_KINDS for o in fobjs):
            free |= self.escaped
        objs = frozenset()
        for v in free:
            if v[0] == f.key or self.visible(f.key, v):
                objs |= self.reach(self.var_value(f, state, v).objs, state)
        return objs

    def local_call(self, f, s, call, g, state) -> Val:
        callee = self.funcs[g]
        images = {}
        names = A.arg_names(callee.fdef.args)
        if any(isinstance(a, A.Starred) for a in call.args) or callee.fdef.args.vararg:
            every = Val(
                frozenset().union(
                    *(self.reach(self.value(f, state, a).objs, state) for a in call.args),
                    *(self.reach(self.value(f, state, k.value).objs, state) for k in call.keywords),
                )
            )
            for p in callee.params:
                images[p] = every
        else:
            for p, a in zip(names, call.args):
                images[(g, p)] = self.value(f, state, a)
            for k in call.keywords:
                if k.arg in names:
                    images[(g, k.arg)] = self.value(f, state, k.value)
            for p in callee.params:  # a default: made where the function was defined
                images.setdefault(p, Val(frozenset({self.site(f.key, s, 1)})))
        for v in callee.entry_vars:
            if v not in images:
                images[v] = self.var_value(f, state, v)
        self.calls.append(_Call(f.key, g, images, state.copy(), set(), s))
        # its result and what it stored, in the caller's objects
        k = self.sites.setdefault((id(s), "call"), len(self.sites))
        self.call_sites[k] = (f.key, g)

        # what a parameter's contents reach in the caller's heap, while the heap is unchanged
        # (a callee that stores much reads them once for each object it stores into)
        reached: dict = {}

        def image(o):
            kind = o[0]
            if kind == "entry":
                return images.get(o[2], Val(frozenset({TOP}))).objs
            if kind == "contents":
                r = reached.get(o[2])
                if r is None:
                    r = self.reach(images.get(o[2], Val(frozenset({TOP}))).objs, state)
                    reached[o[2]] = r
                return r
            if kind == "site":
                return frozenset({("call", k, o)})
            if kind == "call":
                return frozenset({("call", k, o[2])})
            return frozenset({o})  # TOP, ESCAPED

        def mapped(val: Val) -> Val:
            objs = frozenset().union(*(image(o) for o in val.objs)) if val.objs else frozenset()
            elts = None if val.elts is None else tuple(mapped(x) for x in val.elts)
            return Val(objs, elts)

        for o, targets in callee.heap_out.items():
            into = frozenset().union(*(image(t) for t in targets))
            if o in self.duplicates:
                self.duplicates |= {x for x in image(o) if x is not TOP}
            if self.add_entries(state, image(o), into):
                reached.clear()
        try:
            return mapped(callee.ret)
        finally:
            mapped = None  # (it calls itself: a reference cycle, which kept the tree alive until a collection)

    # ---------------------------------------------------------------- relations between entries

    def overlap(self, f: _Func, a, b, at=None) -> bool:
        """May a value made of the objects ``a`` share memory with one made of ``b`` (in ``f``,
        at the statement ``at`` -- where ``b`` is read after it --, or anywhere in it)?"""
        if not a or not b:
            return False
        if a & _UNKNOWN or b & _UNKNOWN:
            if a & _UNKNOWN and b & _UNKNOWN:
                return True
            top, other = (a, b) if a & _UNKNOWN else (b, a)
            # anything, or what unknown code may hold: never an object that no such code can
            # reach (``confined``) -- up to ``at``: given away only later, it is what the
            # variable holds then that unknown code gets, after the change, in Python and here
            upto = None if at is None else self.order(f).get(id(at))
            if not all(self.confined(f, o, upto=upto) for o in other):
                return True
            a, b = top - _UNKNOWN, other
            if not a:
                return False
        if a & b:
            return True
        if self.cell_sites:
            # what a cell holds is one object wherever it is read: a caller sees it as what a
            # call returned (``("call", k, site)``), the function that made it as the site
            sa = {_site_of(o) for o in a} & self.cell_sites
            if sa and sa & {_site_of(o) for o in b}:
                return True
        if not f.related:
            return False
        ea = [o[::2] for o in a if o[0] in _ENTRY_KINDS and o[1] == f.key]
        eb = [o[::2] for o in b if o[0] in _ENTRY_KINDS and o[1] == f.key]
        return any(frozenset((x, y)) in f.related for x in ea for y in eb if x != y)

    def order(self, f: _Func) -> dict:
        """id(statement) -> its place in ``f``'s statements (``statements``' order: no
        statement runs in an activation before one placed earlier, since loops are calls)."""
        found = self._order.get(f.key)
        if found is None:
            found = self._order[f.key] = {id(st): i for i, st in enumerate(statements(f.fdef.body))}
        return found

    def confined(self, f: _Func, o, assumed=None, upto=None) -> bool:
        """Is ``o`` an object that no code this analysis cannot see can reach during this
        activation of ``f``: a new array or number made here, or a parameter's value where every
        call of ``f`` (a local function called by name only) gives it such an object -- and
        every variable that may hold it (or a view of it) is used only in arithmetic,
        primitives' calls, copies, branches' tests, returns and calls of local functions that
        keep their parameter confined the same way: never passed to a user function or a
        function value, stored into a container or a cell, or read by a nested function? Such
        an object is none of what an unknown call returns (``TOP``): that code could only have
        got it from here. (An activation's returns come after it.) With ``upto``, only the
        statements placed up to that one (``order``) may give it away: those that have run."""
        if o in _UNKNOWN:
            return False
        key = (f.key, o, upto)
        known = self._confined_memo.get(key)
        if known is not None:
            return known
        assumed = set() if assumed is None else assumed
        if key in assumed:  # (a recursive call: a greatest fixpoint)
            return True
        assumed.add(key)
        answer = self._confined(f, o, assumed, upto)
        assumed.discard(key)
        if not answer or not assumed:  # (a True under assumptions is not final)
            self._confined_memo[key] = answer
        return answer

    def _confined(self, f: _Func, o, assumed: set, upto=None) -> bool:
        if o[0] == "kept":  # what a caller gave ``f`` for ``o[2]`` stays in it (whatever
            # other callers give: ``_kept``)
            if f.escapes:
                return False
            entry = _entry(f.key, o[2])
            ever, heap = self.values_ever(f, upto)
            holders = {v for v, val in ever.items() if entry in _reach(val.objs, heap)}
            return self._confined_in(f, holders | {o[2]}, assumed, upto)
        if o[0] == "call":  # what a local function returned: confined there, and here
            made = self.call_sites.get(o[1])
            if made is None or made[0] != f.key:
                return False
            if not self.confined(self.funcs[made[1]], o[2], assumed):
                return False
        elif o[1] != f.key:
            return False
        elif o[0] == "site":
            if o not in self.fresh:
                return False
        elif o[0] == "entry" and o[2] in f.entry_vars and f.key and not f.escapes:
            for c in self.calls:
                if c.callee != f.key:
                    continue
                h = self.funcs[c.caller]
                image = self.entry_image(h, c, ("entry", o[2]))  # (none: a number)
                # (``f`` runs within the call: the caller's later statements have not run)
                at = self.order(h).get(id(c.stmt))
                if not all(self.confined(h, x, assumed, upto=at) for x in image):
                    return False
        else:
            return False
        ever, heap = self.values_ever(f, upto)
        holders = {v for v, val in ever.items() if o in _reach(val.objs, heap)}
        if o[0] == "entry":
            holders.add(o[2])
        return self._confined_in(f, holders, assumed, upto)

    def _confined_in(self, f: _Func, holders: set, assumed: set, upto=None) -> bool:
        # (a variable of an enclosing function the function reads: its entry value's holder)
        if any((v[0] != f.key and v not in f.entry_vars) or v in self.cells for v in holders):
            return False
        for g, other in self.funcs.items():  # read by a nested function (a closure): one
            # called by name only (a loop's) keeps it if its entry value stays confined there;
            # one defined after ``upto`` does not exist yet, nor do the functions inside it
            if g == f.key or self.defined_after(f, g, upto):
                continue
            for v in holders & set(other.entry_vars):
                if other.escapes or not self.confined(other, _kept(g, v), assumed):
                    return False
        names = {v[1] for v in holders}
        for i, st in enumerate(statements(f.fdef.body)):
            if upto is not None and i > upto:
                break
            # (a holder assigned anew lets go of the object: only reads can give it away)
            used = {
                n.id
                for n in self._statement_nodes(st)
                if isinstance(n, A.Name) and not isinstance(n.ctx, A.Store)
            }
            if not used & names:
                continue
            if isinstance(st, A.FunctionDef):
                return False  # read by a nested function (or its defaults)
            if isinstance(st, A.Assign) and any(
                self.var(f.key, n.id) in self.cells
                for n in A.walk(st.targets[0])
                if isinstance(n, A.Name)
            ):
                return False  # stored into a variable nested functions share
            if _stays_local(st) or isinstance(st, A.Return):
                continue
            call = st.value if isinstance(st, (A.Assign, A.Expr)) else None
            g = self.local_callee(f.key, call)
            if g is None or self.funcs[g].escapes or call.keywords:
                return False
            if isinstance(st, A.Assign) and not isinstance(st.targets[0], (A.Name, A.Tuple)):
                return False
            params = self.funcs[g].params
            for i, arg in enumerate(call.args):
                if not (isinstance(arg, A.Name) and arg.id in names):
                    continue
                if i >= len(params) or isinstance(arg, A.Starred):
                    return False
                if not self.confined(self.funcs[g], _kept(g, params[i]), assumed):
                    return False
        return True

    def defined_after(self, f: _Func, g: str, upto) -> bool:
        """Is the function ``g`` (or the function of ``f`` it is nested in) defined by a
        statement of ``f`` placed after ``upto`` (``order``)?"""
        if upto is None:
            return False
        while self.scopes.parent.get(g) not in (f.key, None):
            g = self.scopes.parent[g]
        if self.scopes.parent.get(g) != f.key:
            return False
        place = self.order(f).get(id(self.scopes.node[g]))
        return place is not None and place > upto

    def entry_image(self, h: _Func, c: _Call, o) -> frozenset:
        """What the callee's entry object ``o`` (``(kind, var)``) is, in the caller: the
        argument's objects for ``entry``, all they hold for ``contents``."""
        val = c.images.get(o[1], Val(frozenset({TOP})))
        if o[0] == "entry":
            return val.objs
        return self.contents(val, c.state)

    def _relations(self) -> None:
        """Which entry objects of each function may share (``related``: pairs of ``(kind,
        var)``), and which of its callers' variables may hold them after the call
        (``holders``): to a fixpoint over the calls."""
        for f in self.funcs.values():
            every = f.key == "" or f.escapes  # called by someone unknown, with anything
            if every:
                objs = [
                    (kind, v)
                    for v in f.entry_vars
                    if not self.irrelevant_global(v)
                    for kind in _ENTRY_KINDS
                ]
                f.related = {frozenset((a, b)) for a in objs for b in objs if a[1] != b[1]}
            if f.escapes:
                f.holders = {(kind, v): {"?"} for v in f.entry_vars for kind in _ENTRY_KINDS}
            elif f.key == "" and self.held:  # a caller reads these arguments after the call
                f.holders = {
                    (kind, v): {"?"} for v in f.params if v[1] in self.held for kind in _ENTRY_KINDS
                }
        # only the functions with an update, and those that call them, need answers
        # (and those with a call of a user function that may change its arguments: its held
        # arguments read who holds them)
        needed = {f.key for f, _, _, _ in self.updates}
        needed |= {f.key for f, _, _, _, _ in self.user_calls.values()}
        grew = True
        while grew:
            grew = False
            for c in self.calls:
                if c.callee in needed and c.caller not in needed:
                    needed.add(c.caller)
                    grew = True
        work = []  # (callee, caller, entry objects, their images, live reaches, call statement)
        for c in sorted(self.calls, key=lambda c: _depth(self.scopes, c.caller)):
            g, h = self.funcs[c.callee], self.funcs[c.caller]
            if g.escapes or c.callee not in needed:
                continue
            objs = sorted(((kind, v) for v in g.entry_vars for kind in _ENTRY_KINDS), key=repr)
            image = {o: self.entry_image(h, c, o) for o in objs}
            objs = [o for o in objs if image[o]]
            live = {n: self.reach(self.var_value(h, c.state, n).objs, c.state) for n in c.live}
            work.append((g, h, objs, image, {n: r for n, r in live.items() if r}, c.stmt))
        changed = True
        while changed:
            changed = False
            for g, h, objs, image, live, at in work:
                for i, a in enumerate(objs):
                    for b in objs[i + 1 :]:
                        if a[1] != b[1]:
                            pair = frozenset((a, b))
                            if pair not in g.related and self.overlap(h, image[a], image[b], at):
                                g.related.add(pair)
                                changed = True
                for o in objs:
                    found = {n for n, r in live.items() if self.overlap(h, image[o], r, at)}
                    for e, hold in h.holders.items():
                        if hold and self.overlap(h, image[o], frozenset({(e[0], h.key, e[1])}), at):
                            found |= hold
                    old = g.holders.get(o, set())
                    if not found <= old:
                        g.holders[o] = old | found
                        changed = True

    # ---------------------------------------------------------------- the answer

    def _decide(self, f: _Func, s, u: Update, state: _State):
        key = f.key
        operand = self.var(key, u.operand)
        objs = self.var_value(f, state, operand).objs
        if not objs:
            return None
        skip = {operand, (key, u.target)}
        if u.name is not None:
            skip.add(self.var(key, u.name))
        if u.container is not None:
            skip.add(self.var(key, u.container))
        names, held = [], []
        if u.container is not None:
            # the new value replaces the entry; the container itself sees the change only in
            # another entry holding the same value (``[a] * 2``): the check counts them
            c = self.var(key, u.container)
            store = self.next.get(id(s))
            if c in self.live_after.get(id(store), ()) and any(
                self.may_hold_twice(o) for o in self.var_value(f, state, c).objs
            ):
                names.append(u.container)
        if u.mutation:
            return self._mutation_sharing(f, s, objs, skip, state)
        if TOP in objs:
            held.append(
                "a variable a nested function changes"
                if operand in self.cells
                else f"whoever calls {self.shown(f.fdef.name)} (it is used as a value)"
            )
        for n in sorted(self.live_after.get(id(s), ()) - skip, key=repr):
            other = self.reach(self.var_value(f, state, n).objs, state)
            if not self.overlap(f, objs, other, s):
                continue
            if self.visible(key, n) and self.readable(f, state, n):
                names.append(n[1])
            elif self.visible(key, n):
                held.append(f"{self.shown(n[1])} (which may not be assigned yet there)")
            else:
                held.append(f"{self.shown(n[1])} of an enclosing function")
        for e, hold in sorted(f.holders.items(), key=repr):
            if not hold or not self.overlap(f, objs, frozenset({(e[0], key, e[1])}), s):
                continue
            for h in sorted(hold, key=repr):
                if h in skip:
                    continue  # the variable itself, read by a caller: it sees what it holds
                if h == "?":
                    held.append(f"whoever calls {self.shown(f.fdef.name)}")
                elif self.visible(key, h) and self.readable(f, state, h):
                    if h[1] not in names:
                        names.append(h[1])
                else:
                    held.append(self.caller_variable(h[1], f.fdef.name))
        # the entry function's argument (or a global): off the differentiated path Python's own
        # operation changes it where the caller sees it, as Python does
        callers = key == "" and any(o[0] in _ENTRY_KINDS for o in objs)
        if not names and not held and not callers:
            return None
        must = sorted(n for n in names if (key, n) in state.same.get(operand, frozenset()))
        sharing = Sharing(names=names, held="; ".join(dict.fromkeys(held)) or None, must=must)
        if u.mutation:
            return sharing if names or held else None
        self._confinement(f, s, objs, sharing)
        if not names and not held and not sharing.confined:
            return None  # the rebinding: nothing else reads it, a derivative may
        return sharing

    def _mutation_sharing(self, f: _Func, s, objs, skip, state):
        """Who else may read the container a change in place (``xs.append(v)``) changes, by
        direct evidence -- a variable whose value is or contains the very object, here or, for
        an object the function was given, at a call of it -- so that what may be anything (a
        cell, TOP) makes no suspect of everything: the check compares values when it runs, and
        refuses only where one really holds it."""
        key = f.key
        objs = frozenset(o for o in objs if o is not TOP)
        names, held = [], []
        for n in sorted(self.live_after.get(id(s), ()) - skip, key=repr):
            if objs & self.reach(self.var_value(f, state, n).objs, state):
                if self.visible(key, n) and self.readable(f, state, n):
                    names.append(n[1])
                else:
                    held.append(self.shown(n[1]))
        # an object it was given: its callers' variables that hold it and read it after
        todo = [(f, objs)]
        seen = set()
        while todo:
            g, given = todo.pop()
            entries = [o for o in given if o[0] in _ENTRY_KINDS and o[1] == g.key]
            if not entries or g.key in seen:
                continue
            seen.add(g.key)
            if g.escapes or (g.key == "" and any(o[2][1] in self.held for o in entries)):
                held.append(f"whoever calls {self.shown(g.fdef.name)}")
                continue
            for c in self.calls:
                if c.callee != g.key:
                    continue
                h = self.funcs[c.caller]
                image = frozenset().union(
                    *(self.entry_image(h, c, (o[0], o[2])) for o in entries)
                ) - {TOP}
                for n in sorted(c.live - skip, key=repr):
                    if image & self.reach(self.var_value(h, c.state, n).objs, c.state):
                        if self.visible(key, n) and self.readable(f, state, n):
                            names.append(n[1])
                        else:
                            held.append(self.caller_variable(n[1], g.fdef.name))
                todo.append((h, image))
        if not names and not held:
            return None
        names = list(dict.fromkeys(names))
        return Sharing(names=names, held="; ".join(dict.fromkeys(held)) or None, must=[])

    def shown(self, name: str) -> str:
        return self.unit.namer.shown(name)

    def caller_variable(self, name: str, callee: str) -> str:
        """A message's words for the variable ``name`` of a function that calls ``callee``."""
        if callee in self.unit.namer.meaning:  # a loop's function: the code around the loop
            return f"{self.shown(name)} (outside {self.unit.namer.meaning[callee]})"
        return f"{self.shown(name)} of the function that calls `{callee}`"

    def values_ever(self, f, upto=None):
        """(variable -> every value it holds anywhere in ``f``, the heap of all its points):
        one more pass over ``f`` (its summaries are final), which records them. With ``upto``:
        at the points after the statements placed up to that one (``order``) only; at most
        ``_UPTO_PASSES`` such passes a function (then everywhere: a superset)."""
        if upto is not None and (f.key, upto) not in self.ever:
            self._upto_passes[f.key] = self._upto_passes.get(f.key, 0) + 1
            if self._upto_passes[f.key] > _UPTO_PASSES:
                upto = None
        k = f.key if upto is None else (f.key, upto)
        if k not in self.ever:
            saved = self.calls, self.updates
            self.calls, self.updates = [], []
            self._track, self.ever[k] = (k, upto), ({}, {})
            try:
                self._points_to(f)
            finally:
                self._track = None
                self.calls, self.updates = saved
        return self.ever[k]

    def readable(self, f, state, var) -> bool:
        """Is ``var`` surely assigned at ``state`` (so the check may read it)? A local variable
        assigned on every path there; a global or a closure's variable of the entry function
        that exists; an enclosing function's variable assigned at every call of ``f``."""
        if var[0] == f.key:
            return var in state.bound
        return var in self.outer_bound(f.key)

    def outer_bound(self, key) -> frozenset:
        """The outer variables surely assigned whenever the function ``key`` runs: the entry
        function's globals and closure variables that exist, and what is assigned at every call
        of it (a greatest fixpoint over the calls)."""
        if not hasattr(self, "_outer_bound"):
            every = frozenset(v for f in self.funcs.values() for v in f.entry_vars)
            known = frozenset(v for v in every if v[0] is None and self._exists(v[1]))
            out = {k: every for k in self.funcs}
            for k, f in self.funcs.items():
                if not k or f.escapes:
                    out[k] = known
            changed = True
            while changed:
                changed = False
                for k, f in self.funcs.items():
                    if not k or f.escapes:
                        continue
                    new = known
                    sites = [c for c in self.calls if c.callee == k]
                    if sites:
                        new = frozenset.intersection(
                            *(frozenset(c.state.bound) | out[c.caller] for c in sites)
                        )
                    new = (new | known) & out[k]
                    if new != out[k]:
                        out[k], changed = new, True
            self._outer_bound = out
        return self._outer_bound[key]

    def _exists(self, name) -> bool:
        """Does the entry function see a value under ``name`` (a global, a builtin, a closure
        variable already assigned)?"""
        fn = self.unit.fn
        cells = dict(zip(fn.__code__.co_freevars, fn.__closure__ or ()))
        if name in cells:
            try:
                _ = cells[name].cell_contents
            except ValueError:  # an empty cell: not assigned yet
                return False
            return True
        return name in self.globals or hasattr(builtins, name)

    def _confinement(self, f, s, objs, sharing: Sharing) -> None:
        """May the update run as Python's own in-place operation, where no derivative reads a
        variable that may hold the value (``python_may_run_in_place``)? If the value was made in
        this activation, or is an argument or a global of the entry function, and stays in the
        function: then record the statements that name a variable holding it (``mentions``:
        none may compute an active value), and the parameters and globals that may hold it
        only if the caller passed one array twice (``related``: checked at run time)."""
        key = f.key
        if objs & _UNKNOWN or sharing.held:
            return
        for o in objs:
            if not (o[1] == key and (o[0] == "site" or (key == "" and o[0] in _ENTRY_KINDS))):
                return
        ever, heap = self.values_ever(f)
        values = dict(ever)
        for v in f.entry_vars:
            if v not in values and not self.irrelevant_global(v):
                values[v] = Val(frozenset({_entry(key, v)}))
                heap = {**heap, _entry(key, v): frozenset({_contents(key, v)})}
        direct, related = set(), set()
        for v, val in values.items():
            reach = _reach(val.objs, heap)
            if objs & reach:
                direct.add(v)
            elif self.overlap(f, objs, reach):
                related.add(v)
        assigned = {
            n.id
            for n in self._own_nodes(f.fdef)
            if isinstance(n, A.Name) and isinstance(n.ctx, A.Store)
        }
        own_names = {n.id for n in self._own_nodes(f.fdef) if isinstance(n, A.Name)}
        for v in related:  # the entry value, unchanged, named here: the check can compare it
            if v[1] in assigned or not self.visible(key, v) or v[1] not in own_names:
                return
        names = {v[1] for v in direct}
        mentions = []
        for st in statements(f.fdef.body):
            if isinstance(st, A.FunctionDef):
                if names & set(A.names_in(st)):
                    return  # read by a nested function
                continue
            used = {n.id for n in self._statement_nodes(st) if isinstance(n, A.Name)}
            if not used & names:
                continue
            if not _stays_local(st):
                return
            mentions.append(st)
        sharing.confined = True
        sharing.mentions = mentions
        sharing.related = sorted(v[1] for v in related)


def mutation(s) -> Update | None:
    """``xs.append(v)`` (a method that changes its object) or ``d[k] = v`` / ``o.a = v`` on a
    name: the change in place, as an ``Update`` (``mutation``), or None."""
    if isinstance(s, A.Expr) and isinstance(s.value, A.Call):
        f = s.value.func
        if (
            isinstance(f, A.Attribute)
            and isinstance(f.value, A.Name)
            and f.attr in MUTATING_METHODS
            and anno.getanno(f, anno.CALLEE_KIND) == "method"
        ):
            name = f.value.id
            return Update(name, name, "." + f.attr, f.attr, s, s.lineno, mutation=True)
    if isinstance(s, A.Assign) and not anno.hasanno(s, anno.AUG):
        t = s.targets[0]
        if isinstance(t, (A.Subscript, A.Attribute)) and isinstance(t.value, A.Name):
            op = "[]=" if isinstance(t, A.Subscript) else ".="
            name = t.value.id
            return Update(name, name, op, "__setitem__", s, s.lineno, mutation=True)
    return None


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


def analyze(unit) -> dict:
    """``id(statement) -> Sharing | None`` for every update of ``unit.tree`` (see the module
    docstring); each call of a user function that may change its arguments in place gets the
    arguments its caller may read after it (``anno.HELD_ARGS``)."""
    # (the changes of containers in place in emitted code are the user's, checked when it
    # was emitted: its continuations, functions used as values, would make them all suspects)
    changes = not getattr(unit, "emitted", False)
    # (any order: ``push_children``'s stack, for speed -- not ``A.walk``'s queue of every
    # context and operator too; annotations and calls are on neither)
    stack = [unit.tree]
    while stack:  # an update, or a call that may make one: analyse
        n = stack.pop()
        push_children(n, stack)
        if anno.hasanno(n, anno.AUG) or (
            changes and isinstance(n, A.stmt) and mutation(n) is not None
        ):
            return _Analysis(unit).run()
        if (
            isinstance(n, A.Call)
            and anno.getanno(n.func, anno.CALLEE_KIND) == "user"
            and may_change_arguments(anno.getanno(n.func, anno.CALLEE), unit.ctx)
        ):
            return _Analysis(unit).run()
    return {}


HELD = "*held*"  # the key of the specialization (kinds) that names a callee's held parameters


def held_parameters(arg_kinds) -> frozenset:
    """The parameters whose values the caller may read after the call (``HELD`` in the
    specialization a unit is made for: ``("held:p", ...)``)."""
    return frozenset(h[5:] for h in (arg_kinds or {}).get(HELD, ()))


def held_entry(params) -> tuple:
    """The specialization's entry for ``params`` held by the caller (see ``held_parameters``)."""
    return (HELD, tuple(sorted(f"held:{p}" for p in params)))


# function -> (its code, may it change an argument in place): held weakly, asked again when the
# code is replaced (a reload, ``__code__`` swapped)
_MUTATES = weakref.WeakKeyDictionary()
MUTATING_METHODS = frozenset(
    {"append", "extend", "insert", "update", "setdefault", "pop", "popitem", "remove", "clear"}
    | {"sort", "reverse", "fill", "resize", "itemset", "put", "setflags", "add", "discard"}
)


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


def python_may_run_in_place(sharing: Sharing, stmt) -> bool:
    """May the update ``stmt`` (its ``Sharing`` computed before Activity) run as Python's own
    in-place operation? Where the value was made and stays in the function, the update's own
    value does not depend on the inputs, and no statement naming a variable that may hold it
    computes an active value: no derivative reads it, so changing it in place changes only what
    Python changes. (Read after Activity.)"""
    if not sharing.confined or anno.getanno(stmt, anno.ACTIVE) or anno.getanno(stmt, anno.VARIED):
        return False  # (varied: its value depends on the inputs, another name may carry it on)
    return not any(anno.getanno(st, anno.ACTIVE) for st in sharing.mentions)


def certain_refusal(sharing: Sharing, kind) -> str | None:
    """The alias that surely shares an array, for a refusal at the user's line when the value is
    surely an array (``kind`` from Kinds); else None (the run-time check decides)."""
    if sharing.must and kind and set(kind) <= {"array"}:
        return sharing.must[0]
    return None
