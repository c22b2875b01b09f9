"""``cpsad.jit``: backpropagators compiled by Numba -- the paper's staging, with an existing compiler.

``cpsad.grad(cpsad.jit(f))`` (so ``value_and_grad`` and ``vjp``) runs, for the kinds of the
arguments of the call, a variant of ``f``'s backpropagator that Numba compiles in nopython mode:
the reverse pipeline without Release, then Flatten (``transforms/flatten.py``) -- continuations
inlined, the seed a parameter -- emitted as a file in cpsad's cache folder, which Numba compiles
with its on-disk cache beside it. ``cpsad.grad`` of a function already compiled by ``numba.njit``
differentiates the Python function behind it, the same way.

What Flatten cannot flatten, or Numba cannot type, runs as it does without ``jit``: the Python
backpropagator, the same numbers, with one ``JitWarning`` per function saying which construct
kept it out. The staged variant is compiled once per function, differentiated parameters and
argument kinds; its data -- a closure's cells, a global array -- are parameters read at each
call (Numba would freeze them as constants).
"""

from __future__ import annotations

import ast
import functools
import hashlib
import inspect
import marshal
import os
import sys
import threading
import types
import warnings
import weakref
from collections.abc import Callable

import numpy as np

from cpsad import compiler, diskcache, runtime
from cpsad.transforms.errors import InternalError, TransformError
from cpsad.transforms.flatten import LIBRARIES, Unstageable
from cpsad.transforms.naming import own_qualname
from cpsad.transforms.stacks import floats_key


class JitWarning(UserWarning):
    """A function ``cpsad.jit`` runs with its Python backpropagator: the message says why."""


class _Marked:
    """``f``, marked for the differentiation API (``marker`` names the mark). Calling it calls
    ``f``."""

    marker = ""

    def __init__(self, fn):
        self.fn = fn
        functools.update_wrapper(self, fn)

    def __call__(self, *args, **kwargs):
        return self.fn(*args, **kwargs)

    def __repr__(self) -> str:
        return f"cpsad.{self.marker}({self.fn!r})"


class Staged(_Marked):
    """What ``cpsad.jit(f)`` returns: ``f``, marked for the differentiation API to compile its
    derivatives with Numba."""

    marker = "jit"


def jit(f: Callable) -> Staged:
    """``f`` marked so that ``cpsad.grad``, ``value_and_grad`` and ``vjp`` of it run a
    backpropagator compiled by Numba (see the module's docstring). A ``numba.njit`` function needs
    no marking: its derivatives are compiled."""
    return f if isinstance(f, Staged) else Staged(f)


class Shaped(_Marked):
    """What ``cpsad.shaped(f)`` returns: ``f``, marked for the differentiation API to run
    derivatives specialized to each call's argument shapes."""

    marker = "shaped"


def shaped(f: Callable) -> Shaped:
    """``f`` marked so that ``cpsad.grad``, ``value_and_grad`` and ``vjp`` of it run a
    backpropagator specialized to the shapes and dtypes of the arrays each call brings (each a
    transformation of its own, as ``transform(shaped(f)).at(*args)`` shows): no ``unbroadcast`` where no
    broadcast happened. A call with other shapes transforms again, as jax.jit traces again."""
    return f if isinstance(f, Shaped) else Shaped(f)


def is_shaped(f) -> bool:
    return isinstance(f, Shaped)


def is_staged(f) -> bool:
    return isinstance(f, Staged) or is_numba_function(f)


def is_numba_function(f) -> bool:
    """A Numba dispatcher (``numba.njit(f)``): a Python function behind it, ``py_func``."""
    return type(f).__module__.startswith("numba.") and hasattr(f, "py_func")


# ---------------------------------------------------------------------- compiling


