"""After ShiftReset, each active statement is an explicit ``shift`` carrying its forward op and adjoint rule.

This is the paper's formulation made literal. ``y = a * b`` on active values becomes::

    with shift("y") as k:      # k: the rest of the program, from here to the final reset
        y = a * b              # the forward operation
        y_bar = k(y)           # run the rest; it hands back the adjoint of y
        a_bar += y_bar * b     # the adjoint rule: what flows back to each operand
        b_bar += y_bar * a

A call of a user function is a shift whose body runs the callee in continuation-passing style,
``x_bar += g_bp(k, x)``, and the entry function is marked ``@reset``: grad and vjp seed the
adjoint of its result. Inactive statements are left as they are. Rules come from the context as
templates and are inlined here, so the derivative the emitted code computes is visible from this
stage on. ``+=`` on an adjoint means *accumulate* (an absent adjoint is zero). An operand read
more than once gets one ``+=``, of its parts' sum (``x_bar += y_bar * x + y_bar * x`` for ``y = x
* x``): forward mode sums a tangent's parts before they meet anything else, and so does this.

Errors for what has no derivative -- an unknown function, a method without a rule, storing into
an active array -- are raised here, at the user's line.
"""

from __future__ import annotations

import inspect
import operator as op_module
from dataclasses import dataclass

import numpy

from . import aliasing, anno, hints, shapes
from . import astlib as A
from . import scoping as S
from .activity import (
    RET,
    attribute_read,
    flow_operands,
    in_place_writer,
    read_names,
    spreads,
)
from .context import Default, Rule
from .fresh import fresh_variables, has_stores
from .kinds import is_scalar
from .naming import own_name
from .normalize import in_place_guard
from .resolve import yours
from .templates import instantiate, parameters
from .unit import (
    ARRAY,
    CALLABLES,
    FIELDS,
    NOT_NUMERIC,
    NPSCALAR,
    NUMBER,
    NUMERIC,
    OPAQUE,
    OTHER,
    SEQUENCE,
    UNKNOWN,
    Unit,
    kinds_key,
)


@dataclass
class ShiftInfo:
    binds: list[str]  # the user's names the continuation binds (its parameters)
    values: list[str]  # the names, inside the shift, of the values passed to k
    kind: str  # "primitive" | "call"
    label: str  # what the continuation is named after
    k: str  # the name of the continuation inside the shift's body
    # a call whose callee's result may be active though this code does not use it: the callee's
    # backpropagator reads the adjoint its continuation returns, which must then be zero
    result_read: bool = False


def is_shift(node) -> bool:
    return isinstance(node, A.With) and anno.hasanno(node, anno.SHIFT)


def shift_info(node) -> ShiftInfo:
    return anno.getanno(node, anno.SHIFT)


