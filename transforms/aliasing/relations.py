"""Between abstract objects: may two values share memory (``overlap``), may unknown code reach
an object (``confined``), and which entry values of each local function may share or be held by
its callers (``_relations``, to a fixpoint over the calls).

The invariant: ``overlap(f, a, b)`` is False only if no run can give the two values common
memory -- distinct sites are distinct arrays, an object only this activation's own variables
ever held is none of what unknown code returns, and two entry values share only where some call
of ``f`` may give them shared memory (the entry function's, and a function value's, may all
share). ``confined`` answers True only for an object made here (or given by every caller as
such an object) that no statement lets out of the function up to the point asked.
"""

from __future__ import annotations

from .. import astlib as A
from .domain import (
    _ENTRY_KINDS,
    _UNKNOWN,
    TOP,
    Val,
    _Call,
    _depth,
    _entry,
    _Func,
    _kept,
    _reach,
    _site_of,
    _stays_local,
    statements,
)


class Relations:
    def overlap(self, f: _Func, a, b, at=None) -> bool:
        """May a value made of the objects ``a`` share memory with one made of ``b`` (in ``f``,
        at the statement ``at`` -- where ``b`` is read after it --, or anywhere in it)?"""
        if not a or not b:
            return False
        if a & _UNKNOWN or b & _UNKNOWN:
            if a & _UNKNOWN and b & _UNKNOWN:
                return True
            top, other = (a, b) if a & _UNKNOWN else (b, a)
            # anything, or what unknown code may hold: never an object that no such code can
            # reach (``confined``) -- up to ``at``: given away only later, it is what the
            # variable holds then that unknown code gets, after the change, in Python and here
            upto = None if at is None else self.order(f).get(id(at))
            if not all(self.confined(f, o, upto=upto) for o in other):
                return True
            a, b = top - _UNKNOWN, other
            if not a:
                return False
        if a & b:
            return True
        if self.cell_sites:
            # what a cell holds is one object wherever it is read: a caller sees it as what a
            # call returned (``("call", k, site)``), the function that made it as the site
            sa = {_site_of(o) for o in a} & self.cell_sites
            if sa and sa & {_site_of(o) for o in b}:
                return True
        if not f.related:
            return False
        ea = [o[::2] for o in a if o[0] in _ENTRY_KINDS and o[1] == f.key]
        eb = [o[::2] for o in b if o[0] in _ENTRY_KINDS and o[1] == f.key]
        return any(frozenset((x, y)) in f.related for x in ea for y in eb if x != y)

    def order(self, f: _Func) -> dict:
        """id(statement) -> its place in ``f``'s statements (``statements``' order: no
        statement runs in an activation before one placed earlier, since loops are calls)."""
        found = self._order.get(f.key)
        if found is None:
            found = self._order[f.key] = {id(st): i for i, st in enumerate(statements(f.fdef.body))}
        return found

    def confined(self, f: _Func, o, assumed=None, upto=None) -> bool:
        """Is ``o`` an object that no code this analysis cannot see can reach during this
        activation of ``f``: a new array or number made here, or a parameter's value where every
        call of ``f`` (a local function called by name only) gives it such an object -- and
        every variable that may hold it (or a view of it) is used only in arithmetic,
        primitives' calls, copies, branches' tests, returns and calls of local functions that
        keep their parameter confined the same way: never passed to a user function or a
        function value, stored into a container or a cell, or read by a nested function? Such
        an object is none of what an unknown call returns (``TOP``): that code could only have
        got it from here. (An activation's returns come after it.) With ``upto``, only the
        statements placed up to that one (``order``) may give it away: those that have run."""
        if o in _UNKNOWN:
            return False
        key = (f.key, o, upto)
        known = self._confined_memo.get(key)
        if known is not None:
            return known
        assumed = set() if assumed is None else assumed
        if key in assumed:  # (a recursive call: a greatest fixpoint)
            return True
        assumed.add(key)
        answer = self._confined(f, o, assumed, upto)
        assumed.discard(key)
        if not answer or not assumed:  # (a True under assumptions is not final)
            self._confined_memo[key] = answer
        return answer

    def _confined(self, f: _Func, o, assumed: set, upto=None) -> bool:
        if o[0] == "kept":  # what a caller gave ``f`` for ``o[2]`` stays in it (whatever
            # other callers give: ``_kept``)
            if f.escapes:
                return False
            entry = _entry(f.key, o[2])
            ever, heap = self.values_ever(f, upto)
            holders = {v for v, val in ever.items() if entry in _reach(val.objs, heap)}
            return self._confined_in(f, holders | {o[2]}, assumed, upto)
        if o[0] == "call":  # what a local function returned: confined there, and here
            made = self.call_sites.get(o[1])
            if made is None or made[0] != f.key:
                return False
            if not self.confined(self.funcs[made[1]], o[2], assumed):
                return False
        elif o[1] != f.key:
            return False
        elif o[0] == "site":
            if o not in self.fresh:
                return False
        elif o[0] == "entry" and o[2] in f.entry_vars and f.key and not f.escapes:
            for c in self.calls:
                if c.callee != f.key:
                    continue
                h = self.funcs[c.caller]
                image = self.entry_image(h, c, ("entry", o[2]))  # (none: a number)
                # (``f`` runs within the call: the caller's later statements have not run)
                at = self.order(h).get(id(c.stmt))
                if not all(self.confined(h, x, assumed, upto=at) for x in image):
                    return False
        else:
            return False
        ever, heap = self.values_ever(f, upto)
        holders = {v for v, val in ever.items() if o in _reach(val.objs, heap)}
        if o[0] == "entry":
            holders.add(o[2])
        return self._confined_in(f, holders, assumed, upto)

    def _confined_in(self, f: _Func, holders: set, assumed: set, upto=None) -> bool:
        # (a variable of an enclosing function the function reads: its entry value's holder)
        if any((v[0] != f.key and v not in f.entry_vars) or v in self.cells for v in holders):
            return False
        for g, other in self.funcs.items():  # read by a nested function (a closure): one
            # called by name only (a loop's) keeps it if its entry value stays confined there;
            # one defined after ``upto`` does not exist yet, nor do the functions inside it
            if g == f.key or self.defined_after(f, g, upto):
                continue
            for v in holders & set(other.entry_vars):
                if other.escapes or not self.confined(other, _kept(g, v), assumed):
                    return False
        names = {v[1] for v in holders}
        for i, st in enumerate(statements(f.fdef.body)):
            if upto is not None and i > upto:
                break
            # (a holder assigned anew lets go of the object: only reads can give it away)
            used = {
                n.id
                for n in self._statement_nodes(st)
                if isinstance(n, A.Name) and not isinstance(n.ctx, A.Store)
            }
            if not used & names:
                continue
            if isinstance(st, A.FunctionDef):
                return False  # read by a nested function (or its defaults)
            if isinstance(st, A.Assign) and any(
                self.var(f.key, n.id) in self.cells
                for n in A.walk(st.targets[0])
                if isinstance(n, A.Name)
            ):
                return False  # stored into a variable nested functions share
            if _stays_local(st) or isinstance(st, A.Return):
                continue
            call = st.value if isinstance(st, (A.Assign, A.Expr)) else None
            g = self.local_callee(f.key, call)
            if g is None or self.funcs[g].escapes or call.keywords:
                return False
            if isinstance(st, A.Assign) and not isinstance(st.targets[0], (A.Name, A.Tuple)):
                return False
            params = self.funcs[g].params
            for i, arg in enumerate(call.args):
                if not (isinstance(arg, A.Name) and arg.id in names):
                    continue
                if i >= len(params) or isinstance(arg, A.Starred):
                    return False
                if not self.confined(self.funcs[g], _kept(g, params[i]), assumed):
                    return False
        return True

    def defined_after(self, f: _Func, g: str, upto) -> bool:
        """Is the function ``g`` (or the function of ``f`` it is nested in) defined by a
        statement of ``f`` placed after ``upto`` (``order``)?"""
        if upto is None:
            return False
        while self.scopes.parent.get(g) not in (f.key, None):
            g = self.scopes.parent[g]
        if self.scopes.parent.get(g) != f.key:
            return False
        place = self.order(f).get(id(self.scopes.node[g]))
        return place is not None and place > upto

    def entry_image(self, h: _Func, c: _Call, o) -> frozenset:
        """What the callee's entry object ``o`` (``(kind, var)``) is, in the caller: the
        argument's objects for ``entry``, all they hold for ``contents``."""
        val = c.images.get(o[1], Val(frozenset({TOP})))
        if o[0] == "entry":
            return val.objs
        return self.contents(val, c.state)

    def _relations(self) -> None:
        """Which entry objects of each function may share (``related``: pairs of ``(kind,
        var)``), and which of its callers' variables may hold them after the call
        (``holders``): to a fixpoint over the calls."""
        for f in self.funcs.values():
            every = f.key == "" or f.escapes  # called by someone unknown, with anything
            if every:
                objs = [
                    (kind, v)
                    for v in f.entry_vars
                    if not self.irrelevant_global(v)
                    for kind in _ENTRY_KINDS
                ]
                f.related = {frozenset((a, b)) for a in objs for b in objs if a[1] != b[1]}
            if f.escapes:
                f.holders = {(kind, v): {"?"} for v in f.entry_vars for kind in _ENTRY_KINDS}
            elif f.key == "" and self.held:  # a caller reads these arguments after the call
                f.holders = {
                    (kind, v): {"?"} for v in f.params if v[1] in self.held for kind in _ENTRY_KINDS
                }
        # only the functions with an update, and those that call them, need answers
        # (and those with a call of a user function that may change its arguments: its held
        # arguments read who holds them)
        needed = {f.key for f, _, _, _ in self.updates}
        needed |= {f.key for f, _, _, _, _ in self.user_calls.values()}
        grew = True
        while grew:
            grew = False
            for c in self.calls:
                if c.callee in needed and c.caller not in needed:
                    needed.add(c.caller)
                    grew = True
        work = []  # (callee, caller, entry objects, their images, live reaches, call statement)
        for c in sorted(self.calls, key=lambda c: _depth(self.scopes, c.caller)):
            g, h = self.funcs[c.callee], self.funcs[c.caller]
            if g.escapes or c.callee not in needed:
                continue
            objs = sorted(((kind, v) for v in g.entry_vars for kind in _ENTRY_KINDS), key=repr)
            image = {o: self.entry_image(h, c, o) for o in objs}
            objs = [o for o in objs if image[o]]
            live = {n: self.reach(self.var_value(h, c.state, n).objs, c.state) for n in c.live}
            work.append((g, h, objs, image, {n: r for n, r in live.items() if r}, c.stmt))
        changed = True
        while changed:
            changed = False
            for g, h, objs, image, live, at in work:
                for i, a in enumerate(objs):
                    for b in objs[i + 1 :]:
                        if a[1] != b[1]:
                            pair = frozenset((a, b))
                            if pair not in g.related and self.overlap(h, image[a], image[b], at):
                                g.related.add(pair)
                                changed = True
                for o in objs:
                    found = {n for n, r in live.items() if self.overlap(h, image[o], r, at)}
                    for e, hold in h.holders.items():
                        if hold and self.overlap(h, image[o], frozenset({(e[0], h.key, e[1])}), at):
                            found |= hold
                    old = g.holders.get(o, set())
                    if not found <= old:
                        g.holders[o] = old | found
                        changed = True
