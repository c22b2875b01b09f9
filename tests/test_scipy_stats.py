"""scipy.stats' rules (and scipy.special's Bessel functions) beyond first order: second
derivatives (reverse over reverse, and Hessians) against central differences of the gradient,
likelihoods against their derivatives worked out by hand, autograd.scipy.stats as a second
opinion, and the calls the rules refuse. The first-order checks of every rule are cases of
tests/test_rules.py (tests/corpus_scipy_stats.py)."""

import numpy as np
import pytest

import cpsad

stats = pytest.importorskip("scipy.stats")
special = pytest.importorskip("scipy.special")

from cpsad.rules import core  # noqa: E402
from cpsad.testing import _random_like  # noqa: E402  (the cotangents test_rules.py draws)
from tests import corpus_rules as C  # noqa: E402
from tests import corpus_scipy_stats as S  # noqa: E402
from tests.oracles import autograd, autograd_version  # noqa: E402

DATA = np.array([0.3, -1.2, 0.8, 2.1, -0.4, 1.5, 0.05])


def near(f, t, h):
    """The central difference of ``f`` at ``t``."""
    return (f(t + h) - f(t - h)) / (2 * h)


# ----------------------------------------------------------------------------- second order


def f_norm(t):
    x = np.array([0.2, -0.5, 1.1]) * t
    return np.sum(
        stats.norm.logpdf(x, 0.3 * t, 1.0 + 0.2 * t)
        + stats.norm.pdf(x, loc=-0.1 * t, scale=0.5 + t)
        + stats.norm.cdf(x, 0.2, 0.7 * t)
        + stats.norm.logcdf(x - t, scale=t)
        + stats.norm.sf(t * x)
        + stats.norm.logsf(x, t - 1.0, 1.3)
    )


def f_t(t):
    x = np.array([0.2, -0.5, 1.1]) * t
    return np.sum(
        stats.t.logpdf(x, 2.0 + t, 0.3 * t, 0.5 + t)
        + stats.t.pdf(x, 1.5 * t, loc=0.1, scale=t)
        + stats.t.cdf(x, 3.0, -0.2 * t, 0.4 + t)
        + stats.t.logcdf(x, 4.5, loc=t - 1.0, scale=0.9 * t)
    )


def f_beta(t):
    x = np.array([0.2, 0.45, 0.7]) * (0.6 + 0.3 * t)
    return np.sum(
        stats.beta.logpdf(x, 1.0 + t, 3.0 - t)
        + stats.beta.pdf(x, 0.5 * t + 1.2, 2.0 * t, -0.1 * t, 1.0 + t)
        + stats.beta.cdf(x, 2.0, 1.5, loc=-0.2 * t, scale=1.0 + 0.5 * t)
    )


def f_gamma(t):
    x = np.array([0.4, 1.3, 2.2]) * t
    return np.sum(
        stats.gamma.logpdf(x, 1.0 + t, 0.1 * t - 0.3, 2.0 * t)
        + stats.gamma.pdf(x, 0.5 + t)
        + stats.gamma.cdf(x, 1.8, scale=0.5 + t)
    )


def f_poisson(t):
    k = np.array([0, 1, 3, 6])
    return np.sum(
        stats.poisson.logpmf(k, 2.0 * t)
        + stats.poisson.pmf(k + 1, 1.0 + t, 1)
        + stats.poisson.cdf(k, 0.5 + t)
    )


P = np.array([[0.2, 0.5], [0.3, 0.1], [0.5, 0.4]])  # two points of the simplex, as columns
V = np.array([[0.1, -0.05], [-0.04, 0.02], [-0.06, 0.03]])  # directions along it


def f_dirichlet(t):
    x = P + (t - 1.0) * V
    alpha = np.array([1.5, 0.7, 2.2]) * t
    return np.sum(stats.dirichlet.logpdf(x, alpha)) + stats.dirichlet.pdf(x[:, 0], alpha + 1.0)


COV = np.array([[2.0, 0.3, -0.2], [0.3, 1.5, 0.4], [-0.2, 0.4, 1.2]])
DCOV = np.array([[0.4, -0.1, 0.2], [-0.1, 0.3, 0.0], [0.2, 0.0, -0.2]])


