"""Loops and recursion as deep as users need, under the recursion limit they left."""

import sys

import pytest

import cpsad
from tests import corpus_control as C


def test_a_million_iterations_of_a_scalar_loop():
    limit = sys.getrecursionlimit()
    g = cpsad.grad(C.loop_range)(0.5, 1_000_000)
    assert g == pytest.approx(sum(range(1_000_000)))  # d/dx of x * sum(i)
    assert sys.getrecursionlimit() == limit


def test_recursion_ten_thousand_deep():
    limit = sys.getrecursionlimit()
    g = cpsad.grad(C.power)(1.0001, 10_000)
    assert g == pytest.approx(10_000 * 1.0001**9_999)
    assert sys.getrecursionlimit() == limit


def test_mutual_recursion_deep():
    g = cpsad.grad(C.is_even)(0.3, 5_000)
    assert g == g  # finite
    from cpsad.testing import check_grads

    check_grads(C.is_even, 0.3, 200)


def test_the_limit_is_restored_after_an_error():
    limit = sys.getrecursionlimit()

    def bad(x):
        return x * undefined_name  # noqa: F821

    with pytest.raises(NameError):
        cpsad.grad(bad)(1.0)
    assert sys.getrecursionlimit() == limit


def test_emitted_code_stays_in_the_accepted_subset():
    """cpsad's output is input cpsad accepts: what `grad(grad(f))` will need -- the code made to
    be transformed again entirely; the usual code but for the `del` statements of the release
    stage (names only), which the code made to be transformed again does without."""
    from cpsad.calls import params_for
    from cpsad.compiler import CONTEXT, NESTED, call_graph, specialize
    from tests.test_gradients import CASES
    from transforms import astlib as A
    from transforms.fence import UNSUPPORTED, Fence
    from transforms.unit import SourceInfo, Unit

    but_del = {k: v for k, v in UNSUPPORTED.items() if k is not A.Delete}
    deletes = 0
    for f, args, argnums in CASES:
        nums = (argnums,) if isinstance(argnums, int) else argnums
        active, _ = params_for(f.__code__, nums, len(args))
        for mode, fence in (("reverse" + NESTED, Fence()), ("reverse", Fence(but_del))):
            try:
                spec = specialize(f, active, (), mode)
            except cpsad.TransformError:
                continue
            for s in call_graph(spec):
                module = A.parse(s.text)
                fdef = next(n for n in module.body if isinstance(n, A.FunctionDef))
                unit = Unit(s.bp, (), CONTEXT)
                unit.tree = fdef
                unit.source = SourceInfo(s.path, 1, 0, s.text.splitlines(True))
                fence.run(unit)
                for n in A.walk(fdef):
                    if isinstance(n, A.Delete):
                        deletes += 1
                        names = [x for t in n.targets for x in getattr(t, "elts", [t])]
                        assert all(isinstance(t, A.Name) for t in names), s.text
    assert deletes  # the check of the usual code saw some
