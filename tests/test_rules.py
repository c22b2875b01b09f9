"""Every derivative rule, against central finite differences with random cotangents: the rule
function on its own, and end to end through ``cpsad.vjp`` of a wrapper in tests/corpus_rules.py;
against autograd where it has the same function; and in float32."""

import copy
import inspect

import numpy as np
import pytest

import cpsad
from cpsad.pytree import densify
from cpsad.rules import core, joining, scipy_integrate
from cpsad.runtime import as_adjoint
from cpsad.testing import (
    _check_tangents,
    _positions,
    _random_like,
    _tangents_of,
    check_grads,
    check_jvp,
    check_rule,
    check_vjp,
    leaves,
)
from tests import (
    corpus_composites,  # noqa: F401 (adds the composites' cases to C.CASES)
    corpus_emitted,  # noqa: F401 (adds the cases of the helpers' rules to C.CASES)
    corpus_fft,  # noqa: F401 (adds the cases of np.fft's rules to C.CASES)
    corpus_linalg,  # noqa: F401 (adds the cases of np.linalg's decompositions to C.CASES)
    corpus_scipy,  # noqa: F401 (adds the cases of scipy.special's rules to C.CASES)
    corpus_scipy_integrate,  # noqa: F401 (adds the cases of scipy.integrate's rules to C.CASES)
    corpus_scipy_linalg,  # noqa: F401 (adds the cases of scipy.linalg's rules to C.CASES)
    corpus_scipy_stats,  # noqa: F401 (adds the cases of scipy.stats' rules to C.CASES)
)
from tests import corpus_rules as C
from tests.oracles import autograd, autograd_version

RULE_CASES = [c for c in C.CASES if c.prim is not None]


def ids(cases):
    return [c.id for c in cases]


def pipeline(cases, forward=False):
    """The cases, those that run into a known bug of the pipeline marked as expected to fail."""
    out = []
    for c in cases:
        reason = (c.forward_xfail if forward else None) or c.xfail
        out.append(
            pytest.param(c, marks=pytest.mark.xfail(strict=True, reason=reason)) if reason else c
        )
    return out


def assert_tree_close(a, b, rtol=1e-6, atol=1e-9):
    la, _ = leaves(a)
    lb, _ = leaves(b)
    assert len(la) == len(lb), f"{a!r} and {b!r} differ in structure"
    for x, y in zip(la, lb):  # complex values compared as complex values
        np.testing.assert_allclose(np.asarray(x), np.asarray(y), rtol=rtol, atol=atol)


@pytest.mark.parametrize("case", RULE_CASES, ids=ids(RULE_CASES))
def test_rule(case):
    """The rule function called directly: <rule(c), v> == <c, directional finite difference>."""
    check_rule(
        case.prim,
        *case.args,
        wrt=case.wrt,
        rule=case.rule,
        direction=case.direction,
        rtol=case.rtol,
        atol=case.atol,
        eps=case.eps,
        adjoint_form=case.adjoint_form,
        tangents=case.inexact_transpose is None,
        **case.kwargs,
    )


@pytest.mark.parametrize("case", pipeline(C.CASES), ids=ids(C.CASES))
def test_end_to_end(case):
    """The same through the pipeline: the vjp of the wrapper, whose emitted code inlines or calls
    the rule."""
    check_vjp(
        case.fn,
        *case.diff_args(),
        direction=case.direction,
        rtol=case.rtol,
        atol=case.atol,
        eps=case.eps,
        **case.fn_kwargs,
    )


@pytest.mark.parametrize("case", pipeline(C.CASES, forward=True), ids=ids(C.CASES))
def test_end_to_end_forward(case):
    """Forward mode through the pipeline: the jvp of the wrapper, whose emitted code inlines or
    calls the tangent rule, against finite differences and against reverse mode."""
    check_jvp(
        case.fn,
        *case.diff_args(),
        direction=case.direction,
        rtol=case.rtol,
        atol=case.atol,
        eps=case.eps,
        **case.fn_kwargs,
    )


@pytest.mark.parametrize("case", RULE_CASES, ids=ids(RULE_CASES))
def test_wrapper_computes_the_primitive(case):
    """Each case's wrapper computes what its rule is checked on."""
    ours = case.fn(*case.diff_args(), **case.fn_kwargs)
    theirs = case.prim(*case.args, **case.kwargs)
    assert_tree_close(ours, theirs, rtol=0, atol=0)