def f_mvn(t):
    x = np.array([[0.2, -0.5, 1.1], [1.0, 0.3, -0.7]]) * t
    mean = np.array([0.1, 0.2, -0.3]) * t
    cov = COV + t * DCOV
    return np.sum(stats.multivariate_normal.logpdf(x, mean, cov)) + stats.multivariate_normal.pdf(
        x[0], mean, cov
    )


def f_bessel(t):
    return (
        special.i0(t)
        + special.i1(0.5 * t)
        + special.iv(1.5, t)
        + special.ive(2, t)
        + special.i0e(0.8 * t)
        + special.i1e(t)
    )


@pytest.mark.parametrize(
    "f", [f_norm, f_t, f_beta, f_gamma, f_poisson, f_dirichlet, f_mvn, f_bessel]
)
@pytest.mark.parametrize("t", [0.9, 1.3])
def test_second_derivative_against_differences_of_the_gradient(f, t):
    g = cpsad.grad(f)
    assert g(t) == pytest.approx(near(f, t, 1e-6), rel=1e-6, abs=1e-8)
    fd = near(g, t, 1e-5)
    assert cpsad.grad(g)(t) == pytest.approx(fd, rel=1e-5, abs=1e-7)
    assert cpsad.hessian(f)(t) == pytest.approx(fd, rel=1e-5, abs=1e-7)


def test_forward_over_reverse_agrees():
    for f in (f_norm, f_t, f_mvn, f_dirichlet):
        g = cpsad.grad(f)
        _, tangent = cpsad.jvp(g, (1.1,), (1.0,))
        assert tangent == pytest.approx(near(g, 1.1, 1e-5), rel=1e-5, abs=1e-7)


# ----------------------------------------------------------------------------- likelihoods


def gaussian_nll(loc, scale, x):
    return -np.sum(stats.norm.logpdf(x, loc=loc, scale=scale))


def student_nll(loc, scale, df, x):
    return -np.sum(stats.t.logpdf(x, df, loc, scale))


def test_the_gradient_of_a_gaussian_likelihood_is_the_textbook_one():
    loc, scale, n = 0.4, 1.3, len(DATA)
    d_loc, d_scale = cpsad.grad(gaussian_nll, argnums=(0, 1))(loc, scale, DATA)
    assert d_loc == pytest.approx(-np.sum(DATA - loc) / scale**2, rel=1e-12)
    assert d_scale == pytest.approx(n / scale - np.sum((DATA - loc) ** 2) / scale**3, rel=1e-12)
    assert d_loc == pytest.approx(near(lambda m: gaussian_nll(m, scale, DATA), loc, 1e-6), rel=1e-7)


def test_the_gradient_vanishes_at_the_maximum_likelihood_estimate():
    d = cpsad.grad(gaussian_nll, argnums=(0, 1))(np.mean(DATA), np.std(DATA), DATA)
    np.testing.assert_allclose(d, [0.0, 0.0], atol=1e-12)


def test_the_hessian_of_a_gaussian_likelihood_is_the_textbook_one():
    def nll(theta):
        return gaussian_nll(theta[0], theta[1], DATA)

    loc, scale, n = 0.4, 1.3, len(DATA)
    r = DATA - loc
    expected = np.array(
        [
            [n / scale**2, 2 * np.sum(r) / scale**3],
            [2 * np.sum(r) / scale**3, -n / scale**2 + 3 * np.sum(r * r) / scale**4],
        ]
    )
    np.testing.assert_allclose(cpsad.hessian(nll)(np.array([loc, scale])), expected, rtol=1e-12)


def test_a_student_t_likelihood_against_differences_and_autograd():
    import autograd.scipy.stats as astats

    args = (0.2, 0.9, 3.5)
    ours = cpsad.grad(student_nll, argnums=(0, 1, 2))(*args, DATA)
    for i in range(3):

        def along(v, i=i):
            moved = list(args)
            moved[i] = v
            return student_nll(*moved, DATA)

        assert ours[i] == pytest.approx(near(along, args[i], 1e-6), rel=1e-7)

    def theirs(loc, scale, df):
        return -autograd.numpy.sum(astats.t.logpdf(DATA, df, loc, scale))

    expected = [autograd.grad(theirs, i)(*args) for i in range(3)]
    np.testing.assert_allclose(ours, expected, rtol=1e-10)


