"""The unit of work the pipeline transforms: one function, specialized to its active parameters.

A ``Unit`` carries the user's function, the current program (a gast ``FunctionDef``), the namer,
the names the emitted module needs from outside (runtime helpers, numpy, the backpropagators of
called user functions), and where the source came from. Passes read and replace ``unit.tree``;
nothing else in a unit is a pass's private state.
"""

from __future__ import annotations

import builtins
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from .errors import TransformError, call_mismatch
from .naming import Namer, own_name


@dataclass
class SourceInfo:
    filename: str
    firstlineno: int  # line of the ``def`` (or lambda) in the file
    col_shift: int  # columns removed by dedent
    lines: list[str]  # the file's lines (for comments and diagnostics)

    def line(self, lineno: int | None) -> str:
        if not lineno or lineno < 1 or lineno > len(self.lines):
            return ""
        return self.lines[lineno - 1].rstrip("\n")


# What a value may be (see transforms/kinds.py): kinds are frozensets of these. A list or tuple
# is a "sequence": ``+`` joins two of them and ``*`` repeats one, where numbers add and multiply.
class _Absent:
    """No such key or attribute: what a dependency on a name that is not there expects."""

    def __repr__(self) -> str:
        return "ABSENT"


ABSENT = _Absent()
NUMBER, NPSCALAR, ARRAY, OTHER, SEQUENCE = "number", "npscalar", "array", "other", "sequence"
UNKNOWN = frozenset({NUMBER, NPSCALAR, ARRAY, OTHER, SEQUENCE})
SCALAR = frozenset({NUMBER, NPSCALAR})
NUMERIC = frozenset({NUMBER, NPSCALAR, ARRAY})  # numbers and arrays: tangents add with +
NOT_NUMERIC = frozenset({OTHER, SEQUENCE})
# Not a kind of value but of one object: the parameter is given the runtime's ``scalar_seed``,
# grad's seed continuation -- as the continuation of a backpropagator differentiated again is
# (``cpsad.grad(cpsad.grad(f))``). Resolve makes its calls calls of that function.
SEED = "seed"


# The item of a staged specialization's key that names its float parameters (``stacks``): not
# part of what the unit is to its callees -- a recursive call is a call of itself.
FLOATS = "*floats*"
# the key of the specialization (kinds) naming the fields of struct arguments that an array's
# attribute also names (``"c.size"``, ``"c.T"``: a dataclass ``c`` with a field ``size``, ``T``):
# Activity marks those reads (``anno.FIELD``), which ShiftReset reads as fields
FIELDS = "*fields*"
# the key of the specialization naming the arguments that are objects of compiled code or a
# library's class (a random generator), neither a struct nor a container: a method of one that
# no rule knows is refused where it is written (ShiftReset's ``receiver_method``), not sent to
# the dispatch as a method of yours would be
OPAQUE = "*opaque*"
# the key of the specialization naming the arguments that are functions (a closure, a function,
# a rule's, a bound method; no struct with ``__call__``): a call of one is made as it is, with
# ``check_callee`` (ShiftReset's ``plain_callee``), not through ``callee_function`` -- whose
# wrapper the next order would transform anew for each closure
CALLABLES = "*callables*"


def kinds_key(kinds: dict) -> tuple:
    """``{param: kinds}`` as a sorted, hashable key, parameters that may be "other" left out.

    Every decision made by kinds asks whether a value is surely a number, a scalar or numeric
    (``kinds.is_number``, ``is_scalar``, ``tangent.NUMERIC``), and no value computed from one
    that may be "other" (or a sequence) is: such a parameter specializes nothing, so it is left out like an
    unknown one -- a recursive function called with an object (a tree's node) and calling itself
    with one of unknown kind (``node.left``) is transformed once, not twice."""
    return tuple(
        sorted(
            (p, tuple(sorted(k))) for p, k in kinds.items() if not k & NOT_NUMERIC and p != FLOATS
        )
    )


@dataclass
class Callee:
    """A call of a user function that the emitted code makes in continuation-passing style."""

    fn: Callable
    active: tuple[str, ...]  # the callee's parameters that receive active values
    name: str  # the name the emitted code uses for the callee's backpropagator
    kinds: tuple = ()  # (parameter, kinds) its arguments are known to have
    mode: str = "reverse"  # or "forward": the callee's tangent function


