"""After Activity, every statement knows whether it computes an active value (one that needs an adjoint).

A value is *active* when it depends on a differentiated parameter (forward) and can reach the
function's result (backward): only active values get adjoint code, so ``n = len(x)`` or a loop
counter costs nothing in the backward pass. Within a function the analysis is flow-sensitive: each
assignment of a name nothing else sees is a version of its own (``Versions``), so ``r = s`` read
before ``s`` is rebound to an active value is not active (nor is a loop whose results reach
nothing, which would otherwise send zero adjoints through overflowed values: 0 * inf is NaN).
A tuple's entries are followed one by one from where it is made to where it is unpacked
(``Entries``): of a loop's carried values, returned as one tuple, those nothing reads after the
loop are not active, nor is their computation in it. Across functions, and for what nested
functions share, it is flow-insensitive and conservative: a variable is active if any of its
assignments is. Variables are resolved as Python resolves them
-- a name in a nested function may be its own or an enclosing function's -- and derivatives flow
into a local function through its parameters and out through its returns; a local function
passed around as a value may receive anything, so all its parameters count as active.

Results: statements assigning an active name get ``anno.ACTIVE``; ``unit.active_by_scope`` maps
each function (root: ``""``, nested: its ``DEF_KEY``) to the names active *as seen from it*;
``unit.locals`` records which local functions need a backpropagator and for which parameters.
Derivatives flow through an operation's operands as its rule says: not through comparisons, ``//``,
``len``, ``x.shape`` or other non-differentiable functions; through a subscript's index too (an
object's ``__getitem__`` may compute with it: ShiftReset checks it when it runs), and through
``getattr(x, "T")`` as through ``x.T``.
"""

from __future__ import annotations

import numpy

from . import aliasing, anno
from . import astlib as A
from . import scoping as S
from .context import Default
from .normalize import MUTATORS
from .resolve import struct_fields, structs_in_reach
from .scoping import free_names, own_nodes, statements
from .unit import FIELDS, NUMERIC, Unit

NONDIFF_BINOPS = (A.FloorDiv, A.BitAnd, A.BitOr, A.BitXor, A.LShift, A.RShift)
NONDIFF_UNARY = (A.Not, A.Invert)
RET = "<return>"  # the pseudo-variable of a function's result


def attribute_read(value):
    """``x.T`` for ``getattr(x, "T")``: a ``getattr`` of a constant name reads that attribute,
    with its rule (``.T``, ``.real``) or none (``.shape``); None for anything else."""
    if (
        isinstance(value, A.Call)
        and anno.getanno(value.func, anno.CALLEE) is getattr
        and len(value.args) == 2
        and not value.keywords
        and isinstance(value.args[1], A.Constant)
        and isinstance(value.args[1].value, str)
    ):
        node = A.Attribute(value=value.args[0], attr=value.args[1].value, ctx=A.Load())
        if anno.getanno(value, anno.FIELD):  # (Activity marks the call: ``getattr(p, "T")``)
            anno.setanno(node, anno.FIELD, True)
        return A.copy_location(node, value)
    return None


def flow_operands(ctx, value) -> list[str]:
    """Names whose derivative can flow into ``value`` (an A-normal-form right-hand side)."""
    attribute = attribute_read(value)
    if attribute is not None:
        value = attribute
    if isinstance(value, A.Name):
        return [value.id]
    if isinstance(value, A.BinOp):
        if isinstance(value.op, NONDIFF_BINOPS):
            return []
        return _names([value.left, value.right])
    if isinstance(value, A.UnaryOp):
        return [] if isinstance(value.op, NONDIFF_UNARY) else _names([value.operand])
    if isinstance(value, A.Compare):
        return []
    if isinstance(value, A.Attribute):
        if ctx.is_nondiff_attribute(value.attr) and not anno.getanno(value, anno.FIELD):
            return []
        return _names([value.value])
    if isinstance(value, A.Subscript):  # and through the index, into an object's __getitem__
        return _names([value.value]) + _names(A.walk(value.slice))
    if isinstance(value, (A.Tuple, A.List, A.Set)):
        return _names([e.value if isinstance(e, A.Starred) else e for e in value.elts])
    if isinstance(value, A.Dict):
        return _names(value.values)
    if isinstance(value, A.Call):
        kind = anno.getanno(value.func, anno.CALLEE_KIND)
        args = [a.value if isinstance(a, A.Starred) else a for a in value.args]
        kwvals = [k.value for k in value.keywords]
        if kind in ("nondiff", "local"):  # a local function's: through its parameters and
            return []  # result (``Activity.local_call``), not from its arguments directly
        if kind == "primitive":
            rule = ctx.rule(anno.getanno(value.func, anno.CALLEE))
            ops = _rule_operands(rule, value.args, value.keywords)
            return ops if ops is not None else _names(args + kwvals)
        if kind == "method":
            if ctx.is_nondiff_attribute(value.func.attr):
                return []
            # every argument, even one the array method's rule takes as discrete: the receiver
            # may be no array -- a module passed as a value (``xp.sum(v)``), an object of yours
            # (``layer.dot(v)``) -- whose method takes it as a value (ShiftReset's
            # ``data_method`` calls it through the dispatch)
            return _names([value.func.value, *args, *kwvals])
        if kind == "local":
            return []  # through the function: its parameters' edges and its result's (local_call)
        out = _names(args + kwvals)
        if kind == "dynamic" and isinstance(value.func, A.Name):
            out.append(value.func.id)
        return out
    return []  # constants, f-strings, other opaque expressions


def spreads(call) -> bool:
    """Does the call pass ``*args`` or ``**kwargs``?"""
    return any(isinstance(a, A.Starred) for a in call.args) or any(
        k.arg is None for k in call.keywords
    )


def _struct_fields(unit) -> set:
    """``"p.size"`` for each field ``size`` of a struct argument ``p`` (a namedtuple, a
    dataclass, a pytree) named as an array's attribute (the specialization's ``FIELDS``)."""
    return set((unit.arg_kinds or {}).get(FIELDS, ()))


def _array_attribute(ctx, name) -> bool:
    """Is ``.name`` an array's attribute, with a rule (``.T``) or without derivative (``.size``)?"""
    return ctx.is_nondiff_attribute(name) or ctx.attribute_rule(name) is not None


def _made_structs(scopes, unit) -> dict:
    """(function key, name) -> the fields, named as an array's attribute (``_array_attribute``),
    of a struct assigned to the name there (``struct_of(P, values, names)``: Resolve's ``P(a,
    b=c)`` of a namedtuple or dataclass; its fields all, those left to their defaults too)."""
    ctx = unit.ctx
    made_by = ctx.runtime("struct_of")
    out: dict = {}
    for key, fdef in scopes.functions():
        for s in statements(fdef.body):
            v = s.value if isinstance(s, A.Assign) else None
            if not (
                isinstance(v, A.Call)
                and isinstance(s.targets[0], A.Name)
                and anno.getanno(v.func, anno.CALLEE) is made_by
                and len(v.args) == 3
            ):
                continue
            # (the class's fields; or the names given, where the class is not known here -- in
            # emitted code transformed again they are a variable's, ``tup_1 = 'size',``)
            cls = unit.lookup(v.args[0].id)[1] if isinstance(v.args[0], A.Name) else None
            given = v.args[2].value if isinstance(v.args[2], A.Constant) else ()
            fields = struct_fields(cls) or given
            names = {n for n in fields if _array_attribute(ctx, n)}
            if names:
                out.setdefault((key, s.targets[0].id), set()).update(names)
    return out


