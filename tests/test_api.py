"""The public API: argnums, pytrees, keyword arguments, vjp, caching, transform and show."""

import importlib
import sys
import textwrap
import warnings

import numpy as np
import pytest

import cpsad
from cpsad import compiler
from cpsad.testing import check_grads
from tests import corpus_core as C


def test_argnums_int_tuple_negative():
    g0 = cpsad.grad(C.poly)(0.7, -1.3)
    g1 = cpsad.grad(C.poly, argnums=1)(0.7, -1.3)
    both = cpsad.grad(C.poly, argnums=(0, 1))(0.7, -1.3)
    assert both == pytest.approx((g0, g1))
    assert cpsad.grad(C.poly, argnums=-1)(0.7, -1.3) == pytest.approx(g1)
    with pytest.raises(TypeError):
        cpsad.grad(C.poly, argnums="x")(0.7, -1.3)


def test_pytree_gradients_have_the_arguments_structure():
    params = {"W": np.ones((2, 3)), "b": np.zeros(2), "s": 0.5, "tag": "layer"}

    def f(p, x):
        return np.sum(np.tanh(p["W"] @ x + p["b"])) * p["s"]

    g = cpsad.grad(f)(params, np.array([0.1, 0.2, 0.3]))
    assert set(g) == set(params)
    assert g["W"].shape == (2, 3) and g["b"].shape == (2,) and isinstance(g["s"], float)
    assert g["tag"] is None  # not differentiable: passed through
    check_grads(
        lambda W, b, s: f({"W": W, "b": b, "s": s}, np.array([0.1, 0.2, 0.3])),
        params["W"],
        params["b"],
        0.5,
        argnums=(0, 1, 2),
    )


def test_nested_list_and_tuple_gradients():
    def f(layers, x):
        (w1, b1), (w2, b2) = layers
        return np.sum(np.tanh(w1 * x + b1) * w2 + b2)

    layers = [(np.ones(3), 0.5), (np.arange(3.0), 1.0)]
    g = cpsad.grad(f)(layers, np.array([0.1, 0.2, 0.3]))
    assert isinstance(g, list) and isinstance(g[0], tuple)
    assert g[0][0].shape == (3,) and isinstance(g[0][1], float) and g[1][1] == pytest.approx(3.0)


def test_ints_are_differentiated_as_floats():
    g = cpsad.grad(C.square)(3)
    assert g == 6.0 and isinstance(g, float)
    ga = cpsad.grad(lambda v: np.sum(v * v))(np.array([1, 2, 3]))
    assert ga.dtype == np.float64 and list(ga) == [2.0, 4.0, 6.0]


def test_float32_stays_float32():
    x = np.ones(3, dtype=np.float32)
    g = cpsad.grad(lambda v: np.sum(np.sin(v) * v))(x)
    assert g.dtype == np.float32


def test_keyword_arguments_pass_through():
    def f(x, scale=1.0, *, shift):
        return (x * scale + shift) ** 2

    assert cpsad.grad(f)(2.0, scale=3.0, shift=1.0) == pytest.approx(2 * 7.0 * 3.0)
    assert cpsad.grad(f)(2.0, shift=1.0) == pytest.approx(2 * 3.0)


def test_varargs():
    def f(*xs):
        return xs[0] * xs[1] + xs[2]

    assert cpsad.grad(f, argnums=(0, 2))(2.0, 3.0, 4.0) == pytest.approx((3.0, 1.0))


def test_unused_argument_gets_zeros_of_its_shape():
    g = cpsad.grad(C.unused_array, argnums=(0, 1))(np.ones(3), np.ones((2, 2)))
    assert g[1].shape == (2, 2) and not g[1].any()


def test_value_and_grad():
    v, g = cpsad.value_and_grad(C.poly, argnums=(0, 1))(0.7, -1.3)
    assert v == pytest.approx(C.poly(0.7, -1.3))
    assert g == pytest.approx(cpsad.grad(C.poly, argnums=(0, 1))(0.7, -1.3))


def test_vjp_of_vector_function():
    def f(x, y):
        return np.sin(x) * y

    x, y = np.array([0.1, 0.2]), np.array([1.0, 2.0])
    value, pullback = cpsad.vjp(f, x, y)
    assert value == pytest.approx(np.sin(x) * y)
    gx, gy = pullback(np.array([1.0, -1.0]))
    assert gx == pytest.approx(np.cos(x) * y * [1, -1])
    assert gy == pytest.approx(np.sin(x) * [1, -1])
    gx2, _ = pullback(np.array([0.0, 1.0]))  # a pullback can be called again
    assert gx2 == pytest.approx(np.cos(x) * y * [0, 1])