class _Compiled:
    __slots__ = (
        "dispatcher",
        "params",
        "text",
        "path",
        "made_from",
        "frozen_cells",
        "frozen_globals",
        "spec",
        "buffers",
    )

    def __init__(self, dispatcher, params, text, path, buffers=False):
        self.dispatcher = dispatcher
        self.params = params  # the data it reads: (name, "cell" index or "global"), or (name,
        # (that, attributes)) for an attribute of the module ``name`` holds, or (name, ("value",
        # data)) for what an inlined helper of another module reads; and (name, "stack") where
        # it calls itself: 0, the first call (``runtime.within_stack``)
        self.text = text
        self.path = path
        # its loops save floats in buffers (``transforms/stacks.py``): where Numba cannot type
        # them -- a value is not a float64 after all -- it is made again with lists
        self.buffers = buffers
        # what it is valid for (``_still_valid``): the transformations of the call graph it was
        # made with, and the objects Numba froze from the closure's cells (index, reference)
        self.made_from: tuple = ()
        self.frozen_cells: tuple = ()
        self.frozen_globals: tuple = ()  # (holder, name, value): ``_frozen_world``'s
        self.spec = None  # (a weak reference to the spec last checked: the fast check)


class _NotYet(Exception):
    """Stands for ``cpsad.jit_runtime.Refused`` until that module is imported (Numba with it)."""


_Refused: type = _NotYet  # what compiled code raises where the Python backpropagator decides
_LOCK = threading.RLock()
_MADE: dict = {}  # (code, active, kinds) -> _Compiled, or the reason it falls back (a str)
_WARNED: set = set()
# code -> how many calls its compiled code refused at run time (``Refused``: the Python
# backpropagator ran, without a warning -- a refusal may depend on the data). Read by the tests:
# a function said to compile whose compiled code refuses every call would pass them unnoticed.
REFUSED: dict = {}


def _call(fn, spec, kinds, args, kwargs, first: tuple, mode):
    """``ready``, then ``invoke``: what the compiled code returns for the adjoints or tangents
    ``first`` (None: the Python code runs)."""
    made = ready(fn, spec, kinds, args, kwargs, mode)
    if made is None:
        return None
    c, key, positional = made
    return invoke(c, key, fn, spec, positional, first, mode, (kinds, args, kwargs))


def ready(fn, spec, kinds, args, kwargs, mode=compiler.STAGED) -> tuple | None:
    """``(compiled, key, arguments by position)``: what ``invoke`` runs for this call of ``fn``
    (``spec``: its Python backpropagator, valid now) -- made now if need be -- or None where it
    is not staged (warned once: why) or the call is wrong (the Python one says so, as ``fn``
    would). The caller may run it again for another call of the same argument types while
    ``still_ready`` says so."""
    args = _positional(fn, args, kwargs)
    if args is None:
        return None
    kinds = staged_kinds(fn, kinds, args, mode)
    key = (fn.__code__, spec.active, kinds, mode)
    if key not in _MADE:  # (a first call of these kinds: an argument no Numba type holds?)
        why = _not_numba_values(fn, args)
        if why is not None:
            with _LOCK:
                _MADE[key] = why
            return _fall_back(fn, why)
    c = compiled(fn, spec.active, kinds, spec, mode)
    if isinstance(c, str):
        return _fall_back(fn, c)
    return c, key, args


def still_ready(c: _Compiled, key: tuple, fn, spec) -> bool:
    """Is what ``ready`` gave still what it would give for ``fn`` and ``spec`` (valid now)?"""
    return _MADE.get(key) is c and _still_valid(c, fn, spec)


