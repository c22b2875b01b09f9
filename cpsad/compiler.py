"""From a function to a running backpropagator: transform once, compile to a real file, link, cache.

``specialize(f, active)`` runs the pipeline on ``f`` for the parameters named in ``active``, and on
every user function it calls in continuation-passing style (each with the parameters that receive
active values there), compiles each emitted module under a real filename in the cache folder, and
links it: the names an emitted function needs -- numpy, runtime helpers, rules, the
backpropagators it calls -- become closure cells; the user's module globals stay live (a loss that
reads a global batch sees the current batch) and so do the user's own closure cells.

Two caches, one contract (``cpsad.validity``):

* a ``Transformation`` -- the pipeline's work, the compiled code -- is kept per code object and
  key (parameters, argument kinds, mode), valid while what it read of the world is the same
  (``Needs``); every function object of that code reuses it (a closure made on every step is
  transformed once);
* a ``Spec`` -- a transformation linked for one function object, with that function's cells,
  globals and defaults -- is kept per function object, checked on every call (``valid``:
  identity checks on the function's own cells and dicts, its code and defaults, and those of
  every function it calls).

Neither holds the user's function, or anything only the user's objects refer to, by a strong
reference: both go when the user drops the function.
"""

from __future__ import annotations

import ast
import contextlib
import gc
import linecache
import os
import re
import sys
import threading
import time
import types
import warnings
import weakref
from collections.abc import Callable

import numpy as np

import cpsad
from cpsad import diskcache, validity
from cpsad.context import FACTORY, Context
from cpsad.depth import deep_recursion
from cpsad.runtime import Closure, is_struct, scalar_seed, struct_parts
from cpsad.transforms import pipeline
from cpsad.transforms.errors import TransformError
from cpsad.transforms.naming import own_qualname
from cpsad.transforms.resolve import yours
from cpsad.transforms.shapes import shapes_key
from cpsad.transforms.unit import (
    ARRAY,
    CALLABLES,
    FIELDS,
    NPSCALAR,
    NUMBER,
    OPAQUE,
    OTHER,
    SEED,
    SEQUENCE,
    Unit,
    kinds_key,
)


class _ByIdentity:
    """A dictionary of values by the identity of their keys, each entry going when its key is
    collected. (Code objects compare equal when their code is, whatever file or module they
    come from: a ``WeakKeyDictionary`` would give one function another's transformation.)"""

    def __init__(self):
        self._d: dict = {}

    def get(self, key, default=None):
        entry = self._d.get(id(key))
        return entry[1] if entry is not None and entry[0]() is key else default

    def setdefault(self, key, value):
        entry = self._d.get(id(key))
        if entry is not None and entry[0]() is key:
            return entry[1]
        k = id(key)
        self._d[k] = (weakref.ref(key, lambda _, k=k, d=self._d: d.pop(k, None)), value)
        return value

    def __getitem__(self, key):
        found = self.get(key, _NOTHING)
        if found is _NOTHING:
            raise KeyError(key)
        return found

    def __len__(self) -> int:
        return len(self._d)


_NOTHING = object()
_USER, _INJECTED, _CALLEE = (
    "user",
    "injected",
    "callee",
)  # (the sources of a ``Transformation``'s cells)
_GONE = (lambda: None, lambda: validity.DEAD)  # a guard that fails: the function is gone
_lock = threading.RLock()
# code object -> {(active, kinds, mode): [Transformation, ...]} (several: closures of one code
# that resolve a name to different functions)
_TRANSFORMS = _ByIdentity()
# function object -> {(active, kinds, mode): Spec}
_SPECS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
# emitted file -> its Transformation, to map errors back to the user's lines
_BY_PATH: weakref.WeakValueDictionary = weakref.WeakValueDictionary()


