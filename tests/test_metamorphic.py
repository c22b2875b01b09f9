"""Metamorphic tests: one function written several ways must get one gradient (to rounding).

Each base -- a handful written by hand, and programs of the fuzzer's generator -- is rewritten
source to source (tests/fuzz/rewrite.py: renamed variables, an expression extracted into a helper,
wrapped in a lambda or passed through ``apply``, a loop unrolled, a tuple assignment split,
``y = y + v`` against ``y += v``). A variant must compute what its base computes in plain Python
(else it is skipped); cpsad must then give both the same value and the same gradient. Cases that
differ today are ``xfail(strict=True)`` in ``KNOWN``, with the finding that explains them.
"""

from __future__ import annotations

import functools
import random
import textwrap

import numpy as np
import pytest

from tests.fuzz.gen import Program
from tests.fuzz.oracle import valid_program
from tests.fuzz.rewrite import KINDS, compare

HEAD = "import numpy as np\n\n\n"

HAND = {
    "loop_swap": (
        """
        def f(x, v):
            y = np.zeros(3)
            for i in range(3):
                y = y + v * x ** i
            a, b = np.sum(y), x
            a, b = b, a
            return a * b + np.sum(np.tanh(y))
        """,
        (0.7, np.array([0.3, -0.5, 1.1])),
    ),
    "matrix_loop": (
        """
        def f(A, v):
            h = np.tanh(A @ v)
            s = 0.0
            for k in range(2):
                s = s + np.dot(h, v) * (k + 1)
                h = np.sin(h)
            return s + np.sum(h ** 2)
        """,
        (
            np.array([[0.5, -0.2, 0.1], [0.3, 0.8, -0.6], [-0.4, 0.2, 0.9]]),
            np.array([0.2, -0.7, 0.4]),
        ),
    ),
    "closure": (
        """
        def f(x, y):
            scale = x * y
            g = lambda t: t * scale + np.sin(t)
            z = g(x)
            w = g(z)
            return z + w
        """,
        (0.6, -1.1),
    ),
    "branch_aug": (
        """
        def f(x, v):
            if x > 0.0:
                y = np.exp(v) * x
            else:
                y = np.cos(v) - x
            total = 0.0
            total += np.sum(y)
            total += x * 2.0
            return total
        """,
        (0.4, np.array([0.1, 0.2, -0.3])),
    ),
    "recursion": (
        """
        def rec(t, n):
            if n == 0:
                return t
            return rec(np.sin(t) * 0.9, n - 1)


        def f(x, v):
            u = rec(v * x, 3)
            p, q = u[0], u[1]
            return p * q + np.sum(u)
        """,
        (1.3, np.array([0.5, -0.25, 0.75])),
    ),
    "rows": (
        """
        def f(v, A):
            rows = []
            for i in range(3):
                rows.append(A[i] * v[i])
            M = np.stack(rows)
            s = np.sum(M @ v)
            s += np.trace(M)
            return s
        """,
        (
            np.array([0.3, 0.1, -0.8]),
            np.array([[1.0, 0.5, -0.2], [0.1, -0.3, 0.4], [0.6, 0.2, 0.9]]),
        ),
    ),
}

# Generated bases, from programs without the features of bugs already known (so that most bases
# are programs cpsad differentiates: a variant of a base cpsad fails on is skipped).
GENERATED = list(range(25))
BASE_EXCLUDE = ("apply_1line", "decorator", "neg_const_pow", "late_binding", "default_capture")

# (base, rewrite) -> the finding (tests/fuzz/findings/NAME.py) or the reason it differs today
KNOWN: dict = {}  # (program, rewrite) -> the finding that explains a difference


def _kind_of(v):
    if isinstance(v, float):
        return "S"
    return {1: "V", 2: "M"}[np.ndim(v)]


@functools.cache
def base(case):
    if case in HAND:
        src, values = HAND[case]
        import inspect  # noqa: F401

        names = src.split("def f(")[1].split(")")[0].split(", ")
        params = [(n, _kind_of(v)) for n, v in zip(names, values)]
        return Program(0, HEAD + textwrap.dedent(src).lstrip(), params, set(), 0, values)
    program, _ = valid_program(int(case), exclude=BASE_EXCLUDE)
    program.values = program.args()
    return program


CASES = [
    (
        pytest.param(c, k, marks=pytest.mark.xfail(strict=True, reason=KNOWN[(c, k)]))
        if (c, k) in KNOWN
        else (c, k)
    )
    for c in list(HAND) + [str(s) for s in GENERATED]
    for k in KINDS
]


@pytest.mark.parametrize("case,kind", CASES)
def test_variant_has_the_same_gradient(case, kind):
    status, detail = compare(base(case), kind, random.Random(f"{case}:{kind}"))
    if status == "n/a":
        pytest.skip(detail)
    assert status == "same", detail