def _field_named_as_attribute(ctx, value, key, fields, made, scopes, reach) -> bool:
    """``p.size`` or ``p.T`` (an array's attribute, without derivative or with a rule) where
    ``p`` may be a struct with a field of that name: an argument of the entry function that is
    one (``_struct_fields``: the specialization's ``FIELDS``, which a caller also passes a helper
    it hands a struct to), a name a struct with that field is assigned to (``_made_structs``), or
    any value but an argument known to be a number or an array, where a struct class the
    function can reach has that field (``reach``: ``resolve.structs_in_reach``; a helper's
    result, a list's item may be one).
    The field's derivative flows, and ShiftReset reads it by ``runtime.attribute``, which decides
    when it runs (an array there: its attribute's rule)."""
    value = attribute_read(value) or value
    if not (
        isinstance(value, A.Attribute)
        and isinstance(value.value, A.Name)
        and _array_attribute(ctx, value.attr)
    ):
        return False
    if key == "" and f"{value.value.id}.{value.attr}" in fields:
        return True
    owner = scopes.resolve(key, value.value.id)
    if owner is not None and value.attr in made.get(owner, ()):
        return True
    return value.attr in reach() and not (owner is not None and owner in reach.numeric)


class _Reach:
    """``resolve.structs_in_reach``'s fields named as an array's attribute, found at the first
    call (most functions read no such attribute); ``numeric``: the entry's arguments known to be
    numbers or arrays (the specialization's kinds), which are no struct."""

    def __init__(self, unit):
        self.unit = unit
        self.found = None
        kinds = unit.arg_kinds or {}
        self.numeric = {
            ("", p)
            for p in A.arg_names(unit.tree.args)
            if kinds.get(p) and set(kinds[p]) <= NUMERIC
        }

    def __call__(self) -> set:
        if self.unit.staged:  # (code staged for Numba holds no struct: one falls back)
            return set()
        if self.found is None:
            ctx = self.unit.ctx
            self.found = structs_in_reach(self.unit, lambda n: _array_attribute(ctx, n))
        return self.found


def _rule_operands(rule, args, keywords):
    if rule is None or any(isinstance(a, A.Starred) for a in args):
        return None
    try:
        bound = rule.bind(args, {k.arg: k.value for k in keywords})
    except TypeError:
        return None
    out = []
    for p, v in bound.items():
        # a parameter without a rule still carries the dependence (then it is an error), unless
        # its values are discrete
        if p in rule.discrete or isinstance(v, Default):
            continue
        values = v if isinstance(v, tuple) else v.values() if isinstance(v, dict) else [v]
        out += [x.id for x in values if isinstance(x, A.Name)]
    return out


def _calls(s) -> bool:
    """Is ``s`` a call, or an assignment of one?"""
    return isinstance(s, (A.Expr, A.Assign)) and isinstance(s.value, A.Call)


def _names(nodes) -> list[str]:
    return [n.id for n in nodes if isinstance(n, A.Name)]


def _varied_updates(scopes, varied: set) -> None:
    """Mark the updates (``y = y op v``) whose value depends on the inputs though it reaches no
    result through ``y`` (not active): another name may hold ``y``'s array and carry the
    derivative on (``w = v; v += x``), which activity, following names, does not see -- such an
    update must not run as Python's own in-place operation (``aliasing.python_may_run_in_place``:
    the run-time check sees the other name)."""
    for key, fdef in scopes.functions():
        for s in statements(fdef.body):
            if anno.hasanno(s, anno.AUG) and not anno.getanno(s, anno.ACTIVE):
                read = S.loads(s.value)
                if any(scopes.resolve(key, n) in varied for n in read):
                    anno.setanno(s, anno.VARIED, True)


def _read_where_called(fdef) -> set[str]:
    """Of a loop's function (Desugar's: called once, right after it is defined), the names of
    enclosing functions it only reads -- it, and the loops nested in it: no other function
    nested in it reads one later, none assigns one or changes it in place. Each is read at the
    loop's call, as if the loop's code stood there. Empty for any other function."""
    if not anno.getanno(fdef, anno.LOOP, False):
        return set()
    out = free_names(fdef) - S.writes_through(fdef)
    for d in A.walk(fdef):
        if isinstance(d, A.FunctionDef) and not anno.getanno(d, anno.LOOP, False):
            out -= free_names(d)
        elif isinstance(d, A.stmt):
            name, in_place = _mutated(d)
            if in_place:
                out.discard(name)
            found = anno.getanno(d, anno.SHARED_MUTATION)
            if found is not None:
                out -= set(found.names)
    return out


def assigned_names(stmt) -> list[str]:
    """Names a normalized statement binds."""
    if isinstance(stmt, A.Assign):
        t = stmt.targets[0]
        if isinstance(t, A.Name):
            return [t.id]
        if isinstance(t, (A.Tuple, A.List)):
            return [e.id for e in t.elts if isinstance(e, A.Name)]
    return []


