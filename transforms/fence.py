"""After Fence, the function uses only syntax cpsad supports; anything else was a TransformError.

The fence is the only place that says no to syntax, so no later pass meets a construct it does
not handle. Each unsupported construct has one entry in ``UNSUPPORTED``: what it is and what to
write instead. The error points at the construct in the user's file, with a caret.

>>> def f(x):
...     global y
...     return x
>>> from transforms.unit import Unit
>>> from transforms.parse import Parse
>>> u = Unit(f, ("x",), ctx=None); Parse().run(u)
>>> try: Fence().run(u)
... except SyntaxError as e: print(e.message)
`global` is not supported
"""

from __future__ import annotations

from transforms import astlib as A
from transforms.unit import Unit

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
        "`import` inside a differentiated function is not supported",
        "import at module level",
    ),
    A.ImportFrom: (
        "`from ... import` inside a differentiated function is not supported",
        "import at module level",
    ),
    A.NamedExpr: ("the walrus operator `:=` is not supported", "assign on a line of its own"),
    A.Match: ("`match` is not supported", "use `if` / `elif`"),
    A.Delete: ("`del` is not supported", "leave the name bound, or rebind it"),
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
        for stmt in fdef.body:
            for node in A.walk(stmt):
                entry = self.unsupported.get(type(node))
                if entry is not None:
                    raise unit.error(entry[0], node, entry[1])
                if isinstance(node, A.FunctionDef) and node.decorator_list:
                    raise unit.error(
                        "a decorated function inside a differentiated function is not supported",
                        node.decorator_list[0],
                        "define it without the decorator, or at module level",
                    )
                self._check_targets(unit, node)

    def _check_targets(self, unit: Unit, node) -> None:
        targets = []
        if isinstance(node, A.Assign):
            targets = node.targets
        elif isinstance(node, (A.AugAssign, A.AnnAssign)):
            targets = [node.target]
        for t in targets:
            for sub in A.walk(t):
                if isinstance(sub, A.Starred):
                    raise unit.error(
                        "starred assignment targets (`a, *rest = ...`) are not supported",
                        sub,
                        "index the sequence instead: `a = xs[0]; rest = xs[1:]`",
                    )
        if isinstance(node, A.Call):
            for kw in node.keywords:
                if kw.arg is None:
                    raise unit.error(
                        "`**kwargs` in a call is not supported",
                        kw.value,
                        "pass the keyword arguments by name",
                    )

    @staticmethod
    def check(unit: Unit) -> None:
        for node in A.walk(unit.tree):
            assert type(node) not in UNSUPPORTED or node is unit.tree
