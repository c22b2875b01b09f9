"""The public API: grad, value_and_grad, vjp, jvp, elementwise_grad, transform, show.

Each entry point is the paper's ``reset``: it calls the backpropagator ``f_bp(k, *args)`` with a
continuation ``k`` that receives the result and hands back its adjoint -- 1.0 for ``grad``, the
cotangent for ``vjp`` -- and gets back the adjoints of the differentiated arguments.
"""

from __future__ import annotations

import inspect
import weakref
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from cpsad import compiler, staging
from cpsad.calls import (
    argnums_tuple,
    as_tangent,
    check_argnums,
    function_of,
    params_for,
    plain_function,
    seed_kinds,
    specialize,
    target,
)
from cpsad.depth import deep_recursion, recursion_note
from cpsad.pytree import check_plain, densify, leaves, owned, promote
from cpsad.runtime import as_adjoint, foreign, not_real, scalar_seed
from cpsad.tracebacks import boundary


def _run(f, argnums, args, kwargs, k, given=None, seed=None, check=True, plans=None):
    """reset: run f's backpropagator with continuation k; the gradients of ``argnums``, arrays
    the caller alone holds (``owned``: none is an argument, ``given`` -- the cotangent -- or
    another gradient). For ``cpsad.jit(f)``, ``seed`` is the adjoint ``k`` will give the result
    (None: not known before, so not staged): the staged backpropagator runs with it, and ``k``
    then sees the result (the seed it gives must be that one, or the Python one runs) unless
    ``check`` is False. ``plans``: the caller's ``_Plan`` of each argument types seen, for
    calls that always pass the same ``argnums``, ``seed`` and ``check``."""
    types = tuple(map(type, args)) if plans is not None and not kwargs else None
    plan = plans.get(types) if types is not None else None
    fn = plan.holds(f) if plan is not None else None
    if fn is not None:
        call_args = list(args)
        for i in plan.nums:
            call_args[i] = promote(args[i])
        positional = call_args if plan.staged is not None else None
    else:
        plan, fn, args, kwargs, call_args, positional = _planned(f, argnums, args, kwargs, seed)
        if types is not None and plan.reusable(f, call_args, kwargs, positional):
            plans[types] = plan
    spec = plan.spec
    out = None
    if positional is not None:  # (the compiled backpropagator, for the seed it was run with)
        c, key = plan.staged
        ran = staging.invoke(
            c, key, fn, spec, positional, (seed,), compiler.STAGED, (plan.kinds, call_args, kwargs)
        )
        if ran is not None and (not check or staging.seed_matches(k(ran[0]), seed)):
            out = ran[1]
    if out is None:
        with deep_recursion(), compiler.located_warnings():
            try:
                out = spec.bp(k, *call_args, **kwargs)
            except Exception as exc:
                _locate(exc)
                raise
    adjs = dict(zip(plan.active, (out,) if len(plan.active) == 1 else out))
    grads = []
    for i, (p, idx) in zip(plan.nums, plan.where):
        adj = adjs[p]
        if idx is not None:
            adj = adj.get(idx) if hasattr(adj, "get") else adj[idx]
        grads.append(densify(adj, args[i]))
    return owned(grads, (args, kwargs, given))


