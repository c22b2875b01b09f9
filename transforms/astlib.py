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
import copy as _copy
import math as _math
import numbers as _numbers
import sys as _sys
import types as _types
import typing as _typing
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
    return from_ast(_ast.parse(source))


def to_ast(node: AST) -> _ast.AST:
    """gast -> the running interpreter's ``ast`` (for printing): the tree ``gast.gast_to_ast``
    makes, node for node, field for field, location for location (``ast.dump`` with attributes
    is the same; only a context or an operator node is shared between places).

    For speed (Emit prints every statement through it): gast's converter is a NodeTransformer that
    looks its visit method up by name and builds each node's keyword dict through ``hasattr``;
    here each gast class gets its converter once, from ``_TO_AST``. The special cases are gast's
    for Python 3.8-3.11 (the interpreters that have no ``type_params``): a ``Name`` in a
    signature is an ``arg``, ``Name`` and ``Assign`` drop gast's extra fields, a handler's name
    is a string.
    """
    if _FAST_TO_AST:
        return _to_ast(node)
    return _gast.gast_to_ast(node)


# gast's special cases below are those of gast 0.7 for Python 3.8-3.11 (checked against it node
# for node); with another gast or Python, gast converts
_GAST_07 = getattr(_gast, "__version__", "").startswith("0.7.")
_FAST_TO_AST = _GAST_07 and (3, 8) <= _sys.version_info[:2] < (3, 12)
_NO_VALUE = object()
_TO_AST: dict = {}  # gast class -> its converter


def _to_ast(v):
    conv = _TO_AST.get(v.__class__)
    if conv is not None:
        return conv(v)
    if isinstance(v, list):
        return [_to_ast(x) for x in v]
    if not isinstance(v, AST):
        return v
    conv = _TO_AST[v.__class__] = _converter(v.__class__)
    return conv(v)


def _converter(cls):
    py = getattr(_ast, cls.__name__, None)
    if py is None:  # not part of the running interpreter's ast
        return lambda node: None
    special = _SPECIAL_TO_AST.get(cls.__name__)
    if special is not None:
        return special
    if not cls._fields and not cls._attributes:
        # a context or an operator (``Load``, ``Add``): one node serves every place, as in the
        # trees ``ast.parse`` makes (nothing changes a printed tree)
        one = py()
        return lambda node: one
    return _generic_to_ast(cls, py)


def _generic_to_ast(cls, py):
    """gast's generic conversion: the fields the node has, then its location attributes.

    The new node's fields are written to its instance dict, where ``py(**fields)`` would put
    them (the interpreters ``_FAST_TO_AST`` admits fill in no defaults), without the keyword
    dict. A gast node keeps its fields in its instance dict too (its class has no defaults).
    """
    fields, attributes = cls._fields, cls._attributes
    new_node, get = py.__new__, _TO_AST.get

    def convert(node):
        d = node.__dict__
        new = new_node(py)
        nd = new.__dict__
        for f in fields:
            v = d.get(f, _NO_VALUE)
            if v is not _NO_VALUE:
                conv = get(v.__class__)
                nd[f] = _to_ast(v) if conv is None else conv(v)
        for a in attributes:
            v = getattr(node, a, _NO_VALUE)
            if v is not _NO_VALUE:
                nd[a] = v
        return new

    return convert


def _locate_as(new, old):
    """``ast.copy_location(new, old)`` for two nodes with the usual four location attributes:
    the start where ``old`` has one that is not None, the end wherever ``old`` has one."""
    nd = new.__dict__
    v = getattr(old, "lineno", None)
    if v is not None:
        nd["lineno"] = v
    v = getattr(old, "col_offset", None)
    if v is not None:
        nd["col_offset"] = v
    v = getattr(old, "end_lineno", _NO_VALUE)
    if v is not _NO_VALUE:
        nd["end_lineno"] = v
    v = getattr(old, "end_col_offset", _NO_VALUE)
    if v is not _NO_VALUE:
        nd["end_col_offset"] = v
    return new


def _arg_to_ast(node):
    if node is None:
        return None
    new = _ast.arg(node.id, _to_ast(node.annotation), _to_ast(node.type_comment))
    return _locate_as(new, node)


def _arguments_to_ast(node):
    return _ast.arguments(
        [_arg_to_ast(a) for a in node.posonlyargs],
        [_arg_to_ast(a) for a in node.args],
        _arg_to_ast(node.vararg),
        [_arg_to_ast(a) for a in node.kwonlyargs],
        _to_ast(node.kw_defaults),
        _arg_to_ast(node.kwarg),
        _to_ast(node.defaults),
    )