class ShiftReset:
    name = "shift/reset"
    invariant = (
        "each active primitive is an explicit shift with its adjoint rule; the entry is a reset"
    )

    def run(self, unit: Unit) -> None:
        self.unit = unit
        self.ctx = unit.ctx
        self.active = unit.active_by_scope[""]
        self.kinds = unit.kinds.get("", {})
        self.shapes = unit.shapes.get("", {})
        fdef = unit.tree
        self.key = ""
        # (before any statement becomes a shift: the analysis reads plain statements)
        self.fresh = fresh_variables(unit) if has_stores(unit.tree) else {}
        self.k = unit.cont_name = unit.namer.fresh("k")
        # names of local functions: values with no adjoint of their own
        self.functions = {info.name for info in unit.locals.values()}
        for info in unit.locals.values():
            if info.transformed:
                info.bp_name = unit.namer.backpropagator(info.name)
        fdef.body = self.block(fdef.body)
        if getattr(unit, "is_entry", False):
            fdef.decorator_list = [A.name("reset")]

    # ------------------------------------------------------------------ statements

    def block(self, stmts) -> list:
        out = []
        for s in stmts:
            keep = after = None
            if isinstance(s, (A.Assign, A.Expr)):
                refuse_dispatch(self.unit, s.value)
                keep = anno.getanno(s, anno.KEEP_UNCHANGED)
            if keep:
                before, after = self.keep_unchanged(s, keep)
                out += before
            if isinstance(s, A.If):
                s.body = self.block(s.body)
                s.orelse = self.block(s.orelse)
                out.append(s)
            elif isinstance(s, A.FunctionDef):
                out.append(self.local_function(s))
            elif isinstance(s, A.Assign) and anno.getanno(s, anno.CELL_WRITE):
                out.append(self.cell_write(s) if anno.getanno(s, anno.ACTIVE) else s)
            elif isinstance(s, A.Assign) and in_place(self.unit, s, out, self.kinds):
                out.append(self.python_in_place(s))
            elif isinstance(s, A.Assign) and anno.getanno(s, anno.ACTIVE):
                out += mutation_guard(self.unit, s)
                node = self.shift(s)  # (a list: a store into an array a closure reads)
                out += node if isinstance(node, list) else [node]
            elif isinstance(s, A.Assign) and self.local_call(s.value) is not None:
                out.append(self.local_call_statement(s, s.targets[0]))
            elif isinstance(s, A.Expr) and self.local_call(s.value) is not None:
                out.append(self.local_call_statement(s, None))
            elif isinstance(s, (A.Expr, A.Assign)) and self.dynamic_effect(s):
                t = s.targets[0] if isinstance(s, A.Assign) else None
                name = t.id if isinstance(t, A.Name) else self.unit.namer.fresh("unused")
                body, info = self.dynamic_shift(s, name, s.value)
                out.append(self.make_shift(s, body, info))
            elif isinstance(s, (A.Assign, A.Expr)) and (
                may_change_active(s.value, self.active, self.ctx)
                or hands_active(self.unit, s.value, self.active)
            ):
                # its result unused, a helper that may change a differentiated argument the
                # caller reads after: transformed, so that its own check sees the change; or,
                # in emitted code transformed again, one given the code's own closures
                t = s.targets[0] if isinstance(s, A.Assign) else None
                name = t.id if isinstance(t, A.Name) else self.unit.namer.fresh("unused")
                body, info = self.call_shift(s, name, s.value)
                out.append(self.make_shift(s, body, info))
            elif isinstance(s, A.Expr) and self.container_growth(s) is not None:
                out += mutation_guard(self.unit, s)
                out.append(self.container_growth(s))
            elif isinstance(s, (A.Expr, A.Assign)):
                self.check_effect(s)
                guard_attribute_read(self.unit, s, self.key, self.active, self.kinds)
                out.append(s)
            else:
                out.append(s)
            if after:
                out += after
        return out

    def keep_unchanged(self, s, keep) -> tuple[list, list]:
        """Around a call that may change in place arrays the backward pass reads
        (``anno.KEEP_UNCHANGED``, from Activity): a copy of each before it, and after it a check
        that refuses, when it runs, a change (``kept_copy``, ``check_unchanged``)."""
        before, after = [], []
        for name, message in keep:
            kept = self.unit.namer.fresh(f"{name}_kept")
            copy = self.runtime_call("kept_copy", [A.name(name)])
            check = self.runtime_call("check_unchanged", [A.name(name), A.name(kept)])
            check.args.append(A.const(message))
            before.append(A.copy_location(A.assign(kept, copy), s))
            after.append(A.copy_location(A.expr_stmt(check), s))
        return before, after

    def runtime_call(self, helper: str, args: list):
        """A call of the runtime's ``helper`` (one without a derivative) on ``args``."""
        fn = self.ctx.runtime(helper)
        func = A.name(self.unit.inject(fn, helper))
        anno.setanno(func, anno.CALLEE, fn)
        anno.setanno(func, anno.CALLEE_KIND, "nondiff")
        return A.Call(func=func, args=args, keywords=[])

    def local_function(self, fdef):
        """A function defined inside: its body gets shifts when it has a backpropagator."""
        info = self.unit.locals[anno.getanno(fdef, anno.DEF_KEY)]
        if not info.transformed:
            return fdef
        saved = self.active, self.kinds, self.shapes, self.key
        key = anno.getanno(fdef, anno.DEF_KEY)
        self.active, self.kinds = self.unit.active_by_scope[key], self.unit.kinds.get(key, {})
        self.shapes = self.unit.shapes.get(key, {})
        self.key = key
        fdef.body = self.block(fdef.body)
        self.active, self.kinds, self.shapes, self.key = saved
        return fdef

    def local_call(self, value):
        return transformed_local(self.unit, value)

    def local_call_statement(self, s, target):
        """A call of a transformed local function whose result is not active here.

        If the function changes active values (through nonlocal or a container) the call must run
        in continuation-passing style like any other; otherwise its plain value is all that is
        needed, and ``call_primal`` runs its backpropagator forward only.
        """
        info = self.local_call(s.value)
        if info.effects or self.unit.nested:  # code transformed again: no call_primal, which
            # runs a backpropagator as a value and has no derivative
            name = target.id if isinstance(target, A.Name) else self.unit.namer.fresh("unused")
            if target is not None and not isinstance(target, A.Name):
                raise self.unit.error("unpack the result of this call on a line of its own", s)
            body, shift_info_ = self.call_shift(s, name, s.value)
            node = A.with_(A.call("shift", [A.const(name)]), self.k, body)
            for n in [node, *body]:
                A.copy_location(n, s)
                n.lineno = s.lineno
            anno.setanno(node, anno.SHIFT, shift_info_)
            return node
        primal = A.call(
            self.unit.inject(self.ctx.runtime("call_primal"), "call_primal"),
            [A.name(info.bp_name), *s.value.args],
        )
        primal.keywords = s.value.keywords
        A.copy_location(primal, s.value)
        s.value = primal
        return s

    def check_effect(self, s) -> None:
        check_effect(self.unit, self.active, s)

    # ------------------------------------------------------------------ calls known at run time

    def dynamic_effect(self, s) -> bool:
        """``f(x)`` as a statement, with ``f`` or ``x`` active: ``f`` may change active state.
        In emitted code transformed again, whatever is active: its function values are the
        code's own continuations and closures, which change its adjoints (``h = bp_of(k)``
        then ``h(seed)``, with ``k = Closure(g_bp)``: nothing active, yet ``g_bp`` adds to
        ``x_bar``)."""
        call = s.value
        if not (
            isinstance(call, A.Call) and anno.getanno(call.func, anno.CALLEE_KIND) == "dynamic"
        ):
            return False
        if getattr(self.unit, "emitted", False):
            return True
        names = [call.func] + [a.value if isinstance(a, A.Starred) else a for a in call.args]
        return any(isinstance(n, A.Name) and n.id in self.active for n in names)

    def dynamic_shift(self, s, target: str, value):
        """``y = f(a, b)`` with ``f`` a value: ``a_r, b_r = call_bp(f, k, a, b)``.

        The runtime dispatch finds out what ``f`` is and returns one adjoint per positional
        argument; what ``f`` closes over gets its adjoint inside ``f``'s own backpropagator.
        Where ``f`` itself is differentiated, ``call_bp(f_fn, k, f, a, b)`` with ``f_fn =
        callee_function(f)`` (``through_callee``): ``f`` gets an adjoint too, its fields' where it
        is an object of yours with ``__call__``.
        """
        if plain_callee(self.unit, self.key, value):
            body, info = self._dynamic_shift(s, target, value)
            return callee_check(self.unit, value, self.active, self.functions) + body, info
        before, value = through_callee(self.unit, value, self.active, self.functions)
        body, info = self._dynamic_shift(s, target, value)
        return before + body, info

    def _dynamic_shift(self, s, target: str, value):
        unit = self.unit
        # a differentiated keyword argument (``fn(x, scale=s)``, a decorator's ``**kwargs``
        # passed on): the dispatch returns the keywords' adjoints too
        keywords = any(
            isinstance(kw.value, A.Name) and self.has_adjoint(kw.value.id) for kw in value.keywords
        )
        name = "call_bp_keywords" if keywords else "call_bp"
        dispatch = unit.inject(self.ctx.runtime(name), name)
        call = A.call(dispatch, [value.func, A.name(self.k), *value.args])
        call.keywords = value.keywords
        A.copy_location(call, value)
        label = value.func.id if isinstance(value.func, A.Name) else "call"
        info = ShiftInfo([target], [], "call", label=label, k=self.k, result_read=True)
        flows = [
            (i, a.id)
            for i, a in enumerate(value.args)
            if isinstance(a, A.Name) and a.id in self.active and a.id not in self.functions
        ]
        if keywords or any(isinstance(a, A.Starred) for a in value.args):
            return self.spread_shift(call, value, info, keywords)
        if not flows:
            return [A.expr_stmt(call)], info
        namer = unit.namer
        got = {i: namer.fresh(f"{name}_bar_{label}") for i, name in flows}
        names = [got.get(i, "_") for i in range(len(value.args))]
        if "_" in names:
            names = [n if n != "_" else namer.fresh("unused") for n in names]
        target_node = A.tuple_([A.store(n) for n in names], "store")
        body = [A.assign(target_node, call)]
        for i, name in flows:
            body.append(
                A.AugAssign(target=A.store(namer.adjoint(name)), op=A.Add(), value=A.name(got[i]))
            )
        return body, info

    def has_adjoint(self, name: str) -> bool:
        """Does the value of ``name`` get an adjoint? Active, and not a function (what a
        function closes over gets its adjoints inside its backpropagator)."""
        return name in self.active and name not in self.functions

    def spread_shift(self, call, value, info, keywords=False):
        """``f(a, *xs)`` through the dispatch: one adjoint per argument, ``xs``'s from its
        place on (``entries_adjoint``). An argument after ``*xs`` has no fixed place. With
        ``keywords`` (``call_bp_keywords``), the keywords' adjoints by name, ``**kw``'s
        those of its keys (``keywords_adjoint``)."""
        unit = self.unit
        got = unit.namer.fresh("adjoints")
        body = [A.assign(got, call)]
        by_keyword = None
        if keywords:
            by_keyword = A.Subscript(value=A.name(got), slice=A.const(1), ctx=A.Load())
            for kw in value.keywords:
                if not (isinstance(kw.value, A.Name) and self.has_adjoint(kw.value.id)):
                    continue
                if kw.arg is None:
                    fn = unit.inject(self.ctx.runtime("keywords_adjoint"), "keywords_adjoint")
                    part = A.call(fn, [A.deepcopy(by_keyword), A.name(kw.value.id)])
                else:
                    part = A.Subscript(
                        value=A.deepcopy(by_keyword), slice=A.const(kw.arg), ctx=A.Load()
                    )
                target = A.store(unit.namer.adjoint(kw.value.id))
                body.append(A.AugAssign(target=target, op=A.Add(), value=part))
            got_positional = unit.namer.fresh("adjoints")
            body.insert(
                1,
                A.assign(
                    got_positional, A.Subscript(value=A.name(got), slice=A.const(0), ctx=A.Load())
                ),
            )
            got = got_positional
        starred = False
        for i, a in enumerate(value.args):
            node = a.value if isinstance(a, A.Starred) else a
            active = isinstance(node, A.Name) and node.id in self.active
            active = active and node.id not in self.functions
            if active and (starred or (isinstance(a, A.Starred) and i < len(value.args) - 1)):
                raise unit.error(
                    "a differentiable argument after `*args` in a call is not supported",
                    node,
                    "pass it before the starred argument",
                )
            starred = starred or isinstance(a, A.Starred)
            if not active:
                continue
            if isinstance(a, A.Starred):
                fn = unit.inject(self.ctx.runtime("entries_adjoint"), "entries_adjoint")
                part = A.call(fn, [A.name(got), A.const(i), A.name(node.id)])
            else:
                part = A.Subscript(value=A.name(got), slice=A.const(i), ctx=A.Load())
            target = A.store(unit.namer.adjoint(node.id))
            body.append(A.AugAssign(target=target, op=A.Add(), value=part))
        return body, info

    def python_in_place(self, s):
        return python_in_place(self.unit, s)

    # ------------------------------------------------------------------ cells

    def cell_write(self, s):
        """``c = v`` into a cell variable: a shift that binds nothing (the cell holds the value).

        Backward, the cell's adjoint so far belongs to this value; from here back it belongs to
        the value the cell held before, so it starts again from nothing.
        """
        c, v = s.targets[0].id, s.value
        namer = self.unit.namer
        c_bar = namer.adjoint(c)
        body = [A.assign(c, v), A.expr_stmt(A.call(self.k, []))]
        if isinstance(v, A.Name) and self.has_adjoint(v.id):
            # an absent adjoint stays absent: the rules of what made ``v`` are skipped
            body.append(
                A.AugAssign(target=A.store(namer.adjoint(v.id)), op=A.Add(), value=A.name(c_bar))
            )
        fresh = 0.0 if self.kinds.get(c, UNKNOWN) == {NUMBER} else None  # as cps starts it
        body.append(A.assign(c_bar, A.const(fresh)))
        return self.make_shift(s, body, ShiftInfo([], [], "primitive", c, self.k))

    # ------------------------------------------------------------------ containers

    def container_growth(self, s):
        """``xs.append(v)`` / ``xs.extend(vs)`` on an active list: a shift that binds nothing.

        Forward it records where the new entries go; backward it hands their adjoints (entries of
        the list's adjoint, which everything that read the list has filled by then) to ``v``.
        """
        call = s.value
        if not (
            isinstance(call, A.Call)
            and anno.getanno(call.func, anno.CALLEE_KIND) == "method"
            and call.func.attr in ("append", "extend")
            and isinstance(call.func.value, A.Name)
            and call.func.value.id in self.active
            and len(call.args) == 1
            and not call.keywords
        ):
            return None
        lst = call.func.value.id
        v = call.args[0]
        namer = self.unit.namer
        where = namer.fresh("position")
        length = A.call("len", [A.name(lst)])
        anno.setanno(length.func, anno.CALLEE_KIND, "nondiff")
        body = [A.assign(where, length), A.expr_stmt(call), A.expr_stmt(A.call(self.k, []))]
        body[:0] = growable_guard(self.unit, s, self.kinds)
        if isinstance(v, A.Name) and self.has_adjoint(v.id):
            helper = "item_adjoint" if call.func.attr == "append" else "entries_adjoint"
            fn = self.unit.inject(self.ctx.runtime(helper), helper)
            contribution = A.call(fn, [A.name(namer.adjoint(lst)), A.name(where), v])
            body.append(
                A.AugAssign(target=A.store(namer.adjoint(v.id)), op=A.Add(), value=contribution)
            )
        return self.make_shift(s, body, ShiftInfo([], [], "primitive", call.func.attr, self.k))

    def store(self, s):
        """``d[key] = v`` into an active dict or list: the entry's old value gets no adjoint from
        what follows, ``v`` gets the entry's adjoint. Into an array the function made, at any
        index: ``array_store``. Other arrays are refused when it runs."""
        target = s.targets[0]
        fresh = self.fresh.get(self.key, ((), (), ()))
        rebound = array_store(self.unit, s, self.kinds, fresh)
        if rebound is not None and rebound.targets[0].id in fresh[2]:
            return self.shared_store(rebound)
        if rebound is not None:
            return self.shift(rebound)
        if not isinstance(target, A.Subscript) or isinstance(target.slice, (A.Slice, A.Tuple)):
            raise self.unit.error(
                "assigning into part of a differentiable value (`x[i] = v`, `x.a = v`) is not "
                "supported here: into an array the function did not make itself -- a "
                "parameter's, a view, one a nested function reads -- or into a list by slice",
                s,
                "store into an array made here that no nested function reads (`buf = "
                "np.zeros(n)`, then `buf[1:] = v`; a closure may read a copy), or build a new "
                "value: `np.where(mask, v, x)`, `np.concatenate(...)`",
            )
        d, key, v = target.value.id, target.slice, s.value
        namer = self.unit.namer
        store_item = self.unit.inject(self.ctx.runtime("store_item"), "store_item")
        call = A.call(store_item, [A.name(d), key, v])
        body = [A.expr_stmt(call), A.expr_stmt(A.call(self.k, []))]
        d_bar = namer.adjoint(d)
        if isinstance(v, A.Name) and self.has_adjoint(v.id):
            fn = self.unit.inject(self.ctx.runtime("item_adjoint"), "item_adjoint")
            contribution = A.call(fn, [A.name(d_bar), A.deepcopy(key), v])
            body.append(
                A.AugAssign(target=A.store(namer.adjoint(v.id)), op=A.Add(), value=contribution)
            )
        without = self.unit.inject(self.ctx.runtime("without"), "without")
        body.append(A.assign(d_bar, A.call(without, [A.name(d_bar), A.deepcopy(key)])))
        return self.make_shift(s, body, ShiftInfo([], [], "primitive", "store", self.k))

    def shared_store(self, rebound) -> list:
        """``d = stored(d, key, v)`` where a nested function reads ``d`` (a cell: Resolve
        counts a store into an entry as an assignment): two shifts, ``stored_1 = stored(d, key,
        v)`` and the cell write ``d = stored_1``, so that the cell itself is rebound -- what the
        nested function reads when it runs -- as Normalize's ``d = zeros`` is (a shift whose
        target is also an operand would bind a new version of the name, which only this scope
        sees)."""
        d = rebound.targets[0].id
        made = self.unit.namer.fresh("stored")
        first = A.assign(made, rebound.value)
        second = A.assign(d, A.name(made))
        for new in (first, second):
            anno.copyanno(rebound, new)
            for n in A.walk(new):
                A.copy_location(n, rebound)
        if d in self.active:
            self.active.add(made)
        self.kinds[made] = self.kinds.get(d, UNKNOWN)
        return [self.shift(first), self.cell_write(second)]

    def make_shift(self, s, body, info) -> A.With:
        node = A.with_(A.call("shift", [A.const(", ".join(info.binds))]), self.k, body)
        # Each statement, and what it holds that has no location, at ``s``: for speed, in one
        # walk from the shift, which meets the statements made here as a walk from each would (a
        # statement with a line is located from itself first: the walk would not enter it).
        for n in body:
            if n.__dict__.get("lineno") is not None:
                A.copy_location(n, s)
        A.copy_location(node, s)
        for n in body:
            n.lineno = s.lineno
        node.lineno = s.lineno
        anno.setanno(node, anno.SHIFT, info)
        return node

    def shift(self, s) -> A.With:
        target = s.targets[0]
        value = s.value
        if isinstance(target, A.Subscript) and isinstance(target.value, A.Name):
            return self.store(s)
        if isinstance(target, (A.Subscript, A.Attribute)):
            raise self.unit.error(
                "assigning into part of a differentiable value (`x[i] = v`, `x.a = v`) is not "
                "supported",
                s,
                "build a new value instead: `np.where(mask, v, x)`, `np.concatenate(...)`, or "
                "collect the parts in a list and call `np.stack`",
            )
        if isinstance(target, A.Name):
            targets = [target.id]
        else:
            targets = [e.id for e in target.elts]
        kind = anno.getanno(value.func, anno.CALLEE_KIND) if isinstance(value, A.Call) else None
        if kind == "user" or (kind == "local" and self.local_call(value) is not None):
            if len(targets) != 1:  # pragma: no cover - normalize unpacks results on their own line
                raise self.unit.error("unpack the result of this call on a line of its own", s)
            body, info = self.call_shift(s, targets[0], value)
        elif kind == "dynamic" or data_method(self.ctx, value, self.active, self.kinds):
            if len(targets) != 1:  # pragma: no cover
                raise self.unit.error("unpack the result of this call on a line of its own", s)
            body, info = self.dynamic_shift(s, targets[0], value)
        elif receiver_method(self.unit, self.key, value, self.active, self.kinds):
            if len(targets) != 1:  # pragma: no cover
                raise self.unit.error("unpack the result of this call on a line of its own", s)
            before, value = through_method(self.unit, value)
            body, info = self.dynamic_shift(s, targets[0], value)
            body = before + body
        else:
            body, info = self.primitive_shift(s, targets, value)
        return self.make_shift(s, body, info)

    def struct_fields_of(self, arguments: dict) -> tuple:
        """The callee's ``FIELDS``: for each argument a struct with fields named as an array's
        attribute -- made here, or an argument of this function that is one -- ``"p.T"``, so
        that the callee reads ``p.T`` as the field (Activity's ``FIELD``)."""
        own = set((self.unit.arg_kinds or {}).get(FIELDS, ())) if self.key == "" else set()
        out = []
        for p, v in arguments.items():
            if not isinstance(v, A.Name):
                continue
            attrs = set(self.unit.struct_fields.get((self.key, v.id), ()))
            attrs |= {f.split(".", 1)[1] for f in own if f.split(".", 1)[0] == v.id}
            out += [f"{p}.{a}" for a in attrs]
        return ((FIELDS, tuple(sorted(out))),) if out else ()

    # ------------------------------------------------------------------ primitives

    def primitive_shift(self, s, targets, value):
        namer = self.unit.namer
        flows, names = flow_operands(self.ctx, value), S.names(value)
        operands = set(flows) | names
        # A forward target that is also an operand needs a new name: the rule reads the old value.
        values = [namer.version(t) if t in operands else t for t in targets]
        bars = [namer.adjoint(v) for v in values]
        binds_active = [t in self.active for t in targets]
        if len(targets) == 1 and isinstance(s.targets[0], A.Name):
            fwd = A.assign(values[0], value)
        else:
            fwd = A.assign(A.tuple_([A.store(v) for v in values], "store"), value)
        k_args = [A.name(v) for v in values]
        active_bars = [b for b, a in zip(bars, binds_active) if a]
        k_call = A.call(self.k, k_args)
        if len(active_bars) == 1:
            k_stmt = A.assign(active_bars[0], k_call)
        elif active_bars:
            k_stmt = A.assign(A.tuple_([A.store(b) for b in active_bars], "store"), k_call)
        else:
            k_stmt = A.expr_stmt(k_call)
        body = [fwd, k_stmt]
        g = {t: A.name(b) for t, b, a in zip(targets, bars, binds_active) if a}
        ans = A.name(values[0])
        body += self.adjoints(s, targets, value, g, ans, flows, names)
        info = ShiftInfo(list(targets), values, "primitive", label=targets[0], k=self.k)
        return body, info

    def adjoints(self, s, targets, value, g, ans, flows, names) -> list:
        """``operand_bar += rule(...)`` for each active operand of ``value`` (``flows`` and
        ``names``: its ``flow_operands`` and ``S.names``, which ``primitive_shift`` read)."""
        if not g:
            return []
        if isinstance(s.targets[0], (A.Tuple, A.List)):
            return self.unpack_adjoints(targets, value, g)
        gname = next(iter(g.values()))
        contributions: list[tuple[str, object]] = []  # (operand name, expression)
        if isinstance(value, A.Name):
            if self.has_adjoint(value.id):
                contributions.append((value.id, A.deepcopy(gname)))
        elif isinstance(value, A.Constant):
            pass
        elif not flows:
            pass  # not differentiable (a comparison, `//`, len, ...): the new value has no past
        elif isinstance(value, (A.Tuple, A.List)):
            rule = self.ctx.operator_rule(A.Tuple)
            for i, e in enumerate(value.elts):
                if isinstance(e, A.Starred):
                    raise self.unit.error(
                        "`*` in a display of differentiable values is not supported", e
                    )
                if isinstance(e, A.Name) and self.has_adjoint(e.id):
                    holes = {"key": A.const(i), "x": e}
                    contributions.append((e.id, self.fill(rule, "x", holes, gname, ans)))
        elif isinstance(value, A.Dict):
            rule = self.ctx.operator_rule(A.Tuple)
            for k, v in zip(value.keys, value.values):
                if k is None:
                    raise self.unit.error(
                        "`**` in a dict of differentiable values is not supported", v
                    )
                if isinstance(v, A.Name) and self.has_adjoint(v.id):
                    holes = {"key": k, "x": v}
                    contributions.append((v.id, self.fill(rule, "x", holes, gname, ans)))
        elif self.active.isdisjoint(names):
            pass  # every operand a constant here (`"-".join(names)`, its target active later)
        else:
            rule, args, keywords, what = self.rule_for(value)
            try:
                bound = rule.bind(args, keywords)
            except TypeError as exc:
                raise self.unit.error(
                    f"{what}: the call does not match what cpsad's derivative rule supports ({exc})",
                    value,
                    "pass only the arguments listed in docs/reference.md for this function",
                ) from None
            holes = {p: _hole(v) for p, v in bound.items()}
            for p, v in bound.items():
                # *items: the rule returns one adjoint per item
                items = list(enumerate(v)) if isinstance(v, tuple) else [(None, v)]
                for j, item in items:
                    if not (isinstance(item, A.Name) and item.id in self.active):
                        continue
                    if p in rule.discrete:
                        continue  # an index or a shape: no derivative, and none is lost
                    if rule.adjoints.get(p) is None:
                        raise self.unit.error(
                            f"{what} has no derivative with respect to its argument `{p}`",
                            value,
                            hints.no_derivative(rule.name, p),
                        )
                    e = self.fill(rule, p, holes, gname, ans)
                    if j is not None:
                        e = A.Subscript(value=e, slice=A.const(j), ctx=A.Load())
                    contributions.append((item.id, e))
            for n in compound_index_names(value, rule, self.active):  # obj[i, j], obj[i:j]
                e = self.fill(rule, "index", {**holes, "index": A.name(n)}, gname, ans)
                contributions.append((n, e))
        if is_scalar(self.kinds.get(targets[0], UNKNOWN)):
            # a scalar result: every operand was a scalar too, nothing was broadcast
            contributions = [(n, self.without_unbroadcast(e)) for n, e in contributions]
        elif isinstance(value, A.BinOp):
            # `x + 1.0`, `1.0 / x`: the result has the shape of x, so x's adjoint needs no sum
            # (unless `*` may repeat a list x: unbroadcast sums its copies)
            for side, other in ((value.left, value.right), (value.right, value.left)):
                if (
                    isinstance(side, A.Name)
                    and not A.is_name(other, side.id)
                    and self.scalar(other)
                    and not (
                        isinstance(value.op, A.Mult)
                        and SEQUENCE in self.kinds.get(side.id, UNKNOWN)
                        and not (isinstance(other, A.Constant) and type(other.value) is float)
                    )
                ):
                    contributions = [
                        (n, self.without_unbroadcast(e) if n == side.id else e)
                        for n, e in contributions
                    ]
        if self.shapes and matrices(value, self.shape):
            # staged at shapes, a product of two matrices: its rule's case, without the call
            # (x's adjoint g @ y.T comes first, y's x.T @ g second: `x @ x` has both)
            x, y = value.left, value.right
            g = A.deepcopy(gname)
            products = {x.id: A.BinOp(left=g, op=A.MatMult(), right=_transposed(y))}
            second = A.BinOp(left=_transposed(x), op=A.MatMult(), right=A.deepcopy(gname))
            contributions = [
                (n, products.pop(n) if i == 0 and n in products else second if n == y.id else e)
                for i, (n, e) in enumerate(contributions)
            ]
        if self.shapes and elementwise(value):
            # staged at shapes: an operand with the result's shape was not broadcast (Shapes)
            shape = self.shapes.get(targets[0], (None, None))[1]
            if shape is not None:
                contributions = [
                    (n, self.without_unbroadcast(e) if self.shape(n) == shape else e)
                    for n, e in contributions
                ]
        functions = self.functions  # a local function put in a tuple: what it closes over
        # gets its adjoints inside it (it has none of its own)
        parts: dict[str, list] = {}
        for n, e in contributions:
            if n not in functions:
                parts.setdefault(n, []).append(e)
        operator = isinstance(value, (A.BinOp, A.UnaryOp))
        return [
            A.AugAssign(
                target=A.store(self.unit.namer.adjoint(n)), op=A.Add(), value=self.sum(e, operator)
            )
            for n, e in parts.items()
        ]

    def sum(self, parts: list, operator: bool):
        """The adjoint one statement gives an operand it reads more than once (``w - w``,
        ``x * x``, ``np.outer(v, v)``): its parts summed before they are added to the operand's
        adjoint, as forward mode sums the tangent's parts -- so ``w - w`` gives ``w`` exactly
        nothing, whatever ``w``'s adjoint holds already (added one at a time, ``1/3 + 1e23 -
        1e23`` is 0). An ``operator``'s parts are numbers, arrays or ``Sparse`` adjoints; a
        call's or a display's may be None (``acc``)."""
        out = parts[0]
        for e in parts[1:]:
            if operator:
                out = A.BinOp(left=out, op=A.Add(), right=e)
            else:
                out = self.runtime_call("acc", [out, e])
        return out

    def scalar(self, node) -> bool:
        """Is the operand surely a number or a numpy scalar (it broadcasts as shape ())?"""
        if isinstance(node, A.Constant):
            return type(node.value) in (int, float, bool, complex)
        return isinstance(node, A.Name) and is_scalar(self.kinds.get(node.id, UNKNOWN))

    def shape(self, name):
        """The shape of ``name``'s value where Shapes proved one (a call staged at shapes)."""
        v = self.shapes.get(name)
        return v[1] if shapes.is_array(v) else None

    def without_unbroadcast(self, e):
        return without_calls(self.unit, e, self.ctx.runtime("unbroadcast"))

    def unpack_adjoints(self, targets, value, g) -> list:
        if not (isinstance(value, A.Name) and value.id in self.active):
            return []
        rule = self.ctx.operator_rule("unpack")
        parts = A.tuple_([g.get(t, A.const(None)) for t in targets])
        holes = {"x": value}
        e = self.fill(rule, "x", holes, parts, A.const(None))
        return [A.AugAssign(target=A.store(self.unit.namer.adjoint(value.id)), op=A.Add(), value=e)]

    def fill(self, rule: Rule, param: str, holes: dict, g, ans):
        t = rule.adjoints[param]
        full = {"g": g, "ans": ans, **holes}
        params = list(parameters(t.fn))
        missing = [p for p in params if p not in full]
        for p in missing:  # parameters the template has but the call did not bind (defaults)
            default = parameters(t.fn)[p].default
            full[p] = A.const(None if default is inspect.Parameter.empty else default)
        return instantiate(t, full, self.unit.inject)

    def rule_for(self, value):
        return rule_for(self.unit, value, self.kinds)

    # ------------------------------------------------------------------ calls of user functions

    def call_shift(self, s, target: str, value):
        unit = self.unit
        local = self.local_call(value)
        if local is not None:
            fdef_args = self.local_signature(anno.getanno(value.func, anno.CALLEE))
            sig, label = fdef_args, local.name
        else:
            fn = anno.getanno(value.func, anno.CALLEE)
            label = own_name(fn).replace("<lambda>", "lambda")
        if spreads(value):
            # f(*args, **kwargs), a decorator's wrapper say: bound at run time (a local function
            # so called is a value: Activity's escape, a callable carrying its backpropagator)
            return self.dynamic_shift(s, target, value)
        try:
            if local is None:
                sig = inspect.signature(fn, follow_wrapped=False)
            bound = sig.bind(*value.args, **{k.arg: k.value for k in value.keywords})
        except (TypeError, ValueError) as exc:
            raise unit.call_error(label, sig, exc, value) from None
        active_params = []
        flows: list[tuple[str, str, object]] = []  # (param, operand, position or key or None)
        for p, v in bound.arguments.items():
            kind = sig.parameters[p].kind
            if kind == inspect.Parameter.VAR_POSITIONAL:
                items = list(enumerate(v))
            elif kind == inspect.Parameter.VAR_KEYWORD:
                items = list(v.items())
            else:
                items = [(None, v)]
            hit = False
            for key, node in items:
                if isinstance(node, A.Name) and node.id in self.active:
                    flows.append((p, node.id, key))
                    hit = True
            if hit:
                active_params.append(p)
        order = list(sig.parameters)
        active_params.sort(key=order.index)
        if local is not None:  # its backpropagator has one set of active parameters
            active_params = list(local.active)
            flows = [f for f in flows if f[0] in local.active]
            bp = local.bp_name
        else:
            known = {}
            for p, v in bound.arguments.items():
                if isinstance(v, A.Name):
                    known[p] = self.kinds.get(v.id, UNKNOWN)
                elif isinstance(v, A.Constant) and type(v.value) in (int, float):
                    known[p] = frozenset({NUMBER})
            kinds = kinds_key(known) + held_by_caller(value, bound.arguments)
            kinds += self.struct_fields_of(bound.arguments)
            kinds += callables_key(unit, self.key, self.functions, bound.arguments)
            kinds += shapes.callee_key(
                {
                    p: self.shapes.get(v.id)
                    for p, v in bound.arguments.items()
                    if isinstance(v, A.Name)
                }
            )
            bp = unit.inject_callee(fn, tuple(active_params), kinds)
        call = A.call(bp, [A.name(self.k), *value.args])
        call.keywords = value.keywords
        A.copy_location(call, value)
        if local is not None:
            # (its backpropagator adds what its continuation returns to the adjoint of what it
            # returns wherever that is active inside it -- a read even when the result reaches
            # nothing here: `def g12(u): return y`, `g12(0.5)`)
            key = anno.getanno(value.func, anno.CALLEE)
            result_read = (key, RET) in getattr(unit, "active_vars", set()) or (
                local.transformed and local.returns_active
            )
        else:
            result_read = bool(active_params)
        info = ShiftInfo([target], [], "call", label=label, k=self.k, result_read=result_read)
        if not active_params:
            return [A.expr_stmt(call)], info
        namer = unit.namer
        operand_of = {p: operand for p, operand, _ in flows}
        returned = [namer.fresh(f"{operand_of.get(p, p)}_bar_{label}") for p in active_params]
        if len(returned) == 1:
            body = [A.assign(returned[0], call)]
        else:
            body = [A.assign(A.tuple_([A.store(r) for r in returned], "store"), call)]
        by_param = dict(zip(active_params, returned))
        rule = self.ctx.operator_rule(A.Tuple)
        for p, operand, key in flows:
            if operand in self.functions:
                continue  # a local function passed along: what it closes over gets its adjoint
            contribution = A.name(by_param[p])
            if key is not None:
                holes = {"key": A.const(key), "x": A.name(operand)}
                contribution = self.fill(rule, "x", holes, contribution, A.const(None))
            body.append(
                A.AugAssign(target=A.store(namer.adjoint(operand)), op=A.Add(), value=contribution)
            )
        return body, info

    def local_signature(self, key):
        """An ``inspect.Signature`` for a local function (defaults stand in as placeholders)."""
        fdef = self._defs()[key]
        return signature_of(fdef.args)

    def _defs(self):
        if not hasattr(self, "_def_nodes"):
            self._def_nodes = {
                anno.getanno(n, anno.DEF_KEY): n
                for n in A.walk(self.unit.tree)
                if isinstance(n, A.FunctionDef) and anno.hasanno(n, anno.DEF_KEY)
            }
        return self._def_nodes

    @staticmethod
    def check(unit: Unit) -> None:
        for node in A.walk(unit.tree):
            if isinstance(node, A.Assign) and anno.getanno(node, anno.ACTIVE):
                raise AssertionError("active assignment outside a shift: " + A.to_source(node))


