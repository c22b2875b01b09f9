"""The runtime dispatch: calls whose callee is a value, known only when they run.

Emitted code calls ``call_bp(f, k, *args)`` (reverse mode) or ``call_jvp(f, tangents, *args)``
(forward mode) where the source called ``f(*args)`` with ``f`` a value -- a parameter, a function
in a variable or a container. Whatever ``f`` turns out to be -- a local function used as a value
(a ``Closure``), a Python function (transformed on first use), a primitive with a rule, a
derivative made by ``cpsad.grad`` or a pullback of ``cpsad.vjp`` -- the call is differentiated.
Importing this module gives the compiler's context these helpers (``compiler.CONTEXT``).
"""

from __future__ import annotations

import functools
import inspect
import types
import weakref

import numpy as np

from cpsad import api
from cpsad.calls import (
    LRU_CACHE,
    as_tangent,
    closure_derivative,
    function_of,
    not_differentiated_again,
    params_for,
    primitive_caller,
    source,
)
from cpsad.compiler import (
    CONTEXT,
    NESTED,
    STAGED,
    STAGED_FORWARD,
    kinds_of,
    local_name,
    run_pipeline,
    specialize,
)
from cpsad.pytree import gradient_adjoint, gradient_of
from cpsad.rules import core
from cpsad.runtime import (
    Closure,
    Sparse,
    acc,
    as_adjoint,
    carries,
    field,
    field_adjoint,
    field_key,
    field_tangent,
    is_struct,
    item_adjoint,
    struct_of,
    tangent_or_zeros,
    tangent_zeros,
    zero_tangents,
    zeros_like,
)
from cpsad.transforms import aliasing, hints
from cpsad.transforms.context import Default
from cpsad.transforms.errors import TransformError, call_mismatch
from cpsad.transforms.resolve import builtin_method_rule, struct_fields, user_method

# --------------------------------------------------------------------------- reverse mode
#
# Emitted code calls ``call_bp(f, k, *args)`` where the source called ``f(*args)`` with ``f`` a
# value -- a parameter, a function in a variable or a container. It returns one adjoint per
# positional argument (zeros where nothing flowed back), whatever ``f`` turns out to be: a local
# function used as a value (a ``Closure``), a Python function (transformed on first use, with
# respect to every argument), a primitive with a rule (``np.tanh`` passed as an activation), or a
# function with no derivative.


def call_bp(f, k, *args, **kwargs):
    """Call ``f(*args, **kwargs)`` in continuation-passing style; the adjoints of ``args``."""
    return _dispatch(f, k, args, kwargs)[0]


def call_bp_keywords(f, k, *args, **kwargs):
    """``call_bp`` where a keyword argument is differentiated (``fn(x, scale=s)``, a decorator's
    ``fn(*args, **kwargs)``): ``(one adjoint per positional argument, {keyword: adjoint})``."""
    positional, keywords = _dispatch(f, k, args, kwargs)
    if keywords is None:
        for name, v in kwargs.items():
            if _inexact(v):
                name_f = getattr(f, "__qualname__", None) or type(f).__name__
                raise TypeError(
                    f"cpsad: the keyword argument `{name}` of a call of `{name_f}` through a "
                    "function value is a float there, and that call has no derivative with "
                    "respect to its keywords -- pass it by position"
                )
        keywords = {name: zeros_like(v) for name, v in kwargs.items()}
    return positional, keywords


def _dispatch(f, k, args, kwargs):
    """What ``f`` is, found out when it runs: ``(adjoints of args, of kwargs)``; the second None
    where the call has no derivative with respect to its keywords (a rule: its keywords are
    options; an operator of cpsad's)."""
    k = _present(k)
    derivative = getattr(f, "__cpsad_derivative__", None)
    if derivative is not None:  # cpsad.grad(g): g's backpropagator, transformed
        return _derivative_bp(f, derivative, k, args, kwargs), None
    if type(f) is AsIs:  # f(obj, *args) is f.callee(*args): obj has no adjoint
        check_callee(f.callee)
        positional, keywords = _dispatch(f.callee, k, args[1:], kwargs)
        return (zeros_like(args[0]), *positional), keywords
    if type(f) is FieldCall:  # obj.name(*args): the field's adjoint is obj's
        obj = args[0]
        inner = getattr(obj, f.name)
        fn = callee_function(inner)
        positional, keywords = _dispatch(fn, k, (inner, *args[1:]), kwargs)
        # (a function held in the field, called as it is: no adjoint for the field)
        adjoint = Sparse() if type(fn) is AsIs else field_adjoint(positional[0], obj, f.name)
        return (adjoint, *positional[1:]), keywords
    if isinstance(f, Closure):  # its backpropagator differentiates every parameter
        if isinstance(f.bp, Closure):
            raise _for_its_value_alone(f)
        params = list(inspect.signature(f.bp).parameters.values())[1:]
        try:
            out = f.bp(k, *args, **kwargs)
        except TypeError as exc:
            if exc.__traceback__.tb_next is None:  # the call did not bind: its message names
                raise _mismatch(f.bp, params, args, kwargs) from None  # the made-up f_bp
            raise
        return _by_argument(params, [p.name for p in params], out, args, kwargs)
    rule = core.lookup(f)
    if rule is not None:
        return _primitive(rule, f, k, args, kwargs), None
    rule = builtin_method_rule(CONTEXT, f)
    if rule is not None:  # an array's method (``c.dot``): its rule, the object first, as data
        receiver = f.__self__
        unbound = getattr(type(receiver), f.__name__)
        return _primitive(rule, unbound, k, (receiver, *args), kwargs)[1:], None
    composite = core.composite(f)
    if composite is not None:  # computed from functions with rules: transformed
        return _function(composite, k, args, kwargs)
    if core.is_nondiff(f) or f in (int, bool, str):
        k(f(*args, **kwargs))
        return tuple(zeros_like(a) for a in args), {n: zeros_like(v) for n, v in kwargs.items()}
    op = getattr(f, "__cpsad_operator__", None)
    if op == "jvp":  # cpsad.jvp(h, primals, tangents): reverse mode over h's tangent function
        return _jvp_bp(k, *args, **kwargs), None
    if op == "vjp":  # cpsad.vjp(h, *args): its value, and a pullback that adds to args' adjoints
        return _vjp_bp(k, *args, **kwargs), None
    if isinstance(f, Pullback):
        return f.call_bp(k, *args, **kwargs), None
    if op is not None:  # cpsad.grad(h) itself, as a value
        k(_operator(f, args, kwargs))
        return tuple(zeros_like(a) for a in args), None
    fields = struct_fields(f) if isinstance(f, type) else None
    if fields is not None:  # a struct's class called through a value (`cls(...)`, `type(p)(...)`)
        return _struct_made(f, fields, k, args, kwargs)
    method = user_method(CONTEXT, f)
    if method is not None:  # a bound method, or an object with __call__: the object goes first
        receiver = getattr(f, "__self__", f)
        positional, keywords = _function(method, k, (receiver, *args), kwargs, data=1)
        return positional[1:], keywords
    if isinstance(f, functools.partial):  # its arguments first: constants
        n = len(f.args)
        positional, keywords = _dispatch(f.func, k, (*f.args, *args), {**f.keywords, **kwargs})
        if keywords is not None:
            keywords = {name: keywords[name] for name in kwargs}
        return positional[n:], keywords
    if isinstance(f, LRU_CACHE):  # what the function returns
        return _dispatch(f.__wrapped__, k, args, kwargs)
    if isinstance(f, types.FunctionType) and CONTEXT.classify(f) == "user":
        return _function(f, k, args, kwargs)
    if getattr(f, "__cpsad_stop__", False):  # the end of a run for a value (call_primal): no
        f(*args, **kwargs)  # derivative is asked for after it, it does not return
    raise _no_rule(f)