def invoke(c: _Compiled, key: tuple, fn, spec, args: list, first: tuple, mode, again: tuple):
    """What ``c`` returns for ``fn``'s arguments ``args`` (by position) and the adjoints or
    tangents ``first`` -- or None where the Python backpropagator runs instead (warned once:
    why). ``again``: the call's ``(kinds, args, kwargs)``, to make it again with lists where a
    value its buffers took for a float is not one."""
    extra = []
    for name, where in c.params:
        if where == "global":
            extra.append(fn.__globals__[name])
        elif where == "stack":
            extra.append(0)
        elif type(where) is tuple and where[0] == "value":
            extra.append(where[1])
        elif type(where) is tuple:  # (an attribute of a module: ``where``, its names)
            where, attrs = where
            value = (
                fn.__globals__[name] if where == "global" else fn.__closure__[where].cell_contents
            )
            for a in attrs:
                value = getattr(value, a)
            extra.append(value)
        else:
            extra.append(fn.__closure__[where].cell_contents)
    compiled_before = len(c.dispatcher.overloads)  # (``signatures`` makes a list: 2 us a call)
    try:
        return c.dispatcher(*first, *args, *extra)
    except _Refused:  # (the Python backpropagator decides, and says why where it refuses)
        with _LOCK:
            REFUSED[fn.__code__] = REFUSED.get(fn.__code__, 0) + 1
        return None
    except NotImplementedError as exc:  # (what Numba compiled but cannot do: a reshape of a
        # transposed array -- numpy copies, Numba raises; the Python one runs, as it would)
        with _LOCK:
            _MADE[key] = reason = f"Numba cannot run it: {exc}"
        return _fall_back(fn, reason)
    except Exception as exc:
        # (what the compiled code raised, it raised after its compile, which added a signature)
        if _numba_error(exc) and len(c.dispatcher.overloads) == compiled_before:
            if c.buffers:  # (a value the Stacks pass took for a float is not one: lists)
                _, active, kinds, _ = key
                with _LOCK:
                    made = _MADE[key] = _make(fn, active, kinds, mode, buffers=False)
                    if isinstance(made, _Compiled):
                        made.made_from, made.spec = c.made_from, c.spec
                return _call(fn, spec, *again, first, mode)
            with _LOCK:  # Numba's typing of these argument types
                _MADE[key] = reason = _numba_reason(exc)
            return _fall_back(fn, reason)
        # the compiled code raised: the Python one runs -- and raises as the function does, or
        # (where Numba's code alone fails: an Optional it could not unbox) gives the numbers
        return _fall_back(fn, f"its compiled code raised {type(exc).__name__}: {exc}")


def _not_numba_values(fn, args: list) -> str | None:
    """Why Numba cannot take the arguments ``args`` (``fn``'s, by position), named, or None:
    a plain ``dict`` (a parameter dict: Numba's dictionaries are ``numba.typed.Dict``, of one
    value type) or an object of a class of yours. Said before Numba tries (0.3 s for an MLP,
    and its "non-precise type pyobject" names no argument)."""
    code = fn.__code__
    names = code.co_varnames[: code.co_argcount + code.co_kwonlyargcount]
    if code.co_flags & inspect.CO_VARARGS:
        names += (code.co_varnames[len(names)],)
    for name, value in zip(names, args):
        if type(value) is dict:
            what = "a dict"
        elif _an_object(value):
            what = f"an object of class `{type(value).__qualname__}`"
        else:
            continue  # (a number, an array, a tuple, a function, a jitclass: Numba decides)
        return (
            f"its argument `{name}` is {what}, which Numba cannot take (it compiles numbers, "
            "arrays and tuples of them; pass the arrays themselves as arguments)"
        )
    return None


def _an_object(value) -> bool:
    """An instance of a Python class of yours (with a ``__dict__``): not a function, a class,
    a numpy or builtin value, or a Numba jitclass's instance."""
    t = type(value)
    return (
        hasattr(value, "__dict__")
        and t.__module__ not in _OWN_MODULES
        and not hasattr(t, "_numba_type_")
        and not callable(value)
        and not isinstance(value, type)
    )


_OWN_MODULES = frozenset({"builtins", "numpy"})  # (types Numba knows, or refuses by itself)


def staged_kinds(fn, kinds: tuple, args: list, mode=compiler.STAGED) -> tuple:
    """The key of the staged code of ``fn`` for a call with ``args`` (all by position:
    ``_positional``): the Python backpropagator's ``kinds``, and -- for a backpropagator, whose
    loops save values (the Stacks pass) -- which parameters hold floats (Numba compiles a
    function for each type)."""
    if mode != compiler.STAGED:
        return kinds
    code = fn.__code__
    return kinds + floats_key(code.co_varnames[: code.co_argcount + code.co_kwonlyargcount], args)


def _positional(fn, args: list, kwargs: dict) -> list | None:
    """The arguments of ``fn(*args, **kwargs)`` by position only, as the staged function takes
    them (Flatten's ``_positional``): the positional parameters', the keyword-only ones', the
    tuple of ``*args``; defaults filled in. None: not a call ``fn`` accepts."""
    code = fn.__code__
    n = code.co_argcount
    if not kwargs and len(args) == n and not code.co_kwonlyargcount:
        return list(args) if code.co_flags & inspect.CO_VARARGS == 0 else [*args, ()]
    varargs = code.co_flags & inspect.CO_VARARGS
    if len(args) > n and not varargs:
        return None
    names = code.co_varnames[: n + code.co_kwonlyargcount]
    given = dict(zip(names[:n], args))
    for name, value in kwargs.items():
        if (
            name not in names
            or name in given
            or name in code.co_varnames[: code.co_posonlyargcount]
        ):
            return None
        given[name] = value
    defaults = dict(zip(names[n - len(fn.__defaults__ or ()) : n], fn.__defaults__ or ()))
    defaults.update(fn.__kwdefaults__ or {})
    if any(name not in given and name not in defaults for name in names):
        return None
    out = [given[name] if name in given else defaults[name] for name in names]
    if varargs:
        out.append(tuple(args[n:]))
    return out


