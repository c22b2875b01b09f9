"""The one module that knows gast: node classes, constructors, parsing and printing.

Passes build and inspect syntax only through this module (``from transforms import astlib as A``),
so the gast-version details -- which fields a constructor needs (``type_params``, ``Constant.kind``,
``type_comment``), how a tree becomes Python source -- live in one file. gast is pinned to
``>=0.6,<0.8`` in pyproject.toml (Tangent died of an unpinned gast: google/tangent#97).

>>> tree = parse("y = x * 2")
>>> to_source(tree).strip()
'y = x * 2'
"""

from __future__ import annotations

import ast as _ast
from collections import deque as _deque

import astor as _astor
import gast as _gast

# Node classes, for isinstance checks and the occasional direct construction.
from gast import (  # noqa: F401  (re-exported)
    AST,
    Add,
    And,
    AnnAssign,
    Assert,
    Assign,
    AsyncFor,
    AsyncFunctionDef,
    AsyncWith,
    Attribute,
    AugAssign,
    Await,
    BinOp,
    BitAnd,
    BitOr,
    BitXor,
    BoolOp,
    Break,
    Call,
    ClassDef,
    Compare,
    Constant,
    Continue,
    Del,
    Delete,
    Dict,
    DictComp,
    Div,
    Eq,
    Expr,
    FloorDiv,
    For,
    FormattedValue,
    FunctionDef,
    GeneratorExp,
    Global,
    Gt,
    GtE,
    If,
    IfExp,
    Import,
    ImportFrom,
    In,
    Invert,
    Is,
    IsNot,
    JoinedStr,
    Lambda,
    List,
    ListComp,
    Load,
    LShift,
    Lt,
    LtE,
    Match,
    MatMult,
    Mod,
    Module,
    Mult,
    Name,
    NamedExpr,
    Nonlocal,
    Not,
    NotEq,
    NotIn,
    Or,
    Param,
    Pass,
    Pow,
    Raise,
    Return,
    RShift,
    Set,
    SetComp,
    Slice,
    Starred,
    Store,
    Sub,
    Subscript,
    Try,
    Tuple,
    UAdd,
    UnaryOp,
    USub,
    While,
    With,
    Yield,
    YieldFrom,
    arguments,
    comprehension,
    keyword,
    stmt,
    withitem,
)

try:  # Python 3.11+
    from gast import TryStar  # noqa: F401
except ImportError:  # pragma: no cover
    TryStar = Try

LOCATION = ("lineno", "col_offset", "end_lineno", "end_col_offset")


# --------------------------------------------------------------------------- parsing and printing


def parse(source: str) -> Module:
    return _gast.parse(source)


def to_ast(node: AST) -> _ast.AST:
    """gast -> the running interpreter's ``ast`` (for compile and unparse)."""
    return _gast.gast_to_ast(node)


def from_ast(node: _ast.AST) -> AST:
    return _gast.ast_to_gast(node)


def _one_line(parts) -> str:
    return "".join(parts)


def to_source(node: AST) -> str:
    """Python source for a statement list, a statement or an expression (no comments).

    Lines are never wrapped here: formatting for display is black's job.
    """
    if isinstance(node, list):
        node = Module(body=node, type_ignores=[])
    py = to_ast(node)
    if isinstance(py, _ast.expr):
        py = _ast.Expr(value=py)
    return _astor.to_source(py, pretty_source=_one_line)


def expr_source(node: AST) -> str:
    return to_source(node).strip()


# --------------------------------------------------------------------------- constructors


def name(id: str, ctx: str = "load") -> Name:
    ctx_node = {"load": Load, "store": Store, "param": Param}[ctx]()
    return Name(id=id, ctx=ctx_node, annotation=None, type_comment=None)


def store(id: str) -> Name:
    return name(id, "store")


def const(value) -> Constant:
    return Constant(value=value, kind=None)


def assign(target, value: AST) -> Assign:
    if isinstance(target, str):
        target = store(target)
    return Assign(targets=[target], value=value, type_comment=None)


def tuple_(elts, ctx: str = "load") -> Tuple:
    ctx_node = {"load": Load, "store": Store}[ctx]()
    return Tuple(elts=list(elts), ctx=ctx_node)