class Versions:
    """The versions of a function's own variables, one per assignment (an SSA form of its
    acyclic body: loops are recursive functions by now), so that activity is flow-sensitive
    within a function: ``s = x`` read before ``s`` is rebound to something active is not
    active itself. A variable is ``(key, name)`` -- for a parameter or a name read before any
    assignment, its value on entry -- or ``(key, name, n)``, the value the n-th assignment
    gives it. Versioned are only names nothing else can see change: not those a nested function
    reads or writes, nor a function's name, nor a container changed in place (``x[i] = v``,
    ``xs.append(v)``, a change aliasing finds others share) -- those stay one variable."""

    def __init__(self, scopes, key, fdef):
        self.scopes, self.key = scopes, key
        targets: dict[str, int] = {}  # name -> the assignments' targets that name it
        unversioned = set()
        loops = []  # (a loop's function, the names it reads where it is called)
        for s in statements(fdef.body):
            if isinstance(s, A.Assign):
                t = s.targets[0]
                named = [t] if isinstance(t, A.Name) else getattr(t, "elts", [])
                for e in named:
                    if isinstance(e, A.Name):
                        targets[e.id] = targets.get(e.id, 0) + 1
            elif isinstance(s, A.FunctionDef):
                unversioned.add(s.name)
                read = _read_where_called(s)
                unversioned |= free_names(s) - read
                if read:
                    loops.append((s, read))
            name, in_place = _mutated(s)
            if in_place:
                unversioned.add(name)
            found = anno.getanno(s, anno.SHARED_MUTATION)
            if found is not None:
                unversioned |= set(found.names)
        # A name bound some other way (``for``'s target, ``del``, a ``def``): a single variable.
        # (For speed, counted, not looked for: the scan of the scope Scopes made counts every
        # name that is not read -- in a normalized function, where no lambda, comprehension or
        # ``:=`` is left, the targets above and those bound some other way.)
        for n, c in scopes.own[key].stores.items():
            if c > targets.get(n, 0):
                unversioned.add(n)
        self.versioned = scopes.locals[key] - unversioned
        self.count = 0
        # A loop reads the versions its call sees: through a variable of its own for each name
        # (``read_at``), the name's versions where it is defined flowing into it (``walk``).
        self.loops: dict[int, list] = {}
        for s, read in loops:
            for n in sorted(read & self.versioned):
                var = (key, n, "@" + anno.getanno(s, anno.DEF_KEY))
                self.loops.setdefault(id(s), []).append((n, var))
                for d in A.walk(s):  # (it and the loops nested in it that read the name)
                    if isinstance(d, A.FunctionDef) and n in free_names(d):
                        scopes.read_at.setdefault(anno.getanno(d, anno.DEF_KEY), {})[n] = var
        self.via = scopes.read_at.get(key, {})

    def reader(self, env):
        """The variables each of some names may hold where ``env`` holds."""

        def vars_(names) -> list:
            out = []
            for n in names:
                if n in self.versioned:
                    out += env.get(n, [(self.key, n)])
                else:
                    v = self.via.get(n) or self.scopes.resolve(self.key, n)
                    if v is not None:
                        out.append(v)
            return out

        return vars_

    def reads_at(self, s, vars_) -> list:
        """The edges of the definition of a loop's function ``s``: it is called right after,
        and reads there the versions of the names ``read_at`` gives it."""
        return [([var], vars_([n])) for n, var in self.loops.get(id(s), ())]

    def fresh(self, names) -> list:
        """The variables an assignment to ``names`` binds (in order; a global: none)."""
        out = []
        for n in names:
            if n in self.versioned:
                self.count += 1
                out.append((self.key, n, self.count))
            else:
                v = self.scopes.resolve(self.key, n)
                if v is not None:
                    out.append(v)
        return out

    def bind(self, env, variables) -> None:
        """After the assignment: ``env`` sees the new versions ``fresh`` made."""
        for v in variables:
            if len(v) == 3:
                env[v[1]] = [v]

    def merge(self, envs) -> dict:
        """Where branches join: a name may hold what it holds at the end of any of them."""
        out: dict = {}
        for env in envs:
            for n, vs in env.items():
                out[n] = out.get(n, []) + [v for v in vs if v not in out.get(n, [])]
        for n in out:
            if any(n not in env for env in envs):  # unbound on entry in some branch
                out[n] = out[n] + [(self.key, n)]
        return out


class Entries:
    """A tuple's entries, each its own way from where the tuple is made to where it is unpacked:
    a loop's function returns its carried values as one tuple, ``mat7, s6 = loop(...)``, and
    where only ``mat7`` reaches the result, ``s6`` -- and its computation in the loop -- does
    not. (As one value, the tuple made every carried value active: the loop got adjoint code
    for a value nothing reads, and its rules multiplied that value's zero adjoint by an
    infinite slope, a NaN in the gradient.)

    An entry is a variable of its own, ``(*version, i)`` -- ``(g, RET, n, i)`` for entry ``i``
    of what a local function ``g`` returns, unpacked to ``n`` names -- that the tuple depends
    on: ``t = a, b`` gives ``t#0 <- a``, ``t#1 <- b`` and ``t <- t#0, t#1``, so a use of ``t``
    as one value still needs every entry, and ``x, y = t`` gives ``x <- t#0``, ``y <- t#1``.
    A local call's result ``c = g(...)`` unpacked gives ``c#i <- g#i``, and ``g#i`` comes
    from entry ``i`` of each value ``g`` returns. A variable is active where one of its entries
    is (``Activity.run`` takes ``v[:2]``). Followed only where the tuple is one version of a
    name made of names and constants, or a local function's result, and the unpacking's
    targets names: anything else is one value, as before."""

    def __init__(self):
        self.tuples: dict = {}  # version -> the number of its entries (a tuple of names made)
        self.calls: dict = {}  # version -> the key of the local function whose result it is
        self.returns: dict = {}  # function key -> the variables of what each return returns
        self.unpacks: list = []  # (the variable of each target, the versions unpacked)

    def made(self, target, value, targets, vars_, scopes) -> list | None:
        """The edges of ``target = value`` where it makes a tuple followed by entries (None:
        the caller's own, the value as one)."""
        if not (isinstance(target, A.Name) and len(targets) == 1 and len(targets[0]) == 3):
            return None  # (only a version of a name: it is assigned here alone)
        t = targets[0]
        if isinstance(value, A.Tuple) and all(
            isinstance(e, (A.Name, A.Constant)) for e in value.elts
        ):
            self.tuples[t] = len(value.elts)
            out = [
                ([(*t, i)], vars_([e.id]) if isinstance(e, A.Name) else [])
                for i, e in enumerate(value.elts)
            ]
            return out + [([t], [(*t, i) for i in range(len(value.elts))])]
        if isinstance(value, A.Call):
            g, gdef = called_local(scopes, value)
            if gdef is not None:
                self.calls[t] = g
        return None

    def unpacked(self, target, value, targets, vars_) -> bool:
        """Record ``x, y = t`` (names, ``t`` a name): its edges are the entries' (True)."""
        if not (
            isinstance(target, A.Tuple)
            and isinstance(value, A.Name)
            and all(isinstance(e, A.Name) for e in target.elts)
            and len(targets) == len(target.elts)
        ):
            return False
        self.unpacks.append((targets, vars_([value.id])))
        return True

    def returned(self, key, variables) -> None:
        self.returns.setdefault(key, []).append(variables)

    def edges(self) -> list:
        """The edges of the unpackings, and of the returns whose entries they read."""
        out: list = []
        asked: set = set()  # (function key, n, i): entry i of its result, unpacked to n
        linked: set = set()  # (a call's result, i): its entry i is the function's
        todo: list = []

        def entry(v, i, n) -> list:
            """The variables entry ``i`` of ``v``, unpacked to ``n`` names, comes from."""
            if self.tuples.get(v) == n:
                return [(*v, i)]
            g = self.calls.get(v)
            if g is not None and g in self.returns and len(v) == 3:
                if (g, n, i) not in asked:
                    asked.add((g, n, i))
                    todo.append((g, n, i))
                if (v, i) not in linked:
                    linked.add((v, i))
                    out.append(([(*v, i)], [(g, RET, n, i)]))
                    out.append(([v], [(*v, i)]))
                return [(*v, i)]
            return [v]  # (a tuple from elsewhere: as one value)

        for targets, versions in self.unpacks:
            n = len(targets)
            for i, t in enumerate(targets):
                out.append(([t], [x for v in versions for x in entry(v, i, n)]))
        while todo:
            g, n, i = todo.pop()
            for variables in self.returns[g]:
                out.append(([(g, RET, n, i)], [x for v in variables for x in entry(v, i, n)]))
        return out


