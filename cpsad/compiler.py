"""From a function to a running backpropagator: transform once, compile to a real file, link, cache.

``specialize(f, active)`` runs the pipeline on ``f`` for the parameters named in ``active``, and on
every user function it calls in continuation-passing style (each with the parameters that receive
active values there), compiles each emitted module under a real filename in the cache folder, and
links them: the names an emitted function needs -- numpy, runtime helpers, rules, the
backpropagators it calls -- become closure cells; the user's module globals stay live (a loss that
reads a global batch sees the current batch) and so do the user's own closure cells.

A transformation is cached per function object and parameter set, and checked on every use
against what it resolved (``np``, a helper function, ...): if a name now refers to another object
-- the helper was edited and re-run -- it is transformed again.
"""

from __future__ import annotations

import ast
import contextlib
import functools
import gc
import hashlib
import linecache
import os
import re
import tempfile
import threading
import time
import types
import weakref
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from cpsad.context import Context
from transforms import pipeline
from transforms.errors import TransformError
from transforms.naming import own_qualname
from transforms.unit import ARRAY, NPSCALAR, NUMBER, OTHER, SEQUENCE, Unit, kinds_key

_MISSING = object()
LRU_CACHE = type(functools.lru_cache(maxsize=None)(lambda: None))
_lock = threading.RLock()
_SPECS: weakref.WeakKeyDictionary[Callable, dict] = weakref.WeakKeyDictionary()
_BY_PATH: dict = {}  # emitted file -> its Spec, to map errors back to the user's lines


@dataclass
class Spec:
    """One transformed function: ``f`` specialized to differentiate ``active``."""

    fn: Callable
    active: tuple[str, ...]
    bp_name: str
    text: str
    path: str
    line_map: dict[int, int]
    injected: dict[str, Any]
    callee_specs: dict[str, Spec] = field(default_factory=dict)
    guards: list = field(default_factory=list)  # of the whole call graph, checked on every use
    own_guards: list = field(default_factory=list)
    callee_keys: dict[str, tuple] = field(default_factory=dict)
    bp: Callable | None = None
    code: types.CodeType | None = None
    seconds: float = 0.0  # time to transform and compile (this function alone)
    timings: dict[str, float] = field(default_factory=dict)

    def valid(self) -> bool:
        """Do the names this transformation resolved still refer to the same objects?"""
        for container, key, obj in self.guards:
            if key is None:
                try:
                    if container.cell_contents is not obj:
                        return False
                except ValueError:
                    return False
            elif container.get(key, _MISSING) is not obj:
                return False
        return True


def cache_dir() -> str:
    """Where emitted modules are written: $CPSAD_CACHE_DIR, else the user's cache folder."""
    d = os.environ.get("CPSAD_CACHE_DIR")
    if not d:
        base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
        d = os.path.join(base, "cpsad")
    try:
        os.makedirs(d, exist_ok=True)
        return d
    except OSError:
        d = os.path.join(
            tempfile.gettempdir(), f"cpsad-{os.getuid() if hasattr(os, 'getuid') else 0}"
        )
        os.makedirs(d, exist_ok=True)
        return d


def specialize(
    fn: Callable, active: tuple[str, ...], kinds: tuple = (), mode: str = "reverse"
) -> Spec:
    """The (cached, still valid) backpropagator of ``fn`` with respect to ``active``, specialized
    to arguments of ``kinds`` (``(("x", ("number",)), ...)``: see ``kinds_of``); with ``mode``
    "forward", its tangent function ``f_jvp(*tangents of active, *params)`` instead. A mode with
    the suffix ``NESTED`` ("reverse/nested") is code meant to be transformed again (a higher
    derivative): its loops stay recursive, and so do its callees'."""
    specs = _SPECS.get(fn)
    if specs is not None:
        spec = specs.get((active, kinds, mode))
        if spec is not None and spec.valid():
            return spec
    with _lock, _gc_paused():
        building: dict = {}
        spec = _build(fn, active, kinds, mode, building)
        _link(building)
        for (f, act, kin, mod), s in building.items():
            _SPECS.setdefault(f, {})[(act, kin, mod)] = s
        for s in building.values():
            s.guards = _all_guards(s)
        return spec


