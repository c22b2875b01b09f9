"""How a call of the API binds: the function to transform, the parameters ``argnums`` name, and
-- for a derivative of a derivative -- the backpropagator that is differentiated again.

Shared by the API (``cpsad.api``) and the runtime dispatch (``cpsad.dispatch``), which both
build on the compiler (``cpsad.compiler``): this module imports neither of them.
"""

from __future__ import annotations

import functools
import inspect
import types
from collections.abc import Callable

import numpy as np

from cpsad import compiler
from cpsad.pytree import leaves, promote
from cpsad.runtime import Closure, foreign, scalar_seed, struct_parts
from cpsad.transforms.resolve import LRU_CACHE
from cpsad.transforms.unit import SEED, kinds_key


def target(f: Callable) -> Callable:
    """The Python function to transform for ``f``.

    A decorated function is the function the decorator returned -- the wrapper, which is what
    runs -- never the one ``functools.wraps`` says it wraps (``__wrapped__``): a wrapper that
    doubles its function's value has twice its gradient. A ``functools.lru_cache`` object is
    followed to its function (the cache returns what the function returns). (Nothing is
    remembered per object: a few type checks, and no reference that keeps ``f`` alive.)"""
    return _python_function(f)


def _python_function(f: Callable) -> Callable:
    from cpsad import staging  # (a Numba function, or one marked by cpsad.jit: the Python function)

    if isinstance(f, (staging.Staged, staging.Shaped)):
        return _python_function(f.fn)
    if staging.is_numba_function(f):
        return _python_function(f.py_func)
    if inspect.ismethod(f):
        raise TypeError(
            "cpsad differentiates plain functions; for a method, differentiate "
            "`type(obj).method` and pass the object as the first argument"
        )
    if isinstance(f, LRU_CACHE) and inspect.isfunction(getattr(f, "__wrapped__", None)):
        return _python_function(f.__wrapped__)
    if isinstance(f, functools.partial):
        raise TypeError(
            "cpsad.transform and cpsad.show take the function itself, not a functools.partial "
            "of it (grad, value_and_grad, vjp and jvp take partials)"
        )
    if isinstance(f, Closure):  # a function defined inside one being differentiated
        raise closure_derivative(f)
    if not inspect.isfunction(f):
        raise TypeError(f"cpsad can only differentiate Python functions, not {type(f).__name__}")
    return f


def bound(f, args: tuple, nums: tuple, kwargs: dict):
    """``f(*args, **kwargs)`` as a call of a Python function: a ``functools.partial`` adds its
    arguments in front (constants: ``nums`` move past them) and its keywords; so does a bound
    method its object (``model.loss``: ``type(model).loss`` with ``model`` first, data); a
    function with a derivative rule (``np.sin``, ``math.tanh``) is called by a Python function
    of as many parameters (``primitive_caller``)."""
    f = _unstaged(f)
    while isinstance(f, functools.partial) or _python_method(f):
        extra = (f.__self__,) if _python_method(f) else f.args
        n, given = len(extra), len(args)
        nums = tuple((i % given if given else i) + n for i in nums)
        args = (*extra, *args)
        if isinstance(f, functools.partial):
            kwargs = {**f.keywords, **kwargs}
            f = f.func
        else:
            f = f.__func__
        f = _unstaged(f)
    if not inspect.isfunction(f) and _has_rule(f):
        f = primitive_caller(f, len(args), kwargs)
    return f, args, nums, kwargs


def _unstaged(f):
    """``f`` without ``cpsad.jit``'s mark, or the Python function behind a Numba dispatcher (the
    API decides to stage from the callable it was given: ``staging.is_staged``)."""
    from cpsad import staging

    while isinstance(f, (staging.Staged, staging.Shaped)) or staging.is_numba_function(f):
        f = f.fn if isinstance(f, (staging.Staged, staging.Shaped)) else f.py_func
    return f


def _python_method(f) -> bool:
    """A method bound to its object, of a Python function (not a builtin's: ``[].append``)."""
    return inspect.ismethod(f) and inspect.isfunction(f.__func__)


def _has_rule(f) -> bool:
    from cpsad.rules import core  # (the rules import the runtime, as this module does)

    try:
        return core.lookup(f) is not None or core.composite(f) is not None
    except TypeError:  # unhashable
        return False


_CALLERS: dict = {}  # (primitive, number of arguments) -> a Python function that calls it


