"""After Desugar, there are no loops, comprehensions or lambdas: each is a local function.

A loop becomes a local recursive function whose parameters are the loop-carried variables, named
after its line; calling it runs the loop, and what it returns is the carried state after it::

    acc = 0.0                           acc = 0.0
    for i in range(n):                  def loop_L2(i, acc):
        acc = acc + x * i        ->         if i < n:
    return acc                                  acc = acc + x * i
                                                return loop_L2(i + 1, acc)
                                            return acc
                                        acc = loop_L2(0, acc)
                                        return acc

``continue`` is the recursive call, ``break`` returns the state, and a ``return v`` inside a loop
returns ``(True, v, *state)`` so the code after the loop can return ``v`` in turn (the loop then
returns ``(False, None, *state)`` when it ends normally). ``for ... else`` runs the ``else`` block on
the normal exit. A ``for`` over ``range``, ``enumerate``, ``zip``, ``reversed``, ``dict.items()`` /
``.keys()`` / ``.values()`` or any sequence indexes it, so every element read is a subscript
(which has a derivative). A comprehension is a local function that builds its list (or dict) in a
loop; a lambda is a local ``def``. The continuation-passing transform then handles all of them as
it handles any local function -- a loop's recursion is the user's own recursion in CPS.

``del x`` is dropped: Fence accepted it only where it changes no value (on a name no later line
mentions, outside loops), and the emitted code frees each array after its last use itself.
"""

from __future__ import annotations

import builtins
import functools
import importlib
import itertools
import sys
import types

from . import anno
from . import astlib as A
from .normalize import falls_through
from .scoping import free_names
from .unit import Unit


def bind_imports(unit: Unit) -> None:
    """``import numpy as np`` or ``from math import sin`` at the function's top level (what Fence
    let through): the module is imported now, and the statement dropped -- its names are bound
    for the emitted code and for Resolve as globals of the function's own, which they are: no
    other statement binds them. (Python imports a module once, so running the statement again at
    each call would change nothing.)"""
    kept = []
    for s in unit.tree.body:
        if not isinstance(s, (A.Import, A.ImportFrom)):
            kept.append(s)
            continue
        for name, obj in _imported(unit, s):
            unit.namer.reserve(name)
            unit.injected[name] = obj
    unit.tree.body = kept or [A.copy_location(A.Pass(), unit.tree)]


def _imported(unit: Unit, s) -> list:
    """(name, object) for each name the import statement ``s`` binds."""
    package = unit.env_globals.get("__package__")
    try:
        if isinstance(s, A.Import):
            out = []
            for a in s.names:
                module = importlib.import_module(a.name)
                top = a.name.split(".")[0]
                out.append((a.asname, module) if a.asname else (top, sys.modules[top]))
            return out
        source = "." * (s.level or 0) + (s.module or "")
        module = importlib.import_module(source, package)
        out = []
        for a in s.names:
            obj = getattr(module, a.name, _MISSING)
            if obj is _MISSING:  # a submodule not imported yet
                obj = importlib.import_module(f"{module.__name__}.{a.name}")
            out.append((a.asname or a.name, obj))
        return out
    except ImportError as exc:
        raise unit.error(f"the import failed: {exc}", s) from None


_MISSING = object()


# Calls that may make a one-shot iterator, by the name called (``reversed(xs)``,
# ``itertools.combinations(xs, 2)``, ``map(f, xs)``), and the functions that read an iterable
# through at once: ``list(...)``, ... and, where they are consumed in their turn, the iterators
# made of iterables (``enumerate``, ``zip``, ``map``, ``filter``, itertools' combinatorics).
_ONE_SHOT = frozenset(
    {
        "reversed",
        "combinations",
        "permutations",
        "combinations_with_replacement",
        "map",
        "filter",
        "zip",
        "enumerate",
        "product",
        "accumulate",
    }
)
_CONSUMERS = (list, tuple, sorted, sum, min, max, dict)
_PASSING = (
    enumerate,
    zip,
    map,
    filter,
    itertools.combinations,
    itertools.permutations,
    itertools.combinations_with_replacement,
    itertools.product,
    itertools.accumulate,
)


