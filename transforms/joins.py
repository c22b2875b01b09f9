"""After Joins, no local function is the join of an ``if`` whose branches call it: each is inlined
once, after the ``if`` (staged code: the STAGED pipeline runs it before Defunctionalize).

CPS makes the rest of a function after an ``if`` a local function, the join, that each branch
calls; each branch's backward part runs when the call returns. Numba compiles no closure, and
Defunctionalize needs a loop's self-call at the top of its branch, not inside a join. So the join
is inlined once, after the ``if``: each branch's part before its call stays in the ``if`` (with
the arguments assigned to the join's parameters), the part after it goes to a second ``if`` on
the same condition, saved, after the join's body::

    if c:                            branch = c
        z = x * y                    if branch:
        z_bar = after_if(z)              z = x * y
        x_bar = z_bar * y                z_1 = z
    else:                  ->        else:
        z = sin(x)                       z = sin(x)
        z_bar = after_if(z)              z_1 = z
        x_bar = z_bar * cos(x)       ...after_if's body, its result in ``joined``...
                                     if branch:
                                         z_bar = joined
                                         x_bar = z_bar * y
                                     else:
                                         z_bar = joined
                                         x_bar = z_bar * cos(x)

The program computes what it did, in the same order on every path: before the call, the join,
after the call. Only where every path through the ``if`` calls the join at most once, as a
statement of the branch (not in a loop), and a path that does not call it either returns or
skips the join (a flag, ``joining``, says whether one called it). The join's own names are
renamed apart; its ``nonlocal`` names become the enclosing function's (declared there when
they belong further out).
"""

from __future__ import annotations

from . import astlib as A
from .scoping import declared_nonlocal, local_names, rename_free, walk_own
from .unit import Unit


class Joins:
    name = "joins"
    invariant = (
        "no local function is an if's join its branches call: each is inlined once, after it"
    )

    def run(self, unit: Unit) -> None:
        self.unit = unit
        inlined = []
        while True:
            for p in A.function_defs(unit.tree):
                nested = [s for s in walk_own_statements(p.body) if isinstance(s, A.FunctionDef)]
                d = next((d for d in nested if self.inline(p, d)), None)
                if d is not None:
                    inlined.append(d.name)
                    break
            else:
                break
        unit.notes[self.name] = [", ".join(inlined) or "nothing to inline"]

    def inline(self, p, d) -> bool:
        """Inline ``d``, a function of ``p``'s own scope, if it is a join of an ``if`` of ``p``."""
        mentions = [n for n in A.walk(p) if isinstance(n, A.Name) and n.id == d.name]
        if len(mentions) < 2 or any(A.is_name(n, d.name) for n in A.walk(d)):
            return False
        calls = standalone_calls(p, mentions, parents_of(p))
        if calls is None or plan(p, [s for _, s in calls]) is None:
            return False
        a = d.args
        params = A.arg_names(a)
        if a.vararg or a.kwarg or a.kwonlyargs or a.defaults or a.posonlyargs:
            return False
        for call, _ in calls:
            if call.keywords or len(call.args) != len(params):
                return False
            if any(isinstance(x, A.Starred) for x in call.args):
                return False
        if any(
            isinstance(n, A.Return) and not at_tail(d.body, n) for s in d.body for n in walk_own(s)
        ):
            return False
        namer = self.unit.namer
        outer = declared_nonlocal(d)
        if p is not self.unit.tree:
            outer = outer - local_names(p) - declared_nonlocal(p)
        else:
            outer = set()
        mapping = {n: namer.fresh(n) for n in sorted(local_names(d) | set(params))}
        for s in d.body:
            rename_free(s, mapping)
        remove(d, lambda s: isinstance(s, A.Nonlocal))
        if outer:
            p.body.insert(0, A.copy_location(A.Nonlocal(names=sorted(outer)), d))
        bindings = [
            [
                A.copy_location(A.assign(A.store(mapping[q]), x), call)
                for q, x in zip(params, call.args)
            ]
            for call, _ in calls
        ]
        return inline_join(p, d, calls, bindings, namer.fresh)