def signature_of(args) -> inspect.Signature:
    """The signature a gast ``arguments`` node describes (defaults as placeholders)."""
    P = inspect.Parameter
    params = []
    positional = [(a.id, P.POSITIONAL_ONLY) for a in args.posonlyargs]
    positional += [(a.id, P.POSITIONAL_OR_KEYWORD) for a in args.args]
    first_default = len(positional) - len(args.defaults)
    for i, (name, kind) in enumerate(positional):
        params.append(P(name, kind, default=None if i >= first_default else P.empty))
    if args.vararg is not None:
        params.append(P(args.vararg.id, P.VAR_POSITIONAL))
    for a, d in zip(args.kwonlyargs, args.kw_defaults):
        params.append(P(a.id, P.KEYWORD_ONLY, default=P.empty if d is None else None))
    if args.kwarg is not None:
        params.append(P(args.kwarg.id, P.VAR_KEYWORD))
    return inspect.Signature(params)


def _hole(value):
    """A bound argument as an expression: defaults as constants, ``*args`` as a tuple."""
    if isinstance(value, Default):
        return A.const(value.value)
    if isinstance(value, tuple):
        return A.tuple_(list(value))
    if isinstance(value, dict):
        return A.Dict(keys=[A.const(k) for k in value], values=list(value.values()))
    return value