def _watch(s, key, scopes, outer, operands, targets, writes, reads) -> None:
    """Note an assignment that writes or reads a variable of the function around the entry."""
    order = len(writes) + len(reads)
    free = [n for n in outer if scopes.resolve(key, n) is None]
    written = [n for n in assigned_names(s) if n in free]
    if written:
        writes.append((order, s, written, operands))
    read = [n for n in S.loads(s.value) if n in free]
    if read:
        reads.append((order, key, read, targets))


def _through_outer(unit, writes, reads, forward, useful) -> None:
    """Refuse a derivative that would flow through a variable of the function around the entry:
    assigned a value that depends on the active parameters, then read into the result (by the
    entry after it, or by a function in it). Nothing carries it there: the gradient would miss
    it (a wrong number). A value only kept there, or one that does not depend on them (a call
    counter), is fine."""
    for i, s, names, operands in writes:
        if not any(v in forward for v in operands):
            continue
        for j, key, read, targets in reads:
            if (key or j > i) and set(names) & set(read) and any(v in useful for v in targets):
                name = sorted(set(names) & set(read))[0]
                raise unit.error(
                    f"`{unit.fn.__qualname__}` assigns `{name}`, a variable of the function "
                    f"around it (`nonlocal {name}`), a value that depends on "
                    f"{', '.join(unit.active)}, and reads it back into its result: cpsad does not "
                    "differentiate through a variable of a function it is not transforming",
                    s,
                    f"pass `{name}` in and return its new value (`def f(x, {name}): ... return "
                    f"..., {name}`), or differentiate the function `{name}` belongs to",
                )


def scope_key(fdef, root) -> str:
    return "" if fdef is root else anno.getanno(fdef, anno.DEF_KEY)


class Scopes:
    """The function tree: each function's local names, its parent, and Python's name resolution."""

    def __init__(self, root):
        self.root = root
        self.node: dict[str, object] = {}
        self.parent: dict[str, str | None] = {}
        self.locals: dict[str, set[str]] = {}
        self.own: dict[str, S.Facts] = {}  # key -> the facts of its own scope (``local``, ...)
        # (owner key, name) -> the DEF_KEYs of the local functions defined by that name (a name
        # may be defined again: a value read of it may be any of them)
        self.defs: dict[tuple, list] = {}
        # key -> every name the function (or one nested in it) mentions, and its parameters:
        # filled by Activity, read by Kinds (see ``unit.scopes``)
        self.names: dict[str, set[str]] = {}
        # key -> {name: variable}: the names a loop's function reads where it is called, each
        # through a variable of its own (``Versions``)
        self.read_at: dict[str, dict] = {}
        stack = [(root, None)]
        while stack:
            fdef, parent = stack.pop()
            key = scope_key(fdef, root)
            self.node[key] = fdef
            self.parent[key] = parent
            own = self.own[key] = S.own_facts(fdef)
            self.locals[key] = own.local
            for s in statements(fdef.body):
                if isinstance(s, A.FunctionDef):
                    self.defs.setdefault((key, s.name), []).append(anno.getanno(s, anno.DEF_KEY))
                    stack.append((s, key))

    def resolve(self, key: str, name: str):
        """The variable ``name`` means inside function ``key``: (owner key, name), or None (global)."""
        while key is not None:
            if name in self.locals[key]:
                return (key, name)
            key = self.parent[key]
        return None

    def functions(self):
        return list(self.node.items())