class Transformation:
    """One run of the pipeline: ``code`` made into a backpropagator for ``key`` -- the emitted
    module, its compiled code, the objects it needs from outside, the callees it links to, and
    what it read (``needs``), relative to the function, so that any function of ``code`` whose
    needs hold can use it."""

    __slots__ = (
        "key",
        "qualname",
        "firstlineno",
        "meaning",
        "filename",
        "bp_name",
        "text",
        "path",
        "line_map",
        "injected",
        "weak",
        "code",
        "cells",
        "callees",
        "needs",
        "seconds",
        "timings",
        "__weakref__",
    )

    def __init__(self, unit: Unit, key: tuple, path: str, code: types.CodeType, needs):
        self.key = key
        self.qualname = own_qualname(unit.fn)
        self.firstlineno = unit.fn.__code__.co_firstlineno
        # the names the pipeline made up -> what they stand for in the user's words ("the loop
        # at line 7"): how messages about emitted code transformed again name them
        self.meaning = dict(unit.namer.meaning)
        self.filename = unit.fn.__code__.co_filename
        self.bp_name = unit.bp_name
        self.text = unit.text
        self.path = path
        self.line_map = unit.line_map
        self.injected = {n: validity.hold(o) for n, o in unit.injected.items()}
        # (those held by weak reference: the ones that can be gone)
        self.weak = tuple(
            self.injected[n] for n, o in unit.injected.items() if isinstance(o, validity.WEAK)
        )
        self.code = code
        # where each cell of the emitted function comes from: the user's function (its cell's
        # index), an injected object (its getter), or a backpropagator (filled in by ``_spec``)
        user = unit.fn.__code__.co_freevars
        self.cells = tuple(
            (
                (_USER, user.index(n))
                if n in user
                else (_INJECTED, self.injected[n]) if n in self.injected else (_CALLEE, None)
            )
            for n in code.co_freevars
        )
        suffix = NESTED if _mode(key[2])[1] else ""
        # name in the emitted code -> (the callee, by weak reference; its key)
        self.callees = {
            n: (validity.hold(c.fn), (c.active, c.kinds, c.mode + suffix))
            for n, c in unit.callees.items()
        }
        self.needs = needs
        self.seconds = 0.0  # to transform and compile (this function alone)
        self.timings = dict(unit.timings)

    def usable_for(self, fn) -> bool:
        """Can ``fn`` (a function of this code) use it: does everything it read still hold?"""
        if not self.needs.holds_for(fn):
            return False
        for get in self.weak:
            if get() is validity.DEAD:
                return False
        for ref, _ in self.callees.values():
            if ref() is validity.DEAD:
                return False
        return True


class Spec:
    """A ``Transformation`` linked for one function object: its backpropagator ``bp``, made with
    the function's own cells, globals and defaults, and the specs of the functions it calls."""

    __slots__ = ("t", "fn_ref", "fn_code", "bp", "callee_specs", "_own", "_guards", "__weakref__")

    def __init__(self, t: Transformation, fn, bp):
        self.t = t
        self.fn_ref = weakref.ref(fn)
        self.fn_code = fn.__code__  # (the code it was linked for: the guards, made later, check)
        self.bp = bp
        self.callee_specs: dict[str, Spec] = {}
        # (made when first asked for: a closure made on every step is used once)
        self._own = self._guards = None

    @property
    def own(self) -> tuple:
        """Checks of the function's own code and defaults, and of what its transformation read,
        bound to the function's cells and globals."""
        if self._own is None:
            fn = self.fn_ref()
            if fn is None:
                self._own = (_GONE,)
            else:
                self._own = (
                    validity.function_guard(fn, self.fn_code, self.bp),
                    *self.t.needs.guards(fn),
                )
        return self._own

    def valid(self) -> bool:
        """Is it still what a transformation of the function would be now (``validity``)? The
        checks of the whole call graph (``_all_guards``)."""
        if self._guards is None:
            self._guards = _all_guards(self)
        return validity.all_hold(self._guards)

    @property
    def fn(self):
        return self.fn_ref()

    @property
    def active(self) -> tuple[str, ...]:
        return self.t.key[0]

    def __getattr__(self, name):  # the transformation's: text, path, line_map, bp_name, ...
        return getattr(self.t, name)


def specialize(
    fn: Callable, active: tuple[str, ...], kinds: tuple = (), mode: str = "reverse"
) -> Spec:
    """The (cached, still valid) backpropagator of ``fn`` with respect to ``active``, specialized
    to arguments of ``kinds`` (``(("x", ("number",)), ...)``: see ``kinds_of``); with ``mode``
    "forward", its tangent function ``f_jvp(*tangents of active, *params)`` instead. A mode with
    the suffix ``NESTED`` ("reverse/nested") is code meant to be transformed again (a higher
    derivative): its loops stay recursive, and so do its callees'."""
    key = (active, kinds, mode)
    specs = _SPECS.get(fn)
    if specs is not None:
        spec = specs.get(key)
        if spec is not None and spec.valid():
            return spec
    if not _lock._is_owned() and _deeper_than(SHALLOW):
        return _on_a_fresh_stack(_specialized, fn, key)
    return _specialized(fn, key)


def _specialized(fn, key) -> Spec:
    with _lock, _gc_paused():
        building: dict = {}
        spec = _spec(fn, key, building)
        for (f, k), s in building.items():  # (published once all of them are linked)
            _SPECS.setdefault(f, {})[k] = s
        return spec


