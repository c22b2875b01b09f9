"""After Flatten, the backpropagator is one flat function Numba can compile: no function inside it,
no closure, no ``nonlocal``, and the continuation of the entry -- the seed -- a number it is given.

This is the paper's staging step done by hand for one case: where the continuations are known
when the code is generated, they need not exist when it runs. Lantern's generator inlined them
into straight C++; here each local function the emitted code calls in one place is inlined at
that call, its own names renamed apart, until none is left::

    def f_bp(k, x, n):                              def f_bp(seed, x, n):
        def loop_L3_bp(k, i, x):                        k_1 = ...; i = 0; x_1 = x
            nonlocal w_bar                              frames = []
            frames = []                                 while i < n:
            while i < n: ...                                ...
            x_bar = k(x)             ->                 y = x_1
            ...                                         value = y * 2.0
            return x_bar                                y_bar = seed
        def after_L3(y):                                ...
            y_bar = k(y * 2.0)                          return value, x_bar
            return y_bar * 2.0
        x_bar = loop_L3_bp(after_L3, 0, x)
        return x_bar

* A local function is inlined where it is called, when that call is the only mention of it and
  stands alone as a statement (``t = g(...)``, ``g(...)``, ``return g(...)``). Its parameters are
  assigned the arguments, its ``return`` at the end assigns the call's target. A continuation passed
  as an argument is first a parameter, ``k_1 = after_L3``, then called as ``k_1(...)``: that alias
  is replaced by the function it names, and the call inlined in turn.
* Inlining keeps what the program computes: a closure reads its free variables when it runs,
  and so does the inlined body, at the same place; its own variables are renamed, so it neither
  sees nor changes the caller's. ``nonlocal`` declarations name the caller's variables, which
  are now the inlined code's own: they go.
* A join -- a local function the branches of an ``if`` each call once -- is inlined once, after
  the ``if`` (``joins.inline_join``: the Joins stage did so for the joins there were before
  Defunctionalize; inlining makes more).
* What Numba lacks is spelt as it compiles it, the same computation: ``np.matmul(a, b)`` as
  ``a @ b``, ``np.s_[0, 1:]`` as the index it returns, ``(0, slice(1, None, None))``.
* A ``raise`` whose exception Numba cannot make (a formatted message, a ``from``) raises its
  class alone: where it is raised, the Python backpropagator runs again and raises the function's
  own exception.
* The entry's continuation becomes its result: ``t = k(v)`` is ``value = v; t = seed``, and the
  function returns ``(value, adjoints)``.

Anything else -- a local function called from two places not in branches (a loop kept recursive,
a helper's backpropagator, recursion), a lambda, a ``return`` inside a loop of an inlined
function -- is not flattened: ``Unstageable`` says which construct, at the user's line, and the caller falls back
to the Python backpropagator (``cpsad.jit`` warns once, and computes the same numbers).

The pass also lists the free names of the result that hold data (a closure's cell, a global
array): Numba would freeze them as constants, so they become parameters, read at each call.
"""

from __future__ import annotations

import builtins
import math
import types

import numpy

from . import astlib as A
from . import joins
from .errors import TransformError
from .joins import (
    at_tail,
    own_statement,
    parents_of,
    remove,
    replace,
    standalone_calls,
    statement_lists,
    walk_own_statements,
    with_tails,
)
from .naming import Namer
from .scoping import local_names, rename_free, walk_own
from .unit import ARRAY, SCALAR, Unit

COPIED = 20_000  # nodes: the most a function may grow by copies of local functions (_copy_one)


class Unstageable(TransformError):
    """What kept a function out of Numba: the construct, at the user's line."""


