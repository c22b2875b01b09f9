"""Property tests: binary operators under every broadcast, and deterministic output."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import cpsad
from cpsad import compiler
from cpsad.testing import check_grads
from tests import corpus_core


def mixed(x, y):
    quadratic = np.sum((x - 0.5) ** 2 @ np.ones(np.shape(x)[-1:]))
    return np.sum(x * y + x / (1.5 + y**2) - y) + quadratic


def elementwise(x, y):
    return np.sum(np.tanh(x) * np.exp(-(y**2)) + np.maximum(x, y) + np.sin(x + y))


shapes = hnp.mutually_broadcastable_shapes(num_shapes=2, min_dims=1, max_dims=3, max_side=3)


@settings(max_examples=40, deadline=None)
@given(shapes, st.integers(0, 2**31 - 1))
def test_broadcasting_in_every_direction(shape_pair, seed):
    (sx, sy), _ = shape_pair.input_shapes, shape_pair.result_shape
    rng = np.random.default_rng(seed)
    x = rng.uniform(-1, 1, sx)
    y = rng.uniform(-1, 1, sy)
    check_grads(elementwise, x, y, argnums=(0, 1))
    check_grads(mixed, x, y, argnums=(0, 1))


@settings(max_examples=25, deadline=None)
@given(st.floats(-3, 3), st.floats(-3, 3))
def test_branches_everywhere(x, y):
    if abs(x * y) > 1e-3 and abs(x * y - 1.0) > 1e-3:  # away from the kinks
        check_grads(corpus_core.branch, x, y, argnums=(0, 1), rtol=1e-3, atol=1e-5)


def test_emitted_code_is_deterministic():
    for f, args, argnums in corpus_core.CASES[:30]:
        nums = (argnums,) if isinstance(argnums, int) else argnums
        active, _ = cpsad.calls.params_for(f.__code__, nums, len(args))
        first, _ = compiler.run_pipeline(f, active)
        again, _ = compiler.run_pipeline(f, active)
        assert first.text == again.text, f.__name__