# Python's parser and compiler count the frames of the thread they run on against a limit of
# their own (3.11: "maximum recursion depth exceeded during ast construction" past ~1,000
# frames, whatever the recursion limit): a transformation asked for deep in a recursion -- the
# dispatch meeting a function value for the first time there, a derivative of the next order --
# runs on a thread of its own, where the stack is shallow.
SHALLOW = 400


def _deeper_than(n: int) -> bool:
    frame = sys._getframe(1)
    for _ in range(n):
        frame = frame.f_back
        if frame is None:
            return False
    return True


def _on_a_fresh_stack(fn, *args):
    """``fn(*args)`` on a new thread (the caller waits): its result, or its exception."""
    out: dict = {}

    def run():
        try:
            with deep_recursion():
                out["value"] = fn(*args)
        except BaseException as exc:  # (re-raised in the caller)
            out["error"] = exc

    worker = threading.Thread(target=run, name="cpsad-transform")
    worker.start()
    worker.join()
    if "error" in out:
        raise out["error"]
    return out["value"]


def _spec(fn, key, building) -> Spec:
    """The spec of ``fn`` for ``key``: linked from a usable transformation of its code (made if
    there is none), with the specs of its callees (``building``: those made by this call, for
    recursion among them)."""
    if (fn, key) in building:
        return building[(fn, key)]
    specs = _SPECS.get(fn)
    cached = specs.get(key) if specs else None
    if cached is not None and cached.valid():
        return cached
    t = _transformation(fn, key)
    spec = _link(t, fn)
    building[(fn, key)] = spec
    for name, (ref, ckey) in t.callees.items():
        try:
            spec.callee_specs[name] = _spec(ref(), ckey, building)
        except TransformError as exc:
            _note_caller(exc, ref(), fn)
            raise
    for name, callee in spec.callee_specs.items():
        spec.bp.__closure__[spec.bp.__code__.co_freevars.index(name)].cell_contents = callee.bp
    return spec


def _note_caller(exc: TransformError, callee, caller) -> None:
    """A note on an error found in ``callee``'s code -- the standard library's, a package's --
    naming the function of the user's that calls it (``traceback`` shows it under the error)."""
    code = getattr(caller, "__code__", None)
    if code is None or exc.filename == code.co_filename:
        return
    where = f"{code.co_filename}:{code.co_firstlineno}"
    exc.add_note(
        f"(cpsad transforms `{getattr(callee, '__qualname__', callee)}` because "
        f"`{getattr(caller, '__qualname__', caller)}` ({where}) calls it with differentiable "
        "values)"
    )


def _transformation(fn, key) -> Transformation:
    """A transformation of ``fn``'s code for ``key`` that ``fn`` can use: cached, or made now."""
    made = _TRANSFORMS.get(fn.__code__, {}).get(key)
    if made is None:
        made = _TRANSFORMS.setdefault(fn.__code__, {}).setdefault(key, [])
    for t in made:
        if t.usable_for(fn):
            return t
    active, kinds, mode = key
    t0 = time.perf_counter()
    try:
        unit, _ = run_pipeline(fn, active, entry=False, kinds=kinds, mode=mode)
    except TransformError as exc:
        raise in_user_code(exc) from None
    path = _write(unit)
    t = Transformation(
        unit, key, path, _compile(unit, path), validity.Needs(unit.deps, unit.external)
    )
    t.seconds = time.perf_counter() - t0
    _BY_PATH[path] = t
    # (a stale one goes: nothing will use it again once the world changed under it)
    made[:] = [old for old in made if old.usable_for(fn)][-3:] + [t]
    return t


class _gc_paused:
    """No garbage collection while a transformation runs, for speed: it makes tens of thousands
    of syntax-tree nodes that live until it ends, so collections -- each a walk over what is
    young -- find nothing to free, move the nodes to older generations, and soon set off a full
    collection of every object of the process (numpy's included): 100 ms on a first call of
    TreeLSTM. Trees are freed by reference counting when the transformation ends; the collector
    runs as before after it (unless the caller had disabled it). (A class, not a generator: it
    runs on the path that links a new closure.)"""

    def __enter__(self):
        self.enabled = gc.isenabled()
        gc.disable()

    def __exit__(self, *exc):
        if self.enabled:
            gc.enable()
        return False


_KINDS: dict = {}  # (code, argument types, keyword names) -> kinds key