class Flatten:
    name = "flatten"
    invariant = "one flat function: no nested function, closure or nonlocal; the seed a parameter"

    def run(self, unit: Unit) -> None:
        self.unit = unit
        f = unit.tree
        taken = {n.id for n in A.walk(f) if isinstance(n, A.Name)}
        taken |= {d.name for d in A.walk(f) if isinstance(d, A.FunctionDef)}
        taken |= {a for d in A.walk(f) if isinstance(d, A.FunctionDef) for a in A.arg_names(d.args)}
        self.namer = Namer(taken)
        inlined = []
        while True:
            nested = [s for s in walk_own_statements(f.body) if isinstance(s, A.FunctionDef)]
            if not nested:
                break
            for d in nested:
                if self.inline(f, d):
                    inlined.append(d.name)
                    break
            else:
                if not self._copy_one(f, nested):
                    raise self._why_not(f, nested[0])
        for node in A.walk(f):
            if isinstance(node, A.Lambda):
                raise self.unstageable("a lambda", node)
            if isinstance(node, A.Raise) and node.exc is not None and not _constant_raise(node):
                _raised_as_a_constant(node)
            if isinstance(node, (A.Global, A.Try, A.With)) or (
                isinstance(node, A.Raise) and node.exc is None  # (re-raising: only in `except`)
            ):
                what = type(node).__name__.lower()
                raise self.unstageable(f"a `{what}` statement", node)
        remove(f, lambda s: isinstance(s, A.Nonlocal))
        self._compiled_checks(f)
        self._numba_spellings(f)
        for node in A.walk(f):  # (Numba's np.sum takes no keepdims: False is its default)
            if isinstance(node, A.Call):
                node.keywords = [
                    k
                    for k in node.keywords
                    if not (
                        k.arg == "keepdims"
                        and isinstance(k.value, A.Constant)
                        and k.value.value is False
                    )
                ]
        if unit.mode != "forward":  # (a tangent function has no continuation)
            self._seed(f)
        self._positional(f)
        self._attribute_data(f)
        unit.staged_params = self._data_names(f)
        f.args.args.extend(A.params(unit.staged_params).args)
        calls = [n for n in A.walk(f) if isinstance(n, A.Call) and isinstance(n.func, A.Name)]
        itself = [c for c in calls if c.func.id == unit.bp_name]
        # (a callee compiled apart that calls itself: it takes the first frame's address too)
        deeper = [c for c in calls if unit.apart.get(c.func.id, ("", False))[1]]
        if itself or deeper:  # (recursion: the stack used, checked -- a parameter after the data)
            unit.stack_param = stack = self.namer.fresh("stack")
            f.args.args.append(A.params([stack]).args[0])
            within = unit.inject(unit.ctx.runtime("within_stack"), "within_stack")
            checks = [A.assign(A.store(stack), A.call(A.name(within), [A.name(stack)]))]
            if itself:
                checks += self._expect_kinds(f)
            f.body[0:0] = [A.copy_location(c, f) for c in checks]
        for node in itself:  # (a call of itself passes its data on, and the first frame)
            node.args.extend(A.name(p) for p in [*unit.staged_params, unit.stack_param])
        for node in deeper:
            node.args.append(A.name(unit.stack_param))
        unit.notes[self.name] = [
            "inlined " + (", ".join(inlined) or "nothing") + "; the seed is a parameter"
        ]

    def _expect_kinds(self, f) -> list:
        """``expect_array(x)`` or ``expect_number(x)`` for each parameter the code is made for
        arrays only or numbers only: a function that calls itself may be called with arguments of
        other kinds (``unit.is_itself``), which Numba compiles the same code for -- where they
        are not of these kinds, it refuses (no code: Numba picks where it compiles), and the
        Python backpropagator runs."""
        out = []
        for p in A.arg_names(f.args):
            kinds = (self.unit.arg_kinds or {}).get(p)
            if not kinds:
                continue
            if kinds == {ARRAY}:
                helper = "expect_array"
            elif kinds <= SCALAR:
                helper = "expect_number"
            else:
                continue
            name = self.unit.inject(self.unit.ctx.runtime(helper), helper)
            out.append(A.expr_stmt(A.call(A.name(name), [A.name(p)])))
        return out

    def _positional(self, f) -> None:
        """Every parameter positional, in the order the caller passes them: the seed, the
        positional ones (their defaults filled in by the caller), the keyword-only ones, the
        tuple of ``*args`` -- then the data, appended after them (a data parameter after
        ``*rest`` would take an item of it)."""
        a = f.args
        if a.kwarg is not None:
            raise self.unstageable("a `**` parameter", f)
        rest = [a.vararg] if a.vararg is not None else []
        f.args = A.arguments(
            posonlyargs=[],
            args=[*a.posonlyargs, *a.args, *a.kwonlyargs, *rest],
            vararg=None,
            kwonlyargs=[],
            kw_defaults=[],
            kwarg=None,
            defaults=[],
        )

    # ------------------------------------------------------------------ inlining

    @classmethod
    def inliner(cls, unit: Unit) -> Flatten:
        """A Flatten whose ``inline`` another stage uses (Defunctionalize, on an inner loop):
        the names it makes are the unit's, apart from every name ``unit.tree`` holds."""
        out = cls()
        out.unit = unit
        out.namer = unit.namer
        unit.namer.reserve(*(n.id for n in A.walk(unit.tree) if isinstance(n, A.Name)))
        return out

    def inline(self, f, d) -> bool:
        """Inline ``d`` at its one call, if that is all that mentions it; False if not yet."""
        mentions = [n for n in A.walk(f) if isinstance(n, A.Name) and n.id == d.name]
        if not mentions or any(isinstance(n, A.Name) and n.id == d.name for n in A.walk(d)):
            return False
        parents = parents_of(f)
        ref = mentions[0]
        parent = parents[id(ref)]
        if (
            len(mentions) == 1
            and isinstance(parent, A.Assign)
            and parent.value is ref
            and own_statement(f, parent)
        ):
            # ``k_1 = after_L3``: the alias becomes the function's name where it is called
            (target,) = parent.targets if len(parent.targets) == 1 else (None,)
            if not isinstance(target, A.Name):
                return False
            uses = [n for n in A.walk(f) if isinstance(n, A.Name) and n.id == target.id]
            loads = [n for n in uses if n is not target]
            if len(loads) != 1 or any(not isinstance(n.ctx, A.Load) for n in loads):
                return False
            loads[0].id = d.name
            remove(f, lambda s: s is parent)
            return True
        calls = standalone_calls(f, mentions, parents)
        if calls is None:
            return False
        if len(calls) == 1:
            ((call, stmt),) = calls
            mapping, bindings = self._bind(f, d, calls)
            body = self._tails(d.body, stmt, d)
            replace(f, stmt, bindings[0] + body)
            remove(f, lambda s: s is d)
            return True
        return self._inline_join(f, d, calls)

    def _bind(self, f, d, calls) -> tuple[dict, list]:
        """Rename ``d``'s own names apart (in place); the assignments of its parameters at each
        of ``calls``. A parameter every call gives the same local function (a continuation),
        and never assigned, is that function's name in the body instead."""
        args = d.args
        positional = [a.id for a in args.posonlyargs + args.args]
        params = positional + [a.id for a in args.kwonlyargs]
        default = dict(zip(positional[len(positional) - len(args.defaults) :], args.defaults))
        default.update(
            (a.id, v) for a, v in zip(args.kwonlyargs, args.kw_defaults) if v is not None
        )
        for call, _ in calls:
            if (
                any(isinstance(a, A.Starred) for a in call.args)
                or args.vararg
                or args.kwarg
                or not all(_literal(v) for v in default.values())
            ):
                raise self.unstageable(
                    "a call of a local function with other than its parameters", call
                )
            # each parameter by position: given so, by keyword, or its default -- a constant or
            # a tuple of them, the same value at the call as where it was defined (keyword-only
            # ones too)
            given = dict(zip(positional, call.args))
            for kw in call.keywords:
                if kw.arg not in params or kw.arg in given:
                    raise self.unstageable("a call of a local function with other keywords", call)
                given[kw.arg] = kw.value
            if len(call.args) > len(positional) or any(
                p not in given and p not in default for p in params
            ):
                raise self.unstageable(
                    "a call of a local function with other than its parameters", call
                )
            calling = [params.index(k.arg) for k in call.keywords if _calls(k.value)]
            if calling != sorted(calling):  # (a call moved before one written before it)
                raise self.unstageable("keyword arguments that call, out of order", call)
            call.args = [given[p] if p in given else A.deepcopy(default[p]) for p in params]
            call.keywords = []
        # A parameter given a function -- a continuation: a local function or the entry's own
        # -- and never assigned in the body is that function's name in the body, not a variable
        # (so the call of it is seen, and inlined or made the seed, in turn).
        functions = {self.unit.cont_name} | {
            s.name for s in walk_own_statements(f.body) if isinstance(s, A.FunctionDef)
        }
        stored = {n.id for n in A.walk(d) if isinstance(n, A.Name) and isinstance(n.ctx, A.Store)}
        # (in sorted order: the same text in every process, which Numba's cache keys on)
        mapping = {n: self.namer.fresh(n) for n in sorted(local_names(d) | set(params))}
        given = {}
        for i, p in enumerate(params):
            names = {a.id if isinstance(a, A.Name) else None for a in (c.args[i] for c, _ in calls)}
            (name,) = names if len(names) == 1 else (None,)
            if name in functions and p not in stored:
                mapping[p] = given[p] = name
        for s in d.body:
            rename_free(s, mapping)  # (in its nested functions too, where they do not bind it)
        bindings = [
            [
                A.copy_location(A.assign(A.store(mapping[p]), a), call)
                for p, a in zip(params, call.args)
                if p not in given
            ]
            for call, _ in calls
        ]
        return mapping, bindings

    def _inline_join(self, f, d, calls) -> bool:
        """Inline the join ``d`` -- a continuation the branches of an ``if`` call -- once, after
        the ``if`` (``joins.inline_join``); False where not (yet)."""
        stmts = [stmt for _, stmt in calls]
        if joins.plan(f, stmts) is None:
            return False
        _, bindings = self._bind(f, d, calls)
        self._tails(d.body, None, d)  # (refuses a ``return`` before the end)
        return joins.inline_join(f, d, calls, bindings, self.namer.fresh)

    def _copy_one(self, f, nested) -> bool:
        """Where no local function can be inlined as it is: one called from several places, none
        in branches that join (a helper's backpropagator called twice), is copied, a copy per
        call, each defined where it is (so each reads what it did), for Inline to inline in
        turn -- if the copies stay small (``COPIED`` nodes in all). False where none is."""
        size = sum(1 for _ in A.walk(f))
        for d in nested:
            mentions = [n for n in A.walk(f) if isinstance(n, A.Name) and n.id == d.name]
            if len(mentions) < 2 or any(A.is_name(n, d.name) for n in A.walk(d)):
                continue
            parents = parents_of(f)
            if any(
                not (isinstance(parents[id(n)], A.Call) and parents[id(n)].func is n)
                for n in mentions
            ):
                continue
            if size + (len(mentions) - 1) * sum(1 for _ in A.walk(d)) > COPIED:
                continue
            block = next(b for b in statement_lists(f) if any(s is d for s in b))
            at = next(i for i, s in enumerate(block) if s is d)
            copies = []
            for ref in mentions[1:]:
                copy = A.deepcopy(d)
                copy.name = ref.id = self.namer.fresh(d.name)
                copies.append(copy)
            block[at + 1 : at + 1] = copies
            return True
        return False

    def _tails(self, body: list, stmt, d) -> list:
        """``body`` with its ``return``s -- at its end, or at the ends of a final ``if`` -- as
        what the call's statement does with the value."""
        for node in (n for s in body for n in walk_own(s)):
            if isinstance(node, A.Return) and not at_tail(body, node):
                raise self.unstageable("a `return` before the end of a local function", node)
        return body if stmt is None else with_tails(body, stmt)

    def _why_not(self, f, d) -> Unstageable:
        mentions = [n for n in A.walk(f) if isinstance(n, A.Name) and n.id == d.name]
        if any(isinstance(n, A.Name) and n.id == d.name for n in A.walk(d)):
            return self.unstageable("recursion (a local function that calls itself)", d)
        if len(mentions) > 1:
            return self.unstageable(
                f"a local function called from {len(mentions)} places ({d.name})", mentions[-1]
            )
        where = mentions[0] if mentions else d
        calls = [c for c in A.walk(f) if isinstance(c, A.Call) and A.is_name(c.func)]
        if any(c.func.id == self.unit.bp_name and where in c.args for c in calls):
            return self.unstageable(f"recursion ({self.unit.fn.__name__} calls itself)", where)
        for c in calls:  # (the continuation given to a function of yours not compiled in)
            callee = self.unit.callees.get(c.func.id)
            if callee is not None and any(a is where for a in c.args):
                why = self.unit.not_copied.get(c.func.id, "")
                name = getattr(callee.fn, "__qualname__", c.func.id)
                return self.unstageable(
                    f"a call of `{name}`, not compiled in" + (f": {why}" if why else ""), where
                )
        return self.unstageable(f"a local function used as a value ({d.name})", where)

    # ------------------------------------------------------------------ the seed

    def _seed(self, f) -> None:
        """``t = k(v)`` -> ``value = v; t = seed``; ``return r`` -> ``return value, r``."""
        k = self.unit.cont_name
        names = A.arg_names(f.args)
        if not names or names[0] != k:
            raise self.unstageable("a backpropagator without its continuation", f)
        seed, value = self.namer.fresh("seed"), self.namer.fresh("value")
        f.args.args[0].id = seed
        self._hoist_calls_of(f, k)
        parents = parents_of(f)
        for n in [n for n in A.walk(f) if isinstance(n, A.Name) and n.id == k]:
            call = parents.get(id(n))
            stmt = parents.get(id(call))
            if not (
                isinstance(call, A.Call)
                and call.func is n
                and len(call.args) == 1
                and not call.keywords
                and isinstance(stmt, (A.Assign, A.Expr, A.Return))
                and stmt.value is call
            ):
                raise self.unstageable("the continuation used other than called once", n)
            first = A.copy_location(A.assign(A.store(value), call.args[0]), stmt)
            stmt.value = A.name(seed)
            replace(f, stmt, [first] if isinstance(stmt, A.Expr) else [first, stmt])
        for node in list(walk_own_statements(f.body)):
            if isinstance(node, A.Return):
                node.value = A.tuple_([A.name(value), node.value or A.const(None)])

    def _hoist_calls_of(self, f, k: str) -> None:
        """``x_bar = x_bar + k(x)`` -> ``k_x = k(x)``, ``x_bar = x_bar + k_x``: a call of the
        continuation inside a statement's expression, on its own before it (so ``_seed`` sees
        ``t = k(v)``). Only where the rest of the expression reads names and constants and the
        call is surely evaluated (not in a conditional expression, a short circuit): the same
        values, in an order nothing observes."""
        for stmt in list(walk_own_statements(f.body)):
            if not isinstance(stmt, (A.Assign, A.AugAssign, A.Return, A.Expr)):
                continue
            if stmt.value is None or not _pure_but_calls_of(stmt.value, k):
                continue
            calls = [
                n
                for n in A.walk(stmt.value)
                if isinstance(n, A.Call) and A.is_name(n.func, k) and n is not stmt.value
            ]
            if not calls or isinstance(stmt, A.Expr) and stmt.value in calls:
                continue
            if isinstance(stmt, A.Assign) and stmt.value in calls:
                continue  # (``t = k(v)`` already)
            before = []
            for call in calls:
                name = self.namer.fresh(f"{k}_{_stem(call.args)}")
                before.append(A.copy_location(A.assign(A.store(name), call), stmt))
                A.replace(stmt, call, A.copy_location(A.name(name), call))
            replace(f, stmt, [*before, stmt])

    def _compiled_checks(self, f) -> None:
        """``check_in_place(x, op, statement, line, held, names, *values, within=c)`` ->
        ``check_in_place_compiled(x, op, held, (*values,), within=c)``: Numba's version takes
        the values as one tuple, and the statement and names only the Python one's message
        needs (where it may refuse, the Python backpropagator runs, and says why)."""
        ctx = self.unit.ctx
        check = ctx.runtime("check_in_place")
        names = [n for n, obj in self.unit.injected.items() if obj is check]
        if not names:
            return
        compiled = self.unit.inject(
            ctx.runtime("check_in_place_compiled"), "check_in_place_compiled"
        )
        for node in A.walk(f):
            if isinstance(node, A.Call) and isinstance(node.func, A.Name) and node.func.id in names:
                if len(node.args) < 6 or any(isinstance(a, A.Starred) for a in node.args):
                    raise self.unstageable("an in-place update's check of another form", node)
                x, op, _statement, _line, held, _names, *values = node.args
                node.func = A.name(compiled)
                node.args = [x, op, held, A.tuple_(values)]
        for n in names:  # (not imported where nothing calls it)
            self.unit.injected.pop(n, None)

    def _numba_spellings(self, f) -> None:
        """The same computation, spelt as Numba compiles it: ``np.matmul(a, b)`` -> ``a @ b``
        (Numba takes the ufunc np.matmul as elementwise), ``np.s_[0, 1:]`` -> ``(0, slice(1,
        None, None))`` (what ``np.s_`` returns: the index itself); and as Python computes it:
        ``math.sqrt(x)`` -> ``math_sqrt(x)``, ``a ** b`` -> ``python_pow(a, b)`` (Numba's give
        nan or inf where Python's raise; the runtime's ``CHECKED_MATH``)."""
        bound = set(A.arg_names(f.args))
        bound |= {
            n.id for n in A.walk(f) if isinstance(n, A.Name) and not isinstance(n.ctx, A.Load)
        }
        ctx = self.unit.ctx
        checked = ctx.runtime("CHECKED_MATH")
        for node in list(A.walk(f)):
            if isinstance(node, A.Call) and len(node.args) == 1 and not node.keywords:
                name = self._math_function(node.func, bound, checked)
                if name is not None and not isinstance(node.args[0], A.Starred):
                    node.func = A.copy_location(
                        A.name(self.unit.inject(checked[name], f"math_{name}")), node.func
                    )
                    continue
            if isinstance(node, A.Call) and self._is(node.func, math.log, bound):
                if len(node.args) == 2 and not node.keywords:  # (a base: CPython divides)
                    if not any(isinstance(a, A.Starred) for a in node.args):
                        log = self.unit.inject(checked["log"], "math_log")
                        num, den = (A.call(A.name(log), [a]) for a in node.args)
                        new = A.binop(num, A.Div(), den)
                        A.replace(f, node, A.copy_location(new, node))
                        continue
            if isinstance(node, A.Call) and self._is(node.func, numpy.log, bound):
                like = self._dtype_of_result_type(node, bound)
                if like is not None:
                    log_as = A.name(self.unit.inject(ctx.runtime("log_as"), "log_as"))
                    new = A.call(log_as, [node.args[0], like])
                    A.replace(f, node, A.copy_location(new, node))
                    continue
            if isinstance(node, (A.BinOp, A.AugAssign)) and isinstance(node.op, A.Pow):
                power = A.name(self.unit.inject(ctx.runtime("python_pow"), "python_pow"))
                if isinstance(node, A.BinOp):
                    call = A.call(power, [node.left, node.right])
                    A.replace(f, node, A.copy_location(call, node))
                elif isinstance(node.target, A.Name):
                    base = A.name(node.target.id)
                    call = A.copy_location(A.call(power, [base, node.value]), node)
                    A.replace(f, node, A.copy_location(A.assign(node.target, call), node))
                continue
            if isinstance(node, A.Call) and self._is(node.func, numpy.matmul, bound):
                if len(node.args) == 2 and not node.keywords:
                    if not any(isinstance(a, A.Starred) for a in node.args):
                        new = A.binop(node.args[0], A.MatMult(), node.args[1])
                        A.replace(f, node, A.copy_location(new, node))
            elif isinstance(node, A.Subscript) and self._is(node.value, numpy.s_, bound):
                if not self._is(A.name("slice"), builtins.slice, bound):
                    raise self.unstageable("`np.s_` where `slice` is not the built-in", node)
                A.replace(f, node, A.copy_location(_index_value(node.slice), node))

    def _dtype_of_result_type(self, node, bound):
        """``like`` where the call ``node`` is ``f(x, dtype=np.result_type(like))``, else None."""
        if len(node.args) != 1 or isinstance(node.args[0], A.Starred) or len(node.keywords) != 1:
            return None
        k = node.keywords[0]
        v = k.value
        if k.arg != "dtype" or not (isinstance(v, A.Call) and len(v.args) == 1 and not v.keywords):
            return None
        if isinstance(v.args[0], A.Starred) or not self._is(v.func, numpy.result_type, bound):
            return None
        return v.args[0]

    def _math_function(self, node, bound, checked) -> str | None:
        """The name of the function of ``math`` whose result Python checks (``checked``, the
        runtime's table) that ``node`` names, or None."""
        value = self._named(node, bound)
        name = getattr(value, "__name__", None)
        if name not in checked or value is None:
            return None
        return name if getattr(math, name, None) is value else None

    def _is(self, node, obj, bound) -> bool:
        """Does the name or dotted name ``node`` (``np.matmul``) refer to ``obj``? (Not where
        its first name is one of ``bound``, the function's own.)"""
        return self._named(node, bound) is obj

    def _named(self, node, bound):
        """What the name or dotted name ``node`` refers to (None: not a name, one of ``bound``,
        or nothing found)."""
        path = A.dotted(node)
        if path is None:
            return None
        first, *attrs = path.split(".")
        if first in bound:
            return None
        found, value = self.unit.lookup(first)
        if not found:
            return None
        for a in attrs:
            value = getattr(value, a, None)
        return value

    def _attribute_data(self, f) -> None:
        """``helpers.K`` -> ``helpers_K``, a parameter read at each call
        (``unit.staged_attributes``): data an attribute of a module of yours holds, which Numba
        would freeze as a constant -- in its cache too, across processes. (A library's
        constants, ``np.pi``, stay: they do not change.)"""
        bound = set(A.arg_names(f.args))
        bound |= {
            n.id for n in A.walk(f) if isinstance(n, A.Name) and not isinstance(n.ctx, A.Load)
        }
        parents = parents_of(f)
        for node in list(A.walk(f)):
            if not isinstance(node, A.Attribute) or isinstance(parents.get(id(node)), A.Attribute):
                continue  # (the outermost of a chain)
            path = A.dotted(node)
            if path is None or not isinstance(node.ctx, A.Load):
                continue
            root, *attrs = path.split(".")
            if root in bound:
                continue
            found, value = self.unit.lookup(root)
            if not found or not isinstance(value, types.ModuleType):
                continue
            if value.__name__.split(".")[0] in LIBRARIES:
                continue
            try:
                for a in attrs:
                    value = getattr(value, a)
            except AttributeError:
                continue
            if isinstance(value, (types.ModuleType, type)) or callable(value):
                continue
            name = self.unit.staged_attributes_inverse.get(path)
            if name is None:
                name = self.namer.fresh(path.replace(".", "_"))
                self.unit.staged_attributes[name] = (root, tuple(attrs))
                self.unit.staged_attributes_inverse[path] = name
            A.replace(f, node, A.copy_location(A.name(name), node))

    def _data_names(self, f) -> list[str]:
        """Free names of ``f`` that hold data (not a module or a function): parameters."""
        bound = set(A.arg_names(f.args))
        for n in A.walk(f):
            if isinstance(n, A.Name) and not isinstance(n.ctx, A.Load):
                bound.add(n.id)
        out = []
        for n in A.walk(f):
            if isinstance(n, A.Name) and n.id not in bound and n.id not in out:
                if n.id in self.unit.staged_attributes:
                    out.append(n.id)
                    continue
                if n.id in self.unit.callees:
                    raise self.unstageable(f"a call of a helper's backpropagator ({n.id})", n)
                found, obj = self.unit.lookup(n.id)
                if not found:
                    continue
                if isinstance(obj, types.ModuleType) or callable(obj):
                    continue
                out.append(n.id)
        return sorted(out)

    def unstageable(self, what: str, node) -> Unstageable:
        err = self.unit.error(f"not compiled by Numba: {what}", node)
        out = Unstageable(
            err.message,
            filename=err.filename,
            lineno=err.lineno,
            col=err.col,
            source_line=(err.text or "").rstrip("\n") or None,
        )
        out.what = what
        return out