class _Plan:
    """How ``_run`` calls the backpropagator of ``f`` for arguments of some types, found by the
    first call of them (``_planned``): the function (weakly), the positions of the differentiated
    arguments (none negative), their parameters, the Python backpropagator (``spec``), and
    the compiled one's ``(compiled, key)`` (``staged``; None: the Python one runs). Its checks
    -- of the call's shape and of what the argument types decide -- need not run again while
    ``holds``: ``f`` marks the same function, and the backpropagators are still valid."""

    __slots__ = ("function", "nums", "active", "where", "spec", "kinds", "staged")

    def __init__(self, fn, nums, active, where, spec, kinds, staged):
        try:  # (held weakly: ``jvp`` keeps plans as long as ``f`` lives, not longer)
            self.function = weakref.ref(fn)
        except TypeError:  # (no weak reference to it: such a plan is not kept, ``reusable``)
            self.function = lambda: fn
        self.nums, self.active, self.where = nums, active, where
        self.spec, self.kinds, self.staged = spec, kinds, staged

    def holds(self, f):
        """``f``'s function, where it still applies to a call of ``f``; else None."""
        fn = f if type(f) is _FUNCTION else f.fn if type(f) is staging.Staged else None
        if fn is not self.function() or not self.spec.valid():
            return None
        if self.staged is not None and not staging.still_ready(*self.staged, fn, self.spec):
            return None
        return fn

    def reusable(self, f, args: list, kwargs: dict, positional) -> bool:
        """May another call of the same argument types use it? Where ``f`` is a plain function,
        called without keyword arguments -- or ``cpsad.jit``'s mark of one, compiled, called
        with its positional parameters alone (``invoke`` takes them as they are). (Not a
        ``cpsad.shaped`` mark: its key is of shapes, not types.)"""
        if kwargs or plain_function(f) is not self.function():
            return False
        if type(f) is _FUNCTION:
            return True
        code = self.function().__code__
        return (
            type(f) is staging.Staged
            and positional is not None
            and len(args) == code.co_argcount
            and not code.co_kwonlyargcount
            and not code.co_flags & (inspect.CO_VARARGS | inspect.CO_VARKEYWORDS)
        )


_FUNCTION = type(_run)


def _planned(f, argnums, args, kwargs, seed):
    """``_run``'s checks of a call, and what they find: its ``_Plan``, the function it runs and
    that function's arguments and keyword arguments (``function_of``: a derivative's are the
    backpropagator's), the differentiated ones promoted, and those of the compiled
    backpropagator, by position (None: the Python one runs)."""
    check_plain(args, kwargs)
    check_argnums(f, argnums, args, kwargs)
    fn, args, nums, kwargs = function_of(f, tuple(args), argnums_tuple(argnums), kwargs)
    nums = tuple(i % len(args) for i in nums)
    call_args = list(args)
    for i in nums:
        call_args[i] = promote(args[i])
    staged = compiler.STAGED if seed is not None and staging.is_staged(f) else None
    plan, positional = _plan(f, fn, call_args, nums, kwargs, "reverse", staged)
    return plan, fn, args, kwargs, call_args, positional


def _plan(f, fn, args: list, nums: tuple, kwargs: dict, mode: str, staged) -> tuple:
    """The ``_Plan`` of a call of ``fn`` (``f``'s function) with ``args`` and ``kwargs`` (the
    differentiated positions ``nums`` promoted), for ``mode`` "reverse" or "forward" -- and,
    where ``staged`` (``compiler.STAGED`` or ``STAGED_FORWARD``: ``f`` is marked by
    ``cpsad.jit``) and no item of ``*args`` is differentiated, the compiled code, run with the
    arguments by position (the second item; None: the Python code runs)."""
    active, where = params_for(fn.__code__, nums, len(args))
    kinds = compiler.kinds_of(fn.__code__, args, kwargs)
    if staging.is_shaped(f):
        kinds = kinds + compiler.shapes_of(fn.__code__, args, kwargs)
    spec = specialize(fn, active, kinds, mode)
    made = None
    if staged is not None and all(idx is None for _, idx in where):
        made = staging.ready(fn, spec, kinds, args, kwargs, staged)
    plan = _Plan(fn, nums, active, where, spec, kinds, made[:2] if made else None)
    return plan, made[2] if made else None


