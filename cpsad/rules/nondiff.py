"""Functions and attributes whose results have no derivative: they pass through, with no adjoint code.

A call of one of these on a differentiable value is fine (``n = len(x)``, ``i = np.argmax(p)``);
the result is simply inactive. Only functions whose results do not change with the values of
their inputs, or change in steps, belong here: ``np.full(n, v)``, ``np.linspace(a, b)``,
``np.bincount(i, weights=w)``, ``np.unique``, ``np.histogram`` (its edges), ``np.arange(a, b,
h)``, ``np.heaviside(0, v)``, ``np.sign`` of complex numbers, ``getattr(x, "T")`` and
``np.random.normal(loc)`` do depend on their inputs, and have rules (or, for ``sorted`` and the
samplers, are an error on differentiable values) rather than a place here. A silent zero is the
worst wrong gradient: tests/test_fidelity_nondiff.py runs every entry on random inputs and
checks that its outputs do not move, and needs a sample for each.
"""

from __future__ import annotations

import builtins
import functools
import math

import numpy as np

from cpsad.rules.core import defnoderivative, defnondiff, defnondiff_attributes
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
    np.shape,
    np.ndim,
    np.size,
    np.zeros_like,
    np.ones_like,
    np.empty_like,
    np.zeros,
    np.ones,
    np.empty,
    np.eye,
    np.identity,
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
    keys_of,
    np.digitize,
    np.argpartition,
    np.lexsort,
    np.isin,
    np.array_equiv,
    np.isneginf,
    np.isposinf,
    np.isreal,
    np.iscomplex,
    np.iscomplexobj,
    np.isrealobj,
    np.isscalar,
    np.issubdtype,
    np.can_cast,
    np.shares_memory,
    np.may_share_memory,
    np.broadcast_shapes,
    np.indices,
    np.unravel_index,
    np.ravel_multi_index,
    np.tril_indices,
    np.triu_indices,
    np.diag_indices,
    np.bitwise_and,
    np.bitwise_or,
    np.bitwise_xor,
    np.invert,
    np.left_shift,
    np.right_shift,
    np.gcd,
    np.lcm,
    math.floor,
    math.ceil,
    math.trunc,
    math.isnan,
    math.isinf,
    math.isfinite,
    math.isclose,
    math.factorial,
    math.comb,
    math.perm,
    math.gcd,
)


def _getattr(object, name, default=None):
    """``getattr``'s parameters."""


# getattr(x, "T") reads the attribute ``.T``, with its rule (Activity and ShiftReset read it as
# the attribute); getattr of a name that is not a constant string, on a differentiable value,
# is an error -- never a silent zero for a value that does change with the input.
defnoderivative(getattr, _getattr)

# np.random: functions of sizes, seeds and states alone, and samplers of integers (steps in their
# parameters), have no derivative; every other sampler moves with its parameters (normal's loc and
# scale, uniform's bounds), and permutation, choice and shuffle move values about: a
# differentiable value passed to one of them is an error, not a zero.
RANDOM_STEPS = {
    "seed", "get_state", "set_state", "get_bit_generator", "set_bit_generator", "default_rng",
    "bytes", "rand", "randn", "random", "random_sample", "ranf", "sample", "standard_normal",
    "standard_cauchy", "standard_exponential", "randint", "random_integers", "binomial",
    "geometric", "hypergeometric", "logseries", "multinomial", "negative_binomial", "poisson",
    "zipf",
}  # fmt: skip
for _name in dir(np.random):
    _obj = getattr(np.random, _name)
    if (
        callable(_obj)
        and not isinstance(_obj, type)
        and not _name.startswith("_")
        and _name != "test"
    ):
        if _name in RANDOM_STEPS:
            defnondiff(_obj)
        else:
            defnoderivative(_obj, _obj)

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
    "argpartition",
    "searchsorted",
    "round",
)

# A decorator's bookkeeping: they copy a function's name and docstring onto its wrapper and
# return the wrapper itself, whose closure carries the derivatives (functions have no adjoint).
defnondiff(functools.wraps, functools.update_wrapper)
