"""What JAX and autograd users reach for: has_aux, elementwise_grad, stop_gradient, jacfwd /
jacrev and tuple argnums, custom_vjp, checkpoint -- each against central differences (and
autograd where it has the function), and what is refused, refused clearly."""

import numpy as np
import pytest

import cpsad

RNG = np.random.default_rng(7)
X = RNG.normal(size=4)
Y = RNG.normal(size=4)


def numeric_grad(f, x, eps=1e-6):
    """Central differences of the scalar ``f`` in every element of ``x``."""
    x = np.asarray(x, dtype=float)
    out = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        e = np.zeros_like(x)
        e[i] = eps
        out[i] = (f(x + e) - f(x - e)) / (2 * eps)
    return out


def numeric_jacobian(f, x, eps=1e-6):
    x = np.asarray(x, dtype=float)
    cols = []
    for i in np.ndindex(x.shape):
        e = np.zeros_like(x)
        e[i] = eps
        cols.append((np.asarray(f(x + e)) - np.asarray(f(x - e))) / (2 * eps))
    y = np.asarray(f(x))
    return np.stack(cols, axis=-1).reshape(y.shape + x.shape)


# ----------------------------------------------------------------------------- has_aux


def loss_with_metrics(w, x):
    pred = np.tanh(w * x)
    loss = np.sum((pred - 0.5) ** 2)
    return loss, {"pred": pred, "n": len(x), "name": "mse"}


def test_grad_with_aux_returns_the_gradient_of_the_first_and_the_aux_unchanged():
    g, aux = cpsad.grad(loss_with_metrics, has_aux=True)(X, Y)
    np.testing.assert_allclose(g, numeric_grad(lambda w: loss_with_metrics(w, Y)[0], X), rtol=1e-6)
    expected = loss_with_metrics(X, Y)[1]
    np.testing.assert_array_equal(aux["pred"], expected["pred"])
    assert aux["n"] == 4 and aux["name"] == "mse"


def test_value_and_grad_with_aux_and_argnums():
    (value, aux), (gw, gx) = cpsad.value_and_grad(loss_with_metrics, (0, 1), has_aux=True)(X, Y)
    assert value == pytest.approx(loss_with_metrics(X, Y)[0], rel=1e-12)
    assert aux["name"] == "mse"
    np.testing.assert_allclose(gw, numeric_grad(lambda w: loss_with_metrics(w, Y)[0], X), rtol=1e-6)
    np.testing.assert_allclose(gx, numeric_grad(lambda x: loss_with_metrics(X, x)[0], Y), rtol=1e-6)


def test_vjp_with_aux_pulls_back_the_first_alone():
    def f(x):
        return np.sin(x) * 2.0, [np.cos(x), "label"]

    out, pullback, aux = cpsad.vjp(f, X, has_aux=True)
    np.testing.assert_array_equal(out, np.sin(X) * 2.0)
    assert aux[1] == "label"
    ct = RNG.normal(size=4)
    (g,) = pullback(ct)
    np.testing.assert_allclose(g, numeric_grad(lambda x: np.dot(ct, np.sin(x) * 2.0), X), rtol=1e-6)


def test_aux_that_depends_on_the_input_is_carried_not_differentiated():
    def f(x):
        y = x * x
        return np.sum(y), y  # aux is y itself: no derivative flows from it

    g, aux = cpsad.grad(f, has_aux=True)(X)
    np.testing.assert_allclose(g, 2 * X, rtol=1e-12)
    np.testing.assert_array_equal(aux, X * X)


@pytest.mark.parametrize("result", [1.0, (1.0,), (1.0, 2.0, 3.0)])
def test_has_aux_without_a_pair_is_an_error_that_says_pair(result):
    def f(x):
        return result if not isinstance(result, float) else x * x

    with pytest.raises(TypeError, match="pair"):
        cpsad.grad(f, has_aux=True)(1.0)


def test_a_derivative_with_aux_is_not_differentiated_again():
    g = cpsad.grad(lambda t: (t**3, "aux"), has_aux=True)
    with pytest.raises(TypeError, match="has_aux"):
        cpsad.grad(g)(1.0)


# ----------------------------------------------------------------------------- elementwise_grad


