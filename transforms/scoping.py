"""Read-only facts about Python scoping in generated code: what a function binds, borrows and reads.

``analyze(root)`` visits a tree once and returns, for every function in it, a ``Facts`` record:
its parameters, the names it stores and loads in its own scope, what it declares ``nonlocal``, its
nested functions, and -- following Python's rules -- its local and free names and what a call of it
may assign in enclosing scopes. Simplify uses these to inline closures without capturing names
and to know which calls can change an adjoint. Nothing here rewrites a tree. A pass that analyses
a tree again after each change keeps a ``Scopes``: it visits again only what changed.

>>> from cpsad.transforms import astlib as A
>>> f = A.parse("def f(a):\\n    b = a\\n    def g():\\n        nonlocal b\\n        b = 2\\n").body[0]
>>> facts = analyze(f)
>>> sorted(facts[id(f)].local), sorted(facts[id(f.body[1])].writes)
(['a', 'b', 'g'], ['b'])
"""

from __future__ import annotations

from dataclasses import dataclass, field

from . import astlib as A


@dataclass
class Facts:
    fdef: object
    params: set[str] = field(default_factory=set)
    stores: dict[str, int] = field(default_factory=dict)  # own scope
    loads: dict[str, int] = field(default_factory=dict)  # own scope
    declared: set[str] = field(default_factory=set)  # nonlocal declarations
    nested: list = field(default_factory=list)  # function defs directly in this scope
    local: set[str] = field(default_factory=set)
    free: set[str] = field(
        default_factory=set
    )  # names it (or anything nested) uses but does not bind
    writes: set[str] = field(default_factory=set)  # enclosing names a call may assign (nonlocal)
    assignments: dict[str, int] = field(default_factory=dict)  # stores, plus nested nonlocal writes
    reads: dict[str, int] = field(default_factory=dict)  # loads, plus uses by nested functions
    returns: int = 0  # return statements in its own scope


def analyze(root, summaries: dict | None = None, own: Facts | None = None) -> dict[int, Facts]:
    """Facts of ``root`` and every function nested in it, keyed by ``id`` of the def node.

    ``summaries``: a cache of what each statement without a nested function loads, stores and
    declares, for a caller that analyses the same statements again and again (Simplify's
    inlining) and drops the entry of every statement it changes in place. ``own``: the facts of
    ``root``'s own scope, where the caller has them (``own_scope(root)``; not scanned again).
    """
    out: dict[int, Facts] = {}
    _facts(root, out, summaries, own)
    return out


def push_children(n, stack: list) -> None:
    """Push the nodes below ``n`` that may hold names (not ``ctx``, ``op``, ...)."""
    children = A.CHILDREN.get(n.__class__)
    if children is None:
        children = A.children_of(n.__class__)
    for name, holds in children:
        v = getattr(n, name, None)
        if v is None:
            continue
        if holds == A.NODES:
            stack.extend(v)
        elif holds == A.NODE:
            if isinstance(v, A.AST):
                stack.append(v)
        else:
            for x in v if v.__class__ is list else (v,):
                if isinstance(x, A.AST):
                    stack.append(x)


def loads(node) -> set[str]:
    """The names ``node`` reads (nested functions included): a quicker ``A.walk`` for this."""
    return names(node, load_only=True)


def names(node, load_only: bool = False) -> set[str]:
    """Every name ``node`` reads or writes (only reads, with ``load_only``; nested functions
    included): ``A.names_in``, quicker."""
    out = set()
    stack = [node]
    pop, push, extend = stack.pop, stack.append, stack.extend
    Name, Load, AST, NODES, NODE, CHILDREN = A.Name, A.Load, A.AST, A.NODES, A.NODE, A.CHILDREN
    while stack:
        n = pop()
        cls = n.__class__
        if cls is Name:
            if not load_only or n.ctx.__class__ is Load:
                out.add(n.id)
            continue
        # (``push_children``, written out as in ``_count``: the passes ask this of every
        # statement, some of the whole tree)
        fields = CHILDREN.get(cls)
        if fields is None:
            fields = A.children_of(cls)
        for name, holds in fields:
            v = getattr(n, name, None)
            if v is None:
                continue
            if holds == NODES:
                extend(v)
            elif holds == NODE:
                if isinstance(v, AST):
                    push(v)
            else:
                for x in v if v.__class__ is list else (v,):
                    if isinstance(x, AST):
                        push(x)
    return out


