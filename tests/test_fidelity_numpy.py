"""Fidelity to numpy (issue 13): programs cpsad accepts get numpy's value and the right gradient,
and programs it cannot follow are refused -- never a silent zero, NaN or wrong sign.

Each group is a regression of a bug found on main: index tricks (``np.r_``, ``np.c_``, ...) whose
items got no gradient; ``np.einsum``'s sublist form, differentiated as a constant; ``np.std`` and
norms at zero spread, NaN; complex numbers, with the wrong sign through ``np.abs`` and no tangent
for a Python ``complex``; ``grad`` of a bool or an integer, silently zero; ``np.matrix`` and
masked arrays, followed as plain arrays. Values are checked against plain numpy, gradients
against central finite differences along random directions (real and imaginary ones for complex
values: cpsad.testing) and against autograd where autograd runs the program.
"""

import tempfile
import warnings

import numpy as np
import pytest

import cpsad
from cpsad.testing import check_grads, check_jvp, check_vjp
from tests.oracles import autograd, autograd_version

pytestmark = pytest.mark.filterwarnings("ignore:the matrix subclass:PendingDeprecationWarning")

R = np.random.default_rng(13)
X2 = R.standard_normal(2)
X3 = R.standard_normal(3)
A23 = R.standard_normal((2, 3))
B34 = R.standard_normal((3, 4))
C34 = R.standard_normal((3, 4))
W45 = R.standard_normal((4, 5))
S33 = R.standard_normal((3, 3))
Z3 = R.standard_normal(3) + 1j * R.standard_normal(3)


def agrees(f, *args, argnums=0, oracle=True):
    """cpsad's value is numpy's; its gradient passes finite differences, forward mode agrees,
    and autograd (where it runs ``f``) gives the same gradient."""
    value, g = cpsad.value_and_grad(f, argnums)(*args)
    np.testing.assert_allclose(value, f(*args), rtol=1e-12, atol=1e-12)
    check_grads(f, *args, argnums=argnums, gradient=g)
    if argnums == 0 and len(args) == 1:
        check_jvp(f, *args)
    if oracle:
        theirs = autograd.grad(autograd_version(f), argnums)(*args)
        np.testing.assert_allclose(g, theirs, rtol=1e-7, atol=1e-10)
    return g


# =========================================================================== 1. index tricks


def r_twice(x):
    return np.sum(np.r_[x, x] ** 2)


def r_numbers(x):
    return np.sum(np.r_[x, 3.0, x[0]] * np.arange(4.0))


def r_range(x):
    return np.sum(np.r_[x, 0:3, x * 2] * np.arange(7.0))


def r_one(x):
    return np.sum(np.r_[x] ** 3)


def r_rows(x):
    return np.sum(np.r_["0,2", x, x**2] * np.arange(4.0).reshape(2, 2))


def r_last_axis(x):
    return np.sum(np.r_["-1", x, x[::-1]] * np.arange(4.0))


def c_columns(x):
    return np.sum(np.c_[x, x**2] * np.arange(4.0).reshape(2, 2))


def c_matrix(x):
    return np.sum(np.c_[A23.T[:2], x] ** 2)


def s_value(x):
    return np.sum(np.s_[x] ** 2)


def index_exp_value(x):
    return np.sum(np.index_exp[x][0] ** 2)


def doubled(x):
    return np.r_[x, 2.0 * x]


def r_in_helper(x):
    return np.sum(doubled(x) ** 2)


def grid_times(x):
    return np.sum(np.mgrid[0:2] * x) + np.sum(np.ogrid[0:2] * x)


@pytest.mark.parametrize(
    "f",
    [
        r_twice,
        r_numbers,
        r_range,
        r_one,
        r_rows,
        r_last_axis,
        c_columns,
        c_matrix,
        s_value,
        index_exp_value,
        r_in_helper,
        grid_times,
    ],
)
def test_index_tricks_differentiate_their_items(f):
    g = agrees(f, X2, oracle=False)  # autograd: np.r_ of its boxes is an object array
    assert np.any(g != 0)


