"""Rules of ``scipy.special``: the special functions statistics and machine learning use.

Optional, as ``autograd.scipy`` is: registered when scipy is importable (``pip install
cpsad[test]`` installs it). Each rule is written with functions that have rules themselves --
numpy's, and these -- so the emitted code is differentiated again (second order): the derivative
of ``digamma`` is ``polygamma(1, x)``, whose derivative is ``polygamma(2, x)``, and so on.

Where a function is not differentiable (``polygamma``'s order ``n``, a count; the order ``v`` of
the Bessel functions ``iv`` and ``ive``) its parameter is ``DISCRETE``; ``logsumexp`` and
``softmax`` take ``axis`` (and ``logsumexp`` ``b`` and ``keepdims``) as numpy's reductions do;
``return_sign=True`` is refused by the rule's signature.
"""

from __future__ import annotations

import numpy as np

try:  # scipy is optional: without it there is nothing to register
    from scipy import special
except ImportError:  # pragma: no cover - scipy is installed with the test extra
    special = None

from cpsad.rules.core import DISCRETE, broadcast_like, defjvp, defvjp
from cpsad.rules.reductions import expand
from cpsad.runtime import unbroadcast

# (Python floats: a float32 argument's derivative stays float32, where numpy's float64 scalars
# would promote it)
SQRT_PI = float(np.sqrt(np.pi))
SQRT_2PI = float(np.sqrt(2.0 * np.pi))