def test_vjp_of_tuple_output():
    value, pullback = cpsad.vjp(C.two_outputs, 2.0, 3.0)
    assert value == (6.0, 5.0)
    assert pullback((1.0, 0.0)) == pytest.approx((3.0, 2.0))
    assert pullback((0.0, 1.0)) == pytest.approx((1.0, 1.0))


def test_vjp_refuses_nondeterminism():
    def noisy(x):
        return x * np.random.rand()

    _, pullback = cpsad.vjp(noisy, 1.0)
    with pytest.raises(RuntimeError, match="deterministic"):
        pullback(1.0)


def test_transformation_is_cached():
    before = compiler.specialize(C.reuse, ("x",))
    cpsad.grad(C.reuse)(0.5)
    assert compiler.specialize(C.reuse, ("x",)) is before


def test_a_recursive_function_over_objects_is_transformed_once():
    """Called with a tree (kind "other") and calling itself with a child (kind unknown): kinds
    that specialize nothing do not make a second transformation."""
    from tests import corpus_control

    f = corpus_control.tree_sum
    args = (((0.5, [1.5, 0.2]), {"left": 0.3, "right": (0.7,)}), 1.1)
    before = set(compiler._SPECS.get(f, ()))  # (another test may have made the generic one)
    cpsad.grad(f, argnums=(0, 1))(*args)
    keys = [
        k
        for k in compiler._SPECS[f]
        if k[0] == ("t", "w") and k[2] == "reverse" and k not in before
    ]
    # (none new where an earlier test -- test_gradients runs tree_sum too -- made it already)
    assert len(keys) <= 1, keys
    assert any(k[0] == ("t", "w") and k[2] == "reverse" for k in compiler._SPECS[f])


def write_module(tmp_path, name, source):
    path = tmp_path / f"{name}.py"
    path.write_text(textwrap.dedent(source))
    sys.path.insert(0, str(tmp_path))
    try:
        if name in sys.modules:
            del sys.modules[name]
        importlib.invalidate_caches()
        return importlib.import_module(name)
    finally:
        sys.path.remove(str(tmp_path))


def test_edited_function_is_transformed_again(tmp_path):
    m1 = write_module(tmp_path, "edited_mod", "def f(x):\n    return x * x\n")
    assert cpsad.grad(m1.f)(3.0) == 6.0
    m2 = write_module(tmp_path, "edited_mod", "def f(x):\n    return x * x * x\n")
    assert cpsad.grad(m2.f)(3.0) == 27.0


def test_rebound_helper_is_picked_up(tmp_path):
    m = write_module(
        tmp_path,
        "rebound_mod",
        """
        def helper(x):
            return x * 2.0

        def f(x):
            return helper(x) * x
    """,
    )
    assert cpsad.grad(m.f)(3.0) == pytest.approx(12.0)
    other = write_module(tmp_path, "rebound_other", "def helper(x):\n    return x * x\n")
    m.helper = other.helper  # the same name now refers to another function
    assert cpsad.grad(m.f)(3.0) == pytest.approx(27.0)


def test_globals_stay_live(tmp_path):
    m = write_module(
        tmp_path,
        "live_mod",
        """
        import numpy as np
        X = np.ones(3)

        def loss(w):
            return np.sum((X * w) ** 2)
    """,
    )
    g1 = cpsad.grad(m.loss)(1.0)
    m.X = np.full(3, 2.0)
    g2 = cpsad.grad(m.loss)(1.0)
    assert g1 == pytest.approx(6.0) and g2 == pytest.approx(24.0)


def test_closures_over_user_values():
    def make(scale):
        def loss(x):
            return scale * x * x

        return loss

    assert cpsad.grad(make(3.0))(2.0) == pytest.approx(12.0)
    assert cpsad.grad(make(5.0))(2.0) == pytest.approx(20.0)


def test_lambda_as_the_differentiated_function():
    assert cpsad.grad(lambda x: x**3)(2.0) == pytest.approx(12.0)


