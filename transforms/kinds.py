"""After Kinds, every name is annotated with what it may hold: a Python number, a numpy scalar, an
array, or something else.

A transformation is specialized to the kinds of its arguments at the first call (``x`` a float,
``W`` an array), and this analysis carries them through the program: arithmetic on Python numbers
gives Python numbers, the ``math`` module gives floats, numpy functions of scalars give numpy
scalars. The rewrites read the result: a statement whose value is a scalar needs no
``unbroadcast`` in its adjoint rules, and the adjoint of a Python number can start at ``0.0``
instead of an absent ``None`` -- so a float program's backward pass is float arithmetic, with no
detour through numpy. Kinds are sets of possibilities (``{"number"}``, ``{"number", "npscalar"}``);
anything not known is everything, and everything is never wrong, only slower.

>>> join({"number"}, {"npscalar"}) == {"number", "npscalar"}
True
>>> sorted(_arith({"number"}, {"number", "array"}))
['array', 'number']
"""

from __future__ import annotations

import math

import numpy as np

from . import anno
from . import astlib as A
from . import scoping as S
from .activity import Scopes, assigned_names, called_local, statements
from .fresh import MAKERS
from .unit import (
    ARRAY,
    NOT_NUMERIC,
    NPSCALAR,
    NUMBER,
    OTHER,
    SCALAR,
    SEQUENCE,
    UNKNOWN,
    Unit,
)

RETURN = "<return>"  # the pseudo-variable of what a local function returns
ENTRIES = 8  # of a tuple (a loop's carried values, say), the entries whose kinds are followed


def join(a, b):
    return frozenset(a) | frozenset(b)


def is_scalar(kind) -> bool:
    return bool(kind) and frozenset(kind) <= SCALAR


def is_number(kind) -> bool:
    return frozenset(kind) == {NUMBER}