class AsIs:
    """A callee the dispatch runs as it is, as a function of one argument more, first: ``AsIs(f)
    (obj, *args)`` is ``f(*args)``, and ``obj`` has a zero adjoint. What ``callee_function`` and
    ``method_function`` give for a callee whose first argument would carry no derivative of its
    own (a function, a closure, a rule's function, a method of compiled code)."""

    __slots__ = ("callee",)

    def __init__(self, callee):
        self.callee = callee

    def __call__(self, obj, *args, **kwargs):
        return self.callee(*args, **kwargs)

    def __repr__(self):
        return f"AsIs({self.callee!r})"


def is_as_is(f) -> bool:
    """Is ``f`` an ``AsIs``? (Resolve's ``through_call``, at the next order.)"""
    return type(f) is AsIs


def callee_of(f):
    """The callee an ``AsIs`` runs."""
    return f.callee


def callee_function(f):
    """``f(*args)``, where ``f`` itself is differentiated, as ``callee_function(f)(f, *args)``
    (Shift/Reset's ``through_callee``): for a struct of yours (a dataclass, a namedtuple, a
    registered pytree) with ``__call__``, that method -- the dispatch differentiates it with
    respect to the object as to any argument, and the object's adjoint gets its fields'; for
    anything else ``AsIs(f)``, which runs it as it is (an object of a plain class, or a bound
    method, is refused there where it holds differentiable values: ``check_callee``)."""
    if is_struct(f) and not inspect.ismethod(f):
        method = user_method(CONTEXT, f)
        if method is not None:
            return method
    return AsIs(f)


def method_function(obj, name: str):
    """``obj.name(*args)``, where ``obj`` is differentiated and no rule knows the method by its
    name, as ``method_function(obj, name)(obj, *args)`` (Shift/Reset's ``through_method``): for
    a struct of yours, the function of yours its class defines (not one stored in the object:
    that is a field, called as it is) -- differentiated with respect to the object too; else
    ``AsIs`` of the bound attribute (``getattr``'s ``AttributeError`` where there is none, as
    Python's)."""
    if not is_struct(obj):
        return AsIs(getattr(obj, name))
    found = inspect.getattr_static(type(obj), name, None)
    own = getattr(obj, "__dict__", None)
    if (
        isinstance(found, types.FunctionType)
        and not (own and name in own)
        and CONTEXT.classify(found) == "user"
    ):
        return found
    try:
        field_key(obj, name)
    except (TypeError, AttributeError):
        return AsIs(getattr(obj, name))
    return FieldCall(name)


class FieldCall:
    """``method_function(obj, name)`` where ``obj.name`` is a field of the struct ``obj`` -- a
    layer held by a model, called in its method as ``self.layer(x)`` -- not a method of its
    class: ``FieldCall(name)(obj, *args)`` is ``obj.name(*args)``, which the dispatch runs as
    ``callee_function(obj.name)``, the field's adjoint going to ``obj``'s (``field_adjoint``)."""

    __slots__ = ("name",)

    def __init__(self, name: str):
        self.name = name

    def __call__(self, obj, *args, **kwargs):
        return getattr(obj, self.name)(*args, **kwargs)

    def __repr__(self):
        return f"FieldCall({self.name!r})"


def _struct_by_field(cls, fields, args, kwargs):
    """The call ``cls(*args, **kwargs)`` of a struct's class (``struct_fields``) as what
    ``struct_of`` takes: the values, and the fields they go to (Python's ``TypeError`` for a call
    that does not bind)."""
    names = (*fields[: len(args)], *kwargs)
    if len(args) > len(fields) or len(set(names)) != len(names) or not set(names) <= set(fields):
        cls(*args, **kwargs)  # (raises, as Python does)
    return (*args, *kwargs.values()), names


def _struct_made(cls, fields, k, args, kwargs):
    """``cls(*args, **kwargs)`` in continuation-passing style, ``cls`` a namedtuple or a dataclass
    whose ``__init__`` only stores its arguments: ``struct_of``'s rule, each value's adjoint its
    field's."""
    values, names = _struct_by_field(cls, fields, args, kwargs)
    _, adjoint, _ = _primitive(core.lookup(struct_of), struct_of, k, (cls, values, names), {})
    entries = [item_adjoint(adjoint, i, v) for i, v in enumerate(values)]
    return tuple(entries[: len(args)]), dict(zip(kwargs, entries[len(args) :]))


def check_callee(f) -> None:
    """Before the dispatch runs ``f`` as it is (``AsIs``), where ``f`` itself may depend on the
    differentiated inputs: refused (``TypeError``) where ``f`` is an object of a plain class of
    yours with ``__call__``, or a bound method of an object of yours, that holds differentiable
    values. The dispatch would run its method with the object as data, and the derivative
    through its fields would be lost (``layer(x)`` gave a zero gradient so). (A closure, a
    function, a rule's function: no check.)"""
    if isinstance(f, (Closure, types.FunctionType, types.BuiltinFunctionType)):
        return
    method = user_method(CONTEXT, f)
    if method is None:
        return
    receiver = getattr(f, "__self__", f)
    held = getattr(receiver, "__dict__", None) or {}
    if not (carries(receiver) or any(carries(v) for v in held.values())):
        return
    cls = type(receiver).__name__
    if is_struct(receiver):  # (a struct's method called where it is read is differentiated)
        raise TypeError(
            f"cpsad: `.{method.__name__}`, a bound method of an object of `{cls}` whose fields "
            "hold the values being differentiated, kept as a value and called later, is not "
            "supported: its object would be data there, and the derivative through its fields "
            f"lost. Call it where you read it (`obj.{method.__name__}(x)`), or pass a function "
            f"of the object (`lambda x: obj.{method.__name__}(x)`)"
        )
    raise TypeError(
        f"cpsad: calling a `{cls}` (its `{method.__name__}`) whose fields hold the values being "
        "differentiated is not supported: the method runs with the object as data, so the "
        f"derivative through its fields would be lost. Make `{cls}` a dataclass, or give it to "
        "`cpsad.register_pytree`: a struct's methods are differentiated with respect to its "
        "fields"
    )


