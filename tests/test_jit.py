"""cpsad.jit: backpropagators compiled by Numba give the Python backpropagator's numbers.

Every corpus function of floats, integers and float arrays is differentiated both ways: where
it is compiled, the value and gradient match the Python backpropagator's to rounding; where it
is not, it warns once (JitWarning, saying which construct) and gives exactly the same numbers.
A list of functions that must compile keeps the scope from shrinking unnoticed.
"""

from __future__ import annotations

import math
import os
import subprocess
import sys
import textwrap
import warnings

import numpy as np
import pytest

numba = pytest.importorskip("numba")

import cpsad  # noqa: E402
from benchmarks import jit_scope  # noqa: E402
from cpsad import compiler, staging  # noqa: E402
from tests import corpus_control, corpus_core, corpus_helpers  # noqa: E402

# what this version compiles (more is welcome: add it here)
MUST_COMPILE = {
    "square",
    "poly",
    "ints_mixed",
    "constants",
    "reuse",
    "rebinding",
    "tuple_unpack",
    "loop_range",
    "loop_while",
    "math_in_loop",
    # an ``if``'s join inlined once, after it (Flatten's ``_inline_join``)
    "branch",
    "branch_nested",
    "branch_one_sided",
    "branch_return_early",
    "branch_inactive_test",
    "condexpr",
    "boolops",
    "call_chain",
    "np_elementwise",
    "branch_arrays",
    # loops whose body branches, continues or breaks (Joins, then Defunctionalize's staged forms)
    "loop_break_continue",
    "loop_while_true",
    "loop_for_else",
    # local functions called from several places: a copy per call (Flatten's ``_copy_one``)
    "closure",
    "lambdas",
    "rebound_capture",
    "aug",
    # Numba's versions of the rules' helpers (cpsad/jit_runtime.py)
    "broadcasting",
    "loop_rows",
    "loop_tuple",
    "matmul",
    "transpose",
    # a user function's backpropagator defined in its caller (the Callees stage), keywords bound
    "calls_keywords",
    "calls",
    "calls_imported",
    # more helpers with Numba versions: indexes, np.s_, ranges, lists of numbers
    "indexing_2d",
    "loop_range_bounds",
    "array_from_scalars",
    "chained",
    "loop_swap",
    "inactive_work",
    "unused_active_result",
    "unused_arg",
    "unused_array",
    # loops in loops (Defunctionalize.inline_inner_loops)
    "loop_nested",
    # a tuple's entries read, their adjoints gathered (items_adjoint of a tuple of numbers)
    "build_tuple",
    "calls_tuple",
    # math.log in a base (math_log(x) / math_log(b)), a power's adjoint in its exponent (log_as)
    "operators",
    "math_functions",
    # np.squeeze along one axis
    "reshaping",
    # recursion: a call of itself with the seed 1.0, its adjoints scaled (transforms/recursion.py);
    # is_even and is_odd call each other
    "power",
    "fib_like",
    "is_even",
}


def _plain(a) -> bool:
    if isinstance(a, bool):
        return False
    if isinstance(a, (int, float)):
        return True
    return isinstance(a, np.ndarray) and a.dtype.kind in "fi"


CASES = [
    pytest.param(f, args, argnums, id=f"{f.__name__}-{i}")
    for mod in (corpus_core, corpus_control)
    for i, (f, args, argnums, *_) in enumerate(mod.CASES)
    if all(_plain(a) for a in args)
]


def _flat(g):
    return [np.asarray(x, float) for x in (g if isinstance(g, tuple) else (g,))]


def _compiled(f, args, argnums) -> bool:
    fn = f
    nums = (argnums,) if isinstance(argnums, int) else tuple(argnums)
    code = fn.__code__
    active = tuple(code.co_varnames[i] for i in nums)
    kinds = staging.staged_kinds(fn, compiler.kinds_of(code, list(args), {}), list(args))
    return not isinstance(staging.compiled(fn, active, kinds), str)


@pytest.mark.parametrize("f, args, argnums", CASES)
def test_same_numbers_as_python(f, args, argnums):
    want_value, want = cpsad.value_and_grad(f, argnums)(*args)
    refused = staging.REFUSED.get(f.__code__, 0)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        value, got = cpsad.value_and_grad(cpsad.jit(f), argnums)(*args)
    compiled = _compiled(f, args, argnums)
    warned = [w for w in caught if issubclass(w.category, cpsad.JitWarning)]
    if compiled:
        assert not warned, warned[0].message
        # (and its compiled code ran: one that refuses at run time hands the call to the
        # Python backpropagator without a warning)
        assert staging.REFUSED.get(f.__code__, 0) == refused, "its compiled code refused"
        np.testing.assert_allclose(value, want_value, rtol=1e-12, atol=1e-12)
        for a, b in zip(_flat(got), _flat(want)):
            np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)
    else:  # the Python backpropagator itself: exactly its numbers
        assert value == want_value
        for a, b in zip(_flat(got), _flat(want)):
            np.testing.assert_array_equal(a, b)
    if f.__name__ in MUST_COMPILE:
        assert compiled, f"{f.__name__} is no longer compiled"


def _tangents(args, nums, rng):
    return [
        (rng.normal(size=np.shape(a)) if np.ndim(a) else float(rng.normal())) if i in nums else None
        for i, a in enumerate(args)
    ]


def _compiled_forward(f, args, nums) -> bool:
    code = f.__code__
    active = tuple(code.co_varnames[i] for i in nums)
    kinds = compiler.kinds_of(code, list(args), {})
    return not isinstance(staging.compiled(f, active, kinds, mode=compiler.STAGED_FORWARD), str)


MUST_COMPILE_JVP = {
    "square",
    "poly",
    "loop_range",
    "loop_while",
    "loop_break_continue",
    "math_in_loop",
    "branch",
    "branch_return_early",
    # recursion: Numba compiles a tangent function that calls itself
    "power",
    "fib_like",
}


def test_recursive_jvp_against_finite_differences():
    from tests.corpus_control import fib_like

    eps = 1e-6
    with warnings.catch_warnings():
        warnings.simplefilter("error", cpsad.JitWarning)
        for x in (0.3, 0.7, 1.1):
            value, tangent = cpsad.jvp(cpsad.jit(fib_like), (x, 7), (1.0, None))
            assert value == pytest.approx(fib_like(x, 7), rel=1e-12)
            fd = (fib_like(x + eps, 7) - fib_like(x - eps, 7)) / (2 * eps)
            assert tangent == pytest.approx(fd, rel=1e-6)


@pytest.mark.parametrize("f, args, argnums", CASES)
def test_jvp_same_numbers_as_python(f, args, argnums):
    """Forward mode: ``cpsad.jvp(cpsad.jit(f), ...)`` -- the tangent function compiled."""
    nums = (argnums,) if isinstance(argnums, int) else tuple(argnums)
    tangents = _tangents(args, nums, np.random.default_rng(len(args)))
    want_value, want = cpsad.jvp(f, args, tangents)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", cpsad.JitWarning)
        value, got = cpsad.jvp(cpsad.jit(f), args, tangents)
    if _compiled_forward(f, args, nums):
        np.testing.assert_allclose(value, want_value, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)
    else:
        assert value == want_value
        np.testing.assert_array_equal(got, want)
    if f.__name__ in MUST_COMPILE_JVP:
        assert _compiled_forward(f, args, nums), f"{f.__name__}'s jvp is no longer compiled"


def test_scalar_loop_against_hand_written_pass():
    from benchmarks.workloads.scalar_loop import handwritten, loss

    value, grads = cpsad.value_and_grad(cpsad.jit(loss), argnums=(0, 1, 2))(0.5, 0.7, 0.3, 300)
    want_value, want = handwritten(0.5, 0.7, 0.3, 300)
    assert value == pytest.approx(want_value, rel=1e-12)
    np.testing.assert_allclose(grads, want, rtol=1e-10)
    assert _compiled(loss, (0.5, 0.7, 0.3, 300), (0, 1, 2))


def test_against_finite_differences():
    def f(x, w, n):
        s = 0.0
        for i in range(n):
            s = s + np.sum(np.tanh(w * x + i))
        return s

    rng = np.random.default_rng(0)
    x, w = 0.4, rng.normal(size=5)
    gx, gw = cpsad.grad(cpsad.jit(f), (0, 1))(x, w, 4)
    eps = 1e-6
    d = rng.normal(size=5)
    fd = (f(x, w + eps * d, 4) - f(x, w - eps * d, 4)) / (2 * eps)
    assert np.dot(gw, d) == pytest.approx(fd, rel=1e-6)
    fdx = (f(x + eps, w, 4) - f(x - eps, w, 4)) / (2 * eps)
    assert gx == pytest.approx(fdx, rel=1e-6)


def test_a_numba_function_is_differentiated_compiled():
    @numba.njit
    def f(x, n):
        s = 0.0
        for i in range(n):
            s = s + math.sin(x * i)
        return s

    got = cpsad.grad(f)(0.3, 5)
    want = sum(i * math.cos(0.3 * i) for i in range(5))
    assert got == pytest.approx(want, rel=1e-12)
    assert _compiled(f.py_func, (0.3, 5), 0)


_W = np.array([1.0, 2.0, 3.0])


def _reads_global(x):
    return np.sum(_W * x * x)


def test_data_it_reads_is_read_at_each_call_not_frozen():
    global _W
    g = cpsad.grad(cpsad.jit(_reads_global))
    assert g(1.0) == pytest.approx(12.0)
    _W = np.array([10.0, 0.0, 0.0])  # rebound: Numba would have frozen the old one
    try:
        assert g(1.0) == pytest.approx(20.0)
        _W[0] = 1.0  # changed in place
        assert g(1.0) == pytest.approx(2.0)
    finally:
        _W = np.array([1.0, 2.0, 3.0])


def test_closure_cells_are_arguments():
    def make(c):
        def f(x):
            return c * x * x

        return f

    assert cpsad.grad(cpsad.jit(make(3.0)))(2.0) == pytest.approx(12.0)
    assert cpsad.grad(cpsad.jit(make(5.0)))(2.0) == pytest.approx(20.0)