def call(func, args=(), keywords=None) -> Call:
    if isinstance(func, str):
        func = name(func)
    kws = [keyword(arg=k, value=v) for k, v in (keywords or {}).items()]
    return Call(func=func, args=list(args), keywords=kws)


def attr(value, attr_name: str) -> Attribute:
    if isinstance(value, str):
        value = name(value)
    return Attribute(value=value, attr=attr_name, ctx=Load())


def expr_stmt(value: AST) -> Expr:
    return Expr(value=value)


def return_(value) -> Return:
    return Return(value=value)


def if_(test, body, orelse=()) -> If:
    return If(test=test, body=list(body), orelse=list(orelse))


def nonlocal_(names) -> Nonlocal:
    return Nonlocal(names=sorted(names))


def params(names, defaults=()) -> arguments:
    return arguments(
        args=[name(n, "param") for n in names],
        posonlyargs=[],
        vararg=None,
        kwonlyargs=[],
        kw_defaults=[],
        kwarg=None,
        defaults=list(defaults),
    )


def function(fname: str, args: arguments, body, decorators=()) -> FunctionDef:
    return FunctionDef(
        name=fname,
        args=args,
        body=list(body),
        decorator_list=list(decorators),
        returns=None,
        type_comment=None,
        type_params=[],
    )


def with_(context_expr, var: str | None, body) -> With:
    item = withitem(context_expr=context_expr, optional_vars=None if var is None else store(var))
    return With(items=[item], body=list(body), type_comment=None)


def binop(left, op, right) -> BinOp:
    return BinOp(left=left, op=op, right=right)


def module(body) -> Module:
    return Module(body=list(body), type_ignores=[])


# --------------------------------------------------------------------------- traversal
#
# ``ast.walk`` and ``ast.iter_child_nodes`` go through ``ast.iter_fields``, a generator with a
# try/except per field; the passes walk trees often enough (first-call latency) that these
# plain loops over ``_fields`` are worth having. They visit the same nodes in the same order.


def iter_child_nodes(node: AST) -> list:
    """The direct children of ``node`` in field order, as ``ast.iter_child_nodes`` yields them."""
    out = []
    for f in node._fields:
        v = getattr(node, f, None)
        if v is None:
            continue
        if isinstance(v, list):
            out.extend(x for x in v if isinstance(x, AST))
        elif isinstance(v, AST):
            out.append(v)
    return out


def walk(node: AST):
    """``node`` and every node below it, breadth first, in the order of ``ast.walk`` (a node's
    children are queued before the node is yielded, so the caller may change them)."""
    todo = _deque([node])
    pop, push = todo.popleft, todo.append
    while todo:
        node = pop()
        for f in node._fields:
            v = getattr(node, f, None)
            if v is None:
                continue
            if isinstance(v, list):
                for x in v:
                    if isinstance(x, AST):
                        push(x)
            elif isinstance(v, AST):
                push(v)
        yield node


_VISIT: dict = {}  # node class -> "visit_" + its name


class NodeVisitor(_ast.NodeVisitor):
    """``ast.NodeVisitor``, its traversal as the plain loops above: the same visits."""

    def visit(self, node):
        cls = node.__class__
        name = _VISIT.get(cls)
        if name is None:
            name = _VISIT[cls] = "visit_" + cls.__name__
        visitor = getattr(self, name, None)
        return self.generic_visit(node) if visitor is None else visitor(node)

    def visit_Constant(self, node):  # (ast's looks for the visit_Num of Python 3.7 first)
        return self.generic_visit(node)

    def generic_visit(self, node):
        for f in node._fields:
            v = getattr(node, f, None)
            if isinstance(v, list):
                for x in v:
                    if isinstance(x, AST):
                        self.visit(x)
            elif isinstance(v, AST):
                self.visit(v)


class NodeTransformer(NodeVisitor):
    """``ast.NodeTransformer`` (a visit's result replaces the node; ``None`` removes it, a list
    is spliced in), its traversal as the plain loops above."""

    def generic_visit(self, node):
        for f in node._fields:
            old = getattr(node, f, None)
            if isinstance(old, list):
                new = []
                for x in old:
                    if isinstance(x, AST):
                        x = self.visit(x)
                        if x is None:
                            continue
                        if not isinstance(x, AST):
                            new.extend(x)
                            continue
                    new.append(x)
                old[:] = new
            elif isinstance(old, AST):
                x = self.visit(old)
                if x is None:
                    delattr(node, f)
                else:
                    setattr(node, f, x)
        return node