def mark_consumed(unit: Unit) -> None:
    """Mark (``anno.CONSUMED``) each call of a one-shot name whose result is consumed where it
    is written -- the iterable of a ``for`` or a comprehension, ``*`` unpacked, or a positional
    argument of a function of ``_CONSUMERS`` (or of ``_PASSING``, itself consumed so) -- or
    kept in a name read once, so consumed, where it was assigned (``kept = filter(f, xs)``,
    then ``sum(kept)``; not in a loop or a function the assignment is outside of): what it
    makes is read once, so Resolve may compute it as the list of its items
    (``Context.one_shot_composite``). An iterator kept in a name read twice, returned or
    passed to a function of yours may be read twice -- the second time empty -- and stays as
    it is."""
    if not _names_used(getattr(unit, "fn", None), _ONE_SHOT):
        return  # (the common case: no walk)
    parent: dict = {}  # id(node) -> (its parent, the loop or function it runs in)
    candidates = []
    stored: dict = {}  # name -> how many times it is bound
    loads: dict = {}  # name -> the Name nodes that read it
    stack = [(unit.tree, None, unit.tree)]  # (node, its parent, the loop or function it runs in)
    while stack:
        node, up, where = stack.pop()
        cls = node.__class__
        if cls is A.Name:
            parent[id(node)] = (up, where)
            if isinstance(node.ctx, A.Load):
                loads.setdefault(node.id, []).append(node)
            else:
                stored[node.id] = stored.get(node.id, 0) + 1
            continue
        if cls in (A.Global, A.Nonlocal):
            for n in node.names:  # (another function may read it: never "read once")
                stored[n] = stored.get(n, 0) + 2
        if cls is A.Call:
            parent[id(node)] = (up, where)
            func = node.func
            if (func.id if isinstance(func, A.Name) else getattr(func, "attr", None)) in _ONE_SHOT:
                candidates.append(node)
        if cls in (A.ListComp, A.SetComp, A.DictComp, A.GeneratorExp):
            first = node.generators[0]
            stack.append((first.iter, first, where))  # (evaluated once, where the display is)
            stack += [(c, first, node) for c in A.iter_child_nodes(first) if c is not first.iter]
            stack += [(c, node, node) for c in A.iter_child_nodes(node) if c is not first]
            continue
        inner = node if cls in (A.FunctionDef, A.Lambda, A.While) else where
        for child in A.iter_child_nodes(node):
            # (a for's body repeats; its iterable is evaluated once)
            runs = node if cls is A.For and child is not node.iter else inner
            stack.append((child, node, runs))
    if not candidates:
        return

    def called(func):
        """The global object ``func`` names (None for a local name, or none found)."""
        path = A.dotted(func)
        if path is None:
            return None
        root, *rest = path.split(".")
        found, obj = unit.lookup(root)
        if not found or root in stored:
            return None
        for part in rest:
            obj = getattr(obj, part, None)
        return obj

    for call in candidates:
        node = call
        while True:
            up, where = parent.get(id(node), (None, None))
            if isinstance(up, (A.For, A.comprehension)):
                consumed = up.iter is node
            elif isinstance(up, A.Starred):
                consumed = True
            elif isinstance(up, A.Call) and any(a is node for a in up.args):
                obj = called(up.func)
                if any(obj is c for c in _PASSING):
                    node = up  # (consumed if it is)
                    continue
                consumed = any(obj is c for c in _CONSUMERS)
            elif (
                isinstance(up, A.Assign)
                and len(up.targets) == 1
                and isinstance(up.targets[0], A.Name)
                and stored.get(up.targets[0].id) == 1
                and len(loads.get(up.targets[0].id, ())) == 1
            ):  # kept in a name bound once and read once: consumed if that read is, as often
                read = loads[up.targets[0].id][0]
                if parent.get(id(read), (None, None))[1] is not where:
                    consumed = False
                else:
                    node = read
                    continue
            else:
                consumed = False
            break
        if consumed:
            anno.setanno(call, anno.CONSUMED, True)


def _names_used(fn, names) -> bool:
    """May the code of ``fn`` (its nested functions', lambdas', comprehensions' too) name one
    of ``names`` -- as a global, a local or an attribute? True where it has no code object."""
    code = getattr(fn, "__code__", None)
    if code is None:
        return True
    stack = [code]
    while stack:
        c = stack.pop()
        if not names.isdisjoint(c.co_names) or not names.isdisjoint(c.co_varnames):
            return True
        stack.extend(k for k in c.co_consts if isinstance(k, types.CodeType))
    return False


def _assigned(stmts) -> list[str]:
    """Names bound by ``stmts`` (not inside nested functions), in order of first binding."""
    out: list[str] = []
    stack = list(reversed(stmts))
    while stack:
        node = stack.pop()
        if isinstance(node, A.Name) and isinstance(node.ctx, A.Store) and node.id not in out:
            out.append(node.id)
        if isinstance(node, (A.FunctionDef, A.Lambda)):
            if isinstance(node, A.FunctionDef) and node.name not in out:
                out.append(node.name)
            continue
        stack.extend(reversed(list(A.iter_child_nodes(node))))
    return out


def _stored_into(stmts) -> list[str]:
    """Names whose value ``stmts`` store into (``out[i] = v``, ``out[i] += v``; not inside
    nested functions): carried by a loop like the names it binds -- a store into an array the
    function made rebinds the name (``shift_reset.array_store``), and a list or dict is the
    same object passed along."""
    out: list[str] = []
    stack = list(reversed(stmts))
    while stack:
        node = stack.pop()
        if isinstance(node, (A.FunctionDef, A.Lambda)):
            continue
        targets = (
            node.targets
            if isinstance(node, A.Assign)
            else [node.target] if isinstance(node, A.AugAssign) else []
        )
        for t in targets:
            if isinstance(t, A.Subscript) and isinstance(t.value, A.Name) and t.value.id not in out:
                out.append(t.value.id)
        stack.extend(reversed([c for c in A.iter_child_nodes(node) if isinstance(c, A.stmt)]))
    return out


def _loads(node) -> set[str]:
    nodes = node if isinstance(node, list) else [node]
    return {n.id for x in nodes for n in A.walk(x) if isinstance(n, A.Name)}


def _state(names):
    """The loop state as an expression: one name, a tuple of names, or None."""
    if not names:
        return A.const(None)
    if len(names) == 1:
        return A.name(names[0])
    return A.tuple_([A.name(n) for n in names])


def _state_target(names):
    if len(names) == 1:
        return A.store(names[0])
    return A.tuple_([A.store(n) for n in names], "store")


