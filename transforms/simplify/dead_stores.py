"""Dead stores: an assignment of an adjoint or temporary nothing reads is removed.

Invariant: after a sweep of ``dead_stores(f)``, no assignment in ``f`` to generated names (not the
user's, not temporaries the forward pass shows) that no later statement, closure it runs, or
closure used as a value reads, remains: a pure one is removed, one whose call must run (it may
call a function it is given) becomes a plain call; a continuation nothing calls any more is
removed. What each removal took out is counted (``_count_removed``).

Tests: tests/test_simplify_rewrites.py, its case ``dead_stores`` (the effect, with the rewrite and
without, and the gradient); tests/test_passes.py,
``test_simplify_leaves_no_dead_store_though_it_sweeps_again_only_where_needed``,
``test_simplify_recounted_facts_agree_with_a_fresh_analysis``.
"""

from __future__ import annotations

import operator

from .. import anno
from .. import astlib as A
from .. import scoping as S
from ._common import _inert

# ``operator.isub`` and the like: a user's ``y -= v`` run as Python's in-place operation
# (ShiftReset's ``python_in_place``) changes ``y``'s array, which another name may hold and read
# -- never pure, whether or not its result is read
_IN_PLACE = frozenset(
    getattr(operator, n)
    for n in dir(operator)
    if n.startswith("i") and (hasattr(operator, n[1:]) or hasattr(operator, n[1:] + "_"))
)


def _empty(fdef) -> bool:
    return len(fdef.body) == 1 and isinstance(fdef.body[0], A.Pass)


def _used_as_value(f, name: str) -> bool:
    """Is the function ``name`` mentioned in ``f`` other than as the callee of a call?"""
    called = set()
    for n in A.walk(f):
        if isinstance(n, A.Call) and isinstance(n.func, A.Name) and n.func.id == name:
            called.add(id(n.func))
    return any(
        isinstance(n, A.Name) and n.id == name and isinstance(n.ctx, A.Load) and id(n) not in called
        for n in A.walk(f)
    )


class DeadStores:
    """Liveness, backwards through a function, and the stores it finds dead (a mixin of
    ``Simplify``: its state is the driver's)."""

    def dead_stores(self, f) -> bool:
        # A function of the user's used as a value (`Closure(g_bp)`, stored, returned) may run
        # in any call made after, or after `f` returns: what it reads is live there.
        # So may one nested deeper that its own parent uses as a value: returned from there
        # (`def make(c): def inner(u): return u * c + v; return inner`), it runs in `f` later.
        reads, _ = self.effects
        self.escaped = set()
        parents = [(f, g) for g in self.facts[id(f)].nested]
        while parents:
            parent, g = parents.pop()
            if not anno.hasanno(g, anno.CONT) and _used_as_value(parent, g.name):
                self.escaped |= reads.get(g.name, set())
            parents += [(g, h) for h in self.facts[id(g)].nested]
        live_out = set(self.facts[id(f)].declared) | self.escaped
        changed = [False]
        self._live(f, f.body, live_out, changed)
        return changed[0]

    def _reads(self, f, node) -> set[str]:
        """Names a statement (or an expression) reads, including through the closures it runs
        (those used as values, by any call it makes)."""
        out = S.loads(node)
        reads, writes = self.effects
        if reads:  # (for speed: without closures, no name is asked about)
            for name in [n for n in out if n in reads]:
                out |= reads[name] | writes[name]
        if self.escaped and any(isinstance(n, A.Call) for n in S.walk_own(node)):
            out = out | self.escaped
        return out

    def _removable(self, f, s) -> bool:
        if not (isinstance(s, A.Assign)):
            return False
        t = s.targets[0]
        # (most targets are one name: no walk for it, for speed)
        names = (
            [t.id] if t.__class__ is A.Name else [n.id for n in A.walk(t) if isinstance(n, A.Name)]
        )
        if not names or not isinstance(s.targets[0], (A.Name, A.Tuple)):
            return False
        if not all(n in self.namer.generated and n not in self.namer.temps for n in names):
            return False
        return self._pure(s.value)

    def _pure(self, e) -> bool:
        """Calls only primitives, non-differentiable functions, rules and runtime helpers --
        none given a function it may call (``call_bp(g, after_g_L5, ...)`` runs the rest of
        the program in its continuation, whatever it returns)."""
        helpers = self._helpers()
        for n in S.walk_own(e):  # (an expression: no function in it; for speed, no operators)
            if isinstance(n, A.Call):
                callee = anno.getanno(n.func, anno.CALLEE)
                if type(callee) is type(operator.isub) and callee in _IN_PLACE:
                    return False
                if anno.getanno(n.func, anno.CALLEE_KIND) in ("primitive", "nondiff"):
                    continue
                path = A.dotted(n.func)
                if path is None or path.split(".")[0] not in helpers:
                    return False
                given = n.args + [k.value for k in n.keywords]
                if any(isinstance(a, A.Name) and a.id in self.functions for a in given):
                    return False
        return True

    def _helpers(self) -> set[str]:
        """The names of the runtime's helpers the emitted code calls (injected, not callees):
        remembered while no name is injected (names are only added while simplifying)."""
        key = (len(self.unit.injected), len(self.unit.callees))
        if getattr(self, "_helpers_key", None) != key:
            self._helpers_key = key
            self._helper_names = set(self.unit.injected) - set(self.unit.callees)
        return self._helper_names

    def _live(self, f, block, live: set, changed) -> set:
        """What is live before ``block``, given ``live`` after it (updated in place); each
        dead store removed from it."""
        # the block is rebuilt backwards, not edited in place (removing statements one at a
        # time from a long block was quadratic)
        kept = []
        for s in reversed(block):
            if isinstance(s, A.FunctionDef):
                if not self.facts[id(f)].reads.get(s.name):
                    if _inert(s):
                        changed[0] = True  # a function nothing calls (a continuation inlined
                        self.uncounted = True  # away, a function whose derivative Nested made)
                        continue
                    if not _empty(s):
                        # its defaults must still be evaluated (they may call), but its body
                        # never runs: emptied -- its `nonlocal` declarations too, which would
                        # name adjoints this sweep may remove (fuzz seed 801178)
                        s.body = [A.copy_location(A.Pass(), s)]
                        changed[0] = True
                        self.uncounted = True
                kept.append(s)
                continue
            if isinstance(s, A.If):
                a = self._live(f, s.body, set(live), changed)
                b = self._live(f, s.orelse, set(live), changed)
                live = a | b | self._reads(f, s.test)
                kept.append(s)
                continue
            if isinstance(s, A.Assign):
                t = s.targets[0]
                targets = {t.id} if t.__class__ is A.Name else S.names(t)  # (for speed)
                if isinstance(s.targets[0], (A.Name, A.Tuple)) and not (targets & live):
                    if self._removable(f, s):
                        changed[0] = True
                        self._count_removed(f, s, whole=True)
                        continue
                    if all(
                        t in self.namer.generated and t not in self.namer.temps for t in targets
                    ):
                        # a call that must run, whose result nothing needs: a plain call
                        kept.append(A.copy_location(A.expr_stmt(s.value), s))
                        changed[0] = True
                        self._count_removed(f, s, whole=False)
                        live |= self._reads(f, s)
                        continue
                if isinstance(s.targets[0], (A.Name, A.Tuple)):
                    live -= targets
                # (for speed: a name as target reads nothing -- its value is what is read)
                live |= self._reads(f, s.value if t.__class__ is A.Name else s)
                kept.append(s)
                continue
            live |= self._reads(f, s)
            kept.append(s)
        kept.reverse()
        block[:] = kept
        return live