@pytest.mark.parametrize("case", pipeline(C.CASES), ids=ids(C.CASES))
def test_autograd(case):
    """A second opinion: autograd's vjp of the same wrapper, with the same random cotangent."""
    if case.autograd:
        pytest.skip(case.autograd)
    args = case.diff_args()
    value, pullback = cpsad.vjp(case.fn, *args, **case.fn_kwargs)
    c = _random_like(value, np.random.default_rng(1))
    ours = pullback(c)
    theirs_vjp, _ = autograd.make_vjp(autograd_version(case.fn), tuple(range(len(args))))(
        *args, **case.fn_kwargs
    )
    theirs = theirs_vjp(c)
    assert_tree_close(list(ours), list(theirs))


def float32(x):
    """``x`` with its float64 arrays and numpy scalars in float32 (Python floats stay)."""
    if isinstance(x, (list, tuple)):
        items = [float32(v) for v in x]
        return type(x)(*items) if hasattr(x, "_fields") else type(x)(items)
    if isinstance(x, dict):  # a Sparse stays one
        return type(x)({k: float32(v) for k, v in x.items()})
    if isinstance(x, (np.ndarray, np.float64)) and x.dtype == np.float64:
        return x.astype(np.float32)
    return x


def float64(x):
    if isinstance(x, (list, tuple)):
        items = [float64(v) for v in x]
        return type(x)(*items) if hasattr(x, "_fields") else type(x)(items)
    if isinstance(x, dict):
        return type(x)({k: float64(v) for k, v in x.items()})
    if isinstance(x, (np.ndarray, np.floating)):
        return np.asarray(x, np.float64)
    return x


F32_CASES = [
    c
    for c in RULE_CASES
    if any(isinstance(v, (np.ndarray, np.floating)) for a in c.diff_args() for v in leaves(a)[0])
]


@pytest.mark.parametrize("case", F32_CASES, ids=ids(F32_CASES))
def test_float32_stays_float32(case):
    """float32 in, float32 out: no float64 constant in a rule turns the adjoint into float64."""
    if case.float64:
        pytest.skip(case.float64)
    args = float32(case.args)
    kwargs = {k: float32(v) for k, v in case.kwargs.items()}
    ans = case.prim(*args, **kwargs)
    c = float32(_random_like(ans, np.random.default_rng(2)))
    form = case.adjoint_form or as_adjoint
    where = _positions(case.rule.signature, len(args))
    for i in case.wrt:
        param, j = where[i]
        rule = case.rule.adjoints[param].fn
        raw = rule(form(c), ans, *args, **kwargs)  # (densify would cast)
        raw = raw if j is None else raw[j]
        got = densify(raw, args[i])
        raw = raw if isinstance(raw, dict) else {0: raw}
        x = args[i] if isinstance(args[i], (list, tuple, dict)) else [args[i]]
        for k, leaf in raw.items():
            if isinstance(x, dict) and k not in x:
                continue  # an entry a Sparse adjoint may have that the argument has not
            if isinstance(x[k], (np.ndarray, np.floating)) and x[k].dtype == np.float32:
                assert np.result_type(leaf) == np.float32, f"argument {i}: {np.result_type(leaf)}"
        # and the same numbers as in float64, roughly
        c64 = form(float64(c))
        # (copies, as the float32 ones are: a helper like acc_into changes its argument in place
        # when nothing else holds it, so with the shared case's it would depend on who else does)
        args64 = copy.deepcopy(case.args)
        want = rule(c64, case.prim(*args64, **case.kwargs), *args64, **case.kwargs)
        want = want if j is None else want[j]
        assert_tree_close(got, densify(want, args64[i]), rtol=2e-3, atol=2e-4)