class Desugar:
    name = "desugar"
    invariant = "no loops, comprehensions or lambdas: each is a local function; no `del`"

    def run(self, unit: Unit) -> None:
        self.unit = unit
        bind_imports(unit)
        mark_consumed(unit)
        self.function(unit.tree)

    def function(self, fdef) -> None:
        self.fdef_stack = getattr(self, "fdef_stack", []) + [fdef]
        stale = _stale_function_call(fdef.body)
        if stale is not None:
            raise self.unit.error(*stale)
        shared = _late_bound(fdef.body)
        self.shared = getattr(self, "shared", []) + [shared]
        self.unbound = getattr(self, "unbound", []) + [set()]
        body = self.block(fdef.body) or [A.copy_location(A.Pass(), fdef)]
        # A variable the loops share (see ``loop``) is the function's: bound before any loop
        # declares it nonlocal; one a loop carries must exist when the loop starts, on every
        # path. Python leaves them unbound until assigned; None stands for that, bound first of
        # all, so that it changes no value bound on some path before the loop.
        params = set(A.arg_names(fdef.args))
        unbound = sorted((shared | self.unbound[-1]) - params)
        init = [A.copy_location(A.assign(n, A.const(None)), fdef) for n in unbound]
        fdef.body = init + body
        self.fdef_stack.pop()
        self.shared.pop()
        self.unbound.pop()

    # ------------------------------------------------------------------ statements

    def block(self, stmts) -> list:
        out: list = []
        for i, s in enumerate(stmts):
            rest = stmts[i + 1 :]
            pre, s = self.expressions(s)
            out += pre
            if isinstance(s, (A.For, A.While)):
                out += self.loop(s, rest)
            elif isinstance(s, A.If):
                s.body = self.block(s.body) or [A.copy_location(A.Pass(), s)]
                s.orelse = self.block(s.orelse)
                out.append(s)
            elif isinstance(s, A.FunctionDef):
                decorate = self.decorators(s, out)
                out += self.defaults(s)
                self.function(s)
                out.append(s)
                out += decorate
            elif isinstance(s, A.Delete):
                continue  # of names no later line mentions (Fence): it changes no value
            else:
                out.append(s)
        return out

    # ------------------------------------------------------------------ lambdas, comprehensions

    def expressions(self, s):
        """Hoist lambdas and comprehensions of statement ``s`` into local defs placed before it."""
        if isinstance(s, A.FunctionDef):
            return [], s
        pre: list = []
        if (
            isinstance(s, A.Assign)
            and len(s.targets) == 1
            and isinstance(s.targets[0], A.Name)
            and isinstance(s.value, A.Lambda)
        ):  # f = lambda x: ...  is  def f(x): ... (desugared as a def, by ``block``)
            lam = s.value
            ret = A.copy_location(A.return_(lam.body), lam.body)
            return [], A.copy_location(A.function(s.targets[0].id, lam.args, [ret]), s)
        if isinstance(s, (A.For, A.While, A.If)):
            # only the iterable / test belong to this statement; bodies are blocks of their own
            field = "iter" if isinstance(s, A.For) else "test"
            setattr(s, field, _Hoist(self, pre, s).visit(getattr(s, field)))
            return pre, s
        s = _Hoist(self, pre, s).visit(s)
        return pre, s

    def decorators(self, fdef, out: list) -> list:
        """``@d1 @d2 def g`` is ``def g`` and then ``g = d1(d2(g))``: the decorators' values are
        computed before the ``def`` (into ``out``, where one is not a name), as Python does;
        the statement returned applies them, innermost first. ``g`` is then a value that
        calls of it reach at run time."""
        if not fdef.decorator_list:
            return []
        values = []
        for d in fdef.decorator_list:
            if isinstance(d, A.Name):
                values.append(d)
            else:
                name = self.unit.namer.fresh("decorator")
                out.append(A.copy_location(A.assign(name, _Hoist(self, out, fdef).visit(d)), d))
                values.append(A.name(name))
        fdef.decorator_list = []
        value = A.name(fdef.name)
        for d in reversed(values):
            value = A.call(d, [value])
        return [A.copy_location(A.assign(fdef.name, value), fdef)]

    def lambda_def(self, lam, name, origin) -> list:
        """``def name(...): return body`` -- after the statements that compute its defaults."""
        ret = A.copy_location(A.return_(lam.body), lam.body)
        fdef = A.copy_location(A.function(name, lam.args, [ret]), origin)
        pre = self.defaults(fdef)
        self.function(fdef)
        return pre + [fdef]

    def defaults(self, fdef) -> list:
        """A default computed from a variable of an enclosing function (``def g(n=x)``): the
        value goes into a variable beside the ``def``, computed where the ``def`` runs, and the
        function reads it when the argument is missing -- so an adjoint can reach what the
        default was computed from (a default itself has none)::

            def g(n=x * 2):             g_n = x * 2
                return n * n     ->     def g(n=MISSING):
                                            if n is MISSING:
                                                n = g_n
                                            return n * n

        The statements returned go before the ``def``; ``fdef``'s body gets the ``if``s."""
        enclosing = set()
        for f in self.fdef_stack:
            enclosing |= set(A.arg_names(f.args)) | set(_assigned(f.body))
        args = fdef.args
        positional = (args.posonlyargs + args.args)[
            len(args.posonlyargs + args.args) - len(args.defaults) :
        ]
        pairs = list(zip(positional, args.defaults)) + [
            (a, d) for a, d in zip(args.kwonlyargs, args.kw_defaults) if d is not None
        ]
        pre, checks = [], []
        for arg, default in pairs:
            if not (_loads(default) & enclosing):
                continue
            namer = self.unit.namer
            holder = namer.fresh(f"{fdef.name}_{arg.id}")
            owner = namer.meaning.get(fdef.name) or f"`{fdef.name}`"
            namer.meaning[holder] = f"the default of `{arg.id}` of {owner}"
            pre.append(A.copy_location(A.assign(holder, default), fdef))
            missing = self.unit.inject(self.unit.ctx.runtime("MISSING"), "MISSING")
            test = A.Compare(left=A.name(arg.id), ops=[A.Is()], comparators=[A.name(missing)])
            checks.append(A.copy_location(A.if_(test, [A.assign(arg.id, A.name(holder))]), fdef))
            placeholder = A.name(missing)
            if default in args.defaults:
                args.defaults[args.defaults.index(default)] = placeholder
            else:
                args.kw_defaults[args.kw_defaults.index(default)] = placeholder
        for st in checks:
            for n in A.walk(st):
                A.copy_location(n, fdef)
        fdef.body = checks + fdef.body
        return pre

    def comprehension(self, node, origin):
        """``[elt for t in it if c ...]`` -> ``def listcomp_L3(seq): ...`` and its call."""
        line = getattr(node, "lineno", origin.lineno)
        kind = "dictcomp" if isinstance(node, A.DictComp) else "listcomp"
        name = self.unit.namer.fresh(f"{kind}_L{line}")
        self.unit.namer.meaning[name] = f"the comprehension at line {line}"
        result = self.unit.namer.fresh("result")
        first = "iterable"
        if isinstance(node, A.DictComp):
            init = A.Dict(keys=[], values=[])
            sub = A.Subscript(value=A.name(result), slice=node.key, ctx=A.Store())
            innermost = A.assign(sub, node.value)
        else:
            init = A.List(elts=[], ctx=A.Load())
            append = A.attr(result, "append")
            innermost = A.expr_stmt(A.call(append, [node.elt]))
        body = [innermost]
        gens = node.generators
        # The first iterable is evaluated where the comprehension is; what range, enumerate,
        # zip, reversed or .items() iterate is passed in, and the call rebuilt inside so the
        # loop still reads each element by indexing.
        outer_args, inner_first = self.first_iterable(gens[0].iter, first)
        for j, gen in reversed(list(enumerate(gens))):
            for cond in reversed(gen.ifs):
                body = [A.if_(cond, body)]
            it = inner_first if j == 0 else gen.iter
            body = [A.For(target=gen.target, iter=it, body=body, orelse=[], type_comment=None)]
        fbody = [A.assign(result, init), *body, A.return_(A.name(result))]
        params = [p for p, _ in outer_args]
        fdef = A.function(name, A.params(params), fbody)
        for n in A.walk(fdef):
            A.copy_location(n, origin)
        self.function(fdef)
        return fdef, A.call(name, [a for _, a in outer_args])

    def first_iterable(self, it, stem):
        """(parameters with the expressions passed for them, the iterable rebuilt from them)."""
        namer = self.unit.namer
        if (
            isinstance(it, A.Call)
            and isinstance(it.func, A.Name)
            and it.func.id in ("range", "enumerate", "zip", "reversed")
            and self._builtin(it.func.id)
            and all(kw.arg is not None for kw in it.keywords)  # not `**options`
            and not any(isinstance(a, A.Starred) for a in it.args)
        ):
            params = [(namer.fresh(stem), a) for a in it.args]
            kws = [(namer.fresh(kw.arg), kw.value) for kw in it.keywords]
            rebuilt = A.call(it.func.id, [A.name(p) for p, _ in params])
            rebuilt.keywords = [
                A.keyword(arg=kw.arg, value=A.name(p)) for kw, (p, _) in zip(it.keywords, kws)
            ]
            return params + kws, rebuilt
        if (
            isinstance(it, A.Call)
            and isinstance(it.func, A.Attribute)
            and it.func.attr in ("items", "keys", "values")
            and not it.args
        ):
            p = namer.fresh(stem)
            return [(p, it.func.value)], A.call(A.attr(p, it.func.attr), [])
        p = namer.fresh(stem)
        return [(p, it)], A.name(p)

    # ------------------------------------------------------------------ loops

    def loop(self, s, rest) -> list:
        """The loop as a local recursive function of the variables it carries.

        A variable that a function made in the loop captures (``fs.append(lambda t: t * i)``) is
        one variable of the enclosing function in Python, whose last value every such closure
        reads when it runs -- not a value per iteration: the loop function declares it
        ``nonlocal`` (it is ``shared``) instead of carrying it."""
        namer = self.unit.namer
        s.body = self.block(s.body)
        s.orelse = self.block(s.orelse)
        name = namer.loop(s.lineno)
        setup: list = []
        counter = None
        start = None
        fdef = self.fdef_stack[-1]
        outside = _loads(rest) | self._loads_elsewhere(fdef, s)
        bound_here = set(_assigned(s.body + s.orelse))
        if isinstance(s, A.For):
            bound_here |= set(_assigned([A.assign(s.target, A.const(None))]))
        shared = sorted(self.shared[-1] & bound_here)
        if isinstance(s, A.For):
            counter, start, setup, test, element, step = self.iteration(s, outside | set(shared))
        else:
            test = None if _is_true(s.test) else s.test
        body_assigned = _assigned(s.body + s.orelse) + _stored_into(s.body + s.orelse)
        target_names = (
            _assigned([A.assign(s.target, A.const(None))]) if isinstance(s, A.For) else []
        )
        # read in an iteration before it is assigned there: the value comes from the last one
        first = [A.assign(s.target, A.const(None))] if isinstance(s, A.For) else []
        inside = _exposed(first + s.body + s.orelse, set())
        if isinstance(s, A.While):
            inside |= _loads(s.test)
        carried = [
            n
            for n in target_names + body_assigned
            if (n in outside or n in inside) and n != counter and n != name and n not in shared
        ]
        carried = list(dict.fromkeys(carried))
        # The `else` block runs after the loop, in the enclosing block (a `break` or `return`
        # there is the enclosing loop's or function's), when the loop ended without `break`:
        # the loop says whether it did (`ended`) if it can break.
        returns = any(isinstance(n, A.Return) for n in _own(s.body))
        flagged = bool(s.orelse) and any(isinstance(n, A.Break) for n in _own(s.body))
        params = ([counter] if counter else []) + carried

        def state(flag=None, value=None, ended=False):
            names = _state(carried)
            if not (returns or flagged):
                return names
            elts = [A.const(flag), value or A.const(None)] if returns else []
            elts += [A.const(ended)] if flagged else []
            elts += [names] if len(carried) == 1 else list(names.elts) if carried else []
            return A.tuple_(elts)

        def again():
            args = [A.name(p) for p in params]
            if counter:
                args[0] = step(A.name(counter))
            return A.return_(A.call(name, args))

        body = []
        if isinstance(s, A.For) and not A.is_name(s.target, counter):
            body.append(A.copy_location(A.assign(s.target, element(A.name(counter))), s))
        body += _rewrite_jumps(s.body, again, state, returns)
        if falls_through(body):
            body.append(again())
        exit_ = [A.return_(state(False, ended=True))]
        if test is None:
            loop_body = body
        else:
            loop_body = [A.if_(test, body)] + exit_
        if shared:
            loop_body = [A.nonlocal_(shared)] + loop_body
        loop_def = anno.setanno(A.function(name, A.params(params), loop_body), anno.LOOP, True)
        first = [A.name(p) for p in carried]
        if counter:
            first = [start] + first
        call = A.call(name, first)
        after: list = []
        if returns or flagged:
            flag = namer.fresh("returned") if returns else None
            value = namer.fresh("value") if returns else None
            ended = namer.fresh("ended") if flagged else None
            names = [n for n in (flag, value, ended) if n is not None] + carried
            after.append(A.assign(A.tuple_([A.store(n) for n in names], "store"), call))
            if returns:
                after.append(A.if_(A.name(flag), [A.return_(A.name(value))]))
            if flagged:
                after.append(A.if_(A.name(ended), list(s.orelse)))
        elif carried:
            after.append(A.assign(_state_target(carried), call))
        else:
            after.append(A.expr_stmt(call))

        # a carried name the loop may bind first must exist before it (see ``function``)
        bound_before = self._bound_before(fdef, s)
        self.unbound[-1].update(n for n in carried if n not in bound_before)
        out = setup + [loop_def] + after
        for (
            stmt
        ) in out:  # generated statements point at the loop's header; the body keeps its lines
            A.copy_location(stmt, s)
            stmt.lineno = s.lineno
        if s.orelse and not flagged:  # no `break`: the loop always ends so
            out += list(s.orelse)
        return out

    def iteration(self, s, outside):
        """For a ``for`` loop: (counter, start, setup statements, test, element(i), step(i))."""
        namer = self.unit.namer
        it = s.iter
        fname = it.func.id if isinstance(it, A.Call) and isinstance(it.func, A.Name) else None
        setup: list = []
        target_is_counter = (
            isinstance(s.target, A.Name)
            and s.target.id not in _assigned(s.body + s.orelse)
            and s.target.id not in outside  # Python keeps the last value: then carry it apart
        )

        def counter_name():
            return s.target.id if target_is_counter else namer.fresh("index")

        if (
            fname == "range"
            and self._builtin("range")
            and not it.keywords
            and 1 <= len(it.args) <= 3
        ):
            a = it.args
            start = a[0] if len(a) > 1 else A.const(0)
            stop = a[1] if len(a) > 1 else a[0]
            step = a[2] if len(a) == 3 else A.const(1)
            if isinstance(step, A.Constant) and isinstance(step.value, int) and step.value != 0:
                counter = counter_name()
                stop_name = self.hoist(setup, stop, "stop")
                start_name = self.hoist(setup, start, "start")
                op = A.Lt() if step.value > 0 else A.Gt()
                test = A.Compare(left=A.name(counter), ops=[op], comparators=[stop_name])
                return (
                    counter,
                    start_name,
                    setup,
                    test,
                    lambda i: i,
                    lambda i: A.binop(i, A.Add(), A.const(step.value)),
                )
        counter = namer.fresh("index")
        element, length = self.elements(it, setup)
        test = A.Compare(left=A.name(counter), ops=[A.Lt()], comparators=[length])
        return counter, A.const(0), setup, test, element, lambda i: A.binop(i, A.Add(), A.const(1))

    def elements(self, it, setup):
        """(element(i), length) of an iterable, reading each element by indexing."""
        fname = it.func.id if isinstance(it, A.Call) and isinstance(it.func, A.Name) else None
        if fname == "enumerate" and self._builtin("enumerate") and it.args:
            inner, length = self.elements(it.args[0], setup)
            start = it.args[1] if len(it.args) > 1 else None
            for kw in it.keywords:
                if kw.arg == "start":
                    start = kw.value
            offset = A.const(0) if start is None else self.hoist(setup, start, "start")
            return (
                lambda i: A.tuple_([A.binop(i, A.Add(), offset), inner(i)]),
                length,
            )
        if (
            fname == "zip"
            and self._builtin("zip")
            and it.args
            and not it.keywords
            and not any(isinstance(a, A.Starred) for a in it.args)  # zip(*rows): as it is
        ):
            parts = [self.elements(a, setup) for a in it.args]
            lengths = [p[1] for p in parts]
            length = (
                lengths[0]
                if len(lengths) == 1
                else self.hoist(setup, A.call("min", lengths), "length")
            )
            return lambda i: A.tuple_([p[0](i) for p in parts]), length
        if fname == "reversed" and self._builtin("reversed") and len(it.args) == 1:
            inner, length = self.elements(it.args[0], setup)
            return (
                lambda i: inner(A.binop(A.binop(length, A.Sub(), A.const(1)), A.Sub(), i)),
                length,
            )
        if (
            isinstance(it, A.Call)
            and isinstance(it.func, A.Attribute)
            and it.func.attr in ("items", "keys", "values")
            and not it.args
        ):
            mapping = self.hoist(setup, it.func.value, "mapping")
            keys_of = self.unit.inject(self.unit.ctx.runtime("keys_of"), "keys_of")
            keys = self.hoist(setup, A.call(keys_of, [mapping]), "keys")
            length = self.hoist(setup, A.call("len", [keys]), "length")

            def key(i):
                return A.Subscript(value=keys, slice=i, ctx=A.Load())

            def value(i):
                return A.Subscript(value=mapping, slice=key(i), ctx=A.Load())

            pick = {
                "items": lambda i: A.tuple_([key(i), value(i)]),
                "keys": key,
                "values": value,
            }[it.func.attr]
            return pick, length
        seq = self.hoist(setup, A.call(self.as_sequence(), [it]), "seq")
        length = self.hoist(setup, A.call("len", [seq]), "length")
        return lambda i: A.Subscript(value=seq, slice=i, ctx=A.Load()), length

    def hoist(self, setup, expr, stem):
        if isinstance(expr, (A.Constant, A.Name)):
            return expr
        name = self.unit.namer.fresh(stem)
        setup.append(A.assign(name, expr))
        return A.name(name)

    def as_sequence(self):
        return self.unit.inject(self.unit.ctx.runtime("as_sequence"), "as_sequence")

    def _builtin(self, name) -> bool:
        """Does ``name`` mean the builtin of that name here (not shadowed by the user)?"""
        for f in self.fdef_stack:
            if name in _assigned(f.body) or name in A.arg_names(f.args):
                return False
        found, obj = self.unit.lookup(name)
        return found and obj is getattr(builtins, name)

    def _loads_elsewhere(self, fdef, loop) -> set[str]:
        """Names mentioned in ``fdef`` outside ``loop`` (a later iteration of an enclosing loop
        or code after it may read what this loop leaves behind)."""
        out: set[str] = set()
        stack = list(fdef.body)
        while stack:
            n = stack.pop()
            if n is loop:
                continue
            if isinstance(n, A.Name):
                out.add(n.id)
            stack.extend(A.iter_child_nodes(n))
        return out

    def _bound_before(self, fdef, loop) -> set[str]:
        """Names bound on every path from ``fdef``'s start to ``loop`` (parameters included;
        an ``if`` binds what both its branches do, or the branch the loop is in, before it)."""
        out = set(A.arg_names(fdef.args))
        for f in self.fdef_stack[:-1]:  # names of enclosing functions are visible, hence bound
            out |= set(A.arg_names(f.args)) | set(_assigned(f.body))

        def find(block, bound: set):
            """What is bound where the loop is, if it is in ``block`` (``bound`` at its start)."""
            for st in block:
                if st is loop:
                    return bound
                if isinstance(st, (A.If, A.For, A.While)):
                    for inner in (st.body, st.orelse):
                        found = find(inner, set(bound))
                        if found is not None:
                            return found
                if isinstance(st, A.If):
                    bound |= _surely_assigned([st]) or set()
                elif isinstance(st, (A.For, A.While)):
                    # what an earlier loop carries is bound after it (None, or its value)
                    bound |= set(_assigned(st.body + st.orelse))
                    if isinstance(st, A.For):
                        bound |= set(_assigned([A.assign(st.target, A.const(None))]))
                else:
                    bound |= set(_assigned([st]))
            return None

        found = find(fdef.body, out)
        find = None  # (it calls itself: a reference cycle, which kept the tree alive until a collection)
        return out if found is None else found


