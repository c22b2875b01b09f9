"""Staging at shapes (``cpsad.shaped``, ``transform(shaped(f)).at``): the backpropagator specialized to
the shapes of a call's arrays drops what the shapes make unneeded -- and changes no number.

Every corpus function with an array argument is differentiated both ways and must give the same
value and gradients, bit for bit (what Shapes drops returns its argument unchanged, or is the
one case of a rule it calls); broadcasts the shapes prove are checked against central
differences; the analysis's refusals to know (a container changed in place, a shape set) are
checked to keep the generic code.
"""

from __future__ import annotations

import numpy as np
import pytest

import cpsad
from cpsad.transforms import shapes as S
from tests import corpus_control, corpus_core, corpus_rules


def _has_array(a) -> bool:
    if isinstance(a, np.ndarray):
        return True
    if isinstance(a, dict):
        return any(_has_array(v) for v in a.values())
    if isinstance(a, (list, tuple)):
        return any(_has_array(v) for v in a)
    return False


CASES = [
    pytest.param(f, args, argnums, {}, id=f"{mod.__name__.split('_', 1)[1]}-{f.__name__}-{i}")
    for mod in (corpus_core, corpus_control)
    for i, (f, args, argnums, *_) in enumerate(mod.CASES)
    if any(_has_array(a) for a in args)
] + [
    pytest.param(
        c.fn, c.diff_args(), tuple(range(len(c.wrt))), c.fn_kwargs, id=f"rules-{c.fn.__name__}-{i}"
    )
    for i, c in enumerate(corpus_rules.CASES)
    if c.xfail is None and any(_has_array(a) for a in c.diff_args())
]


def _leaves(g):
    from cpsad.pytree import leaves

    return [np.asarray(x) for x in leaves(g)[0]]


def _outcome(f, args, argnums, kwargs):
    """The value and the vector-Jacobian product with a fixed cotangent -- or the error's type."""
    try:
        with np.errstate(all="ignore"):
            value, pullback = cpsad.vjp(f, *args, **kwargs)
            rng = np.random.default_rng(0)
            ct = rng.standard_normal(np.shape(value)) if np.ndim(value) else 1.0
            if isinstance(value, np.ndarray) and value.dtype.kind == "c":
                ct = ct + 1j * rng.standard_normal(np.shape(value))
            return value, pullback(ct)
    except Exception as exc:  # (a refusal or an error: the same one both ways)
        return type(exc)


@pytest.mark.parametrize("f, args, argnums, kwargs", CASES)
def test_same_numbers_as_the_generic_backpropagator(f, args, argnums, kwargs):
    want = _outcome(f, args, argnums, kwargs)
    got = _outcome(cpsad.shaped(f), args, argnums, kwargs)
    if isinstance(want, type):
        assert got is want
        return
    assert not isinstance(got, type), got
    a, b = _leaves(got), _leaves(want)
    assert len(a) == len(b)
    for x, y in zip(a, b):
        assert x.shape == y.shape and x.dtype == y.dtype
        assert np.array_equal(x, y, equal_nan=True)


def test_the_corpus_has_cases():
    assert len(CASES) > 100


# ---------------------------------------------------------------- what the shapes prove


def _central(f, args, i, rng, h=1e-6):
    """<grad, v> by central differences along a random direction v of argument i."""
    x = args[i]
    v = rng.standard_normal(np.shape(x))
    plus = list(args)
    minus = list(args)
    plus[i], minus[i] = x + h * v, x - h * v
    return (f(*plus) - f(*minus)) / (2 * h), v


def bias(x, b, c):
    return np.sum(np.tanh(x * b + c) ** 2)


@pytest.mark.parametrize(
    "bshape, cshape",
    [((4,), (3, 4)), ((1, 4), ()), ((3, 1), (4,)), ((3, 4), (1, 1)), ((), (3, 4))],
)
def test_a_broadcast_operand_is_still_summed(bshape, cshape):
    rng = np.random.default_rng(0)
    args = [rng.standard_normal((3, 4)), rng.standard_normal(bshape), rng.standard_normal(cshape)]
    grads = cpsad.grad(cpsad.shaped(bias), argnums=(0, 1, 2))(*args)
    for i, g in enumerate(grads):
        assert np.shape(g) == np.shape(args[i])
        slope, v = _central(bias, args, i, rng)
        assert np.isclose(np.sum(g * v), slope, rtol=1e-6, atol=1e-8)


def mlp(params, x):
    h = np.tanh(x @ params["W1"] + params["b1"])
    z = h @ params["W2"] + params["b2"]
    m = np.max(z, axis=1, keepdims=True)
    return np.sum(np.log(np.sum(np.exp(z - m), axis=1)) + m[:, 0])