class Activity:
    name = "activity"
    invariant = "statements that compute active values are marked; only they get adjoints"

    def run(self, unit: Unit) -> None:
        ctx = unit.ctx
        scopes = Scopes(unit.tree)
        edges: list[tuple[list, list]] = []  # (target variables, variables derivatives flow from)
        sources: set = {("", p) for p in unit.active}
        sinks: set = {("", RET)}
        escaping: set[str] = set()
        # variables of the function around the entry (``nonlocal`` there): no scope here owns
        # them, so no variable carries a derivative through them -- watched (``_through_outer``)
        outer = set() if unit.emitted else S.declared_nonlocal(unit.tree)
        writes: list = []  # (order, statement, names, variables of the value)
        reads: list = []  # (order, function key, names, variables assigned)
        # a tuple's entries, followed from where it is made to where it is unpacked (``Entries``)
        entries = Entries()
        fields = _struct_fields(unit)
        structs_made = _made_structs(scopes, unit)
        reach = _Reach(unit)
        unit.struct_fields = structs_made  # (ShiftReset passes them on to callees: ``FIELDS``)

        for key, fdef in scopes.functions():
            versions = Versions(scopes, key, fdef)

            def walk(block, env, key=key, versions=versions):
                """The edges of ``block``'s statements, in order; ``env``: the versions each name
                may hold here. Returns the versions after the block (None: it returned)."""
                for s in block:
                    vars_ = versions.reader(env)
                    if isinstance(s, A.If):
                        after = [e for e in (walk(s.body, dict(env)), walk(s.orelse, dict(env)))]
                        after = [e for e in after if e is not None]
                        if not after:
                            return None
                        env = versions.merge(after)
                        continue
                    if isinstance(s, A.FunctionDef):
                        edges.extend(versions.reads_at(s, vars_))
                    sinks.update(vars_(_held_changed(s, ctx)))
                    sinks.update(vars_(_kept_outside(s, ctx)))
                    written = in_place_writer(s.value) if _calls(s) else None
                    if written is not None and isinstance(written[1], A.Name):
                        # np.exp(x, out=y), np.add.at(y, i, x): y now depends on the call's
                        # values (ShiftReset refuses it where any is differentiable)
                        into = written[1].id
                        edges.append((vars_([into]), vars_(sorted(read_names(s.value)))))
                        edges.extend(self.shared(s, vars_, [into, *sorted(read_names(s.value))]))
                    if isinstance(s, A.Assign):
                        t = s.targets[0]
                        value = s.value
                        if isinstance(t, (A.Name, A.Tuple, A.List)):
                            if _field_named_as_attribute(
                                ctx, value, key, fields, structs_made, scopes, reach
                            ):
                                anno.setanno(value, anno.FIELD, True)
                            operands = vars_(flow_operands(ctx, value))
                            sinks.update(vars_(_passed_to_value(value)))
                            targets = versions.fresh(assigned_names(s))
                            if outer:
                                _watch(s, key, scopes, outer, operands, targets, writes, reads)
                            made = entries.made(t, value, targets, vars_, scopes)
                            if made is not None:
                                edges.extend(made)
                            elif not entries.unpacked(t, value, targets, vars_):
                                edges.append((targets, operands))
                            edges.extend(self.local_call(value, targets, scopes, key, vars_))
                            versions.bind(env, targets)
                        elif isinstance(t, (A.Subscript, A.Attribute)) and isinstance(
                            t.value, A.Name
                        ):
                            # x[i] = v: x now depends on v (and still on its old self)
                            edges.append((vars_([t.value.id]), vars_(_names([s.value, t.value]))))
                            edges.extend(self.shared(s, vars_, [t.value.id, *_names([s.value])]))
                            if _held_elsewhere(s):
                                sinks.update(vars_([t.value.id]))
                    elif isinstance(s, A.Expr) and isinstance(s.value, A.Call):
                        call = s.value
                        f = call.func
                        if anno.getanno(f, anno.CALLEE_KIND) == "method" and f.attr in MUTATORS:
                            if isinstance(f.value, A.Name):
                                edges.append((vars_([f.value.id]), vars_(_names(call.args))))
                                edges.extend(
                                    self.shared(s, vars_, [f.value.id, *_names(call.args)])
                                )
                                if _held_elsewhere(s):
                                    sinks.update(vars_([f.value.id]))
                        if anno.getanno(f, anno.CALLEE_KIND) == "dynamic" and isinstance(f, A.Name):
                            sinks.update(
                                vars_([f.id])
                            )  # called for its effect: it may change state
                        sinks.update(vars_(_passed_to_value(call)))
                        edges.extend(self.local_call(call, [], scopes, key, vars_))
                    elif isinstance(s, A.Return):
                        if isinstance(s.value, A.Name):
                            edges.append(([(key, RET)], vars_([s.value.id])))
                            entries.returned(key, vars_([s.value.id]))
                        return None
                return env

            walk(fdef.body, {})
            # functions used as values escape: anything may flow in, their results anywhere
            calls = set()  # the names of local functions called (a call comes before its name)
            # (for speed: without a local function, none escapes, and the scope is not walked)
            for n in own_nodes(fdef) if scopes.defs else ():
                if n.__class__ is A.Call:
                    # (one called with `*args` or `**kwargs` is bound when it runs: through the
                    # runtime dispatch, as a value)
                    if anno.getanno(n.func, anno.CALLEE_KIND) == "local" and not spreads(n):
                        calls.add(id(n.func))
                elif isinstance(n, A.Name) and isinstance(n.ctx, A.Load) and id(n) not in calls:
                    escaping.update(scopes.defs.get(scopes.resolve(key, n.id), ()))
        walk = None  # (it calls itself through this cell: a cycle that kept the tree alive)
        for g in escaping:
            gdef = scopes.node[g]
            sources |= {(g, p) for p in A.arg_names(gdef.args)}
            sinks.add((g, RET))
            # (its parameters are not sinks: what it does with them decides whether they are needed)
            unit.locals[g].escapes = True
            # the function as a value carries its result's activity (for calls through it)
            parent = scopes.parent[g]
            edges.append(([(parent, gdef.name)], [(g, RET)]))
            if _changes_outer_state(gdef):
                # calling it changes variables of enclosing functions (a continuation adding to
                # an adjoint, in emitted code transformed again): a call through the value must
                # run in continuation-passing style even when no value it passes is active
                sources.add((parent, gdef.name))
                sinks.add((parent, gdef.name))

        edges.extend(entries.edges())
        forward = _closure(sources, edges, forward=True)
        useful = _closure(sinks, edges, forward=False)
        _through_outer(unit, writes, reads, forward, useful)
        # what follows asks about variables: one is active when any of its versions is
        active = {v[:2] for v in forward & useful}
        _stored_outside(unit, scopes, {v[:2] for v in forward})
        unit.active_vars = active

        unit.active_by_scope = {}
        for key, fdef in scopes.functions():
            names = S.names(fdef) | set(A.arg_names(fdef.args))  # (nested functions too)
            scopes.names[key] = names
            view = {n for n in names if scopes.resolve(key, n) in active}
            unit.active_by_scope[key] = view
            for s in statements(fdef.body):
                if isinstance(s, A.Assign):
                    t = s.targets[0]
                    if any(n in view for n in assigned_names(s)):
                        anno.setanno(s, anno.ACTIVE, True)
                    elif (
                        isinstance(s.value, A.Call)
                        and (set(_passed_to_value(s.value)) | set(_names([s.value.func]))) & view
                        and anno.getanno(s.value.func, anno.CALLEE_KIND) == "dynamic"
                    ):
                        # its result unused, but the call may change active state
                        anno.setanno(s, anno.ACTIVE, True)
                    elif isinstance(t, (A.Subscript, A.Attribute)) and isinstance(t.value, A.Name):
                        if t.value.id in view:
                            anno.setanno(s, anno.ACTIVE, True)
        _varied_updates(scopes, {v[:2] for v in forward})
        _changed_after_read(unit, scopes, ctx)
        for key, fdef in scopes.functions():
            if key:
                info = unit.locals[key]
                params = A.arg_names(fdef.args)
                info.active = tuple(p for p in params if (key, p) in active or info.escapes)
                view = unit.active_by_scope[key]
                info.returns_active = any(
                    isinstance(n, A.Return) and isinstance(n.value, A.Name) and n.value.id in view
                    for n in own_nodes(fdef)
                )
                info.transformed = (
                    (key, RET) in active
                    or _has_active_effects(fdef)
                    # a call of a helper that may change an active argument in place, which
                    # someone reads after: transformed, so that the helper's own check runs
                    or any(n in view for s in statements(fdef.body) for n in _held_changed(s, ctx))
                    # a value whose calls may change active state (it calls a function value)
                    or (info.escapes and (scopes.parent[key], fdef.name) in active)
                )
        self.effects(unit, scopes, active)
        self.callers_of_transformed(unit, scopes)
        unit.active_names = unit.active_by_scope[""]
        unit.scopes = scopes  # (for speed: Kinds, next, reads the same tree; see ``Unit``)
        order = {n: i for i, n in enumerate(A.arg_names(unit.tree.args))}
        shown = sorted(unit.active_names, key=lambda n: (order.get(n, len(order)), n))
        unit.notes[self.name] = [
            "active (depend on "
            + ", ".join(unit.active)
            + " and reach the result): "
            + (", ".join(shown) or "nothing")
        ]

    @staticmethod
    def effects(unit, scopes, active) -> None:
        """Which local functions change active state of an enclosing function when they run:
        assign a nonlocal, or grow or store into a container they did not create. A call of
        one must run in continuation-passing style even when its result is not needed."""
        direct: dict[str, bool] = {}
        calls: dict[str, set] = {}
        emitted = getattr(unit, "emitted", False)
        for key, fdef in scopes.functions():
            if not key:
                continue
            hit = False
            for s in statements(fdef.body):
                if _calls_active_value(s, scopes, key, active, emitted):
                    # a function value that changes active state (a continuation of emitted code
                    # transformed again) or computes active values: calling it is an effect
                    hit = True
                name, in_place = _mutated(s)
                if name is not None:
                    owner = scopes.resolve(key, name)
                    if owner is not None and owner in active:
                        if owner[0] != key:
                            hit = True
                        elif (
                            in_place
                            and name in A.arg_names(fdef.args)
                            and fdef.name not in unit.namer.generated
                            and not getattr(unit, "emitted", False)
                        ):  # (a loop's function carries what its body stores into -- Desugar
                            # -- here, or in the emitted code transformed again)
                            raise unit.error(
                                f"changing the list or dict `{name}` passed in as an argument is "
                                "not supported",
                                s,
                                "return a new value, or build the container in the function "
                                "that creates it",
                            )
            direct[key] = hit
            calls[key] = set()
            for n in A.walk(fdef):
                if not isinstance(n, A.Call):
                    continue
                if anno.getanno(n.func, anno.CALLEE_KIND) == "local":
                    calls[key].add(anno.getanno(n.func, anno.CALLEE))
                # a local function handed to any call may run in it: its effects are this
                # call's (``const_bp(after_const, g2)``, ``after_const`` calling the code's own
                # continuation through the dispatch: run as a plain value, ``call_primal``, the
                # second derivative through it was a silent 0.0)
                for a in [*n.args, *(k.value for k in n.keywords)]:
                    if isinstance(a, A.Name):
                        owner = scopes.resolve(key, a.id)
                        calls[key].update(scopes.defs.get(owner, ()) if owner is not None else ())
        changed = True
        while changed:
            changed = False
            for key in direct:
                if not direct[key] and any(direct.get(c) for c in calls[key]):
                    direct[key] = changed = True
        for key, value in direct.items():
            unit.locals[key].effects = value
            if value:
                unit.locals[key].transformed = True

    @staticmethod
    def shared(s, vars_, names) -> list:
        """A change in place of a container others may hold (aliasing's ``SHARED_MUTATION``):
        they depend on it and on what it was given -- so a derivative that reads one of them
        makes the change active, where the check that none holds it runs."""
        found = anno.getanno(s, anno.SHARED_MUTATION)
        if found is None or not found.names:
            return []
        return [(vars_(found.names), vars_(names))]

    @staticmethod
    def callers_of_transformed(unit, scopes) -> None:
        """A local function that calls a transformed one by name is transformed too: the
        emitted code has only the callee's backpropagator (or tangent function) to call."""
        calls: dict[str, set] = {}
        for key, fdef in scopes.functions():
            if key:
                calls[key] = {
                    anno.getanno(n.func, anno.CALLEE)
                    for n in own_nodes(fdef)
                    if isinstance(n, A.Call) and anno.getanno(n.func, anno.CALLEE_KIND) == "local"
                }
        changed = True
        while changed:
            changed = False
            for key, callees in calls.items():
                info = unit.locals[key]
                if not info.transformed and any(
                    c in unit.locals and unit.locals[c].transformed for c in callees
                ):
                    info.transformed = changed = True
                # the function that defines a transformed one is transformed too: only a
                # backpropagator defines backpropagators (a loop's function defining `g22`)
                parent = scopes.parent[key]
                if info.transformed and parent and not unit.locals[parent].transformed:
                    unit.locals[parent].transformed = changed = True

    @staticmethod
    def local_call(value, targets, scopes, key, vars_) -> list:
        """Edges of a call of a local function: arguments into parameters, result out
        (``vars_``: the variables the caller's names hold there)."""
        g, gdef = called_local(scopes, value)
        if gdef is None:
            if g is None:
                return []
            # a local function this analysis does not see: its result depends on everything
            names = [a.value if isinstance(a, A.Starred) else a for a in value.args]
            names += [k.value for k in value.keywords]
            return [(targets, vars_(_names(names)))] if targets else []
        args = gdef.args
        positional = [a.id for a in args.posonlyargs + args.args]
        star = [args.vararg.id] if args.vararg is not None else []
        keyword = [a.id for a in args.args + args.kwonlyargs]
        double = [args.kwarg.id] if args.kwarg is not None else []
        edges = []

        def flow(node, into):
            if isinstance(node, A.Name):
                found = vars_([node.id])
                if found:
                    edges.append(([(g, p) for p in into], found))

        for i, a in enumerate(value.args):
            if isinstance(a, A.Starred):  # f(*xs): xs may fill any parameter from here on
                flow(a.value, positional[i:] + star + keyword)
            elif i < len(positional):
                flow(a, [positional[i]])
            else:
                flow(a, star)
        for kw in value.keywords:
            if kw.arg is None:  # f(**d): any parameter
                flow(kw.value, A.arg_names(args))
            else:
                flow(kw.value, [kw.arg] if kw.arg in keyword else double)
        if targets:
            edges.append((targets, [(g, RET)]))
        return edges

    @staticmethod
    def check(unit: Unit) -> None:
        assert set(unit.active_names) <= set(A.names_in(unit.tree)) | set(
            A.arg_names(unit.tree.args)
        )