def _exposed(stmts, assigned: set) -> set[str]:
    """Names read in ``stmts`` before any assignment to them on the way there (upward exposed)."""
    out: set[str] = set()
    assigned = set(assigned)
    for st in stmts:
        if isinstance(st, A.If):
            out |= _loads(st.test) - assigned
            out |= _exposed(st.body, assigned) | _exposed(st.orelse, assigned)
            assigned |= _surely_assigned([st]) or set()
            continue
        if isinstance(st, A.FunctionDef):
            assigned.add(st.name)  # bound before its body can run
            out |= {n for n in _free_loads(st) if n not in assigned}
            continue
        if isinstance(st, (A.For, A.While)):
            out |= _loads(st) - assigned
            continue
        value = st.value if isinstance(st, (A.Assign, A.AugAssign, A.AnnAssign)) else st
        reads = _loads(value) if value is not None else set()
        if isinstance(st, A.AugAssign):
            reads |= _loads(st.target)
        out |= reads - assigned
        assigned |= set(_assigned([st]))
    return out


def _late_bound(body) -> set[str]:
    """Names of a function's scope (``body``) that one of its loops binds and a function made
    in that scope reads while the loop runs: there is one variable, and each such closure sees
    its value when it runs -- in a later iteration (``fs.append(lambda t: t * i)``), or in this
    one when a closure made before the loop is called in it (``g = lambda: s`` ... ``s = g() *
    2``) -- not a value the loop carries. A function made after the loop (and after any loop
    around it) reads the value the loop left, which it carries out."""
    loops = list(_top_loops(body))
    if not loops:  # (for speed: without a loop, no walk for the functions that read names)
        return set()
    readers = []  # (line, names read) of each function made in the scope
    for n in A.walk(A.Module(body=list(body), type_ignores=[])):
        if isinstance(n, A.FunctionDef):
            readers.append((n.lineno, free_names(n)))
        elif isinstance(n, A.Lambda):
            readers.append((n.lineno, _loads(n.body) - set(A.arg_names(n.args))))
    out: set[str] = set()
    if not readers:
        return out
    for outer in loops:
        last = max(getattr(n, "lineno", 0) for n in A.walk(outer))
        read = set().union(*(names for line, names in readers if line <= last))
        for loop in [outer, *_own_loops(outer.body + outer.orelse)]:
            bound = set(_assigned(loop.body + loop.orelse))
            if isinstance(loop, A.For):
                bound |= set(_assigned([A.assign(loop.target, A.const(None))]))
            # (a function the loop defines, read by itself -- recursion -- or another: the
            # call of a local function by name, which Resolve binds where it is defined)
            defined = {
                st.name for st in _own(loop.body + loop.orelse) if isinstance(st, A.FunctionDef)
            } | {  # `g = lambda ...` is `def g` (``expressions``)
                st.targets[0].id
                for st in _own(loop.body + loop.orelse)
                if isinstance(st, A.Assign)
                and len(st.targets) == 1
                and isinstance(st.targets[0], A.Name)
                and isinstance(st.value, A.Lambda)
            }
            out |= (bound - defined) & read
    return out


