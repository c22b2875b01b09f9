"""Which variables hold an array the function made itself (an analysis, not a pass).

A store into an array, ``out[key] = v``, runs as ``out = stored(out, key, v)``: a new array and
the name rebound (``shift_reset.array_store``). No one can tell that from Python's change in place
only if no one else holds the array -- no caller (a parameter's array is the caller's), no
enclosing or nested function (a cell), no other name (aliasing's guard refuses those when the
store runs). This module answers the first two: a variable is *fresh* in its function when every
value it is given there is a new object the function made --

* a call of a function that makes a new array (``np.zeros``, ``np.array``, ``x.copy()``, ...),
  arithmetic (``x * 2.0``), or a call of a local function whose every result is fresh in it;
* for a parameter, only of a function Desugar made of a loop (its name is generated): at every
  call of it -- the first, in the enclosing function, and its own recursive ones -- the argument
  is fresh where the call is;

and no nested function rebinds it (``nonlocal``) or holds it from its definition (a default, a
decorator's argument). A nested function that only reads it reads it through its cell when it
runs -- it sees the name rebound as it would have seen the array changed -- and the backward pass
reads the value each read saw (cps copies a cell's value at each read): such a variable is
fresh, and *shared*, so that Shift/Reset rebinds the cell itself (``out = stored_1`` after
``stored_1 = stored(out, key, v)``), not a version of the name only its own scope sees.
Computed as a greatest fixed point (a loop's parameter is fresh if its recursive calls pass it
fresh values), once per unit.
"""

from __future__ import annotations

import numpy as np

from . import anno
from . import astlib as A
from .activity import Scopes, called_local, statements
from .scoping import free_names, names, own_nodes, writes_through

# calls whose result is an array no one else holds (``np.array`` unless told not to copy)
MAKERS = {
    np.zeros,
    np.ones,
    np.empty,
    np.full,
    np.zeros_like,
    np.ones_like,
    np.empty_like,
    np.full_like,
    np.copy,
    np.arange,
    np.linspace,
    np.eye,
    np.identity,
    np.array,
}


# numpy functions whose result is a new array whatever they are given (a number, given numbers)
# -- besides every ufunc (``np.tanh(x)``, ``np.maximum(a, b)``) -- where no ``out=`` names the
# array to fill
COPIES = {
    np.concatenate,
    np.stack,
    np.vstack,
    np.hstack,
    np.sort,
    np.cumsum,
    np.cumprod,
    np.outer,
    np.dot,
    np.where,
    np.clip,
    np.tile,
    np.repeat,
    np.diff,
}