def name_nodes(node) -> list:
    """The ``Name`` nodes of ``node`` (or a list of them), nested functions included: what
    filtering ``A.walk`` for names gives, without visiting contexts and operators."""
    out = []
    stack = list(node) if isinstance(node, list) else [node]
    while stack:
        n = stack.pop()
        if n.__class__ is A.Name:
            out.append(n)
        else:
            push_children(n, stack)
    return out


class _Part:
    """What a statement says of names (``Facts``' counting fields alone: made for each
    statement of a scope that is summarized)."""

    __slots__ = ("loads", "stores", "declared", "returns", "nested")

    def __init__(self):
        self.loads: dict[str, int] = {}
        self.stores: dict[str, int] = {}
        self.declared: set[str] = set()
        self.returns = 0
        self.nested: list = []


def _summary(stmt):
    """``(stmt, facts of its names)``, or ``(stmt, None)`` if a function is defined inside it."""
    part = _Part()
    return stmt, (part if _count(part, [stmt], None, None) else None)


def used_and_bound(root) -> tuple[set[str], set[str]] | None:
    """Every name ``root`` (a function) mentions, and every name some scope in it binds (a
    parameter, a target, a definition): one walk, no scopes told apart -- a name used and bound
    nowhere is free in ``root``. None where a ``global`` or ``nonlocal`` statement, an import
    or a class makes binding more than that."""
    used: set[str] = set()
    bound: set[str] = set()
    stack = [root]
    pop = stack.pop
    Name, Load, FunctionDef = A.Name, A.Load, A.FunctionDef
    refused = (A.Global, A.Nonlocal, A.Import, A.ImportFrom, A.ClassDef, A.AsyncFunctionDef)
    while stack:
        n = pop()
        cls = n.__class__
        if cls is Name:
            used.add(n.id)
            if n.ctx.__class__ is not Load:
                bound.add(n.id)
            continue
        if cls is FunctionDef:
            bound.add(n.name)  # (its parameters are names: gast's ``Param`` context)
        elif cls in refused:
            return None
        else:
            named = _NAMED.get(cls)
            if named is None:
                named = _NAMED[cls] = "name" in cls._fields
            if named and getattr(n, "name", None).__class__ is str:
                return None  # (an exception's name, a match pattern's: bound by a string)
        push_children(n, stack)
    return used, bound


_NAMED: dict = {}  # node class -> has it a ``name`` field? (for speed: ``used_and_bound`` asks)


def counts(node) -> tuple[dict[str, int], dict[str, int]] | None:
    """How many times ``node`` (a statement or an expression) stores and loads each name
    (``(stores, loads)``, as ``analyze`` counts them into its scope's facts); None if a
    function is defined in it."""
    part = _summary(node)[1]
    return None if part is None else (part.stores, part.loads)


def _count(f, stack: list, summaries, defs) -> bool:
    """Count into ``f`` what the nodes on ``stack`` (and below them, in this scope) say of
    names: the statements ``summaries`` keeps by their summary. A function defined there goes
    to ``defs`` (its name, decorators and defaults are counted here) -- or, ``defs`` None,
    ends the count: False. (One loop, for speed: it meets every node of a scope.)"""
    loads, stores, declared = f.loads, f.stores, f.declared
    pop, push, extend = stack.pop, stack.append, stack.extend
    Name, Load, FunctionDef, AST, stmt = A.Name, A.Load, A.FunctionDef, A.AST, A.stmt
    declarations = (A.Nonlocal, A.Global)
    children_of, NODES, NODE = A.CHILDREN, A.NODES, A.NODE
    while stack:
        n = pop()
        cls = n.__class__
        if cls is Name:
            counts = loads if n.ctx.__class__ is Load else stores
            counts[n.id] = counts.get(n.id, 0) + 1
            continue
        if cls is FunctionDef:
            if defs is None:
                return False
            defs.append(n)
            stores[n.name] = stores.get(n.name, 0) + 1
            extend(n.decorator_list)
            extend(n.args.defaults)
            extend(d for d in n.args.kw_defaults if d is not None)
            continue
        if summaries is not None and isinstance(n, stmt):
            part = _cached_summary(n, summaries)
            if part is not None:
                for k, c in part.loads.items():
                    loads[k] = loads.get(k, 0) + c
                for k, c in part.stores.items():
                    stores[k] = stores.get(k, 0) + c
                declared |= part.declared
                f.returns += part.returns
                continue
        if cls in declarations:
            declared.update(n.names)
            continue
        if cls is A.Return:
            f.returns += 1
        # (``push_children``, written out: a call of it for each node made scans 40% slower)
        children = children_of.get(cls)
        if children is None:
            children = A.children_of(cls)
        for name, holds in children:
            v = getattr(n, name, None)
            if v is None:
                continue
            if holds == NODES:
                extend(v)
            elif holds == NODE:
                if isinstance(v, AST):
                    push(v)
            else:
                for x in v if v.__class__ is list else (v,):
                    if isinstance(x, AST):
                        push(x)
    return True


