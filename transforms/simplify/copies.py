"""Copies: ``a = b`` is propagated, one of its names kept.

Invariant: after a sweep of ``copies``, a copy ``a = b`` remains only where neither name can take
the other's place: a parameter, a borrowed (``nonlocal``) or shared name (a cell), a name assigned
more than once, or one whose renaming a nested function would capture. ``b = e; a = b`` with ``b``
used nowhere else is ``a = e``. Of the two names the user's is kept over a temporary's. Names move:
the driver analyses the tree again after a sweep that changed something.

Tests: tests/test_simplify_rewrites.py, its case ``copies`` (the effect, with the rewrite and
without, and the gradient).
"""

from __future__ import annotations

import re

from .. import astlib as A
from .. import scoping as S
from ._common import statement_lists

_VERSIONED = re.compile(r"_\d+$")


class Copies:
    """Copy propagation (a mixin of ``Simplify``: its state is the driver's)."""

    def copies(self, f) -> bool:
        """Remove copies ``a = b``; several per sweep, as long as they touch different names."""
        fa = self.facts[id(f)]
        counts, loads, params, borrowed, local = (
            fa.assignments,
            fa.reads,
            fa.params,
            fa.declared,
            fa.local,
        )
        touched: set[str] = set()
        changed = False
        # what each change does to the scope's counts, for the driver's ``_recount`` -- where no
        # function is nested in ``f`` (a rename would change its facts too: analysed again)
        count = self._count_moved if not fa.nested and self.removed is not None else None
        Assign, Name = A.Assign, A.Name
        blocks = statement_lists(f)  # (the same lists after this sweep: it removes assignments)
        copies = []  # (block, a = b), in order: what the second loop looks at (for speed)
        # The statements taken out, by id: each block is rebuilt once, at the end of the sweep
        # (for speed: removing them one by one from a block of 45,000 statements was quadratic);
        # until then the sweep reads a block as if they were gone.
        gone: set[int] = set()
        for block in blocks:
            # b = e; a = b  ->  a = e   (b used nowhere else)
            i = 0
            while i < len(block) - 1:
                first, second = block[i], block[i + 1]
                if _is_copy(first):
                    copies.append((block, first))
                if (  # (the value first, for speed: it is seldom a name)
                    second.__class__ is Assign
                    and second.value.__class__ is Name
                    and first.__class__ is Assign
                    and first.targets[0].__class__ is Name
                    and second.targets[0].__class__ is Name
                    and second.value.id == first.targets[0].id
                ):
                    b, a = first.targets[0].id, second.targets[0].id
                    if (
                        b not in params | borrowed | touched
                        and a not in touched
                        and counts.get(b) == 1
                        and loads.get(b) == 1
                    ):
                        first.targets = second.targets
                        gone.add(id(second))
                        touched |= {a, b}
                        changed = True
                        if count is not None:  # (``b``'s store and read gone)
                            count(f, b)
                        i += 1  # (past ``second``: the merged statement pairs with no other)
                i += 1
            # the last statement was never ``first`` (unless merged into the one before it)
            if i == len(block) - 1 and _is_copy(block[i]):
                copies.append((block, block[i]))
        renames: dict[str, str] = {}
        for block, s in copies:
            a, b = s.targets[0].id, s.value.id
            if a in touched or b in touched:
                continue
            if a == b:
                gone.add(id(s))
                changed = True
                if count is not None:
                    count(f, a)
                continue
            if a in params or a in borrowed or b in borrowed or counts.get(a, 0) != 1:
                # a shared variable (a cell) is one name for all its values: ``b`` named
                # ``a`` would read a later value of it where ``b`` is still read
                if not (
                    self._prefer(a, b)
                    and a not in params
                    and a not in borrowed
                    and not self._shared(a)
                ):
                    continue
            if b not in local or counts.get(b, 0) + (b in params) > 1:
                continue
            if self._prefer(a, b) and b not in params and counts.get(b, 0) == 1:
                if self._can_rename(f, b, a) and _unused_between(block, b, s, a, gone):
                    gone.add(id(s))
                    renames[b] = a
                    touched |= {a, b}
                    changed = True
                    if count is not None:  # (the copy stored ``a`` and read ``b``)
                        count(f, b, a)
                    continue
            if counts.get(a, 0) != 1 or a in params or a in borrowed:
                continue
            if not self._can_rename(f, a, b):
                continue
            gone.add(id(s))
            renames[a] = b
            touched |= {a, b}
            changed = True
            if count is not None:
                count(f, a, b)
        if gone:
            for block in blocks:
                block[:] = [s for s in block if id(s) not in gone]
        if changed and count is None:
            self.uncounted = True
        # (all at once, in one walk: each rename's names are touched by no other one, so
        # applying them together is applying them one after the other)
        S.rename_free(f.body, renames)
        return changed

    def _count_moved(self, f, old: str, new: str | None = None) -> None:
        """Count into the driver's ``removed`` what a sweep's change did to ``f``'s own scope: a
        copy or a merged temporary took out one store and one read -- of ``old``, or, where every
        mention of ``old`` became one of ``new``, of ``new`` (the counts moved with the names:
        ``f``'s facts are those from before the sweep)."""
        fa = self.facts[id(f)]
        _, deltas_s, deltas_l = self.removed.setdefault(id(f), (f, {}, {}))
        for delta, counts in ((deltas_s, fa.stores), (deltas_l, fa.loads)):
            if new is None:
                delta[old] = delta.get(old, 0) - 1
                continue
            moved = counts.get(old, 0)
            delta[old] = delta.get(old, 0) - moved
            delta[new] = delta.get(new, 0) + moved - 1

    def _shared(self, name: str) -> bool:
        """Is ``name`` a variable closures share (a cell), or its adjoint or tangent?"""
        cells = self.unit.cells
        return name in cells or self.namer.primal(name) in cells

    def _prefer(self, a: str, b: str) -> bool:
        """Keep the copy's target ``a`` rather than its source ``b``? (A user name over a temporary.)"""
        return (
            "_join" in b
            or b in self.namer.temps
            or (_VERSIONED.search(b) is not None and _VERSIONED.search(a) is None)
        )

    def _can_rename(self, f, a: str, b: str) -> bool:
        """Renaming ``a`` to ``b`` captures nothing: no nested function using ``a`` binds ``b``."""
        for g in self.facts[id(f)].nested:
            gf = self.facts[id(g)]
            if a in gf.free and (b in gf.local or not self._can_rename(g, a, b)):
                return False
        return True


