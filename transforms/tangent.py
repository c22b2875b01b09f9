"""After Tangent, every active statement is followed by the statement that computes its tangent.

Forward mode. A tangent travels with its value: ``y = a * b`` on active values becomes ::

    y = a * b
    y_dot = a_dot * b + a * b_dot     # the tangent rule of `*`, one term per active operand

and a transformed function ``f_jvp(x_dot, w_dot, x, w, n)`` takes the tangents of its active
parameters first, then its own parameters, and returns ``(result, result_dot)``. A call of a
function of yours calls its ``_jvp`` with the arguments' tangents; a loop is a local function like
any other, its carried values' tangents parameters like any other; a closure reads the tangents of
what it captures as it reads the values. No continuation is needed: nothing runs backward.

A tangent is never absent on the differentiated path: where an active variable is assigned a
value that does not depend on the inputs (``total = 0.0``), its tangent is that value's zero, of
the same structure (``tangent_zeros``: zeros for arrays, a list of zeros for a list). Containers'
tangents are containers of the same shape: ``xs.append(h)`` appends ``h_dot`` to ``xs_dot``.
"""

from __future__ import annotations

import inspect

from . import anno, hints
from . import astlib as A
from .activity import MUTATORS, RET, flow_operands, spreads
from .context import Rule
from .fresh import fresh_variables, has_stores
from .kinds import is_number
from .naming import own_name
from .shift_reset import (
    _hole,
    array_store,
    callables_key,
    callee_check,
    check_effect,
    compound_index_names,
    data_method,
    growable_guard,
    guard_attribute_read,
    hands_active,
    held_by_caller,
    in_place,
    iterator_kept,
    makes_an_iterator,
    may_change_active,
    mutation_guard,
    plain_callee,
    python_in_place,
    receiver_method,
    rule_for,
    signature_of,
    through_callee,
    through_method,
    transformed_local,
    without_calls,
)
from .templates import instantiate, parameters
from .unit import NUMBER, NUMERIC, UNKNOWN, Unit, kinds_key