def _op_example(value):
    """``a * b`` shown with placeholder operands, for messages."""
    if isinstance(value, A.BinOp):
        return A.binop(A.name("a"), value.op, A.name("b"))
    return A.UnaryOp(op=value.op, operand=A.name("a"))


def mutation_guard(unit, s) -> list:
    """Before a differentiated change of a container in place (``xs.append(v)``, ``d[k] =
    v``) that another name may see (aliasing's ``SHARED_MUTATION``): the check that none
    does when it runs -- the adjoints of what it reads there would not reach ``v``, and a store
    into an array, run as a rebinding (``array_store``), would not show there in either mode."""
    found = anno.getanno(s, anno.SHARED_MUTATION)
    u = aliasing.mutation(s) if found is not None else None  # (for speed: most have none)
    if found is None or u is None:
        return []
    return [in_place_guard(unit, s, u, found)]


def array_store(unit, s, kinds, fresh=((), (), ())):
    """``d[key] = v`` with ``d`` an array, as ``d = stored(d, key, v)``: a new array with the
    entries set, the name rebound (JAX's ``d.at[key].set(v)``). No one can tell it from Python's
    change in place where nothing else holds the array -- where something may, aliasing's guard
    (``check_in_place``, put before the statement) refuses it when it runs -- and what the
    backward pass reads of the old array stays as it was. None where ``d`` may be something
    else (a list, a dict: neither its kinds nor how it was made say array), or may hold an array
    someone else made (``fresh``: the function's variables that hold what it made itself, and
    those that hold arrays, ``transforms.fresh``) -- a parameter's, whose caller would not see
    the change, a cell's, a temporary's (``obj.a[i] = v``)."""
    target = s.targets[0]
    if not (isinstance(target, A.Subscript) and isinstance(target.value, A.Name)):
        return None
    d = target.value.id
    made, arrays = fresh[:2]
    if d not in made or (kinds.get(d) != {ARRAY} and d not in arrays):
        return None
    fn = unit.ctx.runtime("stored")
    func = A.name(unit.inject(fn, "stored"))
    anno.setanno(func, anno.CALLEE, fn)
    anno.setanno(func, anno.CALLEE_KIND, "primitive")
    call = A.Call(
        func=func, args=[A.name(d), _index_expr(target.slice, unit), s.value], keywords=[]
    )
    new = A.assign(d, call)
    anno.copyanno(s, new)
    for n in A.walk(new):
        A.copy_location(n, s)
    return new