def _stale_function_call(body):
    """``(message, node, hint)`` where a function made in a loop may outlive its iteration and
    calls by name a function the loop makes anew in each iteration, whose instances may differ;
    else None.

    Python's closure reads the name when it runs: after the loop, the last function bound to it
    (``fs.append(lambda t: g(t))`` after ``def g(t, i=i)``: every entry calls the last ``g``).
    Desugar gives each iteration its own scope, and Resolve binds a call by name to the
    definition it sees, so cpsad's closure would call its own iteration's ``g``. That is the same
    function whenever the instances cannot differ -- one definition, no decorator, no default
    but constants, and reading no function that may differ -- and the same call whenever the
    closure runs within its iteration: called there by name (or made and called at once). It is
    refused where neither holds: the closure may be kept -- put in a list, tuple, set or dict, an
    item or attribute, returned, or given to any call (``fs.append(h)``; a helper may return or
    keep what it is given) -- or called in a later iteration (read in the loop before the line
    that makes it: ``total += h(x)`` above ``h = lambda t: g(t)``, after ``g`` is made again)."""
    loops = [
        loop
        for outer in _top_loops(body)
        for loop in [outer, *_own_loops(outer.body + outer.orelse)]
    ]
    if not loops:
        return None
    defining: dict[str, list] = {}  # name -> the definitions of it in the scope
    for n in _own(body):
        if isinstance(n, A.FunctionDef):
            defining.setdefault(n.name, []).append(n)
        elif isinstance(n, A.Name) and isinstance(n.ctx, A.Store):
            defining.setdefault(n.id, []).append(n)
    lambdas = {}  # id(lambda) -> the name it is assigned to
    parent: dict[int, object] = {}
    for n in _own(body):
        for c in A.iter_child_nodes(n):
            parent[id(c)] = n
        if (
            isinstance(n, A.Assign)
            and len(n.targets) == 1
            and isinstance(n.targets[0], A.Name)
            and isinstance(n.value, A.Lambda)
        ):
            lambdas[id(n.value)] = n.targets[0].id

    def varies(fn) -> bool:  # its instances may differ from one iteration to the next
        args = fn.args
        defaults = [d for d in [*args.defaults, *args.kw_defaults] if d is not None]
        return any(not isinstance(d, A.Constant) for d in defaults) or bool(
            getattr(fn, "decorator_list", None)
        )

    def kept(node) -> bool:  # the value of ``node`` may outlive the statement that makes it
        up = parent.get(id(node))
        if isinstance(up, (A.Call, A.keyword)) and node is not getattr(up, "func", None):
            return True  # `fs.append(h)`, or a helper that may return or keep what it is given
        if isinstance(up, (A.Call, A.Expr)):
            return False  # called right there
        if isinstance(up, A.Assign) and all(isinstance(t, A.Name) for t in up.targets):
            return False  # a name: see its uses
        return True

    for loop in loops:
        own = list(_own(loop.body + loop.orelse))
        made = [n for n in own if isinstance(n, (A.FunctionDef, A.Lambda))]
        names = {}  # name of a function made in the loop -> its node
        for n in made:
            name = n.name if isinstance(n, A.FunctionDef) else lambdas.get(id(n))
            if name is not None:
                names[name] = n
        differ = {name for name, n in names.items() if len(defining.get(name, ())) > 1 or varies(n)}
        reads = {
            id(n): (
                free_names(n)
                if isinstance(n, A.FunctionDef)
                else _loads(n.body) - set(A.arg_names(n.args))
            )
            for n in made
        }
        changed = True
        while changed:  # a function that calls one that differs differs too
            changed = False
            for name, n in names.items():
                if name not in differ and reads[id(n)] & differ:
                    differ.add(name)
                    changed = True
        if not differ:
            continue
        loads = [n for n in own if isinstance(n, A.Name)]
        for n in made:
            stale = sorted(reads[id(n)] & differ)
            if not stale:
                continue
            name = n.name if isinstance(n, A.FunctionDef) else lambdas.get(id(n))
            if name is None:
                escapes = kept(n)
            else:  # kept, or called in a later iteration (read before it is made again)
                made_at = (n.lineno, n.col_offset)
                escapes = any(
                    m.id == name
                    and isinstance(m.ctx, A.Load)
                    and (kept(m) or (m.lineno, m.col_offset) < made_at)
                    for m in loads
                )
            if escapes:
                g = stale[0]
                what = f"`{name}`" if name else "this lambda"
                return (
                    f"{what} is made in a loop and kept past its iteration, and it calls "
                    f"`{g}`, which the loop makes anew in each iteration (with other "
                    "defaults, another definition, or calling one that is): Python calls "
                    f"the `{g}` bound when it runs -- after the loop, the last one -- and "
                    "cpsad would call this iteration's",
                    n,
                    f"say which `{g}` it calls: pass it as a default (`lambda t, {g}={g}: "
                    f"{g}(t)`, this iteration's), or call the last one after the loop",
                )
    return None


