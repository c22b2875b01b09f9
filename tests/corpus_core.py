"""User-style functions for the core pipeline: straight-line code, branches, calls, containers.

Each entry of CASES is (function, args, argnums). The functions use ``np`` and ``math`` as a user
would; tests/oracles.py re-binds ``np`` to autograd's numpy to get a second opinion.
"""

import math

import numpy as np

from tests import corpus_helpers as helpers
from tests.corpus_helpers import affine, scaled

# ----------------------------------------------------------------------------- straight-line


def square(x):
    return x * x


def poly(x, y):
    z = x * y
    w = z * z - 3.0 * x + y / 2.0
    return w**3 - z


def operators(x, y):
    a = x + y
    b = x - y
    c = x * y
    d = x / y
    e = x**2
    f = -x
    g = +y
    h = y**x
    return a * b + c - d + e * f + g + h


def ints_mixed(x):
    n = 3
    y = x * n + 2
    z = y / 4 - n
    return z * y + 1


def constants(x):
    return 2.5 * x + math.pi - 1e-3 * x**2


def reuse(x):
    y = x * x
    z = y * x + y
    return z * y * x + z


def rebinding(x):
    y = x * 2.0
    y = y * y
    y = np.sin(y) + y
    x = x * y
    return x + y


def aug(x, y):
    z = x
    z += y
    z *= x
    z -= 1.0
    z /= y
    z **= 2
    return z


def tuple_unpack(x, y):
    a, b = x * 2.0, y + x
    a, b = b, a
    (c, d), e = (a, b), a * b
    return a * b + c * d + e


def math_functions(x):
    a = math.exp(math.sin(x)) + math.cos(x) * math.tan(x / 3)
    b = math.log(x + 3.0) + math.sqrt(x + 1.0) + math.tanh(x)
    c = math.log(x + 2.0, 10) + math.atan(x) + math.pow(x + 1.0, 1.5)
    return a * b + c + abs(x) + math.hypot(x, 2.0)


def np_elementwise(x):
    a = np.exp(x) + np.log(x + 2.0) + np.sqrt(x + 1.0)
    b = np.sin(x) * np.cos(x) + np.tanh(x) + np.arctan(x)
    c = np.log1p(x * x) + np.expm1(x / 3) + np.square(x) + np.abs(x)
    return np.sum(a * b + c)


def broadcasting(x, row, col, s):
    y = x * row + col - s
    z = y / (1.0 + row**2) + x @ np.ones((x.shape[1], 2)) @ np.ones((2, x.shape[1]))
    return np.sum(z * z) + np.sum(s * x)


def reductions(x):
    a = np.sum(x, axis=0)
    b = np.mean(x, axis=1, keepdims=True)
    c = np.sum(x * b, axis=(0, 1))
    d = x.sum(axis=1).mean() + x.mean()
    return np.sum(a**2) + c + d + np.sum(x, axis=-1, keepdims=True).sum()


def matmul(W, b, x):
    h = np.tanh(W @ x + b)
    return np.sum(h**2) + np.dot(h, h) + np.sum(np.dot(W, x))


def transpose(A, v):
    B = A.T @ A
    u = np.dot(A.T, v)
    return np.sum(B * B) + u @ u + np.sum(np.transpose(A) ** 2)


def mlp_loss(params, x, labels):
    h = np.tanh(x @ params["W1"] + params["b1"])
    logits = h @ params["W2"] + params["b2"]
    m = np.max(logits, axis=1, keepdims=True)
    logp = logits - m - np.log(np.sum(np.exp(logits - m), axis=1, keepdims=True))
    return -np.mean(np.sum(logp * labels, axis=1))


def more_reductions(x):
    a = np.var(x, axis=0) + np.std(x, axis=1, ddof=1).sum()
    b = np.prod(x + 2.0, axis=1) + np.min(x, axis=0).sum() + x.max()
    return np.sum(a) + np.sum(b) + x.var() + np.prod(x[0])


def reshaping(x):
    y = np.reshape(x, (3, 2)) * np.arange(6.0).reshape(3, 2)
    z = x.reshape(6) + np.ravel(x) * x.flatten()
    w = np.sum(np.transpose(y) @ y) + np.sum(np.squeeze(np.expand_dims(x, 0), 0).T @ x)
    return np.sum(z**2) + np.sum(w) + np.sum(x.transpose() ** 3)


