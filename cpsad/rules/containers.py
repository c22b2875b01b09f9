"""Rules of Python's builtins over sequences: ``sum``, ``max``, ``min``, ``list``, ``tuple``, ``len``;
and a dict's ``d.get(key, default)``.

The tangent of a sequence is the same sequence of its entries' tangents (an array's for an array).
"""

from __future__ import annotations

import itertools
import math
import statistics

import numpy as np

from cpsad.rules.core import (
    DISCRETE,
    broadcast_like,
    defcomposite,
    defjvp,
    defjvp_method,
    defmethod,
    defnondiff,
    defvjp,
)
from cpsad.runtime import (
    Sparse,
    array_attribute,
    attribute,
    attribute_adjoint,
    attribute_tangent,
    dict_view,
    dict_view_adjoint,
    dict_view_tangent,
    field,
    field_adjoint,
    field_container_tangent,
    field_key,
    field_tangent,
    fields_without,
    fields_zeroed,
    first_extreme,
    foreign,
    getitem_adjoint,
    is_field,
    item_adjoint,
    method_read,
    replaced_tangent,
    rows_of,
    struct_adjoint,
    struct_adjoint_t,
    struct_of,
    struct_replaced,
    struct_tangent,
    swap_entries,
    tangent_zeros,
    unbroadcast,
    zeros_like,
    zipped,
)


def spread(g, seq):
    """The adjoint of every entry of ``seq`` when each went into the result unchanged (a sum)."""
    if isinstance(seq, np.ndarray):
        return np.broadcast_to(g, seq.shape[:1] + np.shape(g)) + zeros_like(seq)
    return Sparse({i: unbroadcast(g, v) for i, v in enumerate(seq)})


def sum_builtin(g, ans, iterable, start=0):
    """``sum(xs)``: each entry gets the adjoint of the total."""
    return spread(g, iterable)


def sum_builtin_start(g, ans, iterable, start=0):
    return unbroadcast(g, start)


defvjp(sum, sum_builtin, sum_builtin_start)


def sum_builtin_jvp(t, ans, iterable, start=0):
    return broadcast_like(sum(t), ans)


def sum_builtin_start_jvp(t, ans, iterable, start=0):
    return broadcast_like(t, ans)


defjvp(sum, sum_builtin_jvp, sum_builtin_start_jvp)


def fsum_seq(g, ans, seq):
    """``math.fsum(xs)``: each entry gets the adjoint of the total (as ``sum``'s; the value is
    fsum's own, exactly rounded)."""
    return spread(g, seq)


defvjp(math.fsum, fsum_seq)


def fsum_seq_jvp(t, ans, seq):
    return math.fsum(t)


defjvp(math.fsum, fsum_seq_jvp)


def mean_data(g, ans, data):
    """``statistics.mean(xs)`` (``fmean``): each entry gets the adjoint of the mean over their
    number (the value is the function's own)."""
    return spread(g / len(data), data)


def mean_data_jvp(t, ans, data):
    return math.fsum(t) / len(data)


defvjp(statistics.mean, mean_data)
defjvp(statistics.mean, mean_data_jvp)


def unweighted_count(data, weights):
    """``len(data)``, for ``statistics.fmean(data)``; with weights, a ``TypeError`` (its rule
    is of the unweighted mean: ``np.average(data, weights=w)`` is differentiated)."""
    if weights is not None:
        raise TypeError(
            "cpsad: statistics.fmean with weights has no derivative rule; write "
            "np.average(data, weights=w), which cpsad differentiates"
        )
    return len(data)


defnondiff(unweighted_count)


def fmean_data(g, ans, data, weights=None):
    """``statistics.fmean(xs)``: as ``statistics.mean``'s (with weights: refused when it runs)."""
    return spread(g / unweighted_count(data, weights), data)


def fmean_data_jvp(t, ans, data, weights=None):
    return math.fsum(t) / unweighted_count(data, weights)


