"""After Shapes, a transformation specialized to its arguments' shapes knows the shape of every
name it can prove one of -- and ShiftReset drops an ``unbroadcast`` where nothing was broadcast.

``cpsad.shaped(f)`` (shown by ``transform(shaped(f)).at(*args)``) specializes a transformation
to the shapes of the arrays a call brings (``W`` a (64, 784) array, ``params`` a dict of arrays,
each its own), as jax.jit does: the key of the specialization names them (``SHAPES`` in the kinds key),
so a call with other shapes gets a transformation of its own. This pass carries them through
the program, as Kinds carries kinds: an elementwise operation broadcasts its operands' shapes,
``@`` takes the rows of one and the columns of the other, an array indexed by an integer loses
its first axis, ``d["k"]`` of a dict argument is the shape of its entry, a loop's carried value
keeps its shape if every iteration does. Everything else is not known, and not known is never
wrong, only slower: the adjoint keeps its ``unbroadcast``, which finds at run time that the
shapes agree.

The rewrite that reads it is ShiftReset's (``without_unbroadcast``): an elementwise operation
whose operand has the shape of the result needs no sum of its adjoint -- the generic code's
``unbroadcast(g, x)`` compares the two shapes on every call, the staged code compared them once.

Sound where it says something: a value is ("a", shape, kind) only if every assignment of the
name gives that shape (a join of two shapes is unknown), containers are followed only where
nothing in the function may change one in place (a store into it, a method call on it, passing
it to a function), and nothing at all is said of a function that sets an array's ``shape``.

>>> broadcast((64, 1), (3,))
(64, 3)
>>> broadcast((2,), (3,)) is None
True
>>> matmul_shape((32, 64), (64, 128)), matmul_shape((64, 128), (128,)), matmul_shape((3,), (3,))
((32, 128), (64,), ())
"""

from __future__ import annotations

import ast as _ast

import numpy as np

from . import anno
from . import astlib as A
from .activity import Scopes, called_local, statements
from .unit import Unit

SHAPES = "*shapes*"  # the key of the specialization (kinds) that holds the arguments' shapes
RETURN = "<return>"
TOP = "?"  # not known

# what a method call or a store may do to a container: it is followed no further
_MUTATING = {
    "append",
    "extend",
    "insert",
    "remove",
    "pop",
    "popitem",
    "clear",
    "update",
    "setdefault",
    "sort",
    "reverse",
    "resize",
    "__setitem__",
    "__delitem__",
    "__iadd__",
}


# ---------------------------------------------------------------------- the key


def describe(value):
    """The abstract value of an argument: an exact ndarray's shape and dtype kind, a dict of
    them (string keys), a tuple or list of them; anything else not known (None)."""
    if type(value) is np.ndarray:
        return ("a", tuple(value.shape), value.dtype.kind)
    if type(value) is dict and value and all(type(k) is str for k in value):
        items = tuple((k, describe(v)) for k, v in value.items())
        if any(d is None for _, d in items):
            return None
        return ("d", tuple(sorted(items)))
    if type(value) in (tuple, list) and value and len(value) <= 16:
        items = tuple(describe(v) for v in value)
        return None if any(d is None for d in items) else ("t", items)
    return None


def shapes_key(names, values) -> tuple:
    """The ``(SHAPES, entries)`` item of a kinds key for a call's arguments, or () if no
    argument has a shape to specialize to. (Remembered by a cheaper fingerprint: a call pays a
    walk over its arguments' arrays, not the key's text.)"""
    raw = tuple(map(_fingerprint, values))
    memo = (tuple(names), raw)
    key = _KEYS.get(memo)
    if key is None:
        key = callee_key({name: describe(value) for name, value in zip(names, values)})
        if len(_KEYS) > 4096:
            _KEYS.clear()
        _KEYS[memo] = key
    return key


_KEYS: dict = {}  # (names, fingerprints) -> key


def callee_key(known: dict) -> tuple:
    """The ``SHAPES`` item of a key from ``{parameter: abstract value}`` (None or TOP: not
    known, left out) -- a call's arguments, or what a caller proved of a callee's -- or ()."""
    entries = [f"{p}={v!r}" for p, v in known.items() if isinstance(v, tuple)]
    return ((SHAPES, tuple(sorted(entries))),) if entries else ()


def _fingerprint(value):
    """What ``describe`` depends on, cheaply: shapes and dtypes, a dict's keys, the types."""
    t = type(value)
    if t is np.ndarray:
        return (value.shape, value.dtype.char)
    if t is dict:
        return (t, tuple((k, _fingerprint(v)) for k, v in value.items()))
    if t is tuple or t is list:
        return (t, tuple(map(_fingerprint, value))) if len(value) <= 16 else t
    return t