def _mismatch(fn, params, args, kwargs) -> TypeError:
    """A call, through a function value, whose arguments do not bind to ``params`` -- of a
    function of the user's, or of the emitted function ``fn`` that stands for a lambda or a local
    function (named in the user's words)."""
    sig = inspect.Signature(params)
    try:
        sig.bind(*args, **kwargs)
    except TypeError as exc:
        return TypeError(call_mismatch(local_name(fn.__code__), sig, exc))
    return TypeError(f"this call does not match the parameters of {local_name(fn.__code__)}")


def _no_rule(f) -> TypeError:
    """A function called, in differentiated code, with values that may be differentiable -- one
    that has no derivative rule and no Python source cpsad can transform."""
    name = getattr(f, "__qualname__", None) or repr(f)
    return TypeError(
        f"cpsad: `{name}` was called with differentiable values, but it has no derivative rule "
        f"and no Python source cpsad can transform; {hints.no_rule(f, name)}"
    )


def _derivative_bp(f, derivative, k, args, kwargs):
    """``f = cpsad.grad(g)`` or ``cpsad.value_and_grad(g)`` called in continuation-passing style:
    the second-order transformation of ``g``'s backpropagator, whose result -- an adjoint --
    reaches ``k`` as what ``f`` returns outside (``gradient_of``), and ``k``'s adjoint goes back
    through its transpose."""
    kind, inner, argnums = derivative
    if kind not in ("grad", "value_and_grad"):

        raise TypeError(not_differentiated_again(kind))
    if kind == "value_and_grad":  # the value's derivative, then the gradient's

        gradient_fn = api.grad(inner, argnums)
        got: dict = {}

        def k_value(value):
            def k_pair(gradient):
                pair_bar = k((value, gradient))
                got["value_bar"] = item_adjoint(pair_bar, 0, value)
                return item_adjoint(pair_bar, 1, gradient)

            got["from_gradient"] = call_bp(gradient_fn, k_pair, *args, **kwargs)
            return got["value_bar"]

        from_value = call_bp(inner, k_value, *args, **kwargs)
        return tuple(acc(a, b) for a, b in zip(from_value, got["from_gradient"]))
    fn, full, like = _derivative_function(f, args, kwargs)
    seeds = len(full) - len(args)

    def k_gradient(adj):
        return gradient_adjoint(k(gradient_of(adj, like)), adj, like)

    return _function(fn, _present(k_gradient), full, kwargs, data=seeds)[0][seeds:]


def _jvp_bp(k, h, primals, tangents, **kwargs):
    """``cpsad.jvp(h, primals, tangents)`` in continuation-passing style: the backpropagator of
    ``h``'s tangent function (reverse over forward); the adjoints of ``h``, ``primals`` and
    ``tangents``."""
    fn, full, where, offset = _tangent_function(h, primals, tangents, kwargs)

    def k_pair(pair):
        value, tangent = pair
        out = (value, gradient_of(tangent, value))
        out_bar = k(out)
        tangent_bar = gradient_adjoint(item_adjoint(out_bar, 1, out[1]), tangent, value)
        return Sparse({0: item_adjoint(out_bar, 0, value), 1: tangent_bar})

    adjoints, _ = _function(fn, _present(k_pair), full, kwargs)
    n = len(where)
    tangents_bar = Sparse()
    for (p, idx), i in where:
        if idx is None:
            tangents_bar[i] = adjoints[[q for (q, _), _ in where].index(p)]
    primals_bar = Sparse(enumerate(adjoints[n + offset :]))
    return zeros_like(h), primals_bar, tangents_bar


def _tangent_function(h, primals, tangents, kwargs):
    """The tangent function to call for ``cpsad.jvp(h, primals, tangents)`` as code to
    transform again, its arguments (the tangents of its active parameters, then the
    primals), which parameter each tangent belongs to with its position in ``tangents``, and
    how many arguments a partial put in front of the primals."""

    primals, tangents = tuple(primals), tuple(tangents)
    if len(primals) != len(tangents):
        raise ValueError(f"jvp: {len(primals)} primals but {len(tangents)} tangents")
    nums = tuple(i for i, t in enumerate(tangents) if t is not None)
    if hasattr(h, "__cpsad_derivative__"):
        raise TypeError(
            "cpsad: cpsad.jvp of a derivative inside a differentiated function is a derivative "
            "of order three: not supported"
        )
    fn, args, shifted, kwargs = function_of(h, primals, nums, kwargs)
    offset = len(args) - len(primals)
    active, where = params_for(fn.__code__, shifted, len(args))
    if any(idx is not None for _, idx in where):
        raise TypeError("cpsad: jvp inside a differentiated function, with respect to *args")
    tans = {p: as_tangent(tangents[i], primals[i], i) for (p, _), i in zip(where, nums)}
    spec = specialize(fn, active, kinds_of(fn.__code__, args, kwargs), "forward" + NESTED)
    full = (*[tans[p] for p in active], *args)
    order = [(w, i) for w, i in zip(where, nums)]
    order.sort(key=lambda e: active.index(e[0][0]))
    return spec.bp, full, order, offset


def _vjp_bp(k, h, *args, **kwargs):
    """``cpsad.vjp(h, *args)`` in continuation-passing style: ``h``'s value, and a pullback whose
    calls (later in the rest of the program ``k``) add to the adjoints of ``args``."""
    got: dict = {}

    def k_value(value):
        pullback = Pullback(h, args, kwargs)
        out_bar = k((value, pullback))
        got["from_pullback"] = pullback.args_bar
        return item_adjoint(out_bar, 0, value)

    from_value = call_bp(h, k_value, *args, **kwargs)
    return (zeros_like(h), *(acc(a, b) for a, b in zip(from_value, got["from_pullback"])))


def _entries(t, n):
    """The ``n`` tangents of a tuple's entries from the tuple's tangent (None: none has one)."""
    if t is None:
        return (None,) * n
    if isinstance(t, dict):
        return tuple(t.get(i) for i in range(n))
    return tuple(t)


def _jvp_jvp(tangents, h, primals, h_tangents, **kwargs):
    """``cpsad.jvp(h, primals, h_tangents)`` carrying the tangents of its arguments: forward mode
    over ``h``'s tangent function."""
    fn, full, where, offset = _tangent_function(h, primals, h_tangents, kwargs)
    _, t_primals, t_tangents = (*tangents, None, None, None)[:3]
    t_tangents = _entries(t_tangents, len(tuple(h_tangents)))
    dots = [t_tangents[i] for _, i in where] + [None] * offset
    dots += list(_entries(t_primals, len(tuple(primals))))
    (value, tangent), (value_dot, tangent_dot) = call_jvp(fn, tuple(dots), *full, **kwargs)
    out = (value, gradient_of(tangent, value))
    return out, (value_dot, gradient_of(tangent_dot, value))