# Modules whose data (``np.pi``, ``math.inf``, ``np.newaxis``) Numba may freeze: constants.
LIBRARIES = frozenset({"numpy", "math", "cmath", "operator", "builtins"})


def _pure_but_calls_of(node, k: str) -> bool:
    """Is ``node`` names, constants, operators, subscripts, tuples -- and calls of ``k`` with
    such arguments, none of them under a conditional expression or a short circuit?"""
    for n in A.walk(node):
        if isinstance(n, (A.IfExp, A.BoolOp, A.Lambda, A.NamedExpr)):
            return False
        if isinstance(n, A.Call) and not (
            A.is_name(n.func, k) and len(n.args) == 1 and not n.keywords
        ):
            return False
    return True


def _stem(args) -> str:
    """A name's stem from a call's one argument: ``x`` for ``k(x)``, ``v`` otherwise."""
    return args[0].id if args and isinstance(args[0], A.Name) else "v"


def _calls(node) -> bool:
    return any(isinstance(n, A.Call) for n in A.walk(node))


def _literal(node) -> bool:
    """A constant, a negated one, or a tuple of those (``axes=(0, 1)``): the same value wherever
    it is written again, which no list or dict default is (one object, shared by the calls)."""
    if isinstance(node, A.Constant):
        return True
    if isinstance(node, A.UnaryOp) and isinstance(node.op, (A.USub, A.UAdd)):
        return _literal(node.operand)
    return isinstance(node, A.Tuple) and all(_literal(e) for e in node.elts)