if special is not None:
    # ------------------------------------------------------------------ gamma and kin

    def polygamma_of(n, x):
        """``special.polygamma(n, x)`` in ``x``'s float type (scipy's is float64 always): what
        the rules of ``digamma`` and ``polygamma`` compute, so float32 stays float32."""
        return np.asarray(special.polygamma(n, x), dtype=np.result_type(x, 1.0))[()]

    def polygamma_of_x(g, ans, n, x):
        return g * polygamma_of(n + 1, x)

    def polygamma_of_x_jvp(t, ans, n, x):
        return t * polygamma_of(n + 1, x)

    defvjp(polygamma_of, DISCRETE, polygamma_of_x)
    defjvp(polygamma_of, None, polygamma_of_x_jvp)

    def gammaln(g, ans, x):
        return g * special.digamma(x)

    def gammaln_jvp(t, ans, x):
        return t * special.digamma(x)

    defvjp(special.gammaln, gammaln)
    defjvp(special.gammaln, gammaln_jvp)

    def digamma(g, ans, x):
        return g * polygamma_of(1, x)

    def digamma_jvp(t, ans, x):
        return t * polygamma_of(1, x)

    defvjp(special.digamma, digamma)
    defjvp(special.digamma, digamma_jvp)

    def polygamma(g, ans, n, x):
        return g * polygamma_of(n + 1, x)

    def polygamma_jvp(t, ans, n, x):
        return t * polygamma_of(n + 1, x)

    defvjp(special.polygamma, DISCRETE, polygamma)
    defjvp(special.polygamma, None, polygamma_jvp)

    def gamma(g, ans, x):
        return g * ans * special.digamma(x)

    def gamma_jvp(t, ans, x):
        return t * ans * special.digamma(x)

    defvjp(special.gamma, gamma)
    defjvp(special.gamma, gamma_jvp)

    def beta_a(g, ans, a, b):
        return unbroadcast(g * ans * (special.digamma(a) - special.digamma(a + b)), a)

    def beta_b(g, ans, a, b):
        return unbroadcast(g * ans * (special.digamma(b) - special.digamma(a + b)), b)

    def beta_a_jvp(t, ans, a, b):
        return broadcast_like(t, ans) * ans * (special.digamma(a) - special.digamma(a + b))

    def beta_b_jvp(t, ans, a, b):
        return broadcast_like(t, ans) * ans * (special.digamma(b) - special.digamma(a + b))

    defvjp(special.beta, beta_a, beta_b)
    defjvp(special.beta, beta_a_jvp, beta_b_jvp)

    def betaln_a(g, ans, a, b):
        return unbroadcast(g * (special.digamma(a) - special.digamma(a + b)), a)

    def betaln_b(g, ans, a, b):
        return unbroadcast(g * (special.digamma(b) - special.digamma(a + b)), b)

    def betaln_a_jvp(t, ans, a, b):
        return broadcast_like(t, ans) * (special.digamma(a) - special.digamma(a + b))

    def betaln_b_jvp(t, ans, a, b):
        return broadcast_like(t, ans) * (special.digamma(b) - special.digamma(a + b))

    defvjp(special.betaln, betaln_a, betaln_b)
    defjvp(special.betaln, betaln_a_jvp, betaln_b_jvp)

    # ------------------------------------------------------------------ modified Bessel functions

    # ``I_v' = (I_{v-1} + I_{v+1}) / 2`` for every real order ``v`` (a recurrence, so no ``1 / x``
    # and no NaN at 0: ``i1'(0) = 1 / 2``); the exponentially scaled ``ive = iv exp(-|x|)``
    # subtracts ``sign(x) ive`` (its kink at 0 is ``i0e``'s: ``np.sign(0)`` gives the mean slope).

    def i0(g, ans, x):
        return g * special.i1(x)

    def i0_jvp(t, ans, x):
        return t * special.i1(x)

    defvjp(special.i0, i0)
    defjvp(special.i0, i0_jvp)

    def i1(g, ans, x):
        return g * 0.5 * (special.i0(x) + special.iv(2, x))

    def i1_jvp(t, ans, x):
        return t * 0.5 * (special.i0(x) + special.iv(2, x))

    defvjp(special.i1, i1)
    defjvp(special.i1, i1_jvp)

    def iv_x(g, ans, v, x):
        return unbroadcast(g * 0.5 * (special.iv(v - 1, x) + special.iv(v + 1, x)), x)

    def iv_x_jvp(t, ans, v, x):
        return t * 0.5 * (special.iv(v - 1, x) + special.iv(v + 1, x))

    defvjp(special.iv, DISCRETE, iv_x)
    defjvp(special.iv, None, iv_x_jvp)

    def ive_x(g, ans, v, x):
        return unbroadcast(
            g * (0.5 * (special.ive(v - 1, x) + special.ive(v + 1, x)) - np.sign(x) * ans), x
        )

    def ive_x_jvp(t, ans, v, x):
        return t * (0.5 * (special.ive(v - 1, x) + special.ive(v + 1, x)) - np.sign(x) * ans)

    defvjp(special.ive, DISCRETE, ive_x)
    defjvp(special.ive, None, ive_x_jvp)

    def i0e(g, ans, x):
        return g * (special.i1e(x) - np.sign(x) * ans)

    def i0e_jvp(t, ans, x):
        return t * (special.i1e(x) - np.sign(x) * ans)

    defvjp(special.i0e, i0e)
    defjvp(special.i0e, i0e_jvp)

    def i1e(g, ans, x):
        return g * (0.5 * (special.i0e(x) + special.ive(2, x)) - np.sign(x) * ans)

    def i1e_jvp(t, ans, x):
        return t * (0.5 * (special.i0e(x) + special.ive(2, x)) - np.sign(x) * ans)

    defvjp(special.i1e, i1e)
    defjvp(special.i1e, i1e_jvp)

    # ------------------------------------------------------------------ the error function

    def erf(g, ans, x):
        return g * (2.0 / SQRT_PI) * np.exp(-(x * x))

    def erf_jvp(t, ans, x):
        return t * (2.0 / SQRT_PI) * np.exp(-(x * x))

    defvjp(special.erf, erf)
    defjvp(special.erf, erf_jvp)

    def erfc(g, ans, x):
        return -g * (2.0 / SQRT_PI) * np.exp(-(x * x))

    def erfc_jvp(t, ans, x):
        return -t * (2.0 / SQRT_PI) * np.exp(-(x * x))

    defvjp(special.erfc, erfc)
    defjvp(special.erfc, erfc_jvp)

    def erfinv(g, ans, x):
        """``x = erf(y)``: ``dy/dx = 1 / erf'(y) = sqrt(pi) / 2 exp(y^2)``."""
        return g * (SQRT_PI / 2.0) * np.exp(ans * ans)

    def erfinv_jvp(t, ans, x):
        return t * (SQRT_PI / 2.0) * np.exp(ans * ans)

    defvjp(special.erfinv, erfinv)
    defjvp(special.erfinv, erfinv_jvp)

    def ndtr(g, ans, x):
        return g * np.exp(-0.5 * x * x) / SQRT_2PI

    def ndtr_jvp(t, ans, x):
        return t * np.exp(-0.5 * x * x) / SQRT_2PI

    defvjp(special.ndtr, ndtr)
    defjvp(special.ndtr, ndtr_jvp)

    def ndtri(g, ans, x):
        """The inverse of ``ndtr``: ``1 / ndtr'(ans)``."""
        return g * SQRT_2PI * np.exp(0.5 * ans * ans)

    def ndtri_jvp(t, ans, x):
        return t * SQRT_2PI * np.exp(0.5 * ans * ans)

    defvjp(special.ndtri, ndtri)
    defjvp(special.ndtri, ndtri_jvp)

    def log_ndtr(g, ans, x):
        """``ndtr'(x) / ndtr(x) = exp(-x^2 / 2 - log_ndtr(x)) / sqrt(2 pi)``, in the log domain
        (far in the lower tail ndtr(x) underflows where this stays finite)."""
        return g * np.exp(-0.5 * x * x - ans) / SQRT_2PI

    def log_ndtr_jvp(t, ans, x):
        return t * np.exp(-0.5 * x * x - ans) / SQRT_2PI

    defvjp(special.log_ndtr, log_ndtr)
    defjvp(special.log_ndtr, log_ndtr_jvp)

    # ------------------------------------------------------------------ the logistic function

    def expit(g, ans, x):
        return g * ans * (1.0 - ans)

    def expit_jvp(t, ans, x):
        return t * ans * (1.0 - ans)

    defvjp(special.expit, expit)
    defjvp(special.expit, expit_jvp)

    def logit(g, ans, x):
        return g / (x * (1.0 - x))

    def logit_jvp(t, ans, x):
        return t / (x * (1.0 - x))

    defvjp(special.logit, logit)
    defjvp(special.logit, logit_jvp)

    def xlogy_x(g, ans, x, y):
        """``x log y`` (0 where x is 0): its derivative in x is ``log y`` everywhere."""
        return unbroadcast(g * np.log(y), x)

    def xlogy_y(g, ans, x, y):
        return unbroadcast(g * x / y, y)

    def xlogy_x_jvp(t, ans, x, y):
        return broadcast_like(t * np.log(y), ans)

    def xlogy_y_jvp(t, ans, x, y):
        return broadcast_like(t * x / y, ans)

    defvjp(special.xlogy, xlogy_x, xlogy_y)
    defjvp(special.xlogy, xlogy_x_jvp, xlogy_y_jvp)

    def xlog1py_x(g, ans, x, y):
        return unbroadcast(g * np.log1p(y), x)

    def xlog1py_y(g, ans, x, y):
        return unbroadcast(g * x / (1.0 + y), y)

    def xlog1py_x_jvp(t, ans, x, y):
        return broadcast_like(t * np.log1p(y), ans)

    def xlog1py_y_jvp(t, ans, x, y):
        return broadcast_like(t * x / (1.0 + y), ans)

    defvjp(special.xlog1py, xlog1py_x, xlog1py_y)
    defjvp(special.xlog1py, xlog1py_x_jvp, xlog1py_y_jvp)

    # ------------------------------------------------------------------ reductions

    def logsumexp_a(g, ans, a, axis=None, b=None, keepdims=False):
        """``log sum(b exp(a))``: ``b exp(a - ans)``, the adjoint spread over the reduced axes."""
        return (
            expand(g, a, axis=axis, keepdims=keepdims)
            * np.exp(a - expand(ans, a, axis=axis, keepdims=keepdims))
            * (1.0 if b is None else b)
        )

    def logsumexp_b(g, ans, a, axis=None, b=None, keepdims=False):
        return expand(g, a, axis=axis, keepdims=keepdims) * np.exp(
            a - expand(ans, a, axis=axis, keepdims=keepdims)
        )

    def logsumexp_a_jvp(t, ans, a, axis=None, b=None, keepdims=False):
        return np.sum(
            t
            * np.exp(a - expand(ans, a, axis=axis, keepdims=keepdims))
            * (1.0 if b is None else b),
            axis=axis,
            keepdims=keepdims,
        )

    def logsumexp_b_jvp(t, ans, a, axis=None, b=None, keepdims=False):
        return np.sum(
            t * np.exp(a - expand(ans, a, axis=axis, keepdims=keepdims)),
            axis=axis,
            keepdims=keepdims,
        )

    defvjp(special.logsumexp, logsumexp_a, axis=DISCRETE, b=logsumexp_b, keepdims=DISCRETE)
    defjvp(special.logsumexp, logsumexp_a_jvp, b=logsumexp_b_jvp)

    def softmax(g, ans, x, axis=None):
        """``s (g - sum(g s))`` over the axis."""
        return ans * (g - np.sum(g * ans, axis=axis, keepdims=True))

    def softmax_jvp(t, ans, x, axis=None):
        return ans * (t - np.sum(t * ans, axis=axis, keepdims=True))

    defvjp(special.softmax, softmax, axis=DISCRETE)
    defjvp(special.softmax, softmax_jvp)

    def log_softmax(g, ans, x, axis=None):
        """``g - exp(ans) sum(g)`` over the axis."""
        return g - np.exp(ans) * np.sum(g, axis=axis, keepdims=True)

    def log_softmax_jvp(t, ans, x, axis=None):
        return t - np.sum(np.exp(ans) * t, axis=axis, keepdims=True)

    defvjp(special.log_softmax, log_softmax, axis=DISCRETE)
    defjvp(special.log_softmax, log_softmax_jvp)
