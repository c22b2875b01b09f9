"""Cases for the rules of ``scipy.stats`` (cpsad/rules/scipy_stats.py) and of scipy.special's
modified Bessel functions (``i0``, ``i1``, ``iv``, ``ive``, ``i0e``, ``i1e``, in
cpsad/rules/scipy_special.py): each rule against central differences with random cotangents, end
to end in reverse and forward mode. Importing this module adds them to ``corpus_rules.CASES``;
without scipy it adds none.

The Bessel functions are compared with ``autograd.scipy.special`` (tests/oracles.py binds
``special`` to it) where it has them. The distributions are compared with
``autograd.scipy.stats`` in tests/test_scipy_stats.py (tests/oracles.py rebinds ``np`` and
``special``, not ``stats``): those cases are marked ``VS_AUTOGRAD``.
"""

from __future__ import annotations

import numpy as np

from tests.corpus_rules import case, end_to_end, spd, u

try:
    from scipy import special, stats
    from scipy.stats import norm
except ImportError:  # pragma: no cover - scipy is in the test extra
    special = stats = norm = None

NO_AUTOGRAD = "autograd.scipy has no such function"
VS_AUTOGRAD = "compared with autograd.scipy.stats in tests/test_scipy_stats.py"
NO_LOC_SCALE = "autograd's rules of this distribution ignore loc and scale"
AUTOGRAD_POSITIONAL = (
    "autograd differentiates positional arguments only, and loc and scale are keywords"
)
FLOAT64 = "scipy.stats computes in float64"


def positive(*shape):
    return u(*shape, lo=0.3, hi=2.5)


def unit_open(*shape):
    return u(*shape, lo=0.1, hi=0.9)


def simplex(k, *batch):
    """Points of the probability simplex, as scipy's dirichlet takes them: along axis 0."""
    p = u(k, *batch, lo=0.2, hi=1.0)
    return p / np.sum(p, axis=0)


def on_the_simplex(i, v):
    """A direction of argument 0 (the point) along the simplex, where scipy's dirichlet is
    defined (it refuses a point whose entries do not sum to 1); others as they are."""
    return v - np.mean(v, axis=0) if i == 0 else v


def symmetric_cov(i, v):
    """A symmetric direction of a covariance (the square argument), others as they are."""
    if np.ndim(v) == 2 and np.shape(v)[0] == np.shape(v)[1]:
        return (v + v.T) / 2
    return v


if special is not None:
    # ------------------------------------------------------------------ Bessel functions

    def scipy_bessel(x, fn):
        return fn(x)

    for fn, ag in (
        (special.i0, None),
        (special.i1, None),
        (special.i0e, NO_AUTOGRAD),
        (special.i1e, NO_AUTOGRAD),
    ):
        for shape in ((), (3,), (2, 3)):
            case(scipy_bessel, fn, u(*shape, lo=-2.5, hi=2.5), fn_kw={"fn": fn}, autograd=ag)

    def scipy_bessel_order(x, v, fn):
        return fn(v, x)

    for fn in (special.iv, special.ive):
        for v in (0, 1, 2, 2.5):
            case(scipy_bessel_order, fn, v, positive(3), wrt=1, fn_kw={"v": v, "fn": fn})
        # integer orders are defined for negative x too
        case(scipy_bessel_order, fn, 1, u(3, lo=-2.5, hi=-0.3), wrt=1, fn_kw={"v": 1, "fn": fn})
        # an order per entry, broadcast against x
        v = np.array([[0.0], [1.0]])
        case(
            scipy_bessel_order,
            fn,
            v,
            positive(3),
            wrt=1,
            fn_kw={"v": v, "fn": fn},
            autograd="autograd's rule does not sum a broadcast x back",
        )

    def scipy_bessel_energy(x):
        """A von Mises log-normalizer and its scaled forms together."""
        return np.sum(np.log(special.i0(x)) - special.i1e(x) * special.ive(2, x))

    end_to_end(scipy_bessel_energy, positive(4), autograd=NO_AUTOGRAD)