def _top_loops(stmts):
    """The loops among ``stmts`` and inside their branches that no other loop encloses."""
    for st in stmts:
        if isinstance(st, (A.For, A.While)):
            yield st
        elif isinstance(st, A.If):
            yield from _top_loops(st.body + st.orelse)


def _own_loops(stmts):
    """The loops among ``stmts`` and inside their blocks (not inside nested functions)."""
    for st in stmts:
        if isinstance(st, (A.For, A.While)):
            yield st
            yield from _own_loops(st.body + st.orelse)
        elif isinstance(st, A.If):
            yield from _own_loops(st.body + st.orelse)


def _surely_assigned(stmts) -> set[str] | None:
    """Names ``stmts`` bind on every path through them that reaches their end (``_assigned`` is
    what *may* be bound: an ``if`` without ``else`` binds nothing surely). None: no path reaches
    the end (each leaves by ``return``, ``break``, ``continue`` or ``raise``)."""
    out: set[str] = set()
    for st in stmts:
        if isinstance(st, (A.Return, A.Break, A.Continue, A.Raise)):
            return None
        if isinstance(st, A.If):
            body, orelse = _surely_assigned(st.body), _surely_assigned(st.orelse)
            if body is None and orelse is None:
                return None
            out |= orelse if body is None else body if orelse is None else body & orelse
        elif not isinstance(st, (A.For, A.While)):  # a loop's body may not run
            out |= set(_assigned([st]))
    return out


