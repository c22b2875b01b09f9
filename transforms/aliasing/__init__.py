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

The package, one concern a module, each stating its invariant: ``tables`` (what numpy's
functions and an array's methods return), ``domain`` (abstract values, the heap, the function
tree), ``program`` (names, cells, free variables, liveness), ``points_to`` (one function's
values and summary), ``relations`` (``overlap``, ``confined``, the callers' relations),
``decide`` (the answers), ``marks`` (the records the answers are made of) and ``summaries`` (what
a user function outside the unit does to its arguments, from its source). ``_Analysis`` mixes
the four analysis modules together and runs them (``run``).

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

from .. import anno
from .. import astlib as A
from ..scoping import push_children
from .decide import Decisions
from .domain import _depth, _Func, _Scopes
from .marks import (
    HELD,
    Sharing,
    Update,
    certain_refusal,
    held_entry,
    held_parameters,
    mutation,
    python_may_run_in_place,
)
from .points_to import PointsTo
from .program import Program
from .relations import Relations
from .summaries import VALUE_CALLS, changed_parameters, may_change_arguments, may_keep_arguments
from .tables import MUTATING_METHODS, VIEWS

__all__ = [
    "HELD",
    "MUTATING_METHODS",
    "VALUE_CALLS",
    "VIEWS",
    "Sharing",
    "Update",
    "analyze",
    "certain_refusal",
    "changed_parameters",
    "held_entry",
    "held_parameters",
    "may_change_arguments",
    "may_keep_arguments",
    "mutation",
    "python_may_run_in_place",
]


class _Analysis(Program, PointsTo, Relations, Decisions):
    """One analysis of a unit: the four families share its state (the function tree, each
    function's summary, what the last passes recorded), set up here; ``run`` takes the summaries
    to a fixpoint, then the relations between entries, then the answers."""

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
