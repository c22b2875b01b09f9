"""The Stacks pass (transforms/stacks.py): a staged loop that knows its trip count saves its floats
in buffers, and computes what the loop with lists computes -- bit for bit, since only where the
floats are kept changes.

Each end-to-end case runs the compiled code made with buffers and the one made without the pass
(lists), and the Python backpropagator; the cases that must get buffers say so, so that a pass
that stopped applying fails here. The checks that keep it safe are mutation-tested: a loop whose
bound grows, a value that is an integer after all (Numba refuses the buffer; the code is made
again with lists, without a warning).
"""

from __future__ import annotations

import math
import textwrap
import warnings

import numpy as np
import pytest

numba = pytest.importorskip("numba")

import cpsad  # noqa: E402
from cpsad import compiler, staging  # noqa: E402
from cpsad.transforms import astlib as A  # noqa: E402
from cpsad.transforms import stacks  # noqa: E402


def scalar_loop(x, w, c, n):
    s = 0.0
    for _ in range(n):
        x = x * w + math.sin(x) * c + 0.1
        s = s + math.tanh(x) * c
    return s / n


def ints_saved(x, n):
    s = 0.0
    for i in range(n):
        s = s + math.sin(x * i) * i
    return s


def while_float_bound(x, t):
    s = 0.0
    i = 0
    while i < t:
        s = s + math.cos(s * x)
        i += 1
    return s


def breaks_early(x, n):
    s = 0.0
    i = 0
    while i < n:
        s = s + math.cos(s * x) * x
        if s > 1.5:
            break
        i += 1
    return s


def for_break(x, n):
    s = 0.0
    for _ in range(n):
        s = s + math.cos(s * x) * x
        if s > 1.5:
            break
    return s


def for_continue(x, n):
    s = 0.0
    for i in range(n):
        if i % 2 == 0:
            continue
        s = s + math.sin(s * x) * x
    return s


def two_loops(x, n):
    s = 0.0
    for _ in range(n):
        s = s + math.sin(s + x)
    for _ in range(n + 2):
        s = s * math.cos(x) + 0.5
    return s


def nested(x, n, m):
    s = 0.0
    for _ in range(n):
        y = x
        for _ in range(m):
            y = math.sin(y) * x
        s = s + y * math.exp(-s)
    return s


def growing_bound(x, n):
    """The bound changes in the loop: its trip count is not known before it (6 iterations from
    n = 3, not 3)."""
    s = 0.0
    i = 0
    while i < n:
        s = s + math.sin(s * x) * x
        n = n + 0.5
        i += 1
    return s


def int_parameter(x, n):
    """``x`` an integer: ``x * 0.5`` is a float, ``x`` itself not."""
    s = 0.0
    for _ in range(n):
        s = s + math.sin(s) * x * 0.5
    return s


# (function, arguments, whether its loops get buffers)
CASES = [
    (scalar_loop, (0.5, 0.7, 0.3, 50), True),
    (scalar_loop, (0.5, 0.7, 0.3, 1), True),
    (ints_saved, (0.3, 7), True),
    (while_float_bound, (0.3, 4.5), True),
    (while_float_bound, (0.3, float("nan")), True),
    (while_float_bound, (0.3, -2.0), True),
    (breaks_early, (0.7, 40), True),  # (``while True``, ``if not joining: break``)
    (breaks_early, (0.7, 2), True),
    (for_break, (0.7, 40), True),
    (for_continue, (0.7, 9), True),
    (two_loops, (0.4, 5), True),
    (two_loops, (0.4, 1), True),
    (ints_saved, (0.3, 0), True),  # (no iteration: a buffer of none)
    (ints_saved, (0.3, -2), True),
    (nested, (0.3, 4, 3), True),
    (growing_bound, (0.3, 3), False),
    (int_parameter, (3, 6), True),
    (int_parameter, (3.0, 6), True),
]


def _staged(f, args, buffers=True):
    kinds = compiler.kinds_of(f.__code__, list(args), {})
    kinds = staging.staged_kinds(f, kinds, list(args))
    made = staging._make(f, ("x",), kinds, compiler.STAGED, buffers=buffers)
    assert not isinstance(made, str), made
    return made


@pytest.mark.parametrize("f, args, buffers", CASES, ids=lambda v: getattr(v, "__name__", None))
def test_same_numbers_with_buffers(f, args, buffers):
    with_buffers, with_lists = _staged(f, args), _staged(f, args, buffers=False)
    assert with_buffers.buffers == buffers, with_buffers.text
    assert "float_frames" not in with_lists.text
    got = with_buffers.dispatcher(1.0, *args)
    assert got == with_lists.dispatcher(1.0, *args)  # bit for bit
    want = cpsad.value_and_grad(f)(*args)
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-15)
    with warnings.catch_warnings():
        warnings.simplefilter("error", cpsad.JitWarning)
        assert cpsad.value_and_grad(cpsad.jit(f))(*args) == got