def primitive_caller(prim, n: int, kwargs: dict):
    """A Python function of ``n`` parameters that returns ``prim`` of them: what
    ``cpsad.grad(np.sin)`` differentiates -- the primitive's rule, through a call of it. One
    per primitive and arity (each closes over its own ``prim``). Marked as cpsad's code to
    transform like yours (``source``): its backpropagator, passed as a value to be
    differentiated again (``dispatch.bp_of``), is transformed too."""
    name = getattr(prim, "__name__", repr(prim))
    if kwargs:
        raise TypeError(
            f"cpsad differentiates {name} directly with positional arguments only; for "
            f"keywords, differentiate a function of yours: lambda x: {name}(x, "
            + ", ".join(f"{k}=..." for k in kwargs)
            + ")"
        )
    key = (prim, n)
    caller = _CALLERS.get(key)
    if caller is None:
        if not 1 <= n <= len(_ARITIES):
            raise TypeError(
                f"cpsad differentiates {name} directly with 1 to "
                f"{len(_ARITIES)} arguments; wrap it in a function of yours for {n}"
            )
        caller = _CALLERS[key] = source(_ARITIES[n - 1](prim))
    return caller


def source(fn):
    """Mark ``fn``, a function of cpsad's, as code to transform like yours (the context
    classifies it so; its backpropagators are marked too)."""
    fn.__cpsad_source__ = True
    return fn


def _call1(prim):
    def primitive(x):
        return prim(x)

    return primitive


def _call2(prim):
    def primitive(x, y):
        return prim(x, y)

    return primitive


def _call3(prim):
    def primitive(x, y, z):
        return prim(x, y, z)

    return primitive


def _call4(prim):
    def primitive(x, y, z, w):
        return prim(x, y, z, w)

    return primitive


_ARITIES = (_call1, _call2, _call3, _call4)


def note_decorated(fn, exc: BaseException) -> None:
    """Say, on a refusal of a decorator's wrapper, what was transformed and what to write."""
    wrapped = getattr(fn, "__wrapped__", None)
    if wrapped is None or not hasattr(exc, "add_note") or getattr(exc, "_cpsad_decorated", False):
        return
    name = getattr(wrapped, "__name__", "f")
    exc.add_note(
        f"`{name}` is decorated: cpsad differentiates the wrapper the decorator returned "
        f"(`{fn.__code__.co_qualname}`), the function that runs, and refused what the wrapper "
        f"does. Differentiate `{name}.__wrapped__` to differentiate the undecorated function."
    )
    exc._cpsad_decorated = True


@functools.lru_cache(maxsize=1024)
def params_for(code, argnums: tuple[int, ...], nargs: int):
    """Which parameters the positional arguments ``argnums`` bind, and how to find their gradients."""
    npos = code.co_argcount
    names = code.co_varnames
    has_var = bool(code.co_flags & inspect.CO_VARARGS)
    active: list[str] = []
    where = []  # per argnum: (param, index into *args or None)
    for i in argnums:
        if i < 0:
            i += nargs
        if not 0 <= i < nargs:
            raise ValueError(f"argnums refers to argument {i}, but the call passes {nargs}")
        if i < npos:
            p, k = names[i], None
        elif has_var:
            p, k = names[npos + code.co_kwonlyargcount], i - npos
        else:  # pragma: no cover - Python would reject the call
            raise ValueError(f"argument {i} does not exist")
        if p not in active:
            active.append(p)
        where.append((p, k))
    order = list(names)
    active.sort(key=order.index)
    return tuple(active), tuple(where)


def check_argnums(f, argnums, args: tuple, kwargs: dict) -> None:
    """Each of ``argnums`` selects a positional argument the call ``f(*args, **kwargs)`` passes --
    else an error that says which parameter it means and, where the call passed that parameter
    by keyword, that ``argnums`` counts positional arguments only (as in JAX)."""
    n = len(args)
    for i in argnums_tuple(argnums):
        if -n <= i < n:
            continue
        name = _positional_parameter(f, i)
        if name is not None and name in kwargs:
            given = ", ".join([*("..." for _ in range(n)), f"{name}=..."])
            raise TypeError(
                f"argnums={argnums!r} selects positional argument {i}, `{name}`, but the call passes "
                f"`{name}` by keyword ({given}); argnums counts the positional arguments of the "
                f"call only, as in JAX: pass `{name}` by position"
            )
        passed = f"{n} positional argument{'' if n == 1 else 's'}"
        if kwargs:
            passed += f" (and {', '.join(f'`{k}`' for k in kwargs)} by keyword)"
        what = f"argument {i}" + (f", `{name}`" if name is not None else "")
        raise ValueError(
            f"argnums={argnums!r} selects positional {what}, but the call passes {passed}; argnums "
            "counts the positional arguments of the call"
        )


def _positional_parameter(f, i: int) -> str | None:
    """The name of the ``i``-th positional parameter of ``f`` as a caller sees it (None if it
    has none: ``i`` negative, past its parameters, into ``*args``, or no signature)."""
    if i < 0:
        return None
    try:
        params = list(inspect.signature(f).parameters.values())
    except (TypeError, ValueError):
        return None
    P = inspect.Parameter
    positional = [p.name for p in params if p.kind in (P.POSITIONAL_ONLY, P.POSITIONAL_OR_KEYWORD)]
    return positional[i] if i < len(positional) else None