def _name_to_ast(node, new_name=_ast.Name.__new__, Name=_ast.Name):
    # the commonest node: built as ``_generic_to_ast`` builds one
    new = new_name(Name)
    nd = new.__dict__
    nd["id"] = node.id
    nd["ctx"] = _to_ast(node.ctx)
    return _locate_as(new, node)


def _assign_to_ast(node):
    return _locate_as(_ast.Assign(_to_ast(node.targets), _to_ast(node.value)), node)


def _handler_to_ast(node):
    if not node.name:
        return _generic_handler_to_ast(node)
    new = _ast.ExceptHandler(_to_ast(node.type), node.name.id, _to_ast(node.body))
    return _ast.copy_location(new, node)


def _function_to_ast(node):
    py = getattr(_ast, node.__class__.__name__)
    new = py(
        _to_ast(node.name),
        _to_ast(node.args),
        _to_ast(node.body),
        _to_ast(node.decorator_list),
        _to_ast(node.returns),
        _to_ast(node.type_comment),
    )
    return _ast.copy_location(new, node)


def _class_to_ast(node):
    new = _ast.ClassDef(
        _to_ast(node.name),
        _to_ast(node.bases),
        _to_ast(node.keywords),
        _to_ast(node.body),
        _to_ast(node.decorator_list),
    )
    return _ast.copy_location(new, node)


_generic_handler_to_ast = _generic_to_ast(_gast.ExceptHandler, _ast.ExceptHandler)
_TO_AST[list] = lambda v: [_to_ast(x) for x in v]
_SPECIAL_TO_AST = {
    "arguments": _arguments_to_ast,
    "Name": _name_to_ast,
    "Assign": _assign_to_ast,
    "ExceptHandler": _handler_to_ast,
    "FunctionDef": _function_to_ast,
    "AsyncFunctionDef": _function_to_ast,
    "ClassDef": _class_to_ast,
}


def from_ast(node: _ast.AST) -> AST:
    """The running interpreter's ``ast`` -> gast: the tree ``gast.ast_to_gast`` makes, node for
    node, field for field, location for location.

    For speed (every function transformed, and every rule used, is parsed on a first call):
    as ``to_ast``, one converter per class (``_FROM_AST``) instead of gast's NodeTransformer.
    The special cases are gast's for Python 3.10-3.11: a parameter is a ``Name`` in the
    ``Param`` context, ``Name`` gets gast's extra fields, a handler's name is a ``Name``, a
    definition gets empty ``type_params``.
    """
    if _FAST_FROM_AST:
        return _from_ast(node)
    return _gast.ast_to_gast(node)


_FAST_FROM_AST = _GAST_07 and (3, 10) <= _sys.version_info[:2] < (3, 12)
_FROM_AST: dict = {}  # ast class -> its converter


def _from_ast(v):
    conv = _FROM_AST.get(v.__class__)
    if conv is not None:
        return conv(v)
    if isinstance(v, list):
        return [_from_ast(x) for x in v]
    if not isinstance(v, _ast.AST):
        return v
    conv = _FROM_AST[v.__class__] = _gast_converter(v.__class__)
    return conv(v)


def _gast_converter(cls):
    special = _SPECIAL_FROM_AST.get(cls.__name__)
    if special is not None:
        return special
    g = getattr(_gast, cls.__name__, None)
    if g is None:  # not part of gast
        return lambda node: None
    return _generic_from_ast(cls, g)


def _generic_from_ast(cls, g):
    """gast's generic conversion: the fields the node has, then its location attributes,
    written to the new node's instance dict, where gast's constructor puts them."""
    fields, attributes = cls._fields, cls._attributes
    new_node, get = g.__new__, _FROM_AST.get

    def convert(node):
        new = new_node(g)
        nd = new.__dict__
        for f in fields:
            v = getattr(node, f, _NO_VALUE)
            if v is not _NO_VALUE:
                conv = get(v.__class__)
                nd[f] = _from_ast(v) if conv is None else conv(v)
        for a in attributes:
            v = getattr(node, a, _NO_VALUE)
            if v is not _NO_VALUE:
                nd[a] = v
        return new

    return convert


def _name_from_ast(node, new_name=_gast.Name.__new__, Name=_gast.Name):
    # the commonest node: ``gast.Name(node.id, ctx, None, None)``, located
    new = new_name(Name)
    nd = new.__dict__
    nd["id"] = node.id
    nd["ctx"] = _from_ast(node.ctx)
    nd["annotation"] = None
    nd["type_comment"] = None
    return _locate_as(new, node)


