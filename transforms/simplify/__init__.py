"""After Simplify, continuations used once are inlined and no code handles a zero or dead adjoint.

Straight-line code becomes flat forward-then-backward code, the way one writes a backward pass by
hand; only control-flow joins and calls of user functions remain closures. In order:

1. **inline** each continuation called exactly once (beta reduction: its locals are renamed when
   they would capture a name of the function they move into; ``nonlocal`` declarations follow) --
   joins and the continuations of calls: LowerCPS writes primitives' continuations in place;
2. **definedness**: where an adjoint is known to be absent (``None``), still ``0.0`` or present,
   ``acc(x_bar, e)`` becomes ``e`` or ``x_bar + e`` and ``x_bar if x_bar is not None else
   zeros_like(x)`` becomes one side -- what remains is only where it depends on the path taken;
3. **copies** ``a = b`` are propagated, **dead stores** to adjoints and temporaries removed;
4. **forward substitution**: a temporary used once, in the next statement, moves back into it, so
   the forward pass shows the user's expressions again (``h = np.tanh(W @ x + b)``);
5. **peephole**: constant folding, ``x ** 1``;
6. **gather**: the adjoints of a dict's entries, added to its adjoint one read at a time
   (``p_bar = p_bar + getitem_adjoint(w_bar, p, "w")``), are added as one ``items_adjoint(p,
   {"w": w_bar, "b": b_bar})`` -- one merge of the parameters' ``Sparse`` adjoint, not one a
   parameter.

Every rewrite preserves what the program computes; tests run both this stage's output and the
previous one's and compare the gradients.
"""

from __future__ import annotations

import inspect
import re
import types

from .. import anno
from .. import astlib as A
from .. import scoping as S
from ..unit import Unit

# What is known of an adjoint at a point: absent (None), present, the number 0.0 (a Python
# number's adjoint starts there, never absent), or it depends on the path taken.
NONE, SET, ZERO, MAYBE = "none", "set", "zero", "maybe"
_VERSIONED = re.compile(r"_\d+$")


def functions(tree) -> list:
    """Every function definition in ``tree``, outermost first (definitions are statements here:
    lambdas are gone, so only statement lists are searched, not expressions)."""
    out = [tree]
    i = 0
    FunctionDef, If = A.FunctionDef, A.If
    while i < len(out):
        # ``statement_lists`` of out[i], each list's definitions in order, in one loop (for
        # speed: Simplify asks for the functions again after each round)
        todo = [out[i].body]
        while todo:
            block = todo.pop()
            ifs = []
            for s in block:
                cls = s.__class__
                if cls is FunctionDef:
                    out.append(s)
                elif cls is If:
                    ifs.append(s)
            for s in reversed(ifs):
                todo += [s.orelse, s.body]
        i += 1
    return out


def statement_lists(fdef):
    """The statement lists of ``fdef``'s own scope: its body and its branches, recursively."""
    out = []
    todo = [fdef.body]  # (a loop: a local function calling itself would be a reference cycle)
    while todo:
        block = todo.pop()
        out.append(block)
        for s in reversed(block):  # each ``if``'s body, then its else, in order
            if isinstance(s, A.If):
                todo += [s.orelse, s.body]
    return out


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


def _is_none(node) -> bool:
    return isinstance(node, A.Constant) and node.value is None


def _skip_guard(s):
    """``y_bar`` of ``if y_bar is not None:`` that cps put around a shift's rules, else None."""
    if not (isinstance(s, A.If) and anno.getanno(s, anno.GUARD)):
        return None
    t = s.test
    return t.left.id if isinstance(t, A.Compare) and isinstance(t.left, A.Name) else None


def _is_acc(node, acc: str) -> bool:
    """``acc(x_bar, e)`` as this transformation made it (a guard)."""
    return (
        isinstance(node, A.Call)
        and A.is_name(node.func, acc)
        and len(node.args) == 2
        and bool(anno.getanno(node, anno.GUARD))
    )


def _is_zero(node) -> bool:
    return isinstance(node, A.Constant) and type(node.value) is float and node.value == 0.0