defvjp(statistics.fmean, fmean_data, None)
defjvp(statistics.fmean, fmean_data_jvp, None)


def max_builtin(g, ans, *items):
    """``max(a, b, ...)`` or ``max(xs)``: the adjoint goes to the entry that was chosen (the first
    one, on ties); one adjoint per positional argument."""
    if len(items) > 1:
        i = next(j for j, v in enumerate(items) if v is ans or np.array_equal(v, ans))
        return tuple(g if j == i else zeros_like(v) for j, v in enumerate(items))
    seq = items[0]
    if foreign(seq):  # max(x) of a Dask or CuPy array: the entry found there, not read
        return (getitem_adjoint(g, seq, chosen(seq, ans)),)
    i = next(j for j, v in enumerate(seq) if v is ans or np.array_equal(v, ans))
    if isinstance(seq, np.ndarray):
        out = zeros_like(seq)
        out[i] = g
        return (out,)
    return (Sparse({i: g}),)


defvjp(max, items=max_builtin)
defvjp(min, items=max_builtin)


def max_builtin_jvp(t, ans, *items):
    """The tangent of the entry that was chosen (the first one, on ties). ``t`` is the tuple of
    the positional arguments' tangents: ``max(a, b)`` or ``max(xs)``."""
    if len(items) > 1:
        return t[chosen(items, ans)]
    return t[0][chosen(items[0], ans)]


def chosen(seq, ans) -> int:
    """Which entry of ``seq`` ``max`` or ``min`` returned (of an array of another library, the
    first equal to it, found there: a 0-d array of that library)."""
    if foreign(seq):
        return np.argmax(seq == ans)
    return next(j for j, v in enumerate(seq) if v is ans or np.array_equal(v, ans))


defjvp(max, items=max_builtin_jvp)
defjvp(min, items=max_builtin_jvp)


def list_builtin(g, ans, iterable=()):
    """``list(xs)`` / ``tuple(xs)``: the same entries."""
    if isinstance(iterable, np.ndarray) and isinstance(g, dict):
        if any(foreign(v) for v in g.values()):  # (rows of another library: stacked there)
            return rows_of(g, iterable)
        out = zeros_like(iterable)
        for i, v in g.items():
            out[i] = v
        return out
    if isinstance(g, dict) and foreign(iterable):
        return rows_of(g, iterable)
    return g


defvjp(list, list_builtin)
defvjp(tuple, list_builtin)


def list_builtin_jvp(t, ans, iterable=()):
    """The same entries (the rows of an array); a dict's keys, or an iterable of no tangent
    (a string among the lists ``zip`` reads), have none."""
    return tangent_zeros(ans) if t is None or isinstance(iterable, dict) else list(t)


def tuple_builtin_jvp(t, ans, iterable=()):
    return tangent_zeros(ans) if t is None or isinstance(iterable, dict) else tuple(t)


defjvp(list, list_builtin_jvp)
defjvp(tuple, tuple_builtin_jvp)


def sort_order(keys, reverse):
    """The indices of ``keys`` in the order ``sorted`` puts them (the same stable sort): an
    order, with no derivative."""
    return sorted(range(len(keys)), key=keys.__getitem__, reverse=reverse)


defnondiff(sort_order)


def sorted_builtin(iterable, /, *, key=None, reverse=False):
    """``sorted``: the items picked in the sorted order, each carrying its own adjoint (``key``
    called once an item, as Python calls it)."""
    items = list(iterable)
    keys = items if key is None else [key(item) for item in items]
    return [items[i] for i in sort_order(keys, reverse)]


defcomposite(sorted, sorted_builtin)


def reversed_builtin(seq, /):
    """``reversed(xs)`` consumed where it is made (``list(reversed(xs))``, ``sum(...)``, a
    comprehension's iterable; ``for v in reversed(xs)`` is a loop's own, Desugar's): the list of
    its items, last first."""
    return list(seq)[::-1]


defcomposite(reversed, reversed_builtin, one_shot=True)