def _apply(h, x):
    y = h(x)
    return h(y) + y


def test_fallback_warns_once_and_says_why():
    def f(x, n):
        return _apply(lambda t: t * x, x) * n  # (a function passed as a value)

    g = cpsad.grad(cpsad.jit(f))
    want = (3 * 1.5**2 + 2 * 1.5) * 3
    with pytest.warns(cpsad.JitWarning, match="a local function used as a value"):
        assert g(1.5, 3) == pytest.approx(want)
    with warnings.catch_warnings():
        warnings.simplefilter("error", cpsad.JitWarning)
        assert g(1.5, 3) == pytest.approx(want)


class _Layer:
    def __init__(self, w):
        self.w = w


def _dict_loss(params, x):
    return np.sum(np.tanh(x @ params["W"] + params["b"]) ** 2)


def _object_loss(layer, x):
    return np.sum(np.tanh(x @ layer.w) ** 2)


@pytest.mark.parametrize(
    "loss, make, what",
    [
        (_dict_loss, lambda W, b: {"W": W, "b": b}, "`params` is a dict"),
        (_object_loss, lambda W, b: _Layer(W), "`layer` is an object of class `_Layer`"),
    ],
)
def test_an_argument_numba_cannot_take_is_named_before_numba_tries(loss, make, what):
    """A parameter dict (or an object) is no Numba type: the warning names the argument, not
    Numba's "non-precise type pyobject", and Numba is not asked to compile (it took 0.3 s to
    fail on an MLP). The numbers are the Python backpropagator's; warned once."""
    rng = np.random.default_rng(0)
    arg, x = make(rng.normal(size=(3, 2)), rng.normal(size=2)), rng.normal(size=(4, 3))
    before = dict(staging._MADE)
    with pytest.warns(cpsad.JitWarning, match=what + ", which Numba cannot take"):
        value, grad = cpsad.value_and_grad(cpsad.jit(loss), argnums=1)(arg, x)
    made = [v for k, v in staging._MADE.items() if k not in before and k[0] is loss.__code__]
    assert made and all(isinstance(v, str) and what in v for v in made)  # (nothing compiled)
    want_value, want_grad = cpsad.value_and_grad(loss, argnums=1)(arg, x)
    assert value == want_value and np.array_equal(grad, want_grad)
    cpsad.testing.check_grads(lambda x: loss(arg, x), x)
    with warnings.catch_warnings():
        warnings.simplefilter("error", cpsad.JitWarning)
        assert cpsad.value_and_grad(cpsad.jit(loss), argnums=1)(arg, x)[0] == want_value


def _walk(x, w, n):
    """Recursion over arrays with two differentiated parameters: a tuple of adjoints scaled."""
    if n == 0:
        return np.sum(x * w)
    return _walk(np.tanh(x * w), w, n - 1) * 0.9 + np.sum(x) * math.sin(n)


def _ping(x, w, n):
    if n <= 0:
        return x * w
    return _pong(math.sin(x) * w, w, n - 1) + x


def _pong(x, w, n):
    return _ping(x * x * 0.5, w, n - 1) * w


@pytest.mark.parametrize("n", [0, 1, 6])
def test_recursion_compiled_against_python_and_finite_differences(n):
    """A function calling itself: run with the seed 1.0 and its adjoints scaled by the adjoint
    of its result, which the rest of the caller gives afterwards (``transforms/recursion.py``)."""
    rng = np.random.default_rng(n)
    x, w = rng.normal(size=4), rng.normal(size=4)
    refused = staging.REFUSED.get(_walk.__code__, 0)
    with warnings.catch_warnings():
        warnings.simplefilter("error", cpsad.JitWarning)
        value, (gx, gw) = cpsad.value_and_grad(cpsad.jit(_walk), (0, 1))(x, w, n)
    assert _compiled(_walk, (x, w, n), (0, 1))
    assert staging.REFUSED.get(_walk.__code__, 0) == refused
    want_value, (wx, ww) = cpsad.value_and_grad(_walk, (0, 1))(x, w, n)
    assert value == pytest.approx(want_value, rel=1e-12)
    np.testing.assert_allclose(gx, wx, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(gw, ww, rtol=1e-10, atol=1e-12)
    eps = 1e-6
    for _ in range(3):
        dx, dw = rng.normal(size=4), rng.normal(size=4)
        fd = (_walk(x + eps * dx, w + eps * dw, n) - _walk(x - eps * dx, w - eps * dw, n)) / (
            2 * eps
        )
        assert np.dot(gx, dx) + np.dot(gw, dw) == pytest.approx(fd, rel=1e-6, abs=1e-9)


@pytest.mark.parametrize("n", [1, 2, 5, 8])
def test_mutual_recursion_compiled_against_python_and_finite_differences(n):
    """``_ping`` calls ``_pong``, copied into it, which calls ``_ping`` back: a call of itself."""
    refused = staging.REFUSED.get(_ping.__code__, 0)
    with warnings.catch_warnings():
        warnings.simplefilter("error", cpsad.JitWarning)
        value, (gx, gw) = cpsad.value_and_grad(cpsad.jit(_ping), (0, 1))(0.7, 1.3, n)
    assert _compiled(_ping, (0.7, 1.3, n), (0, 1))
    assert staging.REFUSED.get(_ping.__code__, 0) == refused
    want_value, (wx, ww) = cpsad.value_and_grad(_ping, (0, 1))(0.7, 1.3, n)
    assert value == pytest.approx(want_value, rel=1e-12)
    assert gx == pytest.approx(wx, rel=1e-10) and gw == pytest.approx(ww, rel=1e-10)
    eps = 1e-6
    assert gx == pytest.approx((_ping(0.7 + eps, 1.3, n) - _ping(0.7 - eps, 1.3, n)) / 2 / eps)
    assert gw == pytest.approx((_ping(0.7, 1.3 + eps, n) - _ping(0.7, 1.3 - eps, n)) / 2 / eps)


def test_recursion_deeper_than_the_stack_budget_runs_python():
    """Numba's recursion does not bound the C stack (a million levels crashed the process):
    past ``STACK_BUDGET`` bytes the compiled code refuses and the Python backpropagator runs --
    the same numbers, and the same RecursionError where Python's limit is passed."""
    from tests.corpus_control import power

    g = cpsad.value_and_grad(cpsad.jit(power))
    refused = staging.REFUSED.get(power.__code__, 0)
    assert g(1.00001, 500) == pytest.approx(cpsad.value_and_grad(power)(1.00001, 500), rel=1e-12)
    assert staging.REFUSED.get(power.__code__, 0) == refused  # (shallow: compiled)
    assert g(1.00001, 20_000) == cpsad.value_and_grad(power)(1.00001, 20_000)
    assert staging.REFUSED.get(power.__code__, 0) == refused + 1
    forward = cpsad.jvp(cpsad.jit(power), (1.00001, 20_000), (1.0, None))
    assert forward == cpsad.jvp(power, (1.00001, 20_000), (1.0, None))
    assert staging.REFUSED.get(power.__code__, 0) == refused + 2
    with pytest.raises(RecursionError):
        g(1.00001, 1_000_000)


def _grow(x, n):
    if n == 0:
        return x
    return np.sin(_grow(x, n - 1)) * 2.0


def test_recursion_with_an_array_result_runs_python():
    """The seed 1.0 stands for a number's adjoint only: an array result is left to Python."""
    x = np.linspace(0.1, 1.0, 3)
    ct = np.array([1.0, -2.0, 0.5])
    with pytest.warns(cpsad.JitWarning, match="Numba could not compile it"):
        value, pullback = cpsad.vjp(cpsad.jit(_grow), x, 3)
        got = pullback(ct)
    want_value, want_pullback = cpsad.vjp(_grow, x, 3)
    np.testing.assert_array_equal(value, want_value)
    for a, b in zip(got, want_pullback(ct)):
        np.testing.assert_array_equal(a, b)


def test_vjp_and_non_scalar_results():
    def f(x):
        return np.sin(x) * 2.0

    x = np.linspace(0.0, 1.0, 4)
    _, pullback = cpsad.vjp(cpsad.jit(f), x)
    (g,) = pullback(np.ones(4))
    np.testing.assert_allclose(g, 2.0 * np.cos(x), rtol=1e-12)
    with pytest.raises(TypeError, match="scalar"):
        cpsad.grad(cpsad.jit(f))(x)


def test_show_jit_prints_what_numba_compiles(tmp_path):
    src = tmp_path / "m.py"
    src.write_text(textwrap.dedent("""
            import math

            def f(x, n):
                s = 0.0
                for i in range(n):
                    s = s + math.sin(x)
                return s
            """))
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "cpsad",
            "show",
            f"{src}::f",
            "--wrt",
            "x",
            "--jit",
            "--color",
            "never",
        ],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert "flattened for Numba" in out
    assert "def f_bp(seed, x, n):" in out
    assert "nonlocal" not in out and "def loop" not in out
    forward = subprocess.run(
        [sys.executable, "-m", "cpsad", "show", f"{src}::f", "--wrt", "x", "--jit", "--forward"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert "the tangent function of `f`" in forward and "def f_jvp(x_dot, x, n):" in forward
    assert "def loop" not in forward and "while " in forward


def test_compiled_code_is_kept_across_processes(tmp_path):
    script = textwrap.dedent("""
        import cpsad
        from benchmarks.workloads.scalar_loop import loss
        g = cpsad.grad(cpsad.jit(loss), argnums=(0, 1, 2))
        g(0.5, 0.7, 0.3, 10)
        from cpsad import staging
        (c,) = [c for c in staging._MADE.values() if not isinstance(c, str)]
        print(sum(c.dispatcher.stats.cache_hits.values()))
        """)
    env = {**__import__("os").environ, "CPSAD_CACHE_DIR": str(tmp_path)}
    first = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True)
    second = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True)
    assert first.returncode == 0, first.stderr
    assert first.stdout.strip() == "0"
    assert second.stdout.strip() == "1", second.stderr