def _through_complex(adjoint) -> None:
    """A derivative's arguments are real (``function_of``); a complex adjoint of one -- its
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
    nums = tuple(inner_argnums)
    outs = (out,) if len(nums) == 1 else out  # (one parameter's adjoint comes back bare)
    return tuple(densify(o, args[i]) for o, i in zip(outs, nums))


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


def value_and_grad(
    f: Callable, argnums: int | tuple[int, ...] = 0, has_aux: bool = False
) -> Callable:
    """``g(*args, **kw) -> (f(*args, **kw), gradient)``; the gradient has the shape of ``args[argnums]``
    (a tuple of them when ``argnums`` is a tuple). ``f`` must return a scalar -- or, with
    ``has_aux``, a pair ``(scalar, aux)``: then ``g`` returns ``((scalar, aux), gradient)``, and
    ``aux`` (anything: arrays, a dict of metrics) is carried out, not differentiated."""
    value_and_grad_f = boundary(_value_and_grad(f, argnums, has_aux), like=f)
    value_and_grad_f.__cpsad_derivative__ = (
        "value_and_grad" + _AUX * has_aux,
        f,
        argnums,
    )
    return value_and_grad_f


def _value_and_grad(f: Callable, argnums, has_aux: bool) -> Callable:
    """``value_and_grad(f, argnums, has_aux)`` without its name and traceback filter (``grad``
    calls it inside its own)."""
    single = isinstance(argnums, int)
    derivative = hasattr(f, "__cpsad_derivative__")
    plans: dict = {}  # (``_run``'s, for each argument types this derivative was called with)

    def value_and_grad_f(*args, **kwargs):
        box = []

        def k(result):
            box.append(result)
            if has_aux:
                return as_adjoint((scalar_seed(_scalar_of_pair(result)), None))
            if derivative:
                _through_complex(result)
            return scalar_seed(result)

        # (with has_aux, the seed of the pair's adjoint: the scalar's 1.0, none for aux)
        seed = (1.0, None) if has_aux else 1.0
        grads = _run(f, argnums, args, kwargs, k, seed=seed, plans=plans)
        value = box[0]
        if derivative and not has_aux:
            value = _gradient_value(f, value, args)
        if has_aux:
            value = tuple(value)
        return value, grads[0] if single else tuple(grads)

    return value_and_grad_f


_AUX = "/has_aux"  # the kind of a derivative made with has_aux (not differentiated again)


def _scalar_of_pair(result):
    """The scalar of what a function differentiated with ``has_aux`` returned: ``(scalar, aux)``."""
    if not (isinstance(result, (tuple, list)) and len(result) == 2):
        raise TypeError(
            "has_aux=True: the function must return a pair (scalar to differentiate, auxiliary "
            f"data), got {type(result).__name__}"
            + (f" of length {len(result)}" if isinstance(result, (tuple, list)) else "")
        )
    return result[0]


def grad(f: Callable, argnums: int | tuple[int, ...] = 0, has_aux: bool = False) -> Callable:
    """``g(*args, **kw) -> gradient`` of the scalar function ``f`` with respect to ``args[argnums]``;
    with ``has_aux`` (``f`` returns ``(scalar, aux)``), ``g`` returns ``(gradient, aux)``."""
    vg = _value_and_grad(f, argnums, has_aux)

    def grad_f(*args, **kwargs):
        value, gradient = vg(*args, **kwargs)
        return (gradient, value[1]) if has_aux else gradient

    grad_f = boundary(grad_f, like=f)
    # so grad(grad(f)) transforms f_bp (with has_aux: a pair, not differentiated again)
    grad_f.__cpsad_derivative__ = ("grad" + _AUX * has_aux, f, argnums)
    return grad_f


def elementwise_grad(f: Callable, argnums: int | tuple[int, ...] = 0) -> Callable:
    """``g(*args, **kw)``: the gradient of ``sum(f(*args, **kw))`` with respect to
    ``args[argnums]`` -- for an ``f`` that works element by element (``np.tanh``, a function
    of ``x`` made of elementwise operations), the derivative of each element of the result
    with respect to the element of ``x`` it came from, in one backward pass (autograd's
    ``elementwise_grad``). ``f``'s result must be real (a float or an array of floats)."""
    single = isinstance(argnums, int)
    plans: dict = {}  # (``_run``'s)

    def elementwise_grad_f(*args, **kwargs):
        def k(result):
            if isinstance(result, (np.ndarray, np.generic)) and result.dtype.kind == "f":
                return np.ones_like(result)
            if np.ndim(result) and getattr(result, "dtype", np.dtype("O")).kind in "biuc":
                raise TypeError(not_real(result, "elementwise_grad", "a real output"))
            return scalar_seed(result)  # a float: 1.0; anything else: its error

        grads = _run(f, argnums, args, kwargs, k, plans=plans)
        return grads[0] if single else tuple(grads)

    elementwise_grad_f = boundary(elementwise_grad_f, like=f)
    elementwise_grad_f.__cpsad_derivative__ = ("elementwise_grad", f, argnums)
    return elementwise_grad_f