def zip_builtin(*iterables, strict=False):
    """``zip(xs, ys)`` consumed where it is made (``list(zip(xs, ys))``; a ``for`` over it is a
    loop's own, Desugar's): the tuples of the items at each position, as many as the shortest
    has (``strict``: all as long, or the ValueError Python raises)."""
    columns = [list(it) for it in iterables]
    lengths = [len(c) for c in columns]
    if strict:
        same_lengths(lengths)
    n = min(lengths) if lengths else 0
    return [tuple([c[i] for c in columns]) for i in range(n)]


def same_lengths(lengths):
    """``zip(..., strict=True)``'s check: Python's own ValueError where the lengths differ."""
    for _ in zip(*[range(n) for n in lengths], strict=True):
        pass


defnondiff(same_lengths)


def dict_builtin(*args, **kwargs):
    """``dict(pairs)``, ``dict(mapping)``, ``dict(..., k=v)``: a new dict of the same entries,
    each value carrying its own adjoint (``dict(a=x)`` alone is a display, Normalize's)."""
    if len(args) > 1:
        raise TypeError(f"dict expected at most 1 argument, got {len(args)}")
    out = {}
    if args:
        source = args[0]
        if hasattr(source, "keys"):
            for key in source.keys():
                out[key] = source[key]
        else:
            for key, value in source:
                out[key] = value
    for key, value in kwargs.items():
        out[key] = value
    return out


defcomposite(dict, dict_builtin)


def enumerate_builtin(iterable, start=0):
    """``enumerate(xs, start)`` consumed where it is made: the pairs of each count and item."""
    items = list(iterable)
    return [(start + i, items[i]) for i in range(len(items))]


defcomposite(zip, zip_builtin, one_shot=True)
defcomposite(enumerate, enumerate_builtin, one_shot=True)


def prod_builtin(iterable, /, *, start=1):
    """``math.prod(xs, start=s)``: the product, multiplied in order from ``start``."""
    total = start
    for v in iterable:
        total = total * v
    return total


def dist_builtin(p, q, /):
    """``math.dist(p, q)``: the Euclidean distance of two points, as ``math.hypot`` of the
    differences (``math.dist`` requires points of one dimension: so does this)."""
    p, q = list(p), list(q)
    if len(p) != len(q):
        raise ValueError("both points must have the same number of dimensions")
    return math.sqrt(sum([(a - b) * (a - b) for a, b in zip(p, q)]))


defcomposite(math.prod, prod_builtin)
defcomposite(math.dist, dist_builtin)


def product_builtin(*iterables, repeat=1):
    """``itertools.product(xs, ys, repeat=r)`` consumed where it is made: the tuples of the
    items at each tuple of positions, in its order."""
    pools = [list(it) for it in iterables] * repeat
    out = [()]
    for pool in pools:
        out = [t + (v,) for t in out for v in pool]
    return out


def accumulate_builtin(iterable, func=None, *, initial=None):
    """``itertools.accumulate(xs, func, initial=v)`` consumed where it is made: the running
    totals (sums, or ``func`` of the total and each item)."""
    out = []
    total = initial
    started = initial is not None
    if started:
        out.append(total)
    for v in iterable:
        if not started:
            total = v
            started = True
        elif func is None:
            total = total + v
        else:
            total = func(total, v)
        out.append(total)
    return out


defcomposite(itertools.product, product_builtin, one_shot=True)
defcomposite(itertools.accumulate, accumulate_builtin, one_shot=True)


def combination_indices(n, r, kind):
    """The index tuples ``itertools.combinations`` (``kind`` "c"), ``permutations`` ("p") or
    ``combinations_with_replacement`` ("r") makes of ``range(n)``: positions, with no
    derivative."""
    if kind == "c":
        return list(itertools.combinations(range(n), r))
    if kind == "r":
        return list(itertools.combinations_with_replacement(range(n), r))
    return list(itertools.permutations(range(n), r))


defnondiff(combination_indices)