def test_the_staged_code_reads():
    text = _staged(scalar_loop, (0.5, 0.7, 0.3, 5)).text
    code = "\n".join(ln.strip() for ln in text.splitlines() if not ln.lstrip().startswith("#"))
    for line in (
        "frames_count = trip_count(__1, n)",
        "frames_x_1 = float_frames(frames_count)",
        "push_float(frames_x_1, frames_top, x_3)",
        "frames_top = frames_top + 1",
        "while frames_top > 0:",
        "frames_top = frames_top - 1",
        "x_3 = frames_x_1[frames_top]",
    ):
        assert line in code, code
    assert ".append(" not in code and ".pop()" not in code


def test_an_inner_loop_keeps_its_lists():
    """An inner loop's stacks are made once before the outer loop, and its backward part pops
    down to a mark: they stay lists; the outer loop's floats get a buffer."""
    code = _staged(nested, (0.3, 4, 3)).text
    assert "_mark_1 = len(frames_" in code and ".append(" in code
    assert "float_frames(" in code


def test_a_value_numba_types_otherwise_makes_it_again_with_lists(monkeypatch):
    """Were a saved integer taken for a float, Numba refuses its buffer: the code is made again
    without the pass, and runs compiled -- no warning, the same numbers."""

    def f(x, n):  # (ints_saved; a function of its own: none of the cases' code cached)
        s = 0.0
        for i in range(n):
            s = s + math.sin(x * i) * i
        return s

    every = stacks._floats

    def everything(fn, unit, float_call):
        names = {n.id for n in A.walk(fn) if isinstance(n, A.Name)}
        return every(fn, unit, float_call) | names

    monkeypatch.setattr(stacks, "_floats", everything)
    args = (0.3, 7)
    vg = cpsad.value_and_grad(cpsad.jit(f))
    with warnings.catch_warnings():
        warnings.simplefilter("error", cpsad.JitWarning)
        got = vg(*args)
        assert vg(*args) == got  # (called again: the code made again, not the first)
    assert got == pytest.approx(cpsad.value_and_grad(f)(*args), rel=1e-12)
    kinds = staging.staged_kinds(f, compiler.kinds_of(f.__code__, list(args), {}), list(args))
    made = staging._MADE[(f.__code__, ("x",), kinds, compiler.STAGED)]
    assert not made.buffers and "float_frames" not in made.text


# ------------------------------------------------------------------ the analyses, on their own


def _loop(source: str):
    return A.parse(source).body[0]


def _joined(branch: str, orelse: str = "out = s", flag: str = "False") -> str:
    """A loop left by ``break``, as Defunctionalize writes it (``for_break``'s): ``branch`` the
    body of ``if b:``, ``orelse`` its ``else``."""
    return textwrap.dedent("""\
        while True:
            joining = {flag}
            b = i < n
            if b:
        {branch}
            else:
        {orelse}
            if not joining:
                break
            frames.append(s)
            i, s = j, t
        """).format(
        flag=flag,
        branch=textwrap.indent(textwrap.dedent(branch).strip(), " " * 8),
        orelse=textwrap.indent(textwrap.dedent(orelse).strip(), " " * 8),
    )


STEP = """
    j = i + 1
    t = s * 2.0
    joining = True
"""


@pytest.mark.parametrize(
    "source, counted",
    [
        (_joined(STEP), ("i", "n")),
        # a break in the body: its path does not join
        (_joined("if s > 1.0:\n    out = s\nelse:\n" + textwrap.indent(STEP, "    ")), ("i", "n")),
        (_joined("k = i + 1\nj = k\nt = s\njoining = True"), ("i", "n")),
        # a continue: two joins, each assigning what i steps to
        (
            _joined(
                "if s:\n"
                + textwrap.indent(STEP, "    ")
                + "else:\n"
                + textwrap.indent(STEP, "    ")
            ),
            ("i", "n"),
        ),
        (_joined("t = s\njoining = True"), None),  # j not assigned where it joins
        (_joined(STEP.replace("j = i + 1", "j = i")), None),  # a path that does not step
        (_joined(STEP, orelse=STEP), None),  # joins where i >= n too
        # one path that joins without stepping (j keeps the last iteration's value)
        (
            _joined(
                "if s:\n" + textwrap.indent(STEP, "    ") + "else:\n    t = s\n    joining = True"
            ),
            None,
        ),
        (_joined(STEP, flag="True"), None),  # joining not reset each iteration
        (_joined(STEP, flag="c"), None),
        (_joined(STEP + "    b = False\n"), None),  # the test's flag rebound
    ],
)
def test_counted_when_it_leaves_by_break(source, counted):
    test_counted(source, counted)


