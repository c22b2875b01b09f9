"""Rules of the helpers that cut an array's adjoint into the parts that made it, or join parts into
one (cpsad/rules/joining.py): ``parts``, and the adjoint rules of ``np.concatenate``, ``np.stack``
and the other joins, ``np.split``, ``np.repeat``, ``np.tile``, ``np.r_``, ``np.pad``, ``np.take``,
``np.take_along_axis``, ``np.sort`` and ``np.unique``, with their tangent rules that are helpers.

Every helper here is linear in the adjoint or tangent it takes, and only moves, copies or sums its
entries: the indices, orders, counts and shapes it reads are discrete. Its tangent rule is the
helper itself; its adjoint rule is its transpose -- the numpy function that undoes the cut (or the
join), the other direction's helper, or ``unparts`` and ``entries``, defined here with rules of
their own. The histogram's rules, which emitted code calls by name, have no derivative: a second
derivative through them is an error at the user's line, not a number.
"""

from __future__ import annotations

import numpy as np

from cpsad.rules import joining as jn
from cpsad.rules.core import defjvp, defnoderivative, defvjp
from cpsad.runtime import as_adjoint, as_array, item_adjoint, unpack_adjoint, zeros_like


def unparts(h, c, x):
    """The transpose of ``parts(c, x)`` in ``c``: the parts' adjoints ``h`` (nested ``Sparse``)
    as one array of ``c``'s shape and type, zeros where a part has none."""
    if h is None:
        return zeros_like(c)
    if isinstance(x, (list, tuple)):
        rows = [unparts(item_adjoint(h, i, None), c[i], v) for i, v in enumerate(x)]
        return np.stack(rows) if rows else zeros_like(c)
    return as_array(h).astype(np.result_type(c), copy=False)


def parts_c(g, ans, c, x):
    return unparts(g, c, x)


defvjp(jn.parts, c=parts_c)


def parts_c_jvp(t, ans, c, x):
    return jn.parts(t, x)


defjvp(jn.parts, c=parts_c_jvp)


def unparts_h(g, ans, h, c, x):
    return jn.parts(g, x)


defvjp(unparts, h=unparts_h)


def unparts_h_jvp(t, ans, h, c, x):
    return unparts(t, c, x)


defjvp(unparts, h=unparts_h_jvp)


def entries(h, xs):
    """The list of the adjoints of ``xs``'s entries from their container's adjoint ``h``, zeros
    where it has none: what joining them back (``np.concatenate``) takes."""
    return [item_adjoint(h, i, x) for i, x in enumerate(xs)]


def entries_h(g, ans, h, xs):
    """``g`` is the adjoint of the list, a ``Sparse``: in ``h``'s form (an array's rows: an
    array)."""
    return unpack_adjoint(g, h)


defvjp(entries, h=entries_h)


def entries_h_jvp(t, ans, h, xs):
    return entries(t, xs)


defjvp(entries, h=entries_h_jvp)


def concatenate_vjp_c(g, ans, c, out, arrays, axis=0):
    return np.concatenate(entries(g, arrays), axis=axis)


defvjp(jn.concatenate_vjp, c=concatenate_vjp_c)


def concatenate_vjp_c_jvp(t, ans, c, out, arrays, axis=0):
    return jn.concatenate_vjp(t, out, arrays, axis=axis)


defjvp(jn.concatenate_vjp, c=concatenate_vjp_c_jvp)


def stack_vjp_c(g, ans, c, out, arrays, axis=0):
    return np.stack(entries(g, arrays), axis=axis)


defvjp(jn.stack_vjp, c=stack_vjp_c)


def stack_vjp_c_jvp(t, ans, c, out, arrays, axis=0):
    return jn.stack_vjp(t, out, arrays, axis=axis)


defjvp(jn.stack_vjp, c=stack_vjp_c_jvp)


def hstack_vjp_c(g, ans, c, out, tup):
    return np.hstack(entries(g, tup))


defvjp(jn.hstack_vjp, c=hstack_vjp_c)


def hstack_vjp_c_jvp(t, ans, c, out, tup):
    return jn.hstack_vjp(t, out, tup)


defjvp(jn.hstack_vjp, c=hstack_vjp_c_jvp)


def vstack_vjp_c(g, ans, c, out, tup):
    return np.vstack(entries(g, tup))


defvjp(jn.vstack_vjp, c=vstack_vjp_c)


def vstack_vjp_c_jvp(t, ans, c, out, tup):
    return jn.vstack_vjp(t, out, tup)


defjvp(jn.vstack_vjp, c=vstack_vjp_c_jvp)


def column_stack_vjp_c(g, ans, c, out, tup):
    return np.column_stack(entries(g, tup))


defvjp(jn.column_stack_vjp, c=column_stack_vjp_c)


def column_stack_vjp_c_jvp(t, ans, c, out, tup):
    return jn.column_stack_vjp(t, out, tup)


defjvp(jn.column_stack_vjp, c=column_stack_vjp_c_jvp)


def dstack_vjp_c(g, ans, c, out, tup):
    return np.dstack(entries(g, tup))


defvjp(jn.dstack_vjp, c=dstack_vjp_c)


def dstack_vjp_c_jvp(t, ans, c, out, tup):
    return jn.dstack_vjp(t, out, tup)


defjvp(jn.dstack_vjp, c=dstack_vjp_c_jvp)


def split_vjp_c(g, ans, c, out, ary, indices_or_sections, axis=0):
    """The parts' adjoints: ``g`` cut where ``np.split`` cut (``array_split`` cuts the same)."""
    return as_adjoint(np.array_split(g, indices_or_sections, axis=axis))


defvjp(jn.split_vjp, c=split_vjp_c)