# --------------------------------------------------------------------------- helpers


def copy_location(new: AST, old: AST) -> AST:
    """Give ``new`` and its children without a location the source location of ``old``.

    A child that has a location keeps it, and so does everything below it.
    """
    if not hasattr(old, "lineno"):
        return new
    where = [(a, getattr(old, a)) for a in LOCATION if hasattr(old, a)]
    # For speed (the lowerings locate every node they make): the loop reads and writes the
    # instance dict, where a node keeps its location (a class only defaults ``end_lineno`` and
    # ``end_col_offset`` to None), and inlines ``iter_child_nodes``.
    stack = [new]
    pop, push = stack.pop, stack.append
    while stack:
        node = pop()
        d = node.__dict__
        if d.get("lineno") is not None and node is not new:
            continue
        for a, v in where:
            if d.get(a) is None:
                d[a] = v
        for f in node._fields:
            v = getattr(node, f, None)
            if v is None:
                continue
            if isinstance(v, list):
                for x in v:
                    if isinstance(x, AST):
                        push(x)
            elif isinstance(v, AST):
                push(v)
    return new


def locate(node: AST, origin: AST) -> AST:
    """``node`` at ``origin``'s place: its location, and ``origin``'s line even where it had one
    (a statement generated for a user's line is shown under that line)."""
    copy_location(node, origin)
    if hasattr(origin, "lineno"):
        node.lineno = origin.lineno
    return node


def deepcopy(node):
    """A deep copy of a tree (or a list of them) that keeps annotations (they live in the
    ``_cpsad`` attribute): nodes are copied, the values they hold -- names, constants, the
    objects annotations refer to -- are shared, which is what ``copy.deepcopy`` would spend most
    of its time copying for nothing."""
    if isinstance(node, list):
        return [deepcopy(x) for x in node]
    if not isinstance(node, AST):
        return node
    new = node.__class__.__new__(node.__class__)
    d = new.__dict__
    for k, v in node.__dict__.items():
        if isinstance(v, AST):
            d[k] = deepcopy(v)
        elif isinstance(v, list):
            d[k] = [deepcopy(x) if isinstance(x, AST) else x for x in v]
        elif k == "_cpsad":
            d[k] = dict(v)  # annotations: a dict of their own, the same facts
        else:
            d[k] = v
    return new


def arg_names(args: arguments) -> list[str]:
    """Every parameter name, in signature order."""
    out = [a.id for a in args.posonlyargs] + [a.id for a in args.args]
    if args.vararg is not None:
        out.append(args.vararg.id)
    out += [a.id for a in args.kwonlyargs]
    if args.kwarg is not None:
        out.append(args.kwarg.id)
    return out


def is_name(node, id: str | None = None) -> bool:
    return isinstance(node, Name) and (id is None or node.id == id)


def is_atom(node) -> bool:
    """A name or a constant: what A-normal form allows as an operand."""
    return isinstance(node, (Name, Constant))


def dotted(node) -> str | None:
    """``np.linalg.norm`` for an Attribute chain rooted at a Name, else None."""
    parts = []
    while isinstance(node, Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, Name):
        return None
    parts.append(node.id)
    return ".".join(reversed(parts))


def names_in(node) -> set[str]:
    """Every Name id read or written anywhere below ``node`` (including nested functions)."""
    if isinstance(node, list):
        out: set[str] = set()
        for n in node:
            out |= names_in(n)
        return out
    return {n.id for n in walk(node) if isinstance(n, Name)}


def replace(root, old, new) -> None:
    """Put ``new`` where ``old`` is, below ``root`` (the first place it occurs)."""
    for parent in walk(root):
        for field in parent._fields:
            value = getattr(parent, field, None)
            if value is old:
                setattr(parent, field, new)
                return
            if isinstance(value, list):
                for i, v in enumerate(value):
                    if v is old:
                        value[i] = new
                        return
