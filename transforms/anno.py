"""Annotations: facts an analysis attaches to a node for the rewrites that follow.

They live in one attribute, ``node._cpsad`` (a dict), so ``copy.deepcopy`` keeps them and printing
ignores them. Keys used across passes are listed here, once.

>>> from cpsad.transforms import astlib as A
>>> n = A.name("x")
>>> _ = setanno(n, CALLEE, len)
>>> getanno(n, CALLEE) is len
True
"""

from __future__ import annotations

_ATTR = "_cpsad"

# Keys. Each is set by one pass and read by later ones.
CALLEE = "callee"  # resolve: the object a call's func refers to; for a local function, its DEF_KEY
DEF_KEY = (
    "def_key"  # resolve: a unique key of each nested FunctionDef (unit.locals[key] describes it)
)
CALLEE_KIND = "callee_kind"  # resolve: "primitive" | "nondiff" | "user" | "unknown" | "dynamic"
TEMP = "temp"  # normalize: the name is a temporary the normalizer introduced
CELLS = "cells"  # resolve: names of a FunctionDef shared with nested functions that rebind them
CELL_WRITE = "cell_write"  # normalize: the Assign stores into a cell variable
AUG = "aug"  # normalize: the statement `y = y op v` an augmented assignment became (an aliasing.Update)
ALIASED_AUG = (
    "aliased_aug"  # normalize: ... and something else may read y's value after it (Sharing)
)
SHARED_MUTATION = "shared_mutation"  # normalize: `xs.append(v)` / `d[k] = v` whose container
# someone else may read after (an aliasing.Sharing): shift/reset checks it where it is active
KEEP_UNCHANGED = "keep_unchanged"  # activity: of a call statement, [(variable, message)]: arrays
# a helper may change in place that the backward pass reads (checked around the call when it runs)
HELD_READERS = "held_readers"  # aliasing: of such a call, for each argument (position or
# keyword) the variables that may hold its array (by objects made here, not by what unknown code
# may hold)
HELD_ARGS = "held_args"  # aliasing: of a call of a user function, the positions (or keywords)
# of its arguments whose values the caller (or its callers) may still read after it returns
ALIAS_GUARD = "alias_guard"  # normalize: a check_in_place call; the value is the update it guards
ACTIVE = "active"  # activity: the statement computes an active value (needs an adjoint)
FIELD = "field"  # activity: the Attribute `p.size` (`p.T`) may read a struct's field named as an
# array's attribute (``unit.FIELDS``, a struct made here): its derivative flows, as a field's
VARIED = "varied"  # activity: an update `y = y op v` (AUG) whose value depends on the inputs
SHIFT = "shift"  # shift/reset: the With node is a shift; value is a ShiftInfo
LOOP = "loop"  # desugar: the FunctionDef is a loop's, called once, right after it is defined
CONSUMED = "consumed"  # desugar: the Call (`reversed(xs)`, ...) is consumed where it is written
ITERATOR_OF = "iterator_of"  # desugar: the func of `iter([...])` a map/filter kept in a name became
CONT = "continuation"  # cps: the FunctionDef is a generated continuation
BOOKKEEPING = "bookkeeping"  # cps: an adjoint's initialization, a function's epilogue, a join call
GUARD = "guard"  # cps, shift/reset: an acc(x_bar, e), `x_bar if x_bar is not None else zeros`,
# or the `if x_bar is not None:` around the rules of the value x_bar is the adjoint of
# this transformation made (simplify specializes those, not the ones in code it transforms)


def getanno(node, key, default=None):
    return getattr(node, _ATTR, {}).get(key, default)


def setanno(node, key, value):
    d = getattr(node, _ATTR, None)
    if d is None:
        d = {}
        setattr(node, _ATTR, d)
    d[key] = value
    return node


def hasanno(node, key) -> bool:
    return key in getattr(node, _ATTR, {})


def delanno(node, key):
    getattr(node, _ATTR, {}).pop(key, None)


def copyanno(src, dst):
    d = getattr(src, _ATTR, None)
    if d:
        setattr(dst, _ATTR, dict(d))
    return dst
