"""The flow-sensitive points-to analysis of one function (``_points_to``): the value of every
variable and the heap at each statement, what the function returns and stores for its callers
(its summary, in its own objects), and the calls and updates it records for the answers.

The invariant: at each statement, every object a variable may hold at run time is in its value
(or ``TOP``), and every object one may reach from another through a container, a view or an
attribute is reachable in the heap. A local call maps the callee's summary into the caller's
objects; any other call that is not known to return a new value (``tables``) returns what it
was given and may store each argument into the others.
"""

from __future__ import annotations

import numpy

from .. import anno
from .. import astlib as A
from .domain import (
    _ENTRY_KINDS,
    _UNKNOWN,
    EMPTY,
    ESCAPED,
    TOP,
    Val,
    _Call,
    _contents,
    _entry,
    _Func,
    _initial_edges,
    _join,
    _objs_of,
    _reach,
    _site_of,
    _State,
    statements,
)
from .marks import mutation
from .tables import (
    _NEW_ARRAYS,
    CONTAINER_MUTATORS,
    FRESH_METHODS,
    IMMUTABLE_ATTRIBUTES,
    NONE_METHODS,
    SHALLOW_METHODS,
    _fresh_callee,
)


class PointsTo:
    def site(self, key, stmt, n=0):
        i = self.sites.setdefault((id(stmt), n), len(self.sites))
        return ("site", key, i)

    def _invoked_reads(self, callees) -> None:
        """A call of a local function reads, too, what the function values it calls read."""
        for key, f in self.funcs.items():
            for st in statements(f.fdef.body):
                for c in self.invokes.get(id(st), ()):
                    self.free[key] |= {v for v in self.free[c] if v[0] != key}
        changed = True
        while changed:
            changed = False
            for key in self.funcs:
                for g in callees[key]:
                    extra = {v for v in self.free[g] if v[0] != key} - self.free[key]
                    if extra:
                        self.free[key] |= extra
                        changed = True

    def value(self, f, state, node) -> Val:
        """The value of an atom (a name or a constant) at ``state``."""
        if isinstance(node, A.Constant):
            return EMPTY
        if isinstance(node, A.Starred):
            return Val(self.reach(self.value(f, state, node.value).objs, state))
        if not isinstance(node, A.Name):
            return Val(frozenset({TOP}))
        v = self.var(f.key, node.id)
        return self.var_value(f, state, v)

    def var_value(self, f, state, v) -> Val:
        if v in self.cells:
            # one of numbers only (``_number_cells``) holds nothing an update could change;
            # another what any assignment of it gave it -- and, read by a nested function, its
            # value at the function's entry, which the callers' relations speak of
            if v in self.number_cells:
                return EMPTY
            held = self.cell_values.get(v, frozenset())
            if TOP in held:
                return Val(frozenset({TOP}))
            if v[0] == f.key and v in f.params:
                # a parameter: also what it was given (its entry object, never one made here)
                held = held | {_entry(f.key, v)}
            elif v[0] != f.key:
                held = held | {_entry(f.key, v)}
                e, c = _entry(f.key, v), _contents(f.key, v)
                if e not in state.heap:
                    state.heap[e] = frozenset({c})
                    state.heap[c] = frozenset({c})
            return Val(frozenset(held))
        if v[0] == f.key:
            return state.env.get(v, EMPTY)
        if self.irrelevant_global(v):
            return EMPTY
        e, c = _entry(f.key, v), _contents(f.key, v)
        outside = v[0] is None  # a global, a variable of the user's enclosing function
        if e not in state.heap:
            state.heap[e] = frozenset({c})
            # (what code the analysis cannot see stored there: a user's function may keep
            # what it was given in a global, and the next read of it return that)
            state.heap[c] = frozenset({c, ESCAPED}) if outside else frozenset({c})
        return Val(frozenset({e, ESCAPED}) if outside else frozenset({e}))

    def _invoked(self) -> None:
        """Which functions used as values each call may call (``invokes``): those whose
        values it was given -- a parameter or free variable standing for what the callers gave
        it (to a fixpoint over the calls), anything where nothing is known of it."""
        escaping = {k for k, f in self.funcs.items() if f.escapes}
        entry: dict = {}  # (function, kind, var) -> functions its entry object may be

        def closures(key, objs) -> set:
            out = set()
            for o in objs:
                site = o[2] if o[0] == "call" else o
                if site in self.closures:
                    out.add(self.closures[site])
                elif o in _UNKNOWN or (o[0] in _ENTRY_KINDS and self.funcs[key].escapes):
                    out |= escaping
                elif o[0] in _ENTRY_KINDS:
                    out |= entry.get((key, o[0], o[2]), set())
            return out

        changed = True
        while changed:
            changed = False
            for c in self.calls:
                g = self.funcs[c.callee]
                if g.escapes:
                    continue
                h = self.funcs[c.caller]
                for v in g.entry_vars:
                    for kind in _ENTRY_KINDS:
                        found = closures(c.caller, self.entry_image(h, c, (kind, v)))
                        old = entry.setdefault((c.callee, kind, v), set())
                        if not found <= old:
                            old |= found
                            changed = True
        for sid, (key, given) in self.given.items():
            found = {k for k in closures(key, given) if k in self.funcs}
            if found:
                self.invokes[sid] = found

    def add_entries(self, state, holders, new) -> bool:
        """``new`` stored into the containers ``holders``: one that may then hold an object
        twice (``[a, a]``, appending what it holds) is marked, for ``x[i] op= v``. Did the
        heap change?"""
        new = frozenset(new)
        if not new:
            return False
        held = self.reach(
            frozenset().union(*(state.heap.get(o, frozenset()) for o in holders)), state
        )
        if new & held or (
            any(o[0] in _ENTRY_KINDS or o in _UNKNOWN for o in new)
            and any(o[0] in _ENTRY_KINDS for o in held)
        ):
            self.duplicates |= {o for o in holders if o is not TOP}
        return state.add_heap(holders, new)

    def may_hold_twice(self, o) -> bool:
        """May the container ``o`` hold one object in two entries?"""
        if o in _UNKNOWN or o in self.duplicates:
            return True
        if o[0] == "call":
            return o[2] in self.duplicates or o[2][0] != "site"
        if o[0] in _ENTRY_KINDS:
            if self.plain_cell(o[2]):
                return False
            return self.may_be_sequence(o) or o[0] == "contents"
        return False

    def plain_entry(self, o) -> bool:
        """A cell's value at a nested function's entry, where it holds only new arrays."""
        return o is not TOP and o[0] == "entry" and self.plain_cell(o[2])

    def plain_cell(self, var) -> bool:
        """A cell that holds only new arrays and numbers (what ``cell_write`` saw so far)."""
        if var not in self.cells or var in self.number_cells:
            return var in self.number_cells
        held = self.cell_values.get(var, frozenset())
        return TOP not in held and not (var[0] in self.funcs and var in self.funcs[var[0]].params)

    def may_be_sequence(self, o) -> bool:
        """May the object ``o`` be a list or a tuple (whose sum with another holds elements)?
        Not one made by arithmetic on arrays or numbers, nor a parameter of the entry function
        known (from its argument) to be an array or a number."""
        kind = o[0]
        if kind in _ENTRY_KINDS and self.plain_cell(o[2]):
            return False
        if kind == "site":
            return o in self.sequences
        if kind == "call":
            return o[2] in self.sequences or o[2][0] != "site"
        if kind in _ENTRY_KINDS:
            var = o[2]
            if var[0] == "" and var[1] in self.arg_kinds:
                return "other" in self.arg_kinds[var[1]]
            if var[0] is None and var[1] in self.globals:
                return isinstance(self.globals[var[1]], (list, tuple))
        return True

    def reach(self, objs, state) -> frozenset:
        return _reach(objs, state.heap)

    def contents(self, val: Val, state) -> frozenset:
        out = set()
        for o in val.objs:
            out |= state.heap.get(o, frozenset())
        return self.reach(out, state)

    def _points_to(self, f: _Func):
        key = f.key
        state = _State(bound=frozenset(f.params))
        for p in f.params:
            # (a function used as a value, called by anyone with anything: its entry objects
            # all may share, and its callers hold them -- ``_relations`` -- as the entry
            # function's; a call of it by name maps them to what it is given)
            e, c = _entry(key, p), _contents(key, p)
            state.env[p] = Val(frozenset({e}))
            state.heap[e] = frozenset({c})
            state.heap[c] = frozenset({c})
        self._ret, self._heap_out = EMPTY, {}
        self._block(f, f.fdef.body, state)
        # what a caller can see of it: from the result and from what it was given
        roots = set(self._ret.objs) | _objs_of(self._ret.elts)
        roots |= {o for o in self._heap_out if o[0] in _ENTRY_KINDS}
        keep = _reach(roots, self._heap_out)
        heap_out = {o: t for o, t in self._heap_out.items() if o in keep}
        return self._ret, heap_out

    def _block(self, f, stmts, state):
        """Run ``stmts`` from ``state``; the state at their end, or None if they all return."""
        for s in stmts:
            if state is None:
                return None
            if isinstance(s, A.If):
                a = self._block(f, s.body, state.copy())
                b = self._block(f, s.orelse, state.copy())
                state = a if b is None else b if a is None else a.join(b)
            elif isinstance(s, A.Return):
                val = EMPTY if s.value is None else self.value(f, state, s.value)
                self._ret = _join(self._ret, val)
                for o, t in state.heap.items():
                    t = t - _initial_edges(o)
                    if t:
                        old = self._heap_out.get(o)
                        self._heap_out[o] = t if old is None else old | t
                return None
            else:
                self._statement(f, s, state)
                if self._track and (
                    self._track[1] is None or self.order(f)[id(s)] <= self._track[1]
                ):
                    ever, heap = self.ever[self._track[0]]
                    for v, val in state.env.items():
                        old = ever.get(v)
                        ever[v] = val if old is None else _join(old, val)
                    for o, t in state.heap.items():
                        heap[o] = heap.get(o, frozenset()) | t
        return state

    def _statement(self, f, s, state) -> None:
        key = f.key
        m = mutation(s) if not getattr(self.unit, "emitted", False) else None
        if m is not None:
            self.updates.append((f, s, m, state.copy()))
        if isinstance(s, A.Assign):
            u = anno.getanno(s, anno.AUG)
            if u is not None:
                self.updates.append((f, s, u, state.copy()))
            target = s.targets[0]
            value = s.value
            if isinstance(target, (A.Subscript, A.Attribute)):
                holder = self.value(f, state, target.value)
                new = self.value(f, state, value).objs
                if (target.value.id, getattr(value, "id", None)) == self._stored:
                    state.add_heap(holder.objs, new)  # `x[i] op= v`: the entry replaced
                else:
                    self.add_entries(state, holder.objs, new)
                return
            self._stored = None
            if u is not None and u.container is not None:
                self._stored = (u.container, u.target)
            val = self.expression(f, s, value, state)
            if u is not None:  # Python may have changed the operand's value in place
                val = Val(val.objs | self.value(f, state, A.name(u.operand)).objs)
            self.bind(f, state, target, val, value)
        elif isinstance(s, A.Expr):
            self.expression(f, s, s.value, state)
        elif isinstance(s, A.FunctionDef):
            site = self.site(key, s)
            self.closures[site] = self.scopes.keys[id(s)]
            state.env[(key, s.name)] = Val(frozenset({site}))
            state.bound = state.bound | {(key, s.name)}

    def bind(self, f, state, target, val: Val, value=None) -> None:
        key = f.key
        if isinstance(target, A.Name):
            owner = self.var(key, target.id)
            if owner in self.cells and owner not in self.number_cells:
                self.cell_write(owner, val)
            v = (key, target.id)
            state.env[v] = val
            state.bound = state.bound | {v}
            for g in list(state.same):  # v is no longer a copy of anything
                if v in state.same[g]:
                    state.same[g] = state.same[g] - {v}
            state.same.pop(v, None)
            if isinstance(value, A.Name):
                src = self.var(key, value.id)
                group = state.same.get(src, frozenset()) | {src}
                state.same[v] = group
                for w in group:
                    state.same[w] = (state.same.get(w, frozenset()) | {v}) - {w}
            return
        elts = target.elts
        if val.elts is not None and len(val.elts) == len(elts):
            parts = list(val.elts)
        else:
            every = Val(self.reach(val.objs, state))
            parts = [every] * len(elts)
        for e, part in zip(elts, parts):
            if isinstance(e, A.Starred):
                e = e.value
            if isinstance(e, A.Name):
                self.bind(f, state, e, part)

    def cell_write(self, cell, val: Val) -> None:
        """``cell = value`` somewhere: what the cell may hold grows (TOP unless every object is
        a new array or number, which means the same wherever it is read)."""
        objs = set(val.objs) | _objs_of(val.elts)
        # (the cell's own value, read at a nested function's entry: what it holds already)
        objs = {o for o in objs if not (o is not TOP and o[0] in _ENTRY_KINDS and o[2] == cell)}
        if not all(self.is_plain(o) for o in objs):
            objs = {TOP}
        old = self.cell_values.get(cell, frozenset())
        if not objs <= old:
            self.cell_values[cell] = old | objs
            self.cell_sites |= {_site_of(o) for o in objs}

    def is_plain(self, o) -> bool:
        """A new array or number made at a site (or returned from one by a call)."""
        return _site_of(o) in self.plain

    def expression(self, f, s, e, state) -> Val:
        """The value of a normalized right-hand side (and its effects on the heap)."""
        key = f.key
        if isinstance(e, (A.Name, A.Constant)):
            return self.value(f, state, e)
        if isinstance(e, A.BinOp):
            site = self.site(key, s)
            self.fresh.add(site)
            held = frozenset()
            vals = [self.value(f, state, x) for x in (e.left, e.right)]
            # (an array or a number joins no list: `a + lst` is an array or an error)
            joins = isinstance(e.op, A.Mult) or not any(
                v.objs and all(self.is_plain(o) or self.plain_entry(o) for o in v.objs)
                for v in vals
            )
            if isinstance(e.op, (A.Add, A.Mult)) and joins:  # lists and tuples joined, repeated
                for val in vals:
                    if any(self.may_be_sequence(o) for o in val.objs):
                        held |= self.contents(val, state)
                if held:
                    state.add_heap({site}, held)
                    self.sequences.add(site)
                    self.duplicates.add(site)  # [a] * 2 holds a twice
            if not held and not isinstance(e.op, A.BitOr):  # (`d1 | d2`: a dict of d1's values)
                self.plain.add(site)
            return Val(frozenset({site}))
        if isinstance(e, (A.UnaryOp, A.Compare)):
            site = self.site(key, s)
            self.plain.add(site)
            self.fresh.add(site)
            return Val(frozenset({site}))
        if isinstance(e, A.JoinedStr):
            return Val(frozenset({self.site(key, s)}))
        if isinstance(e, A.Attribute):
            if e.attr in IMMUTABLE_ATTRIBUTES:
                return Val(frozenset({self.site(key, s)}))
            return Val(self.reach(self.value(f, state, e.value).objs, state))
        if isinstance(e, A.Subscript):
            base = self.value(f, state, e.value)
            i = e.slice
            if (
                base.elts is not None
                and isinstance(i, A.Constant)
                and type(i.value) is int
                and -len(base.elts) <= i.value < len(base.elts)
            ):
                return base.elts[i.value]
            return Val(self.reach(base.objs, state))
        if isinstance(e, (A.Tuple, A.List, A.Set)):
            site = self.site(key, s)
            self.sequences.add(site)
            self.fresh.add(site)
            vals = [self.value(f, state, x) for x in e.elts]
            for v in vals:
                self.add_entries(state, {site}, v.objs)
            starred = any(isinstance(x, A.Starred) for x in e.elts)
            elts = tuple(vals) if isinstance(e, A.Tuple) and not starred else None
            return Val(frozenset({site}), elts)
        if isinstance(e, A.Dict):
            site = self.site(key, s)
            self.fresh.add(site)
            for k, v in zip(e.keys, e.values):
                val = self.value(f, state, v)
                if k is None:
                    self.duplicates.add(site)
                    state.add_heap({site}, self.reach(val.objs, state))
                else:
                    self.add_entries(state, {site}, val.objs)
            return Val(frozenset({site}))
        if isinstance(e, A.Call):
            return self.call(f, s, e, state)
        return Val(frozenset({self.site(key, s)}))  # an f-string, an opaque expression

    def call(self, f, s, call, state) -> Val:
        key = f.key
        site = frozenset({self.site(key, s)})
        kind = anno.getanno(call.func, anno.CALLEE_KIND)
        args = [self.value(f, state, a) for a in call.args]
        args += [self.value(f, state, k.value) for k in call.keywords]
        reach_args = (
            frozenset().union(*(self.reach(a.objs, state) for a in args)) if args else frozenset()
        )
        g = self.local_callee(key, call)
        if g is not None:
            return self.local_call(f, s, call, g, state)
        given = reach_args
        if kind in ("dynamic", "method"):
            given = given | self.reach(
                self.value(f, state, call.func.value if kind == "method" else call.func).objs, state
            )
        self.given[id(s)] = (f.key, given)
        if kind == "user":  # (its last pass's: a fixpoint's)
            self.user_calls[id(call)] = (f, s, call, args, state.copy())
        if kind == "method":
            receiver = self.value(f, state, call.func.value)
            attr = call.func.attr
            if attr in FRESH_METHODS:
                return Val(site)
            if attr in SHALLOW_METHODS:
                state.add_heap(site, self.contents(receiver, state))
                return Val(site)
            self.add_entries(state, receiver.objs, reach_args)
            if attr in CONTAINER_MUTATORS and attr in NONE_METHODS:
                return Val(site)
            return Val(site | self.reach(receiver.objs, state) | reach_args)
        if kind in ("primitive", "nondiff"):
            fn = anno.getanno(call.func, anno.CALLEE)
            if _fresh_callee(fn, call):
                if isinstance(fn, numpy.ufunc) or fn in _NEW_ARRAYS:
                    self.plain |= site
                self.fresh |= site
                return Val(site)
            state.add_heap(site, reach_args)
            return Val(site | reach_args)
        # a user's function, a function value: it may return what it was given, and store any
        # of its arguments into another
        if kind == "dynamic":
            fobjs = self.reach(self.value(f, state, call.func).objs, state)
            reach_args = reach_args | fobjs | self.closure_reads(f, state, fobjs)
        elif any(o in self.closures for o in reach_args):  # given a closure: it may return
            reach_args = reach_args | self.closure_reads(f, state, reach_args)  # what that reads
        state.add_heap(reach_args, reach_args)
        return Val(site | reach_args | {ESCAPED})

    def closure_reads(self, f, state, fobjs) -> frozenset:
        """What the closures among ``fobjs`` may return or store: the values of the variables
        they read (``g = lambda: acc`` ... ``v = fs[0](v)`` makes ``v`` the very ``acc``) --
        of every variable a function used as a value reads where the function is not known."""
        keys = {self.closures[o] for o in fobjs if o in self.closures}
        free = set().union(*(self.free[k] for k in keys)) if keys else set()
        if any(o is TOP or o is ESCAPED or o[0] in _ENTRY_KINDS for o in fobjs):
            free |= self.escaped
        objs = frozenset()
        for v in free:
            if v[0] == f.key or self.visible(f.key, v):
                objs |= self.reach(self.var_value(f, state, v).objs, state)
        return objs

    def local_call(self, f, s, call, g, state) -> Val:
        callee = self.funcs[g]
        images = {}
        names = A.arg_names(callee.fdef.args)
        if any(isinstance(a, A.Starred) for a in call.args) or callee.fdef.args.vararg:
            every = Val(
                frozenset().union(
                    *(self.reach(self.value(f, state, a).objs, state) for a in call.args),
                    *(self.reach(self.value(f, state, k.value).objs, state) for k in call.keywords),
                )
            )
            for p in callee.params:
                images[p] = every
        else:
            for p, a in zip(names, call.args):
                images[(g, p)] = self.value(f, state, a)
            for k in call.keywords:
                if k.arg in names:
                    images[(g, k.arg)] = self.value(f, state, k.value)
            for p in callee.params:  # a default: made where the function was defined
                images.setdefault(p, Val(frozenset({self.site(f.key, s, 1)})))
        for v in callee.entry_vars:
            if v not in images:
                images[v] = self.var_value(f, state, v)
        self.calls.append(_Call(f.key, g, images, state.copy(), set(), s))
        # its result and what it stored, in the caller's objects
        k = self.sites.setdefault((id(s), "call"), len(self.sites))
        self.call_sites[k] = (f.key, g)

        # what a parameter's contents reach in the caller's heap, while the heap is unchanged
        # (a callee that stores much reads them once for each object it stores into)
        reached: dict = {}

        def image(o):
            kind = o[0]
            if kind == "entry":
                return images.get(o[2], Val(frozenset({TOP}))).objs
            if kind == "contents":
                r = reached.get(o[2])
                if r is None:
                    r = self.reach(images.get(o[2], Val(frozenset({TOP}))).objs, state)
                    reached[o[2]] = r
                return r
            if kind == "site":
                return frozenset({("call", k, o)})
            if kind == "call":
                return frozenset({("call", k, o[2])})
            return frozenset({o})  # TOP, ESCAPED

        def mapped(val: Val) -> Val:
            objs = frozenset().union(*(image(o) for o in val.objs)) if val.objs else frozenset()
            elts = None if val.elts is None else tuple(mapped(x) for x in val.elts)
            return Val(objs, elts)

        for o, targets in callee.heap_out.items():
            into = frozenset().union(*(image(t) for t in targets))
            if o in self.duplicates:
                self.duplicates |= {x for x in image(o) if x is not TOP}
            if self.add_entries(state, image(o), into):
                reached.clear()
        try:
            return mapped(callee.ret)
        finally:
            mapped = None  # (it calls itself: a reference cycle, which kept the tree alive until a collection)