def _arg_from_ast(node):
    new = _gast.Name(
        node.arg, _gast.Param(), _from_ast(node.annotation), _from_ast(node.type_comment)
    )
    return _locate_as(new, node)


def _handler_from_ast(node):
    if not node.name:
        return _generic_handler_from_ast(node)
    new = _gast.ExceptHandler(
        _from_ast(node.type), _gast.Name(node.name, _gast.Store(), None, None), _from_ast(node.body)
    )
    return _ast.copy_location(new, node)


def _function_from_ast(node):
    g = getattr(_gast, node.__class__.__name__)
    new = g(
        _from_ast(node.name),
        _from_ast(node.args),
        _from_ast(node.body),
        _from_ast(node.decorator_list),
        _from_ast(node.returns),
        _from_ast(node.type_comment),
        [],
    )
    return _ast.copy_location(new, node)


def _class_from_ast(node):
    new = _gast.ClassDef(
        _from_ast(node.name),
        _from_ast(node.bases),
        _from_ast(node.keywords),
        _from_ast(node.body),
        _from_ast(node.decorator_list),
        [],
    )
    return _ast.copy_location(new, node)


_SPECIAL_FROM_AST = {
    "Name": _name_from_ast,
    "arg": _arg_from_ast,
    "ExceptHandler": _handler_from_ast,
    "FunctionDef": _function_from_ast,
    "AsyncFunctionDef": _function_from_ast,
    "ClassDef": _class_from_ast,
}
_FROM_AST[list] = lambda v: [_from_ast(x) for x in v]
_generic_handler_from_ast = _generic_from_ast(_ast.ExceptHandler, _gast.ExceptHandler)


def _one_line(parts) -> str:
    return "".join(parts)


def to_source(node: AST) -> str:
    """Python source for a statement list, a statement or an expression (no comments).

    Lines are never wrapped here: formatting for display is black's job. The text parses back to
    the tree it was printed from (``tests/test_printer.py`` checks that on random trees), with
    one liberty: a number is printed as the operations that make it -- ``-2.0`` as unary minus
    on ``2.0``, a complex number as a sum, NaN as ``inf - inf`` -- so that wherever it stands it
    is parenthesized as an operation (``(-2.0) ** 2``, never ``-2.0 ** 2``, which is ``-4.0``).
    """
    if isinstance(node, list):
        quick = [_quick_statement(s) for s in node]
        if None not in quick:
            return "".join(line + "\n" for line in quick)
        node = Module(body=node, type_ignores=[])
    else:
        quick = _quick_statement(node) if isinstance(node, stmt) else _quick_expr(node)
        if quick is not None:
            return quick + "\n"
    return _astor_source(node)


def _astor_source(node: AST) -> str:
    """``to_source`` by astor alone (``_quick_statement`` answers the commonest lines first)."""
    py = to_ast(node)
    if isinstance(py, _ast.expr):
        py = _ast.Expr(value=py)
    # (``astor.to_source``, but for its printer's cycles -- methods it makes as closures of
    # itself -- broken when done: the garbage of a long function's printing is freed at once)
    printer = _Printer(" " * 4, False, _astor.code_gen.pretty_string)
    try:
        printer.visit(py)
        printer.result.append("\n")
        if set(printer.result[0]) == set("\n"):
            printer.result[0] = ""
        return _one_line(printer.result)
    finally:
        printer.__dict__.clear()


# The lines of A-normal form -- most of every emitted module -- printed straight from the gast
# tree, without converting it to ``ast`` and running astor's printer (a third of Emit's time).
# Only forms whose text has no precedence to think about: an operand of a binary operator is an
# atom (a name, a non-negative int or float, an attribute of a name, a call, a subscript), and
# anything else is astor's. The text is astor's to the character (``tests/test_printer.py``
# compares the two on every statement of the emitted examples and on random trees).
_BINOP_TEXT = {
    Add: " + ",
    Sub: " - ",
    Mult: " * ",
    Div: " / ",
    FloorDiv: " // ",
    Mod: " % ",
    Pow: " ** ",
    MatMult: " @ ",
}
_WORDS = {None: "None", True: "True", False: "False"}


