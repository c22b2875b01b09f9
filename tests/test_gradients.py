"""End to end: every function of the core corpus, against finite differences and autograd."""

import numpy as np
import pytest

import cpsad
from cpsad import compiler
from cpsad.calls import params_for
from cpsad.pytree import densify
from cpsad.runtime import scalar_seed
from cpsad.testing import check_grads, leaves
from tests import corpus_control, corpus_core
from tests.oracles import autograd_grad

CASES = corpus_core.CASES + corpus_control.CASES
IDS = [f"{f.__name__}-{i}" for i, (f, _, _) in enumerate(CASES)]

# what autograd itself cannot run
NO_AUTOGRAD = {
    "math_functions": "the math module calls float() on autograd's boxes",
    "operators": "autograd's ArrayBox has no unary +",
    "math_in_loop": "the math module calls float() on autograd's boxes",
    "tree_sum": "autograd's boxes are not tuples, lists or dicts to isinstance",
}


def assert_tree_close(a, b, rtol=1e-6, atol=1e-9):
    la, _ = leaves(a)
    lb, _ = leaves(b)
    assert len(la) == len(lb)
    for x, y in zip(la, lb):
        np.testing.assert_allclose(np.asarray(x, float), np.asarray(y, float), rtol=rtol, atol=atol)


@pytest.mark.parametrize("f,args,argnums", CASES, ids=IDS)
def test_finite_differences(f, args, argnums):
    check_grads(f, *args, argnums=argnums)


@pytest.mark.parametrize("f,args,argnums", CASES, ids=IDS)
def test_autograd(f, args, argnums):
    if f.__name__ in NO_AUTOGRAD:
        pytest.skip(NO_AUTOGRAD[f.__name__])
    ours = cpsad.grad(f, argnums=argnums)(*args)
    theirs = autograd_grad(f, args, argnums)
    assert_tree_close(ours, theirs)


@pytest.mark.parametrize("f,args,argnums", CASES, ids=IDS)
def test_value_is_the_function_value(f, args, argnums):
    value, _ = cpsad.value_and_grad(f, argnums=argnums)(*args)
    np.testing.assert_allclose(value, f(*args))


@pytest.mark.parametrize("f,args,argnums", CASES, ids=IDS)
def test_simplify_changes_no_gradient(f, args, argnums):
    """The CPS stage, run as it is (closures everywhere, acc and None checks), agrees."""
    nums = (argnums,) if isinstance(argnums, int) else argnums
    active, _ = params_for(f.__code__, nums, len(args))
    kinds = compiler.kinds_of(f.__code__, args, {})
    naive = compiler.variant(f, active, skip=("simplify",), kinds=kinds)
    agrees_with_grad(naive, f, args, argnums)


@pytest.mark.parametrize("f,args,argnums", CASES, ids=IDS)
def test_defunctionalizing_changes_no_gradient(f, args, argnums):
    """Loops as recursion (one frame per iteration) agree with loops as two while loops."""
    nums = (argnums,) if isinstance(argnums, int) else argnums
    active, _ = params_for(f.__code__, nums, len(args))
    kinds = compiler.kinds_of(f.__code__, args, {})
    recursive = compiler.variant(f, active, skip=("defunctionalize",), kinds=kinds)
    agrees_with_grad(recursive, f, args, argnums)


@pytest.mark.parametrize("f,args,argnums", CASES, ids=IDS)
def test_specializing_to_kinds_changes_no_gradient(f, args, argnums):
    """The transformation that knows nothing of its arguments' kinds (every adjoint may be
    absent, every result may need unbroadcasting) agrees with the one specialized to them."""
    nums = (argnums,) if isinstance(argnums, int) else argnums
    active, _ = params_for(f.__code__, nums, len(args))
    generic = compiler.specialize(f, active)
    agrees_with_grad(generic, f, args, argnums)


def agrees_with_grad(spec, f, args, argnums):
    """``spec``'s backpropagator, run directly, gives ``cpsad.grad``'s gradient."""
    nums = (argnums,) if isinstance(argnums, int) else argnums
    out = spec.bp(scalar_seed, *args)
    out = (out,) if len(spec.active) == 1 else out
    expected = cpsad.grad(f, argnums=argnums)(*args)
    expected = (expected,) if isinstance(argnums, int) else expected
    names = f.__code__.co_varnames
    for i, e in zip(nums, expected):
        got = densify(dict(zip(spec.active, out))[names[i]], args[i])
        assert_tree_close(got, e)


@pytest.mark.parametrize("f,args,argnums", CASES, ids=IDS)
def test_pipeline_invariants(f, args, argnums):
    nums = (argnums,) if isinstance(argnums, int) else argnums
    active, _ = params_for(f.__code__, nums, len(args))
    compiler.run_pipeline(f, active, check=True, record=True)
    kinds = compiler.kinds_of(f.__code__, args, {})
    compiler.run_pipeline(f, active, check=True, kinds=kinds)