def _vjp_jvp(tangents, h, *args, **kwargs):
    """``cpsad.vjp(h, *args)`` carrying the tangents of its arguments: the value's tangent, and a
    pullback that knows its arguments' tangents (the pullback's own is itself, then)."""
    value, value_dot = call_jvp(h, tuple(tangents[1:]), *args, **kwargs)
    pullback = Pullback(h, args, kwargs, tangents=tuple(tangents[1:]))
    return (value, pullback), (value_dot, None)


class Pullback:
    """The pullback ``cpsad.vjp(h, *args)`` returns inside a differentiated function. Called as
    a value it is the pullback; called in continuation-passing style (``call_bp``) it is
    differentiated -- with respect to its cotangent, and to the ``args`` it closes over, whose
    adjoints it keeps for the call of ``vjp`` that made it (the closure's adjoints, at run time)."""

    __slots__ = ("h", "args", "kwargs", "args_bar", "tangents")

    def __init__(self, h, args, kwargs, tangents=None):
        self.h, self.args, self.kwargs = h, tuple(args), dict(kwargs)
        self.args_bar = [None] * len(self.args)
        self.tangents = (None,) * len(self.args) if tangents is None else tangents

    def __call__(self, cotangent):

        return api.vjp(self.h, *self.args, **self.kwargs)[1](cotangent)

    def call_bp(self, k, cotangent):
        bp, full, active, offset, kwargs = self._backpropagator()
        args = self.args
        got: dict = {}

        def seed_bp(k_seed, result):  # result -> the cotangent: its adjoint is the cotangent's
            got["cotangent_bar"] = k_seed(as_adjoint(cotangent))
            return zeros_like(result)

        like = tuple(args)

        def k_gradients(raw):
            adjoints = (raw,) if len(active) == 1 else tuple(raw)
            grads = gradient_of(adjoints, like)
            bar = gradient_adjoint(k(grads), adjoints, like)
            return item_adjoint(bar, 0, raw) if len(active) == 1 else bar

        out, _ = _function(bp, _present(k_gradients), (Closure(seed_bp), *full), kwargs, data=1)
        for i, a in enumerate(out[1 + offset :]):
            self.args_bar[i] = acc(self.args_bar[i], a)
        bar = got.get("cotangent_bar")
        return (zeros_like(cotangent) if bar is None else bar,)

    def call_jvp(self, tangents, cotangent):
        """Forward mode: the pullback's tangent along its cotangent's tangent and the tangents
        its arguments had where ``vjp`` was called."""
        bp, full, active, offset, kwargs = self._backpropagator()
        (t_cotangent,) = tuple(tangents) or (None,)

        def seed_jvp(result):  # result -> the cotangent, whose tangent is t_cotangent
            t = tangent_or_zeros(t_cotangent, cotangent)
            return as_adjoint(cotangent), as_adjoint(t)

        dots = (None,) + (None,) * offset + tuple(self.tangents)
        full = (Closure(jvp=seed_jvp), *full)
        raw, raw_dot = call_jvp(bp, dots, *full, **kwargs)
        like = tuple(self.args)
        adjoints = (raw,) if len(active) == 1 else tuple(raw)
        adjoints_dot = (raw_dot,) if len(active) == 1 else _entries(raw_dot, len(adjoints))
        return gradient_of(adjoints, like), gradient_of(tuple(adjoints_dot), like)

    def _backpropagator(self):

        args = tuple(self.args)
        nums = tuple(range(len(args)))
        fn, full, shifted, kwargs = function_of(self.h, args, nums, self.kwargs)
        offset = len(full) - len(args)
        active, where = params_for(fn.__code__, shifted, len(full))
        if any(idx is not None for _, idx in where) or hasattr(self.h, "__cpsad_derivative__"):
            raise TypeError(
                "cpsad: the pullback of cpsad.vjp inside a differentiated function, of a function "
                "of *args or of a derivative, is not supported"
            )
        kinds = kinds_of(fn.__code__, full, kwargs)
        bp = specialize(fn, active, kinds, "reverse" + NESTED).bp
        return bp, full, active, offset, kwargs


def _operator(op, args, kwargs):
    """``cpsad.grad(h)`` (or another derivative operator) evaluated where it was called through a
    value: the derivative function -- refused for a function defined inside the function being
    differentiated, whose backpropagator adds to that function's adjoints."""
    for a in (*args, *kwargs.values()):
        if isinstance(a, Closure):
            raise closure_derivative(a)
    return op(*args, **kwargs)


def _present(k):
    """``k``, except that an absent adjoint (None: the caller did not use the result) comes
    back as the result's zero -- what ``f``'s backpropagator, written for any caller, expects."""

    def k_present(result):
        g = k(result)
        return zeros_like(result) if g is None else g

    return k_present


def _function(f, k, args, kwargs, data=0):
    """A Python function, differentiated with respect to every argument passed but the first
    ``data`` (the object of a method): ``(adjoints of args, of kwargs)``."""
    sig = inspect.signature(f, follow_wrapped=False)
    try:
        bound = sig.bind(*args, **kwargs)
    except TypeError:
        params = list(sig.parameters.values())[data:]  # (a method's object: not the call's)
        raise _mismatch(f, params, args[data:], kwargs) from None
    data_params = list(sig.parameters)[:data]
    # (an object of a plain class of yours with `__call__` given as an argument is data, as the
    # object of a method is here: a call of it inside is not of a differentiated value; a
    # struct's fields are differentiated -- `callee_function`)
    data_params += [p for p, v in bound.arguments.items() if _callable_object(v)]
    active = tuple(p for p in sig.parameters if p in bound.arguments and p not in data_params)
    # whoever called through the value may read every argument after the call: an update of
    # one in place would be seen there (aliasing's held parameters)
    held = (aliasing.held_entry(bound.arguments),) if bound.arguments else ()
    spec = specialize(f, active, kinds_of(f.__code__, args, kwargs) + held)
    out = spec.bp(k, *args, **kwargs)
    return _by_argument(list(sig.parameters.values()), active, out, args, kwargs)


def _callable_object(v) -> bool:
    """An object of a plain class of yours whose ``__call__`` the dispatch would run (not a
    struct, a function, or one of the emitted code's closures)."""
    if isinstance(v, (Closure, types.FunctionType, types.BuiltinFunctionType, type)):
        return False
    return not inspect.ismethod(v) and not is_struct(v) and user_method(CONTEXT, v) is not None