def split_vjp_c_jvp(t, ans, c, out, ary, indices_or_sections, axis=0):
    return jn.split_vjp(t, out, ary, indices_or_sections, axis=axis)


defjvp(jn.split_vjp, c=split_vjp_c_jvp)


def repeat_vjp_c(g, ans, c, out, a, repeats, axis=None):
    return np.repeat(g, repeats, axis=axis)


defvjp(jn.repeat_vjp, c=repeat_vjp_c)


def repeat_vjp_c_jvp(t, ans, c, out, a, repeats, axis=None):
    return jn.repeat_vjp(t, out, a, repeats, axis=axis)


defjvp(jn.repeat_vjp, c=repeat_vjp_c_jvp)


def tile_vjp_c(g, ans, c, out, A, reps):
    return np.tile(g, reps)


defvjp(jn.tile_vjp, c=tile_vjp_c)


def tile_vjp_c_jvp(t, ans, c, out, A, reps):
    return jn.tile_vjp(t, out, A, reps)


defjvp(jn.tile_vjp, c=tile_vjp_c_jvp)


# index_concatenated_vjp(c, out, key, concat) -- the blocks of np.r_'s adjoint -- and
# index_concatenated_jvp(v, key, concat) -- np.r_ of the items' tangents -- are linear in c (v),
# and each other's transposes; key and concat give only shapes.


def index_concatenated_vjp_c(g, ans, c, out, key, concat):
    return jn.index_concatenated_jvp(g, key, concat)


defvjp(jn.index_concatenated_vjp, c=index_concatenated_vjp_c)


def index_concatenated_vjp_c_jvp(t, ans, c, out, key, concat):
    return jn.index_concatenated_vjp(t, out, key, concat)


defjvp(jn.index_concatenated_vjp, c=index_concatenated_vjp_c_jvp)


def index_concatenated_jvp_v(g, ans, v, key, concat):
    return jn.index_concatenated_vjp(g, ans, key, concat)


defvjp(jn.index_concatenated_jvp, v=index_concatenated_jvp_v)


def index_concatenated_jvp_v_jvp(t, ans, v, key, concat):
    return jn.index_concatenated_jvp(t, key, concat)


defjvp(jn.index_concatenated_jvp, v=index_concatenated_jvp_v_jvp)


def pad_vjp_c(g, ans, c, out, array, pad_width, mode="constant", *, constant_values=0):
    """Cutting the padding off (or summing the copies) transposes to padding with zeros (or
    copying)."""
    return np.pad(g, pad_width, mode)


defvjp(jn.pad_vjp, c=pad_vjp_c)


def pad_vjp_c_jvp(t, ans, c, out, array, pad_width, mode="constant", *, constant_values=0):
    return jn.pad_vjp(t, out, array, pad_width, mode, constant_values=constant_values)


defjvp(jn.pad_vjp, c=pad_vjp_c_jvp)


def pad_jvp_v(g, ans, v, out, array, pad_width, mode="constant", *, constant_values=0):
    return jn.pad_vjp(g, out, array, pad_width, mode, constant_values=constant_values)


defvjp(jn.pad_jvp, v=pad_jvp_v)


def pad_jvp_v_jvp(t, ans, v, out, array, pad_width, mode="constant", *, constant_values=0):
    return jn.pad_jvp(t, out, array, pad_width, mode, constant_values=constant_values)


defjvp(jn.pad_jvp, v=pad_jvp_v_jvp)


def take_vjp_c(g, ans, c, out, a, indices, axis=None):
    return np.take(g, indices, axis=axis)


defvjp(jn.take_vjp, c=take_vjp_c)


def take_vjp_c_jvp(t, ans, c, out, a, indices, axis=None):
    return jn.take_vjp(t, out, a, indices, axis=axis)


defjvp(jn.take_vjp, c=take_vjp_c_jvp)


def take_along_axis_vjp_c(g, ans, c, out, arr, indices, axis=-1):
    return np.take_along_axis(g, indices, axis)


defvjp(jn.take_along_axis_vjp, c=take_along_axis_vjp_c)


def take_along_axis_vjp_c_jvp(t, ans, c, out, arr, indices, axis=-1):
    return jn.take_along_axis_vjp(t, out, arr, indices, axis=axis)


defjvp(jn.take_along_axis_vjp, c=take_along_axis_vjp_c_jvp)


def sort_vjp_c(g, ans, c, out, a, axis=-1):
    """The order of ``a`` is discrete: only the adjoint moves, and back is forward's gather."""
    return np.take_along_axis(g, np.argsort(a, axis=axis), axis)


defvjp(jn.sort_vjp, c=sort_vjp_c)


def sort_vjp_c_jvp(t, ans, c, out, a, axis=-1):
    return jn.sort_vjp(t, out, a, axis=axis)


defjvp(jn.sort_vjp, c=sort_vjp_c_jvp)


def unique_vjp_c(g, ans, c, out, ar):
    return np.ravel(g)[jn.first_occurrences(ar)]


defvjp(jn.unique_vjp, c=unique_vjp_c)


def unique_vjp_c_jvp(t, ans, c, out, ar):
    return jn.unique_vjp(t, out, ar)


defjvp(jn.unique_vjp, c=unique_vjp_c_jvp)

# The histogram's rules, called by name: a second derivative through them is an error (their
# parameters have no derivative here), not a number.
for _fn in (
    jn.histogram_a,
    jn.histogram_weights,
    jn.histogram_a_jvp,
    jn.histogram_weights_jvp,
    jn.histogram_bin_edges_a,
    jn.histogram_bin_edges_a_jvp,
):
    defnoderivative(_fn, _fn)