def _is_copy(s) -> bool:
    """Is ``s`` a copy ``a = b``?"""
    Assign, Name = A.Assign, A.Name
    return s.__class__ is Assign and s.value.__class__ is Name and s.targets[0].__class__ is Name


def _unused_between(block, b: str, copy, a: str, gone=frozenset()) -> bool:
    """In ``block`` (without the statements whose ids are in ``gone``), is ``a`` neither read nor
    written after ``b`` is assigned and before the copy ``a = b``? (Then ``b`` can be named ``a``
    from its assignment on: ``b = a * a; ...; a = b`` with ``a`` read in between must keep both
    names -- the reads want the old ``a``.)"""
    if gone:
        block = [s for s in block if id(s) not in gone]
    start = None
    for i, s in enumerate(block):
        if s is copy:
            break
        if isinstance(s, A.Assign) and any(A.is_name(n, b) for t in s.targets for n in A.walk(t)):
            start = i
    else:
        return False
    if start is None:
        return False
    between = block[start + 1 : block.index(copy)]
    if any(a in A.names_in(s) for s in between):
        return False
    # and after it, ``b`` is not read once ``a`` is assigned again (``s4 = s3; s4 += 1.0;
    # s7 = s3`` wants the old value)
    rebound = False
    for s in block[block.index(copy) + 1 :]:
        if rebound and b in A.names_in(s):
            return False
        if any(
            isinstance(n, A.Name) and n.id == a and isinstance(n.ctx, A.Store) for n in A.walk(s)
        ):
            rebound = True
    return True
