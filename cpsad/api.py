"""The public API: grad, value_and_grad, vjp, transform, show.

Each entry point is the paper's ``reset``: it calls the backpropagator ``f_bp(k, *args)`` with a
continuation ``k`` that receives the result and hands back its adjoint -- 1.0 for ``grad``, the
cotangent for ``vjp`` -- and gets back the adjoints of the differentiated arguments.
"""

from __future__ import annotations

import functools
import inspect
import weakref
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from cpsad import compiler
from cpsad.pytree import check_plain, densify, leaves, owned, promote
from cpsad.runtime import Closure, as_adjoint, deep_recursion, recursion_note, scalar_seed

_TARGETS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _target(f: Callable) -> Callable:
    """The Python function to transform for ``f``; checked once per object.

    A decorated function is the function the decorator returned -- the wrapper, which is what
    runs -- never the one ``functools.wraps`` says it wraps (``__wrapped__``): a wrapper that
    doubles its function's value has twice its gradient. A ``functools.lru_cache`` object is
    followed to its function (the cache returns what the function returns)."""
    try:
        return _TARGETS[f]
    except (KeyError, TypeError):
        pass
    fn = _python_function(f)
    try:
        _TARGETS[f] = fn
    except TypeError:
        pass
    return fn


def _python_function(f: Callable) -> Callable:
    if inspect.ismethod(f):
        raise TypeError(
            "cpsad differentiates plain functions; for a method, differentiate "
            "`type(obj).method` and pass the object as the first argument"
        )
    if isinstance(f, compiler.LRU_CACHE) and inspect.isfunction(getattr(f, "__wrapped__", None)):
        return _python_function(f.__wrapped__)
    if isinstance(f, functools.partial):
        raise TypeError(
            "cpsad.transform and cpsad.show take the function itself, not a functools.partial "
            "of it (grad, value_and_grad, vjp and jvp take partials)"
        )
    if isinstance(f, Closure):  # a function defined inside one being differentiated
        raise compiler.closure_derivative(f)
    if not inspect.isfunction(f):
        raise TypeError(f"cpsad can only differentiate Python functions, not {type(f).__name__}")
    return f


def _bound(f, args: tuple, nums: tuple, kwargs: dict):
    """``f(*args, **kwargs)`` as a call of a Python function: a ``functools.partial`` adds its
    arguments in front (constants: ``nums`` move past them) and its keywords."""
    while isinstance(f, functools.partial):
        n, given = len(f.args), len(args)
        nums = tuple((i % given if given else i) + n for i in nums)
        args = (*f.args, *args)
        kwargs = {**f.keywords, **kwargs}
        f = f.func
    return f, args, nums, kwargs


def _decorated(fn, exc: BaseException) -> None:
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
def _params_for(code, argnums: tuple[int, ...], nargs: int):
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


def _argnums(argnums) -> tuple[int, ...]:
    if isinstance(argnums, int):
        return (argnums,)
    out = tuple(argnums)
    if not out or not all(isinstance(i, int) for i in out):
        raise TypeError(f"argnums must be an int or a tuple of ints, got {argnums!r}")
    return out


def _run(f, argnums, args, kwargs, k, given=None):
    """reset: run f's backpropagator with continuation k; the gradients of ``argnums``, arrays
    the caller alone holds (``owned``: none is an argument, ``given`` -- the cotangent -- or
    another gradient)."""
    check_plain(args, kwargs)
    fn, args, nums, kwargs = _function_of(f, tuple(args), _argnums(argnums), kwargs)
    active, where = _params_for(fn.__code__, nums, len(args))
    call_args = list(args)
    for i in nums:
        i = i % len(args)
        call_args[i] = promote(args[i])
    spec = _specialize(fn, active, compiler.kinds_of(fn.__code__, call_args, kwargs))
    with deep_recursion():
        try:
            out = spec.bp(k, *call_args, **kwargs)
        except Exception as exc:
            _locate(exc)
            raise
    adjs = dict(zip(active, (out,) if len(active) == 1 else out))
    grads = []
    for i, (p, idx) in zip(nums, where):
        adj = adjs[p]
        if idx is not None:
            adj = adj.get(idx) if hasattr(adj, "get") else adj[idx]
        grads.append(densify(adj, args[i % len(args)]))
    return owned(grads, (args, kwargs, given))