def test_r_twice_is_four_x():
    """The issue's example, the gradient written out."""
    np.testing.assert_allclose(cpsad.grad(r_twice)(X2), 4 * X2)


def r_range_bound(x):
    return np.sum(np.r_[0:x:5j])


def mgrid_bound(x):
    return np.sum(np.mgrid[0:x:5j])


@pytest.mark.parametrize("f", [r_range_bound, mgrid_bound])
def test_a_range_with_a_differentiable_bound_is_refused(f):
    with pytest.raises(cpsad.TransformError, match="`slice` has no derivative"):
        cpsad.grad(f)(2.0)


def r_matrix(x):
    return np.sum(np.r_["r", x, x])


def test_the_matrix_directive_is_refused():
    with pytest.raises(TypeError, match="np.matrix"):
        cpsad.grad(r_matrix)(X2)


# =========================================================================== 2. einsum


def ein_sublist_transpose(x):
    return np.sum(np.einsum(x, [0, 1], [1, 0]) * A23.T)


def ein_sublist_first(x):
    return np.sum(np.einsum(x, [0, 1], B34, [1, 2], [0, 2]) ** 2)


def ein_sublist_second(x):
    return np.sum(np.einsum(A23, [0, 1], x, [1, 2], [0, 2]) ** 2)


def ein_sublist_implicit(x):
    return np.sum(np.einsum(x, [0, 1], B34, [1, 2]) ** 2)


def ein_sublist_ellipsis(x):
    return np.sum(np.einsum(x, [Ellipsis, 1], B34, [1, 2]) ** 2)


def ein_sublist_one(x):
    return np.sum(np.einsum(x, [0, 1]) ** 2)


def ein_sublist_repeated(x):
    return np.einsum(x, [0, 1], x, [0, 1], [])


def ein_constant_first(x):
    return np.sum(np.einsum("ij,jk->ik", A23, x) ** 2)


def ein_constant_second(x):
    return np.sum(np.einsum("ij,jk->ik", x, B34) ** 2)


def ein_repeated(x):
    return np.einsum("ij,ij->", x, x)


def ein_implicit(x):
    return np.sum(np.einsum("ij,jk", x, B34) ** 2)


def ein_ellipsis(x):
    return np.sum(np.einsum("...j,jk->...k", x, B34) ** 2)


def ein_diagonal(x):
    return np.einsum("ii", x)


def ein_three(x):
    return np.einsum("ij,jk,kl->", x, B34, W45)


def ein_four(x):
    return np.einsum("ij,jk,kl,l->", x, B34, W45, np.ones(5))


def ein_spaces(x):
    return np.einsum("ij, ij ->", x, A23)


def ein_optimized(x):
    return np.sum(np.einsum("ij,jk->ik", x, B34, optimize=True) ** 2)


def ein_global_and_closure(x):
    c = C34

    def inner(y):
        return np.einsum("ij,jk->ik", y, c)

    return np.sum(inner(x) ** 2)


EINSUMS = [
    (ein_sublist_transpose, A23),
    (ein_sublist_first, A23),
    (ein_sublist_second, B34),
    (ein_sublist_implicit, A23),
    (ein_sublist_ellipsis, A23),
    (ein_sublist_one, A23),
    (ein_sublist_repeated, A23),
    (ein_constant_first, B34),
    (ein_constant_second, A23),
    (ein_repeated, A23),
    (ein_implicit, A23),
    (ein_ellipsis, A23),
    (ein_diagonal, S33),
    (ein_three, A23),
    (ein_four, A23),
    (ein_spaces, A23),
    (ein_optimized, A23),
    (ein_global_and_closure, A23),
]
AUTOGRAD_EINSUM = {  # what autograd's einsum cannot run
    "ein_diagonal": "autograd's einsum cannot repeat a letter",
    "ein_sublist_transpose": "autograd's einsum has no sublist form",
    "ein_sublist_first": "autograd's einsum has no sublist form",
    "ein_sublist_second": "autograd's einsum has no sublist form",
    "ein_sublist_implicit": "autograd's einsum has no sublist form",
    "ein_sublist_ellipsis": "autograd's einsum has no sublist form",
    "ein_sublist_one": "autograd's einsum has no sublist form",
    "ein_sublist_repeated": "autograd's einsum has no sublist form",
}


