"""After Flatten, the backpropagator is one flat function Numba can compile: no function inside it,
no closure, no ``nonlocal``, and the continuation of the entry -- the seed -- a number it is given.

This is the paper's staging step done by hand for one case: where the continuations are known
when the code is generated, they need not exist when it runs. Lantern's generator inlined them
into straight C++; here each local function the emitted code calls in one place is inlined at
that call, its own names renamed apart, until none is left::

    def f_bp(k, x, n):                              def f_bp(seed, x, n):
        def loop_L3_bp(k, i, x):                        k_1 = ...; i = 0; x_1 = x
            nonlocal w_bar                              frames = []
            frames = []                                 while i < n:
            while i < n: ...                                ...
            x_bar = k(x)             ->                 y = x_1
            ...                                         value = y * 2.0
            return x_bar                                y_bar = seed
        def after_L3(y):                                ...
            y_bar = k(y * 2.0)                          return value, x_bar
            return y_bar * 2.0
        x_bar = loop_L3_bp(after_L3, 0, x)
        return x_bar

* A local function is inlined where it is called, when that call is the only mention of it and
  stands alone as a statement (``t = g(...)``, ``g(...)``, ``return g(...)``). Its parameters are
  assigned the arguments, its ``return`` at the end assigns the call's target. A continuation passed
  as an argument is first a parameter, ``k_1 = after_L3``, then called as ``k_1(...)``: that alias
  is replaced by the function it names, and the call inlined in turn.
* Inlining keeps what the program computes: a closure reads its free variables when it runs,
  and so does the inlined body, at the same place; its own variables are renamed, so it neither
  sees nor changes the caller's. ``nonlocal`` declarations name the caller's variables, which
  are now the inlined code's own: they go.
* The entry's continuation becomes its result: ``t = k(v)`` is ``value = v; t = seed``, and the
  function returns ``(value, adjoints)``.

Anything else -- a local function called from two places (a loop kept recursive, a helper's
backpropagator, recursion), a lambda, a ``return`` inside a loop of an inlined function -- is not
flattened: ``Unstageable`` says which construct, at the user's line, and the caller falls back
to the Python backpropagator (``cpsad.jit`` warns once, and computes the same numbers).

The pass also lists the free names of the result that hold data (a closure's cell, a global
array): Numba would freeze them as constants, so they become parameters, read at each call.
"""

from __future__ import annotations

import types

from . import astlib as A
from .errors import TransformError
from .naming import Namer
from .scoping import local_names, rename_free, walk_own
from .unit import Unit


class Unstageable(TransformError):
    """What kept a function out of Numba: the construct, at the user's line."""