_V = np.array([1.0, 2.0])


def _star(x, *rest):
    return np.sum(_V * x) * len(rest) + x * rest[0]


def _keyword_only(x, *, c=3.0):
    return c * x * x


def test_parameters_of_every_kind_are_passed_by_position():
    """Data appended after ``*rest`` took its first item (a wrong gradient: 2.0 for 6.0+1.0);
    a keyword-only parameter was not passed at all."""
    for f, args in ((_star, (2.0, 1.0, 1.0)), (_keyword_only, (2.0,))):
        want = cpsad.value_and_grad(f)(*args)
        with warnings.catch_warnings():
            warnings.simplefilter("error", cpsad.JitWarning)
            got = cpsad.value_and_grad(cpsad.jit(f))(*args)
        assert got == pytest.approx(want, rel=1e-12)
    assert cpsad.grad(cpsad.jit(_star))(2.0, 5.0) == pytest.approx(3.0 + 5.0)
    with pytest.raises(TypeError):
        cpsad.grad(cpsad.jit(_keyword_only))(2.0, 1.0)  # too many: as the function says


class _Model:
    def __init__(self, c):
        self.c = c

    def loss(self, x):
        return self.c * math.sin(x)


def test_a_bound_method_and_a_partial():
    import functools

    m = _Model(2.0)
    assert cpsad.grad(cpsad.jit(m.loss))(0.3) == pytest.approx(2.0 * math.cos(0.3))
    p = functools.partial(_keyword_only, c=5.0)
    assert cpsad.grad(cpsad.jit(p))(2.0) == pytest.approx(20.0)


def test_a_rebound_helper_is_compiled_again(tmp_path, monkeypatch):
    """Numba froze the helper the staged code calls: it is made again when it is rebound (it
    went on returning the old helper's gradient)."""
    monkeypatch.syspath_prepend(str(tmp_path))
    (tmp_path / "jit_rebound.py").write_text(
        "def helper(x):\n    return x * x\n\n\ndef cube(x):\n    return x * x * x\n\n\n"
        "def f(x):\n    return helper(x) + 1.0\n"
    )
    import jit_rebound as m

    g = cpsad.value_and_grad(cpsad.jit(m.f))
    with warnings.catch_warnings():
        warnings.simplefilter("error", cpsad.JitWarning)
        assert g(2.0) == pytest.approx((5.0, 4.0))
        m.helper = m.cube
        assert g(2.0) == pytest.approx((9.0, 12.0))
    sys.modules.pop("jit_rebound", None)


def _joins(x, y, n):
    """Joins of every shape: an elif chain, a path that returns, a one-sided if, an if in a
    loop's body after the loop, an if whose test reads what the branches changed."""
    if x > 1.0:
        z = x * y
    elif x > 0.0:
        z = math.sin(x) * y
    else:
        z = -x
    if z > 0.5:
        z = z * z
    w = z
    for _ in range(n):
        w = w * 0.9 + math.tanh(y)
    if w > z:
        if y > 0.0:
            return w * x
        w = w + y
    else:
        w = w - x * y
    return w * z


@pytest.mark.parametrize("x", [1.7, 0.6, 0.2, -0.4, -1.3])
@pytest.mark.parametrize("y", [0.8, -0.3])
def test_joins_against_finite_differences(x, y):
    g = cpsad.value_and_grad(cpsad.jit(_joins), (0, 1))
    with warnings.catch_warnings():
        warnings.simplefilter("error", cpsad.JitWarning)
        value, (gx, gy) = g(x, y, 3)
    assert value == pytest.approx(_joins(x, y, 3), rel=1e-12)
    eps = 1e-6
    fx = (_joins(x + eps, y, 3) - _joins(x - eps, y, 3)) / (2 * eps)
    fy = (_joins(x, y + eps, 3) - _joins(x, y - eps, 3)) / (2 * eps)
    assert gx == pytest.approx(fx, rel=1e-5, abs=1e-7)
    assert gy == pytest.approx(fy, rel=1e-5, abs=1e-7)
    want = cpsad.value_and_grad(_joins, (0, 1))(x, y, 3)
    assert (gx, gy) == pytest.approx(want[1], rel=1e-12)


def _loop_if(x, w, n):
    """An if in the body: values of one branch saved in that branch."""
    s = 0.0
    for i in range(n):
        if i % 3 == 0:
            t = math.sin(x * i)
            s = s + t * w
        elif i % 3 == 1:
            s = s * x
        else:
            s = s + np.sum(w * x)
    return s


def _loop_continue_break(x, w, n):
    s = 1.0
    i = 0
    while True:
        i = i + 1
        if i > n:
            break
        if i % 2 == 0:
            s = s + x
            continue
        s = s * w + math.tanh(s)
        if s > 4.0:
            break
    return s * x


def _loop_arrays(x, v, n):
    """Floats and arrays saved in one frame; an early exit."""
    acc = np.zeros(3)
    for i in range(n):
        u = np.tanh(v * x + i)
        if np.sum(u) > 2.5:
            acc = acc + u * x
            break
        acc = acc * 0.5 + u
    return np.sum(acc * v)


