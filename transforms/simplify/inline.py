"""Inline: each continuation called exactly once is beta-reduced into its caller.

Invariant: after ``inline_all``, no continuation (a join, the continuation of a call) that its
scope reads once, and that returns at its end or never, is left defined: its body stands where it
was called, its parameters assigned their arguments, its locals renamed where they would capture a
name of the function they move into, its ``nonlocal`` declarations moved to that function. The
innermost are inlined first, so each moves in already flat. Straight-line code is one function.

Tests: tests/test_simplify_rewrites.py, its case ``inline`` (the effect, with the rewrite and
without, and the gradient); tests/test_passes.py, ``test_simplify_straight_line_code_is_flat``,
``test_simplify_keeps_scope_facts_current``, ``test_simplify_facts_agree_with_a_fresh_analysis``.
"""

from __future__ import annotations

from .. import anno
from .. import astlib as A
from .. import scoping as S
from ._common import statement_lists


def _ifs_around(fdef, block) -> list:
    """The ``if`` statements of ``fdef``'s own scope that ``block`` (one of its statement lists)
    is inside, outermost first."""

    def visit(stmts, path):
        if stmts is block:
            return path
        for s in stmts:
            if isinstance(s, A.If):
                found = visit(s.body, path + [s]) or visit(s.orelse, path + [s])
                if found is not None:
                    return found
        return None

    try:
        return visit(fdef.body, []) or []
    finally:
        visit = None  # (it calls itself: a reference cycle, which kept the tree alive until a collection)