def _quick_atom(n):
    """The text of an expression that needs no parentheses as an operand, or None."""
    cls = n.__class__
    if cls is Name:
        return n.id
    if cls is Constant:
        v = n.value
        t = type(v)
        if t is int:
            return repr(v) if v >= 0 else None
        if t is float:
            return repr(v) if v == v and v != _INF and _math.copysign(1.0, v) > 0 else None
        if v is None or t is bool:
            return _WORDS[v]
        return None
    if cls is Attribute:
        base = n.value
        while base.__class__ is Attribute:
            base = base.value
        if base.__class__ is not Name:
            return None
        return _quick_atom(n.value) + "." + n.attr
    if cls is Call:
        func = n.func
        if func.__class__ is not Name and func.__class__ is not Attribute:
            return None
        head = _quick_atom(func)
        if head is None:
            return None
        parts = []
        for a in n.args:
            text = _quick_expr(a)
            if text is None:
                return None
            parts.append(text)
        for k in n.keywords:
            if k.arg is None:
                return None
            text = _quick_expr(k.value)
            if text is None:
                return None
            parts.append(k.arg + "=" + text)
        return head + "(" + ", ".join(parts) + ")"
    if cls is Subscript:
        value = n.value
        if value.__class__ is not Name and value.__class__ is not Attribute:
            return None
        head = _quick_atom(value)
        index = n.slice
        if index.__class__ is Tuple and index.elts:
            inner = [_quick_atom(e) for e in index.elts]
            if head is None or None in inner:
                return None
            return head + "[" + ", ".join(inner) + "]"
        inner = _quick_atom(index)
        return None if head is None or inner is None else head + "[" + inner + "]"
    return None


_BINOP_RANK = {Add: 1, Sub: 1, Mult: 2, Div: 2, FloorDiv: 2, Mod: 2, MatMult: 2, Pow: 4}
_NEGATION_RANK = 3  # ``-a``: binds more tightly than ``*``, less than ``**``


def _quick_expr(n):
    """An atom, a negated atom, or binary operations of them -- ``a * b * 0.5``, ``-g * np.sin(x)``,
    ``g * (1 - t * t)`` -- its text, parenthesized as astor does (an operand that binds less
    tightly than its operator, or as tightly on the side the operator does not associate to:
    the right of ``-``, the left of ``**``); None for anything else."""
    cls = n.__class__
    if cls is UnaryOp:
        if n.op.__class__ is not USub:
            return None
        inner = _quick_atom(n.operand)
        return None if inner is None else "-" + inner
    if cls is not BinOp:
        return _quick_atom(n)
    op = n.op.__class__
    rank = _BINOP_RANK.get(op)
    if rank is None:
        return None
    left = _quick_operand(n.left, rank, op is Pow)
    if left is None:
        return None
    if op is Pow and n.right.__class__ is UnaryOp:  # ``a ** -b``: the grammar's u_expr
        right = _quick_expr(n.right)
    else:
        right = _quick_operand(n.right, rank, op is not Pow)
    if right is None:
        return None
    return left + _BINOP_TEXT[op] + right


def _quick_operand(n, rank, tie_needs_parentheses):
    cls = n.__class__
    if cls is BinOp:
        inner = _BINOP_RANK.get(n.op.__class__)
    elif cls is UnaryOp:
        inner = _NEGATION_RANK
    else:
        return _quick_atom(n)
    if inner is None:
        return None
    text = _quick_expr(n)
    if text is None:
        return None
    if inner < rank or (inner == rank and tie_needs_parentheses):
        return "(" + text + ")"
    return text


def _quick_value(n):
    """The right side of an assignment or a return: an expression, or a tuple of two or more."""
    if n.__class__ is Tuple and len(n.elts) > 1:
        parts = [_quick_expr(e) for e in n.elts]
        return None if None in parts else ", ".join(parts)
    return _quick_expr(n)


def _quick_statement(s):
    """The text of a simple statement (no line break), or None when astor should print it."""
    cls = s.__class__
    if cls is Assign:
        if len(s.targets) != 1:
            return None
        target = s.targets[0]
        if target.__class__ is Name:
            head = target.id
        elif target.__class__ is Tuple and len(target.elts) > 1:  # (``a, = f(x)``: astor's)
            if any(e.__class__ is not Name for e in target.elts):
                return None
            head = ", ".join(e.id for e in target.elts)
        else:
            return None
        value = _quick_value(s.value)
        return None if value is None else head + " = " + value
    if cls is Return:
        if s.value is None:
            return "return"
        value = _quick_value(s.value)
        return None if value is None else "return " + value
    if cls is Expr:
        if s.value.__class__ is not Call:
            return None
        return _quick_atom(s.value)
    if cls is Delete:
        if not s.targets or any(t.__class__ is not Name for t in s.targets):
            return None
        return "del " + ", ".join(t.id for t in s.targets)
    if cls is Pass:
        return "pass"
    return None