class Simplify:
    name = "simplify"
    invariant = "continuations used once are inlined; no zero or dead adjoint code remains"

    def run(self, unit: Unit) -> None:
        self.unit = unit
        self.namer = unit.namer
        self.escaped: set[str] = set()  # what closures used as values read (see dead_stores)
        # the names of functions (continuations among them): a helper given one may call it
        self.functions = {f.name for f in functions(unit.tree)}
        self.functions.add(unit.cont_name)
        ctx = unit.ctx
        self.acc = unit.inject(ctx.runtime("acc"), "acc")
        self.zeros = unit.inject(ctx.runtime("zeros_like"), "zeros_like")
        root = unit.tree
        self.inline_all(root)
        # the facts the inlining kept up to date are those of the tree as it is now (without
        # an inlining, none were kept: one scan, without the statements' summaries, is quicker)
        self.facts = self.scopes.analyze(root) if self.inlined else S.analyze(root)
        self.effects = closure_effects(root, self.facts)
        self._definite: dict[int, set] = {}
        self.substituted: list = []
        self.removed: dict[int, tuple] = {}  # id(f) -> (f, stores, loads): changes of counts
        self.uncounted = False  # a change not in ``removed``: the facts must be made again
        for f in functions(root):
            self.definedness(f)
        # For speed (a chain of temporaries takes a round per link: tree_lstm needs a dozen), a
        # round after one whose only changes were counted -- forward substitutions, dead stores
        # removed from a function -- does not analyse the tree again, and looks for dead stores
        # only where they may have become dead: see ``_recount``.
        # The facts are those of the tree before definedness, which counted its changes too.
        counted = not self.uncounted  # the last changes are all in ``substituted``/``removed``
        clean: set[int] = set()  # functions a dead-store sweep would leave as they are
        while True:
            if counted:
                self._recount(root)
            else:
                self.analyze(root)
                clean = set()
            self.substituted = []
            self.removed: dict[int, tuple] = {}  # id(f) -> (f, stores, loads): the changes
            self.uncounted = False  # a dead-store sweep removed a function
            changed = False
            every = functions(root)
            for f in every:
                changed |= self.copies(f)
            if changed:
                counted = False
                continue  # names moved: analyse again before anything else reads them
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
        _Peephole(unit.injected).run(root)
        self.gather_all(root)
        for f in functions(root):
            _drop_empty(f)
        used = S.names(root)
        for n in list(unit.injected):
            if n not in used and n not in unit.callees:
                del unit.injected[n]

    def analyze(self, root) -> None:
        """Scope facts of every function, and what each closure's calls read and write."""
        self.facts = S.analyze(root)
        self.effects = closure_effects(root, self.facts)

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

    # ------------------------------------------------------------------ 1. inline

    def inline_all(self, root) -> None:
        """Inline every continuation called once, innermost first, so each moves in already flat."""
        self.summaries: dict = {}  # statement -> its names, for the repeated analyses below
        # an inlining changes the function it inlines into (and, renaming, those it moves in):
        # the facts of the others are kept from one analysis to the next
        self.scopes = S.Scopes(self.summaries)
        self.inlined = False
        for f in reversed(functions(root)):  # deeper definitions come later in breadth-first order
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

    # ------------------------------------------------------------------ 2. definedness

    def definedness(self, f) -> None:
        state = {p: SET for p in A.arg_names(f.args)}
        state.update(self._never_none(f))
        self._flow(f, f.body, state, rewrite=True)

    def _never_none(self, f) -> dict:
        """Borrowed adjoints of Python numbers: ``0.0`` or more, never absent."""
        declared = self.facts[id(f)].declared if id(f) in self.facts else set()
        return {n: SET for n in declared if n in self.unit.never_none}

    def _definite_writes(self, g) -> set[str]:
        """Borrowed names every run of ``g`` assigns (a continuation runs exactly once)."""
        cached = self._definite.get(id(g))
        if cached is None:
            state = {p: SET for p in A.arg_names(g.args)}
            state.update(self._never_none(g))
            end = self._flow(g, g.body, state, rewrite=False)
            declared = self.facts[id(g)].declared
            cached = self._definite[id(g)] = {w for w in declared if end.get(w) == SET}
        return cached

    def _flow(self, f, block, state, rewrite: bool) -> dict:
        _, writes = self.effects
        nested = {g.name: g for g in self.facts[id(f)].nested}
        closures = set(writes)
        rewriter = _Rewrite(self, state, f)  # (one for the block: its state is set before use)
        i = 0
        while i < len(block):
            s = block[i]
            i += 1
            if isinstance(s, A.FunctionDef):
                continue
            skip = _skip_guard(s)
            if skip is not None and state.get(skip, MAYBE) != MAYBE:
                # ``if y_bar is not None:`` (cps) where it is known: its body, or nothing
                if rewrite:
                    i -= 1
                    if state[skip] != NONE:
                        block[i : i + 1] = s.body
                        self._count_removed(f, s.test)
                    else:
                        del block[i]
                        self._count_removed(f, s)
                elif state[skip] != NONE:
                    state = self._flow(f, s.body, state, rewrite)
                continue
            if isinstance(s, A.If):
                inner = dict(state)
                if skip is not None:
                    inner[skip] = SET
                a = self._flow(f, s.body, inner, rewrite)
                b = self._flow(f, s.orelse, dict(state), rewrite)
                state = _join(a, b)
                continue
            if rewrite and isinstance(s, (A.Assign, A.AugAssign, A.Return, A.Expr)):
                rewriter.state = state
                s.value = rewriter.visit(s.value)
            # Closures this statement runs (and the closures they run) can set adjoints they
            # borrow. A continuation nested here runs exactly once -- called here, or passed to a
            # backpropagator, which calls it once -- so what it always sets is set after.
            reset = set()  # a cell's adjoint, which a closure may set back to None (a write
            # of the cell starts its adjoint again), whatever else a continuation sets
            for name in S.names(s) & closures if closures else ():
                g = nested.get(name)
                definite = (
                    self._definite_writes(g)
                    if g is not None and anno.hasanno(g, anno.CONT)
                    else set()
                )
                for w in writes[name]:
                    if w in definite or state.get(w) == ZERO:
                        state[w] = SET
                    elif state.get(w, MAYBE) == NONE:
                        state[w] = MAYBE
                    if w not in definite and self._shared(w):
                        reset.add(w)
            for w in reset:
                state[w] = MAYBE
            if isinstance(s, A.Assign):
                t = s.targets[0]
                if isinstance(t, A.Name):
                    state[t.id] = self._state_of(s.value, state)
                else:
                    for n in A.walk(t):
                        if isinstance(n, A.Name):
                            state[n.id] = SET
        return state

    def _state_of(self, value, state) -> str:
        """What is known of an adjoint assigned ``value``: a copy of another adjoint is what
        that one is, ``acc`` of two absent ones absent, of a present one present; any other
        value this transformation made is present (a rule's, a continuation's, a guard's)."""
        if _is_none(value):
            return NONE
        if _is_zero(value):
            return ZERO
        if isinstance(value, A.Name) and self.namer.primal(value.id) is not None:
            return state.get(value.id, MAYBE)
        if _is_acc(value, self.acc):
            known = [self._state_of(a, state) for a in value.args]
            if SET in known or ZERO in known:
                return SET
            return NONE if known == [NONE, NONE] else MAYBE
        return SET

    # ------------------------------------------------------------------ 3. copies and dead stores

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
        for block in statement_lists(f):
            # b = e; a = b  ->  a = e   (b used nowhere else)
            i = 0
            while i < len(block) - 1:
                first, second = block[i], block[i + 1]
                if (
                    isinstance(first, A.Assign)
                    and isinstance(second, A.Assign)
                    and isinstance(first.targets[0], A.Name)
                    and isinstance(second.targets[0], A.Name)
                    and A.is_name(second.value, first.targets[0].id)
                ):
                    b, a = first.targets[0].id, second.targets[0].id
                    if (
                        b not in params | borrowed | touched
                        and a not in touched
                        and counts.get(b) == 1
                        and loads.get(b) == 1
                    ):
                        first.targets = second.targets
                        del block[i + 1]
                        touched |= {a, b}
                        changed = True
                i += 1
        renames: dict[str, str] = {}
        for block in statement_lists(f):
            for s in list(block):
                if not (
                    isinstance(s, A.Assign)
                    and isinstance(s.targets[0], A.Name)
                    and isinstance(s.value, A.Name)
                ):
                    continue
                a, b = s.targets[0].id, s.value.id
                if a in touched or b in touched:
                    continue
                if a == b:
                    block.remove(s)
                    changed = True
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
                    if self._can_rename(f, b, a) and _unused_between(block, b, s, a):
                        block.remove(s)
                        renames[b] = a
                        touched |= {a, b}
                        changed = True
                        continue
                if counts.get(a, 0) != 1 or a in params or a in borrowed:
                    continue
                if not self._can_rename(f, a, b):
                    continue
                block.remove(s)
                renames[a] = b
                touched |= {a, b}
                changed = True
        # (all at once, in one walk: each rename's names are touched by no other one, so
        # applying them together is applying them one after the other)
        S.rename_free(f.body, renames)
        return changed

    def _shared(self, name: str) -> bool:
        """Is ``name`` a variable closures share (a cell), or its adjoint or tangent?"""
        cells = self.unit.cells
        return name in cells or self.namer.primal(name) in cells

    def _written_by_calls(self, f) -> set[str]:
        """Names of ``f``'s scope a call made in it may assign: those it declares ``nonlocal``
        (a continuation it calls may add to them) and those its closures assign."""
        fa = self.facts[id(f)]
        out = set(fa.declared)
        for g in fa.nested:
            out |= self.facts[id(g)].writes
        return out

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

    def _count_removed(self, f, node, whole: bool = True) -> None:
        """Take the names of ``node``, removed from ``f``'s own scope (``whole``), or only the
        targets of an assignment whose value stays, out of the counts ``_recount`` brings the
        facts up to date by."""
        counts = S.counts(node)
        if counts is None:  # a function defined in it
            self.uncounted = True
            return
        _, stores, loads = self.removed.setdefault(id(f), (f, {}, {}))
        for delta, names in ((stores, counts[0]), (loads, counts[1] if whole else {})):
            for name, c in names.items():
                delta[name] = delta.get(name, 0) - c

    def _reads(self, f, node) -> set[str]:
        """Names a statement reads, including through the closures it runs (those used as
        values, by any call it makes)."""
        out = S.loads(node)
        reads, writes = self.effects
        for name in [n for n in out if n in reads]:
            out |= reads[name] | writes[name]
        if self.escaped and any(isinstance(n, A.Call) for n in S.walk_own(node)):
            out = out | self.escaped
        return out

    def _removable(self, f, s) -> bool:
        if not (isinstance(s, A.Assign)):
            return False
        names = [n.id for n in A.walk(s.targets[0]) if isinstance(n, A.Name)]
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
        for n in A.walk(e):
            if isinstance(n, A.Call):
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
                if _inert(s) and not self.facts[id(f)].reads.get(s.name):
                    changed[0] = True  # a function nothing calls (a continuation inlined away,
                    self.uncounted = True  # a function whose derivative Nested made)
                    continue
                kept.append(s)
                continue
            if isinstance(s, A.If):
                a = self._live(f, s.body, set(live), changed)
                b = self._live(f, s.orelse, set(live), changed)
                live = a | b | self._reads(f, s.test)
                kept.append(s)
                continue
            if isinstance(s, A.Assign):
                targets = S.names(s.targets[0])
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
                live |= self._reads(f, s)
                kept.append(s)
                continue
            live |= self._reads(f, s)
            kept.append(s)
        kept.reverse()
        block[:] = kept
        return live

    # ------------------------------------------------------------------ tail calls

    def return_directly(self, f) -> bool:
        """In a continuation, ``x_bar = e; return x_bar``  ->  ``return e`` (x_bar used nowhere
        else), so that one which only passes its values on is recognisably ``k`` (see ``eta``)."""
        if not anno.hasanno(f, anno.CONT):
            return False
        fa = self.facts[id(f)]
        changed = False
        for block in statement_lists(f):
            for i in range(len(block) - 1):
                a, r = block[i], block[i + 1]
                if (
                    isinstance(a, A.Assign)
                    and isinstance(a.targets[0], A.Name)
                    and isinstance(r, A.Return)
                    and A.is_name(r.value, a.targets[0].id)
                ):
                    x = a.targets[0].id
                    passes_on = (  # x_bar = k(x): the continuation of the whole function
                        isinstance(a.value, A.Call)
                        and A.is_name(a.value.func, self.unit.cont_name)
                        and all(isinstance(arg, A.Name) for arg in a.value.args)
                    )
                    if (
                        passes_on
                        and x in self.namer.generated
                        and fa.assignments.get(x) == 1
                        and fa.reads.get(x) == 1
                        and x not in fa.declared
                    ):
                        r.value = a.value
                        del block[i]
                        return True
        return changed

    def eta(self, f) -> bool:
        """A continuation that only passes its values on to ``k`` *is* ``k``: use ``k`` instead.

        This makes a loop's recursive call a tail call -- ``loop_L5_bp(k, i + 1, acc)`` -- so an
        iteration costs one frame, not two.
        """
        fa = self.facts[id(f)]
        for block in statement_lists(f):
            for d in block:
                if not (isinstance(d, A.FunctionDef) and anno.hasanno(d, anno.CONT)):
                    continue
                if len(d.body) != 1 or not isinstance(d.body[0], (A.Return, A.Expr)):
                    continue  # `return k(x)`, or `k(x)` when nothing uses what it returns
                call = d.body[0].value
                params = A.arg_names(d.args)
                if not (
                    isinstance(call, A.Call)
                    and isinstance(call.func, A.Name)
                    and not call.keywords
                    and [getattr(a, "id", None) for a in call.args] == params
                    and call.func.id not in params
                ):
                    continue
                if fa.reads.get(d.name) != fa.loads.get(d.name):
                    continue  # used inside a nested function, where `k` may mean another one
                target = call.func.id
                block.remove(d)
                for n in S.own_nodes(f):
                    if isinstance(n, A.Name) and n.id == d.name:
                        n.id = target
                return True
        return False

    # ------------------------------------------------------------------ 4. forward substitution

    def forward_substitute(self, f) -> bool:
        """Every temporary assigned and read once, the read in the next statement that runs
        something: its value moves there. One sweep does a chain (``a = e; b = g(a)`` and
        then ``b``): a moved value's names are counted as before, in the same scope."""
        counts = self.facts[id(f)].assignments
        loads = self.facts[id(f)].reads
        changed = False
        temps, Assign, Name = self.namer.temps, A.Assign, A.Name
        for block in statement_lists(f):
            i = 0
            while i < len(block) - 1:
                s = block[i]
                # (the first tests of ``_substitute_forward``, here for speed: most fail them)
                if (
                    s.__class__ is Assign
                    and s.targets[0].__class__ is Name
                    and s.targets[0].id in temps
                    and self._substitute_forward(f, block, i, counts, loads)
                ):
                    changed = True  # block[i] is now the statement that received the value
                else:
                    i += 1
        return changed

    def _substitute_forward(self, f, block, i, counts, loads) -> bool:
        s = block[i]
        if not (isinstance(s, A.Assign) and isinstance(s.targets[0], A.Name)):
            return False
        t = s.targets[0].id
        if t not in self.namer.temps or counts.get(t) != 1 or loads.get(t) != 1:
            return False
        j = i + 1
        while j < len(block) - 1 and _inert(block[j]):
            j += 1  # a def runs nothing: the temporary can move past it
        nxt = block[j]
        where = nxt.test if isinstance(nxt, A.If) else nxt
        if isinstance(nxt, (A.FunctionDef, A.Nonlocal)):
            return False
        uses = [
            n
            for n in S.walk_own(where)
            if isinstance(n, A.Name) and n.id == t and isinstance(n.ctx, A.Load)
        ]
        if len(uses) != 1:
            return False
        if not (self._pure(s.value) or _first_effect_is(where, uses[0])):
            return False
        if not self._pure(s.value) and _read_before(where, uses[0]) & self._written_by_calls(f):
            return False  # `a = acc(a, k(x))` would read `a` before the call that adds to it
        A.replace(nxt, uses[0], A.deepcopy(s.value))
        del block[i]
        self.substituted.append((f, t))
        return True

    # ------------------------------------------------------------------ 6. gather

    def gather_all(self, root) -> None:
        getitem = {
            n
            for n, o in self.unit.injected.items()
            if o is self.unit.ctx.runtime("getitem_adjoint")
        }
        if not getitem:
            return
        local = {f.name for f in functions(root) if f is not root}
        for f in functions(root):
            for block in statement_lists(f):
                self._gather(block, getitem, local)

    def _gather(self, block, getitem: set, local: set) -> None:
        """Merge runs of ``p_bar = p_bar + getitem_adjoint(v, p, key)`` (or ``acc(p_bar, ...)``,
        or a first ``p_bar = getitem_adjoint(...)``) with constant keys, each key once, into
        one, placed at the last: between them nothing may mention ``p_bar`` or ``p``, assign a
        ``v`` already gathered, or name a local function or call one it is given (a call of one
        may add to ``p_bar``)."""
        run: list = []  # (index, form, bar, container, key, value)
        out = {}  # index of a run's last statement -> its merged statement
        drop = set()

        def close():
            if len(run) > 1:
                form, bar, x = run[0][1:4]
                entries = A.Dict(
                    keys=[A.const(r[4]) for r in run], values=[A.name(r[5]) for r in run]
                )
                items = A.call(self.items_name(), [A.name(x), entries])
                if form == "first":
                    value = items
                elif form == "acc":
                    value = A.call(self.acc, [A.name(bar), items])
                else:
                    value = A.binop(A.name(bar), A.Add(), items)
                last = run[-1][0]
                out[last] = A.copy_location(A.assign(bar, value), block[last])
                drop.update(r[0] for r in run)
            run.clear()

        for i, st in enumerate(block):
            m = _entry_merge(st, getitem, self.acc)  # (form, bar, container, key, value)
            if m is not None:
                joins = (
                    run
                    and m[0] != "first"
                    and m[1:3] == run[0][2:4]
                    and m[3] not in {r[4] for r in run}  # a key twice: the next run's
                )
                if not joins:
                    close()
                run.append((i, *m))
                continue
            if run:
                names = S.names(st)
                assigned = (
                    {n.id for n in A.walk(st.targets[0]) if isinstance(n, A.Name)}
                    if isinstance(st, A.Assign)
                    else names
                )
                if (
                    isinstance(st, (A.If, A.FunctionDef, A.Return))
                    or run[0][2] in names
                    or run[0][3] in names
                    or names & local
                    or assigned & {r[5] for r in run}
                    or self._calls_unknown(st)
                ):
                    close()
        close()
        if out:
            block[:] = [
                out[i] if i in out else st
                for i, st in enumerate(block)
                if i not in drop or i in out
            ]

    def _calls_unknown(self, st) -> bool:
        """Does ``st`` call a function by a name that is not one the emitted code imports (a
        continuation passed in, ``k``: it may add to an adjoint this function borrows)?"""
        return any(
            isinstance(n, A.Call)
            and isinstance(n.func, A.Name)
            and n.func.id not in self.unit.injected
            for n in A.walk(st)
        )

    def items_name(self) -> str:
        return self.unit.inject(self.unit.ctx.runtime("items_adjoint"), "items_adjoint")