def one_self_call(f, calls: list, fresh) -> bool:
    """A loop's function ``f`` that calls itself from several branches (``continue``, the end
    of the body) as one that calls itself once: ``calls`` -- its self-call statements, each
    ``t = f(...)`` -- are made one join, by ``_split``: each branch assigns the next level's
    arguments and ``joining = True``; then ``if joining: joined = f(k, *arguments)``; then each
    branch's part after its call (``t = joined``) and what follows, a path that leaves the loop
    (calls the continuation) having run all of its own before. Defunctionalize then finds the
    self-call at the top of the ``if`` and what follows it run after either branch (for the
    levels that went on: ``reaching``). A call whose result is not used (``f(...)``: the
    adjoints it hands back are of values not differentiated) takes none. False where a path
    calls it twice or in a loop, or a call is not ``t = f(...)`` or ``f(...)`` with every
    argument."""
    if any(not (isinstance(s, (A.Assign, A.Expr)) and isinstance(s.value, A.Call)) for s in calls):
        return False
    n = len(calls[0].value.args)
    if any(len(s.value.args) != n or s.value.keywords for s in calls):
        return False
    start = 0
    while start < len(f.body) and isinstance(f.body[start], (A.Nonlocal, A.Global)):
        start += 1
    body = f.body[start:]
    if not body or not isinstance(body[-1], A.Return):
        return False
    dry = _split(body, {id(s): ([], []) for s in calls}, lambda stem: stem, [])
    if dry is None:
        return False
    joined, joining = fresh("joined"), fresh("joining")
    params = A.arg_names(f.args)
    # (an argument every call passes unchanged -- the continuation ``k`` -- is passed as it is)
    same = [all(A.is_name(s.value.args[i], params[i]) for s in calls) for i in range(n)]
    nexts = [params[i] if same[i] else fresh(f"next_{params[i]}") for i in range(n)]
    parts = {}
    for s in calls:
        binding = [
            A.copy_location(A.assign(A.store(v), a), s)
            for v, a, kept in zip(nexts, s.value.args, same)
            if not kept
        ]
        binding.append(A.copy_location(A.assign(A.store(joining), A.const(True)), s))
        taken = (
            [A.copy_location(A.assign(s.targets[0], A.name(joined)), s)]
            if isinstance(s, A.Assign)
            else []  # (``f(...)``: what it hands back is not used)
        )
        parts[id(s)] = (binding, taken)
    before, after = _split(body, parts, fresh, [])
    first = calls[0]
    call = A.copy_location(
        A.assign(A.store(joined), A.call(A.deepcopy(first.value.func), [A.name(v) for v in nexts])),
        first,
    )
    join = A.copy_location(A.If(test=A.name(joining), body=[call], orelse=[]), first)
    unset = A.copy_location(A.assign(A.store(joining), A.const(False)), first)
    before = _leave_once(before, params[0], join, fresh)
    f.body[start:] = [unset, *before, join, *after]
    return True