def combinations_builtin(iterable, r):
    """``itertools.combinations(xs, r)`` consumed where it is made: the tuples of the items at
    each combination of positions, in its order, each item carrying its own adjoint."""
    items = list(iterable)
    return [tuple([items[i] for i in idx]) for idx in combination_indices(len(items), r, "c")]


def combinations_with_replacement_builtin(iterable, r):
    """``itertools.combinations_with_replacement(xs, r)``, as ``combinations``."""
    items = list(iterable)
    return [tuple([items[i] for i in idx]) for idx in combination_indices(len(items), r, "r")]


def permutations_builtin(iterable, r=None):
    """``itertools.permutations(xs, r)``, as ``combinations``."""
    items = list(iterable)
    n = len(items)
    return [
        tuple([items[i] for i in idx]) for idx in combination_indices(n, n if r is None else r, "p")
    ]


defcomposite(itertools.combinations, combinations_builtin, one_shot=True)
defcomposite(
    itertools.combinations_with_replacement, combinations_with_replacement_builtin, one_shot=True
)
defcomposite(itertools.permutations, permutations_builtin, one_shot=True)


defnondiff(first_extreme)  # (``max(xs, key=f)``: ``runtime.max_keyed``)


def get_method(g, ans, x, key, default=None):
    """``d.get(key, default)``: the entry, where the key is there (it was refused: a method with
    no rule), else the default."""
    return getitem_adjoint(g, x, key) if key in x else zeros_like(x)


def get_method_default(g, ans, x, key, default=None):
    return zeros_like(default) if key in x else g


defmethod("get", get_method, DISCRETE, get_method_default)


def get_method_jvp(t, ans, x, key, default=None):
    return t[key] if key in x else tangent_zeros(ans)


def get_method_default_jvp(t, ans, x, key, default=None):
    return tangent_zeros(ans) if key in x else t


defjvp_method("get", get_method_jvp, DISCRETE, get_method_default_jvp)


# ``vals = d.values()`` (``.items()``, ``.keys()``) of a differentiable dict, as a value: a list
# of the entries (``runtime.dict_view``). Its helpers are linear in their first argument and each
# other's transposes (second order and beyond); ``d`` gives only keys and shapes.


def dict_view_d(g, ans, d, which):
    return dict_view_adjoint(g, d, which)


defvjp(dict_view, dict_view_d, DISCRETE)


def dict_view_d_jvp(t, ans, d, which):
    return dict_view_tangent(t, d, which)


defjvp(dict_view, dict_view_d_jvp, None)


def dict_view_adjoint_g(g, ans, c, d, which):
    return dict_view_tangent(g, d, which)


defvjp(dict_view_adjoint, dict_view_adjoint_g, DISCRETE, DISCRETE)


def dict_view_adjoint_g_jvp(t, ans, c, d, which):
    return dict_view_adjoint(t, d, which)


defjvp(dict_view_adjoint, dict_view_adjoint_g_jvp, None, None)


def dict_view_tangent_t(g, ans, t, d, which):
    return dict_view_adjoint(g, d, which)


defvjp(dict_view_tangent, dict_view_tangent_t, DISCRETE, DISCRETE)


def dict_view_tangent_t_jvp(t_dot, ans, t, d, which):
    return dict_view_tangent(t_dot, d, which)


defjvp(dict_view_tangent, dict_view_tangent_t_jvp, None, None)


# --------------------------------------------------------------------------- fields of structs


def field_obj(g, ans, obj, name):
    """``obj.name`` of a namedtuple, dataclass or registered pytree: the field's adjoint, in a
    ``Sparse`` keyed as the gradient's structure is (``runtime.field_key``)."""
    return field_adjoint(g, obj, name)


defvjp(field, field_obj, DISCRETE)


def field_obj_jvp(t, ans, obj, name):
    return field_tangent(t, obj, name)


defjvp(field, field_obj_jvp, None)


