"""What Aliasing knows of the functions it cannot see into: which of numpy's functions and an
array's methods return a new value, which may return (a view of) an argument, which change
their object.

The invariant: a function or method is listed as fresh (``_fresh_callee``, ``FRESH_METHODS``,
``_NEW_ARRAYS``) only if its result never shares memory with an argument; every numpy function
that may return a view is in ``VIEWS`` (found by calling each on arrays and asking
``numpy.shares_memory``); every method that changes its object in place is in
``MUTATING_METHODS``. Anything not listed is assumed to return what it was given.
"""

from __future__ import annotations

import types

import numpy

from .. import astlib as A

VIEWS = {  # numpy functions whose result may share memory with an argument (or be it)
    "array_split",
    "asanyarray",
    "asarray",
    "asarray_chkfinite",
    "ascontiguousarray",
    "asfortranarray",
    "asmatrix",
    "atleast_1d",
    "atleast_2d",
    "atleast_3d",
    "broadcast_arrays",
    "broadcast_to",
    "diag",
    "diagonal",
    "diff",
    "dsplit",
    "einsum",
    "expand_dims",
    "fix",
    "flip",
    "fliplr",
    "flipud",
    "from_dlpack",
    "histogram",
    "histogram_bin_edges",
    "histogramdd",
    "hsplit",
    "imag",
    "isneginf",
    "isposinf",
    "ix_",
    "matrix_power",
    "matrix_transpose",
    "moveaxis",
    "nan_to_num",
    "permute_dims",
    "polyder",
    "polyint",
    "ravel",
    "real",
    "real_if_close",
    "require",
    "reshape",
    "rollaxis",
    "rot90",
    "split",
    "squeeze",
    "swapaxes",
    "transpose",
    "trim_zeros",
    "unstack",
    "vsplit",
}
# (found by calling every function of numpy, numpy.linalg and numpy.fft on arrays and asking
# numpy.shares_memory, plus those whose documentation says they return views)

FRESH_METHODS = {  # methods of an array whose result is a new value
    "all",
    "any",
    "argmax",
    "argmin",
    "argsort",
    "astype",
    "clip",
    "count",
    "cumprod",
    "cumsum",
    "dot",
    "flatten",
    "index",
    "item",
    "max",
    "mean",
    "min",
    "nonzero",
    "prod",
    "round",
    "std",
    "sum",
    "tolist",
    "trace",
    "var",
}
SHALLOW_METHODS = {"copy"}  # a new container of the same elements (an array's copy: a new array)
CONTAINER_MUTATORS = {"append", "extend", "insert", "add", "update", "setdefault"}
NONE_METHODS = {"append", "extend", "insert", "add", "update", "clear", "sort", "reverse", "remove"}
IMMUTABLE_ATTRIBUTES = {"shape", "ndim", "size", "dtype", "itemsize", "nbytes", "__name__"}
FRESH_BUILTINS = {
    abs,
    all,
    any,
    bool,
    callable,
    chr,
    complex,
    divmod,
    float,
    format,
    hasattr,
    hash,
    id,
    int,
    isinstance,
    issubclass,
    len,
    ord,
    pow,
    print,
    range,
    repr,
    round,
    str,
    sum,
    type,
}


_CONTAINERS = (list, dict, set, bytearray, numpy.ndarray)
_IMMUTABLE_GLOBALS = (
    types.ModuleType,
    types.FunctionType,
    types.BuiltinFunctionType,
    type,
    numpy.ufunc,
    int,
    float,
    complex,
    str,
    bytes,
)


def _fresh_callee(fn, call) -> bool:
    """Does a call of the primitive or non-differentiable ``fn`` return a value that shares
    nothing with its arguments?"""
    if any(k.arg in ("out", "copy") for k in call.keywords):
        return False
    if isinstance(fn, numpy.ufunc):
        return len(call.args) <= fn.nin and not any(isinstance(a, A.Starred) for a in call.args)
    module = getattr(fn, "__module__", None) or ""
    name = getattr(fn, "__name__", "")
    if module == "math":
        return True
    if module.startswith("numpy"):
        return name not in VIEWS
    try:
        return fn in FRESH_BUILTINS
    except TypeError:  # unhashable
        return False


# numpy functions whose fresh result (``_fresh_callee``) is an array, never a list or a tuple
_NEW_ARRAYS = frozenset(
    getattr(numpy, n)
    for n in (
        "zeros ones full eye identity zeros_like ones_like full_like empty empty_like array "
        "arange linspace dot vdot inner outer matmul tensordot einsum kron sum mean prod std var "
        "cumsum cumprod stack vstack hstack concatenate where clip trace sort"
    ).split()
)


_FULL_REDUCTIONS = tuple(
    getattr(numpy, n)
    for n in ("sum", "mean", "prod", "max", "min", "amax", "amin", "std", "var", "median")
    if hasattr(numpy, n)
) + (numpy.linalg.norm,)
_NUMBER_KINDS = frozenset({"number", "npscalar"})  # immutable: an update rebinds

MUTATING_METHODS = frozenset(
    {"append", "extend", "insert", "update", "setdefault", "pop", "popitem", "remove", "clear"}
    | {"sort", "reverse", "fill", "resize", "itemset", "put", "setflags", "add", "discard"}
)