def _leave_once(before: list, k: str, join, fresh) -> list:
    """The paths of ``before`` that leave the loop -- each calls the continuation ``k`` -- as
    one call of it in the ``else`` of ``join`` (``if joining: ...``): each path assigns the
    value and ``leaving = True``, and its part after the call goes there too. Defunctionalize
    then runs the call once, after the forward loop, not inside it -- where a loop nested in
    another calls the rest of the outer body. (``before`` as it was where a path calls ``k``
    twice, or other than as ``t = k(v)``.)"""
    calls = [
        s
        for s in walk_own_statements(before)
        if isinstance(s, A.Assign)
        and len(s.targets) == 1
        and isinstance(s.value, A.Call)
        and A.is_name(s.value.func, k)
        and len(s.value.args) == 1
        and not s.value.keywords
    ]
    mentions = sum(1 for s in before for n in A.walk(s) if A.is_name(n, k))
    if not calls or mentions != len(calls):
        return before
    if any(not _ends_the_paths(before, s) for s in calls):
        return before  # (what follows the if holding it runs on the paths that go on too)
    if _split(before, {id(s): ([], []) for s in calls}, lambda stem: stem, []) is None:
        return before
    # every path goes on or leaves (none returns otherwise): the ``else`` of ``join`` leaves
    always = _every_path(before, {id(s) for s in calls}, join.test.id)
    value, leaving, left = fresh("leaving_with"), fresh("leaving"), fresh("left")
    parts = {}
    for s in calls:
        binding = [A.copy_location(A.assign(A.store(value), s.value.args[0]), s)]
        if not always:
            binding.append(A.copy_location(A.assign(A.store(leaving), A.const(True)), s))
        parts[id(s)] = (binding, [A.copy_location(A.assign(s.targets[0], A.name(left)), s)])
    first = calls[0]
    out, after = _split(before, parts, fresh, [])
    call = A.copy_location(A.assign(A.store(left), A.call(A.name(k), [A.name(value)])), first)
    if always:
        join.orelse = [call, *after]
        return out
    join.orelse = [
        A.copy_location(A.If(test=A.name(leaving), body=[call], orelse=[]), first),
        *after,
    ]
    return [A.copy_location(A.assign(A.store(leaving), A.const(False)), first), *out]


def _every_path(block: list, leaves: set, joining: str) -> bool:
    """Does every path through ``block`` leave (a statement of ``leaves``), go on (``joining =
    True``) or raise? Then a path that does not go on leaves: after a loop nested in another,
    the rest of the outer body runs unguarded -- the outer loop's paths then each go on or
    leave in turn, and it is rewritten too."""
    for s in block:
        if id(s) in leaves or isinstance(s, A.Raise):
            return True
        if (
            isinstance(s, A.Assign)
            and A.is_name(s.targets[0], joining)
            and isinstance(s.value, A.Constant)
            and s.value.value is True
        ):
            return True
        if isinstance(s, A.If) and all(_every_path(b, leaves, joining) for b in (s.body, s.orelse)):
            return True
    return False


def _ends_the_paths(block: list, stmt) -> bool | None:
    """Is ``stmt`` in ``block``, or in a branch of an ``if`` that is the last statement of its
    block (at every level): is what follows it on its path its own block's rest, and no
    statement another path runs too? None where ``stmt`` is not in ``block`` at all. A leaving
    path's part after ``k`` is moved after the loop (``_leave_once``): a statement after the
    ``if`` -- the next level's arguments, assigned on the paths that go on -- must stay."""
    for i, s in enumerate(block):
        if s is stmt:
            return True
        if isinstance(s, A.If):
            for branch in (s.body, s.orelse):
                inside = _ends_the_paths(branch, stmt)
                if inside is not None:
                    return inside and i == len(block) - 1
    return None


def plan(f, stmts) -> tuple[list, int] | None:
    """Where the join of the calls ``stmts`` (statements of ``f``'s own scope) would go: the
    statement list and index of the ``if`` that holds them -- None if it cannot be inlined."""
    found = _enclosing(f, stmts)
    if found is None:
        return None
    block, i = found
    parts = {id(s): ([], []) for s in stmts}
    if _split([block[i]], parts, lambda stem: stem, []) is None:
        return None
    return found


