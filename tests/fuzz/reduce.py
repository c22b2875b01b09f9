"""The reducer: shrink a failing program while the same failure persists.

``reduce(program, key)`` applies edits greedily -- delete a statement (halves of a block first),
replace an ``if`` or a loop by its body, shorten a loop to one iteration, replace an expression by
one of its operands or by a constant, drop a parameter of ``f`` nobody reads -- and keeps each
edit after which the oracle still says ``key`` (the failure's class and normalized message),
until no edit helps or the budget is spent. Edits that make the program invalid Python, or make
plain Python raise, are rejected by the oracle itself (the program must still run).
"""

from __future__ import annotations

import ast
import copy
import time

from tests.fuzz.gen import Program
from tests.fuzz.oracle import check


def _stmt_lists(tree):
    """Every non-empty list of statements, in a deterministic order."""
    for node in ast.walk(tree):
        for fld in ("body", "orelse"):
            lst = getattr(node, fld, None)
            if isinstance(lst, list) and lst and isinstance(lst[0], ast.stmt):
                yield node, fld, lst


def _nodes(tree):
    return list(ast.walk(tree))


def _fill(lst):
    if not lst:
        lst.append(ast.Pass())


def _used_names(tree, skip_fn="f") -> set:
    return {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}


class Edits:
    """Candidate edits of a module, each a function ``tree -> bool`` (applied?) on a copy."""

    def __init__(self, tree):
        self.tree = tree

    def deletions(self):
        lists = list(_stmt_lists(self.tree))
        out = []
        for li, (_, _, lst) in enumerate(lists):
            n = len(lst)
            size = n // 2
            while size >= 2:  # chunks first: big programs shrink in few tries
                for start in range(0, n - size + 1, size):
                    out.append(("del", li, start, size))
                size //= 2
        for li, (_, _, lst) in enumerate(lists):
            for si in reversed(range(len(lst))):
                out.append(("del", li, si, 1))
        return out

    def structural(self):
        out = []
        for ni, node in enumerate(_nodes(self.tree)):
            if isinstance(node, ast.If):
                out.append(("lift", ni, "body"))
                if node.orelse:
                    out.append(("lift", ni, "orelse"))
                    out.append(("drop_else", ni))
            elif isinstance(node, (ast.For, ast.While)):
                out.append(("lift", ni, "body"))
                if isinstance(node, ast.For) and not _is_range(node.iter):
                    out.append(("lift", ni, "next"))
                if isinstance(node, ast.For) and _is_range(node.iter):
                    out.append(("range1", ni))
                if node.orelse:
                    out.append(("drop_else", ni))
            elif isinstance(node, ast.FunctionDef) and node.decorator_list:
                out.append(("undecorate", ni))
        return out

    def expressions(self):
        out = []
        for ni, node in enumerate(_nodes(self.tree)):
            if not isinstance(node, ast.expr) or isinstance(node, (ast.Name, ast.Constant)):
                continue
            if isinstance(getattr(node, "ctx", None), (ast.Store, ast.Del)):
                continue
            for ki in range(len(_operands(node))):
                out.append(("child", ni, ki))
            out.append(("const", ni, 1.0))
        for ni, node in enumerate(_nodes(self.tree)):
            if isinstance(node, ast.Constant) and isinstance(node.value, float):
                if node.value not in (1.0, 0.5):
                    out.append(("const", ni, 0.5))
            elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
                out.append(("const", ni, 0.5))
        return out


def _operands(node) -> list:
    """The sub-expressions that may stand for ``node``: not a call's function, not the module of
    ``np.sin`` (a program with ``np`` where a number was is no smaller, only odder)."""
    if isinstance(node, ast.Call):
        return [a for a in node.args if isinstance(a, ast.expr)] + [k.value for k in node.keywords]
    if isinstance(node, ast.Attribute):
        return [] if isinstance(node.value, ast.Name) else [node.value]
    return [c for c in ast.iter_child_nodes(node) if isinstance(c, ast.expr)]


def _is_range(e) -> bool:
    return isinstance(e, ast.Call) and isinstance(e.func, ast.Name) and e.func.id == "range"


def apply_edit(tree, edit) -> bool:
    kind = edit[0]
    if kind == "del":
        _, li, start, size = edit
        lists = list(_stmt_lists(tree))
        if li >= len(lists):
            return False
        _, _, lst = lists[li]
        if start + size > len(lst):
            return False
        del lst[start : start + size]
        _fill(lst)
        return True
    nodes = _nodes(tree)
    ni = edit[1]
    if ni >= len(nodes):
        return False
    node = nodes[ni]
    if kind == "lift":
        which = edit[2]
        new = list(getattr(node, "body" if which == "next" else which))
        if isinstance(node, ast.For) and which in ("body", "next"):
            new = [ast.Assign([node.target], _first_of(node.iter, which == "next"))] + new
        return _replace_stmt(tree, node, new)
    if kind == "drop_else":
        node.orelse = []
        return True
    if kind == "range1":
        node.iter = ast.Call(ast.Name("range", ast.Load()), [ast.Constant(1)], [])
        return True
    if kind == "undecorate":
        node.decorator_list = []
        return True
    if kind == "child":
        kids = _operands(node)
        if edit[2] >= len(kids):
            return False
        return _replace_expr(tree, node, kids[edit[2]])
    if kind == "const":
        return _replace_expr(tree, node, ast.Constant(edit[2]))
    raise ValueError(kind)