LOSSES = {
    "cube": lambda x: x**3,
    "scaled": lambda x: np.sin(x) * 2.0,
}
PAIR = [lambda x: x * 2.0, lambda x: x * 3.0]  # (two lambdas of one line, the same parameters)


def test_lambdas_in_a_display_each_differentiated():
    """A lambda whose line is a fragment (a dict's entry), or one of two on its line: the one that
    compiled to the function is differentiated (each was refused: "cannot tell which lambda")."""
    assert cpsad.grad(LOSSES["cube"])(2.0) == pytest.approx(12.0)
    assert cpsad.grad(LOSSES["scaled"])(0.5) == pytest.approx(2.0 * np.cos(0.5))
    assert [cpsad.grad(f)(1.0) for f in PAIR] == [pytest.approx(2.0), pytest.approx(3.0)]
    same = [lambda x: x * 2.0, lambda x: x * 2.0]  # indistinguishable, and equal: either will do
    assert cpsad.grad(same[1])(1.0) == pytest.approx(2.0)


def test_transform_source_and_stages():
    t = cpsad.transform(C.branch, argnums=(0, 1))
    assert "def branch_bp(k, x, y):" in t.source
    assert "after_if_L" in t.source
    stages = t.stages
    from cpsad.transforms.pipeline import STAGES

    assert list(stages) == STAGES
    for name, src in stages.items():
        compile(src, name, "exec")  # every stage is valid Python
    assert "with shift(" in stages["shift/reset"] and "@reset" in stages["shift/reset"]
    assert "def after_if_L" in stages["cps"]  # a join is a continuation; a primitive's is in place


def test_transform_and_show_differentiate_what_grad_does():
    """``cpsad.grad(f)`` differentiates the first argument; ``transform`` and ``show`` did every
    one by default, and ``transform(f, argnums=0).grad`` returned a 1-tuple."""

    def f(x, w):
        return np.sum(np.tanh(w * x))

    expected = cpsad.grad(f)(0.5, 2.0)
    t = cpsad.transform(f)
    assert t.active == ("x",) and "def f_bp(k, x, w):" in t.source
    assert t.grad(0.5, 2.0) == expected  # a gradient, as grad's
    assert cpsad.transform(f, argnums=0).grad(0.5, 2.0) == expected
    assert cpsad.transform(f, argnums=(0,)).grad(0.5, 2.0) == (expected,)  # a tuple for a tuple
    assert cpsad.transform(f, argnums=1).at(0.5, 2.0).value_and_grad(0.5, 2.0) == (
        cpsad.value_and_grad(f, 1)(0.5, 2.0)
    )
    assert "the adjoints of x. Do not edit" in cpsad.show(f)
    assert cpsad.show(f) == cpsad.show(f, argnums=0)
    every = cpsad.transform(f, argnums=None)  # every positional parameter, as `cpsad show`
    assert every.active == ("x", "w") and "the adjoints of (x, w)" in cpsad.show(f, argnums=None)
    assert every.grad(0.5, 2.0) == cpsad.grad(f, (0, 1))(0.5, 2.0)


def test_show_is_black_formatted():
    import black

    text = cpsad.show(C.mlp_loss, argnums=0)
    assert black.format_str(text, mode=black.Mode()) == text
    assert '# h = np.tanh(x @ params["W1"] + params["b1"])' in text


def test_emitted_file_is_real_and_steppable():
    import inspect

    spec = compiler.specialize(C.poly, ("x", "y"))
    assert spec.bp.__code__.co_filename == spec.path
    with open(spec.path) as fh:
        assert fh.read() == spec.text
    assert inspect.getsource(spec.bp).startswith("def poly_bp(k, x, y):")


def test_recursion_deeper_than_the_default_limit():
    limit = sys.getrecursionlimit()
    g = cpsad.grad(C.power)(1.0001, 5000)
    assert g == pytest.approx(5000 * 1.0001**4999)
    assert sys.getrecursionlimit() == limit


def test_defvjp_makes_a_user_function_a_primitive():
    from tests import corpus_custom as M

    x = np.array([-1.0, 0.5, 2.0])
    check_grads(M.model, x)
    text = cpsad.show(M.model)
    assert "softplus_bp" not in text  # not transformed: its rule is used
    assert "/ (1.0 + np.exp(-x))" in text


