"""Functions and attributes whose results have no derivative: they pass through, with no adjoint code.

A call of one of these on a differentiable value is fine (``n = len(x)``, ``i = np.argmax(p)``);
the result is simply inactive.
"""

from __future__ import annotations

import builtins

import numpy as np

from cpsad.rules.core import defnondiff, defnondiff_attributes
from cpsad.runtime import keys_of

defnondiff(
    builtins.len,
    builtins.range,
    builtins.int,
    builtins.bool,
    builtins.round,
    builtins.isinstance,
    builtins.print,
    builtins.type,
    builtins.str,
    builtins.repr,
    builtins.id,
    builtins.hash,
    builtins.callable,
    builtins.hasattr,
    builtins.getattr,
    builtins.sorted,
    np.shape,
    np.ndim,
    np.size,
    np.zeros_like,
    np.ones_like,
    np.empty_like,
    np.full_like,
    np.zeros,
    np.ones,
    np.empty,
    np.full,
    np.eye,
    np.identity,
    np.arange,
    np.linspace,
    np.argmax,
    np.argmin,
    np.argsort,
    np.argwhere,
    np.nonzero,
    np.flatnonzero,
    np.searchsorted,
    np.floor,
    np.ceil,
    np.round,
    np.around,
    np.rint,
    np.trunc,
    np.fix,
    np.sign,
    np.floor_divide,
    np.isfinite,
    np.isnan,
    np.isinf,
    np.signbit,
    np.equal,
    np.not_equal,
    np.less,
    np.less_equal,
    np.greater,
    np.greater_equal,
    np.logical_and,
    np.logical_or,
    np.logical_not,
    np.logical_xor,
    np.any,
    np.all,
    np.allclose,
    np.isclose,
    np.array_equal,
    np.count_nonzero,
    np.result_type,
    np.dtype,
    np.iinfo,
    np.finfo,
    np.unique,
    np.bincount,
    np.histogram,
    keys_of,
)
for _name in dir(np.random):
    _obj = getattr(np.random, _name)
    if (
        callable(_obj)
        and not isinstance(_obj, type)
        and not _name.startswith("_")
        and _name != "test"
    ):
        defnondiff(_obj)

defnondiff_attributes(
    "shape",
    "ndim",
    "dtype",
    "size",
    "itemsize",
    "nbytes",
    "strides",
    "argmax",
    "argmin",
    "argsort",
    "nonzero",
    "any",
    "all",
)