def kinds_of(code, args, kwargs) -> tuple:
    """The kinds of the arguments of a call, as the key ``specialize`` takes (a kind depends on
    the type alone, so the answer is remembered per code object and argument types)."""
    memo = (code, tuple(map(_type, args)), tuple(kwargs), tuple(map(_type, kwargs.values())))
    key = _KINDS.get(memo)
    if key is None:
        key = _KINDS[memo] = _kinds_of(code, args, kwargs)
    return key


def shapes_of(code, args, kwargs) -> tuple:
    """The item of a kinds key that specializes a transformation to the shapes and dtypes of a
    call's arrays (``cpsad.shaped``, ``Transformed.at``): appended to ``kinds_of``'s key."""
    names = code.co_varnames[: code.co_argcount]
    return shapes_key(list(names[: len(args)]) + list(kwargs), list(args) + list(kwargs.values()))


def _kinds_of(code, args, kwargs) -> tuple:
    names = code.co_varnames
    out = {}
    fields, opaque, callables = [], [], []
    for name, value in [*zip(names[: code.co_argcount], args), *kwargs.items()]:
        out[name] = _kind(value)
        fields += [f"{name}.{f}" for f in _metadata_fields(value)]
        if OTHER in out[name] and _opaque(value):
            opaque.append(name)
        elif OTHER in out[name] and callable(value) and not is_struct(value):
            callables.append(name)
    if fields:
        out[FIELDS] = frozenset(fields)
    if opaque:
        out[OPAQUE] = frozenset(opaque)
    if callables:
        out[CALLABLES] = frozenset(callables)
    return kinds_key(out)


def _opaque(value) -> bool:
    """A dict, a string, or an object of compiled code or of a library's class (a random
    generator): no struct of yours, whose methods the dispatch would differentiate (nor None, a
    class, a function or a module)."""
    if value is None or isinstance(value, (type, types.FunctionType, types.ModuleType, Closure)):
        return False
    if isinstance(value, (dict, str, bytes)):
        return True
    return struct_parts(value) is None and not yours(type(value).__module__)


def _metadata_fields(value) -> list:
    """The fields of a struct argument (a namedtuple, a dataclass, a registered pytree) named as
    an array's attribute (``T``, ``real``; ``size``, ``shape``, ``dtype``: no derivative)."""
    if isinstance(value, (np.ndarray, np.generic, int, float, complex, str, bytes)):
        return []
    if isinstance(value, tuple) and hasattr(value, "_fields"):
        names = value._fields
    else:
        parts = struct_parts(value)
        if parts is None:
            return []
        names = parts[0]
    return sorted(
        n
        for n in names
        if isinstance(n, str)
        and (CONTEXT.is_nondiff_attribute(n) or CONTEXT.attribute_rule(n) is not None)
    )


def _type(value):
    """What a kind depends on: the type -- and, for grad's seed, the object."""
    return SEED if value is scalar_seed else type(value)


def _kind(value) -> frozenset:
    if value is scalar_seed:  # the continuation of a backpropagator differentiated again
        return frozenset({SEED})
    if isinstance(value, bool):
        return frozenset({OTHER})
    if isinstance(value, (int, float)):
        return frozenset({NUMBER})
    if isinstance(value, np.ndarray):
        return frozenset({ARRAY})
    if isinstance(value, np.generic):
        return frozenset({NPSCALAR})
    if isinstance(value, (list, tuple)):
        return frozenset({SEQUENCE})
    return frozenset({OTHER})


def run_pipeline(
    fn, active, record=False, check=False, upto=None, entry=True, skip=(), kinds=(), mode="reverse"
):
    """A fresh transformation of ``fn`` (nothing cached): the unit and the recorded stages."""
    cpsad._load()  # the whole package, if only a submodule was imported: the dispatch, the rules
    staged = mode in (STAGED, STAGED_FORWARD)
    mode, nested = _mode("forward" if mode == STAGED_FORWARD else "reverse" if staged else mode)
    if nested:  # Defunctionalize's while loops pop a list: keep loops recursive to transform
        # again; and a `del` would be refused (and frees nothing worth it in code transformed again)
        skip = tuple(skip) + ("defunctionalize", "release")
    unit = Unit(fn, tuple(active), CONTEXT, mode=mode)
    unit.is_entry = entry
    unit.nested = nested
    unit.staged = staged
    # (code cpsad wrote: emitted, or its own functions written to be transformed)
    unit.emitted = getattr(fn, "__cpsad_source__", False) or (
        getattr(fn, "__code__", None) is not None and fn.__code__.co_filename in _BY_PATH
    )
    unit.arg_kinds = {p: frozenset(k) for p, k in kinds}
    try:
        stages = pipeline.run(unit, record=record, check=check, upto=upto, skip=skip)
    except TransformError as exc:  # (in emitted code: at the user's line it came from)
        raise in_user_code(exc) from None
    return unit, stages