if stats is not None:
    # ------------------------------------------------------------------ norm

    def stats_norm_fn(x, loc, scale, fn):
        return fn(x, loc, scale)

    for fn in (
        stats.norm.logpdf,
        stats.norm.pdf,
        stats.norm.cdf,
        stats.norm.logcdf,
        stats.norm.sf,
        stats.norm.logsf,
    ):
        for shapes in (((), (), ()), ((3,), (), ()), ((2, 3), (3,), (2, 1))):
            xs, ls, ss = shapes
            args = (u(*xs, lo=-2.0, hi=2.0), u(*ls), positive(*ss))
            case(
                stats_norm_fn,
                fn,
                *args,
                wrt=(0, 1, 2),
                fn_kw={"fn": fn},
                float64=FLOAT64,
                autograd=VS_AUTOGRAD,
            )

    def stats_norm_logpdf_written(x, loc, scale):
        """Written as users write it: the method, its parameters by keyword."""
        return stats.norm.logpdf(x, loc=loc, scale=scale)

    case(
        stats_norm_logpdf_written,
        stats.norm.logpdf,
        u(4),
        u(4),
        positive(),
        wrt=(0, 1, 2),
        float64=FLOAT64,
        autograd=AUTOGRAD_POSITIONAL,
    )

    def stats_norm_imported(x, loc, scale):
        """``from scipy.stats import norm``, then ``norm.cdf``: loc by position, scale by name."""
        return norm.cdf(x, loc, scale=scale) * norm.sf(x, loc=loc, scale=scale)

    end_to_end(stats_norm_imported, u(3), u(), positive(), autograd=AUTOGRAD_POSITIONAL)

    def stats_norm_cdf_standard(x):
        return stats.norm.cdf(x)

    case(stats_norm_cdf_standard, stats.norm.cdf, u(3), float64=FLOAT64, autograd=VS_AUTOGRAD)

    def stats_norm_logcdf_tail(x):
        """Far in the lower tail, where the cdf underflows and the log form does not."""
        return stats.norm.logcdf(x)

    case(
        stats_norm_logcdf_tail,
        stats.norm.logcdf,
        u(3, lo=-40.0, hi=-30.0),
        float64=FLOAT64,
        autograd=VS_AUTOGRAD,
        rtol=1e-4,
    )

    # ------------------------------------------------------------------ t

    def stats_t_fn(x, df, loc, scale, fn):
        return fn(x, df, loc, scale)

    for fn in (stats.t.logpdf, stats.t.pdf):
        case(
            stats_t_fn,
            fn,
            u(3, lo=-2.0, hi=2.0),
            u(lo=1.5, hi=6.0),
            u(),
            positive(),
            wrt=(0, 1, 2, 3),
            fn_kw={"fn": fn},
            float64=FLOAT64,
            autograd=VS_AUTOGRAD,
        )
        case(
            stats_t_fn,
            fn,
            u(2, 3, lo=-2.0, hi=2.0),
            u(3, lo=1.5, hi=6.0),
            u(2, 1),
            positive(3),
            wrt=(0, 1, 2, 3),
            fn_kw={"fn": fn},
            float64=FLOAT64,
            autograd=VS_AUTOGRAD,
        )

    def stats_t_cdf(x, loc, scale, df):
        return stats.t.cdf(x, df, loc, scale)

    def stats_t_logcdf(x, loc, scale, df):
        return stats.t.logcdf(x, df, loc=loc, scale=scale)

    def stats_t_cdf_x_loc(x, loc, df):
        return stats.t.cdf(x, df, loc)

    def stats_t_logcdf_x_loc(x, loc, df):
        return stats.t.logcdf(x, df, loc)

    for wrapper, fn in ((stats_t_cdf, stats.t.cdf), (stats_t_logcdf, stats.t.logcdf)):
        case(
            wrapper,
            fn,
            u(3, lo=-2.0, hi=2.0),
            3.5,
            u(),
            positive(),
            wrt=(0, 2, 3),
            float64=FLOAT64,
            autograd="autograd's t.cdf has no derivative in scale",
        )
    for wrapper, fn in ((stats_t_cdf_x_loc, stats.t.cdf), (stats_t_logcdf_x_loc, stats.t.logcdf)):
        case(
            wrapper,
            fn,
            u(3, lo=-2.0, hi=2.0),
            3.5,
            u(),
            wrt=(0, 2),
            float64=FLOAT64,
            autograd=VS_AUTOGRAD,
        )

    # ------------------------------------------------------------------ beta

    def stats_beta_fn(x, a, b, fn):
        return fn(x, a, b)

    def stats_beta_logpdf_loc_scale(x, a, b, loc, scale):
        return stats.beta.logpdf(x, a, b, loc=loc, scale=scale)

    def stats_beta_pdf_loc_scale(x, a, b, loc, scale):
        return stats.beta.pdf(x, a, b, loc, scale=scale)

    LOC_SCALE = {
        stats.beta.logpdf: stats_beta_logpdf_loc_scale,
        stats.beta.pdf: stats_beta_pdf_loc_scale,
    }

    for fn in (stats.beta.logpdf, stats.beta.pdf):
        case(
            stats_beta_fn,
            fn,
            unit_open(3),
            positive(),
            positive(3),
            wrt=(0, 1, 2),
            fn_kw={"fn": fn},
            float64=FLOAT64,
            autograd=VS_AUTOGRAD,
        )
        loc, scale = u(lo=-0.5, hi=-0.2), u(lo=1.5, hi=2.0)
        case(
            LOC_SCALE[fn],
            fn,
            loc + scale * unit_open(3),
            positive(),
            positive(),
            loc,
            scale,
            wrt=(0, 1, 2, 3, 4),
            float64=FLOAT64,
            autograd=NO_LOC_SCALE,
        )

    def stats_beta_cdf(x, loc, scale, a, b):
        return stats.beta.cdf(x, a, b, loc, scale)

    case(
        stats_beta_cdf,
        stats.beta.cdf,
        -0.3 + 1.7 * unit_open(3),
        positive(),
        positive(),
        -0.3,
        1.7,
        wrt=(0, 3, 4),
        float64=FLOAT64,
        autograd=NO_LOC_SCALE,
    )

    def stats_beta_cdf_x(x, a, b):
        return stats.beta.cdf(x, a, b)

    case(
        stats_beta_cdf_x,
        stats.beta.cdf,
        unit_open(3),
        1.7,
        0.8,
        float64=FLOAT64,
        autograd=VS_AUTOGRAD,
    )

    # ------------------------------------------------------------------ gamma

    def stats_gamma_fn(x, a, fn):
        return fn(x, a)

    def stats_gamma_loc_scale(x, a, loc, scale, fn):
        return fn(x, a, loc, scale)

    for fn in (stats.gamma.logpdf, stats.gamma.pdf):
        case(
            stats_gamma_fn,
            fn,
            positive(3),
            u(3, lo=0.5, hi=3.0),
            wrt=(0, 1),
            fn_kw={"fn": fn},
            float64=FLOAT64,
            autograd=VS_AUTOGRAD,
        )
        case(
            stats_gamma_loc_scale,
            fn,
            positive(2, 3),
            u(lo=0.5, hi=3.0),
            u(3, lo=-0.3, hi=0.0),
            positive(2, 1),
            wrt=(0, 1, 2, 3),
            fn_kw={"fn": fn},
            float64=FLOAT64,
            autograd=NO_LOC_SCALE,
        )

    def stats_gamma_cdf(x, loc, scale, a):
        return stats.gamma.cdf(x, a, loc=loc, scale=scale)

    case(
        stats_gamma_cdf,
        stats.gamma.cdf,
        positive(3),
        1.7,
        u(lo=-0.3, hi=0.0),
        positive(),
        wrt=(0, 2, 3),
        float64=FLOAT64,
        autograd=NO_LOC_SCALE,
    )

    def stats_gamma_cdf_x(x, a):
        return stats.gamma.cdf(x, a)

    case(
        stats_gamma_cdf_x, stats.gamma.cdf, positive(3), 1.7, float64=FLOAT64, autograd=VS_AUTOGRAD
    )

    # ------------------------------------------------------------------ poisson

    def stats_poisson_fn(mu, k, fn):
        return fn(k, mu)

    def stats_poisson_loc(mu, k, loc, fn):
        return fn(k, mu, loc)

    counts = np.array([[0, 1, 3], [2, 5, 4]])
    for fn in (stats.poisson.logpmf, stats.poisson.pmf, stats.poisson.cdf):
        case(
            stats_poisson_fn,
            fn,
            counts,
            positive(3),
            wrt=1,
            fn_kw={"k": counts, "fn": fn},
            float64=FLOAT64,
            autograd=VS_AUTOGRAD,
        )
        k = np.array([0.0, 1.0, 2.5, 4.0]) if fn is stats.poisson.cdf else np.array([0.0, 4.0])
        case(
            stats_poisson_fn,
            fn,
            k,  # counts as floats (and, for the cdf, between counts)
            positive(),
            wrt=1,
            fn_kw={"k": k, "fn": fn},
            float64=FLOAT64,
            autograd=VS_AUTOGRAD,
        )
        case(
            stats_poisson_loc,
            fn,
            counts + 2,
            positive(3),
            2,
            wrt=1,
            fn_kw={"k": counts + 2, "loc": 2, "fn": fn},
            float64=FLOAT64,
            autograd=NO_LOC_SCALE,
        )

    # ------------------------------------------------------------------ dirichlet

    def stats_dirichlet_fn(x, alpha, fn):
        return fn(x, alpha)

    for fn in (stats.dirichlet.logpdf, stats.dirichlet.pdf):
        for x in (simplex(4), simplex(4, 3)):
            case(
                stats_dirichlet_fn,
                fn,
                x,
                positive(4),
                wrt=(0, 1),
                fn_kw={"fn": fn},
                direction=on_the_simplex,
                float64=FLOAT64,
                autograd=VS_AUTOGRAD if x.ndim == 1 else NO_AUTOGRAD,
            )

    # ------------------------------------------------------------------ multivariate_normal

    def stats_mvn_fn(x, mean, cov, fn):
        return fn(x, mean, cov)

    def stats_mvn_logpdf_no_mean(x, cov):
        return stats.multivariate_normal.logpdf(x, cov=cov)

    def stats_mvn_pdf_no_mean(x, cov):
        return stats.multivariate_normal.pdf(x, cov=cov)

    NO_MEAN = {
        stats.multivariate_normal.logpdf: stats_mvn_logpdf_no_mean,
        stats.multivariate_normal.pdf: stats_mvn_pdf_no_mean,
    }

    for fn in (stats.multivariate_normal.logpdf, stats.multivariate_normal.pdf):
        for x in (u(3), u(5, 3), u(2, 4, 3)):
            case(
                stats_mvn_fn,
                fn,
                x,
                u(3),
                spd(3),
                wrt=(0, 1, 2),
                fn_kw={"fn": fn},
                direction=symmetric_cov,
                float64=FLOAT64,
                autograd=VS_AUTOGRAD if x.ndim <= 2 else NO_AUTOGRAD,
            )
        case(
            NO_MEAN[fn],
            fn,
            u(5, 3),
            None,
            spd(3),
            wrt=(0, 2),
            fn_kw={},
            direction=symmetric_cov,
            float64=FLOAT64,
            autograd=NO_AUTOGRAD,
        )
        # one dimension: x of shape (n,) is n points (scipy's reading)
        case(
            stats_mvn_fn,
            fn,
            u(4),
            u(1),
            spd(1),
            wrt=(0, 1, 2),
            fn_kw={"fn": fn},
            float64=FLOAT64,
            autograd=NO_AUTOGRAD,
        )

    def stats_gaussian_and_student(x, loc, scale, df):
        """Several distributions in one loss: a robust likelihood mixing normal and t terms."""
        return -np.sum(
            stats.norm.logpdf(x, loc, scale)
            + stats.t.logpdf(x, df, loc, scale)
            + np.log(stats.norm.cdf(x, loc, 2.0 * scale))
        )

    end_to_end(
        stats_gaussian_and_student, u(5), u(), positive(), u(lo=2.0, hi=5.0), autograd=VS_AUTOGRAD
    )
