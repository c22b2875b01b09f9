"""After Simplify, continuations used once are inlined and no code handles a zero or dead adjoint.

Straight-line code becomes flat forward-then-backward code, the way one writes a backward pass by
hand; only control-flow joins and calls of user functions remain closures. The pass is a driver
(this module) and rewrites, one a module, each stating its invariant. In order:

1. **inline** (``inline.py``) each continuation called exactly once (beta reduction: its locals
   are renamed when they would capture a name of the function they move into; ``nonlocal``
   declarations follow) -- joins and the continuations of calls: LowerCPS writes primitives'
   continuations in place;
2. **definedness** (``definedness.py``): where an adjoint is known to be absent (``None``), still
   ``0.0`` or present, ``acc(x_bar, e)`` becomes ``e`` or ``x_bar + e`` and ``x_bar if x_bar is
   not None else zeros_like(x)`` becomes one side -- what remains is only where it depends on the
   path taken;
3. **copies** ``a = b`` are propagated (``copies.py``), **dead stores** to adjoints and temporaries
   removed (``dead_stores.py``);
4. **forward substitution** (``forward.py``): a temporary used once, in the next statement, moves
   back into it, so the forward pass shows the user's expressions again (``h = np.tanh(W @ x +
   b)``); with it, **tails** (``tails.py``): a continuation that only passes its values on to
   ``k`` is ``k``;
5. **negations** (``negations.py``): ``t = -n``, where ``n``'s value is a product or quotient of
   a negation (the sigmoid's adjoint), cancels the two signs -- exactly;
6. **peephole** (``peephole.py``): constant folding, ``x ** 1``;
7. **gather** (``gather.py``): the adjoints of a dict's entries, added to its adjoint one read at
   a time (``p_bar = p_bar + getitem_adjoint(w_bar, p, "w")``), are added as one
   ``items_adjoint(p, {"w": w_bar, "b": b_bar})`` -- one merge of the parameters' ``Sparse``
   adjoint, not one a parameter.

``run`` inlines, specializes by definedness once, then repeats copies, dead stores, forward
substitution and tails until a round changes nothing (a fixed point), then cancels negations,
folds and gathers. The rewrites are mixins of ``Simplify``: they share its state (the unit, the
scope facts, what each closure reads and writes, the counts of what was taken out), kept by the
driver. ``_common.py`` holds what they share.

Every rewrite preserves what the program computes; tests run both this stage's output and the
previous one's and compare the gradients (tests/test_gradients.py), and each rewrite has tests of
its own (named in its module's docstring).
"""

from __future__ import annotations

from .. import astlib as A
from .. import scoping as S
from ..unit import Unit
from ._common import (
    MAYBE,
    NONE,
    SET,
    ZERO,
    _drop_empty,
    closure_effects,
    functions,
    statement_lists,
)
from .copies import Copies
from .dead_stores import DeadStores
from .definedness import Definedness
from .forward import Forward
from .gather import Gather
from .inline import Inline
from .negations import Negations
from .peephole import _Peephole
from .tails import Tails

__all__ = [
    "MAYBE",
    "NONE",
    "SET",
    "ZERO",
    "Simplify",
    "closure_effects",
    "functions",
    "statement_lists",
]