# ---------------------------------------------------------------------- helpers


def closure_effects(root, facts):
    """For each function nested in ``root``: the outer names a call of it may read and write,
    following the calls it makes to other local functions (a join called from a continuation)."""
    every = functions(root)
    defs = {f.name: f for f in every if f is not root}
    reads = {n: set(facts[id(f)].free) for n, f in defs.items()}
    writes = {n: set(facts[id(f)].writes) for n, f in defs.items()}
    # the local functions each one mentions: its own names and those of functions nested in it
    calls = {
        n: ((set(facts[id(f)].reads) | set(facts[id(f)].stores)) & set(defs)) - {n}
        for n, f in defs.items()
    }
    parent: dict[str, str | None] = {}
    for f in every:
        for g in facts[id(f)].nested:
            parent[g.name] = None if f is root else f.name

    def hidden(n, m) -> set[str]:
        """Names local to ``n`` (or to functions between ``n`` and ``m``) when ``m`` is nested in
        ``n``: what ``m`` reads of them is not what ``n``'s callers see."""
        out: set[str] = set()
        p = parent.get(m)
        while p is not None:
            out |= facts[id(defs[p])].local
            if p == n:
                return out
            p = parent.get(p)
        return set()

    changed = True
    while changed:
        changed = False
        for n in defs:
            for m in calls[n]:
                h = hidden(n, m)
                r, w = reads[m] - h, writes[m] - h
                if not (r <= reads[n] and w <= writes[n]):
                    reads[n] |= r
                    writes[n] |= w
                    changed = True
    return reads, writes


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