def _by_argument(params, names, out, args, kwargs):
    """Adjoints of the parameters ``names`` (as a backpropagator returns them) -> one per
    positional argument (``*args`` spread out) and one per keyword argument (``**kwargs``
    spread out)."""
    # (a backpropagator of no parameters returns nothing: ``out`` is None)
    adjoints = dict(zip(names, (out,) if len(names) == 1 else out or ()))
    P = inspect.Parameter
    positional = [p.name for p in params if p.kind in (P.POSITIONAL_ONLY, P.POSITIONAL_OR_KEYWORD)]
    named = {p.name for p in params if p.kind in (P.POSITIONAL_OR_KEYWORD, P.KEYWORD_ONLY)}
    star = next((p.name for p in params if p.kind == P.VAR_POSITIONAL), None)
    stars = next((p.name for p in params if p.kind == P.VAR_KEYWORD), None)
    by_position = []
    for i, a in enumerate(args):
        if i < len(positional):
            adj = adjoints.get(positional[i])
        elif star is not None and adjoints.get(star) is not None:
            adj = item_adjoint(adjoints[star], i - len(positional), a)
        else:
            adj = None
        by_position.append(zeros_like(a) if adj is None else adj)
    by_keyword = {}
    for name, v in kwargs.items():
        if name in named:
            adj = adjoints.get(name)
        elif stars is not None and adjoints.get(stars) is not None:
            adj = item_adjoint(adjoints[stars], name, v)
        else:
            adj = None
        by_keyword[name] = zeros_like(v) if adj is None else adj
    return tuple(by_position), by_keyword


def _star(rule):
    """The name of a rule's ``*items`` parameter -- ``max(a, b)``'s, whose one adjoint function
    gives the tuple of every positional argument's -- or None. A rule with parameters before
    it is not called through a value: a TypeError, not a wrong structure."""
    params = list(rule.signature.parameters.values())
    star = [p.name for p in params if p.kind == inspect.Parameter.VAR_POSITIONAL]
    if not star:
        return None
    if len(params) > 1:
        raise TypeError(f"cpsad: {rule.name} called through a function value is not supported")
    return star[0]


def _primitive(rule, f, k, args, kwargs):
    ans = f(*args, **kwargs)
    g = k(ans)
    star = _star(rule)
    if star is not None:  # (max(a, b) through a value: the adjoint of each of *items)
        t = rule.adjoints.get(star)
        return tuple(t.fn(g, ans, *args)) if t is not None else tuple(map(zeros_like, args))
    bound = rule.bind(args, kwargs)
    values = {p: (v.value if isinstance(v, Default) else v) for p, v in bound.items()}
    params = list(rule.signature.parameters)
    result = []
    for i, a in enumerate(args):
        t = rule.adjoints.get(params[i]) if i < len(params) else None
        if t is None and i < len(params) and params[i] not in rule.discrete and _inexact(a):
            # (as ShiftReset refuses a differentiable value there: not a silent zero)
            raise TypeError(
                f"cpsad: {rule.name} has no derivative with respect to its argument "
                f"`{params[i]}`, and it was called, through a function value, on a float there; "
                + hints.no_derivative(rule.name, params[i])
            )
        result.append(zeros_like(a) if t is None else t.fn(g, ans, **values))
    return tuple(result)


def _inexact(a) -> bool:
    """A float or complex value, one that may be differentiable (``call_bp`` cannot tell which
    of the arguments are)."""
    if isinstance(a, (float, complex, np.inexact)):
        return True
    return isinstance(a, np.ndarray) and a.dtype.kind in "fc"


# --------------------------------------------------------------------------- forward mode
#
# Emitted forward-mode code calls ``call_jvp(f, tangents, *args)`` where the source called
# ``f(*args)`` with ``f`` a value: ``tangents`` has one entry per positional argument (None where
# the argument does not depend on the inputs). It returns ``(result, tangent of the result)``.


def call_jvp(f, tangents, *args, **kwargs):
    """Call ``f(*args, **kwargs)`` carrying the arguments' tangents; ``(result, its tangent)``."""
    value, tangent = _call_jvp(f, tangents, None, args, kwargs)
    return value, tangent_or_zeros(tangent, value)  # never absent: the caller's rules read it


def call_jvp_keywords(f, tangents, keyword_tangents, *args, **kwargs):
    """``call_jvp`` where a keyword argument carries a tangent: ``keyword_tangents`` maps
    keywords to tangents (None: the argument has none)."""
    value, tangent = _call_jvp(f, tangents, keyword_tangents or None, args, kwargs)
    return value, tangent_or_zeros(tangent, value)


def _no_keyword_tangents(f, keyword_tangents) -> None:
    """A call that follows no tangent of a keyword argument (a rule's keywords are options)."""
    for name, t in (keyword_tangents or {}).items():
        if t is not None:
            shown = getattr(f, "__qualname__", None) or type(f).__name__
            raise TypeError(
                f"cpsad: the keyword argument `{name}` of a call of `{shown}` through a "
                "function value depends on the differentiated values, and that call has no "
                "derivative with respect to its keywords -- pass it by position"
            )


def _for_its_value_alone(f) -> TypeError:
    """A closure of the code one order down -- its backpropagator a function value of this
    order's -- which that code called for its value alone (a statement with no derivative
    there): what a call of it differentiates here is ``Closure.__call__``, the run of that
    backpropagator to its continuation, which has no derivative (refused in both modes)."""
    inner = f.bp
    while isinstance(inner, Closure):
        inner = inner.bp if inner.bp is not None else inner.jvp
    return TypeError(_not_next_order(inner, "a closure called for its value alone below"))


