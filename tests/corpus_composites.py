"""Cases for the composites (cpsad/rules/composite.py): numpy functions differentiated as the
Python functions that compute them. Each wrapper calls the numpy function as a user would; the
cases run end to end (reverse and forward mode against central finite differences, autograd
where it has the function). Importing this module adds them to ``corpus_rules.CASES``."""

from __future__ import annotations

import itertools
import math
import operator

import numpy as np

from tests.corpus_rules import end_to_end, u

NO_AUTOGRAD = "autograd has no rule for it"

# --------------------------------------------------------------------------- moving elements


def rot90(m, k=1, axes=(0, 1)):
    return np.rot90(m, k, axes)


ROT90 = "autograd's rot90 takes no axes"
for k in (1, 2, 3, 4, -1):
    end_to_end(rot90, u(3, 4), k=k, autograd=ROT90)
end_to_end(rot90, u(2, 3, 4), k=1, axes=(2, 0), autograd=ROT90)


def rollaxis(a, axis, start=0):
    return np.rollaxis(a, axis, start)


for axis, start in ((2, 0), (0, 3), (-1, 1), (1, 1), (0, -1)):
    negative = "autograd's rollaxis: no negative axis or start"
    end_to_end(
        rollaxis,
        u(2, 3, 4),
        axis=axis,
        start=start,
        autograd=negative if min(axis, start) < 0 else None,
    )


def hsplit_middle(x):
    a, b, c = np.hsplit(x, 3)
    return b * 2.0 + np.sum(a) * c


def hsplit_vector(x):
    return np.hsplit(x, [1, 3])[1]


def vsplit_first(x):
    return np.vsplit(x, 2)[0]


def dsplit_last(x):
    return np.dsplit(x, [1])[1]


end_to_end(hsplit_middle, u(2, 6))
end_to_end(hsplit_vector, u(5), autograd="autograd's hsplit: not of a 1-d array")
end_to_end(vsplit_first, u(4, 3))
end_to_end(dsplit_last, u(2, 2, 3), autograd=NO_AUTOGRAD)


def append(arr, values, axis=None):
    return np.append(arr, values, axis)


end_to_end(append, u(2, 3), u(4))
end_to_end(append, u(2, 3), u(1, 3), axis=0)
end_to_end(append, u(2, 3), u(2, 2), axis=-1)
end_to_end(append, u(3), 0.7)

# --------------------------------------------------------------------------- differences, products


def diff(a, n=1, axis=-1):
    return np.diff(a, n, axis)


def diff_ends(a, prepend, append):
    return np.diff(a, 2, 0, prepend=prepend, append=append)


end_to_end(diff, u(5))
end_to_end(diff, u(4, 5), n=2)
end_to_end(diff, u(4, 5), n=3, axis=0)
end_to_end(diff, u(3, 4), n=0)
end_to_end(diff_ends, u(4, 2), 0.5, u(2, 2), autograd=NO_AUTOGRAD)


def cross(a, b):
    return np.cross(a, b)


def cross_axes(a, b):
    return np.cross(a, b, axisa=0, axisb=1, axisc=0)


end_to_end(cross, u(3), u(3))
end_to_end(cross, u(4, 3), u(3), autograd="autograd's cross: no broadcasting")
end_to_end(cross, u(2), u(3), autograd="numpy 2 deprecates 2-vectors")
end_to_end(cross, u(5, 2), u(5, 2), autograd="numpy 2 deprecates 2-vectors")
end_to_end(cross_axes, u(3, 4), u(4, 3), autograd=NO_AUTOGRAD)


def kron(a, b):
    return np.kron(a, b)


end_to_end(kron, u(3), u(2))
end_to_end(kron, u(2, 3), u(3, 2))
end_to_end(kron, u(2), u(2, 3))

# --------------------------------------------------------------------------- elementwise


def sinc(x):
    return np.sinc(x)


def nan_to_num(x):
    return np.nan_to_num(
        np.concatenate([x, [np.inf, -np.inf, np.nan]]), nan=0.5, posinf=2.0, neginf=-3.0
    )


def nan_to_num_plain(x):
    return np.nan_to_num(x)


def real_if_close(x):
    return np.real_if_close(x + 0j)


end_to_end(sinc, np.array([0.0, 0.3, -1.2, 2.5]), autograd="autograd's sinc: NaN at 0")
end_to_end(nan_to_num, u(3), autograd="autograd's nan_to_num: no nan=")
end_to_end(nan_to_num_plain, u(3, 2))
end_to_end(real_if_close, u(4), autograd=NO_AUTOGRAD)

# --------------------------------------------------------------------------- statistics


def average(a, weights, axis=None):
    return np.average(a, axis, weights)


def average_returned(a, weights):
    avg, total = np.average(a, 1, weights, returned=True)
    return avg * total


def average_plain(a):
    return np.average(a, axis=0)


