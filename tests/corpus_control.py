"""User-style functions for control flow and functions as values: loops, recursion, closures,
higher-order functions, comprehensions and containers. Each CASES entry is (function, args, argnums).
"""

import functools
import math

import numpy as np

# ----------------------------------------------------------------------------- loops


def loop_range(x, n):
    acc = 0.0
    for i in range(n):
        acc = acc + x * i
    return acc


def loop_range_bounds(x, lo, hi):
    acc = x
    for i in range(lo, hi, 2):
        acc = acc * 1.1 + i * x
    for j in range(hi, lo, -1):
        acc = acc - 0.1 * j * x
    return acc


def loop_list(x, ws):
    for w in ws:
        x = np.tanh(w * x + 0.5)
    return x


def loop_tuple(x):
    total = 0.0
    for c in (1.0, 2.0, 3.0):
        total = total + c * x * x
    return total


def loop_rows(W, X):
    s = 0.0
    for row in X:
        s = s + np.sum(np.tanh(W @ row))
    return s


def loop_enumerate_zip(xs, ys):
    s = 0.0
    for i, (a, b) in enumerate(zip(xs, ys), 1):
        s = s + i * a * b
    return s


def loop_dict_items(p):
    s = 0.0
    for k, v in p.items():
        s = s + v * v * len(k)
    for v in p.values():
        s = s + v
    for k in p.keys():
        s = s + p[k] * 2.0
    return s


def loop_while(x):
    y = x
    while y < 10.0:
        y = y * 1.5 + x
    return y


def loop_while_true(x):
    n = 0
    while True:
        x = x * 0.9 + 0.05
        n = n + 1
        if n >= 7:
            break
    return x


def loop_break_continue(x, n):
    acc = 1.0
    for i in range(n):
        if i == 2:
            continue
        acc = acc * x
        if acc > 5.0:
            break
    return acc


def loop_return_inside(x, xs):
    for v in xs:
        if v * x > 2.0:
            return v * x * x
    return x


def loop_nested(x, n):
    total = 0.0
    for i in range(n):
        for j in range(i):
            total = total + x * j
            if j > 2:
                break
    return total


def loop_swap(a, b, n):
    for _ in range(n):
        a, b = b, a * b + 0.1
    return a + b


def loop_for_else(x, n):
    for i in range(n):
        if x * i > 100:
            break
    else:
        x = x * 2
    return x


def loop_last_value(x):
    for v in [x, x * 2.0, x * 3.0]:  # noqa: B007  (Python keeps the last value)
        pass
    return v * v


def loop_reversed(xs):
    acc = 0.0
    for v in reversed(xs):
        acc = acc * 0.5 + v
    return acc


# ----------------------------------------------------------------------------- recursion


def power(x, n):
    if n == 0:
        return 1.0
    return x * power(x, n - 1)


def is_even(x, n):
    if n == 0:
        return x
    return is_odd(x * 1.01, n - 1)


def is_odd(x, n):
    if n == 0:
        return x * x
    return is_even(x + 0.01, n - 1)


def fib_like(x, n):
    if n < 2:
        return x
    return fib_like(x, n - 1) * 0.5 + np.sin(fib_like(x, n - 2))


def tree_sum(t, w):
    """Nested tuples, lists and dicts as a tree."""
    if isinstance(t, (tuple, list)):
        total = 0.0
        for child in t:
            total = total + tree_sum(child, w)
        return total * w
    if isinstance(t, dict):
        return tree_sum(t["left"], w) * tree_sum(t["right"], w)
    return t * t


class Node:
    """A tree node of the user's own class."""

    def __init__(self, left=None, right=None, word=None):
        self.left = left
        self.right = right
        self.word = word


def tree_rnn(params, node):
    """A recursive neural network over a tree of Node objects, parameters in a dict."""
    if node.word is not None:
        return np.tanh(params["embed"][node.word])
    hl = tree_rnn(params, node.left)
    hr = tree_rnn(params, node.right)
    return np.tanh(params["W"] @ np.concatenate([hl, hr]) + params["b"])