def variant(fn, active, skip=(), check=True, kinds=(), mode="reverse") -> Spec:
    """An uncached backpropagator built with some passes left out (for tests); callees are the
    regular cached ones."""
    unit, _ = run_pipeline(
        fn, tuple(active), check=check, entry=False, skip=skip, kinds=kinds, mode=mode
    )
    path = _write(unit)
    key = (tuple(active), kinds, mode)
    t = Transformation(
        unit, key, path, _compile(unit, path), validity.Needs(unit.deps, unit.external)
    )
    spec = _link(t, fn)
    for name, (ref, ckey) in t.callees.items():
        callee = specialize(ref(), *ckey)
        spec.callee_specs[name] = callee
        spec.bp.__closure__[spec.bp.__code__.co_freevars.index(name)].cell_contents = callee.bp
    return spec


NESTED = "/nested"
STAGED = "reverse/staged"  # flattened for Numba (cpsad.jit): run_pipeline's mode, never cached here
STAGED_FORWARD = "forward/staged"  # the tangent function, flattened for Numba


def _mode(mode: str) -> tuple[str, bool]:
    """``("reverse", True)`` for "reverse/nested"."""
    base, _, rest = mode.partition("/")
    if base not in ("reverse", "forward") or rest not in ("", "nested"):
        raise ValueError(f"no mode {mode!r}")
    return base, bool(rest)


def _write(unit: Unit) -> str:
    """The emitted module's file name in the cache folder (content-addressed, see diskcache);
    ``_compile`` compiles the text, never what is in the file."""
    fn = unit.fn
    stem = re.sub(r"[^0-9A-Za-z_.]", "_", f"{fn.__module__}.{own_qualname(fn)}")
    wrt = "_".join(unit.active) or "none"
    return diskcache.store(f"{stem}.{wrt}", unit.text)


def _compile(unit: Unit, path: str) -> types.CodeType:
    """Compile the emitted text under ``path``; return the code object of ``f_bp``.

    The module's function is compiled inside a factory function whose parameters are the names
    the emitted code gets from outside, so they become closure cells of ``f_bp`` (the import
    lines are the file's documentation of them and are not executed). The text is compiled as
    text (``_compiled_text``), or, where that cannot keep every location, as a tree.
    """
    free = sorted(set(unit.injected) | set(unit.callees) | set(unit.fn.__code__.co_freevars))
    code = _compiled_text(unit, path, free)
    return _compiled_tree(unit, path, free) if code is None else code


def _compiled_text(unit: Unit, path: str, free) -> types.CodeType | None:
    """``_compile`` by compiling text, for speed (a parsed tree is a Python object per node:
    parsing the 15,800 emitted lines of a 2,000-line function and compiling the tree took 0.24 s,
    the text alone 0.10 s). The header line becomes the factory's ``def``, the comment and import
    lines before the function blank lines, so every line keeps its number; and only the lines at
    column 0 -- the function's decorators and ``def`` -- move one column right, under the
    factory: the function's body is indented already, so every instruction of ``f_bp`` keeps
    the file's line and columns (a traceback's carets stand under the file's text; the ``def``
    line's own instructions run in the factory). None where another line stands at column 0 (a
    second function, a line continued there), or a line cannot be read alone (a string or a line
    continued across lines; the renderer writes neither) -- or the text is not the emitted
    module's layout."""
    text = unit.text
    if '"""' in text or "'''" in text or "\\\n" in text:
        return None
    lines = text.split("\n")
    start = next((i for i, line in enumerate(lines) if line and not line.startswith(_PRELUDE)), 0)
    if start < 1 or not lines[start].startswith(("def ", "@")):
        return None
    body = lines[start:]
    top = [i for i, line in enumerate(body) if line[:1].strip() and line[0] != "#"]
    if top != list(range(len(top))) or not body[top[-1]].startswith("def "):
        return None  # (column 0: decorators, then the def, and nothing after it)
    head = f"def {FACTORY}({', '.join(free)}):"
    body[: len(top)] = [" " + line for line in body[: len(top)]]
    source = "\n".join([head] + [""] * (start - 1) + body + [f" return {unit.bp_name}\n"])
    code = compile(source, path, "exec")
    fcode = next(c for c in code.co_consts if isinstance(c, types.CodeType))
    return next(
        c for c in fcode.co_consts if isinstance(c, types.CodeType) and c.co_name == unit.bp_name
    )