def _inert(stmt) -> bool:
    """A statement whose execution evaluates nothing: a plain def, a declaration."""
    if isinstance(stmt, A.Nonlocal):
        return True
    return (
        isinstance(stmt, A.FunctionDef)
        and not stmt.decorator_list
        and not stmt.args.defaults
        and not any(stmt.args.kw_defaults)
    )


def _join(a: dict, b: dict) -> dict:
    out = {}
    for k in set(a) | set(b):
        x, y = a.get(k), b.get(k)
        if x == y:
            out[k] = x
        elif {x, y} == {ZERO, SET}:
            out[k] = SET  # present either way
        else:
            out[k] = MAYBE
    return out


def _unused_between(block, b: str, copy, a: str) -> bool:
    """In ``block``, is ``a`` neither read nor written after ``b`` is assigned and before the copy
    ``a = b``? (Then ``b`` can be named ``a`` from its assignment on: ``b = a * a; ...; a = b``
    with ``a`` read in between must keep both names -- the reads want the old ``a``.)"""
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


def _read_before(stmt, use) -> set[str]:
    """The names ``stmt`` reads before it evaluates ``use`` (Python's order of evaluation)."""
    out: set[str] = set()

    def visit(node) -> bool:
        fields = list(A.iter_child_nodes(node))
        if isinstance(node, A.Assign):  # the value is evaluated before the targets
            fields = [node.value, *node.targets]
        for child in fields:
            if child is use:
                return True
            if isinstance(child, A.Name) and isinstance(child.ctx, A.Load):
                out.add(child.id)
            elif visit(child):
                return True
        return False

    visit(stmt)
    visit = (
        None  # (it calls itself: a reference cycle, which kept the tree alive until a collection)
    )
    return out