AVERAGE = "autograd has no rule for average"
end_to_end(average, u(3, 4), u(3, 4, lo=0.5, hi=1.5), autograd=AVERAGE)
end_to_end(average, u(3, 4), u(4, lo=0.5, hi=1.5), axis=1, autograd=AVERAGE)
end_to_end(average_returned, u(3, 4), u(4, lo=0.5, hi=1.5), autograd=NO_AUTOGRAD)
end_to_end(average_plain, u(3, 4), autograd=AVERAGE)


def quantile(a, q, axis=None, method="linear", keepdims=False):
    return np.quantile(a, q, axis, method=method, keepdims=keepdims)


def percentile(a, q, axis=None):
    return np.percentile(a, q, axis)


def median(a, axis=None, keepdims=False):
    return np.median(a, axis, keepdims=keepdims)


QUANTILE = "autograd has no rule for quantiles"
end_to_end(quantile, u(7), q=0.3, autograd=QUANTILE)
end_to_end(quantile, u(4, 5), q=[0.2, 0.9], axis=1, autograd=QUANTILE)
end_to_end(quantile, u(4, 5), q=0.4, axis=0, keepdims=True, autograd=QUANTILE)
end_to_end(quantile, u(4, 5), q=[[0.1], [0.7]], keepdims=True, autograd=QUANTILE)
for method in ("lower", "higher", "midpoint"):
    end_to_end(quantile, u(6), q=[0.25, 0.5], method=method, autograd=QUANTILE)
end_to_end(percentile, u(3, 6), q=35.0, axis=-1, autograd=QUANTILE)
end_to_end(median, u(6), autograd=QUANTILE)
end_to_end(median, u(5, 3), axis=0, autograd=QUANTILE)
end_to_end(median, u(5, 3), axis=1, keepdims=True, autograd=QUANTILE)


def partition_smallest(x):
    return np.sum(np.partition(x, 2)[:3] ** 2)


def partition_rows(x):
    return np.partition(x, (0, 2), axis=0)[0]


end_to_end(partition_smallest, u(6), autograd=NO_AUTOGRAD)
end_to_end(partition_rows, u(4, 3), autograd=NO_AUTOGRAD)


def interp(x, xp, fp):
    return np.interp(x, xp, fp)


def interp_ends(x, fp, left):
    return np.interp(x, [0.0, 0.5, 1.0], fp, left=left, right=2.0)


# (the points away from the knots, where the function is smooth in every argument)
INTERP = "autograd has no rule for interp"
XP = np.array([0.0, 0.3, 0.6, 1.0])
end_to_end(interp, np.array([-0.3, 0.1, 0.45, 0.8, 1.4]), XP, u(4), autograd=INTERP)
end_to_end(interp, 0.37, XP, u(4), autograd=INTERP)
end_to_end(interp_ends, np.array([-0.3, 0.2, 0.7, 1.4]), u(3), 0.25, autograd=NO_AUTOGRAD)


# --------------------------------------------------------------------------- more of numpy


def gradient(f):
    return np.gradient(f)


def gradient_spaced(f, dx):
    return np.gradient(f, dx, edge_order=2)


def gradient_coordinates(f, x):
    return np.gradient(f, x, axis=1)


def gradient_axes(f):
    gy, gx = np.gradient(f)
    return gy * gx


GRADIENT = "autograd has no rule for gradient"
end_to_end(gradient, u(6), autograd=GRADIENT)
end_to_end(gradient_spaced, u(6), 0.3, autograd=GRADIENT)
end_to_end(gradient_coordinates, u(3, 5), np.array([0.0, 0.4, 0.5, 1.1, 2.0]), autograd=GRADIENT)
end_to_end(gradient_axes, u(4, 3), autograd=GRADIENT)


def select(x, y):
    return np.select([x > 0.1, y > 0.0], [x * y, y**2], -1.0)


end_to_end(select, u(6), u(6), autograd="autograd has no rule for select")


def matrix_power(a, n):
    return np.linalg.matrix_power(a, n)


for n in (-2, 0, 1, 3, 6):
    end_to_end(matrix_power, u(3, 3) * 0.3 + np.eye(3), n=n, autograd="autograd: matrix_power")


def piecewise(x):
    return np.piecewise(x, [x < 0.0, x > 0.5], [np.sin, 2.0, _square_centered])


def _square_centered(t):
    return (t - np.mean(t)) ** 2


end_to_end(piecewise, np.array([-0.8, -0.2, 0.3, 0.9, 1.5]), autograd="autograd has no piecewise")


# --------------------------------------------------------------------------- Python's operator module
# (cpsad/rules/pyoperator.py: each operator written out; through a value too, in test_api_parity)
NO_OPERATOR = "autograd has no rules for the operator module"


def operator_arithmetic(a, b):
    return (
        operator.add(a, b) * operator.sub(a, b)
        + operator.mul(a, b)
        - operator.truediv(a, b)
        + operator.mod(a, b)
        + operator.floordiv(a, b)
    )