_PRELUDE = ("#", "import ", "from ")  # the lines of an emitted module before its function


def _compiled_tree(unit: Unit, path: str, free) -> types.CodeType:
    """``_compile`` by parsing the text and compiling the tree, with the factory around it."""
    tree = ast.parse(unit.text, filename=path)
    body = [s for s in tree.body if not isinstance(s, (ast.Import, ast.ImportFrom))]
    extra = {"type_params": []} if "type_params" in ast.FunctionDef._fields else {}
    params = [ast.arg(arg=n) for n in free]
    result = ast.Name(id=unit.bp_name, ctx=ast.Load())
    ret = ast.Return(value=result)
    factory = ast.FunctionDef(
        name=FACTORY,
        args=ast.arguments(
            posonlyargs=[],
            args=params,
            vararg=None,
            kwonlyargs=[],
            kw_defaults=[],
            kwarg=None,
            defaults=[],
        ),
        body=body + [ret],
        decorator_list=[],
        returns=None,
        **extra,
    )
    module = ast.Module(body=[factory], type_ignores=[])
    # The nodes made here are the only ones without a location (the parsed ones have theirs):
    # each gets the one ``ast.fix_missing_locations(module)`` would give it, line 1, column 0,
    # without that walk over the whole module (for speed: 1.3 ms of TreeLSTM's first call).
    for node in (factory, *params, ret, result):
        node.lineno, node.col_offset, node.end_lineno, node.end_col_offset = 1, 0, 1, 0
    code = compile(module, path, "exec")
    fcode = next(c for c in code.co_consts if isinstance(c, types.CodeType))
    return next(
        c for c in fcode.co_consts if isinstance(c, types.CodeType) and c.co_name == unit.bp_name
    )


def _link(t: Transformation, fn) -> Spec:
    """``t``'s backpropagator for ``fn``: closure cells for the names it needs -- ``fn``'s own
    cells, the objects it injected, and the backpropagators of its callees (filled by the
    caller, ``_spec``, since they may be this one) -- with ``fn``'s globals and defaults."""
    closure = fn.__closure__
    cells = tuple(
        (
            closure[i]
            if kind is _USER
            else types.CellType(i()) if kind is _INJECTED else types.CellType()
        )
        for kind, i in t.cells
    )
    bp = types.FunctionType(t.code, fn.__globals__, t.bp_name, fn.__defaults__, cells)
    bp.__kwdefaults__ = fn.__kwdefaults__
    bp.__qualname__ = t.bp_name
    bp.__module__ = fn.__module__
    composite = getattr(fn, "__cpsad_composite__", None)
    if composite is not None:  # (cpsad's own module: transformed again all the same)
        bp.__cpsad_composite__ = composite
    # emitted code: transformed again where it is called through a value at the next order
    # (its module is that of the function it came from -- cpsad's own, for cpsad's helpers)
    bp.__cpsad_source__ = True
    if t.bp_name in t.code.co_freevars:
        bp.__closure__[t.code.co_freevars.index(t.bp_name)].cell_contents = bp
    return Spec(t, fn, bp)


def in_user_code(exc: TransformError) -> TransformError:
    """A refusal of emitted code (a derivative transformed again), at the user's line the
    emitted line came from -- where the user can act on it, a caret under it -- naming the
    derivative and the emitted line too."""
    t = _BY_PATH.get(exc.filename)
    if t is None or t.line_map.get(exc.lineno) is None:
        return exc
    filename, user, _ = origin(exc.filename, exc.lineno)
    text = linecache.getline(filename, user).rstrip()
    start = len(text) - len(text.lstrip()) if text.strip() else None
    return TransformError(
        f"{exc.message} (in {described(t, derivative=True)}: emitted code "
        f"{exc.filename}:{exc.lineno})",
        filename=filename,
        lineno=user,
        col=start,
        end_col=None if start is None else len(text),
        hint=exc.hint,
    )


def origin(path: str, line: int) -> tuple[str, int, int]:
    """The file and line of the user's source that line ``line`` of the emitted file ``path``
    came from -- through every transformation of emitted code (a derivative of a derivative) --
    and how many transformations that took (``(path, line, 0)``: not emitted code)."""
    order = 0
    while (t := _BY_PATH.get(path)) is not None and t.line_map.get(line) is not None:
        path, line, order = t.filename, t.line_map[line], order + 1
    return path, line, order


_ORDINALS = {2: "second", 3: "third", 4: "fourth", 5: "fifth"}