def _mlp_args(rng, n=5):
    params = {
        "W1": rng.standard_normal((3, 6)),
        "b1": rng.standard_normal(6),
        "W2": rng.standard_normal((6, 2)),
        "b2": rng.standard_normal(2),
    }
    return params, rng.standard_normal((n, 3))


def test_the_staged_code_drops_what_the_shapes_make_unneeded():
    rng = np.random.default_rng(1)
    generic = cpsad.transform(mlp).source
    staged = cpsad.transform(cpsad.shaped(mlp)).at(*_mlp_args(rng)).source
    # generic: every elementwise adjoint summed, the products through their rules' helpers
    assert generic.count("unbroadcast(") > staged.count("unbroadcast(")
    assert "matmul_x(" in generic and "matmul_x(" not in staged
    assert "@ params_W2.T" in staged or "@ params['W2'].T" in staged
    # the biases were broadcast over the rows: theirs stay
    assert staged.count("unbroadcast(") >= 2


def test_other_shapes_are_another_transformation():
    rng = np.random.default_rng(2)
    f = cpsad.shaped(mlp)
    for n in (5, 1, 7):  # (one row: the bias's unbroadcast sums one row, still needed)
        params, x = _mlp_args(rng, n)
        got = cpsad.grad(f)(params, x)
        want = cpsad.grad(mlp)(params, x)
        for k in params:
            assert np.array_equal(got[k], want[k])

        def loss(w, x, params=params):
            return mlp({**params, "W1": w}, x)

        slope, v = _central(loss, [params["W1"], x], 0, rng)
        assert np.isclose(np.sum(got["W1"] * v), slope, rtol=1e-6)
    specs = {id(cpsad.transform(cpsad.shaped(mlp)).at(*_mlp_args(rng, n)).spec) for n in (5, 1, 7)}
    assert len(specs) == 3  # one transformation for each shape of x


def changes_its_dict(params, x):
    params["b"] = params["b"] * np.ones((2, 3))  # the entry's shape changes in place
    return np.sum(x + params["b"])


def test_a_dict_changed_in_place_is_not_followed():
    rng = np.random.default_rng(3)
    x = rng.standard_normal(3)
    g = cpsad.grad(cpsad.shaped(changes_its_dict), argnums=1)({"b": rng.standard_normal(3)}, x)
    assert np.array_equal(g, np.full(3, 2.0))  # x was broadcast over 2 rows


def sets_a_shape(z, y):
    z.shape = (1, 3)  # z, data, becomes a row: z * y has the shape (1, 3), not y's (3,)
    return np.sum(z * y)


def test_a_shape_set_in_place_leaves_nothing_known():
    y = np.arange(3.0)
    staged = cpsad.transform(cpsad.shaped(sets_a_shape), 1).at(np.arange(3.0), y).source
    assert "unbroadcast(" in staged
    g = cpsad.grad(cpsad.shaped(sets_a_shape), argnums=1)(np.arange(3.0), y)
    assert g.shape == (3,)
    assert np.array_equal(g, np.arange(3.0))


@pytest.mark.parametrize(
    "shape, axis, keep",
    [
        ((3, 4, 5), None, False),
        ((3, 4, 5), 1, True),
        ((3, 4, 5), (0, 2), False),
        ((3, 4), -1, True),
    ],
)
def test_reduced_shapes_are_numpy_s(shape, axis, keep):
    x = np.ones(shape)
    want = np.sum(x, axis=axis, keepdims=keep).shape
    from cpsad.transforms import astlib as A

    keywords = []
    if axis is not None:
        value = (
            A.Tuple(elts=[A.const(i) for i in axis], ctx=A.Load())
            if isinstance(axis, tuple)
            else A.const(axis)
        )
        keywords.append(A.keyword(arg="axis", value=value))
    if keep:
        keywords.append(A.keyword(arg="keepdims", value=A.const(True)))
    assert S._reduced(("a", shape, "f"), keywords, "f") == ("a", want, "f")


@pytest.mark.parametrize(
    "a, b", [((3, 1), (4,)), ((2, 1, 5), (3, 1)), ((), (2, 2)), ((2,), (3,)), ((0,), (1,))]
)
def test_broadcast_is_numpy_s(a, b):
    try:
        want = np.broadcast_shapes(a, b)
    except ValueError:
        want = None
    assert S.broadcast(a, b) == want