def _check_compiled(f, x, w, n, forward=False):
    """``cpsad.jit(f)`` compiled (no fallback), with the Python backpropagator's value and
    gradient with respect to ``x`` and ``w``, and ``x``'s against central differences -- and,
    ``forward``, the compiled jvp along ``x`` too."""
    with warnings.catch_warnings():
        warnings.simplefilter("error", cpsad.JitWarning)
        value, (gx, gw) = cpsad.value_and_grad(cpsad.jit(f), (0, 1))(x, w, n)
        if forward:
            tangents = (1.0, np.zeros_like(w), None)
            jvp_value, tangent = cpsad.jvp(cpsad.jit(f), (x, w, n), tangents)
    want_value, (wx, ww) = cpsad.value_and_grad(f, (0, 1))(x, w, n)
    assert _compiled(f, (x, w, n), (0, 1))  # (a fallback warns once only)
    assert value == pytest.approx(want_value, rel=1e-12)
    np.testing.assert_allclose(gx, wx, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(gw, ww, rtol=1e-10, atol=1e-12)
    eps = 1e-6
    fd = (f(x + eps, w, n) - f(x - eps, w, n)) / (2 * eps)
    assert gx == pytest.approx(fd, rel=1e-5, abs=1e-7)
    if forward:
        assert _compiled_forward(f, (x, w, n), (0, 1))
        assert jvp_value == pytest.approx(want_value, rel=1e-12)
        assert tangent == pytest.approx(fd, rel=1e-5, abs=1e-7)


@pytest.mark.parametrize("n", [0, 1, 2, 5, 9])
@pytest.mark.parametrize("f", [_loop_if, _loop_continue_break, _loop_arrays])
def test_loops_that_branch_are_compiled(f, n):
    rng = np.random.default_rng(n)
    x = float(rng.uniform(0.2, 0.9))
    w = rng.uniform(0.5, 1.2, size=3) if f is _loop_arrays else float(rng.uniform(0.5, 1.2))
    if f is _loop_if:
        w = float(w) if np.ndim(w) == 0 else w
    _check_compiled(f, x, w, n)


def _nested_three(x, w, n):
    """Three loops deep: each inner loop's stacks are made once, its frames marked per level."""
    s = 0.0
    for i in range(n):
        for j in range(2):
            y = x * (i + j)
            for _ in range(3):
                y = math.tanh(y) + w * 0.1
            s = s + y * y
    return s


def _nested_while(x, w, n):
    """An inner while loop whose count depends on the values: a level's frames, however many."""
    s = 0.0
    i = 0
    while i < n:
        y = x + i
        while y < 10.0:
            y = y * 1.5 + w
        s = s + math.log(y)
        i += 1
    return s


def _nested_arrays(x, v, n):
    """Arrays saved by the inner loop, the outer loop's own values by the outer one."""
    total = 0.0
    for r in range(n):
        h = np.zeros(3)
        for t in range(r % 3 + 1):
            h = np.tanh(v * h * x + t)
        total = total + np.sum(h * h) * x
    return total


def _nested_branch(x, w, n):
    """An inner loop whose body branches: values of one branch on their own stacks."""
    s = 0.0
    for i in range(n):
        y = x
        for j in range(i):
            if j % 2 == 0:
                t = math.sin(y)
                y = t * w
            else:
                y = y * y + 0.1
        s = s + y
    return s


def _nested_break(x, w, n):
    """An inner loop that leaves by ``break``: the outer loop's backward part retraces its last
    turn's path from saved conditions, assigned only on some paths (``_read_where_set``)."""
    s = 0.0
    for i in range(n):
        for j in range(n):
            if j > i:
                break
            s = s + math.sin(x * i + j * w)
    return s


def _nested_break_on_value(x, w, n):
    """The inner loop leaves when a value crosses a bound: how many turns depends on x."""
    s = 0.0
    for i in range(n):
        y = x + 0.1 * i
        while True:
            y = y * 1.3 + w * 0.2
            if y > 4.0:
                break
        s = s + math.log(y) * x
    return s


def _nested_break_continue(x, w, n):
    """``continue`` in the outer loop, ``break`` and a branch in the inner one."""
    s = 0.0
    for i in range(n):
        if i % 3 == 1:
            continue
        t = x
        for j in range(4):
            if t > 1.5 + i * 0.1:
                break
            if j % 2 == 0:
                t = t * w + 0.3
            else:
                t = math.tanh(t) + x
        s = s + t * t
    return s


def _three_deep_break(x, w, n):
    """A ``break`` in the middle loop of three."""
    s = 0.0
    for i in range(n):
        for j in range(3):
            y = x * (j + 1) + i * 0.1
            if y > 1.4:
                break
            for _ in range(2):
                y = math.sin(y) * w + y
            s = s + y
    return s


@pytest.mark.parametrize("n", [0, 1, 2, 5])
@pytest.mark.parametrize("f", [_nested_break, _nested_break_on_value, _nested_break_continue])
def test_inner_loops_that_break_are_compiled(f, n):
    """An inner loop that leaves by ``break``: flattened into the outer loop (2026-12-06; it kept
    the outer loop recursive before -- a condition of its last turn, set on some paths only)."""
    rng = np.random.default_rng(n + 10)
    _check_compiled(f, float(rng.uniform(0.2, 0.9)), float(rng.uniform(0.5, 1.2)), n)


def _break_beside_work(x, w, n):
    """A ``break`` in one branch of an ``if`` whose other branch has work to undo: the levels
    that went on took the other branch (fuzz seed 400018, reduced)."""
    for _i in range(n):
        if math.sin(x * w) > 0.8:
            x = x * 0.9 + w
        else:
            if x > 2.0:
                break
        x = x * 1.3
    return x * w


def _continue_beside_break(x, w, n):
    """A ``continue`` that skips the rest of the body but goes on: a branch that skips the
    ``if``'s join is not one the levels that went on never took."""
    for _i in range(n):
        if math.cos(x) > 0.6:
            x = x * 1.1 + w * 0.1
            continue
        else:
            if x > 2.5:
                break
        x = x + 0.5 * math.sin(x * w)
    return x


def _break_in_both(x, w, n):
    """A ``break`` in each branch, beside work in each."""
    s = 0.0
    for _i in range(n):
        if x > 1.0:
            if s > 3.0:
                break
            s = s + math.tanh(x)
        else:
            if s < -3.0:
                break
            s = s - x * w
        x = x * w + 0.3
    return s + x


@pytest.mark.parametrize("n", [0, 1, 3, 7])
@pytest.mark.parametrize("x", [0.15, 0.6, 1.3, 2.2, 2.9])
@pytest.mark.parametrize("f", [_break_beside_work, _continue_beside_break, _break_in_both])
def test_a_break_beside_a_branch_that_goes_on_is_compiled(f, x, n):
    """What the levels that went on tested one way (``Defunctionalize``'s
    ``_known_conditions``): their backward part is only the branches they took, and the loop
    is flattened -- before, ``if branch: pass`` (the ``break``'s, nothing to undo) left the
    adjoint it assigns unset on a path, and the loop stayed recursive, not compiled."""
    _check_compiled(f, x, 0.8, n)


def _nested_continue(x, w, n):
    """A loop that runs a loop, then leaves its turn by ``continue``: in forward mode every loop
    is a chain of tail calls."""
    s = 0.0
    for i in range(n):
        y = x + 0.1 * i
        for _j in range(2):
            y = math.sin(y) * w
        if y > 0.5:
            continue
        s = s + y
    return s + x


def _counted_first(x, w, n):
    """A count made by nested loops with ``continue`` (not differentiated: tail calls in
    reverse mode too), then the loop it bounds (fuzz seed 400054, reduced)."""
    m = 0
    for i in range(n):
        for j in range(i):
            if (i + j) % 3 == 0:
                m = m + 1
        if m > 4:
            continue
        m = m + 1
    s = x
    for _ in range(m):
        s = s * w + math.sin(s)
    return s


@pytest.mark.parametrize("n", [0, 1, 3, 7])
@pytest.mark.parametrize("x", [0.15, 0.6, 1.3])
@pytest.mark.parametrize("f", [_nested_continue, _counted_first])
def test_a_tail_loop_that_runs_a_loop_is_compiled(f, x, n):
    """A loop whose turns end in tail calls of itself (``continue``; every loop of forward mode)
    became a ``while`` loop only where it ran no loop (``_tail_loop``): one that runs a loop,
    where no ``return`` is inside the inner one, is now one too -- before, it stayed recursive,
    not compiled, in forward mode (both) and in reverse mode (``_counted_first``)."""
    _check_compiled(f, x, 0.8, n, forward=True)


def _through_an_inverse(A, x, n):
    """``np.linalg.inv``, whose adjoint transposes with ``mT`` (fuzz seeds 400000..: "Untyped
    global name 'mT'")."""
    B = np.linalg.inv(A + 3.0 * np.eye(3))
    s = 0.0
    for _ in range(n):
        x = np.tanh(B @ x)
        s = s + np.sum(x * x)
    return s


@pytest.mark.parametrize("n", [1, 4])
def test_a_matrix_inverse_is_compiled(n):
    rng = np.random.default_rng(n)
    A, x = rng.standard_normal((3, 3)) * 0.3, rng.standard_normal(3)
    with warnings.catch_warnings():
        warnings.simplefilter("error", cpsad.JitWarning)
        value, (gA, gx) = cpsad.value_and_grad(cpsad.jit(_through_an_inverse), (0, 1))(A, x, n)
    assert _compiled(_through_an_inverse, (A, x, n), (0, 1))
    want_value, (wA, wx) = cpsad.value_and_grad(_through_an_inverse, (0, 1))(A, x, n)
    assert value == pytest.approx(want_value, rel=1e-12)
    np.testing.assert_allclose(gA, wA, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(gx, wx, rtol=1e-10, atol=1e-12)
    d = rng.standard_normal((3, 3))
    eps = 1e-6
    fd = (_through_an_inverse(A + eps * d, x, n) - _through_an_inverse(A - eps * d, x, n)) / (
        2 * eps
    )
    assert np.sum(gA * d) == pytest.approx(fd, rel=1e-5, abs=1e-8)


@pytest.mark.parametrize("n", [0, 1, 2, 5])
def test_a_break_in_the_middle_of_three_loops_gives_the_python_numbers(n):
    """Not yet compiled (values of the middle loop's last turn other than conditions, read
    where it set them, would need typed defaults): the Python backpropagator's numbers,
    compiled or not."""
    x, w = 0.45, 0.8
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", cpsad.JitWarning)
        value, grads = cpsad.value_and_grad(cpsad.jit(_three_deep_break), (0, 1))(x, w, n)
    want_value, want = cpsad.value_and_grad(_three_deep_break, (0, 1))(x, w, n)
    assert value == pytest.approx(want_value, rel=1e-12)
    np.testing.assert_allclose(grads, want, rtol=1e-10, atol=1e-12)
    eps = 1e-6
    fd = (_three_deep_break(x + eps, w, n) - _three_deep_break(x - eps, w, n)) / (2 * eps)
    assert grads[0] == pytest.approx(fd, rel=1e-5, abs=1e-7)


@pytest.mark.parametrize("n", [0, 1, 2, 5])
@pytest.mark.parametrize("f", [_nested_three, _nested_while, _nested_arrays, _nested_branch])
def test_nested_loops_are_compiled(f, n):
    """A loop in a loop: the inner loop, rewritten, is inlined into the outer one, which is
    rewritten in turn (``Defunctionalize.inline_inner_loops``, ``hoist_stacks``)."""
    rng = np.random.default_rng(n)
    x = float(rng.uniform(0.2, 0.9))
    w = rng.uniform(0.5, 1.2, size=3) if f is _nested_arrays else float(rng.uniform(0.5, 1.2))
    _check_compiled(f, x, w, n)


def _helper_scale(a, c):
    """A helper of several statements: called through its backpropagator, not inlined."""
    t = a * c
    return math.sin(t) + t


def _helper_loop(a, n):
    """A helper with a loop of its own."""
    s = a
    for i in range(n):
        s = math.tanh(s) * a + i * 0.1
    return s


def _helper_calls_helper(a, c):
    u = _helper_scale(a, c)
    return _helper_scale(u, 0.5) * u


def _calls_helpers(x, w, n):
    """Helpers called twice, one with a loop, one calling another, one in a loop."""
    u = _helper_scale(x, 2.0)
    v = _helper_scale(u, w)
    s = _helper_loop(v, n)
    for i in range(n):
        s = s + _helper_calls_helper(s * 0.1, w + i)
    return u * v + s


def _calls_array_helper(x, w, n):
    acc = np.zeros(3)
    for i in range(n):
        acc = acc + _array_helper(w * x, acc, i)
    return np.sum(acc * acc)


def _array_helper(v, h, i):
    z = np.tanh(v + h * 0.5)
    return z * (i + 1.0)


@pytest.mark.parametrize("n", [0, 1, 3])
@pytest.mark.parametrize("f", [_calls_helpers, _calls_array_helper])
def test_helpers_backpropagators_are_compiled_in(f, n):
    """A helper that is not inlined (several statements) is called through its backpropagator
    with a continuation: staged, its staged code is defined in the caller (the Callees stage)
    and Flatten inlines it -- in a loop too, where Defunctionalize then rewrites the loop."""
    rng = np.random.default_rng(n)
    x = float(rng.uniform(0.2, 0.9))
    w = rng.uniform(0.5, 1.2, size=3) if f is _calls_array_helper else float(rng.uniform(0.5, 1))
    _check_compiled(f, x, w, n, forward=True)


def _calls_other_module(x, w):
    y = corpus_helpers.smooth(x, w)
    return y * corpus_helpers.smooth(y, 0.5)


def _calls_module_data(x):
    return corpus_helpers.offset(x) * x


def test_a_helper_of_another_module_is_compiled_in_and_one_that_reads_its_data_is_not():
    """Another module's helper reads its modules and functions under names the caller gives
    them (a function it calls as it is, ``factor``, compiled too: Numba calls no Python
    function); one that reads data of its module (``OFFSET``, which may be rebound) keeps its call,
    and the warning says why."""
    with warnings.catch_warnings():
        warnings.simplefilter("error", cpsad.JitWarning)
        value, grads = cpsad.value_and_grad(cpsad.jit(_calls_other_module), (0, 1))(0.5, 0.7)
    want_value, want = cpsad.value_and_grad(_calls_other_module, (0, 1))(0.5, 0.7)
    assert value == pytest.approx(want_value, rel=1e-12)
    assert grads == pytest.approx(want, rel=1e-10)
    with pytest.warns(cpsad.JitWarning, match="`offset`, not compiled in: it reads `OFFSET`"):
        value, g = cpsad.value_and_grad(cpsad.jit(_calls_module_data))(0.3)
    assert (value, g) == pytest.approx(cpsad.value_and_grad(_calls_module_data)(0.3), rel=1e-12)


def _aliased_update(x, w, c):
    y = w * x
    z = y if c > 0 else w * 2.0
    y += w
    return np.sum(y * z)


def test_an_in_place_update_is_checked_in_compiled_code():
    """Where the update may change an array another name reads, the compiled check gives way
    to the Python backpropagator, whose refusal says why; where not, compiled numbers."""
    w = np.arange(3.0)
    g = cpsad.grad(cpsad.jit(_aliased_update))
    np.testing.assert_allclose(g(0.5, w, -1.0), cpsad.grad(_aliased_update)(0.5, w, -1.0))
    assert _compiled(_aliased_update, (0.5, w, -1.0), 0)
    with pytest.raises(TypeError, match="would change in place an array that another name"):
        g(0.5, w, 1.0)


# ----------------------------------------------------------------------------- found by the fuzzer
# (python -m tests.fuzz --jit, with the Numba-friendly features: each reduced to what failed)


def _adjoint_in_one_branch(v, w):
    """Seed 7198: w's adjoint None on one path, an array on the other -- an Optional array,
    whose ``unbroadcast`` made Numba's typing recurse until the stack ran out (a crash)."""
    s1 = np.mean(np.sin(w))
    mat2 = (s1 * (np.arange(9.0).reshape(3, 3) * 0.1 + w)) ** 2
    if np.trace(mat2) <= 0.46:
        return (mat2 + mat2).mean()
    return -0.69 * s1 + 0.55 * np.trace(mat2) - 0.8 * np.sum(w)


def _constant(a):
    return np.sin(np.ones((3, 3)) * 1.4) - a


def _loop_result_not_a_name(A, x):
    """Seed 7257: a loop whose level returns an expression, not a name (Defunctionalize
    crashed), and a call of a user function whose result is not differentiated (Numba could not
    call it: it is compiled too)."""
    for i in range(1):
        if i * -1.0 + x >= 0.22:
            break
        x = -x / (1.5 + np.sin(x))
        A = A - A
    mat = _constant(0.25)
    return 1.1 * np.sum(A) + 0.49 * x - 1.1 * mat[1, 2]


def _continue_discards(v, x):
    """Seed 23158: a loop that goes on from two branches, one of which discards what the next
    level hands back (its array is not differentiated): one self-call could not be made."""
    w = v
    for _ in range(3):
        if 1.2 - x > 0.4 and x + w[2] < 0.59:
            continue
        w = np.square(np.array([-1.03, -0.77, 1.42]))
    return 1.1 * np.dot(w, w) - 0.39 * x


def _spelt_for_numba(A, x):
    """Seeds 21012, 21108, 21079: ``np.matmul`` (a ufunc Numba takes as elementwise), a store
    through a slice (its index ``np.s_[0, 1:]``), a loop indexing a range -- each spelt as Numba
    compiles it (Flatten's ``_numba_spellings``; ``as_sequence``'s Numba version)."""
    buf = np.zeros((2, 3))
    buf[0, 1:] = x
    for i in range(2, 0, -1):
        x = x * 0.5 + i
    return np.sum(np.matmul(A, np.sin(A))) + np.sum(buf) * A[1, 2] + x


@pytest.mark.parametrize(
    "f, args",
    [
        (_spelt_for_numba, (np.arange(9.0).reshape(3, 3) / 10, 0.3)),
        (_continue_discards, (np.full(3, 0.1), 0.7)),
        (_continue_discards, (np.full(3, 0.1), 0.1)),
        (_adjoint_in_one_branch, (np.full(3, 0.3), np.full(3, 0.2))),
        (_adjoint_in_one_branch, (np.full(3, 0.3), np.full(3, 2.0))),
        (_loop_result_not_a_name, (np.full((3, 3), 0.3), 0.1)),
        (_loop_result_not_a_name, (np.full((3, 3), 0.3), 0.5)),
    ],
)
def test_found_by_the_fuzzer(f, args):
    with warnings.catch_warnings():
        warnings.simplefilter("error", cpsad.JitWarning)
        value, grads = cpsad.value_and_grad(cpsad.jit(f), (0, 1))(*args)
    want_value, want = cpsad.value_and_grad(f, (0, 1))(*args)
    assert value == pytest.approx(want_value, rel=1e-12)
    for a, b in zip(_flat(grads), _flat(want)):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)
    assert _compiled(f, args, (0, 1))


def test_numpy_spellings_numba_lacks_are_compiled():
    """(Its numbers: ``test_found_by_the_fuzzer``.)"""
    lines = staging.staged_source(_spelt_for_numba, ("A", "x")).splitlines()
    code = "\n".join(
        ln for ln in lines if not ln.lstrip().startswith("#")
    )  # (not the user's lines)
    assert "A @ sin_A" in code and "(0, slice(1, None, None))" in code
    assert "np.matmul" not in code and "np.s_" not in code


def test_what_compiled_code_raises_is_raised():
    """Where the compiled code raises, the Python backpropagator runs: it raises as the function
    does, and the compiled code is used again at the next call."""

    def f(x, y):
        return x / y

    g = cpsad.grad(cpsad.jit(f))
    for h in (g, cpsad.grad(f)):
        with pytest.raises(ZeroDivisionError):
            h(1.0, 0.0)
    assert g(1.0, 2.0) == 0.5
    assert _compiled(f, (1.0, 2.0), 0)


def _raises_with_a_message_of_its_values(x, n):
    if x < -5.0:
        raise ValueError(f"x too small: {x}")
    s = 0.0
    for i in range(n):
        if x > 100.0:
            raise ArithmeticError("step " + str(i)) from None
        s = s + np.sin(x * i)
    return s


@pytest.mark.parametrize(
    "x, error, message",
    [(-6.0, ValueError, "x too small: -6.0"), (200.0, ArithmeticError, "step 0")],
)
def test_a_raise_of_a_message_made_from_values_compiles(x, error, message):
    """``raise E(f"... {x}")`` (a message Numba cannot format, a ``from`` it does not know) kept
    the function out (6 of 300 fuzz programs): compiled, it raises ``E``, and the Python
    backpropagator raises the function's own exception, message and all."""
    f = _raises_with_a_message_of_its_values
    _compiled_alike(f, (0.3, 4), (0,))
    g = cpsad.grad(cpsad.jit(f))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", cpsad.JitWarning)
        with pytest.raises(error, match=message):
            g(x, 3)
    assert g(0.3, 4) == cpsad.grad(f)(0.3, 4)  # (and compiled again after it)
    assert _compiled(f, (0.3, 4), 0)


def _sum_of_squares_to(x, n):
    s = 0.0
    for i in range(n):
        s = s + x[i] * x[i]
    return s


def test_an_index_out_of_range_raises_as_in_python():
    """Numba does not check indexes by default: ``x[3]`` of three numbers read past the end and
    returned a number (14.0) where Python raises IndexError. Compiled with bounds checks, the
    compiled code raises; the Python backpropagator then runs and raises as the function does --
    and an index in range still runs compiled."""
    x = np.array([1.0, 2.0, 3.0])
    for h in (cpsad.value_and_grad(cpsad.jit(_sum_of_squares_to)), cpsad.grad(_sum_of_squares_to)):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", cpsad.JitWarning)
            with pytest.raises(IndexError):
                h(x, 5)
    value, g = cpsad.value_and_grad(cpsad.jit(_sum_of_squares_to))(x, 3)
    assert value == 14.0
    np.testing.assert_array_equal(g, 2 * x)


def _math_domains(x, y):
    return math.sqrt(x) + math.log(x + 1.0) + math.acos(y) + math.exp(x * y) + x**y


@pytest.mark.parametrize(
    "x, y, error",
    [
        (-2.0, 0.5, ValueError),  # sqrt of a negative
        (2.0, 1.5, ValueError),  # acos outside [-1, 1]
        (800.0, 1.0, OverflowError),  # exp of 800
        (0.0, -0.5, ZeroDivisionError),  # 0.0 ** -0.5
        (2.0, 0.5, None),
        (0.3, -0.9, None),
    ],
)
def test_math_raises_as_in_python(x, y, error):
    """Numba's ``math`` and ``**`` give nan or inf where Python's raise (``math.sqrt(-2.0)``
    returned nan under cpsad.jit): staged code calls versions that raise as Python does, the
    Python backpropagator then runs and raises as the function does; inside the domain the
    code is compiled and gives Python's numbers."""
    _raises_or_agrees(_math_domains, x, y, error)


def _raises_or_agrees(f, x, y, error):
    """``cpsad.jit(f)`` at ``(x, y)``: raises ``error`` as the Python backpropagator does, or,
    ``error`` None, is compiled (no JitWarning) and gives its numbers; the gradient returned."""
    want = cpsad.value_and_grad(f, (0, 1))
    got = cpsad.value_and_grad(cpsad.jit(f), (0, 1))
    if error is not None:
        for h in (want, got):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", cpsad.JitWarning)
                with pytest.raises(error):
                    h(x, y)
        return None
    with warnings.catch_warnings():
        warnings.simplefilter("error", cpsad.JitWarning)
        value, grads = got(x, y)
    want_value, want_grads = want(x, y)
    assert value == pytest.approx(want_value, rel=1e-12)
    np.testing.assert_allclose(grads, want_grads, rtol=1e-10)
    return grads


def _log_base(x, y):
    return math.log(x, y) + y**x


def _central(f, args, i, h=1e-6):
    up, down = list(args), list(args)
    up[i] += h
    down[i] -= h
    return (f(*up) - f(*down)) / (2 * h)


@pytest.mark.parametrize(
    "x, y, error",
    [
        (-1.0, 10.0, ValueError),  # the log of a negative
        (0.0, 10.0, ValueError),
        (2.0, 0.0, ValueError),  # a base of 0
        (2.0, 1.0, ZeroDivisionError),  # a base of 1: CPython divides by log(1)
        (2.0, 10.0, None),
        (3.5, 0.5, None),
        (0.7, 2.0, None),
    ],
)
def test_a_log_in_a_base_and_a_power_are_compiled(x, y, error):
    """``math.log(x, y)`` (Numba's takes one argument) is staged as ``math_log(x) /
    math_log(y)``, CPython's computation, raising where it does; ``y ** x``'s adjoint in ``x``,
    ``np.log(.., dtype=np.result_type(ans))`` (Numba has no ``np.result_type``), as ``log_as``.
    Compiled, the numbers are the Python backpropagator's and central differences'."""
    grads = _raises_or_agrees(_log_base, x, y, error)
    if grads is None:
        return
    for i in (0, 1):
        assert grads[i] == pytest.approx(_central(_log_base, (x, y), i), rel=1e-6)
    kinds = compiler.kinds_of(_log_base.__code__, [x, y], {})
    lines = staging.staged_source(_log_base, ("x", "y"), kinds).splitlines()
    code = "\n".join(ln for ln in lines if not ln.lstrip().startswith("#"))
    assert "math_log(x) / math_log(y)" in code and "log_as(" in code
    assert "math.log(" not in code and "result_type" not in code


def _power_of(x, y):
    return y**x


def test_a_power_of_a_negative_number_gives_python_nan():
    """``(-2.0) ** 3.0``'s adjoint in the exponent is ``-8 log(-2)``: nan, as numpy's log gives
    it in the Python backpropagator -- the compiled one gives nan too, not another number."""
    with warnings.catch_warnings():
        warnings.simplefilter("error", cpsad.JitWarning)
        value, (gx, gy) = cpsad.value_and_grad(cpsad.jit(_power_of), (0, 1))(3.0, -2.0)
    with np.errstate(invalid="ignore"):
        want_value, (wx, wy) = cpsad.value_and_grad(_power_of, (0, 1))(3.0, -2.0)
    assert value == want_value == -8.0
    assert math.isnan(gx) and math.isnan(wx)
    assert gy == wy == 12.0
    assert _compiled(_power_of, (3.0, -2.0), (0, 1))


def test_the_staged_file_names_the_numba_helpers_version():
    """Numba's cache keys on the staged file: its name carries a digest of the Numba helpers'
    source, so code compiled with another cpsad's helpers is not loaded."""
    from cpsad.staging import _runtime_version

    def f(x):
        return math.sin(x) * x

    cpsad.grad(cpsad.jit(f))(0.3)
    (made,) = [c for (code, *_), c in staging._MADE.items() if code is f.__code__]
    assert f".jit-{_runtime_version()}." in os.path.basename(made.path)


def _optional_unboxed(x, n, y):
    """Seed 13185: an adjoint None on the path taken, which Numba's code unboxed as a float
    (TypeError: expected float64, got None, where the Python backpropagator runs fine)."""
    s2 = -(y + 0.8) if np.arctan(y) <= 0.61 else n * 1.25
    s3 = np.cos(np.sin(x))
    acc = np.zeros(3)
    if s2 >= 0.37 and np.sin(x) < 1.8:
        s3 = s2
    elif x < 0.64:
        y *= np.tanh(x)
        for _ in range(4):
            if np.cos(y) >= -0.19:
                continue
            if y >= -0.61 and s3 + y < 0.7:
                return np.minimum(n * 1.6, s3) - s2
            acc -= x + -s2
    return 1.13 * x + 0.45 * y + 0.83 * s2 + 1.01 * s3 + 0.32 * acc[0]


def _break_in_nested_if(x, v, y):
    """Fuzz seed 23063, reduced: a ``break`` in an ``if`` followed, in the loop body, by the
    join of an outer ``if``. The leaving path's part after the continuation was moved after the
    loop together with the statements after the ``if`` -- the next level's arguments, which the
    paths that go on assign -- so no level went on; only Numba's check of an unassigned
    variable kept it out. ``_leave_once`` now leaves such a loop recursive."""
    k1 = 0
    while k1 < 4:
        k1 += 1
        if np.sin(y) >= 0.38:
            if (x + y) < (-0.1):
                break
            if y <= 0.3:
                v = v * x
    return np.sum(v) + x


@pytest.mark.parametrize("y", [0.2, 0.5, -0.9, 1.2])
def test_a_break_before_an_outer_join_gives_the_python_numbers(y):
    x, v = 0.5, np.array([1.0, 0.5, 2.0])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", cpsad.JitWarning)
        value, grads = cpsad.value_and_grad(cpsad.jit(_break_in_nested_if), (0, 1))(x, v, y)
    want_value, want = cpsad.value_and_grad(_break_in_nested_if, (0, 1))(x, v, y)
    assert value == pytest.approx(want_value, rel=1e-12)
    for a, b in zip(_flat(grads), _flat(want)):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)
    kinds = compiler.kinds_of(_break_in_nested_if.__code__, [x, v, y], {})
    kinds = staging.staged_kinds(_break_in_nested_if, kinds, [x, v, y])
    made = staging.compiled(_break_in_nested_if, ("x", "v"), kinds)
    assert not isinstance(made, str) or "not defined" not in made  # (no code Numba refused)