def _specialize(fn, active, kinds, mode="reverse"):
    try:
        return compiler.specialize(fn, active, kinds, mode)
    except SyntaxError as exc:  # a TransformError
        _decorated(fn, exc)
        raise


def _function_of(f, args: tuple, nums: tuple, kwargs, generic: bool = False):
    """The Python function to transform for ``f(*args, **kwargs)``, its arguments, which of them
    ``nums`` (positions in ``args``) are, and its keyword arguments: ``f`` itself (a partial's
    function, with the partial's arguments) -- or, for ``f = cpsad.grad(g)``, the emitted
    backpropagator of ``g``, called as ``g_bp(scalar_seed, *args)``. Higher derivatives
    transform emitted code again (a second derivative; a third is refused). ``generic``: for no
    arguments in particular (``args`` are placeholders; nothing is specialized to their kinds)."""
    f, args, nums, kwargs = _bound(f, args, nums, kwargs)
    d = getattr(f, "__cpsad_derivative__", None)
    if d is None:
        return _target(f), args, nums, kwargs
    kind, inner, inner_argnums = d
    if kind == "value_and_grad":
        raise TypeError(
            "cpsad differentiates a derivative made by cpsad.grad; value_and_grad returns a pair, "
            "which is not a scalar: differentiate cpsad.grad(f) instead"
        )
    if kind != "grad":
        raise TypeError(not_differentiated_again(kind))
    fn, inner_args, inner_nums, kwargs = _function_of(
        inner, args, _argnums(inner_argnums), kwargs, generic
    )
    active, where = _params_for(fn.__code__, inner_nums, len(inner_args))
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
    kinds = () if generic else compiler.kinds_of(fn.__code__, call_args, kwargs)
    spec = _specialize(fn, active, kinds, "reverse" + compiler.NESTED)
    seeds = len(inner_args) - len(args)  # the continuations of the derivatives inside this one
    full = (scalar_seed, *call_args)
    return spec.bp, full, tuple(i % len(args) + seeds + 1 for i in nums), kwargs


def not_differentiated_again(kind: str) -> str:
    """Why a derivative made by ``cpsad.{kind}`` is not differentiated (again)."""
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


def _through_complex(adjoint) -> None:
    """A derivative's arguments are real (``_function_of``); a complex adjoint of one -- its
    gradient the real part -- came through complex values, whose rules' own derivatives are not
    verified: refuse to differentiate it."""
    if any(np.iscomplexobj(v) for v in leaves(adjoint)[0]):
        raise TypeError(
            "cpsad differentiates a derivative only where it computes with real values: this "
            "gradient passes through complex ones, whose second derivatives are not verified"
        )


def _gradient_value(f, out, args: tuple):
    """What ``cpsad.grad(g)`` returns, from the raw adjoints its backpropagator returns."""
    _, inner, inner_argnums = f.__cpsad_derivative__
    if isinstance(inner_argnums, int):
        return densify(out, args[inner_argnums])
    return tuple(densify(o, args[i]) for o, i in zip(out, inner_argnums))


def _locate(exc: BaseException) -> None:
    """Say where in the user's source an error raised inside emitted code comes from (and, for
    a RecursionError, under what limit)."""
    if not hasattr(exc, "add_note"):
        return
    if not getattr(exc, "_cpsad_located", False):
        lines = compiler.where_in_user_code(exc.__traceback__)
        if lines:
            exc.add_note("in your code (innermost last):\n  " + "\n  ".join(lines))
            exc._cpsad_located = True
    if isinstance(exc, RecursionError) and not getattr(exc, "_cpsad_limit_noted", False):
        exc.add_note(recursion_note())
        exc._cpsad_limit_noted = True


def value_and_grad(f: Callable, argnums=0) -> Callable:
    """``g(*args, **kw) -> (f(*args, **kw), gradient)``; the gradient has the shape of ``args[argnums]``
    (a tuple of them when ``argnums`` is a tuple). ``f`` must return a scalar."""
    single = isinstance(argnums, int)
    derivative = hasattr(f, "__cpsad_derivative__")

    @functools.wraps(f)
    def value_and_grad_f(*args, **kwargs):
        box = []

        def k(result):
            box.append(result)
            if derivative:
                _through_complex(result)
            return scalar_seed(result)

        grads = _run(f, argnums, args, kwargs, k)
        value = box[0]
        if hasattr(f, "__cpsad_derivative__"):
            value = _gradient_value(f, value, args)
        return value, grads[0] if single else tuple(grads)

    value_and_grad_f.__cpsad_derivative__ = ("value_and_grad", f, argnums)
    return value_and_grad_f