@boundary
def vjp(
    f: Callable, *args: Any, has_aux: bool = False, **kwargs: Any
) -> tuple[Any, Callable] | tuple[Any, Callable, Any]:
    """``(f(*args), pullback)``; ``pullback(cotangent)`` is the tuple of the gradients of
    ``<cotangent, f(*args)>`` with respect to every positional argument. With ``has_aux`` (``f``
    returns ``(out, aux)``): ``(out, pullback, aux)``, the cotangent of ``out`` alone.

    cpsad keeps no tape -- the continuation *is* the backward pass -- so each call of the pullback
    runs ``f`` forward again inside its backpropagator. ``f`` must be deterministic; a result that
    differs from the first (random numbers drawn inside ``f``) is an error.
    """
    check_plain(args, kwargs)
    for a in args:
        promote(a)  # (an np.matrix inside a list: refused before f runs on it)
    value = f(*args, **kwargs)
    if has_aux:
        _scalar_of_pair(value)  # (a pair, or the error that says so)
    nums = tuple(range(len(args)))

    @boundary
    def pullback(cotangent):
        def k(result):
            if not _same(result, value):
                raise RuntimeError(
                    "vjp: the function returned a different value when run again for the pullback; "
                    "cpsad's vjp re-runs the function, so it must be deterministic (draw random "
                    "numbers outside it), or use value_and_grad"
                )
            return as_adjoint((cotangent, None) if has_aux else cotangent)

        if not nums:
            return ()
        seed = (as_adjoint(cotangent), None) if has_aux else as_adjoint(cotangent)
        # (k's check that f computes what it did: Numba's arithmetic may differ in the last bit)
        return tuple(_run(f, nums, args, kwargs, k, cotangent, seed, check=False))

    if has_aux:
        return value[0], pullback, value[1]
    return value, pullback


@boundary
def jvp(f: Callable, primals: Sequence, tangents: Sequence, **kwargs: Any) -> tuple[Any, Any]:
    """``(f(*primals), tangent_out)``: forward mode. ``tangent_out`` is the derivative of ``f``
    at ``primals`` along ``tangents`` (one per primal, of the same structure; None for a primal
    that is not differentiated, an integer count say), computed in one pass alongside the value
    by ``f``'s tangent function ``f_jvp(*tangents, *primals)`` -- for ``cpsad.jit(f)``, compiled
    by Numba."""
    primals, tangents = tuple(primals), tuple(tangents)
    if len(primals) != len(tangents):
        raise ValueError(
            f"jvp: {len(primals)} primals but {len(tangents)} tangents; give one tangent per "
            "primal, of the same structure"
        )
    nums = tuple(i for i, t in enumerate(tangents) if t is not None)  # None: not differentiated
    plans = key = plan = None
    if not kwargs and nums and (type(f) is _FUNCTION or type(f) is staging.Staged):
        plans = _JVP_PLANS.get(f)
        key = (tuple(map(type, primals)), nums)
        plan = plans.get(key) if plans is not None else None
    fn = plan.holds(f) if plan is not None else None
    if fn is not None:
        args = list(primals)
        for i in nums:
            args[i] = promote(primals[i])
        tans = [as_tangent(tangents[i], args[i], i) for i in nums]
        positional = args if plan.staged is not None else None
    else:
        check_plain(primals, kwargs)
        args = [promote(a) if i in nums else a for i, a in enumerate(primals)]
        tans = [as_tangent(tangents[i], args[i], i) for i in nums]
        if not nums:
            value = f(*primals, **kwargs)
            return value, densify(None, value)
        plan, fn, args, kwargs, positional = _forward_plan(f, args, nums, kwargs)
        if key is not None and plan.reusable(f, args, kwargs, positional):
            _JVP_PLANS.setdefault(f, {})[key] = plan
    by_param: dict = {}
    for t, (p, idx) in zip(tans, plan.where):
        if idx is None:
            by_param[p] = t
        else:  # an item of *args
            by_param[p] = by_param.get(p, ()) + (t,)
    spec = plan.spec
    ran = None
    if positional is not None:
        c, staged_key = plan.staged
        ran = staging.invoke(
            c,
            staged_key,
            fn,
            spec,
            positional,
            tuple(by_param[p] for p in plan.active),
            compiler.STAGED_FORWARD,
            (plan.kinds, args, kwargs),
        )
    if ran is not None:
        value, tangent = ran
    else:
        with deep_recursion(), compiler.located_warnings():
            try:
                value, tangent = spec.bp(*[by_param[p] for p in plan.active], *args, **kwargs)
            except Exception as exc:
                _locate(exc)
                raise
    if hasattr(f, "__cpsad_derivative__"):  # the gradient of a gradient: shaped like its argument
        _through_complex(value)
        raw = value  # the adjoints the backpropagator returned: the tangent has their structure
        value = _gradient_value(f, raw, tuple(primals))
        tangent = _gradient_value(f, densify(tangent, raw), tuple(primals))
    else:
        tangent = densify(tangent, value)
    # the tangent's arrays the caller's alone: no primal's, tangent's given, or the value's
    return value, owned([tangent], (primals, tangents, kwargs, value))[0]