def _index_expr(idx, unit):
    """A subscript's index as an expression: slices become ``np.s_[...]``."""
    has_slice = any(isinstance(n, A.Slice) for n in A.walk(idx))
    if not has_slice:
        return idx
    np_name = unit.inject(numpy, "np")
    return A.Subscript(value=A.attr(np_name, "s_"), slice=idx, ctx=A.Load())


class Shown:
    """How an error message names an operation: ``template`` with ``node``'s source in it (or
    that of ``example(node)``, made then too). For speed it is rendered only when a message is:
    rendering the source of every operation was a tenth of ShiftReset's time."""

    def __init__(self, template: str, node, example=None):
        self.template = template
        self.node = node
        self.example = example

    def __str__(self) -> str:
        node = self.node if self.example is None else self.example(self.node)
        return self.template.format(A.expr_source(node))

    def __format__(self, spec: str) -> str:
        return format(str(self), spec)


def _sequence_operator(value, kinds: dict) -> str | None:
    """The rule of ``x + y`` where both operands may be lists or tuples (joined, or added:
    decided when it runs), of ``x * y`` where one surely is one (repeated); None for arithmetic."""
    may = [
        (
            kinds.get(v.id, UNKNOWN)
            if isinstance(v, A.Name)
            else frozenset({SEQUENCE if isinstance(v.value, tuple) else NUMBER})
        )  # a constant
        for v in (value.left, value.right)
    ]
    if isinstance(value.op, A.Add) and all(SEQUENCE in k for k in may):
        return "add_any"
    if isinstance(value.op, A.Mult):
        for side, k in zip("xy", may):
            if SEQUENCE in k and not k & NUMERIC:
                return f"repeat_{side}"
    return None


def compound_index_names(value, rule, active) -> list[str]:
    """The differentiable names inside a subscript's index that is not a name alone
    (``obj[i, j]``, ``obj[i:j]``), where the rule checks the index (``getitem_any``)."""
    if not (
        isinstance(value, A.Subscript)
        and not isinstance(value.slice, A.Name)
        and rule.adjoints.get("index") is not None
    ):
        return []
    return sorted({n.id for n in A.walk(value.slice) if isinstance(n, A.Name) and n.id in active})


def _number_power(value, kinds: dict) -> str | None:
    """``x ** y`` of Python numbers: the rule in Python's arithmetic, with numpy's answers where
    Python's ``0.0 ** -0.5`` raises."""
    if isinstance(value.op, A.Pow) and all(
        (
            type(v.value) in (int, float)
            if isinstance(v, A.Constant)
            else _kind(v, kinds) == {NUMBER}
        )
        for v in (value.left, value.right)
    ):
        return "pow_number"
    return None


def _numpy_division(value, kinds: dict) -> str | None:
    """``x / y`` where ``x`` may be a numpy value and ``y`` a Python number: the adjoint's
    ``g / y`` is numpy's division, as the forward one was -- ``g`` may be a Python float (the
    value went through ``float()`` or ``math``; a tangent of zero, in code differentiated again),
    whose ``/ 0`` raises. Python numbers divided (the forward division raises first), numpy
    divisors and nonzero constants keep ``/``."""
    if not isinstance(value.op, A.Div):
        return None
    x, y = value.left, value.right
    if isinstance(y, A.Constant):
        if type(y.value) not in (int, float) or y.value != 0:
            return None  # a divisor that is not zero
    elif NUMBER not in _kind(y, kinds):
        return None
    if isinstance(x, A.Constant) or not _kind(x, kinds) & NUMPY:
        return None
    return "div_numpy"


def _power(value, kinds: dict) -> str | None:
    """``x ** y``: of Python numbers ``pow_number``; for a constant ``y >= 1`` -- ``x ** 2`` --
    or a nonzero one and a numpy ``x``, the plain ``y x^(y-1)``, which cannot raise (a Python
    float's ``x^(y-1)`` is no larger than ``x^y`` or 1); elsewhere ``pow_any``, with
    ``power_slope``: 0 for ``y == 0``, and numpy's answers where Python's arithmetic raises."""
    if not isinstance(value.op, A.Pow):
        return None
    if _number_power(value, kinds):
        return "pow_number"
    y = value.right
    if isinstance(y, A.Constant) and type(y.value) in (int, float) and y.value != 0:
        kx = _kind(value.left, kinds)
        if y.value >= 1 or (kx != UNKNOWN and kx <= NUMPY):
            return None
    return "pow_any"