def inline_join(f, d, calls, bindings: list, fresh) -> bool:
    """Inline the join ``d`` (its names already renamed apart) of the ``if`` of ``f`` whose
    branches make ``calls`` -- ``(call, statement)``; ``bindings``: the assignments of its
    parameters at each call -- once, after the ``if`` (the module's docstring); ``fresh`` makes
    names. False where ``plan`` says it cannot."""
    found = plan(f, [stmt for _, stmt in calls])
    if found is None:
        return False
    block, i = found
    joined = fresh("joined")
    joining = fresh("joining")
    parts = {}
    marks = []  # ``joining = True`` at each call: kept if a path skips the join
    for (_call, stmt), binding in zip(calls, bindings):
        marks.append(A.copy_location(A.assign(A.store(joining), A.const(True)), stmt))
        binding = [*binding, marks[-1]]
        if isinstance(stmt, A.Assign):
            after = [A.copy_location(A.assign(stmt.targets[0], A.name(joined)), stmt)]
        elif isinstance(stmt, A.Return):
            after = [A.copy_location(A.return_(A.name(joined)), stmt)]
        else:
            after = []
        parts[id(stmt)] = (binding, after)
    skipped: list = []
    before, after = _split([block[i]], parts, fresh, skipped)
    body = with_tails(d.body, A.assign(A.store(joined), A.const(None)))
    if skipped:  # (a path that calls the seed, not the join: the join runs only after one)
        before = [A.copy_location(A.assign(A.store(joining), A.const(False)), block[i]), *before]
        body = [A.copy_location(A.If(test=A.name(joining), body=body, orelse=[]), block[i])]
    block[i : i + 1] = before + body + unmarked(after)
    if not skipped:
        remove(f, lambda s: any(s is m for m in marks))
    remove(f, lambda s: s is d)
    return True


# ---------------------------------------------------------------------- joins


def standalone_calls(f, mentions, parents) -> list | None:
    """``(call, statement)`` of each mention of a local function, if each is a call standing
    alone as a statement of ``f``'s own scope (``t = g(...)``, ``g(...)``, ``return g(...)``)."""
    out = []
    for ref in mentions:
        call = parents[id(ref)]
        if not (isinstance(call, A.Call) and call.func is ref):
            return None
        stmt = parents.get(id(call))
        alone = (
            isinstance(stmt, A.Assign)
            and len(stmt.targets) == 1
            or isinstance(stmt, (A.Expr, A.Return))
        ) and stmt.value is call
        if not alone or not own_statement(f, stmt):
            return None
        out.append((call, stmt))
    return out


def _contains(s, targets: set) -> bool:
    return any(id(n) in targets for n in walk_own_statements([s]))


def _enclosing(f, stmts) -> tuple[list, int] | None:
    """The statement list and index of the innermost statement of ``f``'s own scope that holds
    every one of ``stmts`` (None: a function nested in ``f`` holds one)."""
    targets = {id(s) for s in stmts}
    block, found = f.body, None
    while True:
        holding = [i for i, s in enumerate(block) if _contains(s, targets)]
        if len(holding) != 1:
            return found if len(holding) > 1 or found is None else found
        i = holding[0]
        s = block[i]
        if isinstance(s, A.FunctionDef):
            return None
        found = (block, i)
        if id(s) in targets:
            return found
        inner = [getattr(s, b) for b in _BLOCKS if isinstance(getattr(s, b, None), list)]
        holders = [b for b in inner if any(_contains(x, targets) for x in b)]
        if len(holders) != 1:
            return found
        block = holders[0]


