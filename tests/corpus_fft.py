"""Cases for the rules of ``np.fft`` (cpsad/rules/fft.py): real and complex inputs, each ``norm``,
``n`` (``s``) below and above the input's length, even and odd lengths of the real transforms,
non-default axes, 2-d and 3-d inputs, and the linear helpers the rules call. tests/test_rules.py
checks each rule against central finite differences with random cotangents and directions, its
tangent rule as the transpose, both end to end, in float32, and against autograd where it has the
same function and agrees on the call. Importing this module adds the cases to
``corpus_rules.CASES``; tests/test_fft.py checks second derivatives."""

from __future__ import annotations

import numpy as np

from cpsad.rules import fft as ff
from tests.corpus_rules import case as add_case
from tests.corpus_rules import end_to_end, u

NO_AUTOGRAD = "autograd has no rule for it"
HELPER = "cpsad's own helper: autograd has no rule for it"
ODD = "autograd's real FFTs refuse odd lengths"
NORMS = (None, "backward", "ortho", "forward")
# autograd's real FFTs divide by n where norm is None, and take "backward" and "forward" for "ortho"
NORM = "autograd's real FFTs know norm=None and 'ortho' only"
# tests/test_rules.py's float32 check casts the cotangent to float64 for its reference, which drops
# an imaginary part: tests/test_fft.py checks the cases of complex results in float32 instead
IMAGINARY = "complex results: the cotangent cast to float64 loses its imaginary part"


def case(fn, prim, *args, **options):
    """``corpus_rules.case``, the cases of complex results marked for the float32 check."""
    if np.iscomplexobj(prim(*args, **options.get("kw", {}))):
        options.setdefault("float64", IMAGINARY)
    return add_case(fn, prim, *args, **options)


def real_norm(norm):
    """The reason autograd is no oracle for a real FFT of this ``norm``, or None."""
    return NORM if norm in ("backward", "forward") else None


def z(*shape):
    """Complex random numbers."""
    return u(*shape) + 1j * u(*shape)


# --------------------------------------------------------------------------- wrappers


def fft_(a, n=None, axis=-1, norm=None):
    return np.fft.fft(a, n, axis, norm)


def ifft_(a, n=None, axis=-1, norm=None):
    return np.fft.ifft(a, n, axis, norm)


def rfft_(a, n=None, axis=-1, norm=None):
    return np.fft.rfft(a, n, axis, norm)


def irfft_(a, n=None, axis=-1, norm=None):
    return np.fft.irfft(a, n, axis, norm)


def hfft_(a, n=None, axis=-1, norm=None):
    return np.fft.hfft(a, n, axis, norm)


def ihfft_(a, n=None, axis=-1, norm=None):
    return np.fft.ihfft(a, n, axis, norm)


def fft2_(a, s=None, axes=(-2, -1), norm=None):
    return np.fft.fft2(a, s, axes, norm)


def ifft2_(a, s=None, axes=(-2, -1), norm=None):
    return np.fft.ifft2(a, s, axes, norm)


def rfft2_(a, s=None, axes=(-2, -1), norm=None):
    return np.fft.rfft2(a, s, axes, norm)


def irfft2_(a, s=None, axes=(-2, -1), norm=None):
    return np.fft.irfft2(a, s, axes, norm)


def fftn_(a, s=None, axes=None, norm=None):
    return np.fft.fftn(a, s, axes, norm)


def ifftn_(a, s=None, axes=None, norm=None):
    return np.fft.ifftn(a, s, axes, norm)


def rfftn_(a, s=None, axes=None, norm=None):
    return np.fft.rfftn(a, s, axes, norm)


def irfftn_(a, s=None, axes=None, norm=None):
    return np.fft.irfftn(a, s, axes, norm)


def fftshift_(x, axes=None):
    return np.fft.fftshift(x, axes)


def ifftshift_(x, axes=None):
    return np.fft.ifftshift(x, axes)


# --------------------------------------------------------------------------- complex to complex

for fn, prim in ((fft_, np.fft.fft), (ifft_, np.fft.ifft)):
    for norm in NORMS:
        case(fn, prim, u(8), kw=dict(norm=norm))
        case(fn, prim, z(3, 5), kw=dict(norm=norm))
    case(fn, prim, u(8), kw=dict(n=5))  # truncated
    case(fn, prim, u(5), kw=dict(n=8, norm="ortho"))  # padded
    case(fn, prim, z(6, 3), kw=dict(n=4, axis=0, norm="forward"))
    case(fn, prim, z(2, 4, 3), kw=dict(n=7, axis=1))
    case(fn, prim, u(3, 4), kw=dict(axis=0))