_INF = float("inf")


def _number_expr(value):
    """``value`` (a number) as an ``ast`` expression whose printed text cannot be misread, or
    None when the number's own literal is that already.

    A literal is safe wherever it stands when it is an atom: a non-negative int, a non-negative
    float or ``inf`` (astor prints ``1e1000``), an imaginary number ``2.5j``. Anything else is the
    operations that make it -- ``-v`` as ``USub(v)``, ``a + bj`` as a sum, NaN as ``inf - inf`` --
    and the printer's precedence rules then parenthesize it as they would those operations. (A
    complex number's real part that is ``-0.0`` is printed as ``0.0``: Python has no literal for
    it; the value compares equal.) numpy's numbers print as Python's.
    """
    t = type(value)
    if t is bool:
        return None
    if t not in (int, float, complex):
        if isinstance(value, _numbers.Integral):
            value = int(value)
        elif isinstance(value, _numbers.Real):
            value = float(value)
        elif isinstance(value, _numbers.Complex):
            value = complex(value)
        else:
            return None
        t = type(value)
        made = _number_expr(value)
        return made if made is not None else _ast.Constant(value=value)
    if t is int:
        return (
            _ast.UnaryOp(op=_ast.USub(), operand=_ast.Constant(value=-value)) if value < 0 else None
        )
    if t is float:
        if value != value:  # NaN
            inf = float("inf")
            return _ast.BinOp(
                left=_ast.Constant(value=inf), op=_ast.Sub(), right=_ast.Constant(value=inf)
            )
        if _math.copysign(1.0, value) < 0:
            return _ast.UnaryOp(op=_ast.USub(), operand=_ast.Constant(value=-value))
        return None
    re, im = value.real, value.imag
    if im != im:  # NaN
        inf_j = complex(0.0, float("inf"))
        imag = _ast.BinOp(
            left=_ast.Constant(value=inf_j), op=_ast.Sub(), right=_ast.Constant(value=inf_j)
        )
        negative = False
    else:
        imag = _ast.Constant(value=complex(0.0, abs(im)))
        negative = _math.copysign(1.0, im) < 0
    if re == 0 and _math.copysign(1.0, re) > 0:
        if not negative:
            return None if isinstance(imag, _ast.Constant) else imag
        return _ast.UnaryOp(op=_ast.USub(), operand=imag)
    real = _number_expr(re) or _ast.Constant(value=re)
    return _ast.BinOp(left=real, op=_ast.Sub() if negative else _ast.Add(), right=imag)


class _Printer(_astor.SourceGenerator):
    """astor's printer, with the cases where its text parses to another tree put right:

    * numbers (see ``_number_expr``), and tuples of them (a constant a pass folded);
    * f-strings: printed by the interpreter's own ``ast.unparse``, which knows this Python's rules
      for quotes, braces and backslashes inside them (astor writes ``f"{{a}}"`` for a set);
    * ``{**v}``: ``v`` is parenthesized unless it binds at least as tightly as ``|``
      (``{**(a or b)}``);
    * a slice's bounds: a tuple, a lambda or an assignment expression in parentheses
      (``x[a:(b, c)]``);
    * the test of ``if``, ``elif`` and ``while``, an annotation: a tuple in parentheses
      (``if (a,):``).
    """

    def visit_Constant(self, node):
        value = node.value
        if type(value) is tuple:
            made = _ast.Tuple(elts=[_ast.Constant(value=v) for v in value], ctx=_ast.Load())
        else:
            made = _number_expr(value)
            if made is None:
                return super().visit_Constant(node)
        made._pp = getattr(node, "_pp", _Precedence.highest)
        self.visit(made)  # (a numpy number: a Python number's Constant)

    def visit_JoinedStr(self, node):
        self.write(_ast.unparse(_PrintableNumbers().visit(_copy.deepcopy(node))))

    def visit_withitem(self, node):
        # `with (a,):` is a parenthesized list of one context manager (Python 3.9+): a tuple
        # there takes a second pair
        if isinstance(node.context_expr, _ast.Tuple) and node.optional_vars is None:
            self.write("(", node.context_expr, ")")
        else:
            self.write(node.context_expr)
        self.conditional_write(" as ", node.optional_vars)

    def visit_Dict(self, node):
        _set_precedence(_Precedence.Comma, *[v for k, v in zip(node.keys, node.values) if k])
        with self.delimit("{}"):
            for idx, (key, value) in enumerate(zip(node.keys, node.values)):
                if key is None:
                    _set_precedence(_Precedence.BitOr, value)
                self.write(", " if idx else "", key if key else "", ": " if key else "**", value)

    def visit_If(self, node):
        _set_precedence(_Precedence.Comma, node.test)
        self.statement(node, "if ", node.test, ":")
        self.body(node.body)
        while True:
            orelse = node.orelse
            if len(orelse) == 1 and isinstance(orelse[0], _ast.If):
                node = orelse[0]
                _set_precedence(_Precedence.Comma, node.test)
                self.write(self.newline, "elif ", node.test, ":")
                self.body(node.body)
            else:
                self.else_body(orelse)
                break

    def visit_While(self, node):
        _set_precedence(_Precedence.Comma, node.test)
        self.statement(node, "while ", node.test, ":")
        self.body_or_else(node)

    def visit_AnnAssign(self, node):
        _set_precedence(_Precedence.Comma, node.annotation)
        _set_precedence(_Precedence.Comma, node.value)
        _set_precedence(node, node.target)
        parens = isinstance(node.target, _ast.Name) and not node.simple
        begin, end = ("(", ")") if parens else ("", "")
        self.statement(node, begin, node.target, end, ": ", node.annotation)
        self.conditional_write(" = ", node.value)

    def visit_Slice(self, node):
        _set_precedence(_Precedence.IfExp, node.lower, node.upper, node.step)
        self.conditional_write(node.lower)
        self.write(":")
        self.conditional_write(node.upper)
        if node.step is not None:
            self.write(":")
            self.visit(node.step)