def test_a_poisson_regression():
    """``log mu = X w``: the gradient of the negative log likelihood is ``X^T (mu - k)``."""
    X = np.array([[1.0, 0.2], [1.0, -0.7], [1.0, 1.4], [1.0, 0.5]])
    k = np.array([2, 0, 5, 1])
    w = np.array([0.3, 0.6])

    def nll(w):
        return -np.sum(stats.poisson.logpmf(k, np.exp(X @ w)))

    np.testing.assert_allclose(cpsad.grad(nll)(w), X.T @ (np.exp(X @ w) - k), rtol=1e-12)
    mu = np.exp(X @ w)
    np.testing.assert_allclose(cpsad.hessian(nll)(w), X.T @ (mu[:, None] * X), rtol=1e-10)


# ----------------------------------------------------------------------------- autograd

ORACLE = [c for c in C.CASES if c.autograd == S.VS_AUTOGRAD]


def autograd_stats(f):
    """``f`` on autograd's numpy, scipy.special and scipy.stats (tests/oracles.py rebinds the
    first two)."""
    import autograd.scipy.stats as astats

    af = autograd_version(f)
    af.__globals__["stats"] = astats
    af.__globals__["norm"] = astats.norm
    return af


def autograd_method(fn):
    """autograd's counterpart of a method of scipy.stats (``scipy.stats.norm.logpdf``)."""
    import autograd.scipy.stats as astats

    _, _, dist, method = core.lookup(fn).name.split(".")
    return getattr(getattr(astats, dist), method)


def test_the_oracle_cases_are_there():
    assert len(ORACLE) > 40
    assert {core.lookup(c.prim).name.split(".")[2] for c in ORACLE if c.prim is not None} == {
        "norm",
        "t",
        "beta",
        "gamma",
        "poisson",
        "dirichlet",
        "multivariate_normal",
    }


@pytest.mark.parametrize("case", ORACLE, ids=[c.id for c in ORACLE])
def test_autograd_scipy_stats(case):
    """autograd's vjp of the same wrapper, with the same random cotangent."""
    args = case.diff_args()
    value, pullback = cpsad.vjp(case.fn, *args, **case.fn_kwargs)
    c = _random_like(value, np.random.default_rng(1))
    kwargs = dict(case.fn_kwargs)
    if "fn" in kwargs:
        kwargs["fn"] = autograd_method(kwargs["fn"])
    vjp, theirs_value = autograd.make_vjp(autograd_stats(case.fn), tuple(range(len(args))))(
        *args, **kwargs
    )
    np.testing.assert_allclose(theirs_value, value, rtol=1e-12)
    for ours, theirs in zip(pullback(c), vjp(c)):
        np.testing.assert_allclose(ours, theirs, rtol=1e-6, atol=1e-9)


# ----------------------------------------------------------------------------- edges


def test_bessel_derivatives_at_zero_are_finite():
    assert cpsad.grad(special.i1)(0.0) == pytest.approx(0.5, rel=1e-15)
    assert cpsad.grad(special.i0)(0.0) == 0.0
    assert cpsad.grad(cpsad.grad(special.i1))(0.0) == pytest.approx(0.0, abs=1e-15)
    # i1e is smooth at 0 but for exp(-|x|): its one-sided slopes are 1/2 each way, and the
    # rule's sign(0) = 0 gives that
    assert cpsad.grad(special.i1e)(0.0) == pytest.approx(0.5, rel=1e-15)
    # i0e has a kink there (slopes -1 and 1): the rule gives the mean, 0
    assert cpsad.grad(special.i0e)(0.0) == 0.0


def test_i1_derivative_is_i0_minus_i1_over_x():
    x = np.array([0.3, 1.7, -2.4, 8.0])
    _, pullback = cpsad.vjp(special.i1, x)
    (got,) = pullback(np.ones(4))
    np.testing.assert_allclose(got, special.i0(x) - special.i1(x) / x, rtol=1e-12)


def test_poisson_log_mass_off_the_support_has_a_zero_gradient():
    g = cpsad.grad(lambda mu: np.sum(stats.poisson.logpmf(np.array([-1, 2, 1.5]), mu)))(1.3)
    assert g == pytest.approx(2 / 1.3 - 1.0)