@pytest.mark.parametrize("f,x", EINSUMS, ids=[f.__name__ for f, _ in EINSUMS])
def test_einsum_in_every_form(f, x):
    g = agrees(f, x, oracle=f.__name__ not in AUTOGRAD_EINSUM)
    assert np.any(g != 0)


def ein_sublist_both(a, b):
    return np.sum(np.einsum(a, [0, 1], b, [1, 2], [0, 2]) ** 2)


def test_einsum_sublist_both_operands():
    check_grads(ein_sublist_both, A23, B34, argnums=(0, 1))
    check_vjp(ein_sublist_both, A23, B34)
    check_jvp(ein_sublist_both, A23, B34)


def ein_second_sublist(s):
    return np.sum(np.einsum(s * A23, [0, 1], s * s * B34, [1, 2], [0, 2]) ** 2)


def ein_second_sublist_constant_first(s):
    return np.sum(np.einsum(A23, [0, 1], np.sin(s) * B34, [1, 2]) ** 3)


def ein_second_string(s):
    return np.sum(np.einsum("ij,jk->ik", s * A23, np.sin(s) * B34) ** 2)


@pytest.mark.parametrize(
    "f", [ein_second_sublist, ein_second_sublist_constant_first, ein_second_string]
)
def test_einsum_second_derivatives(f):
    s, eps = 0.7, 1e-5
    fd = (cpsad.grad(f)(s + eps) - cpsad.grad(f)(s - eps)) / (2 * eps)
    np.testing.assert_allclose(cpsad.grad(cpsad.grad(f))(s), fd, rtol=1e-6)
    np.testing.assert_allclose(cpsad.jvp(cpsad.grad(f), (s,), (1.0,))[1], fd, rtol=1e-6)


def ein_five(x):
    return np.einsum("i,i,i,i,i->", x, x, x, x, x)


def test_einsum_of_five_operands_is_refused():
    with pytest.raises(cpsad.TransformError, match="np.einsum"):
        cpsad.grad(ein_five)(X3)


# =========================================================================== 3. zero spread


def std_all(x):
    return np.std(x)


def std_rows(x):
    return np.sum(np.std(x, axis=1))


def std_kept(x):
    return np.sum(np.std(x, axis=0, keepdims=True))


def std_method(x):
    return x.std()


def var_all(x):
    return np.var(x)


def norm2(x):
    return np.linalg.norm(x)


def norm3(x):
    return np.linalg.norm(x, 3)


def norm_fro(x):
    return np.linalg.norm(x, "fro")


def norm_rows(x):
    return np.sum(np.linalg.norm(x, axis=1))


def hypot0(x):
    return np.hypot(x, 0.0)


ZERO_SPREAD = [
    (std_all, 3.0),
    (std_all, np.array(2.0)),
    (std_all, np.array([1.5, 1.5, 1.5])),
    (std_rows, np.array([[1.0], [2.0]])),
    (std_kept, np.array([[1.0, 2.0]])),
    (std_method, np.array([0.5, 0.5])),
    (var_all, np.array([1.0, 1.0])),
    (norm2, np.zeros(3)),
    (norm3, np.zeros(3)),
    (norm_fro, np.zeros((2, 2))),
    (norm_rows, np.zeros((2, 3))),
    (hypot0, 0.0),
]


@pytest.mark.parametrize(
    "f,x", ZERO_SPREAD, ids=[f"{f.__name__}-{i}" for i, (f, _) in enumerate(ZERO_SPREAD)]
)
def test_zero_spread_has_the_zero_subgradient(f, x):
    """``std`` (and the norms) at zero spread: the central difference is ``|eps| - |eps| = 0``, the
    smallest subgradient 0 -- not NaN. Forward mode likewise."""
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)  # no 0/0 on the way
        g = cpsad.grad(f)(x)
        _, t = cpsad.jvp(f, (x,), (np.ones_like(x),))
    np.testing.assert_array_equal(g, np.zeros_like(g))
    assert t == 0.0
    check_grads(f, x)


