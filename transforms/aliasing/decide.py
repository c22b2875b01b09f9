"""The answers: for each update, the ``Sharing`` of the names that may read the value it changes
(``_decide``; ``_mutation_sharing`` for a change of a container in place), whether Python's own
in-place operation may run it (``_confinement``), and for each call of a user function the
arguments its caller may read after it (``_held_arguments``: ``anno.HELD_ARGS``).

The invariant: an update gets ``None`` only if no variable but its own, no container, no closure
and no caller that may hold the value can read it after the statement (the package docstring);
a name in a ``Sharing`` is one the run-time check can read there (assigned on every path).
"""

from __future__ import annotations

import builtins

from .. import anno
from .. import astlib as A
from .domain import (
    _ENTRY_KINDS,
    _UNKNOWN,
    TOP,
    Val,
    _contents,
    _entry,
    _Func,
    _reach,
    _State,
    _stays_local,
    statements,
)
from .marks import Sharing, Update

_UPTO_PASSES = 32  # ``values_ever`` passes up to a statement, per function


class Decisions:
    def _held_arguments(self) -> None:
        """For each call of a user function: the arguments whose values someone may read after
        it returns -- a variable read later, a caller of this function (``holders``), anyone
        (TOP) -- in ``anno.HELD_ARGS``. The callee, transformed apart, counts them as its
        caller's (an update of one in place would be seen there)."""
        for f, s, call, args, state in self.user_calls.values():
            live = self.live_after.get(id(s), set()) - self.defs(f.key, s)
            # and a variable another statement reads: read before the call, its value may be
            # what the backward pass reads (``v @ A``'s adjoint reads ``v``)
            live = live | {
                v
                for st in statements(f.fdef.body)
                if st is not s
                for v in self.value_reads(f.key, [st])
                if v[0] == f.key or self.visible(f.key, v)
            }
            live = sorted(live, key=repr)
            reaches = [self.reach(self.var_value(f, state, n).objs, state) for n in live]
            held, readers = set(), {}
            slots = list(range(len(call.args))) + [k.arg for k in call.keywords]
            for slot, val in zip(slots, args):
                objs = self.reach(val.objs, state)
                if not objs:
                    continue
                # (the names that hold the very objects made here: Activity's check of what
                # the backward pass reads, ``_changed_after_read``)
                readers[slot] = frozenset(
                    n[1]
                    for n, r in zip(live, reaches)
                    if self.visible(f.key, n)
                    and self.readable(f, state, n)  # (assigned there: the check reads it)
                    and self.overlap(f, objs - _UNKNOWN, r - _UNKNOWN, s)
                )
                if TOP in objs or any(self.overlap(f, objs, r, s) for r in reaches):
                    held.add(slot)
                    continue
                for e, hold in f.holders.items():
                    if hold and self.overlap(f, objs, frozenset({(e[0], f.key, e[1])}), s):
                        held.add(slot)
                        break
            anno.setanno(call, anno.HELD_ARGS, frozenset(held))
            anno.setanno(call, anno.HELD_READERS, readers)

    def _decide(self, f: _Func, s, u: Update, state: _State):
        key = f.key
        operand = self.var(key, u.operand)
        objs = self.var_value(f, state, operand).objs
        if not objs:
            return None
        skip = {operand, (key, u.target)}
        if u.name is not None:
            skip.add(self.var(key, u.name))
        if u.container is not None:
            skip.add(self.var(key, u.container))
        names, held = [], []
        if u.container is not None:
            # the new value replaces the entry; the container itself sees the change only in
            # another entry holding the same value (``[a] * 2``): the check counts them
            c = self.var(key, u.container)
            store = self.next.get(id(s))
            if c in self.live_after.get(id(store), ()) and any(
                self.may_hold_twice(o) for o in self.var_value(f, state, c).objs
            ):
                names.append(u.container)
        if u.mutation:
            return self._mutation_sharing(f, s, objs, skip, state)
        if TOP in objs:
            held.append(
                "a variable a nested function changes"
                if operand in self.cells
                else f"whoever calls {self.shown(f.fdef.name)} (it is used as a value)"
            )
        for n in sorted(self.live_after.get(id(s), ()) - skip, key=repr):
            other = self.reach(self.var_value(f, state, n).objs, state)
            if not self.overlap(f, objs, other, s):
                continue
            if self.visible(key, n) and self.readable(f, state, n):
                names.append(n[1])
            elif self.visible(key, n):
                held.append(f"{self.shown(n[1])} (which may not be assigned yet there)")
            else:
                held.append(f"{self.shown(n[1])} of an enclosing function")
        for e, hold in sorted(f.holders.items(), key=repr):
            if not hold or not self.overlap(f, objs, frozenset({(e[0], key, e[1])}), s):
                continue
            for h in sorted(hold, key=repr):
                if h in skip:
                    continue  # the variable itself, read by a caller: it sees what it holds
                if h == "?":
                    held.append(f"whoever calls {self.shown(f.fdef.name)}")
                elif self.visible(key, h) and self.readable(f, state, h):
                    if h[1] not in names:
                        names.append(h[1])
                else:
                    held.append(self.caller_variable(h[1], f.fdef.name))
        # the entry function's argument (or a global): off the differentiated path Python's own
        # operation changes it where the caller sees it, as Python does
        callers = key == "" and any(o[0] in _ENTRY_KINDS for o in objs)
        if not names and not held and not callers:
            return None
        must = sorted(n for n in names if (key, n) in state.same.get(operand, frozenset()))
        sharing = Sharing(names=names, held="; ".join(dict.fromkeys(held)) or None, must=must)
        if u.mutation:
            return sharing if names or held else None
        self._confinement(f, s, objs, sharing)
        if not names and not held and not sharing.confined:
            return None  # the rebinding: nothing else reads it, a derivative may
        return sharing

    def _mutation_sharing(self, f: _Func, s, objs, skip, state):
        """Who else may read the container a change in place (``xs.append(v)``) changes, by
        direct evidence -- a variable whose value is or contains the very object, here or, for
        an object the function was given, at a call of it -- so that what may be anything (a
        cell, TOP) makes no suspect of everything: the check compares values when it runs, and
        refuses only where one really holds it."""
        key = f.key
        objs = frozenset(o for o in objs if o is not TOP)
        names, held = [], []
        for n in sorted(self.live_after.get(id(s), ()) - skip, key=repr):
            if objs & self.reach(self.var_value(f, state, n).objs, state):
                if self.visible(key, n) and self.readable(f, state, n):
                    names.append(n[1])
                else:
                    held.append(self.shown(n[1]))
        # an object it was given: its callers' variables that hold it and read it after
        todo = [(f, objs)]
        seen = set()
        while todo:
            g, given = todo.pop()
            entries = [o for o in given if o[0] in _ENTRY_KINDS and o[1] == g.key]
            if not entries or g.key in seen:
                continue
            seen.add(g.key)
            if g.escapes or (g.key == "" and any(o[2][1] in self.held for o in entries)):
                held.append(f"whoever calls {self.shown(g.fdef.name)}")
                continue
            for c in self.calls:
                if c.callee != g.key:
                    continue
                h = self.funcs[c.caller]
                image = frozenset().union(
                    *(self.entry_image(h, c, (o[0], o[2])) for o in entries)
                ) - {TOP}
                for n in sorted(c.live - skip, key=repr):
                    if image & self.reach(self.var_value(h, c.state, n).objs, c.state):
                        if self.visible(key, n) and self.readable(f, state, n):
                            names.append(n[1])
                        else:
                            held.append(self.caller_variable(n[1], g.fdef.name))
                todo.append((h, image))
        if not names and not held:
            return None
        names = list(dict.fromkeys(names))
        return Sharing(names=names, held="; ".join(dict.fromkeys(held)) or None, must=[])

    def shown(self, name: str) -> str:
        return self.unit.namer.shown(name)

    def caller_variable(self, name: str, callee: str) -> str:
        """A message's words for the variable ``name`` of a function that calls ``callee``."""
        if callee in self.unit.namer.meaning:  # a loop's function: the code around the loop
            return f"{self.shown(name)} (outside {self.unit.namer.meaning[callee]})"
        return f"{self.shown(name)} of the function that calls `{callee}`"

    def values_ever(self, f, upto=None):
        """(variable -> every value it holds anywhere in ``f``, the heap of all its points):
        one more pass over ``f`` (its summaries are final), which records them. With ``upto``:
        at the points after the statements placed up to that one (``order``) only; at most
        ``_UPTO_PASSES`` such passes a function (then everywhere: a superset)."""
        if upto is not None and (f.key, upto) not in self.ever:
            self._upto_passes[f.key] = self._upto_passes.get(f.key, 0) + 1
            if self._upto_passes[f.key] > _UPTO_PASSES:
                upto = None
        k = f.key if upto is None else (f.key, upto)
        if k not in self.ever:
            saved = self.calls, self.updates
            self.calls, self.updates = [], []
            self._track, self.ever[k] = (k, upto), ({}, {})
            try:
                self._points_to(f)
            finally:
                self._track = None
                self.calls, self.updates = saved
        return self.ever[k]

    def readable(self, f, state, var) -> bool:
        """Is ``var`` surely assigned at ``state`` (so the check may read it)? A local variable
        assigned on every path there; a global or a closure's variable of the entry function
        that exists; an enclosing function's variable assigned at every call of ``f``."""
        if var[0] == f.key:
            return var in state.bound
        return var in self.outer_bound(f.key)

    def outer_bound(self, key) -> frozenset:
        """The outer variables surely assigned whenever the function ``key`` runs: the entry
        function's globals and closure variables that exist, and what is assigned at every call
        of it (a greatest fixpoint over the calls)."""
        if not hasattr(self, "_outer_bound"):
            every = frozenset(v for f in self.funcs.values() for v in f.entry_vars)
            known = frozenset(v for v in every if v[0] is None and self._exists(v[1]))
            out = {k: every for k in self.funcs}
            for k, f in self.funcs.items():
                if not k or f.escapes:
                    out[k] = known
            changed = True
            while changed:
                changed = False
                for k, f in self.funcs.items():
                    if not k or f.escapes:
                        continue
                    new = known
                    sites = [c for c in self.calls if c.callee == k]
                    if sites:
                        new = frozenset.intersection(
                            *(frozenset(c.state.bound) | out[c.caller] for c in sites)
                        )
                    new = (new | known) & out[k]
                    if new != out[k]:
                        out[k], changed = new, True
            self._outer_bound = out
        return self._outer_bound[key]

    def _exists(self, name) -> bool:
        """Does the entry function see a value under ``name`` (a global, a builtin, a closure
        variable already assigned)?"""
        fn = self.unit.fn
        cells = dict(zip(fn.__code__.co_freevars, fn.__closure__ or ()))
        if name in cells:
            try:
                _ = cells[name].cell_contents
            except ValueError:  # an empty cell: not assigned yet
                return False
            return True
        return name in self.globals or hasattr(builtins, name)

    def _confinement(self, f, s, objs, sharing: Sharing) -> None:
        """May the update run as Python's own in-place operation, where no derivative reads a
        variable that may hold the value (``python_may_run_in_place``)? If the value was made in
        this activation, or is an argument or a global of the entry function, and stays in the
        function: then record the statements that name a variable holding it (``mentions``:
        none may compute an active value), and the parameters and globals that may hold it
        only if the caller passed one array twice (``related``: checked at run time)."""
        key = f.key
        if objs & _UNKNOWN or sharing.held:
            return
        for o in objs:
            if not (o[1] == key and (o[0] == "site" or (key == "" and o[0] in _ENTRY_KINDS))):
                return
        ever, heap = self.values_ever(f)
        values = dict(ever)
        for v in f.entry_vars:
            if v not in values and not self.irrelevant_global(v):
                values[v] = Val(frozenset({_entry(key, v)}))
                heap = {**heap, _entry(key, v): frozenset({_contents(key, v)})}
        direct, related = set(), set()
        for v, val in values.items():
            reach = _reach(val.objs, heap)
            if objs & reach:
                direct.add(v)
            elif self.overlap(f, objs, reach):
                related.add(v)
        assigned = {
            n.id
            for n in self._own_nodes(f.fdef)
            if isinstance(n, A.Name) and isinstance(n.ctx, A.Store)
        }
        own_names = {n.id for n in self._own_nodes(f.fdef) if isinstance(n, A.Name)}
        for v in related:  # the entry value, unchanged, named here: the check can compare it
            if v[1] in assigned or not self.visible(key, v) or v[1] not in own_names:
                return
        names = {v[1] for v in direct}
        mentions = []
        for st in statements(f.fdef.body):
            if isinstance(st, A.FunctionDef):
                if names & set(A.names_in(st)):
                    return  # read by a nested function
                continue
            used = {n.id for n in self._statement_nodes(st) if isinstance(n, A.Name)}
            if not used & names:
                continue
            if not _stays_local(st):
                return
            mentions.append(st)
        sharing.confined = True
        sharing.mentions = mentions
        sharing.related = sorted(v[1] for v in related)