def _free_loads(fdef) -> set[str]:
    local = set(A.arg_names(fdef.args)) | set(_assigned(fdef.body))
    return _loads(fdef.body) - local


def _is_true(test) -> bool:
    return isinstance(test, A.Constant) and test.value is True


def _own(stmts):
    """Nodes of ``stmts`` outside nested functions."""
    for s in stmts:
        stack = [s]
        while stack:
            n = stack.pop()
            yield n
            if isinstance(n, (A.FunctionDef, A.Lambda)):
                continue
            stack.extend(A.iter_child_nodes(n))


def _rewrite_jumps(stmts, again, state, returns) -> list:
    """``continue`` -> the next iteration, ``break`` -> return the state, ``return v`` -> flagged."""
    out = []
    for s in stmts:
        if isinstance(s, A.Continue):
            out.append(A.copy_location(again(), s))
            break
        if isinstance(s, A.Break):
            out.append(A.copy_location(A.return_(state(False)), s))
            break
        if isinstance(s, A.Return) and returns:
            value = s.value if s.value is not None else A.const(None)
            out.append(A.copy_location(A.return_(state(True, value)), s))
            break
        if isinstance(s, A.If):
            s.body = _rewrite_jumps(s.body, again, state, returns) or [A.Pass()]
            s.orelse = _rewrite_jumps(s.orelse, again, state, returns)
        out.append(s)
    return out