class Kinds:
    name = "kinds"
    invariant = "every name annotated with what it may hold: number, numpy scalar, array, other"

    def run(self, unit: Unit) -> None:
        # Activity, the pass before, changes no statement: its function tree and the names each
        # function mentions are this tree's (for speed: a scan of every scope, not two)
        scopes = unit.scopes
        unit.scopes = None
        if scopes is None or scopes.root is not unit.tree:
            scopes = Scopes(unit.tree)
        kinds = _Watched()  # (scope key, name) -> frozenset
        given = unit.arg_kinds or {}
        for p in A.arg_names(unit.tree.args):
            kinds[("", p)] = frozenset(given.get(p, UNKNOWN))
        for key, fdef in scopes.functions():
            if key and unit.locals[key].escapes:
                for p in A.arg_names(fdef.args):
                    kinds[(key, p)] = UNKNOWN
            for p in A.arg_names(fdef.args):  # a parameter holding a tuple: nothing known of it
                for i in range(ENTRIES):
                    kinds[(key, f"{p}#{i}")] = UNKNOWN
        # Rounds until nothing changes; a change makes another round only where a statement
        # read the entry before it changed in this one (what it computed from may be stale):
        # straight-line code, each name set before it is read, takes one round.
        again = True
        while again:
            again = False
            kinds.read = set()
            for key, fdef in scopes.functions():
                for s in statements(fdef.body):
                    for var, kind in self.transfer(unit, scopes, key, s, kinds):
                        if var is None:
                            continue
                        old = dict.get(kinds, var)
                        # (``join``, written out for speed: nine entries a statement)
                        new = frozenset(kind) if old is None else old | kind
                        if new != old:
                            kinds[var] = new
                            again = again or var in kinds.read
        unit.kinds = {}
        for key, fdef in scopes.functions():
            names = scopes.names.get(key)
            if names is None:
                names = S.names(fdef) | set(A.arg_names(fdef.args))  # (nested functions too)
            view = {}
            for n in names:
                v = scopes.resolve(key, n)
                view[n] = kinds.get(v, UNKNOWN) if v is not None else UNKNOWN
            unit.kinds[key] = view
        shown = {
            n: "/".join(sorted(k))
            for n, k in sorted(unit.kinds[""].items())
            if n in unit.active_names and k != UNKNOWN
        }
        unit.notes[self.name] = [
            ", ".join(f"{n}: {k}" for n, k in shown.items()) or "nothing known"
        ]

    def transfer(self, unit, scopes, key, s, kinds):
        """(variable, kind) pairs a statement contributes."""

        def kind(e):
            if isinstance(e, A.Constant):
                if isinstance(e.value, bool) or e.value is None or isinstance(e.value, str):
                    return frozenset({OTHER})
                if isinstance(e.value, (int, float)):
                    return frozenset({NUMBER})
                return UNKNOWN
            if isinstance(e, A.Name):
                v = scopes.resolve(key, e.id)
                if v is None:
                    return UNKNOWN
                return kinds.get(v, frozenset())
            return UNKNOWN

        def result(g):  # what a call of the local function g returns
            return kinds.get((g, RETURN), frozenset())

        def entries(var):
            """The pseudo-variables of the entries of a tuple held in ``var``."""
            return [None if var is None else (var[0], f"{var[1]}#{i}") for i in range(ENTRIES)]

        def entry_kinds(v):
            """The kinds of the entries of the tuple ``v`` (a display, a name, a local call)."""
            if isinstance(v, (A.Tuple, A.List)) and len(v.elts) <= ENTRIES:
                known = [kind(e) if not isinstance(e, A.Starred) else UNKNOWN for e in v.elts]
                return known + [UNKNOWN] * (ENTRIES - len(known))
            if isinstance(v, A.Name):
                return [kinds.get(e, frozenset()) for e in entries(scopes.resolve(key, v.id))]
            if isinstance(v, A.Call) and anno.getanno(v.func, anno.CALLEE_KIND) == "local":
                g = anno.getanno(v.func, anno.CALLEE)
                return [kinds.get((g, f"{RETURN}#{i}"), frozenset()) for i in range(ENTRIES)]
            return [UNKNOWN] * ENTRIES

        out = []
        if isinstance(s, A.Return):
            v = s.value if s.value is not None else A.const(None)
            out.append(((key, RETURN), kind(v) if isinstance(v, (A.Name, A.Constant)) else UNKNOWN))
            out += list(zip(entries((key, RETURN)), entry_kinds(v)))
        if isinstance(s, A.Assign):
            targets = assigned_names(s)
            v = s.value
            t = s.targets[0]
            if len(targets) == 1 and isinstance(t, A.Name):
                var = scopes.resolve(key, targets[0])
                out.append((var, self.expression(unit, v, kind, result)))
                out += list(zip(entries(var), entry_kinds(v)))  # a tuple's entries, if one
            elif isinstance(t, (A.Tuple, A.List)) and all(isinstance(e, A.Name) for e in t.elts):
                known = entry_kinds(v) if len(t.elts) <= ENTRIES else [UNKNOWN] * len(t.elts)
                for e, k in zip(t.elts, known):  # a, b = t: the entries' kinds
                    var = scopes.resolve(key, e.id)
                    out.append((var, k))
                    out += list(zip(entries(var), [UNKNOWN] * ENTRIES))
            else:
                for name in targets:
                    var = scopes.resolve(key, name)
                    out += [(var, UNKNOWN)] + list(zip(entries(var), [UNKNOWN] * ENTRIES))
            out += self.call_edges(unit, scopes, key, v, kind)
        elif isinstance(s, A.Expr):
            out += self.call_edges(unit, scopes, key, s.value, kind)
        return out

    @staticmethod
    def call_edges(unit, scopes, key, value, kind):
        """A call of a local function gives its parameters the kinds of the arguments."""
        g, gdef = called_local(scopes, value)
        if gdef is None:
            return []
        params = A.arg_names(gdef.args)
        out = [((g, p), kind(a)) for p, a in zip(params, value.args)]
        out += [((g, k.arg), kind(k.value)) for k in value.keywords if k.arg in params]
        bound = {p for p, _ in zip(params, value.args)} | {k.arg for k in value.keywords}
        out += [((g, p), UNKNOWN) for p in params if p not in bound]  # defaults: not tracked
        return out

    @staticmethod
    def expression(unit, v, kind, result) -> frozenset:
        if isinstance(v, (A.Name, A.Constant)):
            return kind(v)
        if isinstance(v, (A.Tuple, A.List)):
            return frozenset({SEQUENCE})
        if isinstance(v, A.BinOp):
            a, b = kind(v.left), kind(v.right)
            if isinstance(v.op, A.MatMult):
                return UNKNOWN - {SEQUENCE}
            out = _arith(a, b) - {SEQUENCE}
            # only `+` joins sequences (both operands one), only `*` repeats one (by a count)
            if isinstance(v.op, A.Add) and SEQUENCE in a and SEQUENCE in b:
                out |= {SEQUENCE}
            if isinstance(v.op, A.Mult) and any(
                SEQUENCE in p and (NUMBER in q or OTHER in q) for p, q in ((a, b), (b, a))
            ):
                out |= {SEQUENCE}
            return out
        if isinstance(v, A.UnaryOp):
            if isinstance(v.op, A.Not):
                return frozenset({OTHER})
            return kind(v.operand) - {SEQUENCE}
        if isinstance(v, A.Subscript):
            of = kind(v.value)
            if of and of <= {ARRAY}:
                return frozenset({ARRAY, NPSCALAR})  # an element or a part of an array
            if of == {SEQUENCE} and isinstance(v.slice, A.Slice):
                return of  # a part of a list or tuple
            return UNKNOWN
        if isinstance(v, A.Compare):
            return UNKNOWN  # a bool, or an array of them
        if isinstance(v, A.Call):
            fn = anno.getanno(v.func, anno.CALLEE)
            if anno.getanno(v.func, anno.CALLEE_KIND) == "local":
                return result(fn)
            if _makes_an_array(fn):
                return frozenset({ARRAY})
            if (
                anno.getanno(v.func, anno.CALLEE_KIND) == "method"
                and v.func.attr in _ARRAY_METHODS
                and kind(v.func.value)
                and kind(v.func.value) <= {ARRAY}
            ):
                return frozenset({ARRAY})
            args = [kind(a) for a in v.args if not isinstance(a, A.Starred)]
            if anno.getanno(v.func, anno.CALLEE_KIND) == "primitive":
                mod = getattr(fn, "__module__", None) or ""
                if mod == "math" or fn in (math.fabs,):
                    return frozenset({NUMBER}) if all(is_scalar(a) for a in args) else UNKNOWN
                if fn in (abs, float) and args and is_number(args[0]):
                    return frozenset({NUMBER})
                if isinstance(fn, np.ufunc):  # elementwise: a scalar of scalars
                    if args and all(is_scalar(a) for a in args) and not v.keywords:
                        return SCALAR
                    return UNKNOWN - {SEQUENCE}  # an array or a scalar, never a list
            return UNKNOWN
        return UNKNOWN