class Inline:
    """Beta reduction of continuations called once (a mixin of ``Simplify``: its state is the
    driver's)."""

    def inline_all(self, root, every: list) -> None:
        """Inline every continuation called once, innermost first, so each moves in already flat
        (``every``: ``functions(root)``)."""
        self.summaries: dict = {}  # statement -> its names, for the repeated analyses below
        # an inlining changes the function it inlines into (and, renaming, those it moves in):
        # the facts of the others are kept from one analysis to the next
        self.scopes = S.Scopes(self.summaries)
        self.inlined = False
        if len(every) == 1:
            return  # one function: nothing to inline (for speed: no sweep of its statements)
        for f in reversed(every):  # deeper definitions come later in breadth-first order
            if not any(isinstance(d, A.FunctionDef) for b in statement_lists(f) for d in b):
                continue  # nothing to inline into it (a function defines others as statements)
            while self.inline_into(f):
                self.inlined = True

    def inline_into(self, f) -> bool:
        facts = self.scopes.analyze(f)
        own = facts[id(f)]
        if not any(self._may_inline(d, own, facts) for d in own.nested):
            # For speed: every function is asked once more after its last inlining, by then
            # with all the statements inlined into it -- the facts answer without a scan.
            return False
        calls = {}
        for block in statement_lists(f):
            for i, s in enumerate(block):
                if isinstance(s, (A.Assign, A.Expr)) and isinstance(s.value, A.Call):
                    func = s.value.func
                    if isinstance(func, A.Name) and not s.value.keywords:
                        calls.setdefault(func.id, (block, i))
        for block in statement_lists(f):
            for d in block:
                if (
                    isinstance(d, A.FunctionDef)
                    and self._may_inline(d, own, facts)
                    and d.name in calls
                ):
                    self.inline(f, d, block, *calls[d.name], facts)
                    return True
        return False

    @staticmethod
    def _may_inline(d, own, facts) -> bool:
        """Is ``d``, a function defined in the scope ``own`` describes, a continuation that
        scope reads once and that returns as an inlined body can (at its end, or never)?"""
        return (
            anno.hasanno(d, anno.CONT)
            and own.reads.get(d.name) == 1
            and own.loads.get(d.name) == 1
            and facts[id(d)].returns == (1 if isinstance(d.body[-1], A.Return) else 0)
        )

    def inline(self, f, d, def_block, call_block, index, facts) -> None:
        """Beta-reduce the call ``call_block[index]`` of ``d``, renaming what would be captured."""
        call_stmt = call_block[index]
        call = call_stmt.value
        params = A.arg_names(d.args)
        args = list(call.args)
        if len(args) != len(params):  # pragma: no cover - we generate these calls
            raise AssertionError("continuation call arity")
        targets = set()
        if isinstance(call_stmt, A.Assign):
            targets = {n.id for n in A.walk(call_stmt.targets[0]) if isinstance(n, A.Name)}
        own, inner = facts[id(f)], facts[id(d)]
        # names that mean something in f apart from d: a local of d that is one of them moves in
        # under a new name
        outside = set(own.loads) | set(own.stores) | own.params
        for g in own.nested:
            if g is not d:
                outside |= facts[id(g)].free
        before = self._names_before(f, call_stmt, d)
        mapping = {}
        for n in sorted(inner.local):
            if n in params:
                arg = args[params.index(n)]
                if A.is_name(arg, n) and not inner.assignments.get(n):
                    continue  # the argument is the parameter itself
            if n in targets and n not in before:
                continue  # the call's result variable and the continuation's own are one
            if n in outside:
                mapping[n] = self.namer.version(n)
        if mapping:
            for n in A.walk(d):  # changed in place: their cached summaries are stale
                self.summaries.pop(id(n), None)
                if isinstance(n, A.FunctionDef) and n is not d:
                    self.scopes.changed(n)
        S.rename_free(d.body, mapping)
        new_params = [mapping.get(p, p) for p in params]
        stmts = []
        for p, a in zip(new_params, args):
            if not A.is_name(a, p):
                stmts.append(A.copy_location(A.assign(p, a), call_stmt))
        body = [s for s in d.body if not isinstance(s, A.Nonlocal)]
        left = [s for s in d.body if isinstance(s, A.Nonlocal)]  # what stays behind
        value = None
        if body and isinstance(body[-1], A.Return):
            value = body[-1].value
            left.append(body[-1])
            body = body[:-1]
        added = stmts[:]  # the parameters' assignments
        stmts += body
        if isinstance(call_stmt, A.Assign):
            result = A.const(None) if value is None else value
            stmts.append(A.copy_location(A.assign(call_stmt.targets[0], result), call_stmt))
            added.append(stmts[-1])
        # d's borrowed adjoints: f owns them now, or borrows them in turn
        borrowed = inner.declared - own.local
        call_block[index : index + 1] = stmts
        def_block.remove(d)
        for s in _ifs_around(f, call_block):  # their blocks changed: their summaries are stale
            self.summaries.pop(id(s), None)
        if borrowed:
            self._add_nonlocals(f, borrowed)
            # new, or changed in place: either way f declares what it did and ``borrowed``
            added.append(f.body[0])
        if mapping:  # renamed: scanned again (their summaries are gone)
            self.scopes.update(f, [call_block, def_block], [call_stmt, d], added + body)
        else:  # as they were in d
            self.scopes.update(f, [call_block, def_block], [call_stmt, d], added, (d, left))

    def _names_before(self, f, stop, d) -> set[str]:
        """Names mentioned in ``f`` before statement ``stop`` (pre-order), outside ``d``."""
        seen: set[str] = set()
        found = False

        def visit(block):
            nonlocal found
            for s in block:
                if found:
                    return
                if s is stop:
                    found = True
                    return
                if s is d:
                    continue
                if isinstance(s, A.If):
                    seen.update(n.id for n in A.walk(s.test) if isinstance(n, A.Name))
                    visit(s.body)
                    visit(s.orelse)
                else:
                    seen.update(n.id for n in A.walk(s) if isinstance(n, A.Name))

        visit(f.body)
        visit = None  # (it calls itself: a reference cycle, which kept the tree alive until a collection)
        return seen

    def _add_nonlocals(self, f, names) -> None:
        if f.body and isinstance(f.body[0], A.Nonlocal):
            self.summaries.pop(id(f.body[0]), None)
            f.body[0].names = sorted(set(f.body[0].names) | set(names))
        else:
            decl = A.copy_location(A.nonlocal_(names), f.body[0] if f.body else f)
            f.body.insert(0, decl)