def grad(f: Callable, argnums=0) -> Callable:
    """``g(*args, **kw) -> gradient`` of the scalar function ``f`` with respect to ``args[argnums]``."""
    vg = value_and_grad(f, argnums)

    @functools.wraps(f)
    def grad_f(*args, **kwargs):
        return vg(*args, **kwargs)[1]

    grad_f.__cpsad_derivative__ = ("grad", f, argnums)  # so grad(grad(f)) transforms f_bp
    return grad_f


def vjp(f: Callable, *args, **kwargs):
    """``(f(*args), pullback)``; ``pullback(cotangent)`` is the tuple of the gradients of
    ``<cotangent, f(*args)>`` with respect to every positional argument.

    cpsad keeps no tape -- the continuation *is* the backward pass -- so each call of the pullback
    runs ``f`` forward again inside its backpropagator. ``f`` must be deterministic; a result that
    differs from the first (random numbers drawn inside ``f``) is an error.
    """
    check_plain(args, kwargs)
    for a in args:
        promote(a)  # (an np.matrix inside a list: refused before f runs on it)
    value = f(*args, **kwargs)
    nums = tuple(range(len(args)))

    def pullback(cotangent):
        def k(result):
            if not _same(result, value):
                raise RuntimeError(
                    "vjp: the function returned a different value when run again for the pullback; "
                    "cpsad's vjp re-runs the function, so it must be deterministic (draw random "
                    "numbers outside it), or use value_and_grad"
                )
            return as_adjoint(cotangent)

        if not nums:
            return ()
        return tuple(_run(f, nums, args, kwargs, k, cotangent))

    return value, pullback


def jvp(f: Callable, primals, tangents, **kwargs):
    """``(f(*primals), tangent_out)``: forward mode. ``tangent_out`` is the derivative of ``f``
    at ``primals`` along ``tangents`` (one per primal, of the same structure; None for a primal
    that is not differentiated, an integer count say), computed in one pass alongside the value
    by ``f``'s tangent function ``f_jvp(*tangents, *primals)``."""
    primals, tangents = tuple(primals), tuple(tangents)
    if len(primals) != len(tangents):
        raise ValueError(
            f"jvp: {len(primals)} primals but {len(tangents)} tangents; give one tangent per "
            "primal, of the same structure"
        )
    nums = tuple(i for i, t in enumerate(tangents) if t is not None)  # None: not differentiated
    check_plain(primals, kwargs)
    args = [promote(a) if i in nums else a for i, a in enumerate(primals)]
    tans = [as_tangent(tangents[i], args[i], i) for i in nums]
    if not nums:
        value = f(*primals, **kwargs)
        return value, densify(None, value)
    fn, args, nums, kwargs = _function_of(f, tuple(args), nums, kwargs)
    args = list(args)
    active, where = _params_for(fn.__code__, nums, len(args))
    by_param: dict = {}
    for t, (p, idx) in zip(tans, where):
        if idx is None:
            by_param[p] = t
        else:  # an item of *args
            by_param[p] = by_param.get(p, ()) + (t,)
    spec = _specialize(fn, active, compiler.kinds_of(fn.__code__, args, kwargs), "forward")
    with deep_recursion():
        try:
            value, tangent = spec.bp(*[by_param[p] for p in active], *args, **kwargs)
        except Exception as exc:
            _locate(exc)
            raise
    if hasattr(f, "__cpsad_derivative__"):  # the gradient of a gradient: shaped like its argument
        _through_complex(value)
        value = _gradient_value(f, value, tuple(primals))
        tangent = _gradient_value(f, densify(tangent, value), tuple(primals))
    else:
        tangent = densify(tangent, value)
    # the tangent's arrays the caller's alone: no primal's, tangent's given, or the value's
    return value, owned([tangent], (primals, tangents, kwargs, value))[0]


# a derivative taken inside a transformed function: see Nested, and the dispatch (compiler.call_bp)
grad.__cpsad_operator__ = "grad"
value_and_grad.__cpsad_operator__ = "value_and_grad"
vjp.__cpsad_operator__ = "vjp"
jvp.__cpsad_operator__ = "jvp"


def as_tangent(t, x, i: int):
    """A tangent given for the primal ``x``: of ``x``'s structure and shapes, in floats."""
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