def compiled(fn, active, kinds, spec=None, mode=compiler.STAGED) -> _Compiled | str:
    """The staged backpropagator of ``fn`` (``mode`` STAGED_FORWARD: its tangent function),
    made once per code, parameters and kinds, and again when what it was made from changed
    (``_still_valid``) -- or why there is none."""
    key = (fn.__code__, active, kinds, mode)
    if spec is None:
        spec = compiler.specialize(
            fn, active, kinds, "forward" if mode == compiler.STAGED_FORWARD else "reverse"
        )
    made = _MADE.get(key)
    if isinstance(made, _Compiled) and _still_valid(made, fn, spec):
        return made
    with _LOCK:
        made = _MADE.get(key)
        if made is None or (isinstance(made, _Compiled) and not _still_valid(made, fn, spec)):
            made = _MADE[key] = _make(fn, active, kinds, mode)
            if isinstance(made, _Compiled):
                made.made_from = _made_from(spec)
                made.spec = weakref.ref(spec)
    return made


def _still_valid(c: _Compiled, fn, spec) -> bool:
    """Was ``c`` made from what ``spec`` (valid now) was made from? Numba froze the functions and
    modules the staged code names, as the transformations resolved them: a helper rebound, a
    module reloaded -- a new transformation somewhere in the call graph -- or another function
    in a closure's cell makes it stale. (The same spec as last time: nothing to compare.)"""
    cells = fn.__closure__
    for i, ref in c.frozen_cells:
        if cells[i].cell_contents is not ref():
            return False
    for holder, name, value in c.frozen_globals:  # (what Numba froze calling yours as they are)
        if (
            holder.get(name, _MISSING) if type(holder) is dict else getattr(holder, name)
        ) is not value:
            return False
    if c.spec is not None and c.spec() is spec:
        return True
    if _made_from(spec) != c.made_from:
        return False
    c.spec = weakref.ref(spec)
    return True


def _made_from(spec) -> tuple:
    """The transformations of ``spec``'s call graph (by identity: references to them compare
    equal while they live)."""
    out, todo, seen = [], [spec], set()
    while todo:
        s = todo.pop()
        if id(s) in seen:
            continue
        seen.add(id(s))
        out.append(weakref.ref(s.t))
        todo.extend(s.callee_specs.values())
    return tuple(out)


_MISSING = object()
_APART: set = set()  # the codes of the functions being compiled apart (under _LOCK)


def compiled_apart(fn, active, kinds) -> _Compiled | str:
    """A function staged code calls but could not copy in -- one that calls itself -- compiled
    on its own, for its caller's code to call (``transforms/recursion.py``): its staged
    backpropagator, with lists (a caller's compile cannot make it again without buffers), made
    once per code, parameters and kinds and again when what it was made from changed -- or
    why not: it reads data (a global array, a closure's cell: its caller could not pass them),
    or it is being compiled apart already (recursion through two functions, each compiled
    apart)."""
    code = fn.__code__
    key = (code, active, kinds, "apart")
    with _LOCK:
        if code in _APART:
            return "recursion through functions compiled apart"
        spec = compiler.specialize(fn, active, kinds, "reverse")
        made = _MADE.get(key)
        if made is None or (isinstance(made, _Compiled) and not _still_valid(made, fn, spec)):
            _APART.add(code)
            try:
                made = _MADE[key] = _make(fn, active, kinds, compiler.STAGED, buffers=False)
            finally:
                _APART.discard(code)
            if isinstance(made, _Compiled):
                made.made_from = _made_from(spec)
                made.spec = weakref.ref(spec)
    if isinstance(made, str):
        return made
    data = [name for name, where in made.params if where != "stack"]
    if data:
        return f"it reads `{data[0]}`, data its caller's compiled code does not pass"
    return made