def _first_effect_is(stmt, use) -> bool:
    """Is ``use`` evaluated before any call in ``stmt`` happens? (Then a call may move into it.)"""

    def visit(node):
        fields = list(A.iter_child_nodes(node))
        if isinstance(node, A.Assign):  # the value is evaluated before the targets
            fields = [node.value, *node.targets]
        for child in fields:
            if child is use:
                return "use"
            r = visit(child)
            if r:
                return r
        return "call" if isinstance(node, A.Call) else None

    try:
        return visit(stmt) == "use"
    finally:
        visit = None  # (it calls itself: a reference cycle, which kept the tree alive until a collection)


def _entry_merge(st, getitem: set, acc: str):
    """``(form, bar, container, key, value)`` of ``bar = bar + getitem_adjoint(value, container,
    key)`` (form "add"), ``bar = acc(bar, ...)`` ("acc") or ``bar = getitem_adjoint(...)``
    ("first"), with names for ``value`` and ``container`` and a constant ``key``; else None."""
    if not (isinstance(st, A.Assign) and isinstance(st.targets[0], A.Name)):
        return None
    bar, v = st.targets[0].id, st.value
    if isinstance(v, A.BinOp) and isinstance(v.op, A.Add) and A.is_name(v.left, bar):
        form, call = "add", v.right
    elif (
        isinstance(v, A.Call)
        and A.is_name(v.func, acc)
        and len(v.args) == 2
        and A.is_name(v.args[0], bar)
    ):
        form, call = "acc", v.args[1]
    else:
        form, call = "first", v
    if not (
        isinstance(call, A.Call)
        and isinstance(call.func, A.Name)
        and call.func.id in getitem
        and len(call.args) == 3
        and not call.keywords
        and isinstance(call.args[0], A.Name)
        and isinstance(call.args[1], A.Name)
        and isinstance(call.args[2], A.Constant)
        and isinstance(call.args[2].value, (str, int))
    ):
        return None
    return form, bar, call.args[1].id, call.args[2].value, call.args[0].id