def test_the_log_cdf_far_in_the_tail_is_finite():
    g = cpsad.grad(lambda x: stats.norm.logcdf(x))(-40.0)
    assert g == pytest.approx(40.0, rel=1e-3)  # the inverse Mills ratio ~ -x


def test_the_labels_are_how_users_write_them():
    assert core.lookup(stats.norm.logpdf).name == "scipy.stats.norm.logpdf"
    assert core.lookup(stats.t.cdf).name == "scipy.stats.t.cdf"
    assert core.lookup(stats.poisson.logpmf).name == "scipy.stats.poisson.logpmf"
    assert core.lookup(stats.dirichlet.pdf).name == "scipy.stats.dirichlet.pdf"
    assert core.lookup(stats.multivariate_normal.logpdf).name == (
        "scipy.stats.multivariate_normal.logpdf"
    )
    assert core.lookup(special.ive).name == "scipy.special.ive"


# ----------------------------------------------------------------------------- refused


def t_cdf_in_df(df):
    return stats.t.cdf(0.3, df)


def beta_cdf_in_a(a):
    return stats.beta.cdf(0.3, a, 2.0)


def gamma_cdf_in_a(a):
    return stats.gamma.cdf(0.3, a)


@pytest.mark.parametrize(
    "f, label",
    [
        (t_cdf_in_df, "`stats.t.cdf` has no derivative with respect to its argument `df`"),
        (beta_cdf_in_a, "`stats.beta.cdf` has no derivative with respect to its argument `a`"),
        (gamma_cdf_in_a, "`stats.gamma.cdf` has no derivative with respect to its argument `a`"),
    ],
)
def test_a_shape_parameter_of_a_distribution_function_is_refused(f, label):
    """(Named as the call is written; tests/test_scipy_stats.py checks the rule's own label.)"""
    with pytest.raises(cpsad.TransformError, match=label):
        cpsad.grad(f)(2.5)
    with pytest.raises(cpsad.TransformError, match=label):
        cpsad.jvp(f, (2.5,), (1.0,))


def poisson_in_k(k):
    return stats.poisson.logpmf(k, 1.5)


def test_poisson_counts_are_discrete():
    # a count: no derivative, no error (as an index is)
    assert cpsad.grad(poisson_in_k)(2.0) == 0.0


def singular(x):
    return stats.multivariate_normal.logpdf(x, np.zeros(2), np.eye(2), allow_singular=True)


def scalar_cov(x):
    return stats.multivariate_normal.logpdf(x, np.zeros(2), 2.0)


def fewer_entries(x):
    return stats.dirichlet.logpdf(x, np.array([1.5, 2.0, 3.0]))


@pytest.mark.parametrize(
    "f, x, match",
    [
        (singular, np.array([0.1, 0.2]), "allow_singular=True"),
        (scalar_cov, np.array([0.1, 0.2]), "not a \\(d, d\\) matrix"),
        (fewer_entries, np.array([0.2, 0.3]), "one entry fewer"),
    ],
)
def test_options_the_rules_do_not_compute_are_refused(f, x, match):
    f(x)  # scipy computes them
    with pytest.raises(TypeError, match=match):
        cpsad.grad(f)(x)
    with pytest.raises(TypeError, match=match):
        cpsad.jvp(f, (x,), (np.ones_like(x),))


def extra_argument(x):
    return stats.norm.logpdf(x, 0.0, 1.0, 2.0)


def unknown_keyword(x):
    return stats.t.logpdf(x, df=3.0, moment=2)


@pytest.mark.parametrize("f", [extra_argument, unknown_keyword])
def test_a_call_the_rule_does_not_list_is_refused(f):
    with pytest.raises(cpsad.TransformError, match="does not match"):
        cpsad.grad(f)(0.3)


def frozen_with_differentiable_parameters(scale):
    return stats.norm(0.0, scale).logpdf(0.3)


FROZEN = stats.norm(0.5, 1.3)


def frozen(x):
    return FROZEN.logpdf(x)


def frozen_made_here(x):
    return stats.norm(0.5, 1.3).logpdf(x)


@pytest.mark.parametrize("f", [frozen_with_differentiable_parameters, frozen, frozen_made_here])
def test_frozen_distributions_are_refused_not_wrong(f):
    with pytest.raises((cpsad.TransformError, TypeError), match="no derivative rule"):
        cpsad.grad(f)(0.7)