@pytest.mark.parametrize("case", F32_CASES, ids=ids(F32_CASES))
def test_float32_tangents_stay_float32(case):
    """float32 in, float32 out, forward: each tangent contribution has the result's float type,
    and roughly the numbers it has in float64."""
    if case.float64:
        pytest.skip(case.float64)
    args32 = float32(case.args)
    kwargs32 = {k: float32(v) for k, v in case.kwargs.items()}
    rng = np.random.default_rng(4)
    vs = {i: _random_like(case.args[i], rng) for i in case.wrt}
    if case.direction is not None:
        vs = {i: case.direction(i, v) for i, v in vs.items()}
    where = _positions(case.rule.signature, len(case.args))
    ans32 = case.prim(*args32, **kwargs32)
    ans64 = case.prim(*case.args, **case.kwargs)
    got = _tangents_of(case.rule, args32, kwargs32, where, ans32, float32(vs))
    want = _tangents_of(case.rule, case.args, case.kwargs, where, ans64, vs)
    for param, t in got.items():
        for leaf, result in zip(leaves(t)[0], leaves(ans32)[0]):
            if isinstance(result, (np.ndarray, np.floating)) and result.dtype == np.float32:
                assert np.result_type(leaf) == np.float32, f"{param}: {np.result_type(leaf)}"
        assert_tree_close(t, want[param], rtol=2e-3, atol=2e-4)


# ----------------------------------------------------------------------------- forward mode

# Rules cpsad ships that have no tangent rule for some differentiable parameter, and why. None:
# every primitive with an adjoint has its tangent.
NO_TANGENT: dict[str, str] = {}


def shipped_rules():
    """Every rule in the tables that cpsad itself registers (not a user's, from a test)."""
    for table in (core.FUNCTIONS, core.OPERATORS, core.METHODS, core.ATTRIBUTES):
        for rule in table.values():
            fns = [t.fn for t in rule.adjoints.values() if t is not None]
            if fns and all(f.__module__.startswith("cpsad.rules") for f in fns):
                yield rule  # (a rule of no derivative at all, ``slice``'s, has nothing to check)


def test_every_rule_has_tangents():
    """Forward mode can differentiate whatever reverse mode can: a tangent rule for every
    parameter that has an adjoint rule, and none for one that has not (None, DISCRETE)."""
    missing = {r.name: core.tangent_missing(r) for r in shipped_rules() if core.tangent_missing(r)}
    assert missing.keys() == NO_TANGENT.keys(), f"no tangent rule: {missing}"
    for rule in shipped_rules():
        extra = [p for p in rule.tangents if rule.adjoints.get(p) is None]
        assert not extra, f"{rule.name}: tangent rules for {extra}, which have no adjoint"


def test_every_rule_is_checked():
    """Each shipped rule has a case in tests/corpus_rules.py, so check_rule checks its adjoint and
    tangent rules against finite differences and each other."""
    checked = {id(c.rule) for c in RULE_CASES}
    unchecked = [r.name for r in shipped_rules() if id(r) not in checked]
    assert not unchecked, f"no case checks {unchecked}"


def test_check_rule_catches_a_wrong_tangent():
    """The tangent checks fail: on a wrong shape, on a small error finite differences let pass
    (the transpose identity is exact up to rounding), and on a wrong derivative."""
    from cpsad.transforms.templates import template

    def with_tangent(rule, param, fn):
        return core.Rule(
            name=rule.name,
            signature=rule.signature,
            adjoints=rule.adjoints,
            discrete=rule.discrete,
            tangents={**rule.tangents, param: template(fn)},
        )

    x = np.linspace(0.1, 1.0, 5)
    rule = with_tangent(core.lookup(np.sin), "x", lambda t, ans, x: t * np.cos(x) * (1 + 1e-7))
    check_rule(np.sin, x, rule=rule, tangents=False)  # the adjoint alone is right
    with pytest.raises(AssertionError, match="not the transpose of its adjoint"):
        check_rule(np.sin, x, rule=rule)
    mul = core.OPERATORS["mul"]
    rule = with_tangent(mul, "x", lambda t, ans, x, y: t)
    with pytest.raises(AssertionError, match="shape"):
        check_rule(C.MUL, np.ones(3), np.ones((2, 3)), wrt=(0, 1), rule=rule)
    rule = with_tangent(mul, "y", lambda t, ans, x, y: (x * t).astype(np.float32))
    with pytest.raises(AssertionError, match="float32, the result float64"):
        check_rule(C.MUL, np.ones(3), np.ones(3), wrt=(0, 1), rule=rule)
    # the transpose of a wrong adjoint: check_rule stops at the adjoint, but the tangent's own
    # check against finite differences fails too
    wrong = core.make_rule("wrong sin", [lambda g, ans, x: g * np.cos(x) * 1.001])
    wrong.tangents["x"] = template(lambda t, ans, x: t * np.cos(x) * 1.001)
    c = np.ones(5)
    adjoints = {0: wrong.adjoints["x"].fn(c, np.sin(x), x)}
    with pytest.raises(AssertionError, match="the tangent is .* but the finite difference"):
        _check_tangents(
            wrong, np.sin, (x,), {}, [0], [("x", None)], np.sin(x), c, adjoints,
            seed=0, eps=1e-6, rtol=1e-5, atol=1e-7, directions=1, direction=None,
        )  # fmt: skip