def tree_rnn_loss(params, tree):
    h = tree_rnn(params, tree)
    return np.sum(h * h)


# ----------------------------------------------------------------------------- functions as values


def closure(x, w):
    def layer(h):
        return np.tanh(h * w)

    return layer(layer(x)) * x


def nonlocal_accumulator(x, ys):
    total = 0.0

    def add(v):
        nonlocal total
        total = total + v * x

    for y in ys:
        add(y)
    return total * total


def rebound_capture(x):
    s = x * 2.0

    def g(t):
        return t * s

    a = g(x)
    s = x * 3.0
    return a + g(x)


def lambdas(x, w):
    f = lambda t: t * t + w  # noqa: E731
    g = lambda a, b=2.0: a * b  # noqa: E731
    return f(x) + g(x) + g(x, w)


def curried(x, w):
    def make(c):
        def inner(t):
            return t * c + w

        return inner

    f = make(x * 2.0)
    return f(x) * f(w)


def my_map(f, xs):
    out = []
    for v in xs:
        out.append(f(v))
    return out


def my_fold(f, init, xs):
    acc = init
    for v in xs:
        acc = f(acc, v)
    return acc


def scale_by_two(t):
    return t * 2.0


def higher_order(x, w):
    def scale(t):
        return t * w

    ys = my_map(scale, [x, x * x])
    zs = my_map(scale_by_two, ys)
    a = my_fold(lambda p, q: p * q + 1.0, 1.0, zs)
    return a + my_fold(np.maximum, 0.0, zs)


def numpy_function_as_value(x, act):
    return np.sum(act(x) * x)


def builtin_higher_order(xs, w):
    ys = list(map(lambda v: v * w, xs))
    total = functools.reduce(lambda a, b: a + b * b, ys, 0.0)
    product = functools.reduce(lambda a, b: a * b, ys)
    return total + product + sum(ys) + max(ys) + min(xs) * abs(w) + max(w, xs[0])


# ----------------------------------------------------------------------------- comprehensions


def comprehensions(x, ys):
    squares = [y * y * x for y in ys]
    pairs = [a * b for a in ys for b in squares if a > 0]
    table = {i: v * x for i, v in enumerate(ys) if v > 0}
    total = sum(v * v for v in squares)
    return sum(pairs) + table[0] * table[2] + total


# ----------------------------------------------------------------------------- containers


def rnn(h, W, U, xs):
    """The RNN pattern: collect the states in a list, then stack them."""
    hs = []
    for x in xs:
        h = np.tanh(W @ h + U @ x)
        hs.append(h)
    H = np.stack(hs)
    return np.sum(H * H) + np.sum(hs[-1])


def containers(x, y):
    pair = (x, y * 2.0)
    items = [x, y, x * y]
    items.extend([x * 3.0])
    d = {"a": x, "b": items[2]}
    d["c"] = d["a"] * pair[1]
    return pair[0] * items[3] + d["b"] + d["c"] + items[-1]


def array_from_scalars(a, b):
    v = np.array([a, b, a * b])
    return np.sum(v * v) + v[2]


def math_in_loop(x, n):
    for _ in range(n):
        x = math.sin(x) + 0.5 * x
    return x


def unused_active_result(x):
    """A call made for its effect whose result -- unused here -- depends on x in the callee."""
    total = 0.0

    def add(v):
        nonlocal total
        total = total + v
        return v * x

    add(x)
    return total * x


class Affine:
    """A layer as users write them: parameters on the object, ``__call__`` and methods."""

    def __init__(self, a, b):
        self.a, self.b = a, b

    def __call__(self, x):
        return np.tanh(self.a * x + self.b)

    def energy(self, x):
        h = self(x)
        return h * h + self.a


LAYER = Affine(0.7, -0.2)