def _call_jvp(f, tangents, kw_tangents, args, kwargs):
    if type(f) is AsIs:  # f(obj, *args) is f.callee(*args): obj's tangent does not reach it
        check_callee(f.callee)
        return _call_jvp(f.callee, tuple(tangents)[1:], kw_tangents, args[1:], kwargs)
    if type(f) is FieldCall:  # obj.name(*args): the field's tangent is obj's
        obj, (t, *rest) = args[0], tuple(tangents)
        inner = getattr(obj, f.name)
        tangents = (field_tangent(t, obj, f.name), *rest)
        return _call_jvp(callee_function(inner), tangents, kw_tangents, (inner, *args[1:]), kwargs)
    if isinstance(f, Closure) and f.jvp is None and isinstance(f.bp, Closure):
        raise _for_its_value_alone(f)
    if isinstance(f, Closure) and f.jvp is not None:
        params = list(inspect.signature(f.jvp).parameters.values())[len(f.active) :]
        by_param = _tangents_by_param(params, tangents, args, kwargs, kw_tangents)
        try:
            zeros = zero_tangents(f, args, kwargs)  # for the parameters given no tangent
        except TypeError:  # (it binds the call first)
            raise _mismatch(f.jvp, params, args, kwargs) from None
        dots = [by_param.get(p, z) for p, z in zip(f.active, zeros)]
        return f.jvp(*dots, *args, **kwargs)
    rule = core.lookup(f)
    if rule is not None:
        _no_keyword_tangents(f, kw_tangents)
        return _primitive_jvp(rule, f, tangents, args, kwargs)
    rule = builtin_method_rule(CONTEXT, f)
    if rule is not None:  # an array's method (``c.dot``): the object is data, without a tangent
        _no_keyword_tangents(f, kw_tangents)
        unbound = getattr(type(f.__self__), f.__name__)
        return _primitive_jvp(rule, unbound, (None, *tangents), (f.__self__, *args), kwargs)
    composite = core.composite(f)
    if composite is not None:
        return _call_jvp(composite, tangents, kw_tangents, args, kwargs)
    if core.is_nondiff(f) or f in (int, bool, str):
        ans = f(*args, **kwargs)
        return ans, tangent_zeros(ans)
    fields = struct_fields(f) if isinstance(f, type) else None
    if fields is not None:  # a struct's class called through a value: ``struct_of``'s rule
        values, names = _struct_by_field(f, fields, args, kwargs)
        t_values = (*tangents, *((kw_tangents or {}).get(n) for n in kwargs))
        rule = core.lookup(struct_of)
        return _primitive_jvp(rule, struct_of, (None, t_values, None), (f, values, names), {})
    method = user_method(CONTEXT, f)
    if method is not None:  # the object is data: it has no tangent
        receiver = getattr(f, "__self__", f)
        return _call_jvp(method, (None, *tangents), kw_tangents, (receiver, *args), kwargs)
    derivative = getattr(f, "__cpsad_derivative__", None)
    op = getattr(f, "__cpsad_operator__", None)
    if derivative is not None or op is not None or isinstance(f, Pullback):
        _no_keyword_tangents(f, kw_tangents)
    if derivative is not None:  # cpsad.grad(g): g's backpropagator, transformed
        if derivative[0] not in ("grad", "value_and_grad"):

            raise TypeError(not_differentiated_again(derivative[0]))
        if derivative[0] == "value_and_grad":

            value, value_dot = call_jvp(derivative[1], tangents, *args, **kwargs)
            gradient_fn = api.grad(derivative[1], derivative[2])
            gradient, gradient_dot = call_jvp(gradient_fn, tangents, *args, **kwargs)
            return (value, gradient), (value_dot, gradient_dot)
        fn, full, like = _derivative_function(f, args, kwargs)
        seeds = len(full) - len(args)
        value, tangent = call_jvp(fn, (None,) * seeds + tuple(tangents), *full, **kwargs)
        return gradient_of(value, like), gradient_of(tangent, like)
    if op == "jvp":  # forward mode over h's tangent function
        return _jvp_jvp(tangents, *args, **kwargs)
    if op == "vjp":
        return _vjp_jvp(tangents, *args, **kwargs)
    if isinstance(f, Pullback):
        return f.call_jvp(tangents, *args, **kwargs)
    if op is not None:  # cpsad.grad(h) itself, as a value
        return _operator(f, args, kwargs), None
    if isinstance(f, functools.partial):  # its arguments first: constants, without tangents
        n = len(f.args)
        tangents = (None,) * n + tuple(tangents)
        kwargs = {**f.keywords, **kwargs}
        return _call_jvp(f.func, tangents, kw_tangents, (*f.args, *args), kwargs)
    if isinstance(f, LRU_CACHE):
        return _call_jvp(f.__wrapped__, tangents, kw_tangents, args, kwargs)
    if isinstance(f, types.FunctionType) and CONTEXT.classify(f) == "user":
        params = list(inspect.signature(f, follow_wrapped=False).parameters.values())
        by_param = _tangents_by_param(params, tangents, args, kwargs, kw_tangents)
        active = tuple(p.name for p in params if by_param.get(p.name) is not None)
        # (whoever called through the value may read every argument after: see ``_function``)
        try:
            bound = inspect.signature(f, follow_wrapped=False).bind(*args, **kwargs).arguments
        except TypeError:
            raise _mismatch(f, params, args, kwargs) from None
        held = (aliasing.held_entry(bound),) if bound else ()
        spec = specialize(f, active, kinds_of(f.__code__, args, kwargs) + held, "forward")
        return spec.bp(*[by_param[p] for p in active], *args, **kwargs)
    raise _no_rule(f)


def _derivative_function(f, args, kwargs):
    """For ``f = cpsad.grad(g)``: the backpropagator to transform, its arguments (the seeds of
    the continuations first), and what the gradient it returns is shaped like (``gradient_of``):
    ``args[argnums]``, a tuple of them for a tuple ``argnums``."""

    _, inner, argnums = f.__cpsad_derivative__
    if isinstance(inner, Closure):
        raise closure_derivative(inner)
    fn, full, _, _ = function_of(f, tuple(args), tuple(range(len(args))), kwargs)
    if isinstance(argnums, int):
        return fn, full, args[argnums]
    return fn, full, tuple(args[i] for i in argnums)


def _tangents_by_param(params, tangents, args, kwargs, kw_tangents=None) -> dict:
    """``{parameter: tangent}`` from one tangent per positional argument (``*args`` collected
    into a tuple, zeros where an item has none) and one per keyword argument in ``kw_tangents``
    (``**kwargs`` collected into a dict); parameters without a tangent are left out."""
    P = inspect.Parameter
    positional = [p.name for p in params if p.kind in (P.POSITIONAL_ONLY, P.POSITIONAL_OR_KEYWORD)]
    star = next((p.name for p in params if p.kind == P.VAR_POSITIONAL), None)
    out = {}
    for name, t in zip(positional, tangents):
        if t is not None:
            out[name] = t
    if star is not None and len(args) > len(positional):
        rest = list(zip(tangents, args))[len(positional) :]
        if any(t is not None for t, _ in rest):
            out[star] = tuple(tangent_or_zeros(t, a) for t, a in rest)
    if kw_tangents:
        named = {p.name for p in params if p.kind in (P.POSITIONAL_OR_KEYWORD, P.KEYWORD_ONLY)}
        stars = next((p.name for p in params if p.kind == P.VAR_KEYWORD), None)
        for name, t in kw_tangents.items():
            if t is not None and name in named:
                out[name] = t
        extra = {n: v for n, v in kwargs.items() if n not in named}
        if stars is not None and any(kw_tangents.get(n) is not None for n in extra):
            out[stars] = {n: tangent_or_zeros(kw_tangents.get(n), v) for n, v in extra.items()}
    return out


def _primitive_jvp(rule, f, tangents, args, kwargs):
    ans = f(*args, **kwargs)
    star = _star(rule)
    if star is not None and any(t is not None for t in tangents):  # (max(a, b), as above)
        t = tuple(tangent_zeros(a) if v is None else v for v, a in zip(tangents, args))
        return ans, tangent_or_zeros(rule.tangents[star].fn(t, ans, *args), ans)
    bound = rule.bind(args, kwargs)
    values = {p: (v.value if isinstance(v, Default) else v) for p, v in bound.items()}
    params = list(rule.signature.parameters)
    out = None
    for i, t in enumerate(tangents):
        if t is None or i >= len(params) or params[i] in rule.discrete:
            continue
        template = rule.tangents.get(params[i])
        if template is None:
            raise TypeError(
                f"cpsad: {rule.name} has no forward-mode (tangent) rule for its argument "
                f"`{params[i]}`; register one with cpsad.defjvp (see docs/rules.md)"
            )
        contribution = template.fn(t, ans, **values)
        out = contribution if out is None else out + contribution
    return ans, tangent_or_zeros(out, ans)


