"""What the rewrites of Simplify share: the states of an adjoint, the functions of a tree and their
statement lists, what a call of each closure reads and writes, which statements run nothing.

Invariant: nothing here changes a tree, except ``_drop_empty``, which leaves each ``if`` without
``pass`` where it has other statements and each function with a body (the driver's last step).
"""

from __future__ import annotations

from .. import astlib as A

# What is known of an adjoint at a point: absent (None), present, the number 0.0 (a Python
# number's adjoint starts there, never absent), or it depends on the path taken.
NONE, SET, ZERO, MAYBE = "none", "set", "zero", "maybe"


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


def closure_effects(root, facts):
    """For each function nested in ``root``: the outer names a call of it may read and write,
    following the calls it makes to other local functions (a join called from a continuation)."""
    if not facts[id(root)].nested:
        return {}, {}  # no closure (for speed: no sweep of the statements for them)
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


def _inert(stmt) -> bool:
    """A statement whose execution evaluates nothing: a plain def (its defaults constants, if
    any), a declaration."""
    if isinstance(stmt, A.Nonlocal):
        return True
    return (
        isinstance(stmt, A.FunctionDef)
        and not stmt.decorator_list
        and all(isinstance(d, A.Constant) for d in stmt.args.defaults)
        and all(d is None or isinstance(d, A.Constant) for d in stmt.args.kw_defaults)
    )


def _drop_empty(f) -> None:
    for block in statement_lists(f):
        for s in block:
            if isinstance(s, A.If):
                s.body = [x for x in s.body if not isinstance(x, A.Pass)] or [A.Pass()]
                s.orelse = [x for x in s.orelse if not isinstance(x, A.Pass)]
    if not f.body:
        f.body = [A.Pass()]