def test_std_of_an_axis_of_one_is_autograds_zero():
    x = np.array([[1.0], [2.0]])
    np.testing.assert_array_equal(
        cpsad.grad(std_rows)(x), autograd.grad(autograd_version(std_rows))(x)
    )


def norm_three_with_a_zero(x):
    return np.linalg.norm(x, 1.5)


def test_a_p_norm_with_a_zero_element_is_finite():
    x = np.array([0.0, 1.0, -2.0])
    g = agrees(norm_three_with_a_zero, x, oracle=False)  # autograd: NaN at the zero
    assert np.all(np.isfinite(g)) and g[0] == 0


# =========================================================================== 4. complex numbers
# autograd's convention, and JAX's: the gradient of a real f at z = x + iy is df/dx - i df/dy.


def abs_sq(z):
    return np.abs(z) ** 2


def abs_sq_by_conj(z):
    return np.real(z * np.conj(z))


def abs_(z):
    return np.abs(z)


def abs_builtin(z):
    return abs(z)


def real_square(z):
    return np.real(z**2)


def imag_sqrt(z):
    return np.imag(np.sqrt(z))


def real_exp(z):
    return np.real(np.exp(z))


def real_log(z):
    return np.real(np.log(z))


def real_reciprocal(z):
    return np.real(1.0 / z)


def real_quotient(z):
    return np.real(z / (2 + 1j))


def angle(z):
    return np.angle(z)


def real_tanh(z):
    return np.real(np.tanh(z))


def real_conj(z):
    return np.real(np.conj(z) * 2j)


def abs_of_square(z):
    return np.abs(z * z)


def abs_times_complex(z):
    """A real value (|z|) times a complex constant: its adjoint has an imaginary part that must
    not reach z."""
    return np.real(np.abs(z) * (1 + 2j))


SCALARS = [
    abs_sq,
    abs_sq_by_conj,
    abs_,
    abs_builtin,
    real_square,
    imag_sqrt,
    real_exp,
    real_log,
    real_reciprocal,
    real_quotient,
    angle,
    real_tanh,
    real_conj,
    abs_of_square,
    abs_times_complex,
]


@pytest.mark.parametrize("f", SCALARS)
@pytest.mark.parametrize("z", [1 + 2j, np.complex128(0.3 - 0.8j)], ids=["complex", "complex128"])
def test_complex_scalars_follow_autograds_convention(f, z):
    g = cpsad.grad(f)(z)
    np.testing.assert_allclose(g, autograd.grad(autograd_version(f))(z), rtol=1e-12)
    check_grads(f, z)  # along real and imaginary directions
    assert type(g) is type(z)


def sum_abs(z):
    return np.sum(np.abs(z))


def sum_abs_sq(z):
    return np.sum(np.abs(z) ** 2)


def real_dot(z):
    return np.real(np.dot(z, z))


def real_matmul(z):
    return np.real(z @ z)


def real_sum(z):
    return np.real(np.sum(z * (1 - 1j)))


def mean_abs(z):
    return np.mean(np.abs(z))


def norm_complex(z):
    return np.linalg.norm(z)


def var_complex(z):
    return np.var(z)


def std_complex(z):
    return np.std(z)


def real_vdot(z):
    return np.real(np.vdot(z, z * (1 + 1j)))


def real_attributes(z):
    return np.sum(z.real * z.imag) + np.sum(np.abs(z.conj() - 1j))


ARRAYS = [
    sum_abs,
    sum_abs_sq,
    real_dot,
    real_matmul,
    real_sum,
    mean_abs,
    norm_complex,
    var_complex,
    std_complex,
    real_vdot,
    real_attributes,
]
NO_AUTOGRAD_COMPLEX = {
    "real_vdot": "autograd has no vjp of vdot",
    "real_attributes": "autograd's boxes have no .real, .imag, .conj()",
}