NUMPY = frozenset({ARRAY, NPSCALAR})


def _kind(node, kinds: dict):
    return kinds.get(node.id, UNKNOWN) if isinstance(node, A.Name) else UNKNOWN


DICT_VIEWS = ("values", "items", "keys")  # a dict's methods that return a view


def rule_for(unit, value, kinds: dict):
    """The rule, argument nodes and a description of an active operation (``str`` or ``Shown``);
    ``kinds``: what the names of its scope may hold."""
    ctx = unit.ctx
    attribute = attribute_read(value)
    if attribute is not None:  # getattr(x, "T") is x.T
        value = attribute
    elif isinstance(value, A.Call) and anno.getanno(value.func, anno.CALLEE) is getattr:
        raise unit.error(
            "`getattr` of a differentiable value has a derivative only for a name that is a "
            "constant string (it reads that attribute, with that attribute's rule)",
            value,
            'write the attribute, `x.T`, or `getattr(x, "T")`',
        )
    if isinstance(value, (A.BinOp, A.UnaryOp)):
        op = (
            _sequence_operator(value, kinds)
            or _power(value, kinds)
            or _numpy_division(value, kinds)
            if isinstance(value, A.BinOp)
            else None
        )
        rule = ctx.operator_rule(op or type(value.op))
        args = [value.left, value.right] if isinstance(value, A.BinOp) else [value.operand]
        what = Shown("the operator `{}`", value, _op_example)
        if rule is None:
            raise unit.error(f"{what} has no derivative rule", value)
        return rule, args, {}, what
    if isinstance(value, A.Attribute):
        rule = ctx.attribute_rule(value.attr)
        nondiff = ctx.is_nondiff_attribute(value.attr)
        if (rule is not None or nondiff) and (
            anno.getanno(value, anno.FIELD)
            or (
                rule is not None
                and _kind(value.value, kinds) & {OTHER, SEQUENCE}
                and not unit.staged  # (code staged for Numba holds no struct)
            )
        ):
            # a struct's field named as an array's attribute (``params.T``, ``dist.shape``:
            # Activity's ``FIELD``), or ``.T`` of a value that may be no array (a struct with a
            # field ``T`` no analysis saw: a helper's result): a field or an array's attribute,
            # decided when it runs (``runtime.attribute``)
            attribute = ctx.runtime("attribute")
            return ctx.rule(attribute), [value.value, A.const(value.attr)], {}, f"`.{value.attr}`"
        if rule is None and not nondiff:
            # a field of a namedtuple, a dataclass, a registered pytree (refused when it runs
            # for anything else): ``field(obj, "name")``'s rule
            field = ctx.runtime("field")
            return ctx.rule(field), [value.value, A.const(value.attr)], {}, f"`.{value.attr}`"
        if rule is None:
            raise unit.error(
                f"the attribute `.{value.attr}` of a differentiable value has no derivative rule",
                value,
                hints.attribute(value.attr),
            )
        return rule, [value.value], {}, f"`.{value.attr}`"
    if isinstance(value, A.Subscript):
        rule = ctx.operator_rule(A.Subscript)
        if OTHER in _kind(value.value, kinds) and any(
            isinstance(n, A.Name) for n in A.walk(value.slice)
        ):  # an object of a class of yours may compute with the index: checked when it runs
            rule = ctx.operator_rule("getitem_any") or rule
        return rule, [value.value, _index_expr(value.slice, unit)], {}, "indexing"
    if isinstance(value, A.Call):
        kind = anno.getanno(value.func, anno.CALLEE_KIND)
        keywords = {k.arg: k.value for k in value.keywords}
        if any(isinstance(a, A.Starred) for a in value.args):
            raise unit.error(
                "`*args` in a call on differentiable values is not supported",
                value,
                "pass the arguments one by one",
            )
        if kind == "primitive":
            rule = ctx.rule(anno.getanno(value.func, anno.CALLEE))
            return rule, list(value.args), keywords, Shown("`{}`", value.func)
        if kind == "method":
            rule = ctx.method_rule(value.func.attr)
            if rule is None and value.func.attr in DICT_VIEWS and not value.args and not keywords:
                # a dict's view, as a value (``vals = d.values()``; a ``for`` loop over one reads
                # its entries by key: Desugar): the list of its entries (``runtime.dict_view``)
                view = ctx.runtime("dict_view")
                args = [value.func.value, A.const(value.func.attr)]
                return ctx.rule(view), args, {}, f"`.{value.func.attr}()`"
            if rule is None:
                raise unit.error(
                    f"the method `.{value.func.attr}()` of {hints.receiver(unit, value.func.value)}"
                    " has no derivative rule",
                    value,
                    hints.method(value.func.attr, value.func.value.id in unit.active),
                )
            return rule, [value.func.value, *value.args], keywords, f"`.{value.func.attr}()`"
        refuse_dispatch(unit, value)
        callee = anno.getanno(value.func, anno.CALLEE)
        shown = A.expr_source(value.func)
        if getattr(callee, "__cpsad_operator__", None) is not None:
            raise unit.error(
                f"`{shown}` of a function that depends on the differentiated values is "
                "supported only where the function is defined in this function, by name",
                value,
                f"write `{shown}(h, argnums)(...)` with `h` a def or lambda bound once here "
                "(not a parameter, not defined in two branches) and argnums a constant",
            )
        if isinstance(callee, type) and yours(callee.__module__):
            raise unit.error(
                f"an object of your class `{shown}` made of differentiable values is not "
                "supported (its methods and attributes would carry them)",
                value,
                hints.USER_CLASS,
            )
        if makes_an_iterator(unit.ctx, value):
            raise iterator_kept(unit, value)
        raise unit.error(
            f"`{shown}` has no derivative rule and cpsad cannot read its source",
            value,
            hints.no_rule(callee, shown),
        )
    raise unit.error(  # pragma: no cover - normalize leaves nothing else
        f"cannot differentiate `{A.expr_source(value)}`", value
    )


def in_place(unit, s, out: list, kinds) -> bool:
    """Is ``s`` an update something else may read afterwards (Normalize put ``check_in_place``
    before it, the last statement of ``out``) that no derivative can see? Then it runs as
    Python's own in-place operation, and the check goes. Where the value is surely an array and
    a copy of it is read later, the refusal is here, at the user's line."""
    sharing = anno.getanno(s, anno.ALIASED_AUG)
    if sharing is None:
        return False
    guard = out[-1] if out and anno.getanno(out[-1], anno.ALIAS_GUARD) is s else None
    if aliasing.python_may_run_in_place(sharing, s):
        if guard is not None:  # it checks the parameters that hold the value only if the
            out.pop()  # caller passed one array twice
            if sharing.related:
                call = guard.value
                shown = tuple(unit.namer.meaning.get(n, n) for n in sharing.related)
                call.args[4:] = [A.const(None), A.const(shown)]
                call.args += [A.name(n) for n in sharing.related]
                out.append(guard)
        return True
    if not (sharing.names or sharing.held):
        if guard is not None:
            out.pop()  # a value a derivative reads and nothing else: rebound (an argument of
        return False  # the entry function: the caller's array keeps its value)
    u = anno.getanno(s, anno.AUG)
    alias = aliasing.certain_refusal(sharing, kinds.get(u.operand))
    if alias is not None:
        target, _, rhs = u.text.partition(f" {u.op} ")
        shown = unit.namer.shown(alias)
        copy = f", or `{alias} = {target}.copy()` where `{alias}` is made"
        raise unit.error(
            f"`{u.text}` would change in place an array that another name shares: {shown} "
            f"holds it too and is read afterwards, and Python would change it there; cpsad "
            "cannot follow a derivative through that",
            s,
            f"write `{target} = {target} {u.op[:-1]} {rhs}` to make a new array (then {shown} "
            f"keeps the old one)" + ("" if alias in unit.namer.meaning else copy),
        )
    return False


def python_in_place(unit, s):
    """``y = y op v`` as Python's in-place ``y = operator.iop(y, v)`` (see ``in_place``)."""
    name = anno.getanno(s, anno.AUG).python_op
    mod = unit.inject(op_module, "operator")
    func = A.attr(mod, name)
    anno.setanno(func, anno.CALLEE, getattr(op_module, name))
    anno.setanno(func, anno.CALLEE_KIND, "nondiff")
    s.value = A.copy_location(
        A.Call(func=func, args=[s.value.left, s.value.right], keywords=[]), s.value
    )
    return s


def matrices(value, shape) -> bool:
    """Is ``value`` ``x @ y`` of two names ``shape`` knows are matrices (2-D arrays)?"""
    return (
        isinstance(value, A.BinOp)
        and isinstance(value.op, A.MatMult)
        and isinstance(value.left, A.Name)
        and isinstance(value.right, A.Name)
        and len(shape(value.left.id) or ()) == 2
        and len(shape(value.right.id) or ()) == 2
    )


def _transposed(name):
    return A.Attribute(value=A.name(name.id), attr="T", ctx=A.Load())


