"""Per rewrite of Simplify (transforms/simplify/, one module a rewrite): on a short program, the
rewrite's visible effect is there after the stage and absent with that rewrite turned off, and the
gradient of the program still matches finite differences.

The rewrites' other tests are in tests/test_passes.py (``test_simplify_*``), each named in the
docstring of the module it tests.
"""

import textwrap

import numpy as np
import pytest

import cpsad
from cpsad import compiler
from cpsad.compiler import CONTEXT
from cpsad.transforms import simplify
from cpsad.transforms.simplify import peephole
from cpsad.transforms.testing import function_from_source, stage_source

cpsad._load()  # the dispatch, whose helpers CONTEXT gives shift/reset (as a first grad would)


def src(text):
    return textwrap.dedent(text).lstrip("\n")


# (rewrite, (class, method) turned off, source, kinds, args, text only with it, text only without)
CASES = [
    (
        "inline",
        (simplify.Simplify, "inline_into", lambda self, f: False),
        """
        def f(x):
            if x > 0:
                return x * x
            y = np.sin(x)
            return y * x
        """,
        None,
        (0.7,),
        "if x > 0:",
        "def after_if_L",
    ),
    (
        "definedness",
        (simplify.Simplify, "definedness", lambda self, f: None),
        """
        def f(x):
            y = x * x + np.sin(x)
            return y
        """,
        None,
        (0.7,),
        "x_bar = x_bar + (unbroadcast(mul_bar * x, x) + unbroadcast(mul_bar * x, x))",
        "acc(",
    ),
    (
        "copies",
        (simplify.Simplify, "copies", lambda self, f: False),
        """
        def f(x):
            a = x * 2.0
            b = a
            return b * b
        """,
        None,
        (0.7,),
        "k(a * a)",
        "b = a\n",
    ),
    (
        "dead_stores",
        (simplify.Simplify, "dead_stores", lambda self, f: False),
        """
        def f(x):
            y = x * x + np.sin(x)
            return y
        """,
        None,
        (0.7,),
        "y_bar = k(y)",
        "x_bar = None",
    ),
    (
        "forward",
        (simplify.Simplify, "forward_substitute", lambda self, f: False),
        """
        def f(W, x, b):
            h = np.tanh(W @ x + b)
            return np.sum(h)
        """,
        {"W": {"array"}, "x": {"array"}, "b": {"array"}},
        (np.arange(6.0).reshape(2, 3) / 10, np.array([0.3, -0.2, 0.5]), np.array([0.1, -0.4])),
        "h = np.tanh(matmul + b)",
        "add = matmul + b",
    ),
    (
        "tails",
        (simplify.Simplify, "eta", lambda self, f: False),
        """
        def f(x):
            i = 0
            while i < 3:
                x = x * 2.0
                i = i + 1
            return x
        """,
        None,
        (0.7,),
        "x_1_bar = loop_L5_bp(k, x_1, i_1)",
        "return k(loop_L5_x)",
    ),
    (
        # a loop whose carried value is unused after it (an RNN collecting its states): the
        # continuation `k(v); return zeros_like(v)` is `k` -- every one `k` is given returns
        # zeros_like of its value -- so the loop hands `k` down and Defunctionalize rewrites it
        "tails_zero",
        (simplify.Simplify, "_zero_k", lambda self, f, k: False),
        """
        def f(x):
            hs = []
            h = x
            for i in range(3):
                h = np.tanh(h * 1.5 + 0.1)
                hs.append(h)
            return np.sum(np.stack(hs))
        """,
        None,
        (np.array([0.3, -0.2]),),
        "h_1_bar = loop_L6_bp(k, i + 1, h_1)",
        "def after_loop_L6(",
    ),
    (
        # the sigmoid's adjoint: the division's `-g * out / den` and the negation's `-g` cancel
        "negations",
        (simplify.Simplify, "cancel_negations", lambda self, f: False),
        """
        def f(x):
            return np.sum(1.0 / (1.0 + np.exp(-x)))
        """,
        None,
        (np.array([0.3, -1.2, 2.0]),),
        "x_bar = div_bar * div / add * exp",
        "neg_bar = ",
    ),
    (
        "peephole",
        (peephole._Peephole, "binop", lambda self, node: node),
        """
        def f(x):
            return x ** 1 * (2.0 * 3.0)
        """,
        None,
        (0.7,),
        "mul = 6.0",
        "2.0 * 3.0",
    ),
]