def _checked_sum(a, *, axes=(0, 1), c=-1.0):
    """A helper as numpy's own are written (the composites): a keyword-only parameter, a tuple
    default, a check that raises."""
    if a.ndim != 1:
        raise ValueError("a vector")
    t = a * c * axes[1]
    return np.sum(np.tanh(t)) + t[0]


def _calls_checked_sum(x, v):
    return _checked_sum(v * x, c=2.0) * _checked_sum(v)


def test_keyword_only_parameters_tuple_defaults_and_raise_compile():
    """Fuzz seeds 25009, 25024: ``np.average(..., weights=w)``, ``np.rot90(A)`` -- composites
    with keyword-only parameters, ``axes=(0, 1)``, a ``raise`` -- kept whole programs out."""
    v = np.array([0.3, -0.2, 0.5])
    with warnings.catch_warnings():
        warnings.simplefilter("error", cpsad.JitWarning)
        value, grads = cpsad.value_and_grad(cpsad.jit(_calls_checked_sum), (0, 1))(0.7, v)
    want_value, want = cpsad.value_and_grad(_calls_checked_sum, (0, 1))(0.7, v)
    assert value == pytest.approx(want_value, rel=1e-12)
    for a, b in zip(_flat(grads), _flat(want)):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)
    with pytest.raises(ValueError, match="a vector"), warnings.catch_warnings():
        warnings.simplefilter("ignore", cpsad.JitWarning)  # (raised again by the Python path)
        cpsad.grad(cpsad.jit(_calls_checked_sum), 1)(0.7, np.ones((2, 2)))