# f (a function, or cpsad.jit's mark of one) -> what jvp's first call of some argument types and
# tangents found: ``{(types, positions of the tangents given): _Plan}`` (``_Plan.holds``)
_JVP_PLANS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _forward_plan(f, args: list, nums: tuple, kwargs: dict):
    """``jvp``'s ``_planned``: the ``_Plan`` of a call of ``f``'s tangent function with ``args``
    (the differentiated ones promoted), the function it runs, its arguments and keyword
    arguments, and those of the compiled tangent function, by position (None: the Python one
    runs)."""
    staged = compiler.STAGED_FORWARD if staging.is_staged(f) else None
    fn, args, nums, kwargs = function_of(f, tuple(args), nums, kwargs)
    args = list(args)
    plan, positional = _plan(f, fn, args, nums, kwargs, "forward", staged)
    return plan, fn, args, kwargs, positional


# a derivative taken inside a transformed function: see Nested, and the dispatch (dispatch.call_bp)
grad.__cpsad_operator__ = "grad"
value_and_grad.__cpsad_operator__ = "value_and_grad"
vjp.__cpsad_operator__ = "vjp"
jvp.__cpsad_operator__ = "jvp"


def _same(a, b) -> bool:
    if isinstance(a, (tuple, list)):
        return type(a) is type(b) and len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    if isinstance(a, dict):
        return isinstance(b, dict) and a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if foreign(a) or foreign(b):  # a Dask or CuPy array: comparing values would compute it
        return type(a) is type(b) and a.ndim == b.ndim and a.dtype == b.dtype  # (a Dask
        # array's shape may be unknown: nan, never equal)
    try:
        return bool(np.array_equal(a, b, equal_nan=True))
    except TypeError:
        return a is b or a == b


# --------------------------------------------------------------------------- inspection


@dataclass
class Transformed:
    """The transformation of one function: its emitted source, its stages, its derivatives."""

    fn: Callable
    argnums: tuple[int, ...] | None  # the parameters of ``fn`` differentiated (None: every one)
    kinds: tuple = ()  # specialized to the kinds of some arguments: see ``at``
    mode: str = "reverse"  # or "forward": the tangent function f_jvp instead of f_bp
    of: Callable | None = None  # the function given to ``transform``, and its ``argnums``:
    wrt: int | tuple[int, ...] | None = 0  # what ``.grad`` differentiates, as ``cpsad.grad`` does

    def at(self, *args: Any, **kwargs: Any) -> Transformed:
        """The transformation a call with these arguments runs: specialized to their kinds (a
        float program's backward pass is float arithmetic) -- and, for ``transform(shaped(f))``,
        to the shapes of their arrays (no ``unbroadcast`` where nothing was broadcast)."""
        code = self.fn.__code__
        kinds = compiler.kinds_of(code, args, kwargs)
        if staging.is_shaped(self.of):
            kinds += compiler.shapes_of(code, args, kwargs)
        return Transformed(self.fn, self.argnums, kinds, self.mode, self.of, self.wrt)

    @property
    def active(self) -> tuple[str, ...]:
        code = self.fn.__code__
        if self.argnums is None:
            return tuple(code.co_varnames[: code.co_argcount])
        star = code.co_flags & inspect.CO_VARARGS
        if star and all(i >= code.co_argcount for i in self.argnums):
            # (a decorator's wrapper(*args, **kwargs): its items are differentiated as one)
            return (code.co_varnames[code.co_argcount + code.co_kwonlyargcount],)
        active, _ = params_for(code, self.argnums, code.co_argcount)
        return active

    @property
    def spec(self) -> compiler.Spec:
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

    def _wrt(self) -> int | tuple[int, ...]:
        if self.wrt is not None:
            return self.wrt
        return tuple(range(self.fn.__code__.co_argcount))  # every positional parameter

    def grad(self, *args: Any, **kwargs: Any) -> Any:
        """``cpsad.grad`` of the function with respect to this transformation's ``argnums``: a
        single gradient for an int, a tuple of them for a tuple (or ``None``: every parameter)."""
        return grad(self.of or self.fn, self._wrt())(*args, **kwargs)

    def value_and_grad(self, *args: Any, **kwargs: Any) -> tuple[Any, Any]:
        return value_and_grad(self.of or self.fn, self._wrt())(*args, **kwargs)

    def vjp(self, *args: Any, **kwargs: Any) -> tuple[Any, Callable] | tuple[Any, Callable, Any]:
        return vjp(self.of or self.fn, *args, **kwargs)