def is_itself(c: Callee, fn, active: tuple, mode: str) -> bool:
    """Is the callee ``c`` the function ``fn`` itself, with the parameters ``active``
    differentiated, in ``mode`` -- specialized, maybe, to other argument kinds than ``fn``'s code
    is made for, but to nothing else (no parameters held by its caller, no shapes)? Staged code
    calls such a callee as itself: its code checks the kinds it was made for where it runs
    (Flatten's ``expect_kinds``)."""
    code = getattr(fn, "__code__", None)
    if code is None:
        return False
    n = code.co_argcount + code.co_kwonlyargcount
    n += bool(code.co_flags & 0x04) + bool(code.co_flags & 0x08)  # (*args, **kwargs)
    params = set(code.co_varnames[:n])
    return (
        c.fn is fn
        and c.active == active
        and c.mode == mode
        and all(key in params for key, _ in c.kinds)
    )


@dataclass
class LocalFunction:
    """What the passes learn about a function defined inside the transformed one."""

    name: str
    transformed: bool = False  # has a backpropagator (its result or its effects are active)
    active: tuple[str, ...] = ()  # its parameters that get adjoints
    bp_name: str = ""
    escapes: bool = False  # used as a value, not only called
    effects: bool = False  # changes active values of enclosing functions (nonlocal, list.append)
    returns_active: bool = (
        False  # returns a value active inside it (its continuation's result is read)
    )