# ``obj.T`` where ``obj`` may be a struct (Activity's FIELD): its field's rules where it is one,
# else the array attribute's own (``runtime.attribute_adjoint``, ``attribute_tangent``: each the
# other's transpose, for the next order)


def attribute_obj(g, ans, obj, name):
    return attribute_adjoint(g, obj, name)


defvjp(attribute, attribute_obj, DISCRETE)


def attribute_obj_jvp(t, ans, obj, name):
    return attribute_tangent(t, obj, name)


defjvp(attribute, attribute_obj_jvp, None)
defnondiff(is_field)
defnondiff(array_attribute)


def attribute_adjoint_g(g, ans, c, obj, name):
    return (
        item_adjoint(g, field_key(obj, name), c)
        if is_field(obj, name)
        else attribute_tangent(g, obj, name)
    )


defvjp(attribute_adjoint, attribute_adjoint_g, DISCRETE, DISCRETE)


def attribute_adjoint_g_jvp(t, ans, c, obj, name):
    return attribute_adjoint(t, obj, name)


defjvp(attribute_adjoint, attribute_adjoint_g_jvp, None, None)


def attribute_tangent_v(g, ans, v, obj, name):
    return attribute_adjoint(g, obj, name)


defvjp(attribute_tangent, attribute_tangent_v, DISCRETE, DISCRETE)


def attribute_tangent_v_jvp(t, ans, v, obj, name):
    return attribute_tangent(t, obj, name)


defjvp(attribute_tangent, attribute_tangent_v_jvp, None, None)


# A namedtuple or dataclass made in differentiated code (``P(a, b=c)``, which Resolve writes as
# ``struct_of(P, (a, c), ("a", "b"))``): each value's adjoint is its field's. The helpers are
# linear in their first argument and each other's transposes (second order and beyond); the
# struct itself (``ans``) and the values (``values``) give only keys and shapes.


def struct_of_values(g, ans, cls, values, names):
    return struct_adjoint(g, ans, names)


defvjp(struct_of, DISCRETE, struct_of_values, DISCRETE)


def struct_of_values_jvp(t, ans, cls, values, names):
    return struct_tangent(t, cls, values, names)


defjvp(struct_of, None, struct_of_values_jvp, None)


def struct_adjoint_c(g, ans, c, obj, names):
    return struct_adjoint_t(g, obj, names)


defvjp(struct_adjoint, struct_adjoint_c, DISCRETE, DISCRETE)


def struct_adjoint_c_jvp(t, ans, c, obj, names):
    return struct_adjoint(t, obj, names)


defjvp(struct_adjoint, struct_adjoint_c_jvp, None, None)


def struct_adjoint_t_h(g, ans, h, obj, names):
    return struct_adjoint(g, obj, names)


defvjp(struct_adjoint_t, struct_adjoint_t_h, DISCRETE, DISCRETE)


def struct_adjoint_t_h_jvp(t, ans, h, obj, names):
    return struct_adjoint_t(t, obj, names)


defjvp(struct_adjoint_t, struct_adjoint_t_h_jvp, None, None)


def struct_tangent_v(g, ans, v, cls, values, names):
    return struct_adjoint(g, ans, names)


defvjp(struct_tangent, struct_tangent_v, DISCRETE, DISCRETE, DISCRETE)


def struct_tangent_v_jvp(t, ans, v, cls, values, names):
    return struct_tangent(t, cls, values, names)


defjvp(struct_tangent, struct_tangent_v_jvp, None, None, None)


# ``dataclasses.replace(p, w=a)`` and ``p._replace(w=a)`` (Resolve writes both as
# ``struct_replaced(p, (a,), ("w",))``): the values' adjoints are their fields' (as
# ``struct_of``'s), ``p``'s is the rest. The helpers are linear in their first argument:
# ``fields_without`` its own transpose, ``fields_zeroed`` and ``replaced_tangent`` those of
# ``fields_without`` and ``struct_adjoint``.


