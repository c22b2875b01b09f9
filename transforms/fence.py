"""After Fence, the function uses only syntax cpsad supports; anything else was a TransformError.

The fence is the only place that says no to syntax, so no later pass meets a construct it does
not handle. Each unsupported construct has one entry in ``UNSUPPORTED``: what it is and what to
write instead. The error points at the construct in the user's file, with a caret.

>>> def f(x):
...     global y
...     return x
>>> from cpsad.transforms.unit import Unit
>>> from cpsad.transforms.parse import Parse
>>> u = Unit(f, ("x",), ctx=None); Parse().run(u)
>>> try: Fence().run(u)
... except SyntaxError as e: print(e.message)
`global` is not supported
"""

from __future__ import annotations

from . import astlib as A
from .scoping import assignment_counts, own_nodes
from .unit import Unit

# node class -> (what is not supported, what to write instead)
UNSUPPORTED: dict[type, tuple[str, str]] = {
    A.AsyncFunctionDef: ("async functions are not supported", "differentiate a plain `def`"),
    A.Await: ("`await` is not supported", "differentiate a plain, synchronous function"),
    A.AsyncFor: ("`async for` is not supported", "use a plain `for` loop"),
    A.AsyncWith: ("`async with` is not supported", "move it outside the differentiated function"),
    A.Yield: (
        "generators (`yield`) are not supported",
        "build and return a list, or call a function per item",
    ),
    A.YieldFrom: (
        "generators (`yield from`) are not supported",
        "build and return a list instead",
    ),
    A.Global: (
        "`global` is not supported",
        "pass the value in as an argument and return the new value",
    ),
    A.Try: (
        "`try` is not supported",
        "move the try/except outside the differentiated function, or check the condition with `if`",
    ),
    A.TryStar: (
        "`try` is not supported",
        "move the try/except outside the differentiated function",
    ),
    A.With: (
        "`with` is not supported",
        "move the `with` block outside the differentiated function",
    ),
    A.ClassDef: (
        "a class defined inside a differentiated function is not supported",
        "define the class at module level",
    ),
    A.Import: (
        "`import` inside a differentiated function is supported only as a statement of its "
        "own at its top level -- not in a branch, a loop or a nested function -- binding "
        "names the function does not assign otherwise",
        "import at module level, or at the top of the function",
    ),
    A.ImportFrom: (
        "`from ... import` inside a differentiated function is supported only as a statement "
        "of its own at its top level -- not in a branch, a loop or a nested function -- binding "
        "names the function does not assign otherwise",
        "import at module level, or at the top of the function",
    ),
    A.NamedExpr: (
        "the walrus operator `:=` is supported in a statement's expressions, not in a loop's "
        "header (`while` condition, `for` iterable), a comprehension, a lambda, an `assert`, "
        "a `raise`, an f-string, a default or a decorator",
        "assign on a line of its own",
    ),
    A.Match: ("`match` is not supported", "use `if` / `elif`"),
    A.SetComp: ("set comprehensions are not supported", "build the set outside the function"),
}