def staged_source(fn, active, kinds=(), mode=compiler.STAGED) -> str:
    """The text Numba compiles for ``fn`` (``cpsad show --jit``; ``mode`` STAGED_FORWARD: the
    tangent function, ``--jit --forward``); a TransformError if none."""
    unit, _ = compiler.run_pipeline(fn, active, entry=False, kinds=kinds, mode=mode)
    return unit.text


def _make(fn, active, kinds, mode, buffers=True):
    skip = () if buffers else ("stacks",)
    try:
        unit, _ = compiler.run_pipeline(fn, active, entry=False, kinds=kinds, mode=mode, skip=skip)
    except Unstageable as exc:
        return f"{exc.what} ({exc.filename}:{exc.lineno})"
    except (TransformError, InternalError) as exc:  # (the Python backpropagator was made)
        return f"a bug in cpsad's staging, please report it: {exc}"
    numba = _numba()
    if numba is None:
        return "Numba is not installed (pip install numba)"
    from cpsad import jit_runtime  # (importing it registers Numba's helpers)

    global _Refused
    _Refused = jit_runtime.Refused

    frozen = _module_globals(unit)
    through = _module_functions(unit)  # (``helpers.h``: (module, "h", function))
    as_they_are = [  # (a function of yours, or one you compiled with numba.njit)
        getattr(o, "py_func", o)
        for o in [*frozen.values(), *unit.injected.values(), *(f for _, _, f in through)]
        if _plain_function(o) or is_numba_function(o)
    ]
    world = _frozen_world(as_they_are)
    if isinstance(world, str):
        return world
    lines, checked = world
    checked += tuple(through)
    # (what Numba compiles in as it is, by digest, in the text: Numba's cache keys on the
    # staged file alone, and would give the code compiled with a function since changed)
    text = unit.text + "".join(f"{line}\n" for line in lines)
    stem = f"{fn.__module__}.{own_qualname(fn)}".replace("<", "_").replace(">", "_")
    suffix = "jvp.jit" if mode == compiler.STAGED_FORWARD else "jit"
    # (the Numba helpers' version in the name: Numba's cache keys on the staged file alone, and
    # would give the code compiled with the helpers of another cpsad -- one since fixed)
    name = f"{stem}.{'_'.join(active) or 'none'}.{suffix}-{_runtime_version()}"
    path = diskcache.store(name, text, touch=False)
    # (an importable module's name: Numba's cache, loading the code, imports it for its globals)
    namespace = {"__name__": "cpsad.jit_runtime", "__file__": path}
    as_is = _compiled_as_they_are(
        numba,
        [*unit.injected.values(), *frozen.values()]
        + [f for module, _, f in through if not _numba_knows(module)],
    )
    params = set(unit.staged_params)
    for name, obj in {**frozen, **unit.injected}.items():
        # (a user's function the staged code calls as it is -- its result is not
        # differentiated; another module's, under the name Callees gave it -- is compiled too,
        # or Numba cannot call it. Data it takes as parameters are not kept here: the first
        # closure's array would live as long as the compiled code)
        if name not in params:
            namespace[name] = as_is.get(id(obj), obj)
    _through_compiled(unit, namespace, as_is)
    # (the import lines document the names; the namespace holds them, as _compile's cells do)
    tree = ast.parse(unit.text, filename=path)
    tree.body = [s for s in tree.body if not isinstance(s, (ast.Import, ast.ImportFrom))]
    exec(compile(tree, path, "exec"), namespace)
    py = namespace[unit.bp_name]
    freevars = fn.__code__.co_freevars
    params = []
    for name in unit.staged_params:
        if name in unit.injected:  # (data an inlined helper of another module reads, as the
            # transformation found it -- valid while it is: ``_still_valid``)
            params.append((name, ("value", unit.injected[name])))
            continue
        root, attrs = unit.staged_attributes.get(name, (name, ()))
        where = freevars.index(root) if root in freevars else "global"
        params.append((root, where) if not attrs else (root, (where, attrs)))
    if unit.stack_param:  # (the first call: 0, see ``runtime.within_stack``)
        params.append((unit.stack_param, "stack"))
    dispatcher = numba.njit(cache=True, **_CHECKED)(py)
    # (a call of itself -- a tangent function's recursion -- calls the compiled function)
    namespace[unit.bp_name] = dispatcher
    made = _Compiled(dispatcher, params, text, path, buffers=_made_buffers(unit))
    made.frozen_globals = checked
    made.frozen_cells = tuple(
        (freevars.index(name), _reference(obj))
        for name, obj in frozen.items()
        if name in freevars and name not in unit.injected
    )
    return made