def _first_of(it, general=False):
    """The first element of the iterable ``it``: ``it[0]``, or ``next(iter(it))`` (``general``)."""
    if _is_range(it):
        args = it.args
        return copy.deepcopy(args[0]) if len(args) >= 2 else ast.Constant(0)
    if not general:
        return ast.Subscript(it, ast.Constant(0), ast.Load())
    return ast.Call(
        ast.Name("next", ast.Load()), [ast.Call(ast.Name("iter", ast.Load()), [it], [])], []
    )


def _replace_stmt(tree, old, new) -> bool:
    for _, _, lst in _stmt_lists(tree):
        for i, s in enumerate(lst):
            if s is old:
                lst[i : i + 1] = new
                _fill(lst)
                return True
    return False


def _replace_expr(tree, old, new) -> bool:
    for parent in ast.walk(tree):
        for fld, val in ast.iter_fields(parent):
            if val is old:
                setattr(parent, fld, new)
                return True
            if isinstance(val, list):
                for i, v in enumerate(val):
                    if v is old:
                        val[i] = new
                        return True
    return False


def _drop_unused_params(tree, program: Program):
    """Candidate programs without one of ``f``'s parameters that nobody reads."""
    f = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "f")
    used = {n.id for n in ast.walk(f) if isinstance(n, ast.Name)}
    for i, a in enumerate(f.args.args):
        if a.arg not in used and len(f.args.args) > 1:
            t = copy.deepcopy(tree)
            g = next(n for n in t.body if isinstance(n, ast.FunctionDef) and n.name == "f")
            del g.args.args[i]
            values = list(program.args())
            del values[i]
            params = list(program.params)
            del params[i]
            yield t, params, tuple(values)


def _unused_imports(tree):
    used = _used_names(tree)
    tree.body = [
        s
        for s in tree.body
        if not (
            isinstance(s, ast.Import) and all((a.asname or a.name) not in used for a in s.names)
        )
    ]


def reduce(
    program: Program,
    key,
    budget: int = 3000,
    seconds: float = 300.0,
    log=None,
    perturb=None,
    order: int = 1,
) -> Program:
    """The smallest program found, by greedy edits, on which ``check`` still gives ``key`` (a
    ``Result.key``, or a ``Result.jvp_key`` for forward mode; ``perturb``: as ``check``'s, for
    testing the reducer on a deliberately wrong cpsad). ``order`` 2 or 3: the judge of higher
    derivatives, ``higher.check_higher``, gives ``key`` (a ``jvp_key`` there: hessian or hvp)."""
    start = time.monotonic()
    tries = 0
    forward = key[0].startswith("jvp:")  # a forward-mode failure: ("jvp:" + class, message)
    current = Program(
        program.seed,
        ast.unparse(ast.parse(program.source)) + "\n",
        list(program.params),
        set(program.features),
        program.attempt,
        program.args(),
    )

    def still_fails(candidate: Program) -> bool:
        nonlocal tries
        tries += 1
        try:
            if order > 1:
                from tests.fuzz.higher import check_higher

                res = check_higher(candidate, order, perturb, use_autograd=False, forward=forward)
            else:
                res = check(candidate, perturb=perturb, use_autograd=False, forward=forward)
            return (res.jvp_key if forward else res.key) == key
        except Exception:
            return False

    if not still_fails(current):
        return program  # not reproducible after formatting: hand back the original
    changed = True
    while changed and tries < budget and time.monotonic() - start < seconds:
        changed = False
        for t, params, values in _drop_unused_params(ast.parse(current.source), current):
            cand = _with(current, t, params, values)
            if still_fails(cand):
                current, changed = cand, True
                break
        for phase in ("deletions", "structural", "expressions"):
            edits = getattr(Edits(ast.parse(current.source)), phase)()
            i = 0
            while i < len(edits) and tries < budget and time.monotonic() - start < seconds:
                t = ast.parse(current.source)
                if not apply_edit(t, edits[i]):
                    i += 1
                    continue
                _unused_imports(t)
                cand = _with(current, t)
                if cand.source != current.source and still_fails(cand):
                    current, changed = cand, True
                    if log:
                        log(f"  {tries} tries, {len(current.source.splitlines())} lines")
                    edits = getattr(Edits(ast.parse(current.source)), phase)()
                    continue  # the same index: the edits after it moved down
                i += 1
    return current


def _with(p: Program, tree, params=None, values=None) -> Program:
    ast.fix_missing_locations(tree)
    return Program(
        p.seed,
        ast.unparse(tree) + "\n",
        list(params if params is not None else p.params),
        set(p.features),
        p.attempt,
        values if values is not None else p.values,
    )
