"""Rules of ``np.fft``: the discrete Fourier transforms and the shifts of their frequencies.

Each transform is linear (over the reals where a real and a complex side meet), so its tangent
rule is the transform itself, applied to the tangent, and its adjoint rule the transpose --
without conjugation, by cpsad's convention for complex numbers (docs/reference.md; autograd's and
JAX's): a holomorphic map's adjoint is ``g`` times its derivative, and a linear one's is its plain
transpose.

* ``fft``, ``ifft``, ``fft2``, ``ifft2``, ``fftn``, ``ifftn``: the DFT matrix (and its scaling
  by ``norm``) is symmetric, so the adjoint transforms ``g`` the same way; the zero padding or
  truncation to ``n`` (``s``) becomes truncation or padding back to the input's length
  (``fit_axes``), and a real input gets the real part (``real_like``).
* ``rfft``, ``rfftn``, ``rfft2``, ``ihfft``: the first ``n // 2 + 1`` rows of a full transform of
  a real input; the adjoint pads ``g`` with zeros to ``n`` (``np.fft.fft(g, n)``), transforms it
  and takes the real part.
* ``irfft``, ``irfftn``, ``irfft2``, ``hfft``: the real result is ``Re(A c)``, the bins between
  the constant and the Nyquist one counted twice (once for themselves, once for their conjugate
  partner), the imaginary parts of those two ignored; the adjoint is ``A^T Re(g)``: a full inverse
  transform of the real ``g``, its first ``n // 2 + 1`` bins weighted 1, 2, ..., 2, 1 (no trailing
  1 for an odd ``n``: ``hermitian_weights``), zero past them. ``hfft`` is ``irfft`` of the
  conjugate with the opposite ``norm``, so its adjoint is the forward transform.
* ``fftshift``, ``ifftshift``: permutations, transposed by each other.

The rules are written with functions that have rules -- the transforms themselves, ``np.real``,
and the two linear helpers here, whose rules point back at each other -- so that emitted code is
differentiated again: second derivatives and Hessians. The helpers of shapes (``fft_axes``,
``fft_sizes``, ``fft_length``, ``hermitian_weights``) are non-differentiable.

Repeated axes (``np.fft.fftn(x, axes=(0, 0))``, a transform applied twice) are refused: the
helpers raise a ``ValueError`` saying so.
"""

from __future__ import annotations

import numpy as np

from cpsad.rules.core import defjvp, defnondiff, defvjp
from cpsad.runtime import as_array, reads_shape_of

# --------------------------------------------------------------------------- shapes (no derivative)


@reads_shape_of("a")
def fft_axes(a, s=None, axes=None) -> tuple:
    """The axes an n-dimensional transform of ``a`` runs along, as numpy resolves them: ``axes``,
    or the last ``len(s)`` axes, or all; non-negative. A repeated axis is refused."""
    ndim = np.ndim(a)
    if axes is None:
        axes = range(ndim) if s is None else range(ndim - len(s), ndim)
    out = tuple(int(ax) % ndim if ndim else int(ax) for ax in axes)
    if len(set(out)) != len(out):
        raise ValueError(
            f"cpsad: the derivative of an FFT over a repeated axis ({tuple(axes)}) is not "
            "implemented; transform along each axis once (np.fft: repeated axes apply the "
            "transform twice)"
        )
    return out


@reads_shape_of("a")
def fft_sizes(a, s=None, axes=None) -> tuple:
    """The lengths of the full transforms along ``fft_axes(a, s, axes)``: ``s`` (-1 or None for the
    input's length), or the input's lengths."""
    shape = np.shape(a)
    axes = fft_axes(a, s, axes)
    if s is None:
        return tuple(shape[ax] for ax in axes)
    return tuple(shape[ax] if n is None or n == -1 else int(n) for n, ax in zip(s, axes))


@reads_shape_of("a")
def fft_length(a, n=None, axis=-1) -> int:
    """The length of a one-dimensional transform of ``a``: ``n``, or the input's length."""
    return np.shape(a)[axis] if n is None else int(n)