class Tangent:
    name = "tangent"
    invariant = (
        "each active statement is followed by its tangent; functions return (value, tangent)"
    )

    def run(self, unit: Unit) -> None:
        self.unit = unit
        self.ctx = unit.ctx
        self.namer = unit.namer
        self.defs = {
            anno.getanno(n, anno.DEF_KEY): n
            for n in A.walk(unit.tree)
            if isinstance(n, A.FunctionDef) and anno.hasanno(n, anno.DEF_KEY)
        }
        for info in unit.locals.values():
            if info.transformed:
                info.bp_name = self.namer.jvp(info.name)
        fdef = unit.tree
        params = A.arg_names(fdef.args)
        wrt = [p for p in unit.active if p in params]
        self.fresh = fresh_variables(unit) if has_stores(unit.tree) else {}
        self.from_fields: set[str] = set()  # names bound to an attribute's value (``a.items``)
        unit.tree = self.function(fdef, "", unit.bp_name, wrt)

    # ------------------------------------------------------------------ functions

    def function(self, fdef, key: str, name: str, wrt):
        """``def name(*tangents of wrt, *params)``, returning ``(result, result_dot)``."""
        saved = [getattr(self, a, None) for a in ("active", "kinds", "returns_active", "key")]
        self.key = key
        self.active = self.unit.active_by_scope[key]
        self.kinds = self.unit.kinds.get(key, {})
        self.returns_active = (key, RET) in getattr(self.unit, "active_vars", set())
        params = A.arg_names(fdef.args)
        optional = _optional_params(fdef.args)
        prologue = []
        for p in wrt:
            if p in optional:  # left to its default by a caller: it has no tangent yet
                fill = A.call(self.runtime("tangent_or_zeros"), [A.name(self.dot(p)), A.name(p)])
                prologue.append(self.loc(A.assign(self.dot(p), fill), fdef))
        for p in params:
            if p in self.active and p not in wrt:  # not differentiated, but assigned active values
                prologue.append(self.loc(A.assign(self.dot(p), self.zeros(A.name(p))), fdef))
        body = self.block(fdef.body)
        new_body = [s for s in body if isinstance(s, A.Nonlocal)]
        new_body += prologue + [s for s in body if not isinstance(s, A.Nonlocal)]
        args = A.deepcopy(fdef.args)
        dots = [A.name(self.dot(p), "param") for p in wrt]
        if args.posonlyargs:
            args.posonlyargs = dots + args.posonlyargs
        else:
            args.args = dots + args.args
        new = A.copy_location(A.function(name, args, new_body or [A.Pass()]), fdef)
        self.active, self.kinds, self.returns_active, self.key = saved
        return new

    def local_function(self, fdef) -> list:
        info = self.unit.locals[anno.getanno(fdef, anno.DEF_KEY)]
        if not info.transformed:
            return [fdef]
        key = anno.getanno(fdef, anno.DEF_KEY)
        new = self.function(fdef, key, info.bp_name, list(info.active))
        anno.setanno(new, anno.DEF_KEY, key)
        out = [new]
        if info.escapes:  # used as a value: a callable that also carries its tangent function
            closure = self.runtime("Closure")
            active = A.tuple_([A.const(p) for p in info.active])
            value = A.call(closure, [], {"jvp": A.name(info.bp_name), "active": active})
            out.append(self.loc(A.assign(fdef.name, value), fdef))
        return out

    # ------------------------------------------------------------------ statements

    def block(self, stmts) -> list:
        out = []
        for s in stmts:
            if (
                isinstance(s, A.Assign)
                and isinstance(s.value, A.Attribute)
                and isinstance(s.targets[0], A.Name)
            ):
                self.from_fields.add(s.targets[0].id)
            if isinstance(s, A.If):
                s.body = self.block(s.body) or [A.Pass()]
                s.orelse = self.block(s.orelse)
                out.append(s)
            elif isinstance(s, A.FunctionDef):
                out += self.local_function(s)
            elif isinstance(s, A.Nonlocal):
                extra = [self.dot(n) for n in s.names if n in self.active]
                s.names = list(s.names) + extra
                out.append(s)
            elif isinstance(s, A.Return):
                out.append(self.ret(s))
            elif isinstance(s, A.Assign) and in_place(self.unit, s, out, self.kinds):
                out.append(python_in_place(self.unit, s))
            elif isinstance(s, A.Assign) and anno.getanno(s, anno.ACTIVE):
                out += self.active_assign(s)
            elif isinstance(s, A.Assign) and self.local_call(s.value) is not None:
                call = self.call_local(s.value)
                value = A.Subscript(value=call, slice=A.const(0), ctx=A.Load())
                out.append(self.loc(A.Assign(targets=s.targets, value=value), s))
            elif isinstance(s, A.Expr) and self.local_call(s.value) is not None:
                out.append(self.loc(A.expr_stmt(self.call_local(s.value)), s))
            elif isinstance(s, A.Expr) and self.dynamic_effect(s.value):
                before, call = self.through(s.value)
                out += [*before, self.loc(A.expr_stmt(self.call_dynamic(call)), s)]
            elif isinstance(s, A.Assign) and self.dynamic_effect(s.value):
                before, call = self.through(s.value)
                value = A.Subscript(value=self.call_dynamic(call), slice=A.const(0), ctx=A.Load())
                out += [*before, self.loc(A.Assign(targets=s.targets, value=value), s)]
            elif isinstance(s, (A.Assign, A.Expr)) and (
                may_change_active(s.value, self.active, self.unit.ctx)
                or hands_active(self.unit, s.value, self.active)
            ):
                # (see shift/reset: the helper's own check sees the change)
                out.append(self.loc(A.expr_stmt(self.call_user(s.value)), s))
                if isinstance(s, A.Assign):  # the value, as Python computed it
                    value = A.Subscript(value=out[-1].value, slice=A.const(0), ctx=A.Load())
                    out[-1] = self.loc(A.Assign(targets=s.targets, value=value), s)
            elif isinstance(s, A.Expr) and self.growth(s) is not None:
                out += self.growth(s)
            else:
                if isinstance(s, (A.Expr, A.Assign)):
                    self.check_effect(s)
                    guard_attribute_read(self.unit, s, self.key, self.active, self.kinds)
                out.append(s)
        return _tail_calls(out)

    def ret(self, s):
        value = s.value if s.value is not None else A.const(None)
        tangent = self.tan(value)
        if tangent is None:  # the value does not depend on the inputs: its zero, never absent
            tangent = self.zeros(value)
        return self.loc(A.return_(A.tuple_([value, tangent])), s)

    # ------------------------------------------------------------------ active assignments

    def active_assign(self, s) -> list:
        target, value = s.targets[0], s.value
        if isinstance(target, A.Subscript) and isinstance(target.value, A.Name):
            return self.store(s)
        if isinstance(target, (A.Subscript, A.Attribute)):
            raise self.unit.error(
                "assigning into part of a differentiable value (`x.a = v`) is not supported",
                s,
                "build a new value instead",
            )
        targets = [target.id] if isinstance(target, A.Name) else [e.id for e in target.elts]
        kind = anno.getanno(value.func, anno.CALLEE_KIND) if isinstance(value, A.Call) else None
        if kind == "user" or (kind == "local" and self.local_call(value) is not None):
            call = self.call_user(value) if kind == "user" else self.call_local(value)
            return [self.paired(s, targets, call)]
        if kind == "dynamic" or data_method(self.ctx, value, self.active, self.kinds):
            before, value = self.through(value)
            return [*before, self.paired(s, targets, self.call_dynamic(value))]
        if receiver_method(self.unit, self.key, value, self.active, self.kinds):
            before, value = through_method(self.unit, value)
            return [*before, self.paired(s, targets, self.call_dynamic(value))]
        return self.primitive(s, targets, value)

    def paired(self, s, targets, call):
        """``y, y_dot = f_jvp(...)``: a call of a transformed function gives both."""
        if len(targets) != 1:  # pragma: no cover - normalize unpacks results on their own line
            raise self.unit.error("unpack the result of this call on a line of its own", s)
        y = targets[0]
        pair = A.tuple_([A.store(y), A.store(self.dot_or_unused(y))], "store")
        return self.loc(A.assign(pair, call), s)

    def primitive(self, s, targets, value) -> list:
        """The forward statement, then the tangent of what it computed."""
        single = isinstance(s.targets[0], A.Name)
        read = {n.id for n in A.walk(value) if isinstance(n, A.Name)}
        # a target the tangent rule also reads (``x = x * x``) gets a new name for a moment
        values = [self.namer.version(t) if t in read else t for t in targets]
        ans = A.name(values[0]) if single else A.tuple_([A.name(v) for v in values])
        tangent = self.tangent_of(value, ans)
        if tangent is None and values == targets:
            out = [s]
        else:
            fwd_target = (
                A.store(values[0]) if single else A.tuple_([A.store(v) for v in values], "store")
            )
            out = [self.loc(A.assign(fwd_target, value), s)]
        active_targets = [t for t in targets if t in self.active]
        if tangent is None:  # nothing active flowed in: the value's zero
            for t, v in zip(targets, values):
                if t in self.active:
                    out.append(self.loc(A.assign(self.dot(t), self.zeros(A.name(v))), s))
        elif single:
            if is_number(self.kinds.get(targets[0], UNKNOWN)):  # float arithmetic: no broadcasting
                tangent = without_calls(self.unit, tangent, self.ctx.runtime("broadcast_like"))
            out.append(self.loc(A.assign(self.dot(targets[0]), tangent), s))
        elif active_targets:
            dots = A.tuple_([A.store(self.dot_or_unused(t)) for t in targets], "store")
            out.append(self.loc(A.assign(dots, tangent), s))
        for t, v in zip(targets, values):
            if t != v:
                out.append(self.loc(A.assign(t, A.name(v)), s))
        return out

    def store(self, s) -> list:
        """``d[key] = v`` into an active dict or list: the same entry of its tangent gets
        ``v``'s tangent. Into an array the function made: ``shift_reset.array_store``, as in
        reverse mode; other arrays are refused when it runs."""
        target = s.targets[0]
        rebound = array_store(self.unit, s, self.kinds, self.fresh.get(self.key, ((), (), ())))
        if rebound is not None:  # d = stored(d, key, v): its tangent from stored's rules
            # (refused when it runs where another name holds the array and reads it after:
            # the rebinding would not show there -- as in reverse mode)
            guard = mutation_guard(self.unit, s)
            return guard + self.primitive(rebound, [target.value.id], rebound.value)
        if isinstance(target.slice, (A.Slice, A.Tuple)):
            raise self.unit.error(
                "assigning into part of a differentiable value (`x[i] = v`) is not supported "
                "here: into an array the function did not make itself -- a parameter's, a view, "
                "one a nested function reads -- or into a list by slice",
                s,
                "store into an array made here that no nested function reads (`buf = "
                "np.zeros(n)`, then `buf[1:] = v`; a closure may read a copy), or build a new "
                "value: `np.where(mask, v, x)`, `np.concatenate(...)`",
            )
        d, key, v = target.value.id, target.slice, s.value
        store_item = self.runtime("store_item")
        return [
            self.loc(A.expr_stmt(A.call(store_item, [A.name(d), key, v])), s),
            self.loc(
                A.expr_stmt(
                    A.call(store_item, [A.name(self.dot(d)), A.deepcopy(key), self.tan_or_zeros(v)])
                ),
                s,
            ),
        ]

    # ------------------------------------------------------------------ tangents of expressions

    def tangent_of(self, value, ans):
        """The tangent of an A-normal-form right-hand side, or None where it has none."""
        if isinstance(value, A.Name):
            return self.tan(value)
        if isinstance(value, A.Constant):
            return None
        if isinstance(value, A.Call) and makes_an_iterator(self.ctx, value):
            raise iterator_kept(self.unit, value)  # (not consumed where it is made)
        if not flow_operands(self.ctx, value):
            return None  # a comparison, `//`, len, x.shape, ...: no derivative
        if not any(isinstance(n, A.Name) and self.tan(n) is not None for n in A.walk(value)):
            return None  # every operand a constant here (`"-".join(names)`, its target active)
        if isinstance(value, (A.Tuple, A.List)):
            for e in value.elts:
                if isinstance(e, A.Starred):
                    raise self.unit.error(
                        "`*` in a display of differentiable values is not supported", e
                    )
            if not any(self.tan(e) is not None for e in value.elts):
                return None
            elts = [self.tan_or_zeros(e) for e in value.elts]
            return A.List(elts=elts, ctx=A.Load()) if isinstance(value, A.List) else A.tuple_(elts)
        if isinstance(value, A.Dict):
            if any(k is None for k in value.keys):
                raise self.unit.error(
                    "`**` in a dict of differentiable values is not supported", value
                )
            if not any(self.tan(v) is not None for v in value.values):
                return None
            return A.Dict(
                keys=[A.deepcopy(k) for k in value.keys],
                values=[self.tan_or_zeros(v) for v in value.values],
            )
        rule, args, keywords, what = rule_for(self.unit, value, self.kinds)
        try:
            bound = rule.bind(args, keywords)
        except TypeError as exc:
            raise self.unit.error(
                f"{what}: the call does not match what cpsad's derivative rule supports ({exc})",
                value,
                "pass only the arguments listed in docs/reference.md for this function",
            ) from None
        holes = {p: _hole(v) for p, v in bound.items()}
        terms = []
        for p, v in bound.items():
            items = list(v) if isinstance(v, tuple) else [v]  # *args: a tuple of tangents
            if not any(self.tan(x) is not None for x in items):
                continue
            if p in rule.discrete:
                continue  # an index or a shape: no derivative, and none is lost
            if rule.adjoints.get(p) is None:
                raise self.unit.error(
                    f"{what} has no derivative with respect to its argument `{p}`",
                    value,
                    hints.no_derivative(rule.name, p),
                )
            if rule.tangents.get(p) is None:
                raise self.unit.error(
                    f"{what} has no forward-mode (tangent) rule for its argument `{p}`",
                    value,
                    "use reverse mode (cpsad.grad, cpsad.vjp) for this function, or register a "
                    "tangent rule with cpsad.defjvp (see docs/rules.md)",
                )
            t = (
                A.tuple_([self.tan_or_zeros(x) for x in items])
                if isinstance(v, tuple)
                else (self.tan(v))
            )
            terms.append(self.fill(rule, p, holes, t, ans))
        if compound_index_names(value, rule, self.active):  # obj[i, j]: the index is checked
            terms.append(self.fill(rule, "index", holes, A.const(None), ans))
        if not terms:
            return None
        out = terms[0]
        numeric = isinstance(ans, A.Name) and self.kinds.get(ans.id, UNKNOWN) <= NUMERIC
        for t in terms[1:]:  # numbers and arrays add with +; containers entry by entry
            if numeric:
                out = A.binop(out, A.Add(), t)
            else:
                out = A.call(self.runtime("tangent_add"), [out, t])
        return out

    def fill(self, rule: Rule, param: str, holes: dict, t, ans):
        template = rule.tangents[param]
        params = list(parameters(template.fn))
        full = {params[0]: t, "ans": ans, **holes}
        for p in params:
            if p not in full:  # parameters the template has but the call did not bind (defaults)
                default = parameters(template.fn)[p].default
                full[p] = A.const(None if default is inspect.Parameter.empty else default)
        return instantiate(template, full, self.unit.inject)

    # ------------------------------------------------------------------ calls

    def local_call(self, value):
        return transformed_local(self.unit, value)

    def call_local(self, value):
        if spreads(value):  # bound when it runs: as a value (Activity's escape)
            return self.call_dynamic(value)
        info = self.local_call(value)
        key = anno.getanno(value.func, anno.CALLEE)
        sig = signature_of(self.defs[key].args)
        bound = self.bind(sig, value, info.name)
        tangents = [self.param_tangent(sig, bound, p) for p in info.active]
        call = A.call(info.bp_name, [*tangents, *value.args])
        call.keywords = value.keywords
        return A.copy_location(call, value)

    def call_user(self, value):
        if spreads(value):  # f(*args, **kwargs), a decorator's wrapper say: bound at run time
            return self.call_dynamic(value)
        fn = anno.getanno(value.func, anno.CALLEE)
        label = own_name(fn)
        try:
            sig = inspect.signature(fn, follow_wrapped=False)
        except (TypeError, ValueError):  # pragma: no cover - a user function has a signature
            raise self.unit.error(f"cannot read the signature of `{label}`", value) from None
        bound = self.bind(sig, value, label)
        active = []
        for p, v in bound.items():
            items = _items(sig.parameters[p].kind, v)
            if any(isinstance(x, A.Name) and x.id in self.active for x in items):
                active.append(p)
        known = {}
        for p, v in bound.items():
            if isinstance(v, A.Name):
                known[p] = self.kinds.get(v.id, UNKNOWN)
            elif isinstance(v, A.Constant) and type(v.value) in (int, float):
                known[p] = frozenset({NUMBER})
        kinds = kinds_key(known) + held_by_caller(value, bound)
        kinds += callables_key(self.unit, self.key, self.functions, bound)
        name = self.unit.inject_callee(fn, tuple(active), kinds)
        tangents = [self.param_tangent(sig, bound, p) for p in active]
        call = A.call(name, [*tangents, *value.args])
        call.keywords = value.keywords
        return A.copy_location(call, value)

    def bind(self, sig, value, label) -> dict:
        if any(isinstance(a, A.Starred) for a in value.args):
            raise self.unit.error(
                "`*args` in a call of a differentiated function is not supported",
                value,
                "pass the arguments one by one",
            )
        try:
            return dict(sig.bind(*value.args, **{k.arg: k.value for k in value.keywords}).arguments)
        except TypeError as exc:
            raise self.unit.call_error(label, sig, exc, value) from None

    def param_tangent(self, sig, bound, p):
        """The tangent a call passes for parameter ``p``: None where ``p`` keeps its default."""
        if p not in bound:
            return A.const(None)
        kind = sig.parameters[p].kind
        v = bound[p]
        if kind == inspect.Parameter.VAR_POSITIONAL:
            return A.tuple_([self.tan_or_zeros(x) for x in v])
        if kind == inspect.Parameter.VAR_KEYWORD:
            return A.Dict(
                keys=[A.const(k) for k in v], values=[self.tan_or_zeros(x) for x in v.values()]
            )
        return self.tan_or_zeros(v)

    def through(self, value) -> tuple[list, A.Call]:
        """A call through a value, as ``through_callee`` makes it (as Shift/Reset's); in emitted
        code transformed again, ``check_callee`` before it where ``f`` is differentiated."""
        if plain_callee(self.unit, self.key, value):
            return callee_check(self.unit, value, self.active, self.functions), value
        return through_callee(self.unit, value, self.active, self.functions)

    def dynamic_effect(self, call) -> bool:
        """(As shift/reset's: in emitted code transformed again, every call through a value.)"""
        if not (
            isinstance(call, A.Call) and anno.getanno(call.func, anno.CALLEE_KIND) == "dynamic"
        ):
            return False
        if getattr(self.unit, "emitted", False):
            return True
        names = [call.func] + [a.value if isinstance(a, A.Starred) else a for a in call.args]
        return any(isinstance(n, A.Name) and n.id in self.active for n in names)

    def call_dynamic(self, value):
        """``f(a, b)`` with ``f`` a value: ``call_jvp(f, (a_dot, b_dot), a, b)``; ``f(a, *xs)``:
        ``call_jvp(f, (a_dot, *xs_dot), a, *xs)``, zeros for the entries of an ``xs`` that has
        no tangent."""
        dots = []
        for a in value.args:
            if isinstance(a, A.Starred):
                dots.append(A.Starred(value=self.tan_or_zeros(a.value), ctx=A.Load()))
            else:
                dots.append(self.tan(a) or A.const(None))
        tangents = A.tuple_(dots)
        # a keyword argument with a tangent (``fn(x, scale=s)``, a decorator's ``**kwargs``
        # passed on): the tangents of the keywords, by name
        keys, values = [], []
        for kw in value.keywords:
            t = self.tan(kw.value)
            if t is not None:
                keys.append(None if kw.arg is None else A.const(kw.arg))
                values.append(t)
        if keys:
            by_keyword = A.Dict(keys=keys, values=values)
            fn = self.runtime("call_jvp_keywords")
            call = A.call(fn, [value.func, tangents, by_keyword, *value.args])
        else:
            call = A.call(self.runtime("call_jvp"), [value.func, tangents, *value.args])
        call.keywords = value.keywords
        return A.copy_location(call, value)

    # ------------------------------------------------------------------ containers

    def growth(self, s):
        """``xs.append(v)`` on an active list: ``xs_dot.append(v_dot)`` follows."""
        call = s.value
        if not (
            isinstance(call, A.Call)
            and anno.getanno(call.func, anno.CALLEE_KIND) == "method"
            and isinstance(call.func.value, A.Name)
            and call.func.value.id in self.active
            and call.func.attr in MUTATORS
        ):
            return None
        if call.func.attr not in ("append", "extend", "insert", "update") or call.keywords:
            raise self.unit.error(
                f"`.{call.func.attr}()` on a differentiable container is not supported in "
                "forward mode",
                call,
                "build the container with append, extend, insert or update",
            )
        args = list(call.args)
        args[-1] = self.tan_or_zeros(args[-1])  # the value (insert's index stays)
        args[:-1] = [A.deepcopy(a) for a in args[:-1]]
        container = A.name(self.dot(call.func.value.id))
        if call.func.value.id in self.from_fields:
            # an attribute's container (``a.items.append(v)``): an object of a plain class has
            # no tangent to hold the container's -- refused when it runs, not a crash
            line = self.unit.source.line(s.lineno).strip() if self.unit.source else ""
            check = self.runtime("field_container_tangent")
            container = A.call(check, [container, A.const(line), A.const(s.lineno)])
        tangent = A.call(A.attr(container, call.func.attr), args)
        return [*growable_guard(self.unit, s, self.kinds), s, self.loc(A.expr_stmt(tangent), s)]

    def check_effect(self, s) -> None:
        check_effect(self.unit, self.active, s)

    # ------------------------------------------------------------------ pieces

    def dot(self, name: str) -> str:
        return self.namer.tangent(name)

    def dot_or_unused(self, name: str) -> str:
        return self.dot(name) if name in self.active else self.namer.fresh("unused")

    def tan(self, node):
        """The tangent of an operand, or None if it has none (a constant, an inactive value)."""
        if isinstance(node, A.Name) and node.id in self.active and node.id not in self.functions:
            return A.name(self.dot(node.id))
        return None

    def tan_or_zeros(self, node):
        t = self.tan(node)
        return t if t is not None else self.zeros(node)

    def zeros(self, node):
        """The zero tangent of a value: ``0.0`` for a Python number, else ``tangent_zeros(x)``."""
        if isinstance(node, A.Constant):
            if type(node.value) in (int, float):
                return A.const(0.0)
            return A.const(None)
        if isinstance(node, A.Name) and is_number(self.kinds.get(node.id, UNKNOWN)):
            return A.const(0.0)
        if isinstance(node, A.Name) and node.id in self.functions:
            return A.const(None)
        return A.call(self.runtime("tangent_zeros"), [A.deepcopy(node)])

    @property
    def functions(self) -> set[str]:
        """Names of local functions: values with no tangent of their own."""
        return {info.name for info in self.unit.locals.values()}

    def runtime(self, name: str) -> str:
        return self.unit.inject(self.ctx.runtime(name), name)

    @staticmethod
    def loc(node, origin):
        return A.locate(node, origin)

    @staticmethod
    def check(unit: Unit) -> None:
        for node in A.walk(unit.tree):
            if isinstance(node, A.Return):
                pair = isinstance(node.value, A.Tuple) and len(node.value.elts) == 2
                assert pair or isinstance(node.value, A.Call), (  # a pair, or a tail call
                    "a transformed function returns (value, tangent): " + A.to_source(node)
                )


