"""Rules of ``scipy.stats``: the densities, mass functions and distribution functions of the
distributions ``autograd.scipy.stats`` has -- ``norm``, ``t``, ``beta``, ``gamma``, ``poisson``,
``dirichlet`` and ``multivariate_normal``.

Optional, as scipy_special.py is: registered when scipy is importable. A rule belongs to the
method of scipy's own distribution object, ``scipy.stats.norm.logpdf`` (a bound method: a new one
at every attribute lookup, equal to the others, so the table finds it however the code spells
it -- ``norm.logpdf`` after ``from scipy.stats import norm``, ``stats.norm.logpdf``), with the
parameters scipy takes, positional or by keyword: ``loc`` and ``scale`` for the continuous
distributions, ``loc`` (a shift, discrete) for ``poisson``. Each rule is one expression of
functions that have rules -- numpy's, scipy.special's, these methods themselves (the derivative
of ``norm.cdf`` is ``norm.pdf``) -- so emitted code is differentiated again (second order).

With ``y = (x - loc) / scale`` and ``s`` the derivative of the standard log density in ``y``, the
derivatives in ``x``, ``loc`` and ``scale`` are ``s / scale``, ``-s / scale`` and
``-(s y + 1) / scale``; a density's are its log density's times ``ans``; a distribution
function's are the density, ``-density`` and ``-density * y`` (``sf``: the opposite signs; the
log forms: divided by the function, in the log domain, ``exp(logpdf - ans)``).

No derivative, refused when a differentiable value reaches them (a ``TransformError`` at the
call, never a silent zero): the shape parameters of the distribution functions (``t.cdf`` in
``df``, ``beta.cdf`` in ``a`` and ``b``, ``gamma.cdf`` in ``a``: derivatives of incomplete beta
and gamma functions in their parameters, which have no closed form with functions that have
rules). Discrete: ``poisson``'s ``k`` and ``loc``. Refused with a ``TypeError`` when the rule
runs: ``multivariate_normal``'s ``allow_singular=True`` and a ``cov`` that is not a ``(d, d)``
matrix (a scalar or a vector of variances), ``dirichlet``'s ``x`` of one entry fewer than
``alpha`` (scipy completes it). A call passing what a rule does not list is a ``TransformError``
(its signature), and frozen distributions (``norm(0.0, 1.0).logpdf(x)``) have no rules: their
methods are not these, so a differentiable value reaching them is an error, not a guess.

``multivariate_normal``'s adjoint in ``cov`` is symmetric (autograd's): the derivative along
symmetric directions, the ones a covariance moves in (scipy reads one triangle of it).
"""

from __future__ import annotations

import numpy as np

try:  # scipy is optional: without it there is nothing to register
    from scipy import special, stats
except Exception:  # pragma: no cover - scipy is installed with the test extra
    # (not only ImportError: scipy.stats runs code as it is imported, which fails where a
    # package it probes for is hidden -- sys.modules["torch"] = None)
    special = stats = None

from cpsad.rules.core import DISCRETE, defjvp, defnondiff, defvjp
from cpsad.runtime import unbroadcast

# --------------------------------------------------------------------------- helpers


def mvn_refused(x, mean, cov, allow_singular):
    """What the rules of ``multivariate_normal`` refuse of a call (None: nothing)."""
    if allow_singular:
        return "allow_singular=True (a singular covariance has no gradient)"
    if np.ndim(cov) != 2:
        return "a `cov` that is not a (d, d) matrix: pass the covariance matrix itself"
    if mean is not None and np.ndim(mean) > 1:
        return "a `mean` of more than one dimension"
    return None


def dirichlet_refused(x, alpha):
    """What the rules of ``dirichlet`` refuse of a call (None: nothing)."""
    if np.shape(x)[:1] != np.shape(alpha)[:1]:
        return "`x` of one entry fewer than `alpha`: pass every entry of the point"
    return None


defnondiff(mvn_refused, dirichlet_refused)