def _drop_empty(f) -> None:
    for block in statement_lists(f):
        for s in block:
            if isinstance(s, A.If):
                s.body = [x for x in s.body if not isinstance(x, A.Pass)] or [A.Pass()]
                s.orelse = [x for x in s.orelse if not isinstance(x, A.Pass)]
    if not f.body:
        f.body = [A.Pass()]


class _Rewrite(A.NodeTransformer):
    """Specialize ``acc`` and ``x if x is not None else zeros`` by what is known of each adjoint.

    Guards are made (cps, shift/reset) as a statement's value, an argument of ``acc`` or an
    item of a returned tuple, and only move as whole values (inlining assigns a returned value):
    so only calls' arguments, tuples and conditional expressions are looked into -- the rest of
    an expression (a rule's arithmetic) holds none, and visiting it was most of this stage's time.
    """

    def __init__(self, simplify: Simplify, state: dict, f):
        self.s = simplify
        self.state = state
        self.f = f  # (whose names' counts what is left out is taken from)

    def visit(self, node):
        cls = node.__class__
        if cls is A.Call:
            return self.visit_Call(node)
        if cls is A.IfExp:
            return self.visit_IfExp(node)
        if cls is A.Tuple:
            node.elts = [self.visit(e) for e in node.elts]
        return node

    def generic_visit(self, node):
        if node.__class__ is A.Call:
            node.args = [self.visit(a) for a in node.args]
        else:  # an IfExp
            node.body, node.orelse = self.visit(node.body), self.visit(node.orelse)
        return node

    def visit_Call(self, node):
        self.generic_visit(node)
        f = node.func
        if not anno.getanno(node, anno.GUARD):
            return node  # a call the transformed code itself makes (emitted code, again)
        if isinstance(f, A.Name) and f.id == self.s.acc and len(node.args) == 2:
            x, e = node.args
            if isinstance(x, A.Name):
                st = self.state.get(x.id, MAYBE)
                present = self.s._state_of(e, self.state) in (SET, ZERO)
                if st == NONE or (st == ZERO and present):
                    self.s._count_removed(self.f, f)
                    self.s._count_removed(self.f, x)
                    return e
                if st == SET and present:
                    self.s._count_removed(self.f, f)
                    return A.copy_location(A.binop(A.name(x.id), A.Add(), e), node)
        return node

    def visit_IfExp(self, node):
        self.generic_visit(node)
        if not anno.getanno(node, anno.GUARD):
            return node
        t = node.test
        if (
            isinstance(t, A.Compare)
            and isinstance(t.left, A.Name)
            and len(t.ops) == 1
            and isinstance(t.ops[0], A.IsNot)
            and _is_none(t.comparators[0])
            and A.is_name(node.body, t.left.id)
        ):
            st = self.state.get(t.left.id, MAYBE)
            if st in (SET, ZERO):
                self.s._count_removed(self.f, t)
                self.s._count_removed(self.f, node.orelse)
                return node.body
            if st == NONE:
                self.s._count_removed(self.f, t)
                self.s._count_removed(self.f, node.body)
                return node.orelse
        return node