@pytest.mark.parametrize(
    "a, b",
    [
        ((3, 4), (4, 5)),
        ((4,), (4, 5)),
        ((3, 4), (4,)),
        ((4,), (4,)),
        ((2, 3, 4), (4, 5)),
        ((2, 1, 3, 4), (5, 4, 2)),
        ((3, 4), (5, 2)),
    ],
)
def test_matmul_shape_is_numpy_s(a, b):
    try:
        want = (np.ones(a) @ np.ones(b)).shape
    except ValueError:
        want = None
    assert S.matmul_shape(a, b) == want


def test_a_call_that_brings_no_array_specializes_nothing_more():
    from cpsad import compiler

    code = bias.__code__
    assert compiler.shapes_of(code, [1.0, 2.0, 3.0], {}) == ()
    key = compiler.shapes_of(code, [np.ones(2), 2.0, {"a": np.ones((1, 2))}], {})
    assert key and key[0][0] == S.SHAPES
    assert S.given_shapes(dict(key)) == {
        "x": ("a", (2,), "f"),
        "c": ("d", (("a", ("a", (1, 2), "f")),)),
    }


# ---------------------------------------------------------------- where a reader sees it


def test_show_at_prints_the_staged_code(capsys):
    from cpsad.cli import main

    path = "benchmarks/workloads/mlp.py::loss"
    assert main(["show", path, "--color", "never"]) == 0
    generic = capsys.readouterr().out
    assert main(["show", path, "--at", "problem(False).args", "--color", "never"]) == 0
    staged = capsys.readouterr().out
    assert staged.count("unbroadcast(") < generic.count("unbroadcast(")
    assert "matmul_x(" in generic and "matmul_x(" not in staged
    assert main(["show", path, "--at", "problem(False).args", "--stage", "shapes"]) == 0
    assert "params_W1: (784, 256)" in capsys.readouterr().out  # what the pass proved
    assert main(["show", path, "--at", "no_such_name"]) == 2
    assert "--at 'no_such_name': NameError" in capsys.readouterr().err


def test_the_treebank_script_times_each_new_tree():
    from benchmarks import frameworks, treebank
    from benchmarks.workloads import treelstm

    forest = treebank.trees(2, leaves=4)
    times = treebank.per_tree(frameworks.CPSAD, forest)
    assert len(times) == 2 and all(t > 0 for t in times)
    base = treelstm.problem(False)
    for tree in forest:  # cpsad's gradient on a tree it was not first called with: the hand pass's
        problem = type(base)(args=(base.args[0], tree, 1), argnums=base.argnums)
        want = frameworks.make(frameworks.HAND, treelstm, problem)
        got = frameworks.make(frameworks.CPSAD_SHAPED, treelstm, problem)
        (v0, g0), (v1, g1) = want.result(want.call()), got.result(got.call())
        assert np.isclose(v0, v1)
        for k in g0:
            assert np.allclose(g0[k], g1[k], rtol=1e-8, atol=1e-12)


def _steps(a, b, n):
    for _ in range(n):  # (a loop: not inlined into its caller)
        a = np.tanh(a * b + 1.0)
    return a


def calls_a_helper(x, y):
    return np.sum(_steps(x, y, 3) * x)


def test_a_callee_is_staged_at_the_shapes_its_caller_proved():
    from cpsad import compiler

    rng = np.random.default_rng(4)
    x, y = rng.standard_normal((3, 4)), rng.standard_normal(4)
    staged = compiler.call_graph(
        cpsad.transform(cpsad.shaped(calls_a_helper), (0, 1)).at(x, y).spec
    )
    generic = compiler.call_graph(cpsad.transform(calls_a_helper, (0, 1)).spec)
    callee = next(s for s in staged if "_steps" in s.text.split("def ", 1)[1][:10])
    assert dict(callee.key[1])[S.SHAPES] == ("a=('a', (3, 4), 'f')", "b=('a', (4,), 'f')")
    before = next(s for s in generic if "_steps" in s.text.split("def ", 1)[1][:10])
    # a * b: a has the result's shape, b (4,) was broadcast over the rows and is still summed
    assert callee.text.count("unbroadcast(") == before.text.count("unbroadcast(") - 1 >= 1
    got = cpsad.grad(cpsad.shaped(calls_a_helper), (0, 1))(x, y)
    want = cpsad.grad(calls_a_helper, (0, 1))(x, y)
    assert all(np.array_equal(a, b) for a, b in zip(got, want))


def square(x):
    return np.sum(x @ x)


def test_a_product_of_a_matrix_with_itself_gets_both_adjoints():
    x = np.random.default_rng(5).standard_normal((3, 3))
    staged = cpsad.transform(cpsad.shaped(square)).at(x).source
    assert "@ x.T" in staged and "x.T @" in staged and "matmul_x(" not in staged
    assert np.array_equal(cpsad.grad(cpsad.shaped(square))(x), cpsad.grad(square)(x))