def _stored_outside(unit, scopes, forward) -> None:
    """Refuse a value that depends on the differentiated inputs stored into state outside the
    functions being transformed -- a global list (``MEMORY.append(v)``), a global dict or object,
    a variable of an enclosing function cpsad does not transform: whoever reads it back later (a
    helper returning ``MEMORY[-1]``) gets a value whose derivative cpsad cannot follow, and the
    gradient would silently miss it."""
    for key, fdef in scopes.functions():
        for s in statements(fdef.body):
            name, in_place = _mutated(s)
            call = s.value if isinstance(s, A.Expr) else None
            if (  # (a global's method resolves to the object's bound method: not "method")
                isinstance(call, A.Call)
                and isinstance(call.func, A.Attribute)
                and call.func.attr in aliasing.MUTATING_METHODS
                and isinstance(call.func.value, A.Name)
            ):
                name, in_place = call.func.value.id, True
            if name is None or not in_place or scopes.resolve(key, name) is not None:
                continue
            if isinstance(s, A.Expr):
                call = s.value
                given = [a.value if isinstance(a, A.Starred) else a for a in call.args]
                given += [k.value for k in call.keywords]
            else:
                given = [s.value]
            names = {n.id for g in given for n in A.walk(g) if isinstance(n, A.Name)}
            if any(scopes.resolve(key, n) in forward for n in names):
                raise unit.error(
                    f"a value that depends on the differentiated inputs is stored into `{name}`, "
                    "which is not a variable of the function being differentiated (a global, or "
                    "a variable of an enclosing function): what reads it back later gets a value "
                    "cpsad cannot follow a derivative through",
                    s,
                    "return the value (and pass it on as an argument) instead of keeping it in "
                    f"`{name}`; to record values (a loss history), record what "
                    "cpsad.value_and_grad returns, outside the differentiated function",
                )


# numpy functions that change their first argument in place (a method that does, ``x.sort()``,
# ``rng.shuffle(x)``, is refused by its receiver or its name)
IN_PLACE = (
    numpy.random.shuffle,
    numpy.copyto,
    numpy.put,
    numpy.place,
    numpy.putmask,
    numpy.fill_diagonal,
    numpy.put_along_axis,
)