def test_a_bug_in_the_staged_pipeline_runs_the_python_backpropagator(monkeypatch):
    """A pass of the staged pipeline alone that fails (an internal error: a bug) costs the
    speed, not the call: the Python backpropagator, made already, runs, and the warning says
    to report it (the fuzzer counts it as a crash)."""
    from cpsad.transforms import flatten

    def broken(self, unit):
        raise RuntimeError("broken on purpose")

    monkeypatch.setattr(flatten.Flatten, "run", broken)

    def f(x):  # (a function of its own: its staged code is made anew)
        return x * x * 3.0

    with pytest.warns(cpsad.JitWarning, match="a bug in cpsad's staging.*broken on purpose"):
        assert cpsad.grad(cpsad.jit(f))(2.0) == pytest.approx(12.0)


def test_numbas_own_failures_run_the_python_backpropagator():
    args = (0.2381065370426385, 2, -1.0300672039472099)
    want = cpsad.value_and_grad(_optional_unboxed, (0, 2))(*args)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", cpsad.JitWarning)
        got = cpsad.value_and_grad(cpsad.jit(_optional_unboxed), (0, 2))(*args)
    assert got[0] == pytest.approx(want[0], rel=1e-12)
    np.testing.assert_allclose(got[1], want[1], rtol=1e-10)


def _reshape_transposed(v):
    """Seeds 11190, 11399: Numba cannot reshape a transposed array (numpy copies it): its
    compiled code raised NotImplementedError at the call; the Python backpropagator runs."""
    m = np.reshape(np.outer(v, v).T, 9)
    return np.sum(m * m)


def test_what_numba_cannot_run_falls_back():
    v = np.array([0.5, -1.0, 2.0])
    with pytest.warns(cpsad.JitWarning, match="Numba cannot run it"):
        got = cpsad.grad(cpsad.jit(_reshape_transposed))(v)
    np.testing.assert_array_equal(got, cpsad.grad(_reshape_transposed)(v))


def _with_aux(x, n):
    s = x
    for _ in range(n):
        s = s + math.sin(s * x)
    return s, s * 2.0


def _with_array_aux(w, X):
    h = np.tanh(X @ w)
    return np.sum(h * h), h


def _with_dict_aux(x):
    return x * x, {"m": x}


@pytest.mark.parametrize(
    "f, args",
    [(_with_aux, (0.3, 5)), (_with_array_aux, (np.linspace(0.1, 0.3, 3), np.eye(3)[:2] + 0.5))],
)
def test_has_aux_compiled(f, args):
    """``has_aux``: the seed of the pair's adjoint is ``(1.0, None)`` -- ``(cotangent, None)`` for
    vjp's pullback -- known before the call, so the backpropagator is staged as without aux."""
    (want_value, want_aux), want = cpsad.value_and_grad(f, has_aux=True)(*args)
    with warnings.catch_warnings():
        warnings.simplefilter("error", cpsad.JitWarning)
        (value, aux), got = cpsad.value_and_grad(cpsad.jit(f), has_aux=True)(*args)
        gradient, aux_2 = cpsad.grad(cpsad.jit(f), has_aux=True)(*args)
        out, pullback, aux_3 = cpsad.vjp(cpsad.jit(f), *args, has_aux=True)
        pulled = pullback(1.0)[0]
    assert value == pytest.approx(want_value, rel=1e-12)
    for a in (aux, aux_2, aux_3):
        np.testing.assert_allclose(a, want_aux, rtol=1e-12)
    for g in (got, gradient, pulled):
        np.testing.assert_allclose(g, want, rtol=1e-10, atol=1e-14)
    code = f.__code__
    assert any(k[0] is code and not isinstance(v, str) for k, v in staging._MADE.items())


