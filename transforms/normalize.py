"""After Normalize (A-normal form), every operand is a name or a constant, one operation a statement.

What the later passes can rely on, for each statement of the function:

* ``t = op`` where ``op`` is a name, a constant, or one operation on names and constants: a binary or
  unary operator, a single comparison, a call (its callee a resolved dotted name, a method of a
  name, or a name), an attribute or subscript of a name, a tuple / list / dict display;
* ``a, b = t`` -- unpacking a name into names (nested targets are unpacked one level at a time);
* ``x[i] = v`` / ``x.a = v`` -- stores into a name, with atomic parts;
* ``if t: ... else: ...`` on a name; ``return v`` on a name or constant, and the function ends in
  ``return`` on every path; ``f(args)`` as a statement; ``assert``, ``raise``, ``pass``.

Augmented assignment is a plain one (``x += y`` -> ``x = x + y``, rebinding, as for floats),
preceded by ``check_in_place(...)`` where something else that may hold ``x``'s array reads it
afterwards (``transforms/aliasing/`` says where: Python would change the array in place);
``a if c else b``, ``and``, ``or`` and chained comparisons become ``if`` statements, so that only
the branch Python would evaluate is evaluated. Statements keep the source line of the statement
they came from. Temporaries are named after the operation that made them.

>>> from cpsad.transforms.testing import stage_source
>>> print(stage_source("def f(x, y):\\n    return np.sin(x * y) + 1.0\\n", "normalize", ctx))
def f(x, y):
    mul = x * y
    sin = np.sin(mul)
    add = sin + 1.0
    return add
<BLANKLINE>
"""

from __future__ import annotations

from . import aliasing, anno
from . import astlib as A
from .scoping import local_names
from .unit import Unit

BINOP_STEMS = {
    A.Add: "add",
    A.Sub: "sub",
    A.Mult: "mul",
    A.Div: "div",
    A.FloorDiv: "floordiv",
    A.Mod: "mod",
    A.Pow: "power",
    A.MatMult: "matmul",
    A.BitAnd: "bitand",
    A.BitOr: "bitor",
    A.BitXor: "bitxor",
    A.LShift: "lshift",
    A.RShift: "rshift",
}
UNARY_STEMS = {A.USub: "neg", A.UAdd: "pos", A.Not: "not", A.Invert: "invert"}
COMPARE_STEMS = {
    A.Lt: "lt",
    A.LtE: "le",
    A.Gt: "gt",
    A.GtE: "ge",
    A.Eq: "eq",
    A.NotEq: "ne",
    A.Is: "is",
    A.IsNot: "is_not",
    A.In: "contains",
    A.NotIn: "not_contains",
}


MUTATORS = {"append", "extend", "insert", "update", "setdefault", "add"}  # change their object

IN_PLACE = {  # augmented assignment: its symbol, the operator module's in-place function
    A.Add: ("+", "iadd"),
    A.Sub: ("-", "isub"),
    A.Mult: ("*", "imul"),
    A.Div: ("/", "itruediv"),
    A.FloorDiv: ("//", "ifloordiv"),
    A.Mod: ("%", "imod"),
    A.Pow: ("**", "ipow"),
    A.MatMult: ("@", "imatmul"),
    A.BitAnd: ("&", "iand"),
    A.BitOr: ("|", "ior"),
    A.BitXor: ("^", "ixor"),
    A.LShift: ("<<", "ilshift"),
    A.RShift: (">>", "irshift"),
}


def falls_through(block) -> bool:
    """Can control reach the end of ``block``?"""
    if not block:
        return True
    last = block[-1]
    if isinstance(last, (A.Return, A.Raise)):
        return False
    if isinstance(last, A.If):
        return falls_through(last.body) or falls_through(last.orelse)
    return True