class Flatten:
    name = "flatten"
    invariant = "one flat function: no nested function, closure or nonlocal; the seed a parameter"

    def run(self, unit: Unit) -> None:
        self.unit = unit
        f = unit.tree
        taken = {n.id for n in A.walk(f) if isinstance(n, A.Name)}
        taken |= {d.name for d in A.walk(f) if isinstance(d, A.FunctionDef)}
        taken |= {a for d in A.walk(f) if isinstance(d, A.FunctionDef) for a in A.arg_names(d.args)}
        self.namer = Namer(taken)
        inlined = []
        while True:
            nested = [s for s in walk_own_statements(f.body) if isinstance(s, A.FunctionDef)]
            if not nested:
                break
            for d in nested:
                if self._inline(f, d):
                    inlined.append(d.name)
                    break
            else:
                d = nested[0]
                raise self._why_not(f, d)
        for node in A.walk(f):
            if isinstance(node, A.Lambda):
                raise self.unstageable("a lambda", node)
            if isinstance(node, (A.Global, A.Try, A.With, A.Raise)):
                what = type(node).__name__.lower()
                raise self.unstageable(f"a `{what}` statement", node)
        _remove(f, lambda s: isinstance(s, A.Nonlocal))
        self._seed(f)
        self._positional(f)
        unit.staged_params = self._data_names(f)
        f.args.args.extend(A.params(unit.staged_params).args)
        unit.notes[self.name] = [
            "inlined " + (", ".join(inlined) or "nothing") + "; the seed is a parameter"
        ]

    def _positional(self, f) -> None:
        """Every parameter positional, in the order the caller passes them: the seed, the
        positional ones (their defaults filled in by the caller), the keyword-only ones, the
        tuple of ``*args`` -- then the data, appended after them (a data parameter after
        ``*rest`` would take an item of it)."""
        a = f.args
        if a.kwarg is not None:
            raise self.unstageable("a `**` parameter", f)
        rest = [a.vararg] if a.vararg is not None else []
        f.args = A.arguments(
            posonlyargs=[],
            args=[*a.posonlyargs, *a.args, *a.kwonlyargs, *rest],
            vararg=None,
            kwonlyargs=[],
            kw_defaults=[],
            kwarg=None,
            defaults=[],
        )

    # ------------------------------------------------------------------ inlining

    def _inline(self, f, d) -> bool:
        """Inline ``d`` at its one call, if that is all that mentions it; False if not yet."""
        mentions = [n for n in A.walk(f) if isinstance(n, A.Name) and n.id == d.name]
        if not mentions or any(isinstance(n, A.Name) and n.id == d.name for n in A.walk(d)):
            return False
        parents = _parents(f)
        ref = mentions[0]
        parent = parents[id(ref)]
        if (
            len(mentions) == 1
            and isinstance(parent, A.Assign)
            and parent.value is ref
            and _own_statement(f, parent)
        ):
            # ``k_1 = after_L3``: the alias becomes the function's name where it is called
            (target,) = parent.targets if len(parent.targets) == 1 else (None,)
            if not isinstance(target, A.Name):
                return False
            uses = [n for n in A.walk(f) if isinstance(n, A.Name) and n.id == target.id]
            loads = [n for n in uses if n is not target]
            if len(loads) != 1 or any(not isinstance(n.ctx, A.Load) for n in loads):
                return False
            loads[0].id = d.name
            _remove(f, lambda s: s is parent)
            return True
        calls = _standalone_calls(f, mentions, parents)
        if calls is None:
            return False
        if len(calls) == 1:
            ((call, stmt),) = calls
            mapping, bindings = self._bind(f, d, calls)
            body = self._tails(d.body, stmt, d)
            _replace(f, stmt, bindings[0] + body)
            _remove(f, lambda s: s is d)
            return True
        return self._inline_join(f, d, calls)

    def _bind(self, f, d, calls) -> tuple[dict, list]:
        """Rename ``d``'s own names apart (in place); the assignments of its parameters at each
        of ``calls``. A parameter every call gives the same local function (a continuation),
        and never assigned, is that function's name in the body instead."""
        args = d.args
        params = A.arg_names(args)
        for call, _ in calls:
            if (
                call.keywords
                or any(isinstance(a, A.Starred) for a in call.args)
                or args.vararg
                or args.kwarg
                or args.kwonlyargs
                or args.defaults
                or len(call.args) != len(params)
            ):
                raise self.unstageable(
                    "a call of a local function with other than its parameters", call
                )
        # A parameter given a function -- a continuation: a local function or the entry's own
        # -- and never assigned in the body is that function's name in the body, not a variable
        # (so the call of it is seen, and inlined or made the seed, in turn).
        functions = {self.unit.cont_name} | {
            s.name for s in walk_own_statements(f.body) if isinstance(s, A.FunctionDef)
        }
        stored = {n.id for n in A.walk(d) if isinstance(n, A.Name) and isinstance(n.ctx, A.Store)}
        # (in sorted order: the same text in every process, which Numba's cache keys on)
        mapping = {n: self.namer.fresh(n) for n in sorted(local_names(d) | set(params))}
        given = {}
        for i, p in enumerate(params):
            names = {a.id if isinstance(a, A.Name) else None for a in (c.args[i] for c, _ in calls)}
            (name,) = names if len(names) == 1 else (None,)
            if name in functions and p not in stored:
                mapping[p] = given[p] = name
        for s in d.body:
            rename_free(s, mapping)  # (in its nested functions too, where they do not bind it)
        bindings = [
            [
                A.copy_location(A.assign(A.store(mapping[p]), a), call)
                for p, a in zip(params, call.args)
                if p not in given
            ]
            for call, _ in calls
        ]
        return mapping, bindings

    def _inline_join(self, f, d, calls) -> bool:
        """Inline a join -- the continuation of an ``if`` both of whose branches call it -- once,
        after the ``if``: each branch's part before its call stays in the ``if`` (with the
        arguments assigned to the join's parameters), the part after it goes to a second
        ``if`` on the same, saved, condition, after the join::

            if c:                            branch = c
                z = x * y                    if branch:
                z_bar = after_if(z)              z = x * y
                x_bar = z_bar * y                z_1 = z
            else:                  ->        else:
                z = sin(x)                       z = sin(x)
                z_bar = after_if(z)              z_1 = z
                x_bar = z_bar * cos(x)       ...after_if's body; joined = its result...
                                             if branch:
                                                 z_bar = joined
                                                 x_bar = z_bar * y
                                             else:
                                                 z_bar = joined
                                                 x_bar = z_bar * cos(x)

        Only where every path through the ``if`` calls the join exactly once, at the top of
        a branch (not in a loop); False where not (yet)."""
        stmts = [stmt for _, stmt in calls]
        found = _enclosing(f, stmts)
        if found is None:
            return False
        block, i = found
        joined = self.namer.fresh("joined")
        parts = {}
        _, bindings = self._bind(f, d, calls)
        joining = self.namer.fresh("joining")
        marks = []  # ``joining = True`` at each call: kept if a path skips the join
        for (_call, stmt), binding in zip(calls, bindings):
            marks.append(A.copy_location(A.assign(A.store(joining), A.const(True)), stmt))
            binding.append(marks[-1])
            if isinstance(stmt, A.Assign):
                after = [A.copy_location(A.assign(stmt.targets[0], A.name(joined)), stmt)]
            elif isinstance(stmt, A.Return):
                after = [A.copy_location(A.return_(A.name(joined)), stmt)]
            else:
                after = []
            parts[id(stmt)] = (binding, after)
        skipped: list = []
        split = _split([block[i]], parts, self.namer, skipped)
        if split is None:
            return False
        before, after = split
        target = A.assign(A.store(joined), A.const(None))
        body = self._tails(d.body, target, d)
        if skipped:  # (a path that calls the seed, not the join: the join runs only after one)
            before = [A.copy_location(A.assign(A.store(joining), A.const(False)), block[i])]
            before += split[0]
            body = [A.copy_location(A.If(test=A.name(joining), body=body, orelse=[]), block[i])]
        block[i : i + 1] = before + body + after
        if not skipped:
            _remove(f, lambda s: any(s is m for m in marks))
        _remove(f, lambda s: s is d)
        return True

    def _tails(self, body: list, stmt, d) -> list:
        """``body`` with its ``return``s -- at its end, or at the ends of a final ``if`` -- as
        what the call's statement does with the value."""
        for node in (n for s in body for n in walk_own(s)):
            if isinstance(node, A.Return) and not _at_tail(body, node):
                raise self.unstageable("a `return` before the end of a local function", node)
        return _with_tails(body, stmt)

    def _why_not(self, f, d) -> Unstageable:
        mentions = [n for n in A.walk(f) if isinstance(n, A.Name) and n.id == d.name]
        if any(isinstance(n, A.Name) and n.id == d.name for n in A.walk(d)):
            return self.unstageable("recursion (a local function that calls itself)", d)
        if len(mentions) > 1:
            return self.unstageable(
                f"a local function called from {len(mentions)} places ({d.name})", mentions[-1]
            )
        where = mentions[0] if mentions else d
        calls = [c for c in A.walk(f) if isinstance(c, A.Call) and A.is_name(c.func)]
        if any(c.func.id == self.unit.bp_name and where in c.args for c in calls):
            return self.unstageable(f"recursion ({self.unit.fn.__name__} calls itself)", where)
        return self.unstageable(f"a local function used as a value ({d.name})", where)

    # ------------------------------------------------------------------ the seed

    def _seed(self, f) -> None:
        """``t = k(v)`` -> ``value = v; t = seed``; ``return r`` -> ``return value, r``."""
        k = self.unit.cont_name
        names = A.arg_names(f.args)
        if not names or names[0] != k:
            raise self.unstageable("a backpropagator without its continuation", f)
        seed, value = self.namer.fresh("seed"), self.namer.fresh("value")
        f.args.args[0].id = seed
        parents = _parents(f)
        for n in [n for n in A.walk(f) if isinstance(n, A.Name) and n.id == k]:
            call = parents.get(id(n))
            stmt = parents.get(id(call))
            if not (
                isinstance(call, A.Call)
                and call.func is n
                and len(call.args) == 1
                and not call.keywords
                and isinstance(stmt, (A.Assign, A.Expr, A.Return))
                and stmt.value is call
            ):
                raise self.unstageable("the continuation used other than called once", n)
            first = A.copy_location(A.assign(A.store(value), call.args[0]), stmt)
            stmt.value = A.name(seed)
            _replace(f, stmt, [first] if isinstance(stmt, A.Expr) else [first, stmt])
        for node in list(walk_own_statements(f.body)):
            if isinstance(node, A.Return):
                node.value = A.tuple_([A.name(value), node.value or A.const(None)])

    def _data_names(self, f) -> list[str]:
        """Free names of ``f`` that hold data (not a module or a function): parameters."""
        bound = set(A.arg_names(f.args))
        for n in A.walk(f):
            if isinstance(n, A.Name) and not isinstance(n.ctx, A.Load):
                bound.add(n.id)
        out = []
        for n in A.walk(f):
            if isinstance(n, A.Name) and n.id not in bound and n.id not in out:
                if n.id in self.unit.callees:
                    raise self.unstageable(f"a call of a helper's backpropagator ({n.id})", n)
                found, obj = self.unit.lookup(n.id)
                if not found:
                    continue
                if isinstance(obj, types.ModuleType) or callable(obj):
                    continue
                out.append(n.id)
        return sorted(out)

    def unstageable(self, what: str, node) -> Unstageable:
        err = self.unit.error(f"not compiled by Numba: {what}", node)
        out = Unstageable(
            err.message,
            filename=err.filename,
            lineno=err.lineno,
            col=err.col,
            source_line=(err.text or "").rstrip("\n") or None,
        )
        out.what = what
        return out