def test_tangents_at_ties_are_the_transpose_of_the_even_split():
    """At a kink the tangent rules take the mean of the tied operands' tangents, as the adjoints
    split evenly: maximum(x, x) moves as x does."""
    x = np.array([1.0, 3.0, 3.0, 2.0])
    tx, ty = np.array([1.0, 2.0, 3.0, 4.0]), np.array([10.0, 20.0, 30.0, 40.0])
    rule = core.lookup(np.maximum)
    both = rule.tangents["x"].fn(tx, x, x, x) + rule.tangents["y"].fn(ty, x, x, x)
    np.testing.assert_allclose(both, (tx + ty) / 2)
    rule = core.lookup(np.max)
    np.testing.assert_allclose(rule.tangents["a"].fn(tx, 3.0, x), 2.5)  # mean of 2.0 and 3.0


def test_complex_tangents_are_the_transposes_of_the_adjoints():
    """Complex values: tangents are holomorphic derivatives, adjoints their plain transposes (no
    conjugation), ``<tangent(v), c> == <v, adjoint(c)>`` with the bilinear ``sum(a * b)``. (check_rule
    compares real parts only; these are the complex-linear rules with a complex case.)"""
    rng = np.random.default_rng(5)

    def z(*shape):
        return rng.standard_normal(shape) + 1j * rng.standard_normal(shape)

    a = z(3, 3) + 3 * np.eye(3)
    for f, args, wrt in [
        (np.exp, (z(3),), (0,)),
        (np.multiply, (z(2, 3), z(3)), (0, 1)),
        (np.power, (z(3), z(3)), (0, 1)),
        (np.matmul, (z(2, 3), z(3, 4)), (0, 1)),
        (np.linalg.inv, (a,), (0,)),
        (np.linalg.solve, (a, z(3)), (0, 1)),
        (np.linalg.det, (a,), (0,)),
        (np.prod, (z(4),), (0,)),
        (np.vdot, (z(3), z(3)), (1,)),  # linear in b, with conj(a)
    ]:
        rule = core.lookup(f)
        params = list(rule.signature.parameters)
        ans = f(*args)
        c = z(*np.shape(ans))
        for i in wrt:
            v = z(*np.shape(args[i]))
            forward = np.sum(rule.tangents[params[i]].fn(v, ans, *args) * c)
            backward = np.sum(v * rule.adjoints[params[i]].fn(c, ans, *args))
            np.testing.assert_allclose(forward, backward, rtol=1e-10, err_msg=rule.name)
            eps = 1e-7
            plus, minus = list(args), list(args)
            plus[i], minus[i] = args[i] + eps * v, args[i] - eps * v
            fd = (f(*plus) - f(*minus)) / (2 * eps)
            tangent = rule.tangents[params[i]].fn(v, ans, *args)
            np.testing.assert_allclose(tangent, fd, rtol=1e-6, atol=1e-8, err_msg=rule.name)


# ----------------------------------------------------------------------------- no derivative


def test_nondiff_functions_have_no_rule():
    assert not core.NONDIFF & set(core.FUNCTIONS)


def test_nondiff_results_get_no_adjoint_code():
    text = cpsad.show(C.nondiff_functions)
    for name in ("n_bar", "i_bar", "steps_bar", "shape_only_bar"):
        assert name not in text


# ----------------------------------------------------------------------------- in-place changes


@pytest.mark.parametrize("f", [C.store_into_parameter, C.aug_store_into_parameter])
def test_storing_into_a_differentiable_array_is_an_error(f):
    # refused when it runs (a dict or list may be stored into; an array only where the function
    # made it: tests/test_array_stores.py), at the user's line
    with pytest.raises((TypeError, cpsad.TransformError), match="assigning into") as info:
        cpsad.grad(f)(np.array([0.3, 0.5, 0.7]))
    if isinstance(info.value, TypeError):
        assert "in your code" in "\n".join(getattr(info.value, "__notes__", []))