@reads_shape_of("a", "ans")
def hermitian_weights(a, ans, axes):
    """The weights of the bins of a transform of Hermitian-symmetric input (``irfftn``, ``hfft``)
    along the last of ``axes``, as an array that broadcasts against ``a``: for a real result of
    length ``n``, bin 0 (and bin ``n / 2`` where ``n`` is even) counts once, the bins between twice
    (for their conjugate partners), the bins past ``n // 2`` not at all (they are cut off). In
    ``a``'s real float type."""
    a = as_array(a)
    ax = axes[-1]
    m, n = a.shape[ax], np.shape(ans)[ax]
    k = np.arange(m)
    w = np.where(k < n // 2 + 1, np.where((k == 0) | (2 * k == n), 1.0, 2.0), 0.0)
    dtype = a.real.dtype if np.issubdtype(a.dtype, np.inexact) else np.float64
    shape = [1] * a.ndim
    shape[ax] = m
    return w.astype(dtype).reshape(shape)


defnondiff(fft_axes, fft_sizes, fft_length, hermitian_weights)

# --------------------------------------------------------------------------- linear helpers


@reads_shape_of("like")
def fit_axes(x, like, axes):
    """``x`` truncated, or padded with zeros at the end, to ``like``'s length along each of
    ``axes`` (an int or a tuple): the transpose of the padding or truncation of a transform's
    ``n`` or ``s``."""
    axes = (axes,) if np.ndim(axes) == 0 else tuple(axes)
    x = as_array(x)
    shape = np.shape(like)
    index = [slice(None)] * x.ndim
    pad = [(0, 0)] * x.ndim
    for ax in axes:
        have, want = x.shape[ax], shape[ax]
        if want < have:
            index[ax] = slice(0, want)
        elif want > have:
            pad[ax] = (0, want - have)
    x = x[tuple(index)]
    if any(p != (0, 0) for p in pad):
        x = np.pad(x, pad)
    return x


def fit_axes_x(g, ans, x, like, axes):
    """Truncation and zero padding are transposes of each other: back to ``x``'s lengths."""
    return fit_axes(g, x, axes)


def fit_axes_x_jvp(t, ans, x, like, axes):
    return fit_axes(t, like, axes)


defvjp(fit_axes, x=fit_axes_x)
defjvp(fit_axes, x=fit_axes_x_jvp)


@reads_shape_of("like")
def real_like(z, like):
    """The real part of ``z`` where ``like`` (the input of a transform) is real; else ``z``:
    the adjoint of a real input is real."""
    return z if np.iscomplexobj(like) else np.real(z)


def real_like_z(g, ans, z, like):
    """As ``np.real``'s adjoint (the real part of ``g``, the adjoint of a real result), or the
    identity's."""
    return real_like(g, like)


def real_like_z_jvp(t, ans, z, like):
    return real_like(t, like)


defvjp(real_like, z=real_like_z)
defjvp(real_like, z=real_like_z_jvp)

# --------------------------------------------------------------------------- complex to complex


def fft_vjp(g, ans, a, n=None, axis=-1, norm=None):
    """The DFT matrix is symmetric: transform ``g`` alike, then undo the padding (truncation)."""
    return real_like(fit_axes(np.fft.fft(g, None, axis, norm), a, (axis,)), a)


def fft_jvp(t, ans, a, n=None, axis=-1, norm=None):
    return np.fft.fft(t, n, axis, norm)


def ifft_vjp(g, ans, a, n=None, axis=-1, norm=None):
    return real_like(fit_axes(np.fft.ifft(g, None, axis, norm), a, (axis,)), a)


def ifft_jvp(t, ans, a, n=None, axis=-1, norm=None):
    return np.fft.ifft(t, n, axis, norm)


def fftn_vjp(g, ans, a, s=None, axes=None, norm=None):
    return real_like(
        fit_axes(np.fft.fftn(g, None, fft_axes(a, s, axes), norm), a, fft_axes(a, s, axes)), a
    )


def fftn_jvp(t, ans, a, s=None, axes=None, norm=None):
    return np.fft.fftn(t, s, axes, norm)


def ifftn_vjp(g, ans, a, s=None, axes=None, norm=None):
    return real_like(
        fit_axes(np.fft.ifftn(g, None, fft_axes(a, s, axes), norm), a, fft_axes(a, s, axes)), a
    )


def ifftn_jvp(t, ans, a, s=None, axes=None, norm=None):
    return np.fft.ifftn(t, s, axes, norm)


def fft2_vjp(g, ans, a, s=None, axes=(-2, -1), norm=None):
    return real_like(
        fit_axes(np.fft.fftn(g, None, fft_axes(a, s, axes), norm), a, fft_axes(a, s, axes)), a
    )


def fft2_jvp(t, ans, a, s=None, axes=(-2, -1), norm=None):
    return np.fft.fft2(t, s, axes, norm)


def ifft2_vjp(g, ans, a, s=None, axes=(-2, -1), norm=None):
    return real_like(
        fit_axes(np.fft.ifftn(g, None, fft_axes(a, s, axes), norm), a, fft_axes(a, s, axes)), a
    )


def ifft2_jvp(t, ans, a, s=None, axes=(-2, -1), norm=None):
    return np.fft.ifft2(t, s, axes, norm)


defvjp(np.fft.fft, fft_vjp)
defjvp(np.fft.fft, fft_jvp)
defvjp(np.fft.ifft, ifft_vjp)
defjvp(np.fft.ifft, ifft_jvp)
defvjp(np.fft.fftn, fftn_vjp)
defjvp(np.fft.fftn, fftn_jvp)
defvjp(np.fft.ifftn, ifftn_vjp)
defjvp(np.fft.ifftn, ifftn_jvp)
defvjp(np.fft.fft2, fft2_vjp)
defjvp(np.fft.fft2, fft2_jvp)
defvjp(np.fft.ifft2, ifft2_vjp)
defjvp(np.fft.ifft2, ifft2_jvp)

# --------------------------------------------------------------------------- real to complex


def rfft_vjp(g, ans, a, n=None, axis=-1, norm=None):
    """The first ``n // 2 + 1`` rows of the full transform: ``g`` padded with zeros to ``n``,
    transformed, the padding of ``a`` undone, the real part (``a`` is real)."""
    return np.real(fit_axes(np.fft.fft(g, fft_length(a, n, axis), axis, norm), a, (axis,)))


def rfft_jvp(t, ans, a, n=None, axis=-1, norm=None):
    return np.fft.rfft(t, n, axis, norm)


def rfftn_vjp(g, ans, a, s=None, axes=None, norm=None):
    """``rfft`` along the last axis, ``fft`` along the others: a full transform of ``g`` padded
    to the full lengths."""
    return np.real(
        fit_axes(
            np.fft.fftn(g, fft_sizes(a, s, axes), fft_axes(a, s, axes), norm),
            a,
            fft_axes(a, s, axes),
        )
    )


def rfftn_jvp(t, ans, a, s=None, axes=None, norm=None):
    return np.fft.rfftn(t, s, axes, norm)


def rfft2_vjp(g, ans, a, s=None, axes=(-2, -1), norm=None):
    return np.real(
        fit_axes(
            np.fft.fftn(g, fft_sizes(a, s, axes), fft_axes(a, s, axes), norm),
            a,
            fft_axes(a, s, axes),
        )
    )


def rfft2_jvp(t, ans, a, s=None, axes=(-2, -1), norm=None):
    return np.fft.rfft2(t, s, axes, norm)


def ihfft_vjp(g, ans, a, n=None, axis=-1, norm=None):
    """``ihfft`` is ``conj(rfft(a))`` with the opposite ``norm``: the conjugate of that matrix is
    the inverse transform's with this ``norm``."""
    return np.real(fit_axes(np.fft.ifft(g, fft_length(a, n, axis), axis, norm), a, (axis,)))


def ihfft_jvp(t, ans, a, n=None, axis=-1, norm=None):
    return np.fft.ihfft(t, n, axis, norm)


defvjp(np.fft.rfft, rfft_vjp)
defjvp(np.fft.rfft, rfft_jvp)
defvjp(np.fft.rfftn, rfftn_vjp)
defjvp(np.fft.rfftn, rfftn_jvp)
defvjp(np.fft.rfft2, rfft2_vjp)
defjvp(np.fft.rfft2, rfft2_jvp)
defvjp(np.fft.ihfft, ihfft_vjp)
defjvp(np.fft.ihfft, ihfft_jvp)

# --------------------------------------------------------------------------- complex to real


def irfft_vjp(g, ans, a, n=None, axis=-1, norm=None):
    """``Re(A c)``: ``A^T Re(g)``, the inverse transform of the real ``g`` weighted 1, 2, ..., 2(,
    1) on the bins the result reads, 0 past them; truncated or padded back to ``a``'s length."""
    return real_like(
        fit_axes(np.fft.ifft(np.real(g), None, axis, norm), a, (axis,))
        * hermitian_weights(a, ans, (axis,)),
        a,
    )


def irfft_jvp(t, ans, a, n=None, axis=-1, norm=None):
    return np.fft.irfft(t, n, axis, norm)


def irfftn_vjp(g, ans, a, s=None, axes=None, norm=None):
    """``ifft`` along the other axes, ``irfft`` along the last: ``irfft``'s adjoint along all."""
    return real_like(
        fit_axes(
            np.fft.ifftn(np.real(g), None, fft_axes(a, s, axes), norm), a, fft_axes(a, s, axes)
        )
        * hermitian_weights(a, ans, fft_axes(a, s, axes)),
        a,
    )


def irfftn_jvp(t, ans, a, s=None, axes=None, norm=None):
    return np.fft.irfftn(t, s, axes, norm)


def irfft2_vjp(g, ans, a, s=None, axes=(-2, -1), norm=None):
    return real_like(
        fit_axes(
            np.fft.ifftn(np.real(g), None, fft_axes(a, s, axes), norm), a, fft_axes(a, s, axes)
        )
        * hermitian_weights(a, ans, fft_axes(a, s, axes)),
        a,
    )


def irfft2_jvp(t, ans, a, s=None, axes=(-2, -1), norm=None):
    return np.fft.irfft2(t, s, axes, norm)


def hfft_vjp(g, ans, a, n=None, axis=-1, norm=None):
    """``hfft`` is ``irfft(conj(a))`` with the opposite ``norm``: ``irfft``'s adjoint, conjugated,
    which is the forward transform of the real ``g`` with this ``norm``."""
    return real_like(
        fit_axes(np.fft.fft(np.real(g), None, axis, norm), a, (axis,))
        * hermitian_weights(a, ans, (axis,)),
        a,
    )


def hfft_jvp(t, ans, a, n=None, axis=-1, norm=None):
    return np.fft.hfft(t, n, axis, norm)


defvjp(np.fft.irfft, irfft_vjp)
defjvp(np.fft.irfft, irfft_jvp)
defvjp(np.fft.irfftn, irfftn_vjp)
defjvp(np.fft.irfftn, irfftn_jvp)
defvjp(np.fft.irfft2, irfft2_vjp)
defjvp(np.fft.irfft2, irfft2_jvp)
defvjp(np.fft.hfft, hfft_vjp)
defjvp(np.fft.hfft, hfft_jvp)

# --------------------------------------------------------------------------- shifts


def fftshift_vjp(g, ans, x, axes=None):
    """A permutation: its transpose is its inverse."""
    return np.fft.ifftshift(g, axes)


def fftshift_jvp(t, ans, x, axes=None):
    return np.fft.fftshift(t, axes)


def ifftshift_vjp(g, ans, x, axes=None):
    return np.fft.fftshift(g, axes)


def ifftshift_jvp(t, ans, x, axes=None):
    return np.fft.ifftshift(t, axes)


defvjp(np.fft.fftshift, fftshift_vjp)
defjvp(np.fft.fftshift, fftshift_jvp)
defvjp(np.fft.ifftshift, ifftshift_vjp)
defjvp(np.fft.ifftshift, ifftshift_jvp)