# ---------------------------------------------------------------------- joins


def _standalone_calls(f, mentions, parents) -> list | None:
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
        if not alone or not _own_statement(f, stmt):
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


def _split(block: list, parts: dict, namer, skipped: list) -> tuple[list, list] | None:
    """``block`` as (what runs before the join, what runs after it), where every path through
    it reaches at most one of the calls ``parts`` maps (statement id -> its bindings, and what
    replaces it after the join); None where a path reaches two, or one inside a loop, or may
    leave the block before it. A path that reaches none is all before the join; if it does not
    return, it is added to ``skipped`` (the join must be skipped after it)."""
    holding = [j for j, s in enumerate(block) if _contains(s, set(parts))]
    if not holding:  # a path without the join: all of it before the join, which it skips
        if not _returns(block):
            skipped.append(block)
        return block, []
    if len(holding) != 1:
        return None
    j = holding[0]
    s = block[j]
    leaves = (A.Return, A.Break, A.Continue, A.Raise)
    if any(isinstance(n, leaves) for x in block[:j] for n in walk_own_statements([x])):
        return None
    if id(s) in parts:
        before, after = parts[id(s)]
    elif isinstance(s, A.If):
        yes, no = _split(s.body, parts, namer, skipped), _split(s.orelse, parts, namer, skipped)
        if yes is None or no is None:
            return None
        branch = namer.fresh("branch")
        test = A.copy_location(A.assign(A.store(branch), s.test), s)
        before = [
            test,
            A.copy_location(
                A.If(test=A.name(branch), body=yes[0] or [A.Pass()], orelse=no[0] or [A.Pass()]), s
            ),
        ]
        after = [
            A.copy_location(A.If(test=A.name(branch), body=yes[1] or [A.Pass()], orelse=no[1]), s)
        ]
    else:
        return None
    return block[:j] + before, after + block[j + 1 :]


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