class _Peephole:
    """Constant folding, ``x ** 1`` and default keyword arguments: a rewrite of each call and
    binary operation, innermost first (``run``)."""

    def __init__(self, injected: dict):
        self.injected = injected

    def run(self, root) -> None:
        # (for speed: one walk finds the calls and operations, with where each is held, and
        # only those are rewritten -- not a visit of every node, as a NodeTransformer makes)
        found = []  # (node, holder, field, index), each before the nodes below it
        stack = [(root, None, None, 0)]
        pop, push = stack.pop, stack.append
        Call, BinOp, AST, children_of = A.Call, A.BinOp, A.AST, A.CHILDREN
        while stack:
            item = pop()
            n = item[0]
            cls = n.__class__
            if cls is Call or cls is BinOp:
                found.append(item)
            children = children_of.get(cls)
            if children is None:
                children = A.children_of(cls)
            for field, _ in children:
                v = getattr(n, field, None)
                if v.__class__ is list:
                    for i, x in enumerate(v):
                        if isinstance(x, AST):
                            push((x, v, None, i))
                elif isinstance(v, AST):
                    push((v, n, field, 0))
        for n, holder, field, i in reversed(found):
            new = self.call(n) if n.__class__ is Call else self.binop(n)
            if new is not n:
                if field is None:
                    holder[i] = new
                else:
                    setattr(holder, field, new)

    def call(self, node):
        """Leave out keyword arguments a helper, a rule or a function of a module emitted code
        imports (``np.reshape(g, s, order="C")``) would default to anyway -- noise to a reader,
        and an array library that dispatches numpy's functions may not take them (Dask's
        reshape refuses ``order``)."""
        if not node.keywords:
            return node
        fn = self._callee(node.func)
        if fn is not None and node.keywords:
            try:
                params = inspect.signature(fn).parameters
            except (TypeError, ValueError):  # (a builtin without a signature)
                return node
            node.keywords = [
                k
                for k in node.keywords
                if not (
                    k.arg in params
                    and isinstance(k.value, A.Constant)
                    and type(k.value.value) is type(params[k.arg].default)
                    and k.value.value == params[k.arg].default
                )
            ]
        return node

    def _callee(self, func):
        """The helper or rule a call's name stands for, or ``module.function`` of a module
        emitted code imports; None for anything else."""
        if isinstance(func, A.Name):
            fn = self.injected.get(func.id)
            return fn if inspect.isfunction(fn) else None
        if isinstance(func, A.Attribute) and isinstance(func.value, A.Name):
            module = self.injected.get(func.value.id)
            if isinstance(module, types.ModuleType):
                fn = getattr(module, func.attr, None)
                return fn if callable(fn) and not isinstance(fn, type) else None
        return None

    def binop(self, node):
        left, right = node.left, node.right
        if isinstance(left, A.Constant) and isinstance(right, A.Constant):
            ops = {A.Add: lambda a, b: a + b, A.Sub: lambda a, b: a - b, A.Mult: lambda a, b: a * b}
            fn = ops.get(type(node.op))
            if fn and all(type(v.value) in (int, float) for v in (left, right)):
                return A.const(fn(left.value, right.value))
        if isinstance(node.op, A.Pow) and isinstance(right, A.Constant) and right.value == 1:
            return left
        return node