@pytest.mark.parametrize(
    "rewrite, off, source, kinds, args, with_it, without_it", CASES, ids=[c[0] for c in CASES]
)
def test_each_rewrite_has_its_effect_and_keeps_the_gradient(
    rewrite, off, source, kinds, args, with_it, without_it, monkeypatch
):
    text = src(source)
    out = stage_source(text, "simplify", CONTEXT, kinds=kinds)
    assert with_it in out and without_it not in out, out
    with monkeypatch.context() as m:
        m.setattr(*off)
        before = stage_source(text, "simplify", CONTEXT, kinds=kinds)
    assert without_it in before, before

    f = function_from_source(text, "f")
    g = np.asarray(cpsad.grad(f)(*args))
    rng = np.random.default_rng(0)
    x0 = np.asarray(args[0], dtype=float)
    d = rng.standard_normal(x0.shape)
    step = 1e-6
    up = f(x0 + step * d, *args[1:])
    down = f(x0 - step * d, *args[1:])
    fd = (up - down) / (2 * step)
    assert np.allclose(np.sum(g * d), fd, rtol=1e-5, atol=1e-7)


def test_gather_merges_entry_adjoints_only_when_on(monkeypatch):
    """(Gradients and the merge's placement: ``test_simplify_gathers_a_dicts_entry_adjoints_into
    _one_merge`` in tests/test_passes.py.)"""
    text = src("""
        def f(p, x):
            return np.sum(p["w"] * x + p["b"])
    """)
    kw = {"active": ("p",), "kinds": {"x": {"array"}}}
    out = stage_source(text, "simplify", CONTEXT, **kw)
    assert out.count("items_adjoint(") == 1 and "getitem_adjoint(" not in out, out
    with monkeypatch.context() as m:
        m.setattr(simplify.Simplify, "gather_all", lambda self, root: None)
        before = stage_source(text, "simplify", CONTEXT, **kw)
    assert "items_adjoint(" not in before and before.count("getitem_adjoint(") == 2, before


NEGATED = [
    # the sigmoid: two negations cancel through a division and a product
    ("def f(x):\n    return np.sum(np.tanh(x) * (1.0 / (1.0 + np.exp(-x))))\n", True),
    # a float constant takes the sign: -(g * 0.5) is g * -0.5
    ("def f(x):\n    y = -(np.sin(x) * 0.5)\n    return np.sum(np.cos(y) * x)\n", True),
    # three negations on a chain through exp: two cancel, the one of the sum stays
    ("def f(x):\n    y = -(np.sin(x) + x)\n    return np.sum(-np.exp(-y) * x)\n", True),
    # a negation whose sign reaches no other: left as it is
    ("def f(x):\n    return np.sum(-np.sin(x) * x)\n", False),
    # in a loop, the chain in the loop's body
    (
        "def f(x):\n    for i in range(3):\n        x = 1.0 / (1.0 + np.exp(-x))\n"
        "    return np.sum(x)\n",
        True,
    ),
]


@pytest.mark.parametrize("text, cancels", NEGATED)
def test_negations_cancel_exactly(text, cancels, monkeypatch):
    """Cancelling signs changes no bit of the gradient: each step is exact in IEEE arithmetic
    (``-(x * y)`` is ``(-x) * y``), on arrays and on numbers alike. (Transformed afresh each
    time, ``compiler.variant``: no cache of another worker's is cleared.)"""
    f = function_from_source(text, "f")
    rng = np.random.default_rng(1)
    points = [rng.standard_normal(7) * s for s in (0.1, 1.0, 30.0)] + [0.37, -2.5]

    def gradients(rewrite):
        with monkeypatch.context() as m:
            m.setattr(simplify.Simplify, "cancel_negations", rewrite)
            out = []
            for p in points:
                kinds = compiler.kinds_of(f.__code__, [p], {})
                spec = compiler.variant(f, ("x",), kinds=kinds)
                out.append(np.asarray(spec.bp(lambda result: 1.0, p)))
            return out

    cancelled = []
    rewrite = simplify.Simplify.cancel_negations
    with_it = gradients(lambda self, g: cancelled.append(rewrite(self, g)) or cancelled[-1])
    assert any(cancelled) == cancels
    without = gradients(lambda self, g: False)
    for a, b, p in zip(with_it, without, points):
        assert np.array_equal(a, b), (a, b)
        want = np.asarray(cpsad.grad(f)(p))
        np.testing.assert_allclose(a, want, rtol=1e-12, atol=0)