def unused_arg(x, y):
    return x * 3.0


def unused_array(x, w):
    return np.sum(x * 2.0)


def inactive_work(x):
    n = len(x)
    total = 0.0
    scale = n * 2
    return np.sum(x**2) / scale + total


# ----------------------------------------------------------------------------- branches


def branch(x, y):
    z = x * y
    if z > 1.0:
        w = np.exp(z)
    elif z > 0:
        w = z * z
    else:
        return -z
    u = w + x
    return u * y


def branch_nested(x):
    if x > 0:
        if x > 1:
            y = x * x
        else:
            y = x * 3.0
        z = y + 1.0
    else:
        z = x - 2.0
        if x < -1:
            z = z * x
    return z * x


def branch_return_early(x):
    if x < 0:
        return x * x
    y = np.sin(x)
    if y > 0.5:
        return y * 2.0
    return y + x


def branch_one_sided(x, y):
    z = x
    if y > 0:
        z = z * y
    return z + x


def branch_inactive_test(x, n):
    if n > 2:
        y = x * n
    else:
        y = x + n
    return y * y


def condexpr(x):
    y = x * 2 if x > 0 else -x
    return y * y if (x > -1 and x < 1) else y


def boolops(x, y):
    big = x > 0 and y > 0 or x < -1
    if big:
        return x * y
    if not (x > 0.5):
        return x + y
    return x - y


def chained(x):
    if 0 < x < 1:
        return x * x
    return x


def branch_arrays(W, x):
    h = W @ x
    if np.sum(h) > 0:
        h = np.tanh(h)
    else:
        h = h * 0.5
    return np.sum(h * h)


# ----------------------------------------------------------------------------- calls


def local_helper(a, scale=2.0):
    return a * scale + np.sin(a)


def calls(x, y):
    a = local_helper(x)
    b = local_helper(y, scale=3.0)
    return a * b + local_helper(a)


def calls_imported(x, y):
    a = helpers.scaled(x, 3.0)
    b = scaled(y, factor=0.5)
    return affine(a, b, shift=1.0) * helpers.affine(b, x)


def calls_keywords(x):
    return local_helper(scale=x, a=x * 2.0)


def two_outputs(x, y):
    return x * y, x + y


def calls_tuple(x, y):
    p, s = two_outputs(x, y)
    q = two_outputs(p, s)
    return p * s + q[0] - q[1]


def power(x, n):
    if n == 0:
        return 1.0
    return x * power(x, n - 1)


def is_even(x, n):
    if n == 0:
        return x
    return is_odd(x * 1.1, n - 1)


def is_odd(x, n):
    if n == 0:
        return x * x
    return is_even(x + 0.5, n - 1)


def fib_like(x, n):
    if n < 2:
        return x
    return fib_like(x, n - 1) * 0.5 + np.sin(fib_like(x, n - 2))


def call_chain(x):
    y = helpers.chain(x)
    return y * y


# ----------------------------------------------------------------------------- containers


def dict_params(p, x):
    h = np.tanh(p["W"] @ x + p["b"])
    return np.sum(h * h) + p["s"] * 2.0


def list_params(ws, x):
    return ws[0] * x + ws[1] * x * x + ws[2]


def nested_tuple(t):
    (a, b), c = t
    return a * b + c["k"] ** 2


def indexing(x):
    return x[0] * x[2] + np.sum(x[1:3] ** 2) + x[-1]


def indexing_2d(A):
    return A[0, 1] * A[1, 0] + np.sum(A[:, 1] ** 2) + np.sum(A[1:, ::2])


def build_tuple(x, y):
    t = (x, y * 2.0, x * y)
    return t[0] * t[1] + t[2]