class Normalize:
    name = "normalize"
    invariant = "A-normal form: every operand is a name or a constant"

    def run(self, unit: Unit) -> None:
        self.unit = unit
        self.cells: set[str] = set()
        self.updates = 0
        self.function(unit.tree)
        self.check_in_place(aliasing.analyze(unit))

    def check_in_place(self, sharing: dict) -> None:
        """Before each update whose value something else may read afterwards (``aliasing``), a
        run-time check: Python would change the value in place, cpsad rebinds the name."""
        if not any(sharing.values()):
            return

        def visit(block):
            out = []
            for s in block:
                if isinstance(s, A.If):
                    s.body, s.orelse = visit(s.body), visit(s.orelse)
                elif isinstance(s, A.FunctionDef):
                    s.body = visit(s.body)
                found = sharing.get(id(s))
                if found is not None and anno.hasanno(s, anno.AUG):
                    if found.names or found.held or found.related:
                        out.append(in_place_guard(self.unit, s, anno.getanno(s, anno.AUG), found))
                    anno.setanno(s, anno.ALIASED_AUG, found)
                elif found is not None:  # a change in place of a container: checked where
                    anno.setanno(s, anno.SHARED_MUTATION, found)  # a derivative needs it
                out.append(s)
            return out

        self.unit.tree.body = visit(self.unit.tree.body)
        visit = None  # (it calls itself: a reference cycle, which kept the tree alive until a collection)

    def function(self, fdef) -> None:
        """Normalize a function's body in place; it ends in ``return`` on every path.

        A cell variable (shared with nested functions that change it) is read into a temporary
        before each use -- a snapshot the backward pass can rely on -- and written from an atom.
        """
        outer = self.cells
        own_locals = local_names(fdef)
        declared = {n for st in fdef.body if isinstance(st, A.Nonlocal) for n in st.names}
        self.cells = (outer - own_locals) | declared | anno.getanno(fdef, anno.CELLS, set())
        try:
            self._function(fdef)
        finally:
            self.cells = outer

    def _function(self, fdef) -> None:
        body = fdef.body
        if body and isinstance(body[0], A.Expr) and isinstance(body[0].value, A.Constant):
            body = body[1:]  # docstring
        out = self.block(body)
        if falls_through(out):
            ret = A.return_(A.const(None))
            last = fdef.body[-1] if fdef.body else fdef
            ret.lineno, ret.col_offset = (
                getattr(last, "end_lineno", None) or fdef.lineno,
                fdef.col_offset,
            )
            out.append(ret)
        fdef.body = out

    # ------------------------------------------------------------------ statements

    def block(self, stmts) -> list:
        out: list = []
        for stmt in stmts:
            if not falls_through(out):
                break  # unreachable
            self.stmt(stmt, out)
        return out

    def emit(self, out: list, stmt, origin) -> None:
        A.copy_location(stmt, origin)
        stmt.lineno, stmt.col_offset = origin.lineno, origin.col_offset
        stmt.end_lineno = getattr(origin, "end_lineno", origin.lineno)
        stmt.end_col_offset = getattr(origin, "end_col_offset", None)
        out.append(stmt)

    def stmt(self, s, out: list) -> None:
        self.origin = s
        if isinstance(s, A.Assign):
            self.assign(s.targets, s.value, out)
        elif isinstance(s, A.AnnAssign):
            if s.value is not None:
                self.assign([s.target], s.value, out)
        elif isinstance(s, A.AugAssign):
            self.aug_assign(s, out)
        elif isinstance(s, A.Return):
            value = A.const(None) if s.value is None else self.atom(s.value, out)
            self.emit(out, A.return_(value), s)
        elif isinstance(s, A.If):
            test = self.atom(s.test, out)
            body = self.block(s.body) or [A.Pass()]
            orelse = self.block(s.orelse)
            self.emit(out, A.if_(test, body, orelse), s)
        elif isinstance(s, A.Expr):
            if isinstance(s.value, (A.Constant, A.Name)):
                return  # no effect
            stored = self.store_item(s.value)
            if stored is not None:  # emitted code's `d[k] = v`, transformed again: that again
                self.assign([stored], s.value.args[2], out)
                return
            value = self.op(s.value, out)
            self.emit(out, A.expr_stmt(value), s)
        elif isinstance(s, A.Assert):
            test = self.atom(s.test, out)
            self.emit(out, A.Assert(test=test, msg=s.msg), s)
        elif isinstance(s, A.FunctionDef):
            # defaults are evaluated where the def runs; the body is a scope of its own
            s.args.defaults = [self.atom(d, out) for d in s.args.defaults]
            s.args.kw_defaults = [
                None if d is None else self.atom(d, out) for d in s.args.kw_defaults
            ]
            self.function(s)
            out.append(s)
        elif isinstance(s, (A.Raise, A.Pass, A.Nonlocal)):
            out.append(s)
        else:  # pragma: no cover - the fence lets nothing else through
            raise self.unit.error(f"unsupported statement `{type(s).__name__}`", s)

    def assign(self, targets, value, out: list) -> None:
        if len(targets) == 1 and isinstance(targets[0], A.Name):
            if targets[0].id in self.cells:
                self.store(targets[0], self.atom(value, out), out)
                return
            self.emit(out, A.assign(targets[0].id, self.op(value, out)), self.origin)
            return
        v = self.atom(value, out)
        for t in targets:
            self.store(t, v, out)

    def store(self, target, value, out: list) -> None:
        """Assign the atom ``value`` to an arbitrary target."""
        if isinstance(target, A.Name):
            self.emit(out, A.assign(target.id, value), self.origin)
            if target.id in self.cells:
                anno.setanno(out[-1], anno.CELL_WRITE, True)
        elif isinstance(target, (A.Tuple, A.List)) and any(
            isinstance(e, A.Starred) for e in target.elts
        ):
            self.starred_store(target.elts, value, out)
        elif isinstance(target, (A.Tuple, A.List)):
            if isinstance(value, A.Constant):
                value = self.temp_for(value, "value", out)
            names, nested = [], []
            for elt in target.elts:
                if isinstance(elt, A.Name) and elt.id not in self.cells:
                    names.append(A.store(elt.id))
                else:
                    t = self.new_temp("item")
                    names.append(A.store(t))
                    nested.append((elt, A.name(t)))
            self.emit(out, A.assign(A.tuple_(names, "store"), value), self.origin)
            for elt, t in nested:
                self.store(elt, t, out)
        elif isinstance(target, A.Subscript):
            if isinstance(target.value, A.Name) and target.value.id in self.cells:
                # `d[k] = v` changes the object the name holds now, a cell's too: the name
                # itself, not a snapshot of it (as `xs.append(v)`), so the change and the
                # adjoints of what reads it later meet in the cell's adjoint
                obj = A.name(target.value.id)
            else:
                obj = self.atom(target.value, out)
            index = self.index(target.slice, out)
            sub = A.Subscript(value=obj, slice=index, ctx=A.Store())
            self.emit(out, A.assign(sub, value), self.origin)
        elif isinstance(target, A.Attribute):
            obj = self.atom(target.value, out)
            at = A.Attribute(value=obj, attr=target.attr, ctx=A.Store())
            self.emit(out, A.assign(at, value), self.origin)
        else:  # pragma: no cover
            raise self.unit.error("unsupported assignment target", target)

    def starred_store(self, elts, value, out: list) -> None:
        """``a, *rest, z = value``: ``items = list(value)``, then ``a = items[0]``, ``rest =
        items[1:-1]``, ``z = items[-1]`` -- Python's unpacking (``rest`` a list), through
        ``list``'s rule and indexing. (Too few items raise IndexError where Python raises
        ValueError.)"""
        star = next(i for i, e in enumerate(elts) if isinstance(e, A.Starred))
        after = len(elts) - star - 1
        func = A.name(self.unit.inject(list, "list"))
        anno.setanno(func, anno.CALLEE, list)
        anno.setanno(func, anno.CALLEE_KIND, "primitive")
        items = self.new_temp("items")
        self.emit(out, A.assign(items, A.Call(func=func, args=[value], keywords=[])), self.origin)
        for i, elt in enumerate(elts):
            if i < star:
                index = A.const(i)
            elif i > star:
                index = A.const(i - len(elts))
            else:
                upper = A.const(-after) if after else None
                index = A.Slice(lower=A.const(star), upper=upper, step=None)
            part = self.new_temp("item")
            sub = A.Subscript(value=A.name(items), slice=index, ctx=A.Load())
            self.emit(out, A.assign(part, sub), self.origin)
            self.store(elt.value if isinstance(elt, A.Starred) else elt, A.name(part), out)

    def store_item(self, call):
        """``store_item(d, key, v)`` (how emitted code stores into a container) as the target
        ``d[key]``, or None for any other call."""
        fn = self.unit.ctx.runtime("store_item")
        if (
            isinstance(call, A.Call)
            and anno.getanno(call.func, anno.CALLEE) is fn
            and len(call.args) == 3
            and not call.keywords
        ):
            return A.Subscript(value=call.args[0], slice=call.args[1], ctx=A.Store())
        return None

    def aug_assign(self, s, out: list) -> None:
        """``y op= v`` as ``y = y op v``: a new value, the name rebound, as Python does for a
        number; the statement carries an ``aliasing.Update``. For an array Python changes the
        value in place instead -- the same thing to every later read unless something else
        holds it: ``check_in_place`` (see ``run``) is put before the updates where that may be.

        ``x[i] op= v`` is ``old = x[i]; new = old op v; x[i] = new``: the update is of ``old``."""
        target = s.target
        sym, python_op = IN_PLACE[type(s.op)]
        self.updates += 1

        def update(operand, result, container=None):
            name = target.id if isinstance(target, A.Name) else None
            u = aliasing.Update(operand, result, sym + "=", python_op, s, s.lineno, container, name)
            anno.setanno(out[-1], anno.AUG, u)

        if isinstance(target, A.Name):
            operand = self.atom(A.name(target.id), out)
            rhs = A.binop(operand, s.op, self.atom(s.value, out))
            if target.id in self.cells:
                new = self.temp_for(rhs, BINOP_STEMS.get(type(s.op), "binop"), out)
                update(operand.id, new.id)
                self.store(target, new, out)
                return
            self.emit(out, A.assign(target.id, rhs), s)
            update(operand.id, target.id)
            return
        # x[i] += v  ->  old = x[i]; new = old + v; x[i] = new
        obj = self.atom(target.value, out)
        if isinstance(target, A.Subscript):
            index = self.index(target.slice, out)
            load = A.Subscript(value=obj, slice=index, ctx=A.Load())
            store = A.Subscript(value=A.name(obj.id), slice=A.deepcopy(index), ctx=A.Store())
        else:
            load = A.Attribute(value=obj, attr=target.attr, ctx=A.Load())
            store = A.Attribute(value=A.name(obj.id), attr=target.attr, ctx=A.Store())
        old = self.temp_for(load, self.stem(load), out)
        new = self.temp_for(
            A.binop(old, s.op, self.atom(s.value, out)), BINOP_STEMS.get(type(s.op), "binop"), out
        )
        update(old.id, new.id, obj.id)
        self.emit(out, A.assign(store, new), s)

    # ------------------------------------------------------------------ expressions

    def new_temp(self, stem: str) -> str:
        return self.unit.namer.temp(stem)

    def temp_for(self, op, stem: str, out: list) -> A.Name:
        t = self.new_temp(stem)
        self.emit(out, A.assign(t, op), self.origin)
        anno.setanno(out[-1], anno.TEMP, True)
        return A.name(t)

    def atom(self, e, out: list):
        """An operand: the expression itself if it is a name or constant, else a temporary."""
        if isinstance(e, A.Name):
            if e.id in self.cells:  # a snapshot: the cell may change before the backward pass
                return self.temp_for(A.name(e.id), e.id, out)
            return A.name(e.id)
        if isinstance(e, A.Constant):
            return e
        folded = _fold_constant(e)
        if folded is not None:
            return folded
        stem = self.stem(e)
        op = self.op(e, out)
        if isinstance(op, (A.Name, A.Constant)):
            return op
        return self.temp_for(op, stem, out)

    def stem(self, e) -> str:
        if isinstance(e, A.BinOp):
            return BINOP_STEMS.get(type(e.op), "binop")
        if isinstance(e, A.UnaryOp):
            return UNARY_STEMS.get(type(e.op), "unary")
        if isinstance(e, A.Compare):
            return COMPARE_STEMS.get(type(e.ops[0]), "cmp") if len(e.ops) == 1 else "cmp"
        if isinstance(e, A.Call):
            f = e.func
            fname = f.attr if isinstance(f, A.Attribute) else getattr(f, "id", "call")
            if isinstance(f, A.Attribute) and anno.getanno(f, anno.CALLEE_KIND) == "method":
                if isinstance(f.value, A.Name):
                    return f"{f.value.id}_{fname}"
                return fname
            if e.args and isinstance(e.args[0], A.Name) and len(e.args[0].id) <= 8:
                return f"{fname}_{e.args[0].id}"
            return fname
        if isinstance(e, A.Attribute):
            if isinstance(e.value, A.Name):
                return f"{e.value.id}_{e.attr}"
            return e.attr
        if isinstance(e, A.Subscript):
            base = e.value.id if isinstance(e.value, A.Name) else "item"
            idx = e.slice
            if isinstance(idx, A.Constant) and isinstance(idx.value, (str, int)):
                return f"{base}_{idx.value}"
            return f"{base}_item"
        if isinstance(e, A.IfExp):
            return "ifexp"
        if isinstance(e, A.BoolOp):
            return "and_" if isinstance(e.op, A.And) else "or_"
        if isinstance(e, A.Tuple):
            return "tup"
        if isinstance(e, A.List):
            return "lst"
        if isinstance(e, A.Dict):
            return "dct"
        return "t"

    def op(self, e, out: list):
        """``e`` as one operation whose operands are atoms (statements for the operands go to out)."""
        if isinstance(e, (A.Name, A.Constant)):
            return self.atom(e, out)
        folded = _fold_constant(e)
        if folded is not None:
            return folded
        if isinstance(e, A.BinOp):
            left = self.atom(e.left, out)
            right = self.atom(e.right, out)
            return A.copy_location(A.binop(left, e.op, right), e)
        if isinstance(e, A.UnaryOp):
            return A.copy_location(A.UnaryOp(op=e.op, operand=self.atom(e.operand, out)), e)
        if isinstance(e, A.Compare):
            return self.compare(e, out)
        if isinstance(e, A.Call):
            return self.call(e, out)
        if isinstance(e, A.Attribute):
            node = A.Attribute(value=self.atom(e.value, out), attr=e.attr, ctx=A.Load())
            return A.copy_location(node, e)
        if isinstance(e, A.Subscript):
            value = self.atom(e.value, out)
            node = A.Subscript(value=value, slice=self.index(e.slice, out), ctx=A.Load())
            return A.copy_location(node, e)
        if isinstance(e, (A.Tuple, A.List, A.Set)):
            elts = [self.element(x, out) for x in e.elts]
            node = (
                type(e)(elts=elts, ctx=A.Load()) if not isinstance(e, A.Set) else A.Set(elts=elts)
            )
            return A.copy_location(node, e)
        if isinstance(e, A.Dict):
            keys = [None if k is None else self.atom(k, out) for k in e.keys]
            values = [self.atom(v, out) for v in e.values]
            return A.copy_location(A.Dict(keys=keys, values=values), e)
        if isinstance(e, A.IfExp):
            return self.if_exp(e, out)
        if isinstance(e, A.BoolOp):
            return self.bool_op(e, out)
        if isinstance(e, A.NamedExpr):  # (y := e): y = e where Python evaluates it, then y
            self.assign([e.target], e.value, out)
            return self.atom(A.name(e.target.id), out)
        # f-strings and other opaque expressions: evaluated as written.
        return e

    def element(self, e, out: list):
        if isinstance(e, A.Starred):
            return A.Starred(value=self.atom(e.value, out), ctx=A.Load())
        return self.atom(e, out)

    def index(self, idx, out: list):
        if isinstance(idx, A.Slice):
            parts = [
                None if p is None else self.atom(p, out) for p in (idx.lower, idx.upper, idx.step)
            ]
            return A.Slice(lower=parts[0], upper=parts[1], step=parts[2])
        if isinstance(idx, A.Tuple):
            return A.tuple_([self.index(x, out) for x in idx.elts])
        return self.element(idx, out)

    def call(self, e, out: list):
        e = _spread_displays(e)
        func = e.func
        kind = anno.getanno(func, anno.CALLEE_KIND)
        callee = anno.getanno(func, anno.CALLEE)
        if (
            (callee is dict or getattr(callee, "__cpsad_composite__", None) is dict)
            and not e.args
            and all(k.arg is not None for k in e.keywords)
        ):  # dict(a=x, b=y) is the display {"a": x, "b": y}: the same new dict, in order
            # (``dict`` as Resolve left it, or the composite it gave it for ``dict(pairs)``)
            keys = [A.copy_location(A.Constant(value=k.arg, kind=None), e) for k in e.keywords]
            values = [self.atom(k.value, out) for k in e.keywords]
            return A.copy_location(A.Dict(keys=keys, values=values), e)
        if (
            anno.getanno(func, anno.CALLEE) is zip
            and len(e.args) == 1
            and isinstance(e.args[0], A.Starred)
            and not e.keywords
        ):  # zip(*rows): the list of its tuples, a primitive with a rule (runtime.zipped)
            fn = self.unit.ctx.runtime("zipped")
            new_func = A.name(self.unit.inject(fn, "zipped"))
            anno.setanno(new_func, anno.CALLEE, fn)
            anno.setanno(new_func, anno.CALLEE_KIND, "primitive")
            node = A.Call(func=new_func, args=[self.atom(e.args[0].value, out)], keywords=[])
            return A.copy_location(node, e)
        if kind == "method":
            if isinstance(func.value, A.Name) and func.attr in MUTATORS:
                # `xs.append(v)` changes the object the name holds now, a cell's too: the name
                # itself, not a snapshot of it, so what the change adds reaches the name
                receiver = A.name(func.value.id)
            else:
                receiver = self.atom(func.value, out)
            new_func = A.Attribute(value=receiver, attr=func.attr, ctx=A.Load())
            anno.copyanno(func, new_func)
            A.copy_location(new_func, func)
        elif kind == "dynamic":
            new_func = self.atom(func, out)
            anno.copyanno(func, new_func)
        else:
            new_func = func  # a resolved dotted name: kept as written
        args = [self.element(a, out) for a in e.args]
        keywords = [A.keyword(arg=k.arg, value=self.atom(k.value, out)) for k in e.keywords]
        node = A.Call(func=new_func, args=args, keywords=keywords)
        return A.copy_location(node, e)

    def compare(self, e, out: list):
        left = self.atom(e.left, out)
        if len(e.ops) == 1:
            right = self.atom(e.comparators[0], out)
            return A.copy_location(A.Compare(left=left, ops=e.ops, comparators=[right]), e)
        # a < b < c  ->  r = a < b; if r: r = b < c   (b evaluated once, c only if needed)
        result = self.new_temp("cmp")
        right = self.atom(e.comparators[0], out)
        first = A.Compare(left=left, ops=[e.ops[0]], comparators=[right])
        self.emit(out, A.assign(result, first), self.origin)
        rest = A.Compare(left=right, ops=e.ops[1:], comparators=e.comparators[1:])
        A.copy_location(rest, e)
        inner: list = []
        self.emit(inner, A.assign(result, self.op(rest, inner)), self.origin)
        self.emit(out, A.if_(A.name(result), inner), self.origin)
        return A.name(result)

    def if_exp(self, e, out: list):
        test = self.atom(e.test, out)
        result = self.new_temp("ifexp")
        body: list = []
        self.emit(body, A.assign(result, self.op(e.body, body)), self.origin)
        orelse: list = []
        self.emit(orelse, A.assign(result, self.op(e.orelse, orelse)), self.origin)
        self.emit(out, A.if_(test, body, orelse), self.origin)
        return A.name(result)

    def bool_op(self, e, out: list):
        # a and b  ->  r = a; if r: r = b        a or b  ->  r = a; if not r: r = b
        result = self.new_temp("and_" if isinstance(e.op, A.And) else "or_")
        self.emit(out, A.assign(result, self.op(e.values[0], out)), self.origin)
        block = out
        for value in e.values[1:]:
            inner: list = []
            self.emit(inner, A.assign(result, self.op(value, inner)), self.origin)
            test = A.name(result)
            if isinstance(e.op, A.Or):
                test = A.UnaryOp(op=A.Not(), operand=test)
            self.emit(block, A.if_(test, inner), self.origin)
            block = inner
        return A.name(result)

    @staticmethod
    def check(unit: Unit) -> None:
        def operands(e):
            if isinstance(e, A.BinOp):
                return [e.left, e.right]
            if isinstance(e, A.UnaryOp):
                return [e.operand]
            if isinstance(e, A.Compare):
                return [e.left, *e.comparators]
            if isinstance(e, A.Call):
                return [a.value if isinstance(a, A.Starred) else a for a in e.args] + [
                    k.value for k in e.keywords
                ]
            return []

        for node in A.walk(unit.tree):
            if isinstance(node, A.Assign):
                for o in operands(node.value):
                    assert A.is_atom(o), A.to_source(node)
            if isinstance(node, (A.If, A.Return)):
                v = node.test if isinstance(node, A.If) else node.value
                assert v is None or A.is_atom(v) or isinstance(v, A.UnaryOp), A.to_source(node)
        assert not falls_through(unit.tree.body)