def test_elementwise_grad_against_autograd_and_differences():
    def f(x):
        return np.tanh(x) * np.exp(-x * x)

    got = cpsad.elementwise_grad(f)(X)
    np.testing.assert_allclose(got, np.diag(numeric_jacobian(f, X)), rtol=1e-6)
    autograd = pytest.importorskip("autograd")
    anp = pytest.importorskip("autograd.numpy")
    expected = autograd.elementwise_grad(lambda x: anp.tanh(x) * anp.exp(-x * x))(X)
    np.testing.assert_allclose(got, expected, rtol=1e-12)


def test_elementwise_grad_is_the_gradient_of_the_sum():
    def f(x, y):
        return np.outer(x, y)  # not elementwise: still the gradient of sum(f)

    gx, gy = cpsad.elementwise_grad(f, (0, 1))(X, Y)
    np.testing.assert_allclose(gx, numeric_grad(lambda x: np.sum(f(x, Y)), X), rtol=1e-6)
    np.testing.assert_allclose(gy, numeric_grad(lambda y: np.sum(f(X, y)), Y), rtol=1e-6)


# ----------------------------------------------------------------------------- stop_gradient


def test_stop_gradient_holds_its_value_fixed():
    def f(x):
        return np.sum(x * cpsad.stop_gradient(np.sin(x)))

    frozen = np.sin(X)
    expected = numeric_grad(lambda x: np.sum(x * frozen), X)
    np.testing.assert_allclose(cpsad.grad(f)(X), expected, rtol=1e-6)
    v = RNG.normal(size=4)
    _, t = cpsad.jvp(f, (X,), (v,))
    assert t == pytest.approx(np.dot(expected, v), rel=1e-6)


def test_stop_gradient_at_second_order():
    def f(x):
        return x * x * cpsad.stop_gradient(x)

    # d/dx = 2 x s, d2/dx2 = 2 s with s = x held fixed
    assert cpsad.grad(cpsad.grad(f))(1.7) == pytest.approx(2 * 1.7, rel=1e-12)
    assert cpsad.hessian(f)(1.7) == pytest.approx(2 * 1.7, rel=1e-12)


def test_stop_gradient_outside_a_derivative_is_the_identity():
    assert cpsad.stop_gradient(X) is X


# ----------------------------------------------------------------------------- jacobians


def two(x, y):
    return np.sin(x) * y[:, None] + np.cos(y)[:, None]