def test_aug_assign_through_an_alias_is_refused_for_arrays():
    """``y = x; y += 1.0`` changes ``x`` too: no gradient can follow, so it is a clear error (at
    the line: ``x`` is surely an array, ``y`` surely a copy of it; tests/test_aliasing.py)."""
    shares = "would change in place an array that another name shares: `x`"
    with pytest.raises(cpsad.TransformError, match=shares):
        cpsad.value_and_grad(C.alias_then_aug_assign)(np.array([1.0, 2.0]))


def test_aug_assign_through_an_alias_is_fine_for_numbers():
    def f(x):
        y = x
        y += 1.0
        return x * y

    assert cpsad.grad(f)(2.0) == pytest.approx(2 * 2.0 + 1.0)


def test_aug_assign_off_the_differentiated_path_keeps_pythons_meaning():
    def f(x, counts):
        c = counts
        c += 1  # changes counts in place, as Python does
        return x * np.sum(counts)

    counts = np.zeros(3)
    assert cpsad.grad(f)(2.0, counts) == pytest.approx(3.0)
    assert list(counts) == [1.0, 1.0, 1.0]


# ----------------------------------------------------------------------------- containers


def test_list_adjoints_of_two_kinds_add_up():
    check_vjp(C.list_to_sum_and_item, 0.5, 0.7)


# ----------------------------------------------------------------------------- user rules


def test_user_rule_of_several_parameters_none_and_keyword():
    from tests import corpus_custom as M

    x, scale, shift = np.array([-1.0, 0.1, 0.3, 2.0]), 1.5, np.array([0.2, -0.1, 0.0, 0.1])
    check_rule(M.affine_clip, x, scale, shift, wrt=(0, 2), limit=0.8)
    check_vjp(M.layer, x, shift=shift, scale=scale)
    gx, gshift = cpsad.grad(M.layer, argnums=(0, 2))(x, scale, shift)
    check_grads(M.layer, x, scale, shift, argnums=(0, 2), gradient=(gx, gshift))
    assert gx[0] == 0.0 and gx[-1] == 0.0  # clipped
    text = cpsad.show(M.layer, argnums=(0, 2))
    assert "affine_clip_shift(" in text  # several statements: called by name
    assert "(np.abs(affine_clip" in text  # one return: inlined


def test_user_rule_without_a_derivative_for_an_argument():
    from tests import corpus_custom as M

    with pytest.raises(cpsad.TransformError, match="no derivative with respect to its argument"):
        cpsad.grad(M.layer_scaled, argnums=(0, 1))(np.ones(3), 0.5, np.zeros(3))
    with pytest.raises(ValueError, match="no parameter 'offset'"):
        cpsad.defvjp(M.affine_clip, offset=M.affine_clip_shift)


def test_user_rule_without_a_derivative_alone():
    from tests import corpus_custom as M

    with pytest.raises(cpsad.TransformError, match="no derivative with respect to its argument"):
        cpsad.grad(M.layer_wrt_scale, argnums=1)(np.ones(3), 0.5, np.zeros(3))


# ----------------------------------------------------------------------------- kinks and NaNs


def test_fmax_fmin_send_the_adjoint_to_the_number_not_the_nan():
    """fmax and fmin return the operand that is not NaN: it gets the whole adjoint."""
    x, y = np.array([np.nan, 1.0, 2.0]), np.array([2.0, np.nan, 1.0])
    g = np.array([1.0, 10.0, 100.0])
    for f in (np.fmax, np.fmin):
        rule = core.lookup(f)
        gx = rule.adjoints["x"].fn(g, f(x, y), x, y)
        gy = rule.adjoints["y"].fn(g, f(x, y), x, y)
        took_x = f(x, y) == x
        np.testing.assert_array_equal(gx, np.where(took_x, g, 0.0))
        np.testing.assert_array_equal(gy, np.where(took_x, 0.0, g))


def test_ties_split_the_adjoint_evenly():
    """At a kink every split is a subgradient; the rules take the symmetric one."""
    x = np.array([1.0, 3.0, 3.0, 2.0])
    np.testing.assert_allclose(cpsad.grad(C.max_)(x), [0.0, 0.5, 0.5, 0.0])
    np.testing.assert_allclose(cpsad.grad(C.min_)(-x), [0.0, 0.5, 0.5, 0.0])
    gx, gy = cpsad.vjp(C.maximum, x, x)[1](np.ones(4))
    np.testing.assert_allclose(gx + gy, np.ones(4))  # maximum(x, x) is x
    np.testing.assert_allclose(gx, gy)