def in_place_writer(call):
    """``(the function as written, the array it writes into, a hint)`` for a call that writes
    into an array in place -- ``out=`` of a numpy function or of an array's method, a ufunc's
    ``.at`` (``np.add.at(a, idx, v)``), one of ``IN_PLACE`` (``np.copyto``, ``np.fill_diagonal``,
    ...) -- or None."""
    callee = anno.getanno(call.func, anno.CALLEE)
    shown = A.expr_source(call.func)
    if getattr(callee, "__name__", None) == "at" and isinstance(
        getattr(callee, "__self__", None), numpy.ufunc
    ):
        hint = "sum into a new array: `out = out + np.bincount(idx, weights=v, minlength=len(out))`"
        if callee.__self__ is not numpy.add:
            hint = "compute the new array as a value (`np.where`, `np.maximum`, a new array)"
        return shown, call.args[0] if call.args else call, hint
    if any(callee is f for f in IN_PLACE):
        hint = "compute a new value instead: `y = np.where(mask, v, y)`, `y = v.copy()`"
        if callee is numpy.random.shuffle:
            hint = "compute a new value instead, e.g. `y = x[rng.permutation(len(x))]`"
        return shown, call.args[0] if call.args else call, hint
    if anno.getanno(call.func, anno.CALLEE_KIND) in ("user", "local", "dynamic"):
        return None  # (a function of yours: its own ``out`` parameter is its business)
    for k in call.keywords:
        if k.arg == "out" and not (isinstance(k.value, A.Constant) and k.value.value is None):
            return shown, k.value, f"assign the result instead: `y = {shown}(...)`, no `out=`"
    return None


def read_names(node) -> set[str]:
    """The names ``node`` reads."""
    return {n.id for n in A.walk(node) if isinstance(n, A.Name)}


def _mutated(s):
    """(name, in place) for a statement that changes a value in place (``xs.append(v)``,
    ``d[k] = v``) or binds a name (a change of outer state only if the name is not ours)."""
    if isinstance(s, A.Expr) and isinstance(s.value, A.Call):
        f = s.value.func
        if (
            anno.getanno(f, anno.CALLEE_KIND) == "method"
            and f.attr in MUTATORS
            and isinstance(f.value, A.Name)
        ):
            return f.value.id, True
    if isinstance(s, A.Assign):
        t = s.targets[0]
        if isinstance(t, (A.Subscript, A.Attribute)) and isinstance(t.value, A.Name):
            return t.value.id, True
        if isinstance(t, A.Name):
            return t.id, False
    return None, False


def _calls_active_value(s, scopes, key, active, emitted=False) -> bool:
    """Does ``s`` call, through a variable, a function value that is active (one whose calls
    change active state or whose result is active) -- or hand a local function that is to a
    function that is not transformed here (the runtime dispatch of emitted code transformed
    again, ``call_bp(f, after_f, x)``, calls it)? In emitted code transformed again
    (``emitted``) every call through a value is: the function values there are continuations
    and closures of the code below, which change its adjoints (``k = Closure(g_bp)``, then
    ``bp_of(k)(seed)``, is no active value, yet calling it adds to ``x_bar``)."""
    value = s.value if isinstance(s, (A.Assign, A.Expr)) else None
    if not isinstance(value, A.Call):
        return False
    kind = anno.getanno(value.func, anno.CALLEE_KIND)
    if kind == "dynamic" and emitted:
        return True  # (see ``dynamic_effect``: emitted code's function values change adjoints)
    if kind == "dynamic" and isinstance(value.func, A.Name):
        return scopes.resolve(key, value.func.id) in active
    if kind in ("local", "user"):
        return False  # followed through their parameters (local_call) or transformed in turn
    for a in value.args:
        if isinstance(a, A.Name):
            v = scopes.resolve(key, a.id)
            if v is not None and v in active and scopes.defs.get(v) is not None:
                return True
    return False


def _held_changed(s, ctx) -> list[str]:
    """The arguments of a user function's call that it may change in place and that someone
    reads after it (aliasing's ``HELD_ARGS``): what the change does is seen (``helper(x[:])``
    changes ``x``), so each is needed as if the result read it -- active where it depends on an
    input, and the call then runs transformed, where its own check refuses the change."""
    call = s.value if isinstance(s, (A.Assign, A.Expr)) else None
    if not (isinstance(call, A.Call) and anno.getanno(call.func, anno.CALLEE_KIND) == "user"):
        return []
    held = anno.getanno(call, anno.HELD_ARGS)
    if not held or not aliasing.may_change_arguments(anno.getanno(call.func, anno.CALLEE), ctx):
        return []
    slots = list(enumerate(call.args)) + [(k.arg, k.value) for k in call.keywords]
    return [a.id for slot, a in slots if slot in held and isinstance(a, A.Name)]


def _changed_after_read(unit, scopes, ctx) -> None:
    """Mark a call of a user function that may change in place an array the backward pass
    reads -- an operand of an active statement that may run before it (earlier in the function,
    or anywhere where the function runs more than once -- a loop's, a local function's -- or in
    another function) -- with ``anno.KEEP_UNCHANGED``: ShiftReset keeps a copy before it and
    refuses a change when it runs. Python changes the array, and the derivative of that
    statement, computed after everything, would read the changed values (``w = np.dot(m, x)``
    then ``helper(m)``, where ``m`` has no derivative of its own: the helper's own checks never
    see it; they see an active one, ``_held_changed``). Forward mode computes each derivative as
    it goes: nothing to check there."""
    if unit.mode == "forward" or getattr(unit, "emitted", False):
        return  # (emitted code changes only the buffers it made, ``acc_into``)
    index = None  # (readers, places): made at the first call that needs it
    for key, fdef in scopes.functions():
        for s in statements(fdef.body):
            call = s.value if isinstance(s, (A.Assign, A.Expr)) else None
            if not (
                isinstance(call, A.Call) and anno.getanno(call.func, anno.CALLEE_KIND) == "user"
            ):
                continue
            if not anno.getanno(call, anno.HELD_ARGS):
                continue
            fn = anno.getanno(call.func, anno.CALLEE)
            changed = aliasing.changed_parameters(fn, ctx)
            if changed is not None and aliasing.VALUE_CALLS in changed:
                # the functions it is given, local ones that change nothing, change nothing
                if all(_changes_nothing(scopes, key, a) for _, a in _slots(call, fn)):
                    changed = changed - {aliasing.VALUE_CALLS}
                else:
                    changed = None
            if changed is not None and not changed:
                continue
            if index is None:
                index = _active_readers(scopes)
            readers, places = index
            holders = anno.getanno(call, anno.HELD_READERS) or {}
            names = set()
            for slot, a in _slots(call, fn):
                if changed is None or slot[1] is None or slot[1] in changed:
                    if isinstance(a, A.Name):
                        names.add(a.id)
                    names |= set(holders.get(slot[0], ()))
            _, at = places[id(s)]
            keep = []
            for name in sorted(names):
                v = scopes.resolve(key, name)
                if scopes.defs.get(v) is not None or v in unit.active_vars:
                    # a local function: no array to change; an active value: the call runs
                    # transformed, and the helper's own checks refuse the change
                    continue
                for rkey, i, r in readers.get(v, ()):
                    if r is s or (rkey == key and not key and i >= at):
                        continue  # the call itself; after it, in the entry function's one run
                    shown = getattr(fn, "__name__", "the function")
                    message = (
                        f"line {getattr(s, 'lineno', None)}: `{shown}` changed in place the "
                        f"array `{name}` holds, and the derivative of line "
                        f"{getattr(r, 'lineno', None)} reads `{name}`: the backward pass, which "
                        "runs after everything, would see the changed values. Give the "
                        f"derivative a copy where it reads `{name}` (`{name}.copy()` there), "
                        f"or give `{shown}` a copy (`{name}.copy()` here) if the change is not "
                        "needed"
                    )
                    keep.append((name, message))
                    break
            if keep:
                anno.setanno(s, anno.KEEP_UNCHANGED, keep)