def transform(
    f: Callable, argnums: int | tuple[int, ...] | None = 0, mode: str = "reverse"
) -> Transformed:
    """Transform ``f`` into its backpropagator -- or with ``mode="forward"`` its tangent function
    -- with respect to ``argnums``, as ``cpsad.grad(f, argnums)`` does: the first parameter by
    default; ``None``: every positional parameter."""
    if mode not in ("reverse", "forward"):
        raise ValueError(f"mode is 'reverse' or 'forward', not {mode!r}")
    if hasattr(f, "__cpsad_derivative__"):  # grad(g): the transformation of g's backpropagator
        inner = f
        while hasattr(inner, "__cpsad_derivative__"):
            inner = inner.__cpsad_derivative__[1]
        n = target(inner).__code__.co_argcount
        nums = argnums_tuple(0 if argnums is None else argnums)
        fn, full, shifted, _ = function_of(f, (None,) * n, nums, {}, generic=True)
        wrt = 0 if argnums is None else argnums
        return Transformed(fn, shifted, seed_kinds(fn, full), mode=mode, of=f, wrt=wrt)
    nums = None if argnums is None else argnums_tuple(argnums)
    return Transformed(target(f), nums, mode=mode, of=f, wrt=argnums)


def show(
    f: Callable,
    stage: str | None = None,
    argnums: int | tuple[int, ...] | None = 0,
    format: bool = True,
    callees: bool = True,
    mode: str = "reverse",
) -> str:
    """The emitted backpropagator of ``f`` (``mode="forward"``: its tangent function) -- and of
    the functions it calls, unless ``callees`` is false -- or the program after pipeline stage
    ``stage``, as Python source formatted with black. With respect to ``argnums``, as
    ``cpsad.grad(f, argnums)``: the code ``cpsad.grad(f)`` runs by default; ``None``: every
    positional parameter (what ``cpsad show FILE`` prints without ``--wrt``).
    """
    t = transform(f, argnums, mode)
    if stage is None:
        specs = compiler.call_graph(t.spec) if callees else [t.spec]
        texts = [format_source(s.text) if format else s.text for s in specs]
        return Source("\n\n".join(texts))
    else:
        stages = t.stages
        if stage not in stages:
            raise ValueError(f"no stage {stage!r}; the stages are: {', '.join(stages)}")
        text = stages[stage]
    return Source(format_source(text) if format else text)


class Source(str):
    """Python source that ``show`` returns: a ``str`` (print it, compare it, search it) that a
    notebook displays highlighted (``_repr_html_``) and IPython as code (``_repr_pretty_``)."""

    __slots__ = ()

    def _repr_html_(self) -> str:
        import html

        try:
            from pygments import highlight  # display only: loaded when a notebook asks
            from pygments.formatters import HtmlFormatter
            from pygments.lexers import PythonLexer
        except ImportError:  # pragma: no cover - pygments is a dependency; plain if absent
            return f"<pre>{html.escape(str(self))}</pre>"
        return highlight(str(self), PythonLexer(), HtmlFormatter(noclasses=True))

    def _repr_pretty_(self, p, cycle) -> None:
        p.text(str(self))


def format_source(text: str) -> str:
    """black's layout of ``text`` (unchanged if black cannot parse it)."""
    import black  # display only: never on the path that transforms and runs code

    try:
        return black.format_str(text, mode=black.Mode())
    except Exception:  # pragma: no cover - every stage is valid Python; keep output if not
        return text