def _fold_constant(e):
    """``-1`` and ``-2.5`` are constants, not operations."""
    if (
        isinstance(e, A.UnaryOp)
        and isinstance(e.op, (A.USub, A.UAdd))
        and isinstance(e.operand, A.Constant)
        and isinstance(e.operand.value, (int, float, complex))
        and not isinstance(e.operand.value, bool)
    ):
        v = e.operand.value
        return A.copy_location(A.const(-v if isinstance(e.op, A.USub) else v), e)
    return None


def in_place_guard(unit, s, u, found):
    """``check_in_place(...)`` before the statement ``s`` of the update ``u`` (an
    ``aliasing.Update``): the names that may hold the value, compared with it when it runs."""
    fn = unit.ctx.runtime("check_in_place")
    func = A.name(unit.inject(fn, "check_in_place"))
    anno.setanno(func, anno.CALLEE, fn)
    anno.setanno(func, anno.CALLEE_KIND, "nondiff")
    text = u.text
    if u.mutation and unit.source is not None:  # the user's line, not its A-normal form
        text = unit.source.line(u.line).strip() or text
    args = [A.name(u.operand), A.const(u.op), A.const(text), A.const(u.line)]
    shown = tuple(unit.namer.meaning.get(n, n) for n in found.names)
    args += [A.const(found.held), A.const(shown)]
    args += [A.name(n) for n in found.names]
    keywords = [] if u.container is None else [A.keyword(arg="within", value=A.name(u.container))]
    stmt = A.expr_stmt(A.Call(func=func, args=args, keywords=keywords))
    A.copy_location(stmt, s)
    anno.setanno(stmt, anno.ALIAS_GUARD, s)
    return stmt


def _spread_displays(call):
    """``f(*(a, b), c, **{"k": v})`` is ``f(a, b, c, k=v)``: the same arguments, evaluated in
    the same order -- a call whose arguments are bound where it is written, not when it runs
    (for a function defined here: one not used as a value)."""
    if not any(isinstance(a, A.Starred) for a in call.args) and all(
        k.arg is not None for k in call.keywords
    ):
        return call
    args = []
    for a in call.args:
        if isinstance(a, A.Starred) and isinstance(a.value, (A.Tuple, A.List)):
            args += a.value.elts
        else:
            args.append(a)
    keywords = []
    for k in call.keywords:
        v = k.value
        if (
            k.arg is None
            and isinstance(v, A.Dict)
            and all(
                isinstance(key, A.Constant)
                and isinstance(key.value, str)
                and key.value.isidentifier()
                for key in v.keys
            )
        ):
            keywords += [A.keyword(arg=key.value, value=x) for key, x in zip(v.keys, v.values)]
        else:
            keywords.append(k)
    names = [k.arg for k in keywords if k.arg is not None]
    if len(set(names)) != len(names):
        return call  # (Python's TypeError, when it runs)
    node = A.Call(func=call.func, args=args, keywords=keywords)
    return A.copy_location(node, call)