def argnums_tuple(argnums) -> tuple[int, ...]:
    if isinstance(argnums, int):
        return (argnums,)
    out = tuple(argnums)
    if not out or not all(isinstance(i, int) for i in out):
        raise TypeError(f"argnums must be an int or a tuple of ints, got {argnums!r}")
    return out


def specialize(fn, active, kinds, mode="reverse"):
    try:
        return compiler.specialize(fn, active, kinds, mode)
    except SyntaxError as exc:  # a TransformError
        note_decorated(fn, exc)
        raise


def function_of(f, args: tuple, nums: tuple, kwargs, generic: bool = False):
    """The Python function to transform for ``f(*args, **kwargs)``, its arguments, which of them
    ``nums`` (positions in ``args``) are, and its keyword arguments: ``f`` itself (a partial's
    function, with the partial's arguments) -- or, for ``f = cpsad.grad(g)``, the emitted
    backpropagator of ``g``, called as ``g_bp(scalar_seed, *args)``. Higher derivatives
    transform emitted code again (the seed is a known argument: see ``SEED``). ``generic``: for no
    arguments in particular (``args`` are placeholders; nothing is specialized to their kinds)."""
    plain = plain_function(f)
    if plain is not None:  # (the common case first: 3 us of the 15 a jit call of floats took)
        return plain, args, nums, kwargs
    f, args, nums, kwargs = bound(f, args, nums, kwargs)
    d = getattr(f, "__cpsad_derivative__", None)
    if d is None:
        return target(f), args, nums, kwargs
    kind, inner, inner_argnums = d
    if kind == "value_and_grad":
        raise TypeError(
            "cpsad differentiates a derivative made by cpsad.grad; value_and_grad returns a pair, "
            "which is not a scalar: differentiate cpsad.grad(f) instead"
        )
    if kind != "grad":
        raise TypeError(not_differentiated_again(kind))
    fn, inner_args, inner_nums, kwargs = function_of(
        inner, args, argnums_tuple(inner_argnums), kwargs, generic
    )
    active, where = params_for(fn.__code__, inner_nums, len(inner_args))
    if any(idx is not None for _, idx in where) and not kwargs and 1 <= len(inner_args) <= 4:
        # (a decorator's wrapper(*args): a function of as many parameters calls it, and the
        # backpropagator of that is differentiated again, with respect to its parameters)
        fn = primitive_caller(fn, len(inner_args), kwargs)
        active, where = params_for(fn.__code__, inner_nums, len(inner_args))
    if any(idx is not None for _, idx in where):
        raise TypeError("higher derivatives with respect to items of *args are not supported")
    call_args = list(inner_args)
    for i in inner_nums:
        call_args[i] = call_args[i] if generic else promote(call_args[i])
        if not generic and any(np.iscomplexobj(v) for v in leaves(call_args[i])[0]):
            raise TypeError(
                "cpsad differentiates a derivative at real arguments only: the rules' own "
                "derivatives (second derivatives) are not verified for complex values"
            )
    if generic:  # (the seeds are known all the same: what runs is what is shown)
        kinds = seed_kinds(fn, call_args)
    else:
        kinds = compiler.kinds_of(fn.__code__, call_args, kwargs)
    spec = specialize(fn, active, kinds, "reverse" + compiler.NESTED)
    seeds = len(inner_args) - len(args)  # the continuations of the derivatives inside this one
    full = (scalar_seed, *call_args)
    return spec.bp, full, tuple(i % len(args) + seeds + 1 for i in nums), kwargs


def plain_function(f):
    """``f`` -- or the function ``cpsad.jit`` or ``cpsad.shaped`` marked -- where it is a Python
    function not made by the API: what ``function_of`` would find by its longer way (``bound``,
    ``target``), else None."""
    from cpsad import staging

    while isinstance(f, staging._Marked):
        f = f.fn
    if type(f) is types.FunctionType and getattr(f, "__cpsad_derivative__", None) is None:
        return f
    return None


def seed_kinds(fn, args) -> tuple:
    """The kinds key of a call of ``fn`` (an emitted backpropagator) with ``args`` where only the
    seeds are known: the parameters given grad's ``scalar_seed`` (``SEED``)."""
    names = fn.__code__.co_varnames[: fn.__code__.co_argcount]
    return kinds_key({n: {SEED} for n, a in zip(names, args) if a is scalar_seed})