@pytest.mark.parametrize("f", ARRAYS)
def test_complex_arrays_follow_autograds_convention(f):
    g = cpsad.grad(f)(Z3)
    if f.__name__ not in NO_AUTOGRAD_COMPLEX:
        np.testing.assert_allclose(g, autograd.grad(autograd_version(f))(Z3), rtol=1e-10)
    check_grads(f, Z3)
    check_jvp(f, Z3)
    assert g.dtype == Z3.dtype


def test_abs_squared_is_the_same_through_abs_and_through_conj():
    for z in (1 + 2j, Z3):
        want = 2 * np.conj(z)
        np.testing.assert_allclose(cpsad.grad(lambda z: np.sum(np.abs(z) ** 2))(z), want)
        np.testing.assert_allclose(cpsad.grad(lambda z: np.sum(np.real(z * np.conj(z))))(z), want)


def test_the_tangent_of_abs_of_a_python_complex():
    """``d|z|`` along ``v`` is ``Re(conj(z) v) / |z|``: along 1, x / |z|; along i, y / |z|."""
    z = 1 + 2j
    value, t1 = cpsad.jvp(abs_, (z,), (1.0,))
    assert value == abs(z) and np.isclose(t1, 1 / abs(z))
    _, ti = cpsad.jvp(abs_, (z,), (1j,))
    assert np.isclose(ti, 2 / abs(z))
    _, t = cpsad.jvp(lambda z: np.abs(z), (1 + 1j,), (1.0,))  # the issue's example
    assert np.isclose(t, 1 / np.sqrt(2))


def complex_product(z, w):
    return z * w + np.exp(z) / w


def test_vjp_and_jvp_of_a_holomorphic_function():
    w = Z3[::-1] + 2
    check_vjp(complex_product, Z3, w)
    check_jvp(complex_product, Z3, w)
    check_vjp(complex_product, 1 + 2j, 0.5 - 1j)
    check_jvp(complex_product, 1 + 2j, 0.5 - 1j)


def phase_loss(x):
    """Real input, complex values inside."""
    return np.sum(np.abs(np.exp(1j * x) * (2 + 1j) + 0.5) ** 2) + np.real(np.sum(np.exp(2j * x)))


def test_a_real_argument_through_complex_values():
    g = agrees(phase_loss, X3)
    assert g.dtype == np.float64


def log_abs_det(a):
    sign, logdet = np.linalg.slogdet(a)
    return logdet + np.real(sign * (1 - 2j))


def test_slogdet_of_a_complex_matrix():
    a = S33 + 1j * R.standard_normal((3, 3)) + 3 * np.eye(3)
    check_grads(log_abs_det, a)
    check_jvp(log_abs_det, a)


def chol(a):
    return np.real(np.sum(np.linalg.cholesky(a)))


def test_rules_not_derived_for_complex_refuse_it():
    m = R.standard_normal((3, 3)) + 1j * R.standard_normal((3, 3))
    h = m @ m.conj().T + 3 * np.eye(3)
    with pytest.raises(TypeError, match="real values only"):
        cpsad.grad(chol)(h)


def abs_of_a_complex_path(s):
    return np.abs(s * (1 + 2j) + s * s * 1j)


def test_complex_outputs_and_higher_derivatives_are_refused():
    """A second derivative at a complex argument, or of a gradient that passes through complex
    values (whose rules' own derivatives are not verified: np.sign is a step there), is refused,
    not computed wrong; first derivatives there are right."""
    with pytest.raises(TypeError, match="real scalar output"):
        cpsad.grad(lambda z: z * z)(1 + 2j)
    with pytest.raises(TypeError, match="real arguments only"):
        cpsad.grad(cpsad.grad(abs_sq))(1 + 2j)
    check_grads(abs_of_a_complex_path, 0.7)
    with pytest.raises(TypeError, match="passes through complex"):
        cpsad.grad(cpsad.grad(abs_of_a_complex_path))(0.7)
    with pytest.raises(TypeError, match="passes through complex"):
        cpsad.jvp(cpsad.grad(abs_of_a_complex_path), (0.7,), (1.0,))