# numpy functions whose result is an ndarray, whatever they are given (a 0-d one for a number):
# those that make a new one (``transforms.fresh``), and ``np.asarray``, which may return its own
_ARRAY_MAKERS = MAKERS | {np.asarray}


# methods of an ndarray that return one (a copy, or a view)
_ARRAY_METHODS = {"copy", "astype", "reshape", "ravel", "flatten", "transpose", "squeeze"}


class _Watched(dict):
    """The kinds found so far; ``read``: the entries looked up (``get``) since it was set."""

    __slots__ = ("read",)

    def get(self, key, default=None):
        self.read.add(key)
        return dict.get(self, key, default)


def _makes_an_array(fn) -> bool:
    try:
        return fn in _ARRAY_MAKERS
    except TypeError:  # unhashable
        return False


def _arith(a, b) -> frozenset:
    """The kinds ``x op y`` may have, for ``x`` of kind ``a`` and ``y`` of kind ``b``."""
    if not a or not b:
        return frozenset(a) | frozenset(b)  # one side not known yet
    out: set = set()
    for x in a:
        for y in b:
            if x in NOT_NUMERIC or y in NOT_NUMERIC:
                return UNKNOWN
            if ARRAY in (x, y):
                out.add(ARRAY)
            elif x == y == NUMBER:
                out.add(NUMBER)
            else:
                out |= SCALAR  # a numpy scalar op a number: numpy decides which
    return frozenset(out)