@pytest.mark.parametrize("jac", [cpsad.jacfwd, cpsad.jacrev, cpsad.jacobian])
def test_jacobian_of_a_tuple_of_argnums(jac):
    jx, jy = jac(two, (0, 1))(X, Y)
    np.testing.assert_allclose(jx, numeric_jacobian(lambda x: two(x, Y), X), rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(jy, numeric_jacobian(lambda y: two(X, y), Y), rtol=1e-6, atol=1e-9)


def test_jacfwd_and_jacrev_agree_on_a_pytree_result():
    def f(x):
        return {"a": np.sin(x), "b": (np.sum(x * x), x[:2] * 3.0)}

    fwd, rev = cpsad.jacfwd(f)(X), cpsad.jacrev(f)(X)
    np.testing.assert_allclose(fwd["a"], rev["a"], rtol=1e-12)
    np.testing.assert_allclose(fwd["b"][0], rev["b"][0], rtol=1e-12)
    np.testing.assert_allclose(fwd["b"][1], rev["b"][1], rtol=1e-12)
    np.testing.assert_allclose(rev["a"], numeric_jacobian(np.sin, X), rtol=1e-6, atol=1e-9)


def test_hessian_of_a_tuple_of_argnums_has_jax_block_structure():
    def f(x, y):
        return np.sum(np.sin(x) * y**2) + np.dot(x, x) * y[0]

    (hxx, hxy), (hyx, hyy) = cpsad.hessian(f, (0, 1))(X, Y)

    def gx(x, y):
        return cpsad.grad(f, 0)(x, y)

    def gy(x, y):
        return cpsad.grad(f, 1)(x, y)

    np.testing.assert_allclose(hxx, numeric_jacobian(lambda x: gx(x, Y), X), rtol=1e-5, atol=1e-8)
    np.testing.assert_allclose(hxy, numeric_jacobian(lambda y: gx(X, y), Y), rtol=1e-5, atol=1e-8)
    np.testing.assert_allclose(hyx, numeric_jacobian(lambda x: gy(x, Y), X), rtol=1e-5, atol=1e-8)
    np.testing.assert_allclose(hyy, numeric_jacobian(lambda y: gy(X, y), Y), rtol=1e-5, atol=1e-8)
    np.testing.assert_allclose(hxy, hyx.T, rtol=1e-10, atol=1e-12)


# ----------------------------------------------------------------------------- custom_vjp


@cpsad.custom_vjp
def softplus(x, beta=1.0):
    return np.log1p(np.exp(beta * x)) / beta


def _softplus_fwd(x, beta=1.0):
    return softplus(x, beta), 1.0 / (1.0 + np.exp(-beta * x))


def _softplus_bwd(sigmoid, g):
    return g * sigmoid, None


softplus.defvjp(_softplus_fwd, _softplus_bwd)


@cpsad.custom_vjp
def clipped_identity(x, lo, hi):
    return x


clipped_identity.defvjp(
    lambda x, lo, hi: (x, (lo, hi)), lambda res, g: (np.clip(g, *res), None, None)
)


def _inner_map(x):
    return np.sin(x) * x + np.tanh(x * x)


@cpsad.custom_vjp
def through_vjp(x):
    return _inner_map(x)


def _through_vjp_fwd(x):
    return cpsad.vjp(_inner_map, x)  # (the value, the pullback as the residual)


through_vjp.defvjp(_through_vjp_fwd, lambda pullback, g: pullback(g))


def test_a_custom_rule_that_calls_vjp():
    """The backward function of a custom rule may itself differentiate (cpsad.vjp): the
    gradient through it is the function's own."""

    def f(x):
        return np.sum(through_vjp(x * 1.5) ** 2)

    def plain(x):
        return np.sum(_inner_map(x * 1.5) ** 2)

    np.testing.assert_allclose(cpsad.grad(f)(X), numeric_grad(plain, X), rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(cpsad.grad(f)(X), cpsad.grad(plain)(X), rtol=1e-12)


def test_custom_vjp_with_the_true_derivative_matches_differences():
    def f(x, beta):
        return np.sum(softplus(x, beta) * np.cos(x))

    for beta in (1.0, 2.5):
        got = cpsad.grad(f)(X, beta)
        np.testing.assert_allclose(got, numeric_grad(lambda x, b=beta: f(x, b), X), rtol=1e-6)


def test_custom_vjp_uses_the_backward_function_given():
    def f(x):
        return np.sum(clipped_identity(x * 4.0, -1.0, 1.0))  # the adjoint 1.0 reaches it ...

    # ... and is clipped there (to 1.0 here), then multiplied by 4.0: the derivative the user
    # chose, not the identity's
    np.testing.assert_array_equal(cpsad.grad(f)(X), np.full(4, 4.0))

    def g(x):
        return np.sum(clipped_identity(x, -0.25, 0.25) * 3.0)

    np.testing.assert_array_equal(cpsad.grad(g)(X), np.full(4, 0.25))


def test_custom_vjp_with_keyword_and_default_arguments():
    def f(x):
        return np.sum(softplus(x, beta=2.0)) + np.sum(softplus(x))

    expected = numeric_grad(f, X)
    np.testing.assert_allclose(cpsad.grad(f)(X), expected, rtol=1e-6)


def test_custom_vjp_backward_of_the_wrong_length_is_an_error():
    @cpsad.custom_vjp
    def h(x, y):
        return x * y

    h.defvjp(lambda x, y: (x * y, (x, y)), lambda res, g: (g * res[1],))  # one, not two
    with pytest.raises(TypeError, match="2 gradient"):
        cpsad.grad(lambda x: h(x, 2.0))(1.0)


def test_custom_vjp_in_forward_mode_is_refused_at_the_users_line():
    with pytest.raises(cpsad.TransformError, match="forward-mode") as info:
        cpsad.jvp(lambda x: softplus(x) * x, (1.0,), (1.0,))
    assert info.value.filename == __file__


def test_custom_vjp_of_varargs_is_refused():
    with pytest.raises(TypeError, match=r"\*args"):
        cpsad.custom_vjp(lambda *args: args[0])


def test_custom_vjp_outside_a_derivative_is_the_function():
    assert softplus(0.3, 2.0) == np.log1p(np.exp(0.6)) / 2.0


# ----------------------------------------------------------------------------- checkpoint


def block(x, w, scale=1.0):
    h = np.tanh(w * x)
    return np.sin(h) * scale + x


checkpointed_block = cpsad.checkpoint(block)


def chain(x, w, blk):
    for _ in range(3):
        x = blk(x, w, scale=0.5)
    return np.sum(x * x)


def test_checkpoint_gives_the_gradient_without_it():
    got = cpsad.grad(lambda x, w: chain(x, w, checkpointed_block), (0, 1))(X, 1.3)
    expected = cpsad.grad(lambda x, w: chain(x, w, block), (0, 1))(X, 1.3)
    np.testing.assert_allclose(got[0], expected[0], rtol=1e-12)
    assert got[1] == pytest.approx(expected[1], rel=1e-12)
    np.testing.assert_allclose(got[0], numeric_grad(lambda x: chain(x, 1.3, block), X), rtol=1e-6)


def test_checkpoint_in_forward_mode():
    v = RNG.normal(size=4)
    _, got = cpsad.jvp(lambda x: chain(x, 1.3, checkpointed_block), (X,), (v,))
    _, expected = cpsad.jvp(lambda x: chain(x, 1.3, block), (X,), (v,))
    assert got == pytest.approx(expected, rel=1e-12)


def test_checkpoint_keeps_the_functions_meaning_and_name():
    np.testing.assert_array_equal(checkpointed_block(X, 0.3), block(X, 0.3))
    assert checkpointed_block.__name__ == "block"


def test_second_order_through_a_checkpoint_is_refused_not_wrong():
    f = cpsad.grad(lambda x: checkpointed_block(x, 0.7) * x)
    with pytest.raises(cpsad.TransformError):
        cpsad.grad(f)(0.4)


# ----------------------------------------------------------------------------- results of size 1


@pytest.mark.parametrize("shape", [(1,), (1, 1), (1, 1, 1)])
def test_a_result_of_one_element_is_a_scalar_to_grad_as_in_autograd(shape):
    def f(x):
        return np.reshape(np.sum(np.sin(x) * x), shape)

    value, g = cpsad.value_and_grad(f)(X)
    assert np.shape(value) == shape
    np.testing.assert_allclose(g, numeric_grad(lambda x: f(x).item(), X), rtol=1e-6)
    autograd = pytest.importorskip("autograd")
    anp = pytest.importorskip("autograd.numpy")
    expected = autograd.grad(lambda x: anp.reshape(anp.sum(anp.sin(x) * x), shape))(X)
    np.testing.assert_allclose(g, expected, rtol=1e-12)


def test_a_result_of_two_elements_is_still_refused():
    with pytest.raises(TypeError, match="scalar output"):
        cpsad.grad(lambda x: x[:2] * 2.0)(X)


def test_a_row_times_a_column_is_differentiated():
    w = RNG.normal(size=(1, 4))

    def f(x):
        return w @ x[:, None]  # shape (1, 1)

    np.testing.assert_allclose(cpsad.grad(f)(X), w[0], rtol=1e-12)


# ----------------------------------------------------------------------------- what grad takes


@pytest.mark.parametrize(
    "prim, args",
    [
        (np.sin, (0.3,)),
        (np.tanh, (X,)),  # elementwise_grad of a ufunc
        (np.arctan2, (0.3, -0.5)),
        (np.hypot, (X, Y)),
        (np.linalg.norm, (X,)),
        (np.sum, (X,)),
    ],
)
def test_a_function_with_a_rule_is_differentiated_directly(prim, args):
    nums = tuple(range(len(args)))
    if np.ndim(prim(*args)) == 0:
        got = cpsad.grad(prim, nums)(*args)
        for i in nums:

            def one(v, i=i):
                return prim(*args[:i], v, *args[i + 1 :])

            expected = numeric_grad(one, args[i])
            np.testing.assert_allclose(got[i], expected, rtol=1e-6, atol=1e-10)
    else:
        got = cpsad.elementwise_grad(prim, nums)(*args)
        for i in nums:

            def summed(v, i=i):
                return np.sum(prim(*args[:i], v, *args[i + 1 :]))

            np.testing.assert_allclose(got[i], numeric_grad(summed, args[i]), rtol=1e-6)


def test_math_functions_and_forward_mode_and_second_order_directly():
    import math

    assert cpsad.grad(math.tanh)(0.3) == pytest.approx(1 - math.tanh(0.3) ** 2, rel=1e-12)
    assert cpsad.jvp(np.sin, (0.3,), (2.0,))[1] == pytest.approx(2 * np.cos(0.3), rel=1e-12)
    assert cpsad.grad(cpsad.grad(np.sin))(0.3) == pytest.approx(-np.sin(0.3), rel=1e-12)


def test_a_primitive_with_keywords_directly_is_refused_with_what_to_write():
    with pytest.raises(TypeError, match="lambda x: sum"):
        cpsad.grad(np.sum)(X, axis=0)


class Model:
    def __init__(self, w):
        self.w = w

    def forward(self, x):
        return np.tanh(self.w * x)

    def loss(self, x, target=0.5):
        return np.sum((self.forward(x) - target) ** 2)


def test_a_bound_method_is_differentiated_with_its_object_as_data():
    model = Model(np.array([1.0, -2.0, 0.5, 3.0]))
    got = cpsad.grad(model.loss)(X)
    np.testing.assert_allclose(got, numeric_grad(model.loss, X), rtol=1e-6)
    value, (gx,) = cpsad.value_and_grad(model.loss, (0,))(X, target=0.1)
    assert value == model.loss(X, target=0.1)
    np.testing.assert_allclose(gx, numeric_grad(lambda x: model.loss(x, 0.1), X), rtol=1e-6)
    _, t = cpsad.jvp(model.loss, (X,), (Y,))
    assert t == pytest.approx(np.dot(numeric_grad(model.loss, X), Y), rel=1e-6)


def test_operator_functions_passed_as_values():
    import functools
    import operator

    def product(x):
        return functools.reduce(operator.mul, [x[0], x[1], x[2], x[3]])

    np.testing.assert_allclose(cpsad.grad(product)(X), numeric_grad(product, X), rtol=1e-6)

    def mapped(x):
        return np.sum(list(map(operator.sub, x, x * x)))

    np.testing.assert_allclose(cpsad.grad(mapped)(X), numeric_grad(mapped, X), rtol=1e-6)
    assert cpsad.grad(operator.mul, (0, 1))(2.0, 5.0) == (5.0, 2.0)


def test_dict_with_keywords_is_the_display():
    def f(x):
        d = dict(a=x, b=x * 2.0)
        return np.sum(d["b"] * d["a"]) + np.sum(dict(w=x)["w"])

    np.testing.assert_allclose(cpsad.grad(f)(X), numeric_grad(f, X), rtol=1e-6)
    _, t = cpsad.jvp(f, (X,), (Y,))
    assert t == pytest.approx(np.dot(numeric_grad(f, X), Y), rel=1e-6)


# ----------------------------------------------------------------------------- zip(*rows)


def zip_of_pairs(x):
    pairs = [(x[0], x[1]), (x[2], x[0] * 2.0), (x[1] * x[2], 3.0)]
    a, b = zip(*pairs)
    return a[0] * b[1] + np.sum(np.array(a) * np.array(b)) + sum(b)


def zip_of_array_rows(x):
    rows = [x, x * 2.0]
    total = 0.0
    for c in list(zip(*rows)):
        total = total + c[0] * c[1]
    return total


def loop_over_zip_of_pairs(x):
    pairs = [(x[0], x[1]), (x[2], x[0])]
    s = 0.0
    for p, q in zip(*pairs):  # (Desugar read the starred argument as one iterable: refused)
        s = s + p * q * q
    return s


@pytest.mark.parametrize("f", [zip_of_pairs, zip_of_array_rows, loop_over_zip_of_pairs])
def test_zip_of_rows_transposes_and_back(f):
    from tests.faithful import assert_faithful

    assert_faithful(f, X)


def test_forward_mode_of_a_gradient_with_a_one_tuple_argnums():
    """``jvp(grad(f, (0,)))`` -- and so ``hessian(f, (0,))`` -- read the one adjoint a
    backpropagator returns bare as a tuple of them: the value and the tangent were the first
    element broadcast (found by the linalg rules' helper session)."""

    def f(a):
        return np.sum(np.sin(a) * a[0])

    t = RNG.normal(size=4)
    g = cpsad.grad(f)
    value, tangent = cpsad.jvp(cpsad.grad(f, (0,)), (X,), (t,))
    np.testing.assert_allclose(value[0], g(X), rtol=1e-12)
    fd = (g(X + 1e-6 * t) - g(X - 1e-6 * t)) / 2e-6
    np.testing.assert_allclose(tangent[0], fd, rtol=1e-6, atol=1e-8)
    ((h,),) = cpsad.hessian(f, (0,))(X)
    np.testing.assert_allclose(h, cpsad.hessian(f)(X), rtol=1e-12)