# ----------------------------------------------------------------------------- the checks can fail


def test_check_rule_catches_a_wrong_rule():
    rule = core.make_rule("wrong sin", [lambda g, ans, x: g * np.cos(x) * 1.001])
    with pytest.raises(AssertionError, match="finite difference"):
        check_rule(np.sin, np.linspace(0.1, 1.0, 5), rule=rule)
    rule = core.make_rule("no unbroadcast", [lambda g, ans, x, y: g * y, None])
    with pytest.raises(AssertionError, match="shape"):
        check_rule(np.multiply, np.ones(3), np.ones((2, 3)), rule=rule)


def test_float32_end_to_end_without_densify():
    """The emitted code itself keeps float32: the raw adjoints, before the API casts them."""
    from cpsad import compiler
    from cpsad.runtime import scalar_seed

    rng = np.random.default_rng(3)
    W, b, x = (rng.standard_normal(s).astype(np.float32) for s in [(4, 3), (3,), (5, 4)])
    spec = compiler.specialize(C.float32_model, ("W", "b", "x"))
    outs = spec.bp(scalar_seed, W, b, x)
    assert [np.result_type(o) for o in outs] == [np.float32] * 3
    check_grads(C.float32_model, W, b, x, argnums=(0, 1, 2), eps=1e-3, rtol=2e-2, atol=1e-3)


# ----------------------------------------------------------------------------- emitted code, again
# To differentiate emitted code (grad of grad, Hessian-vector products), every function it calls
# by name needs rules of its own, or is non-differentiable: the runtime's helpers the passes
# inject, the rule functions called by name, and whatever a rule inlined into emitted code calls.

# Calls emitted code makes that are not functions of values: the next transformation handles them
# itself. call_bp, call_jvp and call_primal dispatch a call of a function value, Closure builds
# one; store_item(container, key, value) is `container[key] = value` (an effect, it returns None),
# to be read back as that assignment, which the passes differentiate. backpropagator_of and
# staged_callee run while transforming (Nested; Callees, for cpsad.jit), not in emitted code.
NOT_FUNCTIONS_OF_VALUES = {
    "call_bp",
    "call_bp_keywords",
    "call_jvp",
    "call_jvp_keywords",
    "keywords_adjoint",  # only beside call_bp_keywords, which code transformed again refuses
    "call_primal",
    "store_item",
    "backpropagator_of",
    "staged_callee",
    "MISSING",  # a value, not a function: a default's placeholder
    "check_in_place_compiled",  # only in code Numba compiles (cpsad.jit), never transformed again
    "CHECKED_MATH",  # (a table: math's functions as staged code calls them, only there)
    "python_pow",  # only in code Numba compiles, as CHECKED_MATH's functions
    "log_as",  # only in code Numba compiles: np.log(x, dtype=np.result_type(like)) respelt
    "compiled_apart",  # (called by the Recursion stage, as staged_callee by Callees)
    # only in code Numba compiles (transforms/recursion.py, Flatten's stack check)
    "recursion_result",
    "scaled",
    "within_stack",
}

# Helpers whose rules leave parameters out: the third derivatives of the product and of norms.
# Differentiating a call of one of them in those parameters is an error that names the parameter.
PARTIAL = {
    "cpsad.rules.emitted.elements.prod_hessian": {"out", "a"},
    "cpsad.rules.emitted.norms.norm_hessian": {"out", "x"},
    # np.mgrid[a:b], np.ogrid[a:b]: no derivative in the bounds (a differentiable one is an error)
    "cpsad.rules.joining.mgrid": {"key"},
    "cpsad.rules.joining.ogrid": {"key"},
}
# np.histogram's rules (called by name) have no second derivatives: every parameter is left out
for _fn in (
    joining.histogram_a,
    joining.histogram_weights,
    joining.histogram_a_jvp,
    joining.histogram_weights_jvp,
    joining.histogram_bin_edges_a,
    joining.histogram_bin_edges_a_jvp,
):
    PARTIAL[f"cpsad.rules.joining.{_fn.__name__}"] = set(inspect.signature(_fn).parameters)
# and neither have scipy.integrate's (when scipy is installed)
for _fn in scipy_integrate.RULES:
    PARTIAL[f"cpsad.rules.scipy_integrate.{_fn.__name__}"] = set(inspect.signature(_fn).parameters)