CASES = [
    (square, (3.0,), 0),
    (poly, (0.7, -1.3), (0, 1)),
    (operators, (0.8, 1.7), (0, 1)),
    (ints_mixed, (1.5,), 0),
    (constants, (0.4,), 0),
    (reuse, (0.7,), 0),
    (rebinding, (0.3,), 0),
    (aug, (0.9, 1.4), (0, 1)),
    (tuple_unpack, (0.3, 0.8), (0, 1)),
    (math_functions, (0.4,), 0),
    (np_elementwise, (np.linspace(0.1, 0.9, 5),), 0),
    (
        broadcasting,
        (
            np.arange(6.0).reshape(2, 3) / 5,
            np.array([0.1, 0.2, 0.3]),
            np.array([[1.0], [2.0]]),
            0.7,
        ),
        (0, 1, 2, 3),
    ),
    (reductions, (np.arange(12.0).reshape(3, 4) / 7,), 0),
    (
        matmul,
        (np.arange(6.0).reshape(2, 3) / 4, np.array([0.1, -0.2]), np.array([0.5, -0.3, 0.2])),
        (0, 1, 2),
    ),
    (transpose, (np.arange(6.0).reshape(3, 2) / 5, np.array([1.0, -1.0, 0.5])), (0, 1)),
    (
        mlp_loss,
        (
            {
                "W1": np.linspace(-1, 1, 12).reshape(4, 3),
                "b1": np.array([0.1, 0.0, -0.1]),
                "W2": np.linspace(-0.5, 0.5, 6).reshape(3, 2),
                "b2": np.array([0.2, -0.2]),
            },
            np.linspace(-1, 1, 20).reshape(5, 4),
            np.eye(2)[[0, 1, 1, 0, 1]],
        ),
        0,
    ),
    (more_reductions, (np.array([[0.3, -1.2, 0.7], [1.1, 0.4, -0.5]]),), 0),
    (reshaping, (np.arange(6.0).reshape(2, 3) / 4,), 0),
    (unused_arg, (1.0, 2.0), (0, 1)),
    (unused_array, (np.ones(3), np.ones((2, 2))), (0, 1)),
    (inactive_work, (np.array([1.0, 2.0, 3.0]),), 0),
    (branch, (0.5, 1.5), (0, 1)),
    (branch, (0.5, 0.9), (0, 1)),
    (branch, (-0.5, 1.0), (0, 1)),
    (branch_nested, (1.5,), 0),
    (branch_nested, (0.5,), 0),
    (branch_nested, (-0.5,), 0),
    (branch_nested, (-1.5,), 0),
    (branch_return_early, (-0.5,), 0),
    (branch_return_early, (1.2,), 0),
    (branch_return_early, (0.2,), 0),
    (branch_one_sided, (0.5, 2.0), (0, 1)),
    (branch_one_sided, (0.5, -2.0), (0, 1)),
    (branch_inactive_test, (0.7, 3), 0),
    (branch_inactive_test, (0.7, 1), 0),
    (condexpr, (0.5,), 0),
    (condexpr, (-0.5,), 0),
    (condexpr, (1.5,), 0),
    (boolops, (0.5, 0.5), (0, 1)),
    (boolops, (-2.0, 0.5), (0, 1)),
    (boolops, (0.3, -0.5), (0, 1)),
    (boolops, (0.7, -0.5), (0, 1)),
    (chained, (0.5,), 0),
    (chained, (1.5,), 0),
    (branch_arrays, (np.arange(6.0).reshape(2, 3) / 5, np.array([0.5, -0.3, 0.2])), (0, 1)),
    (branch_arrays, (-np.arange(6.0).reshape(2, 3) / 5, np.array([0.5, -0.3, 0.2])), (0, 1)),
    (calls, (0.3, 0.7), (0, 1)),
    (calls_imported, (0.3, 0.7), (0, 1)),
    (calls_keywords, (0.6,), 0),
    (calls_tuple, (0.6, 1.1), (0, 1)),
    (power, (1.3, 5), 0),
    (is_even, (0.3, 5), 0),
    (fib_like, (0.4, 6), 0),
    (call_chain, (0.8,), 0),
    (
        dict_params,
        (
            {"W": np.arange(6.0).reshape(2, 3) / 6, "b": np.array([0.1, -0.1]), "s": 0.5},
            np.array([0.3, -0.2, 0.1]),
        ),
        0,
    ),
    (list_params, ([0.5, -1.0, 2.0], 0.7), (0, 1)),
    (nested_tuple, (((0.5, 1.5), {"k": 2.0}),), 0),
    (indexing, (np.array([0.5, 1.0, -2.0, 3.0]),), 0),
    (indexing_2d, (np.arange(9.0).reshape(3, 3) / 3,), 0),
    (build_tuple, (0.4, 1.3), (0, 1)),
]