class _PrintableNumbers(_ast.NodeTransformer):
    """Every number of a tree as ``_number_expr`` writes it (for ``ast.unparse``)."""

    def visit_Constant(self, node):
        if type(node.value) is tuple:
            return _ast.Tuple(
                elts=[self.visit_Constant(_ast.Constant(value=v)) for v in node.value],
                ctx=_ast.Load(),
            )
        made = _number_expr(node.value)
        return node if made is None else made


_Precedence = _astor.op_util.Precedence
_set_precedence = _astor.code_gen.set_precedence


def expr_source(node: AST) -> str:
    return to_source(node).strip()


def header_source(node: AST) -> str:
    """The first line of a compound statement as ``to_source`` prints it: ``if t:``, ``while
    t:``, ``with e as v:`` (its body left out)."""
    shell = node.__class__.__new__(node.__class__)
    shell.__dict__.update(node.__dict__)
    shell.body = [Pass()]
    if "orelse" in node._fields:
        shell.orelse = []
    return to_source(shell).split("\n", 1)[0]


# --------------------------------------------------------------------------- constructors


# The constructors the lowerings call for every node they make build it as gast's constructor
# does -- the fields in the instance dict -- without its keyword-argument call (half the time).
_new = AST.__new__
_CTX = {"load": Load, "store": Store, "param": Param, "del": Del}


def name(id: str, ctx: str = "load") -> Name:
    node = _new(Name)
    d = node.__dict__
    d["id"] = id
    d["ctx"] = _new(_CTX[ctx])
    d["annotation"] = d["type_comment"] = None
    return node


def store(id: str) -> Name:
    return name(id, "store")


def delete(names: list[str]) -> Delete:
    """``del a, b``."""
    return Delete(targets=[name(n, "del") for n in names])


def const(value) -> Constant:
    node = _new(Constant)
    node.__dict__.update(value=value, kind=None)
    return node


def assign(target, value: AST) -> Assign:
    if isinstance(target, str):
        target = store(target)
    node = _new(Assign)
    node.__dict__.update(targets=[target], value=value, type_comment=None)
    return node


def tuple_(elts, ctx: str = "load") -> Tuple:
    ctx_node = {"load": Load, "store": Store}[ctx]()
    return Tuple(elts=list(elts), ctx=ctx_node)


def call(func, args=(), keywords=None) -> Call:
    if isinstance(func, str):
        func = name(func)
    kws = [keyword(arg=k, value=v) for k, v in keywords.items()] if keywords else []
    node = _new(Call)
    node.__dict__.update(func=func, args=list(args), keywords=kws)
    return node


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
    return _breadth_first(node, _WALKED, _walked)


_WALKED: dict = {}  # node class -> ((field, what it holds), ...): ``CHILDREN``'s, and operators


