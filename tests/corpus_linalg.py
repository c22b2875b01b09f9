"""Cases for the rules of ``np.linalg``'s decompositions (cpsad/rules/linalg.py: eigh, eigvalsh,
svd, qr, pinv, lstsq) and of the helpers they call (cpsad/rules/emitted/decompositions.py). Each
rule against central differences with random cotangents and directions, end to end in reverse and
forward mode, and against autograd where it has the function. Importing this module adds the cases
to ``corpus_rules.CASES``; second derivatives and refusals are in tests/test_linalg.py.

The rules are checked on the raw results, eigenvectors and singular vectors included: numpy's
choice of their signs is the same a step away. The end-to-end wrappers of vectors add functions
that do not depend on that choice (``v * v``, ``u s vh``). numpy's ``eigh`` reads one triangle of
its argument: the rule's adjoint is on that triangle (autograd's convention), so that any
direction, symmetric or not, is a direction of the function numpy computes.
"""

from __future__ import annotations

import numpy as np

from cpsad.rules import linalg as la
from tests.corpus_rules import case, end_to_end, u

NO_AUTOGRAD = "autograd has no rule for it"
HELPER = "cpsad's own helper: autograd has no rule for it"


def sym(n, batch=(), spread=1.0):
    """Symmetric matrices whose eigenvalues are apart (about ``spread``): ``q diag(w) q.T``."""
    q, _ = np.linalg.qr(u(*batch, n, n))
    w = np.arange(n) * spread + u(*batch, n, lo=-0.2, hi=0.2)
    return (q * w[..., None, :]) @ np.swapaxes(q, -1, -2)


def apart(m, n, batch=()):
    """Matrices whose singular values are apart and away from zero: ``q1 diag(s) q2``."""
    k = min(m, n)
    q1, _ = np.linalg.qr(u(*batch, m, k))
    q2, _ = np.linalg.qr(u(*batch, n, k))
    s = 1.0 + np.arange(k)[::-1] * 0.7 + u(*batch, k, lo=-0.1, hi=0.1)
    return (q1 * s[..., None, :]) @ np.swapaxes(q2, -1, -2)


# --------------------------------------------------------------------------- eigh, eigvalsh


def eigh(a, UPLO="L"):
    return np.linalg.eigh(a, UPLO)


def eigh_plain(a):
    return np.linalg.eigh(a)


def eigvalsh(a, UPLO="L"):
    return np.linalg.eigvalsh(a, UPLO)


S3, S4 = sym(3), sym(4)
case(eigh_plain, np.linalg.eigh, S4, fn_kw={})
case(eigh, np.linalg.eigh, sym(3, (2,)))
case(eigh, np.linalg.eigh, S3, kw=dict(UPLO="U"))
case(eigh, np.linalg.eigh, S3 + np.triu(u(3, 3), 1))  # numpy reads the lower triangle only
NO_EIGVALSH = "autograd has no rule for np.linalg.eigvalsh"
case(eigvalsh, np.linalg.eigvalsh, S4, autograd=NO_EIGVALSH)
case(eigvalsh, np.linalg.eigvalsh, sym(3, (2,)), kw=dict(UPLO="U"), autograd=NO_EIGVALSH)
case(
    eigvalsh,
    np.linalg.eigvalsh,
    S3 + np.tril(u(3, 3), -1),
    kw=dict(UPLO="U"),
    autograd=NO_EIGVALSH,
)


def eigh_unpacked(a):
    """The pair unpacked, the vectors through a function of their signs' choice."""
    w, v = np.linalg.eigh(a)
    return w * 2.0 + np.sum(v * v * np.arange(1.0, 4.0), axis=0)


def eigh_fields(a):
    """The named tuple's fields."""
    result = np.linalg.eigh(a, UPLO="U")
    return (
        np.sum(result.eigenvalues**2)
        + np.sum(result.eigenvectors[..., 0] * result.eigenvectors[..., 1]) ** 2
    )


def eigh_values_only(a):
    """Only the eigenvalues: finite also at repeated eigenvalues (the vectors' term left out)."""
    return np.sum(np.linalg.eigh(a)[0] ** 2)


def eigvalsh_squares(a):
    return np.sum(np.linalg.eigvalsh(a) ** 2)


FIELDS = "autograd's eigh has no named fields"
end_to_end(eigh_unpacked, S3)
end_to_end(eigh_fields, sym(3, (2,)), autograd=FIELDS)
end_to_end(eigh_values_only, S3)
# repeated eigenvalues: the sum of their squares is smooth (|a|^2 of the symmetric matrix)
end_to_end(eigh_values_only, np.eye(3))
end_to_end(eigvalsh_squares, np.eye(3) * 2.0, autograd=NO_EIGVALSH)

# --------------------------------------------------------------------------- svd


def svd(a, full_matrices=True, compute_uv=True):
    return np.linalg.svd(a, full_matrices, compute_uv)


def svd_plain(a):
    return np.linalg.svd(a)