if stats is not None:
    from cpsad.rules.scipy_linalg import accepted

    MVN = "scipy.stats.multivariate_normal"
    DIRICHLET = "scipy.stats.dirichlet"

    # ------------------------------------------------------------------ norm
    # s = -y

    def norm_logpdf_x(g, ans, x, loc=0.0, scale=1.0):
        return unbroadcast(g * (-(x - loc) / scale**2), x)

    def norm_logpdf_loc(g, ans, x, loc=0.0, scale=1.0):
        return unbroadcast(g * ((x - loc) / scale**2), loc)

    def norm_logpdf_scale(g, ans, x, loc=0.0, scale=1.0):
        return unbroadcast(g * ((((x - loc) / scale) ** 2 - 1.0) / scale), scale)

    def norm_logpdf_x_jvp(t, ans, x, loc=0.0, scale=1.0):
        return t * (-(x - loc) / scale**2)

    def norm_logpdf_loc_jvp(t, ans, x, loc=0.0, scale=1.0):
        return t * ((x - loc) / scale**2)

    def norm_logpdf_scale_jvp(t, ans, x, loc=0.0, scale=1.0):
        return t * ((((x - loc) / scale) ** 2 - 1.0) / scale)

    defvjp(stats.norm.logpdf, norm_logpdf_x, norm_logpdf_loc, norm_logpdf_scale)
    defjvp(stats.norm.logpdf, norm_logpdf_x_jvp, norm_logpdf_loc_jvp, norm_logpdf_scale_jvp)

    def norm_pdf_x(g, ans, x, loc=0.0, scale=1.0):
        return unbroadcast(g * ans * (-(x - loc) / scale**2), x)

    def norm_pdf_loc(g, ans, x, loc=0.0, scale=1.0):
        return unbroadcast(g * ans * ((x - loc) / scale**2), loc)

    def norm_pdf_scale(g, ans, x, loc=0.0, scale=1.0):
        return unbroadcast(g * ans * ((((x - loc) / scale) ** 2 - 1.0) / scale), scale)

    def norm_pdf_x_jvp(t, ans, x, loc=0.0, scale=1.0):
        return t * ans * (-(x - loc) / scale**2)

    def norm_pdf_loc_jvp(t, ans, x, loc=0.0, scale=1.0):
        return t * ans * ((x - loc) / scale**2)

    def norm_pdf_scale_jvp(t, ans, x, loc=0.0, scale=1.0):
        return t * ans * ((((x - loc) / scale) ** 2 - 1.0) / scale)

    defvjp(stats.norm.pdf, norm_pdf_x, norm_pdf_loc, norm_pdf_scale)
    defjvp(stats.norm.pdf, norm_pdf_x_jvp, norm_pdf_loc_jvp, norm_pdf_scale_jvp)

    def norm_cdf_x(g, ans, x, loc=0.0, scale=1.0):
        return unbroadcast(g * stats.norm.pdf(x, loc, scale), x)

    def norm_cdf_loc(g, ans, x, loc=0.0, scale=1.0):
        return unbroadcast(-g * stats.norm.pdf(x, loc, scale), loc)

    def norm_cdf_scale(g, ans, x, loc=0.0, scale=1.0):
        return unbroadcast(-g * stats.norm.pdf(x, loc, scale) * (x - loc) / scale, scale)

    def norm_cdf_x_jvp(t, ans, x, loc=0.0, scale=1.0):
        return t * stats.norm.pdf(x, loc, scale)

    def norm_cdf_loc_jvp(t, ans, x, loc=0.0, scale=1.0):
        return -t * stats.norm.pdf(x, loc, scale)

    def norm_cdf_scale_jvp(t, ans, x, loc=0.0, scale=1.0):
        return -t * stats.norm.pdf(x, loc, scale) * (x - loc) / scale

    defvjp(stats.norm.cdf, norm_cdf_x, norm_cdf_loc, norm_cdf_scale)
    defjvp(stats.norm.cdf, norm_cdf_x_jvp, norm_cdf_loc_jvp, norm_cdf_scale_jvp)

    def norm_logcdf_x(g, ans, x, loc=0.0, scale=1.0):
        return unbroadcast(g * np.exp(stats.norm.logpdf(x, loc, scale) - ans), x)

    def norm_logcdf_loc(g, ans, x, loc=0.0, scale=1.0):
        return unbroadcast(-g * np.exp(stats.norm.logpdf(x, loc, scale) - ans), loc)

    def norm_logcdf_scale(g, ans, x, loc=0.0, scale=1.0):
        return unbroadcast(
            -g * np.exp(stats.norm.logpdf(x, loc, scale) - ans) * (x - loc) / scale, scale
        )

    def norm_logcdf_x_jvp(t, ans, x, loc=0.0, scale=1.0):
        return t * np.exp(stats.norm.logpdf(x, loc, scale) - ans)

    def norm_logcdf_loc_jvp(t, ans, x, loc=0.0, scale=1.0):
        return -t * np.exp(stats.norm.logpdf(x, loc, scale) - ans)

    def norm_logcdf_scale_jvp(t, ans, x, loc=0.0, scale=1.0):
        return -t * np.exp(stats.norm.logpdf(x, loc, scale) - ans) * (x - loc) / scale

    defvjp(stats.norm.logcdf, norm_logcdf_x, norm_logcdf_loc, norm_logcdf_scale)
    defjvp(stats.norm.logcdf, norm_logcdf_x_jvp, norm_logcdf_loc_jvp, norm_logcdf_scale_jvp)

    def norm_sf_x(g, ans, x, loc=0.0, scale=1.0):
        return unbroadcast(-g * stats.norm.pdf(x, loc, scale), x)

    def norm_sf_loc(g, ans, x, loc=0.0, scale=1.0):
        return unbroadcast(g * stats.norm.pdf(x, loc, scale), loc)

    def norm_sf_scale(g, ans, x, loc=0.0, scale=1.0):
        return unbroadcast(g * stats.norm.pdf(x, loc, scale) * (x - loc) / scale, scale)

    def norm_sf_x_jvp(t, ans, x, loc=0.0, scale=1.0):
        return -t * stats.norm.pdf(x, loc, scale)

    def norm_sf_loc_jvp(t, ans, x, loc=0.0, scale=1.0):
        return t * stats.norm.pdf(x, loc, scale)

    def norm_sf_scale_jvp(t, ans, x, loc=0.0, scale=1.0):
        return t * stats.norm.pdf(x, loc, scale) * (x - loc) / scale

    defvjp(stats.norm.sf, norm_sf_x, norm_sf_loc, norm_sf_scale)
    defjvp(stats.norm.sf, norm_sf_x_jvp, norm_sf_loc_jvp, norm_sf_scale_jvp)

    def norm_logsf_x(g, ans, x, loc=0.0, scale=1.0):
        return unbroadcast(-g * np.exp(stats.norm.logpdf(x, loc, scale) - ans), x)

    def norm_logsf_loc(g, ans, x, loc=0.0, scale=1.0):
        return unbroadcast(g * np.exp(stats.norm.logpdf(x, loc, scale) - ans), loc)

    def norm_logsf_scale(g, ans, x, loc=0.0, scale=1.0):
        return unbroadcast(
            g * np.exp(stats.norm.logpdf(x, loc, scale) - ans) * (x - loc) / scale, scale
        )

    def norm_logsf_x_jvp(t, ans, x, loc=0.0, scale=1.0):
        return -t * np.exp(stats.norm.logpdf(x, loc, scale) - ans)

    def norm_logsf_loc_jvp(t, ans, x, loc=0.0, scale=1.0):
        return t * np.exp(stats.norm.logpdf(x, loc, scale) - ans)

    def norm_logsf_scale_jvp(t, ans, x, loc=0.0, scale=1.0):
        return t * np.exp(stats.norm.logpdf(x, loc, scale) - ans) * (x - loc) / scale

    defvjp(stats.norm.logsf, norm_logsf_x, norm_logsf_loc, norm_logsf_scale)
    defjvp(stats.norm.logsf, norm_logsf_x_jvp, norm_logsf_loc_jvp, norm_logsf_scale_jvp)

    # ------------------------------------------------------------------ t
    # s = -(df + 1) y / (df + y^2); in df, half of (df + 1) y^2 / (df (df + y^2))
    # - log1p(y^2 / df) - 1 / df - digamma(df / 2) + digamma((df + 1) / 2)

    def t_logpdf_x(g, ans, x, df, loc=0.0, scale=1.0):
        return unbroadcast(g * (-(df + 1.0) * (x - loc) / (df * scale**2 + (x - loc) ** 2)), x)

    def t_logpdf_df(g, ans, x, df, loc=0.0, scale=1.0):
        return unbroadcast(
            g
            * (
                0.5
                * (
                    (df + 1.0) * (x - loc) ** 2 / (df * (df * scale**2 + (x - loc) ** 2))
                    - np.log1p((x - loc) ** 2 / (df * scale**2))
                    - 1.0 / df
                    - special.digamma(0.5 * df)
                    + special.digamma(0.5 * (df + 1.0))
                )
            ),
            df,
        )

    def t_logpdf_loc(g, ans, x, df, loc=0.0, scale=1.0):
        return unbroadcast(g * ((df + 1.0) * (x - loc) / (df * scale**2 + (x - loc) ** 2)), loc)

    def t_logpdf_scale(g, ans, x, df, loc=0.0, scale=1.0):
        return unbroadcast(
            g * (df * ((x - loc) ** 2 - scale**2) / (scale * (df * scale**2 + (x - loc) ** 2))),
            scale,
        )

    def t_logpdf_x_jvp(t, ans, x, df, loc=0.0, scale=1.0):
        return t * (-(df + 1.0) * (x - loc) / (df * scale**2 + (x - loc) ** 2))

    def t_logpdf_df_jvp(t, ans, x, df, loc=0.0, scale=1.0):
        return t * (
            0.5
            * (
                (df + 1.0) * (x - loc) ** 2 / (df * (df * scale**2 + (x - loc) ** 2))
                - np.log1p((x - loc) ** 2 / (df * scale**2))
                - 1.0 / df
                - special.digamma(0.5 * df)
                + special.digamma(0.5 * (df + 1.0))
            )
        )

    def t_logpdf_loc_jvp(t, ans, x, df, loc=0.0, scale=1.0):
        return t * ((df + 1.0) * (x - loc) / (df * scale**2 + (x - loc) ** 2))

    def t_logpdf_scale_jvp(t, ans, x, df, loc=0.0, scale=1.0):
        return t * (df * ((x - loc) ** 2 - scale**2) / (scale * (df * scale**2 + (x - loc) ** 2)))

    defvjp(stats.t.logpdf, t_logpdf_x, t_logpdf_df, t_logpdf_loc, t_logpdf_scale)
    defjvp(stats.t.logpdf, t_logpdf_x_jvp, t_logpdf_df_jvp, t_logpdf_loc_jvp, t_logpdf_scale_jvp)

    def t_pdf_x(g, ans, x, df, loc=0.0, scale=1.0):
        return unbroadcast(
            g * ans * (-(df + 1.0) * (x - loc) / (df * scale**2 + (x - loc) ** 2)), x
        )

    def t_pdf_df(g, ans, x, df, loc=0.0, scale=1.0):
        return unbroadcast(
            g
            * ans
            * (
                0.5
                * (
                    (df + 1.0) * (x - loc) ** 2 / (df * (df * scale**2 + (x - loc) ** 2))
                    - np.log1p((x - loc) ** 2 / (df * scale**2))
                    - 1.0 / df
                    - special.digamma(0.5 * df)
                    + special.digamma(0.5 * (df + 1.0))
                )
            ),
            df,
        )

    def t_pdf_loc(g, ans, x, df, loc=0.0, scale=1.0):
        return unbroadcast(
            g * ans * ((df + 1.0) * (x - loc) / (df * scale**2 + (x - loc) ** 2)), loc
        )

    def t_pdf_scale(g, ans, x, df, loc=0.0, scale=1.0):
        return unbroadcast(
            g
            * ans
            * (df * ((x - loc) ** 2 - scale**2) / (scale * (df * scale**2 + (x - loc) ** 2))),
            scale,
        )

    def t_pdf_x_jvp(t, ans, x, df, loc=0.0, scale=1.0):
        return t * ans * (-(df + 1.0) * (x - loc) / (df * scale**2 + (x - loc) ** 2))

    def t_pdf_df_jvp(t, ans, x, df, loc=0.0, scale=1.0):
        return (
            t
            * ans
            * (
                0.5
                * (
                    (df + 1.0) * (x - loc) ** 2 / (df * (df * scale**2 + (x - loc) ** 2))
                    - np.log1p((x - loc) ** 2 / (df * scale**2))
                    - 1.0 / df
                    - special.digamma(0.5 * df)
                    + special.digamma(0.5 * (df + 1.0))
                )
            )
        )

    def t_pdf_loc_jvp(t, ans, x, df, loc=0.0, scale=1.0):
        return t * ans * ((df + 1.0) * (x - loc) / (df * scale**2 + (x - loc) ** 2))

    def t_pdf_scale_jvp(t, ans, x, df, loc=0.0, scale=1.0):
        return (
            t
            * ans
            * (df * ((x - loc) ** 2 - scale**2) / (scale * (df * scale**2 + (x - loc) ** 2)))
        )

    defvjp(stats.t.pdf, t_pdf_x, t_pdf_df, t_pdf_loc, t_pdf_scale)
    defjvp(stats.t.pdf, t_pdf_x_jvp, t_pdf_df_jvp, t_pdf_loc_jvp, t_pdf_scale_jvp)

    def t_cdf_x(g, ans, x, df, loc=0.0, scale=1.0):
        return unbroadcast(g * stats.t.pdf(x, df, loc, scale), x)

    def t_cdf_loc(g, ans, x, df, loc=0.0, scale=1.0):
        return unbroadcast(-g * stats.t.pdf(x, df, loc, scale), loc)

    def t_cdf_scale(g, ans, x, df, loc=0.0, scale=1.0):
        return unbroadcast(-g * stats.t.pdf(x, df, loc, scale) * (x - loc) / scale, scale)

    def t_cdf_x_jvp(t, ans, x, df, loc=0.0, scale=1.0):
        return t * stats.t.pdf(x, df, loc, scale)

    def t_cdf_loc_jvp(t, ans, x, df, loc=0.0, scale=1.0):
        return -t * stats.t.pdf(x, df, loc, scale)

    def t_cdf_scale_jvp(t, ans, x, df, loc=0.0, scale=1.0):
        return -t * stats.t.pdf(x, df, loc, scale) * (x - loc) / scale

    defvjp(stats.t.cdf, t_cdf_x, None, t_cdf_loc, t_cdf_scale)
    defjvp(stats.t.cdf, t_cdf_x_jvp, None, t_cdf_loc_jvp, t_cdf_scale_jvp)

    def t_logcdf_x(g, ans, x, df, loc=0.0, scale=1.0):
        return unbroadcast(g * np.exp(stats.t.logpdf(x, df, loc, scale) - ans), x)

    def t_logcdf_loc(g, ans, x, df, loc=0.0, scale=1.0):
        return unbroadcast(-g * np.exp(stats.t.logpdf(x, df, loc, scale) - ans), loc)

    def t_logcdf_scale(g, ans, x, df, loc=0.0, scale=1.0):
        return unbroadcast(
            -g * np.exp(stats.t.logpdf(x, df, loc, scale) - ans) * (x - loc) / scale, scale
        )

    def t_logcdf_x_jvp(t, ans, x, df, loc=0.0, scale=1.0):
        return t * np.exp(stats.t.logpdf(x, df, loc, scale) - ans)

    def t_logcdf_loc_jvp(t, ans, x, df, loc=0.0, scale=1.0):
        return -t * np.exp(stats.t.logpdf(x, df, loc, scale) - ans)

    def t_logcdf_scale_jvp(t, ans, x, df, loc=0.0, scale=1.0):
        return -t * np.exp(stats.t.logpdf(x, df, loc, scale) - ans) * (x - loc) / scale

    defvjp(stats.t.logcdf, t_logcdf_x, None, t_logcdf_loc, t_logcdf_scale)
    defjvp(stats.t.logcdf, t_logcdf_x_jvp, None, t_logcdf_loc_jvp, t_logcdf_scale_jvp)

    # ------------------------------------------------------------------ beta
    # s = (a - 1) / y - (b - 1) / (1 - y); in a, log(y) - digamma(a) + digamma(a + b); in b,
    # log1p(-y) - digamma(b) + digamma(a + b)

    def beta_logpdf_x(g, ans, x, a, b, loc=0.0, scale=1.0):
        return unbroadcast(g * ((a - 1.0) / (x - loc) - (b - 1.0) / (scale - (x - loc))), x)

    def beta_logpdf_a(g, ans, x, a, b, loc=0.0, scale=1.0):
        return unbroadcast(
            g * (np.log((x - loc) / scale) - special.digamma(a) + special.digamma(a + b)), a
        )

    def beta_logpdf_b(g, ans, x, a, b, loc=0.0, scale=1.0):
        return unbroadcast(
            g * (np.log1p(-(x - loc) / scale) - special.digamma(b) + special.digamma(a + b)), b
        )

    def beta_logpdf_loc(g, ans, x, a, b, loc=0.0, scale=1.0):
        return unbroadcast(g * ((b - 1.0) / (scale - (x - loc)) - (a - 1.0) / (x - loc)), loc)

    def beta_logpdf_scale(g, ans, x, a, b, loc=0.0, scale=1.0):
        return unbroadcast(g * (((b - 1.0) * (x - loc) / (scale - (x - loc)) - a) / scale), scale)

    def beta_logpdf_x_jvp(t, ans, x, a, b, loc=0.0, scale=1.0):
        return t * ((a - 1.0) / (x - loc) - (b - 1.0) / (scale - (x - loc)))

    def beta_logpdf_a_jvp(t, ans, x, a, b, loc=0.0, scale=1.0):
        return t * (np.log((x - loc) / scale) - special.digamma(a) + special.digamma(a + b))

    def beta_logpdf_b_jvp(t, ans, x, a, b, loc=0.0, scale=1.0):
        return t * (np.log1p(-(x - loc) / scale) - special.digamma(b) + special.digamma(a + b))

    def beta_logpdf_loc_jvp(t, ans, x, a, b, loc=0.0, scale=1.0):
        return t * ((b - 1.0) / (scale - (x - loc)) - (a - 1.0) / (x - loc))

    def beta_logpdf_scale_jvp(t, ans, x, a, b, loc=0.0, scale=1.0):
        return t * (((b - 1.0) * (x - loc) / (scale - (x - loc)) - a) / scale)

    defvjp(
        stats.beta.logpdf,
        beta_logpdf_x,
        beta_logpdf_a,
        beta_logpdf_b,
        beta_logpdf_loc,
        beta_logpdf_scale,
    )
    defjvp(
        stats.beta.logpdf,
        beta_logpdf_x_jvp,
        beta_logpdf_a_jvp,
        beta_logpdf_b_jvp,
        beta_logpdf_loc_jvp,
        beta_logpdf_scale_jvp,
    )

    def beta_pdf_x(g, ans, x, a, b, loc=0.0, scale=1.0):
        return unbroadcast(g * ans * ((a - 1.0) / (x - loc) - (b - 1.0) / (scale - (x - loc))), x)

    def beta_pdf_a(g, ans, x, a, b, loc=0.0, scale=1.0):
        return unbroadcast(
            g * ans * (np.log((x - loc) / scale) - special.digamma(a) + special.digamma(a + b)), a
        )

    def beta_pdf_b(g, ans, x, a, b, loc=0.0, scale=1.0):
        return unbroadcast(
            g * ans * (np.log1p(-(x - loc) / scale) - special.digamma(b) + special.digamma(a + b)),
            b,
        )

    def beta_pdf_loc(g, ans, x, a, b, loc=0.0, scale=1.0):
        return unbroadcast(g * ans * ((b - 1.0) / (scale - (x - loc)) - (a - 1.0) / (x - loc)), loc)

    def beta_pdf_scale(g, ans, x, a, b, loc=0.0, scale=1.0):
        return unbroadcast(
            g * ans * (((b - 1.0) * (x - loc) / (scale - (x - loc)) - a) / scale), scale
        )

    def beta_pdf_x_jvp(t, ans, x, a, b, loc=0.0, scale=1.0):
        return t * ans * ((a - 1.0) / (x - loc) - (b - 1.0) / (scale - (x - loc)))

    def beta_pdf_a_jvp(t, ans, x, a, b, loc=0.0, scale=1.0):
        return t * ans * (np.log((x - loc) / scale) - special.digamma(a) + special.digamma(a + b))

    def beta_pdf_b_jvp(t, ans, x, a, b, loc=0.0, scale=1.0):
        return (
            t * ans * (np.log1p(-(x - loc) / scale) - special.digamma(b) + special.digamma(a + b))
        )

    def beta_pdf_loc_jvp(t, ans, x, a, b, loc=0.0, scale=1.0):
        return t * ans * ((b - 1.0) / (scale - (x - loc)) - (a - 1.0) / (x - loc))

    def beta_pdf_scale_jvp(t, ans, x, a, b, loc=0.0, scale=1.0):
        return t * ans * (((b - 1.0) * (x - loc) / (scale - (x - loc)) - a) / scale)

    defvjp(stats.beta.pdf, beta_pdf_x, beta_pdf_a, beta_pdf_b, beta_pdf_loc, beta_pdf_scale)
    defjvp(
        stats.beta.pdf,
        beta_pdf_x_jvp,
        beta_pdf_a_jvp,
        beta_pdf_b_jvp,
        beta_pdf_loc_jvp,
        beta_pdf_scale_jvp,
    )

    def beta_cdf_x(g, ans, x, a, b, loc=0.0, scale=1.0):
        return unbroadcast(g * stats.beta.pdf(x, a, b, loc, scale), x)

    def beta_cdf_loc(g, ans, x, a, b, loc=0.0, scale=1.0):
        return unbroadcast(-g * stats.beta.pdf(x, a, b, loc, scale), loc)

    def beta_cdf_scale(g, ans, x, a, b, loc=0.0, scale=1.0):
        return unbroadcast(-g * stats.beta.pdf(x, a, b, loc, scale) * (x - loc) / scale, scale)

    def beta_cdf_x_jvp(t, ans, x, a, b, loc=0.0, scale=1.0):
        return t * stats.beta.pdf(x, a, b, loc, scale)

    def beta_cdf_loc_jvp(t, ans, x, a, b, loc=0.0, scale=1.0):
        return -t * stats.beta.pdf(x, a, b, loc, scale)

    def beta_cdf_scale_jvp(t, ans, x, a, b, loc=0.0, scale=1.0):
        return -t * stats.beta.pdf(x, a, b, loc, scale) * (x - loc) / scale

    defvjp(stats.beta.cdf, beta_cdf_x, None, None, beta_cdf_loc, beta_cdf_scale)
    defjvp(stats.beta.cdf, beta_cdf_x_jvp, None, None, beta_cdf_loc_jvp, beta_cdf_scale_jvp)

    # ------------------------------------------------------------------ gamma
    # s = (a - 1) / y - 1; in a, log(y) - digamma(a)

    def gamma_logpdf_x(g, ans, x, a, loc=0.0, scale=1.0):
        return unbroadcast(g * ((a - 1.0) / (x - loc) - 1.0 / scale), x)

    def gamma_logpdf_a(g, ans, x, a, loc=0.0, scale=1.0):
        return unbroadcast(g * (np.log((x - loc) / scale) - special.digamma(a)), a)

    def gamma_logpdf_loc(g, ans, x, a, loc=0.0, scale=1.0):
        return unbroadcast(g * (1.0 / scale - (a - 1.0) / (x - loc)), loc)

    def gamma_logpdf_scale(g, ans, x, a, loc=0.0, scale=1.0):
        return unbroadcast(g * (((x - loc) / scale - a) / scale), scale)

    def gamma_logpdf_x_jvp(t, ans, x, a, loc=0.0, scale=1.0):
        return t * ((a - 1.0) / (x - loc) - 1.0 / scale)

    def gamma_logpdf_a_jvp(t, ans, x, a, loc=0.0, scale=1.0):
        return t * (np.log((x - loc) / scale) - special.digamma(a))

    def gamma_logpdf_loc_jvp(t, ans, x, a, loc=0.0, scale=1.0):
        return t * (1.0 / scale - (a - 1.0) / (x - loc))

    def gamma_logpdf_scale_jvp(t, ans, x, a, loc=0.0, scale=1.0):
        return t * (((x - loc) / scale - a) / scale)

    defvjp(stats.gamma.logpdf, gamma_logpdf_x, gamma_logpdf_a, gamma_logpdf_loc, gamma_logpdf_scale)
    defjvp(
        stats.gamma.logpdf,
        gamma_logpdf_x_jvp,
        gamma_logpdf_a_jvp,
        gamma_logpdf_loc_jvp,
        gamma_logpdf_scale_jvp,
    )

    def gamma_pdf_x(g, ans, x, a, loc=0.0, scale=1.0):
        return unbroadcast(g * ans * ((a - 1.0) / (x - loc) - 1.0 / scale), x)

    def gamma_pdf_a(g, ans, x, a, loc=0.0, scale=1.0):
        return unbroadcast(g * ans * (np.log((x - loc) / scale) - special.digamma(a)), a)

    def gamma_pdf_loc(g, ans, x, a, loc=0.0, scale=1.0):
        return unbroadcast(g * ans * (1.0 / scale - (a - 1.0) / (x - loc)), loc)

    def gamma_pdf_scale(g, ans, x, a, loc=0.0, scale=1.0):
        return unbroadcast(g * ans * (((x - loc) / scale - a) / scale), scale)

    def gamma_pdf_x_jvp(t, ans, x, a, loc=0.0, scale=1.0):
        return t * ans * ((a - 1.0) / (x - loc) - 1.0 / scale)

    def gamma_pdf_a_jvp(t, ans, x, a, loc=0.0, scale=1.0):
        return t * ans * (np.log((x - loc) / scale) - special.digamma(a))

    def gamma_pdf_loc_jvp(t, ans, x, a, loc=0.0, scale=1.0):
        return t * ans * (1.0 / scale - (a - 1.0) / (x - loc))

    def gamma_pdf_scale_jvp(t, ans, x, a, loc=0.0, scale=1.0):
        return t * ans * (((x - loc) / scale - a) / scale)

    defvjp(stats.gamma.pdf, gamma_pdf_x, gamma_pdf_a, gamma_pdf_loc, gamma_pdf_scale)
    defjvp(
        stats.gamma.pdf, gamma_pdf_x_jvp, gamma_pdf_a_jvp, gamma_pdf_loc_jvp, gamma_pdf_scale_jvp
    )

    def gamma_cdf_x(g, ans, x, a, loc=0.0, scale=1.0):
        return unbroadcast(g * stats.gamma.pdf(x, a, loc, scale), x)

    def gamma_cdf_loc(g, ans, x, a, loc=0.0, scale=1.0):
        return unbroadcast(-g * stats.gamma.pdf(x, a, loc, scale), loc)

    def gamma_cdf_scale(g, ans, x, a, loc=0.0, scale=1.0):
        return unbroadcast(-g * stats.gamma.pdf(x, a, loc, scale) * (x - loc) / scale, scale)

    def gamma_cdf_x_jvp(t, ans, x, a, loc=0.0, scale=1.0):
        return t * stats.gamma.pdf(x, a, loc, scale)

    def gamma_cdf_loc_jvp(t, ans, x, a, loc=0.0, scale=1.0):
        return -t * stats.gamma.pdf(x, a, loc, scale)

    def gamma_cdf_scale_jvp(t, ans, x, a, loc=0.0, scale=1.0):
        return -t * stats.gamma.pdf(x, a, loc, scale) * (x - loc) / scale

    defvjp(stats.gamma.cdf, gamma_cdf_x, None, gamma_cdf_loc, gamma_cdf_scale)
    defjvp(stats.gamma.cdf, gamma_cdf_x_jvp, None, gamma_cdf_loc_jvp, gamma_cdf_scale_jvp)

    # ------------------------------------------------------------------ poisson
    # k (a count) and loc (a shift) are discrete; in mu: (k - loc) / mu - 1 on the support (0
    # off it, where logpmf is -inf and pmf 0); cdf: -pmf at the last count it sums.

    def poisson_logpmf_mu(g, ans, k, mu, loc=0):
        return unbroadcast(g * np.where(np.isfinite(ans), (k - loc) / mu - 1.0, 0.0), mu)

    def poisson_logpmf_mu_jvp(t, ans, k, mu, loc=0):
        return t * np.where(np.isfinite(ans), (k - loc) / mu - 1.0, 0.0)

    defvjp(stats.poisson.logpmf, DISCRETE, poisson_logpmf_mu, DISCRETE)
    defjvp(stats.poisson.logpmf, None, poisson_logpmf_mu_jvp)

    def poisson_pmf_mu(g, ans, k, mu, loc=0):
        return unbroadcast(g * ans * ((k - loc) / mu - 1.0), mu)

    def poisson_pmf_mu_jvp(t, ans, k, mu, loc=0):
        return t * ans * ((k - loc) / mu - 1.0)

    defvjp(stats.poisson.pmf, DISCRETE, poisson_pmf_mu, DISCRETE)
    defjvp(stats.poisson.pmf, None, poisson_pmf_mu_jvp)

    def poisson_cdf_mu(g, ans, k, mu, loc=0):
        return unbroadcast(-g * stats.poisson.pmf(np.floor(k - loc), mu), mu)

    def poisson_cdf_mu_jvp(t, ans, k, mu, loc=0):
        return -t * stats.poisson.pmf(np.floor(k - loc), mu)

    defvjp(stats.poisson.cdf, DISCRETE, poisson_cdf_mu, DISCRETE)
    defjvp(stats.poisson.cdf, None, poisson_cdf_mu_jvp)

    # ------------------------------------------------------------------ dirichlet
    # logpdf = sum((alpha - 1) log x) - sum(gammaln(alpha)) + gammaln(sum(alpha)), the entries
    # along x's first axis (scipy's points are x[:, j]); g has the batch's shape, squeezed.

    def dirichlet_logpdf_x(g, ans, x, alpha):
        return np.reshape(g, np.shape(x)[1:]) * np.transpose(
            (alpha - 1.0)
            / np.transpose(accepted(x, None, None, DIRICHLET, dirichlet_refused(x, alpha)))
        )

    def dirichlet_logpdf_alpha(g, ans, x, alpha):
        return np.reshape(
            np.log(accepted(x, None, None, DIRICHLET, dirichlet_refused(x, alpha))),
            (np.shape(alpha)[0], -1),
        ) @ np.reshape(g, (-1,)) + np.sum(g) * (
            special.digamma(np.sum(alpha)) - special.digamma(alpha)
        )

    def dirichlet_logpdf_x_jvp(t, ans, x, alpha):
        return np.reshape(
            np.sum(
                t
                * np.transpose(
                    (alpha - 1.0)
                    / np.transpose(accepted(x, None, None, DIRICHLET, dirichlet_refused(x, alpha)))
                ),
                axis=0,
            ),
            np.shape(ans),
        )

    def dirichlet_logpdf_alpha_jvp(t, ans, x, alpha):
        return np.reshape(
            t
            @ np.reshape(
                np.log(accepted(x, None, None, DIRICHLET, dirichlet_refused(x, alpha))),
                (np.shape(alpha)[0], -1),
            )
            + np.sum(t * (special.digamma(np.sum(alpha)) - special.digamma(alpha))),
            np.shape(ans),
        )

    defvjp(stats.dirichlet.logpdf, dirichlet_logpdf_x, dirichlet_logpdf_alpha)
    defjvp(stats.dirichlet.logpdf, dirichlet_logpdf_x_jvp, dirichlet_logpdf_alpha_jvp)

    def dirichlet_pdf_x(g, ans, x, alpha):
        return np.reshape(g * ans, np.shape(x)[1:]) * np.transpose(
            (alpha - 1.0)
            / np.transpose(accepted(x, None, None, DIRICHLET, dirichlet_refused(x, alpha)))
        )

    def dirichlet_pdf_alpha(g, ans, x, alpha):
        return np.reshape(
            np.log(accepted(x, None, None, DIRICHLET, dirichlet_refused(x, alpha))),
            (np.shape(alpha)[0], -1),
        ) @ np.reshape(g * ans, (-1,)) + np.sum(g * ans) * (
            special.digamma(np.sum(alpha)) - special.digamma(alpha)
        )

    def dirichlet_pdf_x_jvp(t, ans, x, alpha):
        return ans * np.reshape(
            np.sum(
                t
                * np.transpose(
                    (alpha - 1.0)
                    / np.transpose(accepted(x, None, None, DIRICHLET, dirichlet_refused(x, alpha)))
                ),
                axis=0,
            ),
            np.shape(ans),
        )

    def dirichlet_pdf_alpha_jvp(t, ans, x, alpha):
        return ans * np.reshape(
            t
            @ np.reshape(
                np.log(accepted(x, None, None, DIRICHLET, dirichlet_refused(x, alpha))),
                (np.shape(alpha)[0], -1),
            )
            + np.sum(t * (special.digamma(np.sum(alpha)) - special.digamma(alpha))),
            np.shape(ans),
        )

    defvjp(stats.dirichlet.pdf, dirichlet_pdf_x, dirichlet_pdf_alpha)
    defjvp(stats.dirichlet.pdf, dirichlet_pdf_x_jvp, dirichlet_pdf_alpha_jvp)

    # ------------------------------------------------------------------ multivariate_normal
    # The points are the rows of x reshaped to (n, d) -- d = cov's size: x of shape (d,), (n, d),
    # (..., d), or (n,) when d is 1 -- and g has the batch's shape, squeezed. With
    # s = cov^-1 (x - mean) per point (a column of ``np.linalg.solve(cov, (x - mean)^T)``), the
    # log density's derivatives are -s in x, s in mean, (s s^T - cov^-1) / 2 in cov.

    def mvn_logpdf_x(g, ans, x, mean=None, cov=1, allow_singular=False):
        return np.reshape(
            -np.transpose(
                np.reshape(g, (-1,))
                * np.linalg.solve(
                    accepted(cov, None, None, MVN, mvn_refused(x, mean, cov, allow_singular)),
                    np.transpose(
                        np.reshape(x, (-1, np.shape(cov)[-1])) - (0.0 if mean is None else mean)
                    ),
                )
            ),
            np.shape(x),
        )

    def mvn_logpdf_mean(g, ans, x, mean=None, cov=1, allow_singular=False):
        return unbroadcast(
            np.sum(
                np.reshape(g, (-1,))
                * np.linalg.solve(
                    accepted(cov, None, None, MVN, mvn_refused(x, mean, cov, allow_singular)),
                    np.transpose(np.reshape(x, (-1, np.shape(cov)[-1])) - mean),
                ),
                axis=1,
            ),
            mean,
        )

    def mvn_logpdf_cov(g, ans, x, mean=None, cov=1, allow_singular=False):
        return 0.5 * (
            np.reshape(g, (-1,))
            * np.linalg.solve(
                accepted(cov, None, None, MVN, mvn_refused(x, mean, cov, allow_singular)),
                np.transpose(
                    np.reshape(x, (-1, np.shape(cov)[-1])) - (0.0 if mean is None else mean)
                ),
            )
            @ np.transpose(
                np.linalg.solve(
                    cov,
                    np.transpose(
                        np.reshape(x, (-1, np.shape(cov)[-1])) - (0.0 if mean is None else mean)
                    ),
                )
            )
            - np.sum(g) * np.linalg.inv(cov)
        )

    def mvn_logpdf_x_jvp(t, ans, x, mean=None, cov=1, allow_singular=False):
        return np.reshape(
            -np.sum(
                np.transpose(
                    np.linalg.solve(
                        accepted(cov, None, None, MVN, mvn_refused(x, mean, cov, allow_singular)),
                        np.transpose(
                            np.reshape(x, (-1, np.shape(cov)[-1])) - (0.0 if mean is None else mean)
                        ),
                    )
                )
                * np.reshape(t, (-1, np.shape(cov)[-1])),
                axis=1,
            ),
            np.shape(ans),
        )

    def mvn_logpdf_mean_jvp(t, ans, x, mean=None, cov=1, allow_singular=False):
        return np.reshape(
            np.sum(
                t
                * np.transpose(
                    np.linalg.solve(
                        accepted(cov, None, None, MVN, mvn_refused(x, mean, cov, allow_singular)),
                        np.transpose(np.reshape(x, (-1, np.shape(cov)[-1])) - mean),
                    )
                ),
                axis=1,
            ),
            np.shape(ans),
        )

    def mvn_logpdf_cov_jvp(t, ans, x, mean=None, cov=1, allow_singular=False):
        return np.reshape(
            0.5
            * (
                np.sum(
                    np.linalg.solve(
                        accepted(cov, None, None, MVN, mvn_refused(x, mean, cov, allow_singular)),
                        np.transpose(
                            np.reshape(x, (-1, np.shape(cov)[-1])) - (0.0 if mean is None else mean)
                        ),
                    )
                    * (
                        t
                        @ np.linalg.solve(
                            cov,
                            np.transpose(
                                np.reshape(x, (-1, np.shape(cov)[-1]))
                                - (0.0 if mean is None else mean)
                            ),
                        )
                    ),
                    axis=0,
                )
                - np.trace(np.linalg.solve(cov, t))
            ),
            np.shape(ans),
        )

    defvjp(
        stats.multivariate_normal.logpdf, mvn_logpdf_x, mvn_logpdf_mean, mvn_logpdf_cov, DISCRETE
    )
    defjvp(
        stats.multivariate_normal.logpdf, mvn_logpdf_x_jvp, mvn_logpdf_mean_jvp, mvn_logpdf_cov_jvp
    )

    def mvn_pdf_x(g, ans, x, mean=None, cov=1, allow_singular=False):
        return np.reshape(
            -np.transpose(
                np.reshape(g * ans, (-1,))
                * np.linalg.solve(
                    accepted(cov, None, None, MVN, mvn_refused(x, mean, cov, allow_singular)),
                    np.transpose(
                        np.reshape(x, (-1, np.shape(cov)[-1])) - (0.0 if mean is None else mean)
                    ),
                )
            ),
            np.shape(x),
        )

    def mvn_pdf_mean(g, ans, x, mean=None, cov=1, allow_singular=False):
        return unbroadcast(
            np.sum(
                np.reshape(g * ans, (-1,))
                * np.linalg.solve(
                    accepted(cov, None, None, MVN, mvn_refused(x, mean, cov, allow_singular)),
                    np.transpose(np.reshape(x, (-1, np.shape(cov)[-1])) - mean),
                ),
                axis=1,
            ),
            mean,
        )

    def mvn_pdf_cov(g, ans, x, mean=None, cov=1, allow_singular=False):
        return 0.5 * (
            np.reshape(g * ans, (-1,))
            * np.linalg.solve(
                accepted(cov, None, None, MVN, mvn_refused(x, mean, cov, allow_singular)),
                np.transpose(
                    np.reshape(x, (-1, np.shape(cov)[-1])) - (0.0 if mean is None else mean)
                ),
            )
            @ np.transpose(
                np.linalg.solve(
                    cov,
                    np.transpose(
                        np.reshape(x, (-1, np.shape(cov)[-1])) - (0.0 if mean is None else mean)
                    ),
                )
            )
            - np.sum(g * ans) * np.linalg.inv(cov)
        )

    def mvn_pdf_x_jvp(t, ans, x, mean=None, cov=1, allow_singular=False):
        return ans * np.reshape(
            -np.sum(
                np.transpose(
                    np.linalg.solve(
                        accepted(cov, None, None, MVN, mvn_refused(x, mean, cov, allow_singular)),
                        np.transpose(
                            np.reshape(x, (-1, np.shape(cov)[-1])) - (0.0 if mean is None else mean)
                        ),
                    )
                )
                * np.reshape(t, (-1, np.shape(cov)[-1])),
                axis=1,
            ),
            np.shape(ans),
        )

    def mvn_pdf_mean_jvp(t, ans, x, mean=None, cov=1, allow_singular=False):
        return ans * np.reshape(
            np.sum(
                t
                * np.transpose(
                    np.linalg.solve(
                        accepted(cov, None, None, MVN, mvn_refused(x, mean, cov, allow_singular)),
                        np.transpose(np.reshape(x, (-1, np.shape(cov)[-1])) - mean),
                    )
                ),
                axis=1,
            ),
            np.shape(ans),
        )

    def mvn_pdf_cov_jvp(t, ans, x, mean=None, cov=1, allow_singular=False):
        return ans * np.reshape(
            0.5
            * (
                np.sum(
                    np.linalg.solve(
                        accepted(cov, None, None, MVN, mvn_refused(x, mean, cov, allow_singular)),
                        np.transpose(
                            np.reshape(x, (-1, np.shape(cov)[-1])) - (0.0 if mean is None else mean)
                        ),
                    )
                    * (
                        t
                        @ np.linalg.solve(
                            cov,
                            np.transpose(
                                np.reshape(x, (-1, np.shape(cov)[-1]))
                                - (0.0 if mean is None else mean)
                            ),
                        )
                    ),
                    axis=0,
                )
                - np.trace(np.linalg.solve(cov, t))
            ),
            np.shape(ans),
        )

    defvjp(stats.multivariate_normal.pdf, mvn_pdf_x, mvn_pdf_mean, mvn_pdf_cov, DISCRETE)
    defjvp(stats.multivariate_normal.pdf, mvn_pdf_x_jvp, mvn_pdf_mean_jvp, mvn_pdf_cov_jvp)