for fn, prim in ((fft2_, np.fft.fft2), (ifft2_, np.fft.ifft2)):
    for norm in NORMS:
        case(fn, prim, u(4, 5), kw=dict(norm=norm))
    case(fn, prim, z(3, 4), kw=dict(s=(5, 2)))
    case(fn, prim, z(2, 3, 4), kw=dict(axes=(2, 0), norm="ortho"))
    case(fn, prim, u(2, 3, 4), kw=dict(s=(2, 6), axes=(0, 2), norm="forward"))

for fn, prim in ((fftn_, np.fft.fftn), (ifftn_, np.fft.ifftn)):
    for norm in NORMS:
        case(fn, prim, u(2, 3, 4), kw=dict(norm=norm))
    case(fn, prim, z(2, 3, 4), kw=dict(axes=(1,)))
    case(fn, prim, z(3, 4), kw=dict(s=(2, 6), axes=(-1, 0), norm="ortho"))
    case(fn, prim, u(2, 3, 4), kw=dict(s=(4, 3, 2), axes=(0, 1, 2)))
    case(fn, prim, z(5), kw=dict(s=(7,), axes=(0,), norm="forward"))

# --------------------------------------------------------------------------- real to complex

for norm in NORMS:
    case(rfft_, np.fft.rfft, u(8), kw=dict(norm=norm), autograd=real_norm(norm))
    case(rfft_, np.fft.rfft, u(7), kw=dict(norm=norm), autograd=ODD)
case(rfft_, np.fft.rfft, u(3, 8), kw=dict(n=6))  # truncated
case(rfft_, np.fft.rfft, u(3, 8), kw=dict(n=5), autograd=ODD)
case(rfft_, np.fft.rfft, u(5, 3), kw=dict(n=8, axis=0, norm="ortho"))  # padded
case(rfft_, np.fft.rfft, u(2, 5, 3), kw=dict(n=9, axis=1, norm="forward"), autograd=ODD)

for fn, prim in ((rfft2_, np.fft.rfft2), (rfftn_, np.fft.rfftn)):
    for norm in NORMS:
        case(fn, prim, u(4, 6), kw=dict(norm=norm), autograd=real_norm(norm))
    case(fn, prim, u(3, 5), autograd=ODD)
    case(fn, prim, u(2, 3, 4), kw=dict(s=(5, 2), axes=(2, 0), norm="ortho"))
    case(fn, prim, u(3, 4), kw=dict(s=(2, 7), axes=(0, 1)), autograd=ODD)
case(rfftn_, np.fft.rfftn, u(2, 3, 4), kw=dict(norm="forward"), autograd=NORM)
case(rfftn_, np.fft.rfftn, u(2, 3, 5), kw=dict(axes=(0, 2)), autograd=ODD)

for norm in NORMS:
    case(ihfft_, np.fft.ihfft, u(8), kw=dict(norm=norm), autograd=NO_AUTOGRAD)
case(ihfft_, np.fft.ihfft, u(7), autograd=NO_AUTOGRAD)
case(ihfft_, np.fft.ihfft, u(3, 8), kw=dict(n=5), autograd=NO_AUTOGRAD)
case(ihfft_, np.fft.ihfft, u(5, 3), kw=dict(n=8, axis=0, norm="ortho"), autograd=NO_AUTOGRAD)

# --------------------------------------------------------------------------- complex to real
# The input has n // 2 + 1 bins (5 for n = 8 and 9); other lengths are truncated or padded.

for norm in NORMS:
    case(irfft_, np.fft.irfft, z(5), kw=dict(norm=norm), autograd=real_norm(norm))  # n = 8
    case(irfft_, np.fft.irfft, z(5), kw=dict(n=9, norm=norm), autograd=ODD)
case(irfft_, np.fft.irfft, u(5))  # a real input
case(irfft_, np.fft.irfft, z(3, 6), kw=dict(n=6))  # input longer than n // 2 + 1
case(irfft_, np.fft.irfft, z(3, 6), kw=dict(n=5), autograd=ODD)
case(irfft_, np.fft.irfft, z(3, 4), kw=dict(n=12, axis=1, norm="ortho"))  # shorter: padded
case(irfft_, np.fft.irfft, z(4, 2, 3), kw=dict(n=7, axis=0, norm="forward"), autograd=ODD)