_SCALARS = (int, float, bool, complex, str, bytes, type(None))


def _frozen_world(functions) -> tuple[list, tuple] | str:
    """What Numba compiles in, calling the user's ``functions`` as they are (their results are
    not differentiated): their code, and what their globals hold -- the functions Numba
    compiled already (``numba.njit``: their Python functions in turn), modules, and numbers,
    which it freezes as constants. Returns lines for the staged text (a digest of each code and
    each number's value: another one is another file, which Numba's cache does not confuse)
    and ``(holder, name, value)`` to check at each call (another value there: made again) --
    or why it cannot: a closure, or data (an array) Numba would freeze."""
    lines, checked, seen = [], [], set()
    todo = list(functions)
    while todo:
        f = todo.pop()
        if id(f) in seen:
            continue
        seen.add(id(f))
        where = f"{f.__module__}.{f.__qualname__}"
        if f.__closure__:
            return f"`{where}`, called as it is, is a closure (Numba would freeze its cells)"
        code = f.__code__
        digest = hashlib.sha1(
            marshal.dumps(code) + repr((f.__defaults__, f.__kwdefaults__)).encode()
        ).hexdigest()[:12]
        lines.append(f"# {where}: compiled as it is, its code {digest}")
        checked.append((f, "__code__", code))
        g = f.__globals__
        for name in sorted(_global_names(code)):
            if name not in g:
                continue  # (a builtin, or an attribute's name)
            value = g[name]
            checked.append((g, name, value))
            if (
                isinstance(value, types.ModuleType)
                and value.__name__.split(".")[0] not in LIBRARIES
            ):
                # (``lib.K``: an attribute of a module of yours, read by its name -- any of the
                # code's names it holds is taken for one)
                for attr in sorted(_global_names(code) & set(vars(value))):
                    held = getattr(value, attr)
                    checked.append((value, attr, held))
                    if type(held) in _SCALARS:
                        lines.append(f"#   {name}.{attr} = {held!r}")
                    elif is_numba_function(held) or _plain_function(held):
                        todo.append(getattr(held, "py_func", held))
                    elif not (isinstance(held, (types.ModuleType, type)) or callable(held)):
                        return (
                            f"`{where}`, called as it is, reads `{name}.{attr}`, which Numba "
                            "would freeze"
                        )
                continue
            if isinstance(value, types.ModuleType) or not _plain_function(
                getattr(value, "py_func", value)
            ):
                if type(value) in _SCALARS:
                    lines.append(f"#   {name} = {value!r}")
                elif not (isinstance(value, (types.ModuleType, type)) or callable(value)):
                    return f"`{where}`, called as it is, reads `{name}`, which Numba would freeze"
                continue
            todo.append(getattr(value, "py_func", value))
    return lines, tuple(checked)


def _compiled_as_they_are(numba, objects) -> dict:
    """``id(function) -> numba.njit`` of it, for each function of the user's among ``objects``
    (called as it is) and each the ones compiled call by their global names: each compiled from
    a copy of itself whose globals name the others compiled -- Numba calls no Python function,
    so one calling itself (recursion) or another of the user's could not compile. (The copy of
    the globals is what ``_frozen_world`` digested and checks at each call.)"""
    todo = [o for o in objects if _plain_function(o)]
    copies: dict = {}  # id(function) -> (the copy, its globals)
    while todo:
        f = todo.pop()
        if id(f) in copies:
            continue
        g = dict(f.__globals__)
        copy = types.FunctionType(f.__code__, g, f.__name__, f.__defaults__, f.__closure__)
        copy.__kwdefaults__ = f.__kwdefaults__
        copies[id(f)] = (copy, g)
        todo.extend(g[n] for n in _global_names(f.__code__) if n in g and _plain_function(g[n]))
    compiled = {i: numba.njit(**_CHECKED)(copy) for i, (copy, _) in copies.items()}
    for copy, g in copies.values():
        for n in _global_names(copy.__code__):
            if n in g and id(g[n]) in compiled:
                g[n] = compiled[id(g[n])]
    return compiled