def _split(block: list, parts: dict, fresh, skipped: list) -> tuple[list, list] | None:
    """``block`` as (what runs before the join, what runs after it), where every path through
    it reaches at most one of the calls ``parts`` maps (statement id -> its bindings, and what
    replaces it after the join); None where a path reaches two, or one inside a loop, or may
    leave the block before it. A path that reaches none is all before the join; if it does not
    return, it is added to ``skipped`` (the join must be skipped after it)."""
    holding = [j for j, s in enumerate(block) if _contains(s, set(parts))]
    if not holding:  # a path without the join: all of it before the join, which it skips
        if _returns(block):
            return block, []
        skipped.append(block)
        return block, [_skip_mark()]
    if len(holding) != 1:
        return None
    j = holding[0]
    s = block[j]
    if any(_leaves(x) for x in block[:j]):
        return None
    if id(s) in parts:
        before, after = parts[id(s)]
    elif isinstance(s, A.If):
        yes, no = _split(s.body, parts, fresh, skipped), _split(s.orelse, parts, fresh, skipped)
        if yes is None or no is None:
            return None
        if hasattr(s, "skips_join") and isinstance(s.test, A.Name):
            # (a fork of an earlier split, split again: its condition is saved already, in a
            # name assigned once -- a user's name could change before the second if)
            branch, test = s.test.id, []
        else:
            branch = fresh("branch")
            test = [A.copy_location(A.assign(A.store(branch), s.test), s)]
        fork = A.copy_location(
            A.If(test=A.name(branch), body=yes[0] or [A.Pass()], orelse=no[0] or [A.Pass()]), s
        )
        # (which branch, if one, skips the join: Defunctionalize's ``_reached_stores``; an if
        # split again, for another join, keeps what it said of the first)
        if hasattr(s, "skips_join"):
            fork.skips_join = s.skips_join
        else:
            fork.skips_join = "body" if _skips(yes[1]) else "orelse" if _skips(no[1]) else None
        before = [*test, fork]
        after = [
            A.copy_location(A.If(test=A.name(branch), body=yes[1] or [A.Pass()], orelse=no[1]), s)
        ]
    else:
        return None
    return block[:j] + before, after + block[j + 1 :]


def _leaves(s, in_loop=False) -> bool:
    """May ``s`` leave the statement list it is in: a ``return`` or ``raise``, or a ``break``
    or ``continue`` not of a loop inside it?"""
    if isinstance(s, (A.Return, A.Raise)):
        return True
    if isinstance(s, (A.Break, A.Continue)):
        return not in_loop
    if isinstance(s, A.FunctionDef):
        return False
    inner = in_loop or isinstance(s, (A.While, A.For))
    return any(
        _leaves(x, inner)
        for b in _BLOCKS
        if isinstance(getattr(s, b, None), list)
        for x in getattr(s, b)
    )


def _skip_mark():
    """What a path that skips the join runs after it: nothing -- a ``pass`` marked as that, so
    that a copy for the paths that reach the join can leave the branch out (``reaching``)."""
    mark = A.Pass()
    mark.skips_join = True
    return mark


def _skips(after: list) -> bool:
    return len(after) == 1 and _is_mark(after[0])


def _is_mark(s) -> bool:
    return isinstance(s, A.Pass) and getattr(s, "skips_join", False)


def unmarked(stmts: list) -> list:
    """``stmts`` (after a join) without the marks of paths that skip it."""
    out = []
    for s in stmts:
        if _is_mark(s):
            continue
        if isinstance(s, A.If):
            s.body = unmarked(s.body) or [A.Pass()]
            s.orelse = unmarked(s.orelse)
        out.append(s)
    return out


def reaching(stmts: list, known: dict | None = None) -> list:
    """A copy of ``stmts`` (after a join) for the paths that reached it: an ``if`` on a saved
    condition with a branch that skips the join is the other branch -- and so is an ``if`` on a
    condition ``known`` says every such path found true or false (``{name: value}``)."""

    def taken(s):
        if not isinstance(s.test, A.Name):
            return None
        if known and s.test.id in known:
            return s.body if known[s.test.id] else s.orelse
        if len(s.body) == 1 and _is_mark(s.body[0]):
            return s.orelse
        if len(s.orelse) == 1 and _is_mark(s.orelse[0]):
            return s.body
        return None

    return _pruned(stmts, taken)


def leaving(stmts: list, known: dict | None = None) -> list:
    """A copy of ``stmts`` (after a join) for the paths that skipped it: a branch with no path
    that skips it (it reads the join's result) is not taken -- nor one of an ``if`` on a
    condition ``known`` says every such path found the other way (``{name: value}``)."""

    def taken(s):
        if known and isinstance(s.test, A.Name) and s.test.id in known:
            return s.body if known[s.test.id] else s.orelse
        yes, no = _has_mark(s.body), _has_mark(s.orelse)
        return None if yes == no else s.body if yes else s.orelse

    return _pruned(stmts, taken)