@contextlib.contextmanager
def _gc_paused():
    """No garbage collection while a transformation runs, for speed: it makes tens of thousands
    of syntax-tree nodes that live until it ends, so collections -- each a walk over what is
    young -- find nothing to free, move the nodes to older generations, and soon set off a full
    collection of every object of the process (numpy's included): 100 ms on a first call of
    TreeLSTM. Trees are freed by reference counting when the transformation ends; the collector
    runs as before after it (unless the caller had disabled it)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


_KINDS: dict = {}  # (code, argument types, keyword names) -> kinds key


def kinds_of(code, args, kwargs) -> tuple:
    """The kinds of the arguments of a call, as the key ``specialize`` takes (a kind depends on
    the type alone, so the answer is remembered per code object and argument types)."""
    memo = (code, tuple(map(type, args)), tuple(kwargs), tuple(map(type, kwargs.values())))
    key = _KINDS.get(memo)
    if key is None:
        key = _KINDS[memo] = _kinds_of(code, args, kwargs)
    return key


def _kinds_of(code, args, kwargs) -> tuple:
    names = code.co_varnames
    out = {}
    for name, value in zip(names[: code.co_argcount], args):
        out[name] = _kind(value)
    for name, value in kwargs.items():
        out[name] = _kind(value)
    return kinds_key(out)


def _kind(value) -> frozenset:
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
    mode, nested = _mode(mode)
    if nested:  # Defunctionalize's while loops pop a list: keep loops recursive to transform
        # again; and a `del` would be refused (and frees nothing worth it in code transformed again)
        skip = tuple(skip) + ("defunctionalize", "release")
    unit = Unit(fn, tuple(active), CONTEXT, mode=mode)
    unit.is_entry = entry
    unit.nested = nested
    unit.emitted = getattr(fn, "__code__", None) is not None and fn.__code__.co_filename in _BY_PATH
    unit.arg_kinds = {p: frozenset(k) for p, k in kinds}
    stages = pipeline.run(unit, record=record, check=check, upto=upto, skip=skip)
    return unit, stages


def variant(fn, active, skip=(), check=True, kinds=(), mode="reverse") -> Spec:
    """An uncached backpropagator built with some passes left out (for tests); callees are the
    regular cached ones."""
    unit, _ = run_pipeline(
        fn, tuple(active), check=check, entry=False, skip=skip, kinds=kinds, mode=mode
    )
    path = _write(unit)
    spec = Spec(
        fn, tuple(active), unit.bp_name, unit.text, path, unit.line_map, dict(unit.injected)
    )
    spec.code = _compile(unit, path)
    for name, c in unit.callees.items():
        spec.callee_specs[name] = specialize(c.fn, c.active, c.kinds, c.mode)
    _link({(fn, tuple(active), kinds, mode): spec})
    return spec


NESTED = "/nested"


def _mode(mode: str) -> tuple[str, bool]:
    """``("reverse", True)`` for "reverse/nested"."""
    base, _, rest = mode.partition("/")
    if base not in ("reverse", "forward") or rest not in ("", "nested"):
        raise ValueError(f"no mode {mode!r}")
    return base, bool(rest)


def _build(fn, active, kinds, mode, building) -> Spec:
    key = (fn, active, kinds, mode)
    if key in building:
        return building[key]
    specs = _SPECS.get(fn)
    cached = specs.get((active, kinds, mode)) if specs else None
    if cached is not None and cached.valid():
        return cached
    t0 = time.perf_counter()
    try:
        unit, _ = run_pipeline(fn, active, entry=False, kinds=kinds, mode=mode)
    except TransformError as exc:
        raise in_user_code(exc) from None
    path = _write(unit)
    spec = Spec(
        fn=fn,
        active=active,
        bp_name=unit.bp_name,
        text=unit.text,
        path=path,
        line_map=unit.line_map,
        injected=dict(unit.injected),
        timings=dict(unit.timings),
    )
    spec.code = _compile(unit, path)
    _BY_PATH[path] = spec
    spec.own_guards = _guards(unit)
    suffix = NESTED if _mode(mode)[1] else ""
    spec.callee_keys = {
        n: (c.fn, c.active, c.kinds, c.mode + suffix) for n, c in unit.callees.items()
    }
    spec.seconds = time.perf_counter() - t0
    building[key] = spec
    for name, (cfn, cact, ckinds, cmode) in spec.callee_keys.items():
        spec.callee_specs[name] = _build(cfn, cact, ckinds, cmode, building)
    return spec


def _write(unit: Unit) -> str:
    """Write the emitted module to the cache folder (content-addressed); register it in linecache."""
    fn = unit.fn
    digest = hashlib.sha1(unit.text.encode()).hexdigest()[:12]
    stem = re.sub(r"[^0-9A-Za-z_.]", "_", f"{fn.__module__}.{own_qualname(fn)}")
    wrt = "_".join(unit.active) or "none"
    path = os.path.join(cache_dir(), f"{stem}.{wrt}.{digest}.py")
    if not os.path.exists(path):
        try:
            tmp = f"{path}.{os.getpid()}.tmp"
            with open(tmp, "w") as fh:
                fh.write(unit.text)
            os.replace(tmp, path)
        except OSError:
            pass  # linecache below still lets tracebacks and pdb show the lines
    lines = unit.text.splitlines(True)
    linecache.cache[path] = (len(unit.text), None, lines, path)
    return path


def _compile(unit: Unit, path: str) -> types.CodeType:
    """Compile the emitted text under ``path``; return the code object of ``f_bp``.

    The module's statements are compiled inside a factory function whose parameters are the
    names the emitted code gets from outside, so they become closure cells of ``f_bp`` (the
    import lines are the file's documentation of them and are not executed).
    """
    tree = ast.parse(unit.text, filename=path)
    body = [s for s in tree.body if not isinstance(s, (ast.Import, ast.ImportFrom))]
    free = sorted(set(unit.injected) | set(unit.callees) | set(unit.fn.__code__.co_freevars))
    extra = {"type_params": []} if "type_params" in ast.FunctionDef._fields else {}
    params = [ast.arg(arg=n) for n in free]
    result = ast.Name(id=unit.bp_name, ctx=ast.Load())
    ret = ast.Return(value=result)
    factory = ast.FunctionDef(
        name="__cpsad_factory__",
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


def _link(building: dict) -> None:
    """Create each new backpropagator with its closure cells, then fill the cells of callees."""
    pending = []
    for spec in building.values():
        fn = spec.fn
        user_cells = dict(zip(fn.__code__.co_freevars, fn.__closure__ or ()))
        cells = []
        for name in spec.code.co_freevars:
            if name in user_cells:
                cells.append(user_cells[name])
            elif name in spec.injected:
                cells.append(types.CellType(spec.injected[name]))
            else:  # a backpropagator: this one (recursion) or a callee's, filled below
                cell = types.CellType()
                cells.append(cell)
                pending.append((cell, spec, name))
        bp = types.FunctionType(
            spec.code, fn.__globals__, spec.bp_name, fn.__defaults__, tuple(cells)
        )
        bp.__kwdefaults__ = fn.__kwdefaults__
        bp.__qualname__ = spec.bp_name
        bp.__module__ = fn.__module__
        spec.bp = bp
    for cell, spec, name in pending:
        target = spec if name == spec.bp_name else spec.callee_specs.get(name)
        if target is None:  # pragma: no cover - the pipeline names everything it uses
            raise RuntimeError(
                f"cpsad: emitted code for {spec.fn.__qualname__} uses unknown {name!r}"
            )
        cell.cell_contents = target.bp


def _guards(unit: Unit) -> list:
    fn = unit.fn
    cells = dict(zip(fn.__code__.co_freevars, fn.__closure__ or ()))
    out = []
    for root, obj in unit.deps.items():
        if root in cells:
            out.append((cells[root], None, obj))
        elif root in fn.__globals__:
            out.append((fn.__globals__, root, obj))
    return out


def in_user_code(exc: TransformError) -> TransformError:
    """A refusal of emitted code (a derivative transformed again), at the user's line the
    emitted line came from -- where the user can act on it -- naming the emitted line too."""
    spec = _BY_PATH.get(exc.filename)
    user = spec.line_map.get(exc.lineno) if spec is not None else None
    if user is None:
        return exc
    return TransformError(
        f"{exc.message} (in the derivative of `{spec.fn.__qualname__}`: emitted code "
        f"{exc.filename}:{exc.lineno})",
        filename=spec.fn.__code__.co_filename,
        lineno=user,
        hint=exc.hint,
    )


def where_in_user_code(tb) -> list[str]:
    """For each frame of a traceback in emitted code: the user's file, line and source."""
    out = []
    while tb is not None:
        code = tb.tb_frame.f_code
        spec = _BY_PATH.get(code.co_filename)
        if spec is not None:
            user = spec.line_map.get(tb.tb_lineno)
            if user is not None:
                src = linecache.getline(spec.fn.__code__.co_filename, user).strip()
                out.append(
                    f"{spec.fn.__code__.co_filename}:{user}: {src}  "
                    f"(backpropagator of `{own_qualname(spec.fn)}`, {code.co_filename}:{tb.tb_lineno})"
                )
        tb = tb.tb_next
    return out


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


def _all_guards(spec: Spec) -> list:
    """The guards of a spec and of every spec it calls, each once."""
    seen: set[int] = set()
    out: list = []
    stack = [spec]
    while stack:
        s = stack.pop()
        if id(s) in seen:
            continue
        seen.add(id(s))
        out += s.own_guards
        stack.extend(s.callee_specs.values())
    return out


CONTEXT = Context()  # its runtime helpers (the dispatch) are added by cpsad.dispatch