def elementwise(value) -> bool:
    """Is ``value`` an elementwise operation -- arithmetic but ``@``, a sign, a numpy ufunc -- the
    adjoint of whose operand is an expression of the result's shape, summed by ``unbroadcast``
    to the operand's?"""
    if isinstance(value, A.BinOp):
        return not isinstance(value.op, A.MatMult)
    if isinstance(value, A.UnaryOp):
        return isinstance(value.op, (A.USub, A.UAdd))
    if isinstance(value, A.Call) and not value.keywords:
        fn = anno.getanno(value.func, anno.CALLEE)
        return isinstance(fn, numpy.ufunc) and fn.nout == 1
    return False


def without_calls(unit, e, fn):
    """``e`` with every call of the runtime helper ``fn`` replaced by its first argument (for a
    scalar result, ``unbroadcast(g, x)`` and ``broadcast_like(t, ans)`` are ``g`` and ``t``)."""
    return _Strip({n for n, obj in unit.injected.items() if obj is fn}).visit(e)


class _Strip(A.NodeTransformer):
    """``without_calls``: each call of a function of ``names`` replaced by its first argument."""

    def __init__(self, names: set):
        self.names = names

    def visit_Call(self, node):
        self.generic_visit(node)
        if isinstance(node.func, A.Name) and node.func.id in self.names and node.args:
            return node.args[0]
        return node


def data_method(ctx, value, active, kinds) -> bool:
    """``obj.method(x)`` with ``obj`` data -- not differentiated -- and either a method no rule
    knows (an object of the user's class, made here or read from a container) or a receiver that
    may be no array (``kinds``: what the names there may hold) -- a module passed as a value
    (``xp.sum(v)``), an object of yours whose method is named as an array's (``layer.dot(v)``),
    where an array method's rule would take the arguments for an array's (``axis``) and
    differentiate nothing: a call of the function value ``obj.method``, which the runtime
    dispatch differentiates (a module's function by its rule, a method of yours transformed with
    the object first, an array's method by the method's rule). On a differentiated receiver such
    a method stays refused."""
    return (
        isinstance(value, A.Call)
        and anno.getanno(value.func, anno.CALLEE_KIND) == "method"
        and isinstance(value.func.value, A.Name)
        and value.func.value.id not in active
        and not ctx.is_nondiff_attribute(value.func.attr)
        and (
            ctx.method_rule(value.func.attr) is None
            or OTHER in kinds.get(value.func.value.id, UNKNOWN)
        )
    )


# the methods of numpy's random generators, whose receiver is refused where a method of it is
# called on a differentiated value of which nothing is known (``cpsad show``, ``transform(f)``)
_GENERATOR_METHODS = frozenset(
    n
    for cls in (numpy.random.Generator, numpy.random.RandomState)
    for n in dir(cls)
    if not n.startswith("_")
)


def receiver_method(unit, key, value, active, kinds) -> bool:
    """``obj.method(x)`` with ``obj`` differentiated, a method no rule knows by its name (nor an
    attribute of a list's or a tuple's), of a receiver that may be an object of yours (``kinds``;
    not an argument the specialization knows is a library's object, ``OPAQUE``, whose method is
    refused here): a method of a dataclass, a namedtuple or a registered pytree whose fields are
    differentiated (``layer.apply(x)``), called as the function of the object it is
    (``through_method``)."""
    if not (
        isinstance(value, A.Call)
        and anno.getanno(value.func, anno.CALLEE_KIND) == "method"
        and isinstance(value.func.value, A.Name)
        and value.func.value.id in active
    ):
        return False
    ctx, obj = unit.ctx, value.func.value.id
    if key == "" and obj in (unit.arg_kinds or {}).get(OPAQUE, ()):
        return False
    attr, held = value.func.attr, kinds.get(obj, UNKNOWN)
    if ctx.is_nondiff_attribute(attr) or ctx.method_rule(attr) is not None:
        return False
    if frozenset(held) == UNKNOWN and attr in _GENERATOR_METHODS:
        return False  # (nothing known of `rng` in `rng.normal(...)`: most likely a generator)
    if attr in DICT_VIEWS and not value.args and not value.keywords:
        return False
    if OTHER in held:
        return True
    return SEQUENCE in held and not hasattr(list, attr) and not hasattr(tuple, attr)


def through_method(unit, value) -> tuple[list, A.Call]:
    """``obj.m(a)`` as ``m_fn = method_function(obj, "m")`` and the call ``m_fn(obj, a)``
    through a value: the dispatch differentiates the method with respect to its object too, so
    ``obj``'s adjoint gets its fields' (``dispatch.method_function``)."""
    obj, attr = value.func.value.id, value.func.attr
    return _called_through(unit, value, f"{attr}_of_{obj}", "method_function", obj, [A.const(attr)])


def _called_through(unit, value, stem: str, helper: str, first: str, more: list):
    """``got = helper(first, *more)`` and the call ``got(first, *value's arguments)`` through a
    value, at ``value``: ``through_method``'s and ``through_callee``'s."""
    got = unit.namer.fresh(stem)
    find = _runtime_name(unit, helper, value)
    bind = A.assign(got, A.Call(func=find, args=[A.name(first), *more], keywords=[]))
    call = A.Call(func=A.name(got), args=[A.name(first), *value.args], keywords=value.keywords)
    anno.setanno(call.func, anno.CALLEE_KIND, "dynamic")
    A.copy_location(call.func, value.func)
    return [A.copy_location(bind, value)], A.copy_location(call, value)


def plain_callee(unit, key, value) -> bool:
    """Is ``f`` in the call ``f(...)`` through a value known to be no struct -- in emitted code
    transformed again (its function values are its own closures), or an argument the
    specialization knows is a function (``CALLABLES``)? Then it is called as it is, with
    ``check_callee`` before it (``callee_check``), not through ``callee_function``."""
    if getattr(unit, "emitted", False):
        return True
    func = value.func if isinstance(value, A.Call) else None
    return (
        key == ""
        and isinstance(func, A.Name)
        and func.id in (unit.arg_kinds or {}).get(CALLABLES, ())
    )


def callables_key(unit, key, functions, arguments: dict) -> tuple:
    """A callee's ``CALLABLES``: its parameters given a function defined here, or an argument of
    this function the specialization knows is a function (``plain_callee`` there)."""
    own = set((unit.arg_kinds or {}).get(CALLABLES, ())) if key == "" else set()
    out = sorted(
        p
        for p, v in arguments.items()
        if isinstance(v, A.Name) and (v.id in functions or v.id in own)
    )
    return ((CALLABLES, tuple(out)),) if out else ()


def through_callee(unit, value, active, functions) -> tuple[list, A.Call]:
    """``f(a)`` through a value ``f`` that is itself differentiated (not a function defined
    here, which carries its own adjoints) as ``f_fn = callee_function(f)`` and the call
    ``f_fn(f, a)``: where ``f`` is an object of yours with ``__call__``, the dispatch
    differentiates that method with respect to the object too, and ``f``'s adjoint gets its
    fields'; anything else ``f_fn`` calls as it is, and ``f``'s adjoint is zero.
    ``([], value)`` for any other call."""
    func = value.func if isinstance(value, A.Call) else None
    if not (isinstance(func, A.Name) and func.id in active and func.id not in functions):
        return [], value
    return _called_through(unit, value, f"{func.id}_fn", "callee_function", func.id, [])


def _runtime_name(unit, helper: str, where):
    """A name for the runtime's ``helper``, a function of no derivative, at ``where``."""
    fn = unit.ctx.runtime(helper)
    name = A.name(unit.inject(fn, helper))
    anno.setanno(name, anno.CALLEE, fn)
    anno.setanno(name, anno.CALLEE_KIND, "nondiff")
    return A.copy_location(name, where)


def callee_check(unit, value, active, functions) -> list:
    """``check_callee(f)`` before a call ``f(...)`` through a value ``f`` that is itself
    differentiated (not a function defined here, which carries its own adjoints): the dispatch
    runs a method of an object of yours with the object as data, and refuses, when it runs, one
    whose fields hold differentiable values."""
    func = value.func if isinstance(value, A.Call) else None
    if not (isinstance(func, A.Name) and func.id in active and func.id not in functions):
        return []
    fn = unit.ctx.runtime("check_callee")
    name = A.name(unit.inject(fn, "check_callee"))
    anno.setanno(name, anno.CALLEE, fn)
    anno.setanno(name, anno.CALLEE_KIND, "nondiff")
    check = A.Call(func=name, args=[A.name(func.id)], keywords=[])
    return [A.copy_location(A.expr_stmt(A.copy_location(check, value)), value)]


def guard_attribute_read(unit, s, key, active, kinds) -> None:
    """``n = p.shape`` -- an array's attribute without derivative, read as one (Activity's
    ``FIELD`` not set) -- of a differentiated ``p`` that may be no array (``kinds``): a struct
    whose class no analysis saw (a library's, a registered pytree) may have a field ``shape``,
    whose derivative would be lost. Read by ``runtime.array_attribute``, which refuses that
    when it runs. (Not of an argument of the entry function: the specialization sees a struct
    there, and Activity reads its fields as fields; nor in code staged for Numba, which holds
    no struct.)"""
    if unit.staged:
        return
    value = s.value if isinstance(s, A.Assign) else None
    read = attribute_read(value) or value
    if not (
        isinstance(read, A.Attribute)
        and isinstance(read.value, A.Name)
        and read.value.id in active
        and read.value.id not in plain_arguments(unit)[key]
        and unit.ctx.is_nondiff_attribute(read.attr)
        and not anno.getanno(read, anno.FIELD)
        and not anno.getanno(value, anno.FIELD)
        and _kind(read.value, kinds) & NOT_NUMERIC
    ):
        return
    fn = unit.ctx.runtime("array_attribute")
    func = A.copy_location(A.name(unit.inject(fn, "array_attribute")), value)
    anno.setanno(func, anno.CALLEE, fn)
    anno.setanno(func, anno.CALLEE_KIND, "nondiff")
    call = A.Call(func=func, args=[read.value, A.const(read.attr)], keywords=[])
    s.value = A.copy_location(call, value)