def backpropagator_of(fn, active, kinds=(), mode="reverse"):
    """The emitted backpropagator (or tangent function) of a function, as code to transform
    again (Nested)."""
    return specialize(fn, active, kinds, mode + NESTED).bp


def staged_callee(fn, active, kinds=(), mode="reverse"):
    """A function a staged backpropagator calls, transformed as staged code up to the stage that
    defines its own callees in it (``transforms/callees.py``): its unit, whose tree the caller
    defines in itself -- or, where that fails, why (the caller keeps the call; Flatten says so)."""
    staged = STAGED_FORWARD if mode == "forward" else STAGED
    try:
        unit, _ = run_pipeline(fn, active, entry=False, kinds=kinds, mode=staged, upto="callees")
    except TransformError as exc:
        return f"its transformation stopped: {exc.message}"
    return unit


def compiled_apart(fn, active, kinds=()):
    """A function a staged backpropagator calls but could not copy in (one that calls itself),
    compiled on its own: ``cpsad.staging.compiled_apart``'s answer -- ``dispatcher``, ``params``,
    ``path`` -- or why not."""
    from cpsad import staging

    return staging.compiled_apart(fn, active, kinds)


# --------------------------------------------------------------------------- the next order
#
# Emitted code differentiated again -- a third derivative through a loop, recursion or a call,
# a second one of code that passes functions as values -- calls ``call_bp(f, k, *args)``, and
# the dispatch is Python that inspects what it is given: no code to differentiate. Resolve
# rewrites such a call into ``bp_of(f, *args)(k, *args)``. ``bp_of`` only picks a function (it
# is not differentiated): the backpropagator the dispatch would run for ``f`` and ``args``, as
# a function cpsad can transform that returns what ``call_bp`` returns (an adjoint per
# argument). The call is then one through a function value again, which the dispatch of the
# next order differentiates: any order, one level of dispatch per order.


def _signature(fn) -> inspect.Signature:
    """``fn``'s own signature: not that of the function a decorator's wrapper names in
    ``__wrapped__`` (``functools.wraps``), which ``inspect.signature`` reports by default -- the
    wrapper's backpropagator was made with respect to the wrapped function's parameters
    (``u``), which the wrapper, ``wrapper(*args, **kwargs)``, does not have (a NameError when
    its second derivative ran)."""
    return inspect.signature(fn, follow_wrapped=False)


def bp_of(f, *args, **kwargs):
    """The backpropagator ``call_bp(f, k, *args)`` runs, as code to transform again, returning
    what a backpropagator returns: ``bp_of(f, x)(k, x)`` is the adjoint of ``x`` (the first of
    the tuple ``call_bp`` returns), ``bp_of(f, x, y)(k, x, y)`` the tuple of both. For what is
    made anew on every run (a closure of emitted code) nothing in between: a function made for
    it would be transformed again on every run (its transformation depends on what it calls)."""
    n = len(args)
    if kwargs:
        raise TypeError(_not_next_order(f, "keyword arguments in a call through a value"))
    if type(f) is AsIs:  # its first argument has a zero adjoint; the others, f.callee's
        if n < 1 or n > len(_WITHOUT_FIRST):
            raise TypeError(_not_next_order(f.callee, f"a call of {n - 1} arguments"))
        check_callee(f.callee)
        return _made(_WITHOUT_FIRST[n - 1], bp_of(f.callee, *args[1:]))
    if type(f) is FieldCall:  # the field's backpropagator, through the field's rules
        if not 1 <= n <= len(_FIELD_CALLS):
            raise TypeError(_not_next_order(f, f"a call of {n - 1} arguments"))
        return _made(_FIELD_CALLS[n - 1], f.name)
    if isinstance(f, Closure):  # a function of emitted code: its own backpropagator
        bp = f.bp
        if bp is None:
            raise TypeError(_not_next_order(f, "a function of forward-mode code"))
        inner, before = bp, 1  # (the parameters before f's own: its continuation, ...)
        while isinstance(inner, Closure):  # (a function of emitted code transformed again:
            if inner.bp is not None:  # one more continuation, or the tangents of forward mode)
                inner, before = inner.bp, before + 1
            else:
                inner, before = inner.jvp, before + len(inner.active)
        params = list(_signature(inner).parameters.values())[before:]
        _check_positional(f, params, n)
        return _adapted(bp, n, len(params))
    if getattr(f, "__cpsad_derivative__", None) is not None or isinstance(f, Pullback):
        raise TypeError(_not_next_order(f, "a derivative called through a value"))
    if isinstance(f, (functools.partial, LRU_CACHE)) or getattr(f, "__cpsad_operator__", None):
        raise TypeError(_not_next_order(f, "a call of this function through a value"))
    method = user_method(CONTEXT, f)
    if method is not None and 1 <= n <= len(_METHODS):  # the object first, as data
        receiver = getattr(f, "__self__", f)
        _check_positional(f, list(_signature(method).parameters.values())[1:], n)
        names = tuple(_signature(method).parameters)[: n + 1]
        kinds = kinds_of(method.__code__, (receiver, *args), {})
        bp = specialize(method, names[1:], kinds, "reverse" + NESTED).bp
        return source(_METHODS[n - 1](bp, receiver))  # (a new one for each object)
    if builtin_method_rule(CONTEXT, f) is not None and 1 <= n <= len(_METHODS):
        # an array's method (``c.dot``): the unbound method's rule, the object first, as data
        receiver = f.__self__
        fn = primitive_caller(getattr(type(receiver), f.__name__), n + 1, {})
        names = tuple(_signature(fn).parameters)[: n + 1]
        kinds = kinds_of(fn.__code__, (receiver, *args), {})
        bp = specialize(fn, names[1:], kinds, "reverse" + NESTED).bp
        return source(_METHODS[n - 1](bp, receiver))
    if isinstance(f, types.FunctionType) and CONTEXT.classify(f) == "user":
        fn = f  # (transformed with respect to the parameters given, as the dispatch does)
        _check_positional(f, list(_signature(fn).parameters.values()), n)
    elif 1 <= n <= 4 and not inspect.ismethod(f):  # a rule, a composite, a function of no
        # derivative: called by a function of cpsad's, which is transformed (one per function:
        # not for a bound method, made anew each time it is read)
        fn = primitive_caller(f, n, {})  # of cpsad's, which is transformed
    else:
        raise TypeError(_not_next_order(f, f"a call of {n} arguments through a value"))
    names = tuple(_signature(fn).parameters)[:n]
    bp = specialize(fn, names, kinds_of(fn.__code__, args, {}), "reverse" + NESTED).bp
    return _adapted(bp, n, n)