FULL = "autograd's svd has no rule for full_matrices=True"
case(svd, np.linalg.svd, apart(4, 3), kw=dict(full_matrices=False))
case(svd, np.linalg.svd, apart(3, 5), kw=dict(full_matrices=False))
case(svd, np.linalg.svd, apart(3, 3), kw=dict(full_matrices=False))
case(svd, np.linalg.svd, apart(4, 3, (2,)), kw=dict(full_matrices=False))
case(svd, np.linalg.svd, apart(2, 4, (2,)), kw=dict(full_matrices=False))
case(svd_plain, np.linalg.svd, apart(3, 3), fn_kw={}, autograd=FULL)  # square: full is thin
case(svd, np.linalg.svd, apart(4, 4, (2,)), kw=dict(full_matrices=True), autograd=FULL)
case(svd, np.linalg.svd, apart(4, 3), kw=dict(compute_uv=False))
case(svd, np.linalg.svd, apart(3, 5, (2,)), kw=dict(compute_uv=False))


def svd_rebuilt(a):
    """``u diag(s) vh`` is ``a``: its derivative the identity, of every term of the rule."""
    u_, s, vh = np.linalg.svd(a, full_matrices=False)
    return (u_ * s[..., None, :]) @ vh


def svd_fields(a):
    """The named tuple's fields, the vectors as products of a pair (their signs cancel)."""
    r = np.linalg.svd(a, full_matrices=False)
    return r.U[..., :, 0:1] * r.Vh[..., 0:1, :] * r.S[..., 1:2, None] + r.S[..., 0:1, None]


def svd_values(a):
    return np.sum(np.linalg.svd(a, compute_uv=False) ** 3)


end_to_end(svd_rebuilt, apart(4, 3))
end_to_end(svd_rebuilt, apart(2, 4, (2,)))
end_to_end(svd_fields, apart(3, 4), autograd="autograd's svd has no named fields")
end_to_end(svd_fields, apart(5, 3, (2,)), autograd="autograd's svd has no named fields")
end_to_end(svd_values, apart(4, 3))
# repeated singular values: functions of the values alone are finite
end_to_end(svd_values, np.eye(3) * 1.5)

# --------------------------------------------------------------------------- qr


def qr(a, mode="reduced"):
    return np.linalg.qr(a, mode)


def qr_plain(a):
    return np.linalg.qr(a)


NO_QR = "autograd has no rule for np.linalg.qr"
case(qr_plain, np.linalg.qr, u(4, 3), fn_kw={}, autograd=NO_QR)
case(qr_plain, np.linalg.qr, u(3, 3) + 2 * np.eye(3), fn_kw={}, autograd=NO_QR)
case(qr, np.linalg.qr, u(2, 5, 3), kw=dict(mode="reduced"), autograd=NO_QR)


def qr_fields(a):
    r = np.linalg.qr(a)
    return r.Q * np.sum(r.R**2, axis=-2)[..., None, :]


end_to_end(qr_fields, u(2, 4, 3), autograd=NO_QR)

# --------------------------------------------------------------------------- pinv, lstsq


def pinv(a):
    return np.linalg.pinv(a)


def pinv_options(a, rcond=None, hermitian=False):
    return np.linalg.pinv(a, rcond=rcond, hermitian=hermitian)


case(pinv, np.linalg.pinv, apart(4, 3), fn_kw={})
case(pinv, np.linalg.pinv, apart(3, 5), fn_kw={})
case(pinv, np.linalg.pinv, apart(3, 3), fn_kw={})
case(pinv, np.linalg.pinv, apart(2, 4, (2,)), fn_kw={})
case(
    pinv_options,
    np.linalg.pinv,
    apart(4, 2),
    kw=dict(rcond=1e-10, hermitian=False),
    autograd="autograd's pinv takes no rcond",
)

# a matrix of rank 2, and directions that keep the rank (pinv is not continuous otherwise)
A1, B1 = u(5, 2), u(2, 4)
LOW = A1 @ B1


def left_factor(i, v):
    return v[..., :, :2] @ B1 if i == 0 else v


def right_factor(i, v):
    return A1 @ v[..., :2, :] if i == 0 else v


ROUNDED = "of rank 2 in float64 only: rounded to float32, the matrix is of full rank"
case(pinv, np.linalg.pinv, LOW, fn_kw={}, direction=left_factor, float64=ROUNDED)
case(pinv, np.linalg.pinv, LOW, fn_kw={}, direction=right_factor, float64=ROUNDED)


def lstsq(a, b, rcond=None):
    return np.linalg.lstsq(a, b, rcond)


NO_LSTSQ = "autograd has no rule for np.linalg.lstsq"
for a, b in [
    (apart(5, 3), u(5)),  # residuals
    (apart(5, 3), u(5, 2)),
    (apart(3, 3), u(3)),  # no residuals
    (apart(3, 5), u(3)),  # the least norm among exact solutions
    (apart(3, 5), u(3, 2)),
]:
    case(lstsq, np.linalg.lstsq, a, b, wrt=(0, 1), autograd=NO_LSTSQ)