def _active_readers(scopes) -> tuple[dict, dict]:
    """(variable -> [(function key, place, statement)] of the active statements that read it,
    id(statement) -> (function key, place)): places in ``statements`` order."""
    readers: dict = {}
    places: dict = {}
    for key, fdef in scopes.functions():
        for i, s in enumerate(statements(fdef.body)):
            places[id(s)] = (key, i)
            if not anno.getanno(s, anno.ACTIVE):
                continue
            value = s.value if isinstance(s, (A.Assign, A.Expr)) else None
            if value is None:
                continue
            for n in A.walk(value):
                if isinstance(n, A.Name) and isinstance(n.ctx, A.Load):
                    v = scopes.resolve(key, n.id)
                    if v is not None:
                        readers.setdefault(v, []).append((key, i, s))
    return readers, places


def _changes_nothing(scopes, key, arg) -> bool:
    """Is the argument ``arg`` (of a call in function ``key``) no local function, or one whose
    body changes nothing in place and calls nothing but primitives, functions without a
    derivative and local functions (``aliasing.changed_parameters``' function values)?"""
    if not isinstance(arg, A.Name):
        return True
    gs = scopes.defs.get(scopes.resolve(key, arg.id), ())
    # (none: an array, or a function of its own -- the helper's source judged that)
    return all(_def_changes_nothing(scopes.node[g]) for g in gs)


def _def_changes_nothing(gdef) -> bool:
    for n in A.walk(gdef):
        if isinstance(n, A.AugAssign):
            return False
        if isinstance(n, (A.Subscript, A.Attribute)) and isinstance(n.ctx, A.Store):
            return False
        if isinstance(n, A.Call) and anno.getanno(n.func, anno.CALLEE_KIND) not in (
            "primitive",
            "nondiff",
            "local",
        ):
            return False
    return True


def _slots(call, fn) -> list:
    """``((position or keyword, the parameter's name or None), argument)`` for each argument of
    ``call`` (of the function ``fn``): None where a ``*args`` takes it or it is not known."""
    import inspect

    try:
        params = list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):
        params = []
    positional = [p.name for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    out = []
    for i, a in enumerate(call.args):
        if isinstance(a, A.Starred):
            a = a.value
        out.append(((i, positional[i] if i < len(positional) else None), a))
    out += [((k.arg, k.arg), k.value) for k in call.keywords]
    return out


def _kept_outside(s, ctx) -> list[str]:
    """The arguments of a user function's call that it may store into state outside it
    (``aliasing.may_keep_arguments``: a global list, say): needed as if the result read them --
    whoever reads that state back may -- so the call runs transformed, where storing a value
    that depends on the inputs is refused (``_stored_outside``)."""
    call = s.value if isinstance(s, (A.Assign, A.Expr)) else None
    if not (isinstance(call, A.Call) and anno.getanno(call.func, anno.CALLEE_KIND) == "user"):
        return []
    if not aliasing.may_keep_arguments(anno.getanno(call.func, anno.CALLEE), ctx):
        return []
    given = [a.value if isinstance(a, A.Starred) else a for a in call.args]
    given += [k.value for k in call.keywords]
    return [a.id for a in given if isinstance(a, A.Name)]


def called_local(scopes, value):
    """``(key, def)`` of the local function ``value`` calls, or ``(None, None)``."""
    if isinstance(value, A.Call) and anno.getanno(value.func, anno.CALLEE_KIND) == "local":
        g = anno.getanno(value.func, anno.CALLEE)
        return g, scopes.node.get(g)
    return None, None


def _passed_to_value(value) -> list[str]:
    """The names ``value``, a call of a function value (``f(a, b)``), passes to it. The function
    may keep what it is given in state it changes (a ``nonlocal`` it assigns, which someone reads
    after), whatever its result is used for: each is needed (a sink), as a value someone reads.
    Empty for anything else."""
    if not isinstance(value, A.Call) or anno.getanno(value.func, anno.CALLEE_KIND) != "dynamic":
        return []
    args = [a.value if isinstance(a, A.Starred) else a for a in value.args]
    return _names(args + [k.value for k in value.keywords])


def _held_elsewhere(s) -> bool:
    """Does a change in place of a container (aliasing's ``SHARED_MUTATION``) show to a holder
    this function cannot name -- a variable of the code around a loop (``keep = buf`` before
    ``for i ...: buf[i] = v``, then ``keep`` read), a caller? That holder may read what the
    change stores, so the container is needed as if the result read it: where the stored value
    depends on an input the change is differentiated, and the check before it (``mutation_guard``)
    refuses it when it runs. (Left out, the change ran as a rebinding of a container nothing
    needed, and the gradient through ``keep`` was a silent 0.0.)"""
    found = anno.getanno(s, anno.SHARED_MUTATION)
    return found is not None and bool(found.held)


def _changes_outer_state(fdef) -> bool:
    """May calling ``fdef`` change state outside it: does it (or a function in it) assign a
    ``nonlocal``, change a container in place, or call a function value or a local function
    (which may)?"""
    for n in A.walk(fdef):
        if isinstance(n, A.Nonlocal):
            return True
        if isinstance(n, A.Call):
            kind = anno.getanno(n.func, anno.CALLEE_KIND)
            if kind == "method" and n.func.attr in MUTATORS:
                return True
            if kind in ("dynamic", "local"):  # a function value, or one that may change state
                return True
    return False


def _has_active_effects(fdef) -> bool:
    return any(anno.getanno(s, anno.ACTIVE) for s in statements(fdef.body))


def _closure(start: set, edges, forward: bool) -> set:
    """Variables reachable from ``start`` along the edges (forward: operand -> target)."""
    out = set(start)
    index: dict = {}
    for targets, ops in edges:
        src, dst = (ops, targets) if forward else (targets, ops)
        for s in src:
            index.setdefault(s, []).extend(dst)
    stack = list(out)
    while stack:
        v = stack.pop()
        for w in index.get(v, ()):
            if w not in out:
                out.add(w)
                stack.append(w)
    return out
