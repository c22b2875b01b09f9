"""The facts about the analysed functions that hold before any value is followed: what each name
means (``var``), which variables nested functions rebind (``cells``) and which of those hold
only numbers, which outer variables each function may read (``free``, ``entry_vars``), which
local function a call calls, and which variables are read after each statement (liveness).

The invariant: every set here over-approximates -- a function reads at least the variables
``free`` names, a statement at least what ``reads`` returns, and a variable is live after a
statement if any path after it may read it -- so that an alias the points-to analysis finds is
never missed for want of a read. (``_Analysis`` mixes this in; ``PointsTo`` fills ``invokes``,
which ``reads`` then counts.)
"""

from __future__ import annotations

import builtins

import numpy

from .. import anno
from .. import astlib as A
from .domain import _Func, _walk_own, statements
from .tables import _CONTAINERS, _FULL_REDUCTIONS, _IMMUTABLE_GLOBALS, _NUMBER_KINDS


class Program:
    def var(self, key, name):
        v = self.scopes.resolve(key, name)
        return v if v is not None else (None, name)

    def visible(self, key, var) -> bool:
        return self.var(key, var[1]) == var

    def _cells(self) -> set:
        """Variables a nested function rebinds (``nonlocal``): their values change behind the
        back of the function that owns them. (Resolve's other cells, variables a closure reads
        and their function assigns again, change only where that function assigns them: they
        are followed as any variable.)"""
        out = set()
        for key, f in self.funcs.items():
            parent = self.scopes.parent[key]
            for node in self._own_nodes(f.fdef):
                if isinstance(node, A.Nonlocal) and parent is not None:
                    out |= {self.var(parent, n) for n in node.names}
        return out

    def _number_cells(self) -> set:
        """The cells that only ever hold numbers -- constants, arithmetic and comparisons of
        numbers, ``len``, a loop's counter -- immutable, so that no update in place can be
        seen through them. (A variable holds numbers when every assignment of it gives one, a
        parameter when every call of its function by name passes one; to a greatest
        fixpoint.)"""
        if not self.cells:
            return set()
        defs: dict = {}  # variable -> [(function key, expression or None: unknown)]

        def add(v, key, e):
            defs.setdefault(v, []).append((key, e))

        for key, f in self.funcs.items():
            if key == "" or f.escapes:
                for p in f.params:
                    # the entry function's argument of a number's kind (the specialization's)
                    given = self.arg_kinds.get(p[1]) if key == "" and not f.escapes else None
                    add(p, key, A.const(0.0) if given and given <= _NUMBER_KINDS else None)
            for st in statements(f.fdef.body):
                if isinstance(st, A.Assign):
                    t = st.targets[0]
                    if isinstance(t, A.Name):
                        add(self.var(key, t.id), key, st.value)
                    else:
                        for n in A.walk(t):
                            if isinstance(n, A.Name):
                                add(self.var(key, n.id), key, None)
                elif isinstance(st, A.FunctionDef):
                    add(self.var(key, st.name), key, None)
                for n in self._statement_nodes(st):
                    g = self.local_callee(key, n)
                    if g is None:
                        continue
                    names = A.arg_names(self.funcs[g].fdef.args)
                    given = dict(zip(names, n.args))
                    given.update({k.arg: k.value for k in n.keywords if k.arg is not None})
                    spread = any(isinstance(a, A.Starred) for a in n.args) or any(
                        k.arg is None for k in n.keywords
                    )
                    for p in names:
                        add((g, p), key, None if spread else given.get(p))

        def number(key, e, numbers) -> bool:
            if e is None:
                return False
            if isinstance(e, A.Constant):
                return type(e.value) in (int, float, bool, complex) or e.value is None
            if isinstance(e, A.Name):
                return self.var(key, e.id) in numbers
            if isinstance(e, A.BinOp):
                return number(key, e.left, numbers) and number(key, e.right, numbers)
            if isinstance(e, A.UnaryOp):
                return number(key, e.operand, numbers)
            if isinstance(e, A.Compare):
                return all(number(key, x, numbers) for x in [e.left, *e.comparators])
            if isinstance(e, A.Call) and not e.keywords:
                fn = anno.getanno(e.func, anno.CALLEE)
                # (a ufunc of numbers makes a numpy scalar: immutable too)
                if (
                    fn is len
                    or getattr(fn, "__module__", None) == "math"
                    or isinstance(fn, numpy.ufunc)
                ):
                    return fn is len or all(number(key, a, numbers) for a in e.args)
                if len(e.args) == 1 and any(fn is r for r in _FULL_REDUCTIONS):
                    return True  # a reduction of everything: a numpy scalar, of anything
            return False

        numbers = set(defs)
        changed = True
        while changed:
            changed = False
            for v in list(numbers):
                if not all(number(key, e, numbers) for key, e in defs[v]):
                    numbers.discard(v)
                    changed = True
        number = None  # (it calls itself: a reference cycle, which kept the tree alive until a collection)
        return self.cells & numbers

    def irrelevant_global(self, var) -> bool:
        """A global that holds no value an update could change: a module, a function, a class,
        a number, a string."""
        if var[0] is not None:
            return False
        name = var[1]
        if name in self.globals:
            obj = self.globals[name]
        elif hasattr(builtins, name):
            obj = getattr(builtins, name)
        elif name in self.unit.injected:  # a name the pipeline gave an object (``MISSING``)
            obj = self.unit.injected[name]
            if not hasattr(obj, "__dict__") and not isinstance(obj, _CONTAINERS):
                return True  # an object with no state of its own
        else:
            return False  # not known (yet): anything
        return obj is None or isinstance(obj, _IMMUTABLE_GLOBALS)

    def _own_nodes(self, fdef) -> list:
        """The nodes of ``fdef``'s own scope (walked once)."""
        found = self._nodes.get(id(fdef))
        if found is None:
            found = self._nodes[id(fdef)] = [n for st in fdef.body for n in _walk_own(st)]
        return found

    def _statement_nodes(self, node) -> list:
        """The nodes of a statement in its scope (a def: itself and its defaults)."""
        found = self._below.get(id(node))
        if found is None:
            found = self._below[id(node)] = list(_walk_own(node))
        return found

    def local_callee(self, key, call):
        """The key of the local function ``call`` (in function ``key``) calls, or None: the
        function its name means there."""
        if isinstance(call, A.Call) and anno.getanno(call.func, anno.CALLEE_KIND) == "local":
            g = anno.getanno(call.func, anno.CALLEE)
            if isinstance(call.func, A.Name):  # (the one Resolve bound it to, of those named so)
                named = self.scopes.defs.get(self.scopes.resolve(key, call.func.id), ())
                bound = [k for k in named if k.split("#")[0] == str(g)] or named[-1:]
                if bound and bound[-1] in self.funcs:
                    return bound[-1]
            if g in self.funcs:
                return g
        return None

    def _function_refs(self, key):
        """(local calls, local functions referenced as values) of the function ``key``."""
        calls, values = [], []
        fdef = self.funcs[key].fdef
        call_funcs = set()
        for n in self._own_nodes(fdef):
            g = self.local_callee(key, n)
            if g is not None:
                calls.append(g)
                call_funcs.add(id(n.func))
        for n in self._own_nodes(fdef):
            if isinstance(n, A.Name) and isinstance(n.ctx, A.Load) and id(n) not in call_funcs:
                for g in self.scopes.defs.get(self.scopes.resolve(key, n.id) or ("?", n.id), ()):
                    if g in self.funcs:
                        values.append(g)
        return calls, values

    def _escaping(self) -> None:
        for key in self.funcs:
            _, values = self._function_refs(key)
            for g in values:
                self.funcs[g].escapes = True

    def _free_vars(self) -> None:
        """Each function's entry variables: parameters, and the outer variables it -- or a local
        function it calls or lets escape -- may read."""
        reads: dict = {}
        refs: dict = {}
        for key, f in self.funcs.items():
            own = {v for v in self.value_reads(key, f.fdef.body) if v[0] != key}
            reads[key] = own
            calls, values = self._function_refs(key)
            refs[key] = set(calls) | set(values)
        free = {k: set(r) for k, r in reads.items()}
        changed = True
        while changed:
            changed = False
            for key in self.funcs:
                for g in refs[key]:
                    extra = {v for v in free[g] if v[0] != key} - free[key]
                    if extra:
                        free[key] |= extra
                        changed = True
        self.free = free
        # what a function used as a value reads, it reads wherever it is called: by a call
        # that was given it (``invokes``), which may be in a function it was passed to
        self.escaped = set()
        for f in self.funcs.values():
            if f.escapes:
                self.escaped |= free[f.key]
        runs = self._runs_values()
        for key, f in self.funcs.items():
            seen = set()
            if key in runs:
                seen = {v for v in self.escaped if v[0] != key and self.visible(key, v)}
            f.entry_vars = set(f.params) | free[key] | seen

    def _runs_values(self) -> set:
        """The functions that may run a function used as a value: they call something that is
        not a primitive, nor a local function by name -- or a local function that may. (One
        that does not -- a loop's function of arithmetic -- reads no escaped closure's
        variables.)"""
        direct = {
            key
            for key, f in self.funcs.items()
            if any(
                isinstance(n, A.Call)
                and anno.getanno(n.func, anno.CALLEE_KIND) not in ("primitive", "nondiff", "local")
                for n in self._own_nodes(f.fdef)
            )
        }
        calls = {key: set(self._function_refs(key)[0]) for key in self.funcs}
        grew = True
        while grew:
            grew = False
            for key in self.funcs:
                if key not in direct and calls[key] & direct:
                    direct.add(key)
                    grew = True
        return direct

    def value_reads(self, key, nodes) -> set:
        """Variables read as values below ``nodes`` (of ``key``'s own scope): the name of a
        resolved function called is not a value read."""
        out = set()
        skip = set()
        below = [m for node in nodes for m in self._statement_nodes(node)]
        for n in below:
            if isinstance(n, A.Call) and isinstance(n.func, A.Name):
                if anno.getanno(n.func, anno.CALLEE_KIND) not in (None, "dynamic"):
                    skip.add(id(n.func))
        for n in below:
            if isinstance(n, A.Name) and isinstance(n.ctx, A.Load) and id(n) not in skip:
                out.add(self.var(key, n.id))
        return out

    def reads(self, key, node) -> set:
        """Variables a statement (or an expression) reads, calls of local functions included."""
        out = set()
        skip = set()
        below = self._statement_nodes(node)
        for n in below:
            if isinstance(n, A.Call):
                kind = anno.getanno(n.func, anno.CALLEE_KIND)
                g = self.local_callee(key, n)
                if g is not None:
                    out |= self.free[g]
                    skip.add(id(n.func))
                elif kind in ("primitive", "nondiff", "user", "unknown") and isinstance(
                    n.func, A.Name
                ):
                    skip.add(id(n.func))
        for n in below:
            if isinstance(n, A.Name) and isinstance(n.ctx, A.Load) and id(n) not in skip:
                v = self.var(key, n.id)
                out.add(v)
                for g in self.scopes.defs.get(v, ()):
                    if g in self.funcs:
                        out |= self.free[g]
        for c in self.invokes.get(id(node), ()):  # functions used as values it may call
            out |= self.free[c]
        if isinstance(node, A.FunctionDef):  # its defaults, evaluated where it is defined
            out = set()
            for d in [*node.args.defaults, *node.args.kw_defaults]:
                if d is not None:
                    out |= self.reads(key, d)
        return out

    def _liveness(self, f: _Func) -> None:
        key = f.key

        def block(stmts, live):
            for s, after in zip(stmts, stmts[1:]):
                self.next[id(s)] = after
            for s in reversed(stmts):
                self.live_after[id(s)] = live
                if isinstance(s, A.If):
                    live = block(s.body, live) | block(s.orelse, live) | self.reads(key, s.test)
                elif isinstance(s, A.Return):
                    live = self.reads(key, s) if s.value is not None else set()
                elif isinstance(s, A.FunctionDef):
                    live = (live - {(key, s.name)}) | self.reads(key, s)
                elif isinstance(s, A.Assign):
                    live = (live - self.defs(key, s)) | self.reads(key, s)
                else:
                    live = live | self.reads(key, s)
            return live

        block(f.fdef.body, set())
        block = None  # (it calls itself: a reference cycle, which kept the tree alive until a collection)

    def defs(self, key, s) -> set:
        if not isinstance(s, A.Assign):
            return set()
        t = s.targets[0]
        if isinstance(t, A.Name):
            return {(key, t.id)}
        if isinstance(t, (A.Tuple, A.List)):
            return {(key, e.id) for e in t.elts if isinstance(e, A.Name)}
        return set()