def walk_nodes(node: AST) -> list:
    """``list(walk(node))`` without the contexts and operators: the other nodes in ``walk``'s
    order (those leaves hold nothing, so leaving them out moves nothing else). For speed, where
    a pass looks at every node of a long function for calls or statements: half the nodes."""
    return list(_breadth_first(node, CHILDREN, children_of))


def _breadth_first(node: AST, table: dict, fields_of):
    """``walk``'s loop over the fields ``table`` (made by ``fields_of``) lists for each class."""
    todo = _deque([node])
    pop, push, extend = todo.popleft, todo.append, todo.extend
    while todo:  # (the loop of ``scoping.push_children`` is written out, as there, for speed)
        node = pop()
        fields = table.get(node.__class__)
        if fields is None:
            fields = fields_of(node.__class__)
        for f, holds in fields:
            v = getattr(node, f, None)
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
        yield node


def _walked(cls) -> tuple:
    return children_of(cls, operators=True)


# The fields of a node class that may hold nodes other than contexts and operators, read from
# gast's field types (``Name.id``, a string, and ``ctx``, ``op``, ``ops`` are left out): what the
# analyses that look for names (``scoping``) and ``copy_location`` go into.
NODE, NODES, SOME_NODES = 0, 1, 2  # a node (or None); a list of nodes; a list with others too
CHILDREN: dict = {}  # node class -> ((field, one of the three), ...), in field order
# fields typed as lists of nodes that may hold None: ``{**d}``'s key, a keyword-only parameter
# without a default
_MAY_HOLD_NONE = {("Dict", "keys"), ("arguments", "kw_defaults")}
_NO_NODES = {"ctx", "op", "ops", "type_comment", "kind", "value_kind"}


def children_of(cls, operators: bool = False) -> tuple:
    """``CHILDREN[cls]``, computed (a field of a class gast does not type: ``SOME_NODES``); with
    ``operators``, ``_WALKED[cls]``: the contexts and operators too."""
    types = getattr(cls, "_field_types", None) or {}
    out = []
    for f in cls._fields:
        if operators and f in _OPERATOR_FIELDS:
            out.append((f, _OPERATOR_FIELDS[f]))
            continue
        if f in _NO_NODES:
            continue
        holds = _holds(types.get(f), (cls.__name__, f) in _MAY_HOLD_NONE)
        if holds is not None:
            out.append((f, holds))
    out = tuple(out)
    (_WALKED if operators else CHILDREN)[cls] = out
    return out


_OPERATOR_FIELDS = {"ctx": NODE, "op": NODE, "ops": NODES}


def _holds(t, may_hold_none: bool):
    if t is None:  # (not typed: each value is looked at)
        return SOME_NODES
    if _is_node_class(t):
        return NODE
    origin = _typing.get_origin(t)
    if origin is list:
        (item,) = _typing.get_args(t)
        if _is_node_class(item):
            return SOME_NODES if may_hold_none else NODES
        return None if item is str else SOME_NODES
    if origin in (_types.UnionType, _typing.Union):  # ``expr | None``
        return NODE if any(_is_node_class(a) for a in _typing.get_args(t)) else None
    return None if t in (str, int, object) else SOME_NODES  # (object: a constant's value)


def _is_node_class(t) -> bool:
    return isinstance(t, type) and issubclass(t, AST) and not issubclass(t, _OPERATORS)


_OPERATORS = (_ast.expr_context, _ast.operator, _ast.boolop, _ast.unaryop, _ast.cmpop)


_VISIT: dict = {}  # node class -> "visit_" + its name
_VISITED: dict = {}  # node class -> the fields a visitor visits


def _visited_fields(cls) -> tuple:
    """The fields of ``cls`` a visitor goes into: not those that hold only contexts and
    operators (``Load()``, ``Add()``), which no pass visits -- a third of a tree's nodes."""
    fields = _VISITED.get(cls)
    if fields is None:
        fields = _VISITED[cls] = tuple(f for f in cls._fields if f not in ("ctx", "op", "ops"))
    return fields