def fresh_variables(unit) -> dict[str, tuple[set[str], set[str], set[str]]]:
    """For each function (root ``""``, nested: its ``DEF_KEY``): its fresh variables, those of
    them that hold a new ndarray whatever the function was given (``np.zeros(n)``: where the
    kinds of the arguments are not known, the store is still known to be into an array), and
    those of them a nested function reads (shared through their cells)."""
    scopes = Scopes(unit.tree)
    values: dict = {}  # (key, name) -> the values assigned to it, or None: something else binds it
    calls: dict = {}  # key of a local function -> [(caller key, call)]
    captured: set = set()
    read: set = set()  # (key, name): a nested function reads the variable through its cell
    loads: dict = {}  # (key, name) -> how many times the function (or one inside it) reads it
    for key, fdef in scopes.functions():
        for s in statements(fdef.body):
            if isinstance(s, A.FunctionDef):
                captured |= {(key, n) for n in _captured(s)}
                read |= {(key, n) for n in free_names(s)}
            for n in A.walk(s):
                if isinstance(n, A.Name) and isinstance(n.ctx, A.Load):
                    loads[(key, n.id)] = loads.get((key, n.id), 0) + 1
            for n in A.walk(s) if isinstance(s, (A.Assign, A.Expr, A.Return)) else ():
                if isinstance(n, A.Call):
                    g, _ = called_local(scopes, n)
                    if g is not None:
                        calls.setdefault(g, []).append((key, n))
            if not isinstance(s, A.Assign):
                continue
            t = s.targets[0]
            if isinstance(t, A.Name):
                if values.get((key, t.id), []) is not None:
                    values.setdefault((key, t.id), []).append(s.value)
            elif isinstance(t, (A.Tuple, A.List)):
                for e in t.elts:
                    if isinstance(e, A.Name):
                        values[(key, e.id)] = None
    candidates = set()
    for key, fdef in scopes.functions():
        params = set(A.arg_names(fdef.args))
        loop = bool(key) and fdef.name in unit.namer.generated
        for name in scopes.locals[key]:
            var = (key, name)
            if var not in captured and (loop or name not in params):
                candidates.add(var)
    returns = {
        key: [n.value for n in own_nodes(fdef) if isinstance(n, A.Return)]
        for key, fdef in scopes.functions()
    }

    def argument(g, p, call):
        """What ``call`` passes for the parameter ``p`` of the local function ``g``."""
        gdef = scopes.node[g]
        names = [a.id for a in gdef.args.posonlyargs + gdef.args.args]
        for k in call.keywords:
            if k.arg == p:
                return k.value
        if p in names and names.index(p) < len(call.args):
            a = call.args[names.index(p)]
            return None if isinstance(a, A.Starred) else a
        return None

    def fixed_point(made) -> set:
        """The greatest set of candidates whose every value ``made(value, found, key)`` accepts,
        and, for a loop's parameter, whose every call passes a member."""
        found = set(candidates)
        changed = True
        while changed:
            changed = False
            for var in list(found):
                key, name = var
                vs = values.get(var, [])
                if vs is None:  # bound by unpacking a tuple: not followed
                    ok = False
                elif name in A.arg_names(scopes.node[key].args):
                    ok = all(made(v, found, key) for v in vs) and all(
                        isinstance(a, A.Name) and scopes.resolve(caller, a.id) in found
                        for caller, call in calls.get(key, [])
                        for a in [argument(key, name, call)]
                    )
                else:
                    ok = bool(vs) and all(made(v, found, key) for v in vs)
                if not ok:
                    found.discard(var)
                    changed = True
        return found

    def local_result(value, found) -> bool | None:
        """For a call of a local function: is every result it returns in ``found``?"""
        g, _ = called_local(scopes, value)
        if g is None:
            return None
        return all(
            isinstance(r, A.Name) and scopes.resolve(g, r.id) in found
            for r in returns.get(g, [None])
        )

    stored = unit.ctx.runtime("stored")

    def copy_of(value, found, key) -> bool:
        """A temporary of A-normal form, read only here, that is itself in ``found``: ``out =
        zeros``, how Normalize writes ``out = np.zeros(n)`` when ``out`` is a cell. Nothing
        else reads the temporary, so one name holds the array. (A copy of a variable of the
        user's, ``o = out``, is not fresh: both names would hold the array, and forward mode
        has no guard for a store into one while the other is read.)"""
        return (
            isinstance(value, A.Name)
            and value.id in unit.namer.temps
            and loads.get((key, value.id), 0) == 1
            and scopes.resolve(key, value.id) in found
        )

    def an_array(value, found, key) -> bool:
        """A new ndarray, whatever it was given: ``np.zeros(n)``, ``stored(...)``."""
        if copy_of(value, found, key):
            return True
        if not isinstance(value, A.Call):
            return False
        local = local_result(value, found)
        if local is not None:
            return local
        fn = anno.getanno(value.func, anno.CALLEE)
        if fn is stored:
            return True
        if (isinstance(fn, np.ufunc) or _in(fn, COPIES)) and not any(
            k.arg == "out" for k in value.keywords
        ):  # (given numbers, a ufunc makes a numpy scalar: a store into it raises, as in Python)
            return True
        return _in(fn, MAKERS) and not (
            fn is np.array and any(k.arg == "copy" for k in value.keywords)
        )

    def new_object(value, found, key) -> bool:
        """A new object of any kind: arithmetic, ``x.copy()``, or an array as above."""
        if isinstance(value, (A.BinOp, A.UnaryOp)) or copy_of(value, found, key):
            return True
        if isinstance(value, A.Call):
            local = local_result(value, found)
            if local is not None:
                return local
            if anno.getanno(value.func, anno.CALLEE_KIND) == "method":
                return value.func.attr == "copy" and not value.args
        return an_array(value, found, key)

    fresh, arrays = fixed_point(new_object), fixed_point(an_array)
    out: dict[str, tuple[set, set, set]] = {
        key: (set(), set(), set()) for key, _ in scopes.functions()
    }
    for key, name in fresh:
        out[key][0].add(name)
        if (key, name) in read:
            out[key][2].add(name)
    for key, name in arrays:
        out[key][1].add(name)
    return out


def _in(fn, table) -> bool:
    try:
        return fn in table
    except TypeError:  # unhashable
        return False


def _captured(fdef) -> set[str]:
    """The variables of the enclosing scope that the nested function ``fdef`` holds on to in a
    way a rebinding of the name cannot follow: those it (or a function in it) rebinds, and those
    its defaults and decorators read when it is defined (a default keeps the array itself)."""
    around = [*fdef.decorator_list, *fdef.args.defaults, *filter(None, fdef.args.kw_defaults)]
    return writes_through(fdef) | {n for e in around for n in names(e)}


def has_stores(tree) -> bool:
    """Does any function in ``tree`` store into part of a variable (``x[i] = v``)?"""
    return any(
        isinstance(s, A.Assign)
        and isinstance(s.targets[0], A.Subscript)
        and isinstance(s.targets[0].value, A.Name)
        for fdef in A.function_defs(tree)
        for s in statements(fdef.body)
    )