def _global_names(code) -> set:
    """The names ``code`` and the code objects in it may read as globals (attributes' names
    too: ``co_names`` holds both)."""
    out, todo = set(), [code]
    while todo:
        c = todo.pop()
        out.update(c.co_names)
        todo.extend(k for k in c.co_consts if isinstance(k, types.CodeType))
    return out


def _made_buffers(unit) -> bool:
    """Did the Stacks pass give a loop of ``unit`` buffers of floats?"""
    return any(obj is runtime.float_frames for obj in unit.injected.values())


# An index out of range raises IndexError, as in Python: Numba does not check by default, and
# reads past the end -- a number from other memory, where the Python backpropagator raises.
_CHECKED = {"boundscheck": True}


@functools.cache
def _runtime_version() -> str:
    """A digest of the Numba helpers' source (``cpsad/jit_runtime.py``) and of the runtime's
    (``cpsad/runtime.py``), whose tables they read (``CHECKED_MATH``)."""
    from cpsad import jit_runtime

    digest = hashlib.sha1()
    for module in (jit_runtime, runtime):
        with open(module.__file__, "rb") as f:
            digest.update(f.read())
    return digest.hexdigest()[:8]


def _plain_function(obj) -> bool:
    """A Python function of the user's (not cpsad's helpers, which have Numba versions)."""
    if not inspect.isfunction(obj):
        return False
    module = obj.__module__ or ""  # (not a module named like cpsad's: "cpsad_fuzz_...")
    return module != "cpsad" and not module.startswith("cpsad.")


def _reference(obj):
    """A weak reference to ``obj`` where it takes one (a function in a closure's cell: nothing
    cpsad keeps may keep it alive), else a strong one."""
    try:
        return weakref.ref(obj)
    except TypeError:
        return lambda: obj


def _module_globals(unit) -> dict:
    """The modules and functions the staged code names from ``fn``'s world (frozen by Numba as
    it freezes globals; the data are parameters)."""
    out = {}
    for name in _free_names(unit):
        found, obj = unit.lookup(name)
        if found:
            out[name] = obj
    return out


def _module_functions(unit) -> list:
    """``(module, name, function)`` for each function the staged code reaches through a module
    of the user's (``helpers.h``): Numba freezes it as it freezes a global."""
    return [(holder, attrs[-1], value) for _, attrs, holder, value in _module_paths(unit)]


def _module_paths(unit):
    """``(root, attributes, module, function)`` for each dotted name of the staged code that
    reaches a function through a module (``helpers.h``: ``("helpers", ["h"], helpers, h)``)."""
    from cpsad.transforms import astlib as A

    for node in A.walk(unit.tree):
        path = A.dotted(node) if isinstance(node, A.Attribute) else None
        if path is None:
            continue
        root, *attrs = path.split(".")
        found, holder = unit.lookup(root)
        if not found or not isinstance(holder, types.ModuleType):
            continue
        for a in attrs[:-1]:
            holder = getattr(holder, a, None)
        value = getattr(holder, attrs[-1], None)
        if isinstance(holder, types.ModuleType) and (
            _plain_function(value) or is_numba_function(value)
        ):
            yield root, attrs, holder, value


def _through_compiled(unit, namespace: dict, as_is: dict) -> None:
    """Where the staged code calls a function of yours as it is through a module
    (``helpers.rowsum(x)``, data only), give it that module as a copy whose attribute is the
    function compiled (``as_is``): Numba calls no Python function, and would refuse the whole
    function with "Unknown attribute 'rowsum' of type Module". The module itself is unchanged;
    the copies' other attributes are the module's (what ``_module_functions`` froze)."""
    overrides: dict = {}  # root name -> nested {attribute: compiled or {...}}
    for root, attrs, holder, value in _module_paths(unit):
        compiled = as_is.get(id(value))
        if compiled is None or _numba_knows(holder):
            continue
        if not isinstance(namespace.get(root), types.ModuleType):  # (a closure's cell: not here)
            continue
        level = overrides.setdefault(root, {})
        for a in attrs[:-1]:
            level = level.setdefault(a, {})
        level[attrs[-1]] = compiled
    for root, tree in overrides.items():
        namespace[root] = _module_copy(namespace[root], tree)