def _facts(fdef, out, summaries=None, own=None) -> Facts:
    if own is None:
        own = _own(fdef, summaries)
    f = _complete(own, [_facts(g, out, summaries) for g in own.nested])
    out[id(fdef)] = f
    return f


def _own(fdef, summaries=None, met: list | None = None) -> Facts:
    """What ``fdef``'s own scope says of names, not counting its nested functions' bodies: the
    fields up to ``local``; ``free``, ``writes``, ``assignments`` and ``reads`` are left empty.
    ``met``: a list the nested functions go to in the order the scan met them (see
    ``own_scope``)."""
    f = Facts(fdef, params=set(A.arg_names(fdef.args)))
    _scan(f, list(fdef.body), summaries)
    if met is not None:
        met += f.nested
    f.nested.sort(key=_line)
    f.local = (f.params | set(f.stores)) - f.declared
    return f


def _line(fdef) -> int:
    return getattr(fdef, "lineno", 0) or 0


def _scan(f: Facts, stack: list, summaries) -> None:
    """Count into ``f`` what the nodes on ``stack`` (and below them, in this scope) say of names;
    nested functions in the order met (the last statement first)."""
    _count(f, stack, summaries, f.nested)


def _cached_summary(stmt, summaries: dict):
    cached = summaries.get(id(stmt))
    if cached is None or cached[0] is not stmt:
        cached = summaries[id(stmt)] = _summary(stmt)
    return cached[1]


def _defs_met(fdef, summaries: dict) -> list:
    """The functions defined in ``fdef``'s own scope, in the order ``_scan`` meets them."""
    out = []
    stack = list(fdef.body)
    while stack:
        n = stack.pop()
        if isinstance(n, A.FunctionDef):
            out.append(n)  # (its decorators and defaults define no functions: no lambdas here)
        elif not isinstance(n, A.stmt) or _cached_summary(n, summaries) is None:
            push_children(n, stack)
    return out


def _complete(own: Facts, nested: list[Facts]) -> Facts:
    """A new record: ``own`` (from ``_own``) with what follows from the facts of its nested
    functions (``nested``, complete themselves, in the order of ``own.nested``)."""
    f = Facts(
        own.fdef,
        params=own.params,
        stores=own.stores,
        loads=own.loads,
        declared=own.declared,
        nested=own.nested,
        local=own.local,
        returns=own.returns,
    )
    f.free = (set(f.loads) | set(f.stores)) - f.local
    f.free |= f.declared
    f.writes = set(f.declared)
    f.assignments = dict(f.stores)
    f.reads = dict(f.loads)
    for gf in nested:
        f.free |= gf.free - f.local
        f.writes |= gf.writes - f.local
        for w in gf.writes:
            f.assignments[w] = f.assignments.get(w, 0) + 1
        for r in gf.free:
            f.reads[r] = f.reads.get(r, 0) + 1
    return f