def _same(a, b) -> bool:
    if isinstance(a, (tuple, list)):
        return type(a) is type(b) and len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    if isinstance(a, dict):
        return isinstance(b, dict) and a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    try:
        return bool(np.array_equal(a, b, equal_nan=True))
    except TypeError:
        return a is b or a == b


# --------------------------------------------------------------------------- inspection


@dataclass
class Transformed:
    """The transformation of one function: its emitted source, its stages, its derivatives."""

    fn: Callable
    argnums: tuple[int, ...] | None
    kinds: tuple = ()  # specialized to the kinds of some arguments: see ``at``
    mode: str = "reverse"  # or "forward": the tangent function f_jvp instead of f_bp

    def at(self, *args, **kwargs) -> Transformed:
        """The transformation a call with these arguments runs: specialized to their kinds (a
        float program's backward pass is float arithmetic, an array's unbroadcasts)."""
        code = self.fn.__code__
        kinds = compiler.kinds_of(code, args, kwargs)
        return Transformed(self.fn, self.argnums, kinds, self.mode)

    @property
    def active(self) -> tuple[str, ...]:
        code = self.fn.__code__
        if self.argnums is None:
            return tuple(code.co_varnames[: code.co_argcount])
        active, _ = _params_for(code, self.argnums, code.co_argcount)
        return active

    @property
    def spec(self):
        return compiler.specialize(self.fn, self.active, self.kinds, self.mode)

    @property
    def source(self) -> str:
        """The emitted module of the backpropagator (as compiled; see ``show`` for black's layout)."""
        return self.spec.text

    @property
    def path(self) -> str:
        return self.spec.path

    @property
    def bp(self) -> Callable:
        return self.spec.bp

    @property
    def stages(self) -> dict[str, str]:
        """Every pipeline stage's program, by stage name, in order."""
        _, stages = compiler.run_pipeline(
            self.fn, self.active, record=True, kinds=self.kinds, mode=self.mode
        )
        return {s.name: s.source for s in stages}

    def grad(self, *args, **kwargs):
        return grad(self.fn, self.argnums or 0)(*args, **kwargs)

    def value_and_grad(self, *args, **kwargs):
        return value_and_grad(self.fn, self.argnums or 0)(*args, **kwargs)

    def vjp(self, *args, **kwargs):
        return vjp(self.fn, *args, **kwargs)


def transform(f: Callable, argnums=None, mode: str = "reverse") -> Transformed:
    """Transform ``f`` (with respect to ``argnums``, default: every positional parameter) into
    its backpropagator, or with ``mode="forward"`` its tangent function."""
    if mode not in ("reverse", "forward"):
        raise ValueError(f"mode is 'reverse' or 'forward', not {mode!r}")
    if hasattr(f, "__cpsad_derivative__"):  # grad(g): the transformation of g's backpropagator
        inner = f
        while hasattr(inner, "__cpsad_derivative__"):
            inner = inner.__cpsad_derivative__[1]
        n = _target(inner).__code__.co_argcount
        nums = _argnums(0 if argnums is None else argnums)
        fn, _, shifted, _ = _function_of(f, (None,) * n, nums, {}, generic=True)
        return Transformed(fn, shifted, mode=mode)
    return Transformed(_target(f), None if argnums is None else _argnums(argnums), mode=mode)


def show(
    f: Callable,
    stage: str | None = None,
    argnums=None,
    format: bool = True,
    callees=True,
    mode: str = "reverse",
) -> str:
    """The emitted backpropagator of ``f`` (``mode="forward"``: its tangent function) -- and of
    the functions it calls, unless ``callees`` is false -- or the program after pipeline stage
    ``stage``, as Python source formatted with black.
    """
    t = transform(f, argnums, mode)
    if stage is None:
        specs = compiler.call_graph(t.spec) if callees else [t.spec]
        texts = [format_source(s.text) if format else s.text for s in specs]
        return "\n\n".join(texts)
    else:
        stages = t.stages
        if stage not in stages:
            raise ValueError(f"no stage {stage!r}; the stages are: {', '.join(stages)}")
        text = stages[stage]
    return format_source(text) if format else text


def format_source(text: str) -> str:
    """black's layout of ``text`` (unchanged if black cannot parse it)."""
    import black  # display only: never on the path that transforms and runs code

    try:
        return black.format_str(text, mode=black.Mode())
    except Exception:  # pragma: no cover - every stage is valid Python; keep output if not
        return text