for norm in NORMS:
    case(hfft_, np.fft.hfft, z(5), kw=dict(norm=norm), autograd=NO_AUTOGRAD)
case(hfft_, np.fft.hfft, z(5), kw=dict(n=9), autograd=NO_AUTOGRAD)
case(hfft_, np.fft.hfft, u(5), kw=dict(n=7), autograd=NO_AUTOGRAD)
case(hfft_, np.fft.hfft, z(3, 6), kw=dict(n=4, norm="ortho"), autograd=NO_AUTOGRAD)
case(hfft_, np.fft.hfft, z(3, 4), kw=dict(n=11, axis=0, norm="forward"), autograd=NO_AUTOGRAD)

for fn, prim in ((irfft2_, np.fft.irfft2), (irfftn_, np.fft.irfftn)):
    for norm in NORMS:
        case(fn, prim, z(4, 5), kw=dict(norm=norm), autograd=real_norm(norm))  # (4, 8)
    case(fn, prim, u(3, 4))
    case(fn, prim, z(3, 4), kw=dict(s=(2, 7), axes=(0, 1)), autograd=ODD)
    case(fn, prim, z(2, 3, 4), kw=dict(s=(5, 4), axes=(2, 0), norm="ortho"))
    case(fn, prim, z(2, 3, 4), kw=dict(s=(3, 9), axes=(0, 1), norm="forward"), autograd=ODD)
case(irfftn_, np.fft.irfftn, z(2, 3, 4))
case(irfftn_, np.fft.irfftn, z(2, 3, 4), kw=dict(s=(3, 5), axes=(0, 2)), autograd=ODD)

# --------------------------------------------------------------------------- shifts

for fn, prim in ((fftshift_, np.fft.fftshift), (ifftshift_, np.fft.ifftshift)):
    case(fn, prim, u(7))
    case(fn, prim, u(4, 5), kw=dict(axes=0))
    case(fn, prim, z(3, 4, 5), kw=dict(axes=(0, 2)))
    case(fn, prim, z(3, 4))

# --------------------------------------------------------------------------- the helpers


def fit_axes_(x, like=None, axes=None):
    return ff.fit_axes(x, like, axes)


def real_like_(z, like=None):
    return ff.real_like(z, like)


case(fit_axes_, ff.fit_axes, u(3, 4), np.zeros((3, 2)), -1, autograd=HELPER)
case(fit_axes_, ff.fit_axes, z(3, 4), np.zeros((5, 6)), (0, 1), autograd=HELPER)
case(fit_axes_, ff.fit_axes, u(2, 3, 4), np.zeros((4, 3, 1)), (2, 0), autograd=HELPER)
case(real_like_, ff.real_like, z(3, 4), np.zeros(2), autograd=HELPER)
case(real_like_, ff.real_like, z(3), np.zeros(2, complex), autograd=HELPER)
case(real_like_, ff.real_like, u(3), np.zeros(2), autograd=HELPER)

# --------------------------------------------------------------------------- compositions


def convolve_circular(x, h):
    """A circular convolution through the real transforms."""
    return np.fft.irfft(np.fft.rfft(x) * np.fft.rfft(h), len(x))


def power_spectrum_centred(x):
    return np.fft.fftshift(np.abs(np.fft.fft(x)) ** 2)


def round_trip_2d(x, w):
    return np.real(np.fft.ifft2(np.fft.fft2(x, norm="ortho") * w, norm="ortho"))


def spectral_filter(x):
    spectrum = np.fft.rfftn(x, axes=(0, 1))
    kernel = np.exp(-np.arange(spectrum.shape[1]) * 0.5)[:, None]
    return np.fft.irfftn(spectrum * kernel, s=x.shape[:2], axes=(0, 1))


def hermitian_pair(x):
    return np.fft.hfft(np.fft.ihfft(x) * (1.0 + 0.5j), len(x))


end_to_end(convolve_circular, u(8), u(8))
end_to_end(convolve_circular, u(7), u(7), autograd=ODD)
end_to_end(power_spectrum_centred, u(9))
end_to_end(round_trip_2d, z(3, 4), z(3, 4))
end_to_end(spectral_filter, u(4, 6, 2))
end_to_end(spectral_filter, u(5, 3, 2), autograd=ODD)
end_to_end(hermitian_pair, u(6), autograd=NO_AUTOGRAD)