def recount(facts: dict[int, Facts], fdef, stores: dict[str, int], loads: dict[str, int]) -> None:
    """Bring ``facts`` (``analyze``'s) up to date, in place, after statements of ``fdef``'s own
    scope changed in a way that only changed its counts, by ``stores`` and ``loads`` (name ->
    change): no function, declaration or ``return`` was added or removed. The records of
    ``fdef`` and of the functions around it are derived again, as ``analyze`` derives them; no
    statement is visited. (Simplify's forward substitution removes a temporary this way, round
    after round: analysing the whole tree again for it was most of Simplify's time.)"""
    parent = {id(g): f.fdef for f in facts.values() for g in f.nested}
    old = facts[id(fdef)]
    own = Facts(
        fdef,
        params=old.params,
        stores=dict(old.stores),
        loads=dict(old.loads),
        declared=old.declared,
        nested=old.nested,
        returns=old.returns,
    )
    for counts, change in ((own.stores, stores), (own.loads, loads)):
        for name, c in change.items():
            c += counts.get(name, 0)
            if c < 0:  # pragma: no cover - a caller's mistake
                raise AssertionError(f"negative count of {name!r}")
            if c:
                counts[name] = c
            else:
                counts.pop(name, None)
    own.local = (own.params | set(own.stores)) - own.declared
    while True:
        facts[id(fdef)] = _complete(own, [facts[id(g)] for g in own.nested])
        fdef = parent.get(id(fdef))
        if fdef is None:
            return
        own = facts[id(fdef)]  # its own counts are as they were: derived again from them


class Scopes:
    """``analyze`` for a pass that changes a tree between analyses and says which functions it
    changed: a function's facts are kept until it changes, so an analysis only visits the
    statements of functions changed since the last one (and re-derives their enclosing
    functions' facts from their own counts, which are kept too).

    A function *changes* when a statement of its own scope is added, removed or rewritten
    (statements of functions nested in it do not count: report those functions). ``summaries``
    is ``analyze``'s statement cache: only for a caller that drops the entry of every statement
    it changes in place.
    """

    def __init__(self, summaries: dict | None = None):
        self.summaries = summaries
        self._own: dict[int, Facts] = {}  # id(fdef) -> its own scope's facts
        self._full: dict[int, Facts] = {}  # id(fdef) -> its complete facts
        self._parent: dict[int, object] = {}  # id(fdef) -> the function it was last seen in

    def analyze(self, root) -> dict[int, Facts]:
        """What ``analyze(root)`` returns, computed again only where something changed."""
        out: dict[int, Facts] = {}
        self._facts(root, out)
        return out

    def changed(self, fdef) -> None:
        """``fdef``'s own statements changed: forget its facts, and the complete facts of the
        functions around it (they count its free names)."""
        self._own.pop(id(fdef), None)
        self._forget_full(fdef)

    def _forget_full(self, fdef) -> None:
        while fdef is not None:
            self._full.pop(id(fdef), None)
            fdef = self._parent.get(id(fdef))

    def update(self, fdef, blocks, removed=(), added=(), moved=None) -> None:
        """Statements were ``removed`` from statement lists ``blocks`` of ``fdef``'s own scope
        or ``added`` to them, and nothing else there changed: subtract and add their counts
        instead of scanning ``fdef`` again. (The caller keeps ``summaries``, so this is cheap.)

        ``moved``: ``(g, left)``, the statements of the own scope of a function ``g`` (analysed
        here before, unchanged since) were moved into ``fdef``'s, except the statements ``left``
        (``nonlocal`` declarations and a ``return``): an inlining. Their counts are ``g``'s less
        those of ``left``: no statement is scanned again.

        The result is what scanning ``fdef`` again would give, with the statement summaries
        kept: where a block is inside an ``if`` whose summary is kept (from before the change),
        that scan would count the ``if`` by it, so ``fdef`` is scanned again instead.
        """
        own = self._own.get(id(fdef))
        if (
            own is None
            or own.fdef is not fdef
            or self.summaries is None
            or self._behind_summary(fdef, blocks)
        ):
            self.changed(fdef)
            return
        new = Facts(
            fdef,
            params=own.params,
            stores=dict(own.stores),
            loads=dict(own.loads),
            declared=set(own.declared),
            returns=own.returns,
        )
        parts = [(-1, self._part(s)) for s in removed] + [(1, self._part(s)) for s in added]
        if moved is not None:
            g, left = moved
            inner = self._own.get(id(g))
            if inner is None or inner.fdef is not g:
                self.changed(fdef)
                return
            # its declarations are left behind: not ``declared``
            parts.append(
                (1, Facts(g, loads=inner.loads, stores=inner.stores, returns=inner.returns))
            )
            parts += [(-1, self._part(s, declared=False)) for s in left]
        for sign, part in parts:
            if sign < 0 and part.declared:  # a set, not a count: cannot subtract
                self.changed(fdef)
                return
            for counts, more in ((new.loads, part.loads), (new.stores, part.stores)):
                for k, c in more.items():
                    c = counts.get(k, 0) + sign * c
                    if c:
                        counts[k] = c
                    else:
                        del counts[k]
            new.declared |= part.declared
            new.returns += sign * part.returns
        new.nested = sorted(_defs_met(fdef, self.summaries), key=_line)
        new.local = (new.params | set(new.stores)) - new.declared
        self._own[id(fdef)] = new
        self._forget_full(fdef)

    def _behind_summary(self, fdef, blocks) -> bool:
        """Is one of ``blocks`` inside an ``if`` statement whose summary is kept?"""
        wanted = {id(b) for b in blocks}

        def visit(block, behind: bool) -> bool:
            if behind and id(block) in wanted:
                return True
            for s in block:
                if isinstance(s, A.If):
                    kept = self.summaries.get(id(s))
                    inside = behind or (kept is not None and kept[0] is s and kept[1] is not None)
                    if visit(s.body, inside) or visit(s.orelse, inside):
                        return True
            return False

        try:
            return visit(fdef.body, False)
        finally:
            visit = None  # (it calls itself: a reference cycle, which kept the tree alive until a collection)

    def _part(self, stmt, declared=True) -> Facts:
        """What ``stmt`` counts in its scope's facts (without its declarations if not
        ``declared``)."""
        part = _Part()
        _scan(part, [stmt], self.summaries)
        if not declared:
            part.declared = set()
        return part

    def _facts(self, fdef, out) -> Facts:
        """As ``_facts`` above, ``out`` filled in the same order."""
        f = self._full.get(id(fdef))
        if f is not None and f.fdef is fdef:
            for g in f.nested:
                self._facts(g, out)
            out[id(fdef)] = f
            return f
        own = self._own.get(id(fdef))
        if own is None or own.fdef is not fdef:
            own = self._own[id(fdef)] = _own(fdef, self.summaries)
        nested = []
        for g in own.nested:
            self._parent[id(g)] = fdef
            nested.append(self._facts(g, out))
        f = self._full[id(fdef)] = _complete(own, nested)
        out[id(fdef)] = f
        return f