def not_differentiated_again(kind: str) -> str:
    """Why a derivative made by ``cpsad.{kind}`` is not differentiated (again)."""
    if kind.endswith("/has_aux"):
        return (
            f"cpsad: a derivative of cpsad.{kind[: -len('/has_aux')]}(f, has_aux=True) (inside a "
            "differentiated function, or of its result itself) is not supported: it returns a "
            "pair with auxiliary data; differentiate cpsad.grad(g) of a function g that returns "
            "the scalar alone"
        )
    if kind == "hvp":
        return (
            "cpsad: a derivative of cpsad.hvp(f) -- inside a differentiated function, or of "
            "hvp_f itself -- is a third derivative of f, which cpsad does not take; take the "
            "Hessian-vector product outside, or differentiate cpsad.grad(f) once"
        )
    return (
        f"cpsad: a derivative of cpsad.{kind}(f) (inside a differentiated function, or of its "
        "result itself) is not supported; use cpsad.grad, cpsad.jvp or cpsad.vjp there, which "
        "are differentiated (a Jacobian is one of them per row or column)"
    )


def as_tangent(t, x, i: int):
    """A tangent given for the primal ``x``: of ``x``'s structure and shapes, in floats."""
    if type(x) is float and type(t) is float:
        return t  # (the common cases first: what the checks below let through as it is)
    if (
        type(x) is np.ndarray
        and type(t) is np.ndarray
        and t.dtype is x.dtype
        and x.dtype.kind == "f"
        and t.shape == x.shape
    ):
        return t
    parts = struct_parts(x)
    if parts is not None:  # a dataclass, a registered pytree: a tangent of its type
        theirs = struct_parts(t) if type(t) is type(x) else None
        if theirs is None or len(theirs[1]) != len(parts[1]):
            raise ValueError(f"jvp: tangent {i} must be a {type(x).__name__} like its primal")
        return parts[2]([as_tangent(a, b, i) for a, b in zip(theirs[1], parts[1])])
    if isinstance(x, dict):
        if not isinstance(t, dict) or t.keys() != x.keys():
            raise ValueError(f"jvp: tangent {i} must be a dict with the keys of its primal")
        return type(x)({k: as_tangent(t[k], x[k], i) for k in x})  # a Sparse stays one
    if isinstance(x, (list, tuple)):
        if not isinstance(t, (list, tuple)) or len(t) != len(x):
            raise ValueError(f"jvp: tangent {i} must be a {type(x).__name__} like its primal")
        return (
            type(x)(as_tangent(a, b, i) for a, b in zip(t, x))
            if not hasattr(x, "_fields")
            else type(x)(*(as_tangent(a, b, i) for a, b in zip(t, x)))
        )
    if isinstance(x, (np.ndarray, np.generic)):
        if x.dtype.kind != "c" and np.iscomplexobj(t):
            raise ValueError(
                f"jvp: tangent {i} is complex but its primal is real; a real primal moves along "
                "real directions (make the primal complex to move it off the real line)"
            )
        out = np.asarray(t, dtype=x.dtype if x.dtype.kind in "fc" else np.float64)
        if out.shape != np.shape(x):
            raise ValueError(f"jvp: tangent {i} has shape {out.shape}, its primal {np.shape(x)}")
        return out if isinstance(x, np.ndarray) else out[()]
    if foreign(x):  # a Dask or CuPy array: a tangent of its library (a numpy one moved there)
        kind = np.dtype(x.dtype)
        dtype = kind if kind.kind in "fc" else np.dtype(np.float64)
        if kind.kind != "c" and (t.dtype if foreign(t) else np.result_type(t)).kind == "c":
            raise ValueError(
                f"jvp: tangent {i} is complex but its primal is real; a real primal moves along "
                "real directions (make the primal complex to move it off the real line)"
            )
        out = t if foreign(t) else np.asarray(np.asarray(t, dtype=dtype), like=x)
        if np.shape(out) != np.shape(x):
            raise ValueError(
                f"jvp: tangent {i} has shape {np.shape(out)}, its primal {np.shape(x)}"
            )
        return out if out.dtype == dtype else out.astype(dtype)
    if isinstance(x, (int, float, complex)) and not isinstance(x, bool):
        if np.ndim(t) != 0:
            raise ValueError(f"jvp: tangent {i} must be a number, like its primal")
        if isinstance(x, complex):
            return complex(t)
        if np.iscomplexobj(t):
            raise ValueError(
                f"jvp: tangent {i} is complex but its primal is real; a real primal moves along "
                "real directions (pass it as a complex number to move it off the real line)"
            )
        return float(t)
    return None  # not differentiable: no tangent


def closure_derivative(closure):
    fn = closure.bp if closure.bp is not None else closure.jvp
    return TypeError(
        f"cpsad: a derivative of {compiler.local_name(fn.__code__)}, a function defined inside "
        "the function being differentiated, is taken where it is defined: write "
        "`cpsad.grad(h, argnums)(...)` (or "
        "value_and_grad) there, with `h` that def or lambda by name and argnums a constant "
        "(not through a variable or a function that takes `h` as an argument)"
    )