def injected_helpers() -> set[str]:
    """The names of the runtime helpers the passes inject (``ctx.runtime("acc")``), read from
    their source, so a helper a pass starts using is checked too."""
    import pathlib
    import re

    root = pathlib.Path(__file__).resolve().parents[1]
    names = set()
    for path in [*root.glob("transforms/**/*.py"), *root.glob("cpsad/*.py")]:
        names |= set(re.findall(r"runtime\(\"(\w+)\"\)", path.read_text()))
    return names


def has_rules(obj) -> bool:
    """Rules, or none needed: a helper transformed from its source (``runtime.FROM_SOURCE``)."""
    from cpsad import runtime

    from_source = any(obj is f for f in runtime.FROM_SOURCE)
    return core.lookup(obj) is not None or core.is_nondiff(obj) or from_source


def test_every_injected_helper_has_rules():
    import cpsad
    from cpsad.compiler import CONTEXT

    cpsad._load()  # (every helper's rules, as a transformation loads them: alone too)

    names = injected_helpers()
    assert {"acc", "zeros_like", "unbroadcast", "tangent_zeros"} <= names  # the search works
    assert NOT_FUNCTIONS_OF_VALUES <= names, "a stale exception"
    missing = [n for n in names - NOT_FUNCTIONS_OF_VALUES if not has_rules(CONTEXT.runtime(n))]
    assert not missing, f"helpers emitted code calls, with no rules: {missing}"
    for name in NOT_FUNCTIONS_OF_VALUES & names:
        assert not has_rules(CONTEXT.runtime(name)), f"{name} has rules: take it off the list"


def template_calls():
    """``(rule function, call node, the callee or None)`` for every call in every rule inlined
    into emitted code (a single ``return``), adjoint and tangent rules alike; a rule called by
    name is ``(fn, None, fn)``."""
    import builtins
    import types

    from cpsad.transforms import astlib as A
    from cpsad.transforms.templates import parsed

    def resolve(node, free):
        if isinstance(node, A.Name):
            if node.id in free:
                return free[node.id]
            return getattr(builtins, node.id, None)
        if isinstance(node, A.Attribute):
            base = resolve(node.value, free)
            if isinstance(base, types.ModuleType):  # np.linalg.solve, la.solved
                return getattr(base, node.attr, None)
        return None  # a method of a value: x.astype(...)

    seen = set()
    for rule in shipped_rules():  # not a user's, from another test
        for t in [*rule.adjoints.values(), *rule.tangents.values()]:
            if t is None or t.fn in seen:
                continue
            seen.add(t.fn)
            expr, free = parsed(t.fn)
            if expr is None:
                yield t.fn, None, t.fn
                continue
            for node in A.walk(expr):
                if isinstance(node, A.Call):
                    yield t.fn, node, resolve(node.func, free)


def test_every_function_emitted_code_calls_has_rules():
    """The rules called by name, and every function a rule inlined into emitted code calls --
    cpsad's helpers (``unbroadcast``, ``expand``, ``matmul_x``), numpy's, the math module's --
    has rules or is non-differentiable (then the call is a step, a shape, a count, zeros)."""
    from cpsad.rules import reductions
    from cpsad.rules.core import broadcast_like
    from cpsad.runtime import unbroadcast

    named = {fn for fn, node, callee in template_calls() if node is None}
    callees = {callee for fn, node, callee in template_calls() if node is not None}
    assert len(named) > 30  # the search works: matmul_x, max_vjp, cholesky_vjp, ...
    assert {unbroadcast, reductions.expand, broadcast_like, np.sum} <= callees
    missing = {}
    for fn, _node, callee in template_calls():
        if callee is not None and not has_rules(callee):
            label = f"{getattr(callee, '__module__', '')}.{getattr(callee, '__name__', callee)}"
            missing.setdefault(label, []).append(fn.__name__)
    assert not missing, f"called by emitted code, with no rules: {missing}"