def test_a_real_argument_rejects_a_complex_tangent():
    with pytest.raises(ValueError, match="complex but its primal is real"):
        cpsad.jvp(abs_, (1.0,), (1j,))


# =========================================================================== 5. outputs


def comparison(x):
    return np.sum(x) > 0


def python_comparison(x):
    return x > 0


def index(x):
    return np.argmax(x)


def count(x):
    return np.sum(np.ones(2, dtype=int))


@pytest.mark.parametrize("f", [comparison, python_comparison, index, count])
def test_grad_of_a_bool_or_an_integer_is_an_error(f):
    with pytest.raises(TypeError, match="no gradient"):
        cpsad.grad(f)(1.5 if f is python_comparison else X2)


def constant_branch(x):
    if x < 0:
        return 0
    return x * x


def length(x):
    return len(x)


def test_a_python_int_result_is_a_constant_with_a_zero_gradient():
    """``return 0`` in a branch is ordinary Python: its derivative is zero (autograd refuses)."""
    assert cpsad.grad(constant_branch)(-1.0) == 0.0
    assert cpsad.grad(constant_branch)(2.0) == 4.0
    np.testing.assert_array_equal(cpsad.grad(length)(X2), np.zeros(2))


# =========================================================================== 6. ndarray subclasses


def sum_sq(x):
    return np.sum(x * x)


def weighted(x, m):
    return np.sum(x * m)


with warnings.catch_warnings():
    warnings.simplefilter("ignore", PendingDeprecationWarning)  # np.matrix's own
    SUBCLASSED = [
        np.matrix([[1.0, 2.0]]),
        np.ma.array([1.0, 2.0], mask=[0, 1]),
        np.rec.array([(1.0,)], dtype=[("a", float)]),
    ]


@pytest.mark.parametrize("x", SUBCLASSED, ids=["matrix", "masked", "record"])
def test_ndarray_subclasses_are_refused_at_the_entry(x):
    for call in (
        lambda: cpsad.grad(sum_sq)(x),
        lambda: cpsad.grad(lambda d: sum_sq(d["w"]))({"w": x}),
        lambda: cpsad.grad(lambda ls: sum_sq(ls[0]))([x]),
        lambda: cpsad.grad(weighted)(np.ones(np.shape(x)), x),  # not differentiated, used
        lambda: cpsad.vjp(sum_sq, x),
        lambda: cpsad.jvp(sum_sq, (x,), (np.ones(np.shape(x)),)),
    ):
        with pytest.raises(TypeError, match="plain numpy arrays"):
            call()


def test_the_issues_matrix_example():
    with pytest.raises(TypeError, match=r"numpy.matrix.*np.asarray"):
        cpsad.grad(lambda x: np.sum(x * x))(np.matrix([[1.0, 2.0]]))


def test_a_memory_mapped_array_is_a_plain_array():
    with tempfile.NamedTemporaryFile() as fh:
        m = np.memmap(fh.name, dtype=float, mode="w+", shape=(3,))
        m[:] = [1.0, 2.0, 3.0]
        np.testing.assert_array_equal(cpsad.grad(sum_sq)(m), 2 * np.asarray(m))
        np.testing.assert_array_equal(cpsad.grad(weighted)(np.ones(3), m), np.asarray(m))


@pytest.mark.parametrize(
    "x",
    [np.array([1.0, 2.0]), np.array(1.5), np.float64(1.5), np.float32(1.5), 3, 1.5, np.int64(2)],
    ids=["array", "0-d", "float64", "float32", "int", "float", "int64"],
)
def test_plain_values_still_pass(x):
    g = cpsad.grad(sum_sq)(x)
    np.testing.assert_allclose(g, 2 * np.asarray(x, float), rtol=1e-6)