def objects_and_methods(x, w):
    ys = my_map(LAYER, [x, w])  # the object passed as a function value
    zs = my_map(LAYER.energy, ys)  # a bound method passed as a value
    return LAYER(x) * LAYER.energy(w) + zs[0] * zs[1]


CASES = [
    (loop_range, (0.7, 5), 0),
    (loop_range_bounds, (0.3, 1, 8), 0),
    (loop_list, (0.2, [0.5, -1.0, 2.0]), (0, 1)),
    (loop_tuple, (0.7,), 0),
    (loop_rows, (np.ones((2, 3)) * 0.1, np.arange(12.0).reshape(4, 3) / 10), (0, 1)),
    (loop_enumerate_zip, ([1.0, 2.0, 3.0], [0.5, 0.1, 0.2]), (0, 1)),
    (loop_dict_items, ({"a": 1.0, "bb": 2.0},), 0),
    (loop_while, (0.8,), 0),
    (loop_while_true, (0.8,), 0),
    (loop_break_continue, (1.3, 8), 0),
    (loop_return_inside, (0.9, [0.5, 1.5, 3.0]), (0, 1)),
    (loop_return_inside, (0.1, [0.5, 1.5, 3.0]), (0, 1)),
    (loop_nested, (0.3, 6), 0),
    (loop_swap, (0.5, 0.7, 4), (0, 1)),
    (loop_for_else, (0.5, 3), 0),
    (loop_for_else, (60.0, 3), 0),
    (loop_last_value, (0.4,), 0),
    (loop_reversed, ([1.0, -2.0, 0.5],), 0),
    (power, (1.3, 5), 0),
    (is_even, (0.3, 7), 0),
    (fib_like, (0.4, 7), 0),
    (tree_sum, (((0.5, [1.5, 0.2]), {"left": 0.3, "right": (0.7,)}), 1.1), (0, 1)),
    (closure, (0.6, 1.3), (0, 1)),
    (nonlocal_accumulator, (0.7, [1.0, 2.0, -0.5]), (0, 1)),
    (rebound_capture, (0.7,), 0),
    (lambdas, (0.6, 1.3), (0, 1)),
    (curried, (0.6, 1.3), (0, 1)),
    (higher_order, (0.6, 1.3), (0, 1)),
    (numpy_function_as_value, (np.array([0.3, -0.4]), np.tanh), 0),
    (builtin_higher_order, ([0.5, -1.2, 2.0], 0.7), (0, 1)),
    (comprehensions, (0.7, [1.0, -2.0, 3.0]), (0, 1)),
    (
        rnn,
        (
            np.array([0.1, -0.2]),
            np.array([[0.5, 0.1], [-0.3, 0.8]]),
            np.array([[0.2, 0.0, 0.1], [0.0, -0.4, 0.3]]),
            np.arange(9.0).reshape(3, 3) / 9,
        ),
        (0, 1, 2, 3),
    ),
    (containers, (0.6, 1.7), (0, 1)),
    (array_from_scalars, (0.6, 1.7), (0, 1)),
    (math_in_loop, (0.6, 5), 0),
    (objects_and_methods, (0.6, -1.3), (0, 1)),
    (unused_active_result, (0.7,), 0),
]


def make_tree(rng, depth, vocab):
    if depth == 0:
        return Node(word=int(rng.integers(vocab)))
    return Node(make_tree(rng, depth - 1, vocab), make_tree(rng, depth - 1, vocab))


def tree_params(rng, hidden=3, vocab=5):
    return {
        "embed": rng.normal(size=(vocab, hidden)) * 0.5,
        "W": rng.normal(size=(hidden, 2 * hidden)) * 0.5,
        "b": rng.normal(size=hidden) * 0.1,
    }


_rng = np.random.default_rng(0)
CASES.append((tree_rnn_loss, (tree_params(_rng), make_tree(_rng, 3, 5)), 0))
