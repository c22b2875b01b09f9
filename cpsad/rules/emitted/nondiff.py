"""Emitted code's functions whose results do not change with the values of their inputs: shapes,
counts, zeros, masks, and ``like``'s stand-ins, read only for their shapes; a check that returns
nothing.

Every function here is non-differentiable: code transformed again passes its result through,
with no adjoint and no tangent. (A family's own functions of shapes, counts and masks --
``inverse_axes``, ``transposed_times``, ``zeros_along``, ``norm_axes``, ... -- are marked so
beside their definitions.)
"""

from __future__ import annotations

from cpsad.rules import joining as jn
from cpsad.rules import linalg as la
from cpsad.rules import reductions as rd
from cpsad.rules.core import defnondiff
from cpsad.runtime import (
    check_growable,
    check_in_place,
    check_unchanged,
    index_step,
    kept_copy,
    like,
    scalar_seed,
    tangent_zeros,
    zeros_like,
)

# Results that do not change with the values of the inputs: shapes, counts, zeros, masks, and
# `like`'s stand-ins, read only for their shapes; a check that returns nothing.
defnondiff(
    check_growable,
    check_in_place,
    check_unchanged,
    kept_copy,
    zeros_like,
    index_step,
    like,
    tangent_zeros,
    jn.first_occurrences,
    scalar_seed,
    rd.count,
    jn.linspace_weights,
    la.tensordot_subscripts,
    la.inner_subscripts,
    la.dot_subscripts,
)