# ------------------------------------------------------- a derivative called again and again
# ``value_and_grad`` keeps, for each argument types it was called with, what its first such call
# found (``api._Plan``): each call after it must give what a derivative made anew would.


def _sin_times(x, y):
    return np.sum(np.sin(x) * y)


@pytest.mark.parametrize("mark", [lambda f: f, cpsad.jit], ids=["python", "jit"])
def test_a_derivative_called_with_other_argument_types(mark):
    marked = mark(_sin_times)
    vg = cpsad.value_and_grad(marked, argnums=(0, 1))
    for x, y in [
        (2, 3.0),
        (0.5, 3),
        (0.5, 3.0),
        (np.float64(0.25), 3.0),
        (np.array([1, 2]), 3.0),  # an int array: promoted, as a float array is not
        (np.array([1.0, 2.0]), 3.0),
        (np.array([1.0, 2.0]), np.array([0.5, -1.0])),
        (np.array([[0.1, 0.2]]), np.array([0.5, -1.0])),
        (2, 3.0),
    ]:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", cpsad.JitWarning)
            value, (gx, gy) = vg(x, y)
        xf = np.asarray(x, dtype=float)
        assert value == pytest.approx(np.sum(np.sin(xf) * y), rel=1e-12)
        np.testing.assert_allclose(gx, np.cos(xf) * y, rtol=1e-12)
        full = np.sin(xf) * np.ones(np.broadcast(xf, y).shape)  # y's part, summed to its shape
        np.testing.assert_allclose(gy, full.sum(axis=tuple(range(full.ndim - np.ndim(y)))))
        assert np.shape(gx) == np.shape(x) and np.shape(gy) == np.shape(y)
        tx = np.linspace(0.5, 1.5, np.size(x)).reshape(np.shape(x))  # (forward mode, along x)
        tx = float(tx) if np.ndim(x) == 0 else tx
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", cpsad.JitWarning)
            value, tangent = cpsad.jvp(marked, (x, y), (tx, None))
        assert value == pytest.approx(np.sum(np.sin(xf) * y), rel=1e-12)
        assert tangent == pytest.approx(np.sum(np.cos(xf) * tx * y), rel=1e-12)


def test_a_derivative_called_with_argnums_counted_from_the_end():
    vg = cpsad.value_and_grad(lambda x, y=2.0: x * x * y, argnums=-1)
    assert vg(0.5) == pytest.approx((0.5, 2 * 0.5 * 2.0))  # -1: x, the only one passed
    assert vg(0.5, 3.0) == pytest.approx((0.75, 0.25))  # -1: y
    assert vg(0.5) == pytest.approx((0.5, 2.0))
    assert vg(0.5, y=3.0) == pytest.approx((0.75, 3.0))  # (by keyword: argnums counts x)


def test_a_derivative_of_varargs_called_again():
    def f(*xs):
        return xs[0] * xs[1] * xs[1]

    g = cpsad.grad(f, argnums=(0, 1))
    for a, b in [(0.5, 2.0), (1.5, -1.0), (3, 2)]:
        assert g(a, b) == pytest.approx((b * b, 2 * a * b))


@pytest.mark.parametrize("mark", [lambda f: f, cpsad.jit], ids=["python", "jit"])
def test_a_derivative_sees_a_closure_and_a_global_change(mark):
    def make():
        c = 2.0

        def f(x):
            return c * x * x * _SCALE

        def set_c(v):
            nonlocal c
            c = v

        return f, set_c

    f, set_c = make()
    g = cpsad.grad(mark(f))
    assert g(0.7) == pytest.approx(2 * 2.0 * 0.7)
    set_c(5.0)
    assert g(0.7) == pytest.approx(2 * 5.0 * 0.7)
    global _SCALE
    _SCALE = 3.0
    try:
        assert g(0.7) == pytest.approx(2 * 5.0 * 0.7 * 3.0)
    finally:
        _SCALE = 1.0


_SCALE = 1.0


def test_a_derivative_follows_the_function_its_mark_holds():
    def f(x):
        return x * x

    def h(x):
        return x * x * x

    marked = cpsad.jit(f)
    g = cpsad.grad(marked)
    assert g(0.5) == pytest.approx(1.0)
    marked.fn = h
    assert g(0.5) == pytest.approx(0.75)
    f.__code__ = h.__code__
    marked.fn = f
    assert g(0.5) == pytest.approx(0.75)