class NodeVisitor(_ast.NodeVisitor):
    """``ast.NodeVisitor``, its traversal as the plain loops above: the same visits, but for
    contexts and operators (``_visited_fields``: a visitor of them would subclass ast's)."""

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
        for f in _visited_fields(node.__class__):
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
        for f in _visited_fields(node.__class__):
            old = getattr(node, f, None)
            if isinstance(old, list):
                # (most visits return their node: the list is rebuilt from the first that
                # does not, not every time)
                for i, x in enumerate(old):
                    if isinstance(x, AST):
                        y = self.visit(x)
                        if y is not x:
                            old[i:] = self._rest(old, i, y)
                            break
            elif isinstance(old, AST):
                x = self.visit(old)
                if x is None:
                    delattr(node, f)
                elif x is not old:
                    setattr(node, f, x)
        return node

    def _rest(self, items: list, i: int, first) -> list:
        """What replaces ``items[i:]``: ``first`` (the visit of ``items[i]``), then the visits
        of the items after it (None removes one, a list is spliced in)."""
        new: list = []
        if isinstance(first, AST):
            new.append(first)
        elif first is not None:
            new.extend(first)
        for x in items[i + 1 :]:
            if isinstance(x, AST):
                x = self.visit(x)
                if x is None:
                    continue
                if not isinstance(x, AST):
                    new.extend(x)
                    continue
            new.append(x)
        return new


# --------------------------------------------------------------------------- helpers


def copy_location(new: AST, old: AST) -> AST:
    """Give ``new`` and its children without a location the source location of ``old``.

    A child that has a location keeps it, and so does everything below it.
    """
    od = old.__dict__
    whole = {
        "lineno": od.get("lineno"),
        "col_offset": od.get("col_offset"),
        "end_lineno": od.get("end_lineno"),
        "end_col_offset": od.get("end_col_offset"),
    }
    if None in whole.values():  # (rare: read as ``hasattr`` would)
        if not hasattr(old, "lineno"):
            return new
        whole = {a: getattr(old, a) for a in LOCATION if hasattr(old, a)}
    where = whole.items()
    # For speed (the lowerings locate every node they make): the loop reads and writes the
    # instance dict, where a node keeps its location (a class only defaults ``end_lineno`` and
    # ``end_col_offset`` to None), and goes into the fields that may hold nodes other than
    # operators and contexts (``CHILDREN``: ``Load()``, ``Add()`` have no location, as
    # ``ast.fix_missing_locations`` leaves them). A node without any location (one just made)
    # takes all four at once.
    stack = [new]
    pop, push = stack.pop, stack.append
    while stack:
        node = pop()
        d = node.__dict__
        if "lineno" not in d and "col_offset" not in d and "end_lineno" not in d:
            if "end_col_offset" not in d:
                d.update(whole)
            else:
                for a, v in where:
                    if d.get(a) is None:
                        d[a] = v
        elif d.get("lineno") is not None and node is not new:
            continue
        else:
            for a, v in where:
                if d.get(a) is None:
                    d[a] = v
        children = CHILDREN.get(node.__class__)
        if children is None:
            children = children_of(node.__class__)
        for f, holds in children:
            v = getattr(node, f, None)
            if v is None:
                continue
            if holds == NODES:
                stack.extend(v)
            elif holds == NODE:
                if isinstance(v, AST):
                    push(v)
            else:
                for x in v if v.__class__ is list else (v,):
                    if isinstance(x, AST):
                        push(x)
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


def function_defs(tree) -> list:
    """``tree`` (a function definition) and every function defined in it, outermost first:
    definitions are statements after Desugar (lambdas are gone), so only statement lists are
    searched -- a fraction of the nodes ``walk`` would visit."""
    out = [tree]
    todo = [tree]
    while todo:
        level, todo = todo, []
        for node in level:
            stack = list(reversed(node.body))  # (in the order of the source)
            while stack:
                s = stack.pop()
                if isinstance(s, FunctionDef):
                    out.append(s)
                    todo.append(s)
                    continue
                for field in ("finalbody", "orelse", "handlers", "body"):
                    v = getattr(s, field, None)
                    if isinstance(v, list):
                        stack.extend(reversed(v))
    return out


def names_in(node) -> set[str]:
    """Every Name id read or written anywhere below ``node`` (including nested functions)."""
    if isinstance(node, list):
        out: set[str] = set()
        for n in node:
            out |= names_in(n)
        return out
    # (a walk of ``CHILDREN``, not ``walk``: contexts and operators, a third of a tree's nodes,
    # hold no names; a name's own children -- a parameter's annotation -- are gone into too)
    out = set()
    stack = [node]
    pop, push, extend = stack.pop, stack.append, stack.extend
    while stack:
        n = pop()
        cls = n.__class__
        if cls is Name:
            out.add(n.id)
        fields = CHILDREN.get(cls)
        if fields is None:
            fields = children_of(cls)
        for f, holds in fields:
            v = getattr(n, f, None)
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