class _Hoist(A.NodeTransformer):
    """Replace lambdas and comprehensions in an expression by names of local defs (put in ``pre``)."""

    def __init__(self, desugar: Desugar, pre: list, origin):
        self.d = desugar
        self.pre = pre
        self.origin = origin

    def visit_Lambda(self, node):
        line = getattr(node, "lineno", self.origin.lineno)
        name = self.d.unit.namer.fresh(f"lambda_L{line}")
        self.d.unit.namer.meaning[name] = f"the lambda at line {line}"
        self.pre += self.d.lambda_def(node, name, self.origin)
        return A.copy_location(A.name(name), node)

    def _comprehension(self, node):
        # Only the first iterable is evaluated here; the rest -- the element, the conditions,
        # the later iterables, with their lambdas and comprehensions -- runs in the
        # comprehension's own scope, desugared with the function it becomes.
        first = node.generators[0]
        first.iter = self.visit(first.iter)
        fdef, call = self.d.comprehension(node, self.origin)
        self.pre.append(fdef)
        return A.copy_location(call, node)

    def visit_Call(self, node):
        """``map(f, xs, ...)`` is ``[f(x, ...) for x, ... in zip(xs, ...)]``; ``filter(f,
        xs)`` is ``[x for x in xs if f(x)]`` (``if x`` for ``filter(None, xs)``) -- lists where
        Python makes iterators, the same items in the same order, where the iterator is
        consumed where it is made (``mark_consumed``: a list kept in a name could be read a
        second time, where the iterator is empty); ``functools.reduce(f, xs[, init])`` is a
        loop that folds ``f`` over ``xs``."""
        self.generic_visit(node)
        d = self.d
        comp = None
        if (
            A.is_name(node.func, "filter")
            and d._builtin("filter")
            and len(node.args) == 2
            and not node.keywords
            and not any(isinstance(a, A.Starred) for a in node.args)
        ):
            f, it = node.args
            item = d.unit.namer.fresh("item")
            test = A.name(item)
            if not (isinstance(f, A.Constant) and f.value is None):
                test = A.call(f, [A.name(item)])
            comp = A.ListComp(
                elt=A.name(item),
                generators=[A.comprehension(target=A.store(item), iter=it, ifs=[test], is_async=0)],
            )
        elif A.is_name(node.func, "map") and d._builtin("map") and len(node.args) >= 2:
            f, iterables = node.args[0], node.args[1:]
            names = [d.unit.namer.fresh("item") for _ in iterables]
            call = A.call(f, [A.name(n) for n in names])
            if len(iterables) == 1:
                target, it = A.store(names[0]), iterables[0]
            else:
                target = A.tuple_([A.store(n) for n in names], "store")
                it = A.call("zip", iterables)
            comp = A.ListComp(
                elt=call,
                generators=[A.comprehension(target=target, iter=it, ifs=[], is_async=0)],
            )
        if comp is not None:
            made = self._comprehension(A.copy_location(comp, node))
            if anno.getanno(node, anno.CONSUMED):
                return made
            # kept, maybe read twice: an iterator over the list, read once as Python's is
            # (of differentiable values refused: ``iter`` has no rule -- ``iterator_kept``)
            func = A.copy_location(A.name(d.unit.inject(iter, "iter")), node.func)
            anno.setanno(func, anno.ITERATOR_OF, node.func.id)
            return A.copy_location(A.call(func, [made]), node)
        if self.is_reduce(node.func) and 2 <= len(node.args) <= 3 and not node.keywords:
            return self.reduce(node)
        return node

    def is_reduce(self, func) -> bool:
        path = A.dotted(func)
        if path is None:
            return False
        root, *rest = path.split(".")
        found, obj = self.d.unit.lookup(root)
        for part in rest:
            obj = getattr(obj, part, None)
        return found and obj is functools.reduce

    def reduce(self, node):
        d = self.d
        line = getattr(node, "lineno", self.origin.lineno)
        name = d.unit.namer.fresh(f"reduce_L{line}")
        fn, seq, acc, item = (
            d.unit.namer.fresh(s) for s in ("function", "sequence", "acc", "item")
        )
        params = [fn, seq] + ([acc] if len(node.args) == 3 else [])
        body = []
        if len(node.args) == 2:  # no initial value: start from the first item
            body.append(
                A.assign(acc, A.Subscript(value=A.name(seq), slice=A.const(0), ctx=A.Load()))
            )
            it = A.Subscript(
                value=A.name(seq),
                slice=A.Slice(lower=A.const(1), upper=None, step=None),
                ctx=A.Load(),
            )
        else:
            it = A.name(seq)
        step = A.assign(acc, A.call(fn, [A.name(acc), A.name(item)]))
        body.append(A.For(target=A.store(item), iter=it, body=[step], orelse=[], type_comment=None))
        body.append(A.return_(A.name(acc)))
        fdef = A.function(name, A.params(params), body)
        for n in A.walk(fdef):
            A.copy_location(n, self.origin)
        d.function(fdef)
        self.pre.append(fdef)
        return A.copy_location(A.call(name, node.args), node)

    visit_ListComp = _comprehension
    visit_GeneratorExp = _comprehension
    visit_DictComp = _comprehension

    def visit_FunctionDef(self, node):
        return node