def described(t: Transformation, derivative: bool = False) -> str:
    """What ``t`` is, in the user's words, never a made-up name: "the backpropagator of `f`",
    "the tangent function of the lambda at line 7", "the third-order backpropagator of `f`" --
    or, with ``derivative``, "the derivative of `f`", "the second derivative of `f`"."""
    order, name, mode = 1, _own_words(t), t.key[2]
    while (parent := _BY_PATH.get(t.filename)) is not None:  # emitted code, transformed again
        made = t.qualname.rsplit(".", 1)[-1]
        base = made.removesuffix("_bp").removesuffix("_jvp")
        if made != parent.bp_name and base in parent.meaning:  # a loop's, a lambda's function
            name = f"{parent.meaning[base]} of {_own_words(_root(parent))}"
        else:
            name = _own_words(_root(parent))
        if made != base:  # a backpropagator (or tangent function) made by ``parent``, not the
            order += 1  # copy of a lambda it keeps to call as a value
        t = parent
    nth = _ORDINALS.get(order, f"{order}th")
    if derivative:
        return f"the {nth + ' ' if order > 1 else ''}derivative of {name}"
    what = "tangent function" if mode.startswith("forward") else "backpropagator"
    return f"the {nth + '-order ' if order > 1 else ''}{what} of {name}"


def local_name(code) -> str:
    """A function of the user's, or of emitted code -- the backpropagator or tangent function of
    a local function or lambda of the user's -- in the user's words: "the lambda at line 7",
    "`inner`"."""
    t = _BY_PATH.get(code.co_filename)
    if t is None:  # the user's own function
        if code.co_name == "<lambda>":
            return f"the lambda at line {code.co_firstlineno}"
        return f"`{code.co_name}`"
    base = code.co_name.removesuffix("_bp").removesuffix("_jvp")
    return t.meaning.get(base) or f"`{base}`"


def _root(t: Transformation) -> Transformation:
    while (parent := _BY_PATH.get(t.filename)) is not None:
        t = parent
    return t


def _own_words(t: Transformation) -> str:
    """A function of the user's: `f`, `Model.loss`, or the lambda at line 7 (its name is
    ``<lambda>``)."""
    if "<lambda>" in t.qualname.rsplit(".", 1)[-1]:
        return f"the lambda at line {t.firstlineno}"
    return f"`{t.qualname.replace('.<locals>', '')}`"


def where_in_user_code(tb) -> list[str]:
    """For each frame of a traceback in emitted code: the user's file, line and source -- with
    repetitions collapsed as Python's own traceback does (a line repeated shows three times, then
    ``[Previous line repeated N more times]``; a cycle of up to ``CYCLE`` lines, as mutual
    recursion makes, once, then ``[Previous K lines repeated N more times]``), and at most
    ``NOTE_LINES`` lines in all, the outermost and the innermost: a runaway recursion is one
    line or a few, not one a frame."""
    keys = []  # (emitted file, emitted line, user's line): cheap to compare, formatted late
    code = lines = None
    while tb is not None:  # (100,000 frames deep, each look-up counts)
        if tb.tb_frame.f_code is not code:
            code = tb.tb_frame.f_code
            t = _BY_PATH.get(code.co_filename)
            lines = t.line_map if t is not None else None
        if lines is not None:
            user = lines.get(tb.tb_lineno)
            if user is not None:
                keys.append((code.co_filename, tb.tb_lineno, user))
        tb = tb.tb_next
    shown = collapse_repeats(keys)
    if len(shown) > NOTE_LINES:
        half = NOTE_LINES // 2
        left_out = len(shown) - 2 * half
        shown = [*shown[:half], f"[... {left_out} more lines ...]", *shown[-half:]]
    return [_where(k) if isinstance(k, tuple) else k for k in shown]


CYCLE = 8  # the longest cycle of lines collapsed as one repetition
NOTE_LINES = 40  # at most this many lines of "in your code"