def _pruned(stmts: list, taken) -> list:
    """A copy of ``stmts`` without the marks, each ``if`` that ``taken`` says only one branch of
    is taken (the branch, or None) replaced by that branch."""
    out = []
    for s in stmts:
        if _is_mark(s):
            continue
        if isinstance(s, A.If):
            branch = taken(s)
            if branch is not None:
                out += _pruned(branch, taken)
                continue
            s = A.copy_location(
                A.If(
                    test=A.deepcopy(s.test),
                    body=_pruned(s.body, taken) or [A.Pass()],
                    orelse=_pruned(s.orelse, taken),
                ),
                s,
            )
        else:
            s = A.deepcopy(s)
        out.append(s)
    return out


def _has_mark(stmts: list) -> bool:
    return any(_is_mark(s) for s in walk_own_statements(stmts))


def _returns(block: list) -> bool:
    """Does every path through ``block`` end in a ``return``?"""
    if not block:
        return False
    last = block[-1]
    if isinstance(last, A.Return):
        return True
    return isinstance(last, A.If) and _returns(last.body) and _returns(last.orelse)


# ---------------------------------------------------------------------- statement lists

_BLOCKS = ("body", "orelse", "finalbody")


def walk_own_statements(body: list):
    """Statements of a function's own scope, nested blocks included, not nested functions'."""
    stack = list(reversed(body))
    while stack:
        s = stack.pop()
        yield s
        if isinstance(s, A.FunctionDef):
            continue
        for b in _BLOCKS:
            block = getattr(s, b, None)
            if isinstance(block, list):
                stack.extend(reversed(block))


def statement_lists(f):
    """Every statement list of ``f``'s own scope (``f`` a function, or a list of statements:
    it and those in it)."""
    body = f if isinstance(f, list) else f.body
    out = [body]
    for s in walk_own_statements(body):
        if isinstance(s, A.FunctionDef):
            continue
        for b in _BLOCKS:
            block = getattr(s, b, None)
            if isinstance(block, list) and block and isinstance(block[0], A.stmt):
                out.append(block)
    return out


def own_statement(f, stmt) -> bool:
    return any(s is stmt for s in walk_own_statements(f.body))


def replace(f, stmt, new: list) -> None:
    for block in statement_lists(f):
        for i, s in enumerate(block):
            if s is stmt:
                block[i : i + 1] = new
                return
    raise AssertionError("statement not found")


def remove(f, which) -> None:
    for block in statement_lists(f):
        block[:] = [s for s in block if not which(s)] or [A.Pass()]


def parents_of(root) -> dict:
    out = {}
    for node in A.walk(root):
        for child in A.iter_child_nodes(node):
            out[id(child)] = node
    return out


def at_tail(body: list, ret) -> bool:
    if not body:
        return False
    last = body[-1]
    if last is ret:
        return True
    if isinstance(last, A.If):
        return at_tail(last.body, ret) or at_tail(last.orelse, ret)
    return False


def with_tails(body: list, stmt) -> list:
    """``body``'s tail ``return``s as ``stmt`` (``t = call``, ``call``, ``return call``) does
    with the value; a body that can fall off its end returns None."""
    if not body:
        body = [A.Return(value=None)]
    last = body[-1]
    if isinstance(last, A.Return):
        value = last.value if last.value is not None else A.const(None)
        if isinstance(stmt, A.Assign):
            new = [A.copy_location(A.assign(A.deepcopy(stmt.targets[0]), value), last)]
        elif isinstance(stmt, A.Expr):
            new = [] if isinstance(value, (A.Name, A.Constant)) else [A.expr_stmt(value)]
        else:
            new = [A.copy_location(A.return_(value), last)]
        return body[:-1] + new
    if isinstance(last, A.If):
        last.body = with_tails(last.body, stmt) or [A.Pass()]
        last.orelse = with_tails(last.orelse, stmt) or [A.Pass()]
        return body
    return with_tails(body + [A.Return(value=None)], stmt)