def given_shapes(arg_kinds) -> dict:
    """``{parameter: abstract value}`` of a specialization's ``SHAPES`` entry."""
    out = {}
    for entry in (arg_kinds or {}).get(SHAPES, ()):
        name, _, text = entry.partition("=")
        out[name] = _ast.literal_eval(text)
    return out


# ---------------------------------------------------------------------- shape arithmetic


def broadcast(a: tuple, b: tuple):
    """numpy's broadcast of two shapes, or None where they do not broadcast."""
    n = max(len(a), len(b))
    a = (1,) * (n - len(a)) + tuple(a)
    b = (1,) * (n - len(b)) + tuple(b)
    out = []
    for x, y in zip(a, b):
        if x == y or y == 1:
            out.append(x)
        elif x == 1:
            out.append(y)
        else:
            return None
    return tuple(out)


def matmul_shape(a: tuple, b: tuple):
    """The shape of ``x @ y`` for operands of shapes ``a`` and ``b``, or None (an error)."""
    if not a or not b:
        return None
    if len(a) == 1 and len(b) == 1:
        return () if a == b else None
    if len(b) == 1:
        return a[:-1] if a[-1] == b[0] else None
    if len(a) == 1:
        return b[:-2] + b[-1:] if a[0] == b[-2] else None
    if a[-1] != b[-2]:
        return None
    batch = broadcast(a[:-2], b[:-2])
    return None if batch is None else batch + (a[-2], b[-1])


def _kind_of(op, a: str, b: str) -> str:
    if isinstance(op, A.Div):
        return "f"
    if a == b == "i" and isinstance(op, (A.Add, A.Sub, A.Mult, A.FloorDiv, A.Mod)):
        return "i"
    if "f" in (a, b) and a in "fi" and b in "fi":
        return "f"
    return TOP


def join(a, b):
    return a if a == b else TOP


def is_array(v) -> bool:
    return isinstance(v, tuple) and v[0] == "a"


# ---------------------------------------------------------------------- the pass