def collapse_repeats(keys: list) -> list:
    """``keys`` with each run of a repeated key, or repeated cycle of up to ``CYCLE`` keys,
    written once (a single key, as Python does, three times) and followed by a line that says
    how many more times it repeated -- where that makes it shorter.

    >>> collapse_repeats(list("abbbbbc"))
    ['a', 'b', 'b', 'b', '[Previous line repeated 2 more times]', 'c']
    >>> collapse_repeats(list("abab"))
    ['a', 'b', 'a', 'b']
    >>> collapse_repeats(list("xababababy"))
    ['x', 'a', 'b', '[Previous 2 lines repeated 3 more times]', 'y']
    """
    out: list = []
    i, n = 0, len(keys)
    while i < n:
        best_p, best_r = 1, 1
        for p in range(1, min(CYCLE, (n - i) // 2) + 1):
            j = i + p  # keys[i + p:j] each equal the key p before: the block repeats that far
            while j < n and keys[j] == keys[j - p]:
                j += 1
            r = (j - i) // p
            if r > 1 and r * p > best_r * best_p:
                best_p, best_r = p, r
            if best_r * best_p > n - i - p:  # no longer cycle covers more
                break
        p, r = best_p, best_r
        if p == 1 and r > 3:
            out += [keys[i]] * 3
            out.append(f"[Previous line repeated {_times(r - 3)}]")
        elif p > 1 and r > 2:
            out += keys[i : i + p]
            out.append(f"[Previous {p} lines repeated {_times(r - 1)}]")
        else:
            out += keys[i : i + p * r]
        i += p * r
    return out


def _times(n: int) -> str:
    return f"{n:,} more time{'s' if n > 1 else ''}"


def _where(key) -> str:
    path, line, _ = key
    filename, user, _ = origin(path, line)
    src = linecache.getline(filename, user).strip()
    return f"{filename}:{user}: {src}  ({described(_BY_PATH[path])}, {path}:{line})"


def located_warnings() -> contextlib.AbstractContextManager:
    """While emitted code runs: numpy's floating-point warnings (divide by zero, invalid value,
    overflow, underflow) at the user's line the emitted line came from -- not only the cache
    file's -- naming the emitted line too. numpy's modes that say "warn" say "call" instead, to
    a function that warns there (``np.errstate``: local to the thread and context, like numpy's
    own); "raise", "ignore" and a call of the user's own stay as they are."""
    modes = np.geterr()
    key = tuple(modes.values())
    try:
        calls = _CALLS[key]
    except KeyError:
        calls = _CALLS[key] = _calls_for(modes)
    return _NOTHING if calls is None else np.errstate(call=_warn_at_user_line, **calls)


_CALLS: dict = {}  # numpy's modes (np.geterr's values) -> those that say "call" in their place
_NOTHING = contextlib.nullcontext()


def _calls_for(modes: dict) -> dict | None:
    if "warn" not in modes.values() or any(m in ("call", "log") for m in modes.values()):
        return None
    return {kind: "call" for kind, mode in modes.items() if mode == "warn"}


# the files whose frames are not where a warning is the user's: numpy's and cpsad's own
_NOT_THE_USERS = tuple(
    os.path.dirname(os.path.abspath(m.__file__)) + os.sep for m in (np, cpsad, pipeline)
)


def _warn_at_user_line(error: str, flag: int) -> None:
    """numpy's floating-point error ``error`` ("divide by zero"), as numpy would warn of it but
    at the user's line: that of the innermost frame of the user's or of emitted code."""
    frame = sys._getframe(1)  # where the operation ran: numpy calls this from inside it
    while frame is not None and frame.f_code.co_filename.startswith(_NOT_THE_USERS):
        frame = frame.f_back
    if frame is None:  # pragma: no cover - emitted code runs under the API's own frames
        warnings.warn(f"{error} encountered", RuntimeWarning, stacklevel=2)
        return
    path, line = frame.f_code.co_filename, frame.f_lineno
    filename, user, order = origin(path, line)
    message = f"{error} encountered"
    if order:  # emitted code: which derivative, and the line that ran
        src = linecache.getline(path, line).strip()
        message += f" in {described(_BY_PATH[path])} (emitted code {path}:{line}: {src})"
    g = frame.f_globals  # the user's module's (emitted code runs with them): its filters apply
    warnings.warn_explicit(
        message,
        RuntimeWarning,
        filename,
        user,
        module=g.get("__name__"),
        registry=g.setdefault("__warningregistry__", {}),
        module_globals=g,
    )


def call_graph(spec: Spec) -> list[Spec]:
    """``spec`` and every backpropagator it calls, each once, callers first."""
    seen: set[int] = set()
    order: list[Spec] = []
    queue = [spec]
    while queue:
        s = queue.pop(0)
        if id(s) not in seen:
            seen.add(id(s))
            order.append(s)
            queue.extend(s.callee_specs.values())
    return order


def _all_guards(spec: Spec) -> tuple:
    """The guards of a spec and of every spec it calls, each once."""
    seen: set[int] = set()
    out: list = []
    stack = [spec]
    while stack:
        s = stack.pop()
        if id(s) in seen:
            continue
        seen.add(id(s))
        out += s.own
        stack.extend(s.callee_specs.values())
    return tuple(out)


CONTEXT = Context()  # its runtime helpers (the dispatch) are added by cpsad.dispatch
