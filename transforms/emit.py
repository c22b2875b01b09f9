"""After Emit, ``unit.text`` is the backpropagator as a Python module, with the user's lines as comments.

The module says where it came from, imports what it names (numpy, the runtime helpers, the rules
it calls by name), and defines ``f_bp``. Each block of statements is preceded by the line of the
user's source it came from, so the backward pass reads next to the forward one. The text is what
gets compiled -- under a real filename -- so tracebacks and debuggers show these lines;
``unit.line_map`` maps each line of it back to the user's file. The layout (blank lines around
nested functions, one statement a line) is black's, so ``cpsad show`` can format it for display
without moving lines.

``render`` prints any stage's program the same way: every stage is valid Python.
"""

from __future__ import annotations

import os
import types

from . import anno
from . import astlib as A
from .naming import own_name, own_qualname
from .scoping import analyze, used_and_bound
from .unit import Unit

INDENT = "    "


class Renderer:
    def __init__(self, unit: Unit | None, comments: bool = True):
        self.unit = unit
        self.source = unit.source if unit is not None else None
        self.comments = comments and self.source is not None
        self.lines: list[str] = []
        self.origin: list[int | None] = []  # user line of each emitted line
        self.skip_line: int | None = None

    def add(self, text: str, indent: int, user_line: int | None = None) -> None:
        self.lines.append(INDENT * indent + text if text else "")
        self.origin.append(user_line)

    def function(self, fdef, indent: int = 0) -> None:
        self.skip_line = fdef.lineno if self.skip_line is None else self.skip_line
        for d in fdef.decorator_list:
            self.add("@" + A.expr_source(d), indent)
        header = A.to_source(A.function(fdef.name, fdef.args, [A.Pass()])).splitlines()[0]
        self.add(header, indent, fdef.lineno)
        self.block(fdef.body, indent + 1, function_body=True)

    def block(self, stmts, indent: int, function_body: bool = False, line=None) -> None:
        last_comment = line  # (the line of the statement the block is part of, where its own)
        for i, s in enumerate(stmts):
            line = getattr(s, "lineno", None)
            if isinstance(s, A.FunctionDef):
                # black's layout: a blank line around a nested def, except first in a function
                if not (i == 0 and function_body) and self.lines and self.lines[-1] != "":
                    self.add("", 0)
                self.function(s, indent)
                if i + 1 < len(stmts):
                    self.add("", 0)
                last_comment = None
                continue
            if (
                self.comments
                and line
                and line != last_comment
                and line != self.skip_line
                and not isinstance(s, (A.Nonlocal, A.Pass))
                and not anno.getanno(s, anno.BOOKKEEPING)
            ):
                self.comment(line, s, indent)
                last_comment = line
            if isinstance(s, A.If):
                self.if_(s, indent)
            elif isinstance(s, (A.While, A.With)):  # (a shift is a With)
                self.add(A.header_source(s), indent, line)
                self.block(s.body, indent + 1)
                last_comment = line
            else:
                for text in A.to_source(s).rstrip("\n").splitlines():
                    self.add(text, indent, line)

    def if_(self, s, indent: int, keyword: str = "if") -> None:
        self.add(("el" if keyword == "elif" else "") + A.header_source(s), indent, s.lineno)
        # a skip guard's body is the rest of its line's adjoint code: no second comment
        self.block(s.body, indent + 1, line=s.lineno if anno.getanno(s, anno.GUARD) else None)
        if len(s.orelse) == 1 and isinstance(s.orelse[0], A.If):
            self.if_(s.orelse[0], indent, "elif")
        elif s.orelse:
            self.add("else:", indent, s.lineno)
            self.block(s.orelse, indent + 1)

    def comment(self, line: int, stmt, indent: int) -> None:
        text = self.source.line(line).strip()
        if not text:
            return
        self.add("# " + text, indent)

    def text(self) -> str:
        return "\n".join(self.lines) + "\n"


def render(tree, unit: Unit | None = None, comments: bool = True) -> str:
    """A stage's program as Python source (user lines as comments when the unit has a source)."""
    r = Renderer(unit, comments)
    if isinstance(tree, A.FunctionDef):
        r.function(tree)
    else:
        r.block(tree.body if isinstance(tree, A.Module) else tree, 0)
    return r.text()


def describe(obj) -> str:
    mod = getattr(obj, "__module__", None)
    qn = getattr(obj, "__qualname__", None) or getattr(obj, "__name__", None)
    return f"{mod}.{qn}" if mod and qn else repr(obj)


def _user_globals(unit: Unit, taken) -> dict:
    """The globals of the user's module the emitted code uses (documented as imports; the
    compiled code reads them live from the module)."""
    g = unit.fn.__globals__
    # (for speed: a walk of the names finds the free ones where no global of the user's module
    # is also bound somewhere in the tree -- the scopes decide only there)
    names = used_and_bound(unit.tree)
    if names is None or any(n in g for n in names[0] & names[1]):
        free = analyze(unit.tree)[id(unit.tree)].free
    else:
        free = names[0] - names[1]
    out = {}
    closure = set(unit.fn.__code__.co_freevars)
    for n in sorted(free - set(taken) - set(unit.callees) - closure - {unit.bp_name}):
        if n in g:
            out[n] = _UserGlobal(g[n]) if not isinstance(g[n], types.ModuleType) else g[n]
    return out