# ----------------------------------------------------------------------------- single questions


def own_nodes(fdef):
    """Nodes of ``fdef``'s body that belong to its own scope (not to nested functions)."""
    for stmt in fdef.body:
        yield from walk_own(stmt)


def walk_own(node):
    """``node`` and what is below it in the same scope, in pre-order: function bodies are not
    entered, and the leaves that hold no names (``ctx``, ``op``, ...) are not visited."""
    stack = [node]
    pop = stack.pop
    children: list = []
    push, extend = children.append, children.extend
    AST, NODES, NODE, CHILDREN = A.AST, A.NODES, A.NODE, A.CHILDREN
    scopes = (A.FunctionDef, A.Lambda)
    while stack:
        n = pop()
        yield n
        cls = n.__class__
        if issubclass(cls, scopes):
            continue  # its name belongs to the enclosing scope; its body does not
        # (``push_children``, written out as in ``_count``: every pass walks scopes this way)
        fields = CHILDREN.get(cls)
        if fields is None:
            fields = A.children_of(cls)
        for name, holds in fields:
            v = getattr(n, name, None)
            if v is None:
                continue
            if holds == NODES:
                extend(v)
            elif holds == NODE:
                if isinstance(v, AST):
                    push(v)
            else:
                for x in v if v.__class__ is list else (v,):
                    if isinstance(x, AST):
                        push(x)
        if children:
            children.reverse()
            stack += children
            children.clear()


def facts(fdef) -> Facts:
    return analyze(fdef)[id(fdef)]


def nested_functions(fdef) -> list:
    """Function definitions directly inside ``fdef``'s scope (in branches too)."""
    return _own(fdef).nested


def declared_nonlocal(fdef) -> set[str]:
    if not nonlocal_anywhere(fdef):
        return set()  # (for speed: a scan of the statements, not of every name)
    return _own(fdef).declared