@pytest.mark.parametrize(
    "source, counted",
    [
        ("while i < n:\n    s = s + 1.0\n    i = i + 1", ("i", "n")),
        ("while i < 10:\n    i, s = i + 1, s * 2.0", ("i", 10)),
        ("while i < n:\n    j = i + 1\n    s = s + 1.0\n    i = j", ("i", "n")),
        ("while i < n:\n    if s > 1:\n        break\n    i = i + 1", ("i", "n")),
        ("while i < n:\n    i = i + 2", None),  # (counted, but not by one: not recognized)
        ("while i < n:\n    n = n + 1\n    i = i + 1", None),  # the bound changes
        ("while i < n:\n    if s:\n        i = i + 1", None),  # the step in a branch
        ("while i < n:\n    i = i + 1\n    i = i + 1", None),  # bound twice
        ("while i < n:\n    if s:\n        continue\n    i = i + 1", None),  # skips the step
        ("while i <= n:\n    i = i + 1", None),
        ("while i < n:\n    j = i + 1\n    j = 0\n    i = j", None),
        ("while i < n:\n    i = i + 1\nelse:\n    s = 0.0", None),
        ("while True:\n    g = None\n    if not i < n:\n        break\n    i = i + 1", ("i", "n")),
        ("while True:\n    if not i < n:\n        break\n    if s:\n        i = i + 1", None),
        ("while True:\n    if i < n:\n        break\n    i = i + 1", None),
        ("while i < len(x):\n    i = i + 1", None),
    ],
)
def test_counted(source, counted):
    got = stacks._counted(_loop(source))
    if counted is None:
        assert got is None
    else:
        i, stop, _ = got
        assert (i, stop.id if isinstance(stop, A.Name) else stop.value) == counted


class _Unit:
    injected: dict = {}

    def __init__(self, kinds):
        self.arg_kinds = kinds


def _floats(source: str, kinds=None) -> set:
    f = A.parse(source).body[0]
    return stacks._floats(f, _Unit(kinds or {}), lambda call: A.dotted(call.func) == "math.sin")


def test_floats():
    src = """
def f(x, n):
    i = 0
    k = 2
    s = 0.0
    y = x
    while i < n:
        t = math.sin(y)
        y = y * k
        q = i / 2
        r = i // 2
        b = y > 0.0
        i = i + 1
        s = s + t
        k = k * 3
    return s
"""
    assert _floats(src) == {"q"}  # (x may be anything: nothing computed from it is a number)
    # y: x may be an integer (kinds say "number" of both)
    assert _floats(src, {"x": frozenset({"number"})}) == {"s", "t", "q"}
    floats = _floats(src, {"x": frozenset({"number"}), "*floats*": frozenset({"x"})})
    assert floats == {"s", "t", "q", "x", "y"}  # (i, k, r: integers; b: a bool)
    # an array parameter (or one of unknown kind) makes nothing it touches a number
    assert "y" not in _floats(src, {"x": frozenset({"array"}), "*floats*": frozenset()})


def test_floats_key():
    assert stacks.floats_key(["x", "n", "a"], [0.5, 3, np.float64(2.0)]) == (
        ("*floats*", ("x", "a")),
    )
    assert stacks.floats_key(["n", "v"], [3, np.ones(2)]) == ()


def test_show_jit_at(capsys):
    """``cpsad show --jit --at EXPR``: the code cpsad.jit compiles for a call with those arguments
    -- their kinds known, floats among them -- which ``--jit`` alone, for arguments of unknown
    kinds, cannot show."""
    from cpsad.cli import main

    path = f"{__file__}::ints_saved"
    assert main(["show", path, "--jit", "--color", "never"]) == 0
    assert "float_frames" not in capsys.readouterr().out
    assert main(["show", path, "--jit", "--at", "(0.3, 7)", "--color", "never"]) == 0
    out = capsys.readouterr().out
    assert "frames_mul_1 = float_frames(frames_count)" in out and "frames_i_1 = []" in out
    assert main(["show", path, "--jit", "--at", "(3, 7)", "--color", "never"]) == 0
    assert "float_frames" not in capsys.readouterr().out  # (x an integer: x * i too)