def bp_of_spread(f, *args, **kwargs):
    """``bp_of`` returning the tuple ``call_bp`` returns, whatever the number of arguments: for
    a call that spreads ``*args`` (a decorator's wrapper), where it is known when it runs."""
    bp, n = bp_of(f, *args, **kwargs), len(args)
    return _made(_THROUGH[n], bp) if n < len(_THROUGH) else bp


def bp_later(f, n: int):
    """``bp_of(f, *args)`` for a call whose ``n`` arguments are not names (emitted code reads
    them once): a function cpsad transforms that calls ``call_bp(f, k, *args)`` -- rewritten,
    when it is transformed, into ``bp_of`` of its own parameters."""
    if not 0 <= n < len(_LATER):
        raise TypeError(_not_next_order(f, f"a call of {n} arguments through a value"))
    return _made(_LATER[n], f)


def _not_next_order(f, what: str) -> str:
    name = getattr(f, "__qualname__", None) or type(f).__name__
    return (
        f"cpsad: differentiating again the backpropagator of `{name}`, called through a value, "
        f"is not supported for {what} (a derivative of this order); call it by name, or "
        "differentiate one order less"
    )


def _check_positional(f, params, n: int) -> None:
    """``n`` positional arguments bind ``params``' first ``n``, and the rest have defaults."""
    P = inspect.Parameter
    if len(params) < n or any(p.kind != P.POSITIONAL_OR_KEYWORD for p in params):
        raise TypeError(_not_next_order(f, "a function of *args, keyword-only parameters or more"))
    if any(p.default is P.empty for p in params[n:]):  # (Python's TypeError, when it runs)
        raise TypeError(_not_next_order(f, "a call that does not bind its parameters"))


def _adapted(bp, n: int, m: int):
    """``bp`` (of ``m`` parameters after its continuation, the first ``n`` given) returning what
    a backpropagator of ``n`` parameters returns -- one adjoint, or a tuple of them -- without
    the adjoints of parameters left to their defaults."""
    if n == m or n == 0:
        return bp
    if n > len(_FIRST):
        raise TypeError(_not_next_order(bp, f"a call of {n} arguments through a value"))
    return _made(_FIRST[n - 1], bp)


def _made(make, f):
    """``make(f)``, marked as code to transform, made once while it lives: the next order's
    dispatch finds its transformation by the function object."""
    made = _MADE.get((id(f), make))
    if made is None or made.__closure__[0].cell_contents is not f:
        made = _MADE[(id(f), make)] = source(make(f))
    return made


def _through_0(bp):
    def through_0(k):
        bp(k)
        return ()

    return through_0


def _through_1(bp):
    def through_1(k, a):
        return (bp(k, a),)

    return through_1


_THROUGH = [_through_0, _through_1]


def _first_1(bp):
    def first_1(k, a):
        return bp(k, a)[0]

    return first_1


def _first_2(bp):
    def first_2(k, a, b):
        out = bp(k, a, b)
        return (out[0], out[1])

    return first_2


def _first_3(bp):
    def first_3(k, a, b, c):
        out = bp(k, a, b, c)
        return (out[0], out[1], out[2])

    return first_3


_FIRST = [_first_1, _first_2, _first_3]


def _method_1(bp, receiver):
    def method_1(k, a):
        return bp(k, receiver, a)

    return method_1


def _method_2(bp, receiver):
    def method_2(k, a, b):
        return bp(k, receiver, a, b)

    return method_2


def _method_3(bp, receiver):
    def method_3(k, a, b, c):
        return bp(k, receiver, a, b, c)

    return method_3


_METHODS = [_method_1, _method_2, _method_3]


def _without_first_0(bp):
    def without_first_0(k, obj):
        bp(k)
        return zeros_like(obj)

    return without_first_0


def _without_first_1(bp):
    def without_first_1(k, obj, a):
        return (zeros_like(obj), bp(k, a))

    return without_first_1


def _without_first_2(bp):
    def without_first_2(k, obj, a, b):
        out = bp(k, a, b)
        return (zeros_like(obj), out[0], out[1])

    return without_first_2


def _without_first_3(bp):
    def without_first_3(k, obj, a, b, c):
        out = bp(k, a, b, c)
        return (zeros_like(obj), out[0], out[1], out[2])

    return without_first_3


# (``bp_of(AsIs(f), obj, *args)``: what ``bp_of(f, *args)`` returns, and obj's zero first)
_WITHOUT_FIRST = [_without_first_0, _without_first_1, _without_first_2, _without_first_3]


def _field_call_0(name):
    def field_call_0(k, obj):
        inner = field(obj, name)
        out = call_bp(callee_function(inner), k, inner)
        return field_adjoint(out[0], obj, name)

    return field_call_0


def _field_call_1(name):
    def field_call_1(k, obj, a):
        inner = field(obj, name)
        out = call_bp(callee_function(inner), k, inner, a)
        return (field_adjoint(out[0], obj, name), out[1])

    return field_call_1


def _field_call_2(name):
    def field_call_2(k, obj, a, b):
        inner = field(obj, name)
        out = call_bp(callee_function(inner), k, inner, a, b)
        return (field_adjoint(out[0], obj, name), out[1], out[2])

    return field_call_2


# (``bp_of(FieldCall(name), obj, *args)``: ``call_bp``'s dispatch of it, as code to transform
# again -- the field read by its rule, the call through the dispatch of the next order)
_FIELD_CALLS = [_field_call_0, _field_call_1, _field_call_2]


def _later_0(f):
    def through_0(k):
        return call_bp(f, k)

    return through_0


def _later_1(f):
    def through_1(k, a):
        return call_bp(f, k, a)

    return through_1


def _later_2(f):
    def through_2(k, a, b):
        return call_bp(f, k, a, b)

    return through_2


def _later_3(f):
    def through_3(k, a, b, c):
        return call_bp(f, k, a, b, c)

    return through_3


def _later_4(f):
    def through_4(k, a, b, c, d):
        return call_bp(f, k, a, b, c, d)

    return through_4


_LATER = [_later_0, _later_1, _later_2, _later_3, _later_4]
_MADE: weakref.WeakValueDictionary = weakref.WeakValueDictionary()  # (id(f), make): _made
core.defnondiff(
    bp_of,
    bp_of_spread,
    bp_later,
    Closure,
    check_callee,
    callee_function,
    method_function,
    is_as_is,
    callee_of,
)


CONTEXT.helpers.update(
    {
        "call_bp": call_bp,
        "call_jvp": call_jvp,
        "call_bp_keywords": call_bp_keywords,
        "call_jvp_keywords": call_jvp_keywords,
        "backpropagator_of": backpropagator_of,
        "staged_callee": staged_callee,
        "compiled_apart": compiled_apart,
        "bp_of": bp_of,
        "bp_of_spread": bp_of_spread,
        "bp_later": bp_later,
        "gradient_of": gradient_of,
        "check_callee": check_callee,
        "callee_function": callee_function,
        "method_function": method_function,
        "is_as_is": is_as_is,
        "callee_of": callee_of,
    }
)