class Shapes:
    name = "shapes"
    invariant = "each name's shape, where the arguments' shapes prove it (specialized units only)"

    def run(self, unit: Unit) -> None:
        unit.shapes = {}
        given = given_shapes(unit.arg_kinds)
        if not given:
            return  # not specialized to shapes: nothing to say, and nothing spent
        scopes = unit.scopes
        if scopes is None or scopes.root is not unit.tree:
            scopes = unit.scopes = Scopes(unit.tree)
        if _sets_a_shape(unit.tree):
            unit.notes[self.name] = ["a shape is set in place: nothing known"]
            return
        containers = self.containers = not _may_change_containers(unit.tree)
        values: dict = {}
        for p in A.arg_names(unit.tree.args):
            values[("", p)] = given.get(p, TOP) if containers or is_array(given.get(p)) else TOP
        for key, fdef in scopes.functions():
            if key and unit.locals[key].escapes:
                for p in A.arg_names(fdef.args):
                    values[(key, p)] = TOP
        again = True
        while again:
            again = False
            for key, fdef in scopes.functions():
                for s in statements(fdef.body):
                    for var, v in self.transfer(scopes, key, s, values):
                        if var is None:
                            continue
                        old = values.get(var)
                        new = v if old is None else join(old, v)
                        if new != old:
                            values[var] = new
                            again = True
        unit.shapes = {key: {} for key, _ in scopes.functions()}
        for (k, n), v in values.items():
            if isinstance(v, tuple) and k in unit.shapes:
                unit.shapes[k][n] = v
        # (a nested function reads its parents' names: each scope sees what resolves for it)
        for key in list(unit.shapes):
            parent = scopes.parent.get(key)
            while parent is not None:
                for n, v in unit.shapes.get(parent, {}).items():
                    if scopes.resolve(key, n) == (parent, n):
                        unit.shapes[key].setdefault(n, v)
                parent = scopes.parent.get(parent)
        known = unit.shapes.get("", {})
        unit.notes[self.name] = [
            ", ".join(
                f"{n}: {v[1]}"
                for n, v in sorted(known.items())
                if n in unit.active_names and is_array(v)
            )
            or "nothing known"
        ]

    def transfer(self, scopes, key, s, values):
        def value(e):
            if isinstance(e, A.Constant):
                if type(e.value) is int:
                    return ("a", (), "i")
                if type(e.value) is float:
                    return ("a", (), "f")
                return TOP
            if isinstance(e, A.Name):
                var = scopes.resolve(key, e.id)
                if var is None:
                    return TOP
                return values.get(var, None)  # None: nothing assigned yet
            return TOP

        def returned(g):  # what a call of the local function g returns (None: not known yet)
            return values.get((g, RETURN))

        out = []
        if isinstance(s, A.Return):
            v = A.const(None) if s.value is None else s.value
            out.append(((key, RETURN), self.expression(v, value, returned)))
        elif isinstance(s, A.Assign):
            t = s.targets[0]
            v = self.expression(s.value, value, returned)
            if isinstance(t, A.Name):
                if v is not None:
                    out.append((scopes.resolve(key, t.id), v))
            elif isinstance(t, (A.Tuple, A.List)) and all(isinstance(e, A.Name) for e in t.elts):
                if v is None:
                    pass
                elif isinstance(v, tuple) and v[0] == "t" and len(v[1]) == len(t.elts):
                    for e, item in zip(t.elts, v[1]):
                        out.append((scopes.resolve(key, e.id), item))
                else:
                    for e in t.elts:
                        out.append((scopes.resolve(key, e.id), TOP))
            else:
                for n in _stored_names(t):
                    out.append((scopes.resolve(key, n), TOP))
            out += self.call_edges(scopes, s.value, value)
        elif isinstance(s, A.Expr):
            out += self.call_edges(scopes, s.value, value)
        elif not isinstance(s, (A.If, A.FunctionDef)):  # anything else that binds a name
            for n in _stored_names(s):
                out.append((scopes.resolve(key, n), TOP))
        return out

    @staticmethod
    def call_edges(scopes, v, value):
        """A call of a local function gives its parameters the arguments' shapes."""
        g, gdef = called_local(scopes, v)
        if gdef is None:
            return []
        params = A.arg_names(gdef.args)
        out = []
        for p, a in zip(params, v.args):
            av = TOP if isinstance(a, A.Starred) else value(a)
            if av is not None:
                out.append(((g, p), av))
        for k in v.keywords:
            if k.arg in params:
                kv = value(k.value)
                if kv is not None:
                    out.append(((g, k.arg), kv))
        bound = {p for p, _ in zip(params, v.args)} | {k.arg for k in v.keywords}
        out += [((g, p), TOP) for p in params if p not in bound]
        if any(isinstance(a, A.Starred) for a in v.args):
            out += [((g, p), TOP) for p in params]
        return out

    def expression(self, v, value, returned):
        """The abstract value of an expression of normalized code (None: not known yet)."""
        if isinstance(v, (A.Name, A.Constant)):
            return value(v)
        if isinstance(v, (A.Tuple, A.List)):
            if not self.containers or any(isinstance(e, A.Starred) for e in v.elts):
                return TOP
            items = tuple(value(e) for e in v.elts)
            if any(i is None for i in items):
                return None
            return ("t", items)
        if isinstance(v, A.BinOp):
            a, b = value(v.left), value(v.right)
            if a is None or b is None:
                return None
            if not (is_array(a) and is_array(b)):
                return TOP
            if isinstance(v.op, A.MatMult):
                shape = matmul_shape(a[1], b[1])
                return TOP if shape is None else ("a", shape, _kind_of(A.Mult(), a[2], b[2]))
            shape = broadcast(a[1], b[1])
            return TOP if shape is None else ("a", shape, _kind_of(v.op, a[2], b[2]))
        if isinstance(v, A.UnaryOp):
            a = value(v.operand)
            if a is None:
                return None
            if is_array(a) and isinstance(v.op, (A.USub, A.UAdd)):
                return a
            return TOP
        if isinstance(v, A.Compare) and len(v.ops) == 1:
            a, b = value(v.left), value(v.comparators[0])
            if a is None or b is None:
                return None
            if (
                is_array(a)
                and is_array(b)
                and not isinstance(v.ops[0], (A.Is, A.IsNot, A.In, A.NotIn))
            ):
                shape = broadcast(a[1], b[1])
                return TOP if shape is None else ("a", shape, "b")
            return TOP
        if isinstance(v, A.Subscript):
            of = value(v.value)
            if of is None:
                return None
            index = v.slice
            if isinstance(of, tuple) and of[0] == "d":
                if isinstance(index, A.Constant) and type(index.value) is str:
                    return dict(of[1]).get(index.value, TOP)
                return TOP
            if isinstance(of, tuple) and of[0] == "t":
                if isinstance(index, A.Constant) and type(index.value) is int:
                    if -len(of[1]) <= index.value < len(of[1]):
                        return of[1][index.value]
                return TOP
            if is_array(of) and of[1]:
                i = value(index) if isinstance(index, (A.Name, A.Constant)) else TOP
                if i is None:
                    return None
                if is_array(i) and i[1] == () and i[2] == "i":  # an integer: the first axis goes
                    return ("a", of[1][1:], of[2])
            return TOP
        if isinstance(v, A.Attribute):
            of = value(v.value)
            if of is None:
                return None
            if is_array(of) and v.attr == "T":
                return ("a", of[1][::-1], of[2])
            return TOP
        if isinstance(v, A.Call):
            return self.call(v, value, returned)
        return TOP

    def call(self, v, value, returned):
        kind = anno.getanno(v.func, anno.CALLEE_KIND)
        fn = anno.getanno(v.func, anno.CALLEE)
        if kind == "local":
            return returned(fn)
        if fn is len and len(v.args) == 1 and not v.keywords:
            return ("a", (), "i")
        if kind != "primitive" or any(isinstance(a, A.Starred) for a in v.args):
            return TOP
        args = [value(a) for a in v.args]
        if any(a is None for a in args):
            return None
        if not all(is_array(a) for a in args):
            return TOP
        if fn in _REDUCTIONS and len(args) == 1:
            return _reduced(args[0], v.keywords, "f" if fn is np.mean else args[0][2])
        if v.keywords:
            return TOP
        if _named(fn, "cpsad.runtime", "as_sequence") and len(args) == 1:
            return args[0]  # an array's rows: the array itself
        if isinstance(fn, np.ufunc) and fn.nin == len(args) and fn.nout == 1:
            shape = args[0][1]
            for a in args[1:]:
                shape = broadcast(shape, a[1])
                if shape is None:
                    return TOP
            return ("a", shape, "f" if all(a[2] in "fi" for a in args) else TOP)
        return TOP