def _tail_calls(stmts) -> list:
    """``y, y_dot = g_jvp(...)`` then ``return y, y_dot``: ``return g_jvp(...)`` (a tail call, so
    a loop's next iteration is one, and Defunctionalize can make the loop a ``while``)."""
    out = list(stmts)
    for i in range(len(out) - 1):
        a, b = out[i], out[i + 1]
        if (
            isinstance(a, A.Assign)
            and isinstance(a.targets[0], A.Tuple)
            and isinstance(a.value, A.Call)
            and isinstance(b, A.Return)
            and isinstance(b.value, A.Tuple)
            and [getattr(e, "id", None) for e in a.targets[0].elts]
            == [getattr(e, "id", None) for e in b.value.elts]
        ):
            out[i] = A.copy_location(A.return_(a.value), a)
            out[i + 1] = None
    return [s for s in out if s is not None]


def _optional_params(args) -> set[str]:
    """Parameters a call may leave out: those with defaults, ``*args`` and ``**kwargs``."""
    positional = [a.id for a in args.posonlyargs] + [a.id for a in args.args]
    out = set(positional[len(positional) - len(args.defaults) :]) if args.defaults else set()
    out |= {a.id for a, d in zip(args.kwonlyargs, args.kw_defaults) if d is not None}
    if args.vararg is not None:
        out.add(args.vararg.id)
    if args.kwarg is not None:
        out.add(args.kwarg.id)
    return out


def _items(kind, v) -> list:
    if kind == inspect.Parameter.VAR_POSITIONAL:
        return list(v)
    if kind == inspect.Parameter.VAR_KEYWORD:
        return list(v.values())
    return [v]