class _UserGlobal:
    """A non-module global of the user's module: imported from that module in the text."""

    def __init__(self, obj):
        self.obj = obj


def import_line(name: str, obj, user_module: str = "") -> str:
    """How the emitted module's text says where ``name`` comes from."""
    if isinstance(obj, _UserGlobal):
        return f"from {user_module} import {name}"
    if isinstance(obj, types.ModuleType):
        mod = obj.__name__
        if "." in mod:
            parent, leaf = mod.rsplit(".", 1)
            return f"from {parent} import {leaf}" + ("" if leaf == name else f" as {name}")
        return f"import {mod}" + ("" if mod == name else f" as {name}")
    mod = getattr(obj, "__module__", None)
    qn = getattr(obj, "__qualname__", None)
    if mod and qn and "." not in qn and "<" not in qn:
        return f"from {mod} import {qn}" + ("" if qn == name else f" as {name}")
    return f"# {name} = {describe(obj)}"


class Emit:
    name = "emit"
    invariant = "the backpropagator as Python source, the user's lines as comments"

    def run(self, unit: Unit) -> None:
        fn = unit.fn
        src = unit.source
        wrt = ", ".join(unit.active) or "nothing"
        where = f"{_shown_path(src.filename, src)}:{src.firstlineno}" if src else "?"
        params = ", ".join(A.arg_names(unit.tree.args))
        if unit.staged:
            header = self.staged_header(unit, where, wrt)
        elif unit.mode == "forward":
            dots = ", ".join(A.arg_names(unit.tree.args)[: len(unit.active)]) or "nothing"
            header = [
                f"# Generated by cpsad from {where}: the tangent function (forward mode) of "
                f"`{own_qualname(fn)}`",
                f"# with respect to {wrt}. {unit.bp_name}({params}) runs `{own_name(fn)}` and "
                "returns its result",
                f"# and the result's tangent: its derivative along ({dots}). Do not edit.",
            ]
        else:
            header = self.reverse_header(unit, where, wrt, params)
        names = {n: o for n, o in unit.injected.items() if n not in unit.apart}  # (said below)
        names.update(_user_globals(unit, names))
        imports = _merge_imports(import_line(n, names[n], fn.__module__) for n in sorted(names))
        callees = []
        for name in sorted(unit.callees):
            c = unit.callees[name]
            what = "tangent function" if c.mode == "forward" else "backpropagator"
            callees.append(
                f"# {name}: the {what} of {describe(c.fn)} with respect to {', '.join(c.active)}"
            )
        for name, (path, _) in sorted(unit.apart.items()):  # (its file: which code it is)
            callees.append(f"# {name}: compiled on its own, from {os.path.basename(path)}")
        r = Renderer(unit, comments=True)
        for line in header + imports + ([""] if imports and callees else []) + callees:
            r.add(line, 0)
        r.add("", 0)
        r.add("", 0)
        r.function(unit.tree)
        unit.text = r.text()
        unit.line_map = {i + 1: u for i, u in enumerate(r.origin) if u is not None}

    @staticmethod
    def staged_header(unit, where, wrt) -> list[str]:
        fn = unit.fn
        params = ", ".join(A.arg_names(unit.tree.args))
        if unit.mode == "forward":
            return [
                f"# Generated by cpsad from {where}: the tangent function of "
                f"`{own_qualname(fn)}` with",
                f"# respect to {wrt}, flattened for Numba. {unit.bp_name}({params}) runs",
                f"# `{own_name(fn)}` and returns (its result, the result's tangent). Do not edit.",
            ]
        return [
            f"# Generated by cpsad from {where}: the backpropagator of `{own_qualname(fn)}` with",
            f"# respect to {wrt}, flattened for Numba. {unit.bp_name}({params}) runs",
            f"# `{own_name(fn)}` and returns (its result, the adjoints of {wrt}) for the adjoint",
            "# `seed` of the result. Do not edit.",
        ]

    @staticmethod
    def reverse_header(unit, where, wrt, params) -> list[str]:
        fn = unit.fn
        return [
            f"# Generated by cpsad from {where}: the backpropagator of `{own_qualname(fn)}`",
            f"# with respect to {wrt}. {unit.bp_name}({params}) runs `{own_name(fn)}`, calls",
            f"# {unit.cont_name}(result) -- the rest of the program, which returns the adjoint of the",
            "# result -- then returns the adjoints of "
            + (wrt if len(unit.active) < 2 else "(" + wrt + ")")
            + ". Do not edit.",
        ]


def _shown_path(path: str, source=None) -> str:
    """The source file as the user would name it: relative to the working directory if inside it;
    for emitted code transformed again, its file name (the cache folder is the machine's)."""
    if source is not None and source.line(1).startswith("# Generated by cpsad"):
        return os.path.basename(path)
    try:
        rel = os.path.relpath(path)
    except ValueError:  # another drive
        return path
    return path if rel.startswith("..") else rel


def _merge_imports(lines) -> list[str]:
    """``from m import a`` and ``from m import b`` as one line; plain imports first."""
    plain, froms, other = [], {}, []
    for line in lines:
        if line.startswith("import "):
            plain.append(line)
        elif line.startswith("from "):
            mod, names = line[5:].split(" import ", 1)
            froms.setdefault(mod, []).append(names)
        else:
            other.append(line)
    out = sorted(plain)
    for mod in sorted(froms):
        out.append(f"from {mod} import {', '.join(sorted(froms[mod]))}")
    return out + sorted(other)