_REDUCTIONS = (np.sum, np.mean, np.max, np.min, np.prod, np.amax, np.amin)


def _reduced(a, keywords, kind):
    """The value of a reduction of ``a`` along ``axis`` (an int or a tuple of them, constants),
    with ``keepdims`` (a constant), or TOP."""
    axis, keep = None, False
    for k in keywords:
        if not isinstance(k.value, (A.Constant, A.Tuple)):
            return TOP
        if k.arg == "axis":
            if isinstance(k.value, A.Tuple):
                if not all(
                    isinstance(e, A.Constant) and type(e.value) is int for e in k.value.elts
                ):
                    return TOP
                axis = tuple(e.value for e in k.value.elts)
            elif type(k.value.value) is int or k.value.value is None:
                axis = k.value.value
            else:
                return TOP
        elif k.arg == "keepdims" and isinstance(k.value, A.Constant):
            if type(k.value.value) is not bool:
                return TOP
            keep = k.value.value
        else:
            return TOP
    shape = a[1]
    n = len(shape)
    if axis is None:
        axes = set(range(n))
    else:
        axes = set()
        for i in axis if isinstance(axis, tuple) else (axis,):
            if not -n <= i < n:
                return TOP
            axes.add(i % n)
        if isinstance(axis, tuple) and len(axes) != len(axis):
            return TOP
    if keep:
        return ("a", tuple(1 if i in axes else d for i, d in enumerate(shape)), kind)
    return ("a", tuple(d for i, d in enumerate(shape) if i not in axes), kind)


def _named(fn, module: str, name: str) -> bool:
    """Is ``fn`` the function ``module.name`` (by name: this package does not import cpsad)?"""
    return getattr(fn, "__module__", None) == module and getattr(fn, "__name__", None) == name


# functions that change none of their arguments (what ``_may_change_containers`` lets pass)
_READ_ONLY_BUILTINS = {"len", "isinstance", "range", "min", "max", "print", "type", "int", "float"}


def _stored_names(node) -> list[str]:
    return [
        n.id
        for n in A.walk(node)
        if isinstance(n, A.Name) and isinstance(getattr(n, "ctx", None), (A.Store, A.Del))
    ]


def _sets_a_shape(tree) -> bool:
    """Does the function set an array's ``shape`` (``x.shape = ...``) or resize one in place?"""
    for n in A.walk(tree):
        if (
            isinstance(n, A.Attribute)
            and isinstance(n.ctx, A.Store)
            and n.attr in ("shape", "strides")
        ):
            return True
        if isinstance(n, A.Call) and isinstance(n.func, A.Attribute) and n.func.attr == "resize":
            return True
    return False


def _may_change_containers(tree) -> bool:
    """May the function change a dict, list or tuple in place -- a store into a subscript, a
    method that changes its receiver, a container passed to a function that is not a primitive
    (which may change it)? Then no container's entries are followed."""
    for n in A.walk(tree):
        if isinstance(n, A.Subscript) and isinstance(getattr(n, "ctx", None), (A.Store, A.Del)):
            return True
        if isinstance(n, A.AugAssign):
            return True
        if isinstance(n, A.Call):
            if isinstance(n.func, A.Attribute) and n.func.attr in _MUTATING:
                return True
            kind = anno.getanno(n.func, anno.CALLEE_KIND)
            if kind in ("primitive", "local"):
                continue
            fn = anno.getanno(n.func, anno.CALLEE)
            if kind == "nondiff" and getattr(fn, "__module__", None) == "builtins":
                if getattr(fn, "__name__", None) in _READ_ONLY_BUILTINS:
                    continue
            return True
    return False