def _constant_raise(node) -> bool:
    """``raise E`` or ``raise E("message", ...)`` of constants, ``E`` a name or an attribute
    (``np.linalg.LinAlgError``): what Numba compiles. Where it is raised, the Python
    backpropagator runs again and raises the error with its own message."""
    exc = node.exc
    if node.cause is not None or exc is None:
        return False
    if isinstance(exc, A.Call):
        if exc.keywords or not all(_literal(a) for a in exc.args):
            return False
        exc = exc.func
    return A.dotted(exc) is not None


def _raised_as_a_constant(node) -> None:
    """``raise E(f"... {x}")`` (or ``raise make_error(x) from e``) as ``raise E`` (``raise
    Exception``): where Numba raises it, the Python backpropagator runs again and raises the
    function's own exception, with its message -- compiled code need only stop there."""
    exc = node.exc.func if isinstance(node.exc, A.Call) else node.exc
    node.exc = exc if A.dotted(exc) is not None else A.name("Exception")
    node.cause = None


def _index_value(index):
    """A subscript's index as a value: ``1:`` -> ``slice(1, None, None)``, in a tuple too."""
    if isinstance(index, A.Tuple):
        return A.tuple_(_index_value(e) for e in index.elts)
    if isinstance(index, A.Slice):
        parts = (index.lower, index.upper, index.step)
        return A.call("slice", [A.const(None) if p is None else p for p in parts])
    return index