def test_has_aux_of_what_numba_cannot_return_falls_back():
    with pytest.warns(cpsad.JitWarning, match="Numba could not compile"):
        got = cpsad.value_and_grad(cpsad.jit(_with_dict_aux), has_aux=True)(0.5)
    assert got == ((0.25, {"m": 0.5}), 1.0)


def test_the_seed_of_a_pair():
    from cpsad.runtime import Sparse, as_adjoint

    assert staging.seed_matches(as_adjoint((1.0, None)), (1.0, None))
    assert not staging.seed_matches(as_adjoint((2.0, None)), (1.0, None))
    assert not staging.seed_matches(as_adjoint((1.0, 1.0)), (1.0, None))
    assert not staging.seed_matches(Sparse({}), (1.0, None))
    assert not staging.seed_matches(1.0, (1.0, None))


def _captured_pair_unpacked_twice(v):
    """Reduced from a generated program (fuzz seed 160165): the pair's adjoint, accumulated over
    the helper's two calls, was Numba's concatenation of two tuples -- half the gradient."""
    pair = (np.dot(v, v), np.sum(v))

    def helper(u):
        a, b = pair
        return u * a + b

    return helper(2.0) + helper(0.6)


def test_a_tuple_adjoint_accumulated_over_two_calls():
    v = np.array([0.5, -1.0, 2.0])
    with warnings.catch_warnings():
        warnings.simplefilter("error", cpsad.JitWarning)
        got = cpsad.grad(cpsad.jit(_captured_pair_unpacked_twice))(v)
    want = cpsad.grad(_captured_pair_unpacked_twice)(v)
    np.testing.assert_allclose(got, want, rtol=1e-12)
    np.testing.assert_allclose(got, 2.6 * 2.0 * v + 2.0, rtol=1e-12)  # d/dv of 2.6 |v|^2 + 2 sum v


def _shrink(x, n):
    if n == 0:
        return np.sum(x * x)
    return _shrink(np.sum(np.sin(x)), n - 1) * 0.5


def test_recursion_with_arguments_of_other_kinds_is_checked():
    """The code made for an array ``x`` is called by itself with a number: Numba compiles the
    same code for it, which ``expect_array`` refuses, and the Python backpropagator runs."""
    x = np.array([0.3, -0.2, 0.9])
    g = cpsad.value_and_grad(cpsad.jit(_shrink))
    refused = staging.REFUSED.get(_shrink.__code__, 0)
    value, gx = g(x, 0)
    assert staging.REFUSED.get(_shrink.__code__, 0) == refused  # (no call of itself: compiled)
    np.testing.assert_allclose(gx, 2 * x, rtol=1e-12)
    value, gx = g(x, 2)
    assert staging.REFUSED.get(_shrink.__code__, 0) == refused + 1
    want_value, want = cpsad.value_and_grad(_shrink)(x, 2)
    assert value == want_value
    np.testing.assert_array_equal(gx, want)
    assert "expect_array(x)" in staging.compiled(_shrink, ("x",), _kinds(_shrink, (x, 2))).text


def _kinds(f, args):
    return staging.staged_kinds(f, compiler.kinds_of(f.__code__, list(args), {}), list(args))


def _rec_lin(x, w, n):
    if n <= 0:
        return x * w
    return _rec_lin(math.sin(x) * w, w, n - 1) + x


def _calls_rec_lin(x, w, n):
    y = _rec_lin(x * 2.0, w, n) * 3.0
    return y * y + w


def _compiled_alike(f, args, argnums):
    """``f``'s gradient compiled (no warning, nothing refused) and the Python one's, to rounding;
    both against central differences along each differentiated argument."""
    refused = sum(staging.REFUSED.values())
    with warnings.catch_warnings():
        warnings.simplefilter("error", cpsad.JitWarning)
        value, got = cpsad.value_and_grad(cpsad.jit(f), argnums)(*args)
    assert _compiled(f, args, argnums)
    assert sum(staging.REFUSED.values()) == refused
    want_value, want = cpsad.value_and_grad(f, argnums)(*args)
    assert value == pytest.approx(want_value, rel=1e-12)
    np.testing.assert_allclose(got, want, rtol=1e-10)
    eps = 1e-6
    for i, g in zip(argnums, got):
        up, down = list(args), list(args)
        up[i] += eps
        down[i] -= eps
        assert g == pytest.approx((f(*up) - f(*down)) / (2 * eps), rel=1e-5, abs=1e-8)


@pytest.mark.parametrize("n", [0, 1, 7])
def test_a_recursive_helper_is_compiled_apart(n):
    """A helper that calls itself cannot be copied into its caller (a copy would call itself):
    it is compiled on its own and called as the function itself is, with the seed 1.0."""
    _compiled_alike(_calls_rec_lin, (0.7, 1.3, n), (0, 1))
    text = staging.compiled(_calls_rec_lin, ("x", "w"), _kinds(_calls_rec_lin, (0.7, 1.3, n))).text
    assert "# _rec_lin_jit: compiled on its own, from tests.test_jit._rec_lin." in text


@pytest.mark.parametrize("d", [0, 3, 6])
def test_a_tree_recursive_helper_called_twice_is_compiled_apart(d):
    from benchmarks.jit_scope import calls_tree  # (a helper calling itself twice, timed there)

    _compiled_alike(calls_tree, (0.4, 0.9, d), (0, 1))


def _step(x):
    return x * 1.5


def _swappable(x, n):
    if n == 0:
        return x
    return _swappable(_step(x), n - 1) * x


def _calls_swappable(x, n):
    return _swappable(x, n) + x


def test_a_helper_compiled_apart_is_compiled_again_when_what_it_calls_is_rebound():
    """The caller's compiled code calls the helper's: rebinding a function the helper calls
    (another transformation in the call graph, the helper's code the same) makes both again --
    never the old step's numbers."""
    global _step
    old = _step
    g = cpsad.grad(cpsad.jit(_calls_swappable))
    before = g(0.8, 3)
    assert before == pytest.approx(cpsad.grad(_calls_swappable)(0.8, 3), rel=1e-12)

    def _step(x):  # noqa: F811  (rebound on purpose)
        return math.sin(x) + x

    try:
        want = cpsad.grad(_calls_swappable)(0.8, 3)
        assert want != pytest.approx(before)  # (another function: another gradient)
        assert g(0.8, 3) == pytest.approx(want, rel=1e-12)
        assert _compiled(_calls_swappable, (0.8, 3), 0)
    finally:
        _step = old


_TABLE = np.array([0.5, 2.0])


def _reads_table(x, n):
    if n == 0:
        return x * _TABLE[0]
    return _reads_table(x * _TABLE[1], n - 1) + x


def _calls_reads_table(x, n):
    return _reads_table(x, n) * 2.0


def test_a_recursive_helper_reading_data_falls_back_and_says_why():
    with pytest.warns(cpsad.JitWarning, match="_TABLE"):
        got = cpsad.grad(cpsad.jit(_calls_reads_table))(0.3, 3)
    assert got == cpsad.grad(_calls_reads_table)(0.3, 3)


@pytest.mark.parametrize("decorator", ["", "@numba.njit"])
def test_a_function_called_as_it_is_changed_on_disk_is_compiled_again(tmp_path, decorator):
    """A user's function the staged code calls as it is (its result not differentiated) is
    compiled into the staged code by Numba, whose cache keys on the staged file alone: edited
    between two processes, the second gave the old function's numbers (13.5, 18.0 where
    Python gives 27.0, 36.0). Its code's digest is now in the staged text."""
    module = tmp_path / "edited_module.py"
    source = textwrap.dedent(f"""
        import numba

        {decorator}
        def h(n):
            s = 0
            for i in range(n):
                s += i
            return s


        def f(x, n):
            return x * x * h(n)
        """)
    script = textwrap.dedent(f"""
        import sys, warnings
        sys.path.insert(0, {str(tmp_path)!r})
        warnings.simplefilter("error")
        import cpsad, edited_module as m
        print(cpsad.value_and_grad(cpsad.jit(m.f))(1.5, 4))
        """)
    env = {**os.environ, "CPSAD_CACHE_DIR": str(tmp_path / "cache")}
    outs = []
    for body in (source, source, source.replace("s += i", "s += 2 * i")):
        module.write_text(body)
        run = subprocess.run(
            [sys.executable, "-c", script], env=env, capture_output=True, text=True
        )
        assert run.returncode == 0, run.stderr
        outs.append(run.stdout.strip())
    assert outs == ["(13.5, 18.0)", "(13.5, 18.0)", "(27.0, 36.0)"]


_K = 2


def _counted(n):
    s = 0
    for i in range(n):
        s += i * _K
    return s


def _uses_counted(x, n):
    return x * x * _counted(n)


def test_a_global_a_function_called_as_it_is_reads_is_checked_at_each_call():
    """Numba freezes the numbers a function called as it is reads: one rebound, the staged
    code is made again (the Python backpropagator reads it live)."""
    global _K
    g = cpsad.value_and_grad(cpsad.jit(_uses_counted))
    assert g(1.5, 4) == (27.0, 36.0)
    _K = 4
    try:
        assert g(1.5, 4) == (54.0, 72.0) == cpsad.value_and_grad(_uses_counted)(1.5, 4)
    finally:
        _K = 2


_WEIGHTS = np.array([1.0, 2.0, 3.0])


def _weighted(n):
    s = 0.0
    for i in range(n):
        s += _WEIGHTS[i % 3]
    return s


def _uses_weighted(x, n):
    return x * _weighted(n)


def test_a_function_called_as_it_is_reading_an_array_falls_back_and_says_why():
    """Numba would freeze the array, and a change of it in place would not be seen."""
    with pytest.warns(cpsad.JitWarning, match="reads `_WEIGHTS`, which Numba would freeze"):
        got = cpsad.value_and_grad(cpsad.jit(_uses_weighted))(1.5, 4)
    assert got == cpsad.value_and_grad(_uses_weighted)(1.5, 4)