for b in (u(5), u(5, 3)):  # of rank 2: the least norm among the least squares
    for along in (left_factor, right_factor):
        options = dict(direction=along, autograd=NO_LSTSQ, float64=ROUNDED)
        case(lstsq, np.linalg.lstsq, LOW, b, wrt=(0, 1), **options)
case(lstsq, np.linalg.lstsq, apart(4, 2), u(4), wrt=(0, 1), kw=dict(rcond=1e-8), autograd=NO_LSTSQ)


def lstsq_fit(a, b):
    """The solution, the residuals and the singular values used; the rank as a number."""
    x, residuals, rank, s = np.linalg.lstsq(a, b)
    return np.sum(x**2) + residuals[0] * rank + np.sum(s[1:] ** 2)


end_to_end(lstsq_fit, apart(5, 3), u(5), autograd=NO_LSTSQ)

# --------------------------------------------------------------------------- eig, eigvals


def eig(a):
    return np.linalg.eig(a)


def eigvals(a):
    return np.linalg.eigvals(a)


# complex eigenvalues (and eigenvectors, each of norm 1 with its largest entry real), and real
# ones: numpy returns real arrays then
COMPLEX = np.array([[0.4, -1.3, 0.2], [1.1, 0.3, -0.5], [0.1, 0.6, 1.5]])
REAL = sym(3) + np.triu(u(3, 3), 1) * 0.3
PHASE = "autograd's eig leaves out the phase numpy gives complex eigenvectors"
NO_EIGVALS = "autograd has no rule for np.linalg.eigvals"
# (test_float32_stays_float32 compares with the rule in float64 at its cotangent cast to float64:
# of a complex result, the cast drops the cotangent's imaginary part)
IMAGINARY = "complex results: the cotangent cast to float64 loses its imaginary part"


def eigenvalues_apart(batch):
    """Real 4 x 4 matrices whose eigenvalues are 1.5, -1 and 0.3 +- 0.8j, in bases near the
    identity: a random matrix's eigenvalues may come close, where the derivative of eig grows as
    the inverse of the gap and central differences say nothing (drawn from the corpus's shared
    generator, a stack of u(2, 4, 4) once did when another corpus drew more numbers first)."""
    block = np.array([[1.5, 0, 0, 0], [0, -1.0, 0, 0], [0, 0, 0.3, -0.8], [0, 0, 0.8, 0.3]])
    bases = np.eye(4) + 0.3 * u(batch, 4, 4)
    return bases @ block @ np.linalg.inv(bases)


STACK = eigenvalues_apart(2)
case(eig, np.linalg.eig, COMPLEX, autograd=PHASE, float64=IMAGINARY)
case(eig, np.linalg.eig, REAL)
case(eig, np.linalg.eig, STACK, autograd=PHASE, float64=IMAGINARY)
case(eigvals, np.linalg.eigvals, COMPLEX, autograd=NO_EIGVALS, float64=IMAGINARY)
case(eigvals, np.linalg.eigvals, REAL, autograd=NO_EIGVALS)
case(eigvals, np.linalg.eigvals, STACK, autograd=NO_EIGVALS, float64=IMAGINARY)


def eig_moduli(a):
    """Functions of the eigenvalues and of the moduli of the eigenvectors' entries (which do
    not depend on their phase)."""
    w, v = np.linalg.eig(a)
    return np.real(w) * np.imag(w) + np.sum(np.abs(v) ** 2 * np.arange(1.0, 4.0)[:, None], axis=0)


def eig_fields(a):
    r = np.linalg.eig(a)
    return np.abs(r.eigenvalues) + np.real(r.eigenvectors[..., 0, :] * r.eigenvectors[..., 1, :])


end_to_end(eig_moduli, COMPLEX)
end_to_end(eig_moduli, REAL)
end_to_end(eig_fields, u(2, 3, 3), autograd="autograd's eig has no named fields")


# --------------------------------------------------------------------------- the helpers


def checked_(x, a, name):
    return la.checked(x, a, name)


def gaps_(x):
    return la.gaps(x)


def from_triangle_(x, UPLO="L"):
    return la.from_triangle(x, UPLO)


def to_triangle_(x, UPLO="L"):
    return la.to_triangle(x, UPLO)


def triple_like_(first, second, third, out):
    return la.triple_like(out, first, second, third)


case(checked_, la.checked, u(3, 2), u(3, 3), "np.linalg.qr", autograd=HELPER)
case(gaps_, la.gaps, np.array([0.3, -1.2, 2.0, 0.9]), autograd=HELPER)
case(gaps_, la.gaps, np.arange(6.0).reshape(2, 3) ** 2 + u(2, 3, lo=0.0, hi=0.3), autograd=HELPER)
for uplo in ("L", "U"):
    case(from_triangle_, la.from_triangle, u(2, 3, 3), uplo, autograd=HELPER)
    case(to_triangle_, la.to_triangle, u(3, 3), uplo, autograd=HELPER)
for out in (np.linalg.svd(u(3, 2), full_matrices=False), (1.0, 2.0, 0.5)):
    case(triple_like_, la.triple_like, out, u(), 0.5, u(2), wrt=(1, 2, 3), autograd=HELPER)