def struct_replaced_obj(g, ans, obj, values, names):
    return fields_without(g, obj, names)


def struct_replaced_values(g, ans, obj, values, names):
    return struct_adjoint(g, ans, names)


defvjp(struct_replaced, struct_replaced_obj, struct_replaced_values, DISCRETE)


def struct_replaced_obj_jvp(t, ans, obj, values, names):
    return fields_zeroed(t, obj, names)


def struct_replaced_values_jvp(t, ans, obj, values, names):
    return replaced_tangent(t, ans, names)


defjvp(struct_replaced, struct_replaced_obj_jvp, struct_replaced_values_jvp, None)


def fields_without_c(g, ans, c, obj, names):
    return fields_without(g, obj, names)


defvjp(fields_without, fields_without_c, DISCRETE, DISCRETE)


def fields_without_c_jvp(t, ans, c, obj, names):
    return fields_without(t, obj, names)


defjvp(fields_without, fields_without_c_jvp, None, None)


def fields_zeroed_t(g, ans, t, obj, names):
    return fields_without(g, obj, names)


defvjp(fields_zeroed, fields_zeroed_t, DISCRETE, DISCRETE)


def fields_zeroed_t_jvp(t_dot, ans, t, obj, names):
    return fields_zeroed(t_dot, obj, names)


defjvp(fields_zeroed, fields_zeroed_t_jvp, None, None)


def replaced_tangent_t(g, ans, t, like, names):
    return struct_adjoint(g, like, names)


defvjp(replaced_tangent, replaced_tangent_t, DISCRETE, DISCRETE)


def replaced_tangent_t_jvp(t_dot, ans, t, like, names):
    return replaced_tangent(t_dot, like, names)


defjvp(replaced_tangent, replaced_tangent_t_jvp, None, None)


# The helpers the field's rules call, differentiated again (second order): each linear in its
# first argument, and the two transposes of each other; which entry a field is, a step.
defnondiff(field_key, method_read)


def field_adjoint_c(g, ans, c, obj, name):
    return zeros_like(c) if method_read(obj, name) else item_adjoint(g, field_key(obj, name), c)


defvjp(field_adjoint, field_adjoint_c, DISCRETE, DISCRETE)


def field_adjoint_c_jvp(t, ans, c, obj, name):
    return field_adjoint(t, obj, name)


defjvp(field_adjoint, field_adjoint_c_jvp, None, None)


def field_tangent_v(g, ans, v, obj, name):
    return field_adjoint(g, obj, name)


defvjp(field_tangent, field_tangent_v, DISCRETE, DISCRETE)


def field_tangent_v_jvp(t, ans, v, obj, name):
    return field_tangent(t, obj, name)


defjvp(field_tangent, field_tangent_v_jvp, None, None)


# (forward mode's check before an attribute's container grows: the identity in the tangent)
def field_container_tangent_v(g, ans, v, statement, line):
    return g


defvjp(field_container_tangent, field_container_tangent_v, DISCRETE, DISCRETE)


def field_container_tangent_v_jvp(t, ans, v, statement, line):
    return t


defjvp(field_container_tangent, field_container_tangent_v_jvp, None, None)


# --------------------------------------------------------------------------- zip(*rows)


def zipped_seq(g, ans, seq):
    """``zip(*seq)``: rows become columns, and their adjoints back (``swap_entries``)."""
    return swap_entries(g, seq)


defvjp(zipped, zipped_seq)


def zipped_seq_jvp(t, ans, seq):
    return zipped(t)


defjvp(zipped, zipped_seq_jvp)


def swap_entries_c(g, ans, c, like=None):
    """Swapping two levels is its own transpose (the dense rows ``like`` gives back, swapped
    entry by entry)."""
    return swap_entries(g)


defvjp(swap_entries, swap_entries_c, DISCRETE)


def swap_entries_c_jvp(t, ans, c, like=None):
    return swap_entries(t, like)


defjvp(swap_entries, swap_entries_c_jvp, None)