def test_what_a_module_of_yours_holds_is_read_at_each_call_and_digested(tmp_path):
    """``helpers.K`` (a number) and ``helpers.h`` (a numba.njit function) reached through a
    module: Numba froze both, in its cache too -- an edited module gave the old numbers in the
    next process, a rebound ``helpers.K`` the old numbers in this one. Now the number is a
    parameter read at each call, and the function's code digested into the staged text."""
    (tmp_path / "helpers_module.py").write_text(textwrap.dedent("""
        import numba

        K = 2.0


        @numba.njit
        def h(n):
            s = 0
            for i in range(n):
                s += i
            return s
        """))
    (tmp_path / "uses_helpers.py").write_text(textwrap.dedent("""
        import helpers_module


        def f(x, n):
            return x * x * helpers_module.h(n) * helpers_module.K
        """))
    script = textwrap.dedent(f"""
        import sys, warnings
        sys.path.insert(0, {str(tmp_path)!r})
        warnings.simplefilter("error")
        import cpsad, helpers_module, uses_helpers as m
        g = cpsad.value_and_grad(cpsad.jit(m.f))
        got, want = g(1.5, 4), cpsad.value_and_grad(m.f)(1.5, 4)
        helpers_module.K = -1.0
        print(got, want, g(1.5, 4), cpsad.value_and_grad(m.f)(1.5, 4))
        """)
    env = {**os.environ, "CPSAD_CACHE_DIR": str(tmp_path / "cache")}
    helpers = tmp_path / "helpers_module.py"
    outs = []
    for edit in (None, ("K = 2.0", "K = 3.0"), ("s += i", "s += 2 * i")):
        if edit:
            helpers.write_text(helpers.read_text().replace(*edit))
        run = subprocess.run(
            [sys.executable, "-c", script], env=env, capture_output=True, text=True
        )
        assert run.returncode == 0, run.stderr
        got, want, got_rebound, want_rebound = run.stdout.strip()[1:-1].split(") (")
        assert got == want and got_rebound == want_rebound, run.stdout
        outs.append(want)
    assert outs == ["27.0, 36.0", "40.5, 54.0", "81.0, 108.0"]


def test_data_an_inlined_helper_of_another_module_reads_is_passed(tmp_path, monkeypatch):
    """``scaled`` of another module, inlined, reads that module's ``SCALE``: the staged code
    looked for it among the caller's globals (a KeyError from inside cpsad). It is passed as
    the transformation found it, and a rebound one makes the code again."""
    (tmp_path / "scaling_module.py").write_text(
        "SCALE = 2.0\n\n\ndef scaled(x):\n    return x * SCALE\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    import scaling_module

    def f(x):
        return scaling_module.scaled(x) * x

    g = cpsad.value_and_grad(cpsad.jit(f))
    with warnings.catch_warnings():
        warnings.simplefilter("error", cpsad.JitWarning)
        assert g(1.5) == (4.5, 6.0) == cpsad.value_and_grad(f)(1.5)
        monkeypatch.setattr(scaling_module, "SCALE", 5.0)
        assert g(1.5) == (11.25, 15.0) == cpsad.value_and_grad(f)(1.5)


def _first_past(x, n):
    for i in range(n):
        if x * i > 3.0:
            return x * i
    return x


# (a return inside a while loop that carries a value: the one benchmarks/jit_scope.py times)
_accumulate_until = jit_scope.accumulate_until


def _rows_until(a, w, n):
    total = np.zeros(3)
    for i in range(n):
        total = total + np.tanh(a * w[i])
        if np.sum(total) > 2.0:
            return np.sum(total * a)
    return np.sum(total)


@pytest.mark.parametrize(
    "f, args, argnums",
    [
        (_first_past, (0.5, 0), 0),
        (_first_past, (0.5, 3), 0),
        (_first_past, (0.55, 10), 0),
        (_accumulate_until, (0.9, 0.7, 0), (0, 1)),
        (_accumulate_until, (0.9, 0.7, 3), (0, 1)),
        (_accumulate_until, (0.9, 0.7, 12), (0, 1)),
        (_rows_until, (np.array([0.5, -0.2, 0.8]), np.linspace(0.5, 2.0, 6), 6), (0, 1)),
        (_rows_until, (np.array([0.1, -0.2, 0.1]), np.linspace(0.1, 0.3, 6), 6), (0, 1)),
    ],
)
def test_a_return_inside_a_loop_is_compiled(f, args, argnums):
    """A loop that a ``return`` leaves carries nothing back (its value goes to ``k``, flagged):
    it ended without a ``return`` of its own, a form Defunctionalize did not match, and its
    continuation was called inside an expression (``x_bar = x_bar + k(x)``)."""
    nums = (argnums,) if isinstance(argnums, int) else argnums
    refused = staging.REFUSED.get(f.__code__, 0)
    with warnings.catch_warnings():
        warnings.simplefilter("error", cpsad.JitWarning)
        value, got = cpsad.value_and_grad(cpsad.jit(f), argnums)(*args)
    assert _compiled(f, args, argnums)
    assert staging.REFUSED.get(f.__code__, 0) == refused
    want_value, want = cpsad.value_and_grad(f, argnums)(*args)
    assert value == pytest.approx(want_value, rel=1e-12)
    for a, b in zip(_flat(got), _flat(want)):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)
    rng = np.random.default_rng(0)
    eps = 1e-6
    got = got if isinstance(argnums, tuple) else (got,)
    for i, g in zip(nums, got):
        d = rng.normal(size=np.shape(args[i])) if np.ndim(args[i]) else 1.0
        up, down = list(args), list(args)
        up[i], down[i] = args[i] + eps * d, args[i] - eps * d
        fd = (f(*up) - f(*down)) / (2 * eps)
        assert np.sum(g * d) == pytest.approx(fd, rel=1e-5, abs=1e-8)


def _softmax_cross_entropy(W, x, y):
    z = x @ W
    z = z - np.max(z, axis=1, keepdims=True)
    p = np.exp(z) / np.sum(np.exp(z), axis=1, keepdims=True)
    return -np.mean(np.sum(y * np.log(p), axis=1))


def _spread(a, w):
    return np.sum((np.max(a * w, axis=0) - np.min(a, axis=1, keepdims=True)) ** 2)


@pytest.mark.parametrize(
    "f, args, argnums",
    [
        (
            _softmax_cross_entropy,
            (
                np.random.default_rng(1).normal(size=(4, 3)),
                np.random.default_rng(2).normal(size=(5, 4)),
                np.eye(3)[[0, 1, 2, 1, 0]],
            ),
            (0, 1),
        ),
        (_spread, (np.random.default_rng(3).normal(size=(3, 3)), 1.7), (0, 1)),
    ],
)
def test_reductions_along_an_axis_keeping_dimensions_compile(f, args, argnums):
    """``np.max(z, axis=1, keepdims=True)`` and ``np.sum(.., keepdims=True)``, as a softmax
    writes them, fell back (Numba's ``np.max`` takes no axis, its ``np.sum`` no keepdims)."""
    with warnings.catch_warnings():
        warnings.simplefilter("error", cpsad.JitWarning)
        value, got = cpsad.value_and_grad(cpsad.jit(f), argnums)(*args)
    assert _compiled(f, args, argnums)
    want_value, want = cpsad.value_and_grad(f, argnums)(*args)
    assert value == pytest.approx(want_value, rel=1e-12)
    rng = np.random.default_rng(4)
    eps = 1e-6
    for i, g, w in zip(argnums, got, want):
        np.testing.assert_allclose(g, w, rtol=1e-10, atol=1e-12)
        d = rng.normal(size=np.shape(args[i])) if np.ndim(args[i]) else 1.0
        up, down = list(args), list(args)
        up[i], down[i] = args[i] + eps * d, args[i] - eps * d
        assert np.sum(g * d) == pytest.approx((f(*up) - f(*down)) / (2 * eps), rel=1e-5)


def _halvings(n):
    if n <= 1:
        return 0
    return 1 + _halvings(n // 2)


def _twice_halvings(n):
    return 2 * _halvings(n)


def _uses_halvings(x, n):
    return x * x * _halvings(n) + x * _twice_halvings(n)


def test_functions_called_as_they_are_may_call_themselves_and_each_other():
    """Numba calls no Python function: ``_halvings`` calling itself, and ``_twice_halvings``
    calling it, could not compile (an untyped global name); each is compiled from a copy whose
    globals name the others compiled."""
    with warnings.catch_warnings():
        warnings.simplefilter("error", cpsad.JitWarning)
        got = cpsad.value_and_grad(cpsad.jit(_uses_halvings))(1.5, 40)
    assert got == cpsad.value_and_grad(_uses_halvings)(1.5, 40) == (26.25, 25.0)
    assert _compiled(_uses_halvings, (1.5, 40), 0)


def _layer_norm(x, gain):
    centered = x - np.mean(x, axis=1, keepdims=True)
    scale = np.sqrt(np.mean(centered * centered, axis=1, keepdims=True) + 1e-5)
    return np.sum(np.tanh(centered / scale * gain))


def test_a_layer_norm_keeping_dimensions_compiles():
    """``np.mean(x, axis=1, keepdims=True)``: Numba's ``np.mean`` takes no axis."""
    rng = np.random.default_rng(5)
    x, gain = rng.normal(size=(4, 6)), rng.normal(size=6)
    with warnings.catch_warnings():
        warnings.simplefilter("error", cpsad.JitWarning)
        value, (gx, gg) = cpsad.value_and_grad(cpsad.jit(_layer_norm), (0, 1))(x, gain)
    assert _compiled(_layer_norm, (x, gain), (0, 1))
    want_value, (wx, wg) = cpsad.value_and_grad(_layer_norm, (0, 1))(x, gain)
    assert value == pytest.approx(want_value, rel=1e-12)
    np.testing.assert_allclose(gx, wx, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(gg, wg, rtol=1e-10, atol=1e-12)
    eps, d = 1e-6, rng.normal(size=x.shape)
    fd = (_layer_norm(x + eps * d, gain) - _layer_norm(x - eps * d, gain)) / (2 * eps)
    assert np.sum(gx * d) == pytest.approx(fd, rel=1e-5)
