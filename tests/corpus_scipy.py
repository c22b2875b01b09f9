"""Cases for the rules of ``scipy.special`` (cpsad/rules/scipy_special.py): each rule against
central differences with random cotangents, end to end in reverse and forward mode, and against
autograd's ``autograd.scipy.special`` where it has the function (tests/oracles.py binds
``special`` to it). Importing this module adds them to ``corpus_rules.CASES``; without scipy it
adds none."""

from __future__ import annotations

import numpy as np

from tests.corpus_rules import case, end_to_end, u

try:
    from scipy import special
except ImportError:  # pragma: no cover - scipy is in the test extra
    special = None

NO_AUTOGRAD = "autograd.scipy.special has no such function"


def positive(*shape):
    return u(*shape, lo=0.3, hi=2.5)


def unit_open(*shape):
    return u(*shape, lo=0.05, hi=0.95)


if special is not None:
    UNARY = [
        (special.gammaln, positive, None),
        (special.digamma, positive, None),
        (special.gamma, positive, None),
        (special.erf, u, None),
        (special.erfc, u, None),
        (special.erfinv, lambda *s: u(*s, lo=-0.9, hi=0.9), None),
        (special.expit, u, None),
        (special.logit, unit_open, None),
        (special.ndtr, u, NO_AUTOGRAD),
        (special.ndtri, unit_open, NO_AUTOGRAD),
        (special.log_ndtr, u, NO_AUTOGRAD),
    ]

    def unary(x, fn):
        return fn(x)

    for fn, make, ag in UNARY:
        for shape in ((), (3,), (2, 3)):
            case(unary, fn, make(*shape), fn_kw={"fn": fn}, autograd=ag)

    def polygamma(x, n):
        return special.polygamma(n, x)

    for n in (0, 1, 2):
        case(polygamma, special.polygamma, n, positive(3), wrt=1, fn_kw={"n": n})

    def two(a, b, fn):
        return fn(a, b)

    for fn, ag in ((special.beta, None), (special.betaln, None)):
        case(two, fn, positive(3), positive(3), wrt=(0, 1), fn_kw={"fn": fn}, autograd=ag)
    for fn in (special.xlogy, special.xlog1py):
        case(two, fn, u(3), positive(3), wrt=(0, 1), fn_kw={"fn": fn}, autograd=NO_AUTOGRAD)

    def logsumexp(a, axis=None, keepdims=False):
        return special.logsumexp(a, axis=axis, keepdims=keepdims)

    for axis, keepdims in ((None, False), (0, False), (1, True), ((0, 1), False)):
        case(
            logsumexp,
            special.logsumexp,
            u(2, 3),
            kw={"axis": axis, "keepdims": keepdims},
            autograd=NO_AUTOGRAD if keepdims or isinstance(axis, tuple) else None,
        )

    def logsumexp_b(a, b, axis=None):
        return special.logsumexp(a, axis=axis, b=b)

    case(
        logsumexp_b,
        special.logsumexp,
        u(2, 3),
        None,
        positive(2, 3),
        wrt=(0, 2),
        fn_kw={"axis": None},
        autograd=NO_AUTOGRAD,
    )
    case(
        logsumexp_b,
        special.logsumexp,
        u(2, 3),
        1,
        positive(2, 3),
        wrt=(0, 2),
        fn_kw={"axis": 1},
        autograd=NO_AUTOGRAD,
    )

    def softmax(x, axis=None):
        return special.softmax(x, axis=axis)

    def log_softmax(x, axis=None):
        return special.log_softmax(x, axis=axis)

    for axis in (None, 0, -1):
        case(softmax, special.softmax, u(2, 3), kw={"axis": axis}, autograd=NO_AUTOGRAD)
        case(log_softmax, special.log_softmax, u(2, 3), kw={"axis": axis}, autograd=NO_AUTOGRAD)

    def gaussian_mixture_nll(x, means, logits):
        """A loss that uses several of them together."""
        log_w = special.log_softmax(logits)
        d = x[:, None] - means[None, :]
        comp = -0.5 * d * d - 0.5 * np.log(2 * np.pi)
        return -np.sum(special.logsumexp(comp + log_w, axis=1))

    end_to_end(gaussian_mixture_nll, u(5), u(3), u(3), autograd=NO_AUTOGRAD)

    def beta_log_density(x, a, b):
        return np.sum(
            special.xlogy(a - 1.0, x) + special.xlog1py(b - 1.0, -x) - special.betaln(a, b)
        )

    end_to_end(beta_log_density, unit_open(4), positive(), positive(), autograd=NO_AUTOGRAD)

    from cpsad.rules.scipy_special import polygamma_of

    def polygamma_of_(x, n):
        return polygamma_of(n, x)

    for n in (1, 2):
        case(
            polygamma_of_, polygamma_of, n, positive(3), wrt=1, fn_kw={"n": n}, autograd=NO_AUTOGRAD
        )