@dataclass
class Unit:
    fn: Callable
    active: tuple[str, ...]
    ctx: Any  # transforms.context.Context
    mode: str = "reverse"  # "reverse": a backpropagator f_bp; "forward": a tangent function f_jvp
    source: SourceInfo | None = None
    tree: Any = None
    namer: Namer = field(default_factory=Namer)
    injected: dict[str, Any] = field(default_factory=dict)  # name in emitted code -> object
    callees: dict[str, Callee] = field(default_factory=dict)
    # What the transformation read of the world, so a cache can tell when it is stale: ``deps``
    # maps a dotted name as the function sees it (``np.sin``, ``helper``) to the object it named;
    # ``external`` lists ``(holder, key, object)`` read elsewhere -- an inlined helper's code,
    # defaults and globals (``holder[key]`` for a dict, else ``getattr(holder, key)``)
    deps: dict[str, Any] = field(default_factory=dict)
    external: list[tuple] = field(default_factory=list)
    locals: dict[str, LocalFunction] = field(default_factory=dict)  # nested defs, by DEF_KEY
    cells: set[str] = field(default_factory=set)  # every cell variable's name (see Resolve)
    notes: dict[str, list[str]] = field(default_factory=dict)  # stage -> header comment lines
    bp_name: str = ""
    cont_name: str = "k"
    is_entry: bool = False  # transformed for grad/vjp itself (its shift stage shows the reset)
    nested: bool = False  # code that will be transformed again (a higher or nested derivative)
    staged: bool = False  # flattened for Numba (the STAGED pipeline; see Flatten)
    staged_params: list[str] = field(default_factory=list)  # data it reads, as parameters
    # staged: a parameter standing for an attribute of a module of the user's that holds data
    # (Flatten's ``_attribute_data``) -> (the module's name, the attributes' names)
    staged_attributes: dict[str, tuple] = field(default_factory=dict)
    staged_attributes_inverse: dict[str, str] = field(default_factory=dict)  # "m.K" -> name
    stack_param: str = ""  # staged, calling itself: the parameter its first frame's address is in
    # staged: a callee compiled on its own (Recursion), by the name its code calls it -> the file
    # of its staged code, and whether it takes the first frame's address (calls itself)
    apart: dict[str, tuple[str, bool]] = field(default_factory=dict)
    not_copied: dict[str, str] = field(default_factory=dict)  # staged: callee -> why (Callees)
    emitted: bool = False  # the function is emitted code (a derivative, transformed again)
    # activity: (function key, name) -> fields named as an array's attribute of a struct made
    # there (``p = P(a, T=b)``), which a callee given ``p`` learns through its ``FIELDS``
    struct_fields: dict = field(default_factory=dict)
    # ShiftReset/Tangent: function key -> the entry's arguments it reads, never assigned
    plain_arguments: dict | None = None
    arg_kinds: dict[str, frozenset] | None = (
        None  # parameter -> kinds of the arguments specialized to
    )
    kinds: dict = field(default_factory=dict)  # set by Kinds: scope -> name -> kinds
    shapes: dict = field(default_factory=dict)  # set by Shapes: scope -> name -> ("a", shape, kind)
    never_none: set[str] = field(default_factory=set)  # adjoints that start at 0.0, never None
    active_names: set[str] = field(default_factory=set)  # set by Activity
    # Activity's function tree (``activity.Scopes``, with the names each function mentions), for
    # Kinds, the next pass: Activity changes no statement (Kinds takes it and sets it to None)
    scopes: Any = None
    timings: dict[str, float] = field(default_factory=dict)  # seconds per pass
    derive: Any = None  # set by the driver: runs reverse mode on a sub-unit (see pipeline.derive)
    text: str = ""  # the emitted module
    line_map: dict[int, int] = field(default_factory=dict)  # emitted line -> user line

    # ------------------------------------------------------------------ environment

    @property
    def env_globals(self) -> dict:
        return self.fn.__globals__

    def closure_vars(self) -> dict[str, Any]:
        code = self.fn.__code__
        cells = self.fn.__closure__ or ()
        out = {}
        for n, c in zip(code.co_freevars, cells):
            try:
                out[n] = c.cell_contents
            except ValueError:  # empty cell: defined later in the enclosing function
                pass
        return out

    def lookup(self, ident: str):
        """The object a free name of the function refers to now: closure, globals, builtins
        (or a name the pipeline itself introduced, such as a runtime helper)."""
        if ident in self.injected and not isinstance(self.injected[ident], Callee):
            return True, self.injected[ident]
        closure = self.closure_vars()
        if ident in closure:
            return True, closure[ident]
        g = self.env_globals
        if ident in g:
            return True, g[ident]
        b = g.get("__builtins__", builtins)
        b = b if isinstance(b, dict) else vars(b)
        if ident in b:
            return True, b[ident]
        return False, None

    def depend(self, holder, key: str, obj) -> None:
        """The transformation used ``obj``, found as ``holder[key]`` (a dict) or
        ``getattr(holder, key)``: it is valid while that is still ``obj``."""
        self.external.append((holder, key, obj))

    # ------------------------------------------------------------------ names the emitted code needs

    def inject(self, obj, preferred: str) -> str:
        """A name under which the emitted code can refer to ``obj``."""
        for n, o in self.injected.items():
            if o is obj and not isinstance(o, Callee):
                return n
        found, current = self.lookup(preferred)
        if found and current is obj and preferred not in self.injected:
            self.namer.reserve(preferred)
            self.injected[preferred] = obj
            return preferred
        n = self.namer.fresh(preferred)
        self.injected[n] = obj
        return n

    def inject_callee(self, fn, active: tuple[str, ...], kinds: tuple = ()) -> str:
        """The name of the backpropagator (forward mode: the tangent function) of a call."""
        for c in self.callees.values():
            if c.fn is fn and c.active == active and c.kinds == kinds:
                return c.name
        if fn is self.fn and active == self.active and kinds == self.kinds_key():
            return self.bp_name
        base = own_name(fn)  # a decorator's wrapper is named for itself, not what it wraps
        if base == "<lambda>":
            base = "lambda"
        n = self.namer.jvp(base) if self.mode == "forward" else self.namer.backpropagator(base)
        self.callees[n] = Callee(fn, active, n, kinds, self.mode)
        return n

    def kinds_key(self) -> tuple:
        """The argument kinds this unit is specialized to, as a hashable key."""
        return kinds_key(self.arg_kinds or {})

    # ------------------------------------------------------------------ diagnostics

    def call_error(self, callee: str, sig, exc: Exception, node) -> TransformError:
        """A call (``node``) whose arguments do not bind to the parameters ``sig`` of the function
        ``callee`` names -- a made-up name said in the user's words (the lambda at line 7)."""
        return self.error(
            call_mismatch(self.namer.shown(callee), sig, exc),
            node,
            "pass the arguments the function takes",
        )

    def error(self, message: str, node=None, hint: str | None = None) -> TransformError:
        src = self.source
        lineno = getattr(node, "lineno", None) if node is not None else None
        col = getattr(node, "col_offset", None) if node is not None else None
        end_col = getattr(node, "end_col_offset", None) if node is not None else None
        if node is not None and getattr(node, "end_lineno", lineno) != lineno:
            end_col = None
        filename = src.filename if src else None
        line = src.line(lineno) if src and lineno else None
        if line is not None and end_col is None and col is not None:
            # a statement over several lines: underline its first word (`while`, `try`)
            words = line[col:].split()
            end_col = col + (len(words[0]) if words else 1)
        return TransformError(
            message,
            filename=filename,
            lineno=lineno,
            col=col,
            end_col=end_col,
            hint=hint,
            source_line=line,
        )