def test_calls_in_rules_match_the_callees_rules():
    """A call a rule inlines is one the callee's rule understands (no ``np.log(x, dtype=...)``
    where ``np.log``'s rule has no ``dtype``): differentiating it again needs that."""
    from cpsad.transforms import astlib as A

    mismatched = []
    for fn, node, callee in template_calls():
        rule = None if callee is None else core.lookup(callee)
        args = list(node.args) if node is not None else []
        if node is not None and callee is None and isinstance(node.func, A.Attribute):
            rule = core.METHODS.get(node.func.attr)  # x.astype(...): the receiver is first
            args = [node.func.value, *node.args]
        if rule is None or node is None:
            continue
        try:
            rule.bind(args, {k.arg: k.value for k in node.keywords})
        except TypeError as exc:
            mismatched.append(f"{fn.__name__}: {A.expr_source(node)}: {exc}")
    assert not mismatched, "\n".join(mismatched)


def test_helpers_rules_leave_out_only_third_derivatives():
    """Every parameter of a helper's rule has a derivative or is discrete, but the listed
    third derivatives."""
    gaps = {}
    for prim, rule in core.FUNCTIONS.items():
        if not (getattr(prim, "__module__", "") or "").startswith("cpsad"):
            continue
        left_out = {p for p, t in rule.adjoints.items() if t is None and p not in rule.discrete}
        if left_out:
            gaps[f"{prim.__module__}.{prim.__name__}"] = left_out
    assert gaps == PARTIAL


def test_a_third_derivative_that_is_missing_is_an_error_not_a_number():
    from cpsad.rules.emitted import elements as em_elements

    def f(a):
        return np.sum(em_elements.prod_hessian(np.ones(3), 1.0, np.prod(a), a))

    with pytest.raises(cpsad.TransformError, match="no derivative with respect to its argument"):
        cpsad.grad(f)(np.array([1.0, 0.0, 2.0]))


def test_an_absent_adjoint_is_zero_in_the_helpers():
    """None (nothing flowed back yet) is zero wherever emitted code can pass it; the tangent of
    None, which the tangent rules of those helpers receive, likewise."""
    from cpsad.rules.core import broadcast_like
    from cpsad.runtime import (
        Sparse,
        acc,
        getitem_adjoint,
        item_adjoint,
        tangent_or_zeros,
        unbroadcast,
        unpack_adjoint,
    )

    x = np.array([[1.0, 2.0], [3.0, 4.0]], np.float32)
    zeros = np.zeros((2, 2), np.float32)
    for value in [
        unbroadcast(None, x),
        broadcast_like(None, x),
        item_adjoint(None, 0, x),
        item_adjoint(Sparse({1: 1.0}), 0, x),
        getitem_adjoint(None, x, 0) * 0 + zeros,
        tangent_or_zeros(None, x),
        unpack_adjoint((None, None), np.stack([x, x]))[0],
    ]:
        np.testing.assert_array_equal(value, zeros)
        assert value.dtype == np.float32
    assert acc(None, x) is x and acc(x, None) is x
    assert unbroadcast(x, None) is None  # no differentiable value, no adjoint
    assert unbroadcast(None, [0.5, x]) == Sparse()
    assert unpack_adjoint((None, 0.5), (x, 1.0)) == Sparse({1: 0.5})


def test_emitted_code_differentiates_again(tmp_path):
    """The backpropagator cpsad emits, written to a file, differentiated again: reverse over
    reverse and forward over reverse give Hessian-vector products that match finite
    differences of the gradient."""
    import importlib.util

    from cpsad.testing import _random_like, _shift
    from tests import corpus_emitted as E

    path = tmp_path / "second_order_model_bp.py"
    path.write_text(cpsad.show(E.second_order_model, argnums=None))  # (every parameter)
    spec = importlib.util.spec_from_file_location("second_order_model_bp", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    E.emitted_bp = module.second_order_model_bp
    rng = np.random.default_rng(7)
    args = [rng.standard_normal(s) for s in [(3, 3), (3, 2), (3,)] * 2]
    check_grads(E.gradient_along, *args, argnums=(0, 1, 2), rtol=1e-4, atol=1e-6)
    primals, tangents = tuple(args[:3]), tuple(_random_like(a, rng) for a in args[:3])
    v = dict(zip(["vA", "vB", "vx"], args[3:]))
    _, tangent = cpsad.jvp(E.gradient_along, primals, tangents, **v)
    eps = 1e-6
    plus = [_shift(a, t, eps) for a, t in zip(primals, tangents)]
    minus = [_shift(a, t, -eps) for a, t in zip(primals, tangents)]
    fd = (E.gradient_along(*plus, **v) - E.gradient_along(*minus, **v)) / (2 * eps)
    assert np.isclose(tangent, fd, rtol=1e-4, atol=1e-6), (tangent, fd)