def _lists(f):
    """Every statement list of ``f``'s own scope."""
    out = [f.body]
    for s in walk_own_statements(f.body):
        if isinstance(s, A.FunctionDef):
            continue
        for b in _BLOCKS:
            block = getattr(s, b, None)
            if isinstance(block, list) and block and isinstance(block[0], A.stmt):
                out.append(block)
    return out


def _own_statement(f, stmt) -> bool:
    return any(s is stmt for s in walk_own_statements(f.body))


def _replace(f, stmt, new: list) -> None:
    for block in _lists(f):
        for i, s in enumerate(block):
            if s is stmt:
                block[i : i + 1] = new
                return
    raise AssertionError("statement not found")


def _remove(f, which) -> None:
    for block in _lists(f):
        block[:] = [s for s in block if not which(s)] or [A.Pass()]


def _parents(root) -> dict:
    out = {}
    for node in A.walk(root):
        for child in A.iter_child_nodes(node):
            out[id(child)] = node
    return out


def _at_tail(body: list, ret) -> bool:
    if not body:
        return False
    last = body[-1]
    if last is ret:
        return True
    if isinstance(last, A.If):
        return _at_tail(last.body, ret) or _at_tail(last.orelse, ret)
    return False


def _with_tails(body: list, stmt) -> list:
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
        last.body = _with_tails(last.body, stmt) or [A.Pass()]
        last.orelse = _with_tails(last.orelse, stmt) or [A.Pass()]
        return body
    return _with_tails(body + [A.Return(value=None)], stmt)