def plain_arguments(unit) -> dict:
    """Function key -> the entry function's arguments its names hold: never assigned, nor
    shadowed by a nested function's own name (``unit.plain_arguments``, made at the first
    call)."""
    if unit.plain_arguments is None:
        out = unit.plain_arguments = {}

        def visit(fdef, key, seen):
            out[key] = seen
            for n in S.nested_functions(fdef):
                visit(n, anno.getanno(n, anno.DEF_KEY), seen - S.local_names(n))

        counts = S.assignment_counts(unit.tree)
        visit(unit.tree, "", {p for p in A.arg_names(unit.tree.args) if not counts.get(p)})
    return unit.plain_arguments


def may_change_active(value, active, ctx) -> bool:
    """Is ``value`` a call of a user function that may change in place an active argument the
    caller reads afterwards (aliasing's ``HELD_ARGS``), or keep one in state outside it
    (``aliasing.may_keep_arguments``)? Transformed then, its own checks see what it does."""
    if not (isinstance(value, A.Call) and anno.getanno(value.func, anno.CALLEE_KIND) == "user"):
        return False
    slots = list(enumerate(value.args)) + [(k.arg, k.value) for k in value.keywords]
    given = [a for _, a in slots if isinstance(a, A.Name) and a.id in active]
    if given and aliasing.may_keep_arguments(anno.getanno(value.func, anno.CALLEE), ctx):
        return True
    held = anno.getanno(value, anno.HELD_ARGS)
    if not held:
        return False
    return any(slot in held and isinstance(a, A.Name) and a.id in active for slot, a in slots)


def hands_active(unit, value, active) -> bool:
    """In emitted code transformed again, a call of a function of yours given an active
    value, its result unused: the values there are the code's own continuations and closures
    (``apply_bp(after_apply, g, v)``), which the callee calls through the dispatch --
    ``call_bp``, no call of a value in its source (``may_keep_arguments``) -- and which change
    adjoints. Run as a plain value, the second derivative through them was a silent 0.0 (or a
    crash); it runs differentiated, in both modes."""
    if not (
        getattr(unit, "emitted", False)
        and isinstance(value, A.Call)
        and anno.getanno(value.func, anno.CALLEE_KIND) == "user"
    ):
        return False
    given = [*value.args, *(k.value for k in value.keywords)]
    return any(isinstance(a, A.Name) and a.id in active for a in given)


def held_by_caller(call, arguments: dict) -> tuple:
    """The specialization's entry naming the parameters whose arguments the caller may read
    after ``call`` (``aliasing``'s ``HELD_ARGS``: an update of one in place would be seen), or
    nothing."""
    held = anno.getanno(call, anno.HELD_ARGS)
    if not held:
        return ()
    slots = {id(a): i for i, a in enumerate(call.args)}
    slots.update({id(k.value): k.arg for k in call.keywords})
    params = [p for p, v in arguments.items() if slots.get(id(v)) in held]
    return (aliasing.held_entry(params),) if params else ()


def transformed_local(unit, value):
    """The LocalFunction a call calls, if it is a transformed local function."""
    if isinstance(value, A.Call) and anno.getanno(value.func, anno.CALLEE_KIND) == "local":
        info = unit.locals.get(anno.getanno(value.func, anno.CALLEE))
        if info is not None and info.transformed:
            return info
    return None


def refuse_dispatch(unit, value) -> None:
    """A call of the runtime's dispatch (``call_bp``: emitted code calling a function value) in
    code transformed again: refused, wherever it is -- what it calls may change the state the
    derivative reads (a closure's ``nonlocal`` adjoint) even where no value it passes is active."""
    ctx = unit.ctx
    if not isinstance(value, A.Call):
        return
    callee = anno.getanno(value.func, anno.CALLEE)
    if callee is not None and callee in dispatchers(ctx):
        raise through_a_value(unit, value)


def dispatchers(ctx) -> tuple:
    """The runtime's dispatch of calls of function values (emitted code calls them)."""
    return (
        ctx.runtime("call_bp"),
        ctx.runtime("call_bp_keywords"),
        ctx.runtime("call_jvp"),
        ctx.runtime("call_jvp_keywords"),
    )


def through_a_value(unit, call):
    """The refusal of emitted code that calls through the runtime dispatch, transformed again,
    where Resolve could not make it a call of the function the dispatch picks (``bp_of``)."""
    return unit.error(
        "differentiating this emitted code again is not supported: it calls a function "
        "through a value with keyword arguments or `*args` (a derivative of order two or more "
        "of a call through a value, a decorator's wrapper, or a function of yours that forwards "
        "its arguments)",
        call,
        "pass the arguments by position, one by one, or call the function by name; first "
        "derivatives of this code work",
    )


def makes_an_iterator(ctx, call) -> bool:
    """Does ``call`` make a one-shot iterator: ``iter([...])`` that Desugar made of a ``map``
    or ``filter`` kept in a name, or a function ``ctx.one_shot_composite`` knows (``reversed``,
    ``zip``, itertools')?"""
    if anno.getanno(call.func, anno.ITERATOR_OF):
        return True
    one_shot = getattr(ctx, "one_shot_composite", None)
    return one_shot is not None and one_shot(anno.getanno(call.func, anno.CALLEE)) is not None


def iterator_kept(unit, call):
    """The refusal of ``call``, an iterator of differentiable values not consumed where it is
    made (Desugar's ``mark_consumed``), in either mode."""
    shown = anno.getanno(call.func, anno.ITERATOR_OF) or A.expr_source(call.func)
    return unit.error(
        f"`{shown}(...)` makes an iterator of differentiable values, which cpsad follows only "
        "where it is consumed where it is made: an iterator kept in a name, returned or passed "
        "to a function may be read twice (the second time empty)",
        call,
        f"read it through where it is made: `list({shown}(...))`, `sum({shown}(...))`, "
        f"`for v in {shown}(...)`, a comprehension over it",
    )


def growable_guard(unit, s, kinds) -> list:
    """``[check_growable(xs, text, line)]`` before ``s``, ``xs.append(v)`` (or another growth)
    of a differentiable container the kinds stage cannot prove a list: ``[]`` where it can."""
    xs = s.value.func.value.id
    if kinds.get(xs, UNKNOWN) == frozenset({SEQUENCE}):
        return []
    text = unit.source.line(s.lineno).strip() if unit.source else A.expr_source(s.value)
    fn = unit.inject(unit.ctx.runtime("check_growable"), "check_growable")
    check = A.call(fn, [A.name(xs), A.const(text), A.const(s.lineno)])
    anno.setanno(check.func, anno.CALLEE_KIND, "nondiff")
    return [A.copy_location(A.expr_stmt(check), s)]


def check_effect(unit, active, s) -> None:
    """``x.sort()`` on a differentiable value, for its effect: refused at the user's line, as
    ``rng.shuffle(x)`` is, and a call that writes into an array in place where a differentiable
    value is involved (``in_place_writer``: ``np.copyto(y, x)``, ``np.exp(x, out=y)``,
    ``np.add.at(y, i, x)``); and a call through
    the runtime dispatch of emitted code transformed again (its continuation is the rest of the
    program, whatever values it is given)."""
    call = s.value
    if isinstance(call, A.Call) and anno.getanno(call.func, anno.CALLEE) in dispatchers(unit.ctx):
        raise through_a_value(unit, call)
    written = in_place_writer(call) if isinstance(call, A.Call) else None
    mentioned = sorted(read_names(call) & active) if written is not None else ()
    if mentioned:
        shown, target, hint = written
        into = A.expr_source(target)
        others = [n for n in mentioned if n not in read_names(target)]
        what = (
            f"writes differentiable values (`{others[0]}`) into `{into}` in place"
            if others
            else f"changes the differentiable value `{into}` in place"
        )
        raise unit.error(
            f"`{shown}` {what}, which cpsad does not follow: `{into}` would keep the "
            "derivative of what it held before",
            call,
            hint,
        )
    if not isinstance(s, A.Expr):
        return
    if (
        isinstance(call, A.Call)
        and call.args
        and isinstance(call.args[0], A.Name)
        and call.args[0].id in active
        and anno.getanno(call.func, anno.CALLEE_KIND) == "method"
        and call.func.attr in ("shuffle", "permuted")
    ):
        raise unit.error(
            f"`{A.expr_source(call.func)}` changes the differentiable value "
            f"`{call.args[0].id}` in place, which is not supported",
            call,
            "compute a new value instead, e.g. `y = x[rng.permutation(len(x))]`",
        )
    if (
        isinstance(call, A.Call)
        and anno.getanno(call.func, anno.CALLEE_KIND) == "method"
        and isinstance(call.func.value, A.Name)
        and call.func.value.id in active
    ):
        raise unit.error(
            f"calling `.{call.func.attr}()` for its effect on `{call.func.value.id}` (a "
            "differentiable value, or a container of them) is not supported: it may change it "
            "in place",
            call,
            hints.in_place(call.func.attr),
        )