class Simplify(Inline, Definedness, Copies, DeadStores, Tails, Forward, Negations, Gather):
    """The driver: ``run`` applies the rewrites (its bases, one a module) to a fixed point and
    keeps the state they share -- the scope facts, brought up to date after each round by
    analysing the tree again or, when every change was counted, by ``_recount``."""

    name = "simplify"
    invariant = "continuations used once are inlined; no zero or dead adjoint code remains"

    def run(self, unit: Unit) -> None:
        self.unit = unit
        self.namer = unit.namer
        self.escaped: set[str] = set()  # what closures used as values read (see dead_stores)
        root = unit.tree
        every = functions(root)
        # the names of functions (continuations among them): a helper given one may call it
        self.functions = {f.name for f in every}
        self.functions.add(unit.cont_name)
        ctx = unit.ctx
        self.acc = unit.inject(ctx.runtime("acc"), "acc")
        self.zeros = unit.inject(ctx.runtime("zeros_like"), "zeros_like")
        self.inline_all(root, every)
        self._definite: dict[int, set] = {}
        declared = _declared_alone(root) if len(every) == 1 else None
        if declared is None:
            # the facts the inlining kept up to date are those of the tree as it is now (without
            # an inlining, none were kept: one scan, without the statements' summaries, is
            # quicker); definedness counts its changes into them
            self.facts = self.scopes.analyze(root) if self.inlined else S.analyze(root)
            self.effects = closure_effects(root, self.facts)
            self._start_counting()
            for f in self._functions(root):
                self.definedness(f)
        else:
            # One function (straight-line code): definedness asks the facts only what it
            # declares -- no closure runs -- so they are made after it, of the smaller tree it
            # leaves, and what it takes out is not counted (for speed: a tenth of this pass).
            self.facts = {id(root): S.Facts(root, declared=declared)}
            self.effects = {}, {}
            self.removed = None  # (not counting: see ``_count_removed``)
            self.definedness(root)
            self.analyze(root)
            self._start_counting()
        # For speed (a chain of temporaries takes a round per link: tree_lstm needs a dozen), a
        # round after one whose only changes were counted -- forward substitutions, dead stores
        # removed from a function -- does not analyse the tree again, and looks for dead stores
        # only where they may have become dead: see ``_recount``.
        counted = not self.uncounted  # the last changes are all in ``substituted``/``removed``
        clean: set[int] = set()  # functions a dead-store sweep would leave as they are
        while True:
            if counted:
                self._recount(root)
            else:
                self.analyze(root)
                clean = set()
            self._start_counting()
            changed = False
            every = self._functions(root)
            for f in every:
                changed |= self.copies(f)
            if changed:
                # names moved: the facts brought up to date (``copies`` counted what it changed
                # where no function is nested in it) or made again before anything else reads them
                counted = not self.uncounted
                continue
            other = False  # a change that is not counted
            for f in every:
                if id(f) not in clean:
                    if not self.dead_stores(f):
                        clean.add(id(f))
                changed |= self.forward_substitute(f)
                other |= self.return_directly(f)
                other |= self.eta(f)
            other |= self.uncounted
            if self.removed:
                changed = True
                clean = self._swept_clean(every, root)
            counted = not other
            if not (changed or other):
                break
        for f in every:  # (the facts are those of the last round, which changed nothing)
            self.cancel_negations(f)
        used = _Peephole(unit.injected).run(root)  # (``S.names(root)``, met by its walk)
        if self.gather_all(root):
            used = S.names(root)  # (names moved)
        for f in every:  # (the last round changed nothing, and these add or remove no function)
            _drop_empty(f)
        for n in list(unit.injected):
            if n not in used and n not in unit.callees:
                del unit.injected[n]

    def analyze(self, root) -> None:
        """Scope facts of every function, and what each closure's calls read and write."""
        self.facts = S.analyze(root)
        self.effects = closure_effects(root, self.facts)

    def _functions(self, root) -> list:
        """``functions(root)``, while the facts are current: where they say ``root`` defines no
        function, without a sweep of its statements (for speed: straight-line code is one
        function of thousands of statements, and the driver asks after each round)."""
        return functions(root) if self.facts[id(root)].nested else [root]

    @staticmethod
    def _swept_clean(every: list, root) -> set[int]:
        """After a round that removed dead stores: the functions (``id``) a sweep would leave as
        they are. One sweep of a function leaves no dead store in it when none of what it reads
        through closures can change: when the tree is that one function (see ``_recount``)."""
        return {id(root)} if len(every) == 1 else set()

    def _recount(self, root) -> None:
        """``analyze`` after a round whose only changes were counted, without visiting the tree:
        each forward substitution took one assignment and one read of a temporary out of its
        function's own scope (the value moved within that scope, its names counted as before);
        each dead store removed took its names' counts out (``self.removed``), or its targets'
        where its call stays, as a statement of its own.

        Why a dead-store sweep that removed nothing still removes nothing after forward
        substitutions (so the loop skips it): liveness before the removed ``t = e`` is what it
        was -- ``e``'s reads are live from the next statement on instead, and only inert
        statements lie between -- and after it nothing changed. Only where ``t`` is live can
        differ, and nothing assigns ``t`` any more. The statement that received ``e`` keeps its
        targets and the liveness after it, and whether it is removed depends on those alone once
        the sweep kept it. What closures read and write is unchanged: no nested function names
        ``t`` (it was assigned and read once, both in this scope).

        Why a sweep that removed stores needs no second one when the tree is one function: the
        sweep goes backwards, deciding each statement by what the statements kept after it read,
        so a second sweep meets the same statements with the same live names; what else decides
        -- the functions nested in it, the reads of closures it calls -- there is none of. In a
        tree of several functions a removal changes what a closure reads, and so what is live in
        its callers: every function is swept again.
        """
        deltas = self.removed
        for f, t in self.substituted:
            _, stores, loads = deltas.setdefault(id(f), (f, {}, {}))
            stores[t] = stores.get(t, 0) - 1
            loads[t] = loads.get(t, 0) - 1
        for f, stores, loads in deltas.values():
            S.recount(self.facts, f, stores, loads)
        self.effects = closure_effects(root, self.facts)

    def _start_counting(self) -> None:
        """Nothing taken out yet (since the facts were last made or brought up to date)."""
        self.substituted: list = []  # (f, t): a temporary forward substitution took out
        self.removed: dict[int, tuple] = {}  # id(f) -> (f, stores, loads): changes of counts
        self.uncounted = False  # a change not counted (a function removed): analyse again

    def _count_removed(self, f, node, whole: bool = True) -> None:
        """Take the names of ``node``, removed from ``f``'s own scope (``whole``), or only the
        targets of an assignment whose value stays, out of the counts ``_recount`` brings the
        facts up to date by (none while there are no facts to bring up to date: ``run``)."""
        if self.removed is None:
            return
        if node.__class__ is A.Name:  # (most removals are one name: counted as ``S.counts`` would)
            _, stores, loads = self.removed.setdefault(id(f), (f, {}, {}))
            delta = loads if node.ctx.__class__ is A.Load else stores
            if whole or delta is stores:
                delta[node.id] = delta.get(node.id, 0) - 1
            return
        counts = S.counts(node)
        if counts is None:  # a function defined in it
            self.uncounted = True
            return
        _, stores, loads = self.removed.setdefault(id(f), (f, {}, {}))
        for delta, names in ((stores, counts[0]), (loads, counts[1] if whole else {})):
            for name, c in names.items():
                delta[name] = delta.get(name, 0) - c


def _declared_alone(root) -> set[str] | None:
    """What ``root``'s statements declare ``nonlocal`` or ``global`` -- its facts' ``declared`` --
    where no function or class is defined in it; else None. (A sweep of its statements.)"""
    out: set[str] = set()
    stack = list(root.body)
    while stack:
        s = stack.pop()
        cls = s.__class__
        if cls is A.Nonlocal or cls is A.Global:
            out.update(s.names)
        elif cls is A.FunctionDef or cls is A.AsyncFunctionDef or cls is A.ClassDef:
            return None
        else:  # (statements hold statements only in their blocks; expressions hold none)
            for name in S.blocks_of(cls):
                block = getattr(s, name, None)
                if block.__class__ is list:
                    stack.extend(block)
    return out