def own_scope(fdef) -> tuple[Facts, list]:
    """The facts of ``fdef``'s own scope (``_own``'s: its ``local`` names are ``local_names``) and
    the functions defined there in the order its scan met them (from the last statement back,
    before ``nested`` is sorted by line; ``resolve.local_defs``' order): one scan, for a pass
    that asks both of a function (for speed: a scan of a long function's every node, not two)."""
    met: list = []
    return _own(fdef, met=met), met


def own_facts(fdef) -> Facts:
    """The facts of ``fdef``'s own scope alone: the fields up to ``local`` (one scan of it)."""
    return _own(fdef)


def local_names(fdef) -> set[str]:
    """Names local to ``fdef``: parameters, assignment targets, nested def names; not nonlocals.
    (Its own scope decides: nested functions are not visited.)"""
    return _own(fdef).local


def free_names(fdef) -> set[str]:
    """Names ``fdef`` (or anything nested in it) reads or writes but does not bind."""
    return facts(fdef).free


def writes_through(fdef) -> set[str]:
    """Names of enclosing scopes that calling ``fdef`` may assign (via ``nonlocal``, transitively)."""
    if not nonlocal_anywhere(fdef):
        return set()  # (for speed: a scan of the statements, not an analysis of every name)
    return facts(fdef).writes


_BLOCKS = ("body", "orelse", "finalbody", "handlers", "cases")
_BLOCKS_OF: dict = {}  # node class -> the fields of ``_BLOCKS`` it has (``blocks_of``)


def blocks_of(cls) -> tuple:
    """The fields of ``_BLOCKS`` (the statement lists) a node class has, in that order: a sweep of
    statements asks each statement only for these (for speed: most statements have none, and
    five ``getattr`` a statement were most of a sweep of a long function)."""
    out = _BLOCKS_OF.get(cls)
    if out is None:
        out = _BLOCKS_OF[cls] = tuple(f for f in _BLOCKS if f in cls._fields)
    return out


def nonlocal_anywhere(fdef) -> set[str]:
    """The names ``nonlocal`` statements declare in ``fdef`` or a function nested in it. (Only
    statements declare; lambdas and comprehensions hold none, so expressions are not visited.)"""
    out: set[str] = set()
    stack = [fdef]
    fields = _BLOCKS_OF
    while stack:
        s = stack.pop()
        cls = s.__class__
        if cls is A.Nonlocal:
            out.update(s.names)
            continue
        names = fields.get(cls)
        for name in names if names is not None else blocks_of(cls):
            block = getattr(s, name, None)
            if block.__class__ is list:
                stack.extend(block)
    return out


def assignment_counts(fdef) -> dict[str, int]:
    """How many times each name is assigned in ``fdef``'s own scope (nonlocal writes included)."""
    return facts(fdef).assignments


def load_counts(fdef) -> dict[str, int]:
    """How many times each name is read in ``fdef``'s scope, counting reads by nested functions."""
    return facts(fdef).reads


def rename_free(node, mapping: dict[str, str]) -> None:
    """Rename names in ``node`` (a statement list or a node) that refer to an outer binding.

    Nested functions that bind a name themselves keep it: renaming follows Python's scoping.
    (Loops, not a recursion per node, for speed: Simplify's copy propagation renames in a whole
    function body after each sweep. A nested function's body waits, with its own mapping.)
    """
    work = [(node if isinstance(node, list) else [node], mapping)]
    Name, FunctionDef, Nonlocal = A.Name, A.FunctionDef, A.Nonlocal
    while work:
        roots, m = work.pop()
        if not m:
            continue
        stack = list(roots)
        pop, extend = stack.pop, stack.extend
        while stack:
            n = pop()
            cls = n.__class__
            if cls is Name:
                new = m.get(n.id)
                if new is not None:
                    n.id = new
                continue
            if cls is FunctionDef:
                if n.name in m:
                    n.name = m[n.name]
                extend(n.args.defaults)
                extend(d for d in n.args.kw_defaults if d is not None)
                shadow = local_names(n)
                work.append((n.body, {k: v for k, v in m.items() if k not in shadow}))
                continue
            if cls is Nonlocal:
                n.names = [m.get(x, x) for x in n.names]
                continue
            push_children(n, stack)


def statements(block):
    """Every statement of a normalized block, depth first (branches included, not nested defs)."""
    for s in block:
        yield s
        if isinstance(s, A.If):
            yield from statements(s.body)
            yield from statements(s.orelse)
