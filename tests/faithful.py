"""The fidelity oracle: a program's value is plain Python's, its gradient is the finite
differences' (two step sizes must agree, or the point is not smooth) and autograd's where
autograd runs it, and forward mode agrees."""

from __future__ import annotations

import numpy as np

import cpsad
from cpsad.testing import directional, dot_gradient


def float_args(args) -> tuple[int, ...]:
    """The positions of the arguments to differentiate: floats and float arrays."""
    return tuple(
        i
        for i, a in enumerate(args)
        if (isinstance(a, float) or (isinstance(a, np.ndarray) and a.dtype.kind == "f"))
    )


def assert_faithful(f, *args, argnums=None, forward=True, autograd=True, directions=3):
    nums = float_args(args) if argnums is None else argnums
    expected = f(*args)
    value, grads = cpsad.value_and_grad(f, argnums=tuple(nums))(*args)
    np.testing.assert_allclose(value, expected, rtol=1e-12, atol=1e-12, err_msg="value")
    for g, i in zip(grads, nums):  # (the comparisons below would broadcast a zero of any shape)
        assert np.shape(g) == np.shape(args[i]), f"gradient {i}: shape {np.shape(g)}"
    for d in range(directions):
        fd, dirs = directional(f, args, nums, d, 1e-6)
        fd2, _ = directional(f, args, nums, d, 1e-4)
        if not np.isclose(fd, fd2, rtol=1e-3, atol=1e-5):
            continue  # not smooth here: finite differences say nothing
        ad = sum(dot_gradient(g, args[i], vs) for g, (i, vs) in zip(grads, dirs))
        assert np.isclose(
            ad, fd, rtol=1e-5, atol=1e-6
        ), f"gradient along direction {d}: <grad, v> = {ad!r}, finite difference = {fd!r}"
        if forward:
            tangents = [None] * len(args)
            for i, vs in dirs:
                tangents[i] = np.reshape(vs[0], np.shape(args[i])) if np.ndim(args[i]) else vs[0]
            v, t = cpsad.jvp(f, args, tangents)
            np.testing.assert_allclose(v, expected, rtol=1e-12, atol=1e-12, err_msg="jvp value")
            assert np.isclose(float(t), fd, rtol=1e-5, atol=1e-6), f"jvp {t!r}, fd {fd!r}"
    if autograd:
        _against_autograd(f, args, nums, grads)
    return value, grads


def _against_autograd(f, args, nums, grads) -> None:
    try:
        from tests.oracles import autograd_grad

        theirs = autograd_grad(f, args, tuple(nums))
    except Exception:  # autograd cannot run this program (in-place updates, ...): no opinion
        return
    for mine, other in zip(grads, theirs):
        np.testing.assert_allclose(mine, other, rtol=1e-7, atol=1e-9, err_msg="vs autograd")