def operator_power(a, b):
    return operator.pow(a, b)


def operator_matmul(a, b):
    return operator.matmul(a, b)


def operator_unary(a):
    return operator.neg(a) * operator.pos(a) + operator.abs(a) + operator.getitem(a, 1)


end_to_end(operator_arithmetic, u(3), u(3) + 2.0, autograd=NO_OPERATOR)
end_to_end(operator_power, np.abs(u(3)) + 0.5, u(3), autograd=NO_OPERATOR)
end_to_end(operator_matmul, u(3, 3), u(3, 2), autograd=NO_OPERATOR)
end_to_end(operator_unary, u(4) + 0.1, autograd=NO_OPERATOR)


# (cpsad/rules/containers.py: Python's ``sorted``, the items picked in the sorted order)


def sorted_values(x):
    s = sorted([x[0], x[1] * 2.0, np.sin(x[2]), x[3]], key=abs, reverse=True)
    return np.array(s[:3]) * np.array([1.0, 2.0, 3.0])


def sorted_rows(m):
    rows = sorted(list(m), key=lambda r: r[0])
    return rows[0] * 2.0 + rows[-1]


end_to_end(sorted_values, u(4))
end_to_end(sorted_rows, u(3, 2))


# (cpsad/rules/containers.py: ``reversed`` as a value, and itertools' combinatorics: the items
# at each tuple of positions)


def reversed_values(x):
    ys = [x[0], x[1] * 2.0, np.sin(x[2])]
    r = list(reversed(ys))
    return r[0] * 3.0 + r[2] * r[1] + sum(a * b for a, b in zip(ys, reversed(ys)))


def reversed_rows(m):
    return np.stack(list(reversed(m))) * np.arange(6.0).reshape(3, 2)


def combinations_values(x):
    ys = [x[0], x[1] * 2.0, np.sin(x[2]), x[3]]
    return np.array([a * b - b for a, b in itertools.combinations(ys, 2)])


def combinations_rows(m):
    return sum(a @ b for a, b in itertools.combinations(list(m), 2))


def combinations_with_replacement_values(x):
    ys = [x[0], np.cos(x[1]), x[2]]
    return np.array([a * b for a, b in itertools.combinations_with_replacement(ys, 2)])


def permutations_values(x):
    ys = [x[0], x[1] * x[2], x[2]]
    whole = [p[0] * p[1] - p[2] for p in itertools.permutations(ys)]
    pairs = [a / (1.5 + b * b) for a, b in itertools.permutations(ys, 2)]
    return np.array(whole + pairs)


def zip_values(x):
    ys = [x[0], np.sin(x[1]), x[2] * 2.0]
    pairs = list(zip(ys, reversed(ys), [1.0, 2.0, 3.0]))
    return np.array([a * b + c for a, b, c in pairs])


def zip_rows(m, v):
    return sum(row * w for row, w in list(zip(m, v, strict=True)))


def enumerate_values(x):
    ys = [x[0], x[1] * x[2], x[2]]
    return np.array([i * v for i, v in list(enumerate(ys, 2))])


def dict_values(x):
    d = dict(zip(["a", "b"], [x[0] * 2.0, np.cos(x[1])]), c=x[2])
    e = dict([("p", x[0]), ("q", x[1] * x[2])])
    return np.array([d["a"] * d["c"], d["b"], e["q"] - e["p"], dict(e)["p"]])


def prod_and_dist_values(x):
    ys = [x[0], np.sin(x[1]), x[2] * 2.0]
    return np.array([math.prod(ys), math.prod(ys[:2], start=x[2]), math.dist(ys, [1.0, x[0], 0.5])])


def product_values(x):
    ys = [x[0], x[1] * x[2]]
    pairs = [a * b - b for a, b in itertools.product(ys, [x[2], 2.0])]
    return np.array(pairs + [t[0] * t[1] + t[2] for t in itertools.product(ys, repeat=3)])


def accumulate_values(x):
    ys = [x[0], np.cos(x[1]), x[2]]
    sums = list(itertools.accumulate(ys))
    products = list(itertools.accumulate(ys, operator.mul, initial=1.5))
    return np.array(sums + products + list(itertools.accumulate(ys, max)))


end_to_end(reversed_values, u(3))
end_to_end(reversed_rows, u(3, 2))
end_to_end(combinations_values, u(4))
end_to_end(combinations_rows, u(4, 3))
end_to_end(combinations_with_replacement_values, u(3))
end_to_end(permutations_values, u(3))
end_to_end(zip_values, u(3))
end_to_end(zip_rows, u(3, 2), u(3))
end_to_end(enumerate_values, u(3))
end_to_end(dict_values, u(3))
end_to_end(prod_and_dist_values, u(3), autograd="autograd has no rule for math.prod or math.dist")
end_to_end(product_values, u(3))
end_to_end(accumulate_values, u(3))