class Fence:
    name = "fence"
    invariant = "only supported syntax remains"

    def __init__(self, unsupported: dict | None = None):
        self.unsupported = UNSUPPORTED if unsupported is None else unsupported

    def run(self, unit: Unit) -> None:
        fdef = unit.tree
        if isinstance(fdef, A.AsyncFunctionDef):
            msg, hint = self.unsupported[A.AsyncFunctionDef]
            raise unit.error(msg, fdef, hint)
        deletes = False
        assignments = (A.Assign, A.AugAssign, A.AnnAssign)
        # (for speed: the walk leaves out contexts and operators, unless one is refused here)
        walk = (
            A.walk if any(issubclass(c, A._OPERATORS) for c in self.unsupported) else A.walk_nodes
        )
        allowed = None  # the imports and walruses supported (found at the first one met)
        for stmt in fdef.body:
            for node in walk(stmt):
                cls = type(node)
                entry = self.unsupported.get(cls)
                if entry is not None:
                    if allowed is None:
                        allowed = {id(n) for n in _top_level_imports(fdef)}
                        allowed |= {id(n) for n in _plain_walruses(fdef)}
                    if id(node) not in allowed:
                        raise unit.error(entry[0], node, entry[1])
                if cls in assignments:
                    self._check_targets(unit, node)
                deletes = deletes or cls is A.Delete
        if deletes:  # (for speed: known from this walk, not from another)
            self._check_deletes(unit, fdef)

    @staticmethod
    def _check_deletes(unit: Unit, fdef) -> None:
        """``del x`` is accepted where it changes nothing but when ``x``'s value is freed (Desugar
        drops it; the emitted code frees every array after its last use anyway, with ``del``
        statements of its own): on a name, outside loops, and ``x`` not mentioned after it."""
        for f in (n for n in A.walk(fdef) if isinstance(n, A.FunctionDef)):
            Fence._check_deletes_in(unit, f)

    @staticmethod
    def _check_deletes_in(unit: Unit, fdef) -> None:
        """The ``del`` statements of ``fdef``'s own scope; the names they delete are its locals,
        so only its own lines (and its closures') can mention them."""
        deletes = [n for n in own_nodes(fdef) if isinstance(n, A.Delete)]
        if not deletes:
            return
        in_loops = {
            id(d)
            for loop in A.walk(fdef)
            if isinstance(loop, (A.For, A.While))
            for d in A.walk(loop)
            if isinstance(d, A.Delete)
        }
        names = [n for n in A.walk(fdef) if isinstance(n, A.Name)]
        for d in deletes:
            targets = [x for t in d.targets for x in (t.elts if _is_tuple(t) else [t])]
            for t in targets:
                if not isinstance(t, A.Name):
                    raise unit.error(
                        "`del` of an item, a slice or an attribute is not supported",
                        t,
                        "build a new container without it",
                    )
            if id(d) in in_loops:
                raise unit.error(
                    "`del` inside a loop is not supported",
                    d,
                    "leave the name bound: cpsad frees each array after its last use",
                )
            where = (d.lineno, d.col_offset)
            for t in targets:
                later = [
                    n
                    for n in names
                    if n.id == t.id and n is not t and (n.lineno, n.col_offset) > where
                ]
                if later:
                    raise unit.error(
                        f"`del {t.id}` and a later use of `{t.id}` are not supported",
                        later[0],
                        "leave the name bound: cpsad frees each array after its last use",
                    )

    def _check_targets(self, unit: Unit, node) -> None:
        targets = []  # (``a, *rest = ...`` is supported: Normalize unpacks through ``list``)
        if isinstance(node, (A.AugAssign, A.AnnAssign)):
            targets = [node.target]
        for t in targets:
            for sub in A.walk(t):
                if isinstance(sub, A.Starred):
                    raise unit.error(
                        "starred assignment targets (`a, *rest = ...`) are not supported",
                        sub,
                        "index the sequence instead: `a = xs[0]; rest = xs[1:]`",
                    )

    @staticmethod
    def check(unit: Unit) -> None:
        for node in A.walk(unit.tree):
            assert type(node) not in UNSUPPORTED or node is unit.tree


def _is_tuple(t) -> bool:
    """``del (a, b)``: black writes a long ``del`` so."""
    return isinstance(t, (A.Tuple, A.List))


def imported_names(stmt) -> list[str]:
    """The names an ``import`` or ``from ... import`` statement binds."""
    if isinstance(stmt, A.Import):
        return [a.asname or a.name.split(".")[0] for a in stmt.names]
    return [a.asname or a.name for a in stmt.names]


def _top_level_imports(fdef) -> list:
    """The imports of the function's top level that bind names nothing else in it binds: the
    names are bound when it is transformed (Desugar), as globals of its own."""
    tops = [s for s in fdef.body if isinstance(s, (A.Import, A.ImportFrom))]
    if not tops:
        return []
    names = [n for s in tops for n in imported_names(s)]
    bound = set(assignment_counts(fdef)) | set(A.arg_names(fdef.args))
    bound |= {n.name for n in A.walk(fdef) if isinstance(n, A.FunctionDef) and n is not fdef}
    if len(set(names)) != len(names) or bound & set(names) or "*" in names:
        return []
    return tops


# where ``:=`` binds a name Python evaluates elsewhere or not at all (a comprehension's own
# scope, a loop's condition each time round) -- or inside what Normalize leaves as written
_WALRUS_REFUSED_IN = (
    A.ListComp,
    A.SetComp,
    A.DictComp,
    A.GeneratorExp,
    A.Lambda,
    A.Assert,
    A.Raise,
    A.JoinedStr,
)


def _plain_walruses(fdef) -> list:
    """The ``(y := e)`` Normalize writes as ``y = e`` where Python evaluates it (A-normal form
    keeps the order, and only the branch of an ``and``, ``or`` or ``a if c else b`` Python takes
    runs): those in a statement's expressions, outside ``_WALRUS_REFUSED_IN``, a loop's header,
    a default and a decorator."""
    out: list = []
    stack = [(s, False) for s in fdef.body]
    while stack:
        node, refused = stack.pop()
        if isinstance(node, A.NamedExpr) and not refused:
            out.append(node)
        if isinstance(node, A.FunctionDef):
            heads = [*node.decorator_list, *node.args.defaults]
            heads += [d for d in node.args.kw_defaults if d is not None]
            stack += [(h, True) for h in heads] + [(s, False) for s in node.body]
            continue
        if isinstance(node, (A.While, A.For)):  # (the loop's header: Desugar moves it)
            heads = [node.test] if isinstance(node, A.While) else [node.target, node.iter]
            stack += [(h, True) for h in heads]
            stack += [(s, refused) for s in node.body + node.orelse]
            continue
        inner = refused or isinstance(node, _WALRUS_REFUSED_IN)
        stack += [(c, inner) for c in A.iter_child_nodes(node)]
    return out