def _numba_knows(module: types.ModuleType) -> bool:
    """A module whose functions Numba types itself (``np.ones``: its Python source is not what
    Numba compiles)."""
    return module.__name__.partition(".")[0] in _NUMBA_TYPES_ITS_OWN


_NUMBA_TYPES_ITS_OWN = frozenset(
    {"numpy", "math", "cmath", "random", "operator", "numba", "scipy", "cpsad", "builtins"}
)


def _module_copy(module: types.ModuleType, overrides: dict) -> types.ModuleType:
    copy = types.ModuleType(module.__name__, module.__doc__)
    copy.__dict__.update(module.__dict__)
    for name, value in overrides.items():
        setattr(
            copy, name, _module_copy(getattr(module, name), value) if type(value) is dict else value
        )
    return copy


def _free_names(unit) -> set:
    from cpsad.transforms import astlib as A

    return {n.id for n in A.walk(unit.tree) if isinstance(n, A.Name)}


def _fall_back(fn, reason: str):
    key = (fn.__code__, reason)
    if key not in _WARNED:
        _WARNED.add(key)
        warnings.warn(
            f"cpsad.jit: {own_qualname(fn)} runs its Python backpropagator (the same numbers, "
            f"not compiled): {reason}",
            JitWarning,
            stacklevel=_user_level(),
        )
    return None


def _user_level() -> int:
    """The stack level of the first frame outside cpsad (the user's call of the gradient)."""
    here = os.path.dirname(os.path.abspath(__file__))
    frame, level = sys._getframe(1), 1
    while frame is not None and os.path.abspath(frame.f_code.co_filename).startswith(here):
        frame, level = frame.f_back, level + 1
    return level


def _numba_error(exc) -> bool:
    """Did Numba fail, rather than the compiled code raise? Its own errors, or any raised inside
    it (a RecursionError of its analyses, an assertion: the last frame is Numba's). (A first
    call's compiled code raising has Numba's frame last too: the caller tells them apart.)"""
    if type(exc).__module__.startswith("numba"):
        return True
    numba = _numba()
    if numba is None:
        return False
    tb = exc.__traceback__
    while tb is not None and tb.tb_next is not None:
        tb = tb.tb_next
    here = os.path.dirname(os.path.abspath(numba.__file__))
    return tb is not None and os.path.abspath(tb.tb_frame.f_code.co_filename).startswith(here)


def _numba_reason(exc) -> str:
    """The line of Numba's message that says what it could not type, and where."""
    if not type(exc).__module__.startswith("numba"):
        return f"Numba's compiler failed: {type(exc).__name__}: {str(exc)[:200]}"
    lines = [ln.strip() for ln in _plain(str(exc)).splitlines() if ln.strip()]
    what = next(
        (ln for ln in lines if not ln.startswith(("Failed in", "File ", "During:", "def "))), ""
    )
    where = next((ln for ln in lines if ln.startswith("File ")), "")
    return f"Numba could not compile it: {what[:300]} ({where})"


def _plain(text: str) -> str:
    import re

    return re.sub(r"\x1b\[[0-9;]*m", "", text)


@functools.cache
def _numba():
    try:
        import numba
    except ImportError:
        return None
    return numba


_FLOATS = (float, np.float64)


def seed_matches(returned, seed) -> bool:
    """Whether the continuation's seed for the staged run's value is the one it ran with."""
    if returned is seed:
        return True
    if type(returned) in _FLOATS and type(seed) in _FLOATS:  # (for speed: np.ndim is 1 us)
        return returned == seed
    if type(seed) is tuple:  # (has_aux: the adjoint of a pair, ``Sparse`` of its seeded entries)
        entries = {i: s for i, s in enumerate(seed) if s is not None}
        return (
            isinstance(returned, dict)
            and returned.keys() == entries.keys()
            and all(seed_matches(returned[i], s) for i, s in entries.items())
        )
    if np.ndim(returned) or np.ndim(seed):
        return False
    return type(returned) in (float, np.float64) and returned == seed
