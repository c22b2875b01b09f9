"""The fuzzer's judge of higher derivatives (tests/fuzz/higher.py, ``python -m tests.fuzz
--order N``) judged in turn: with cpsad's derivative of order N made deliberately wrong
(``perturb="grad"``) it must say ``wrong-grad``, at order N, for every program it judges -- and
``ok`` for the same programs left alone, so that its verdicts are not a constant."""

from __future__ import annotations

import functools

import numpy as np
import pytest

from tests.fuzz.higher import PHI, _classify, check_seed_higher, phi_source, with_phi
from tests.fuzz.oracle import FAILURES, directions, load, unload, valid_program

# Programs the judge says "ok" at order 2 (and 3 for the last), each in a few seconds: their
# second derivatives along the direction are not zero, and the point is smooth.
SEEDS_2 = (1, 17, 8, 10)
SEED_3 = 10


@functools.cache
def verdict(seed, order, perturb=None):
    return check_seed_higher(seed, order, perturb=perturb, use_autograd=False)


@pytest.mark.parametrize("seed", SEEDS_2)
def test_a_wrong_second_derivative_is_caught(seed):
    right, wrong = verdict(seed, 2), verdict(seed, 2, "grad")
    assert (right.cls, right.jvp_cls) == ("ok", "ok"), f"{right.detail}\n{right.jvp_detail}"
    assert (wrong.cls, wrong.message) == ("wrong-grad", "order 2"), wrong.detail
    assert wrong.jvp_cls in FAILURES, f"perturbed hessian judged {wrong.jvp_cls}"


def test_a_wrong_third_derivative_is_caught():
    right, wrong = verdict(SEED_3, 3), verdict(SEED_3, 3, "grad")
    assert right.cls == "ok", right.detail
    assert (wrong.cls, wrong.message) == ("wrong-grad", "order 3"), wrong.detail


def test_phi_is_the_program_along_the_direction():
    """``fuzz_phi(t)`` is ``f(args + t d)``, calling the program's ``f`` by name."""
    program, _ = valid_program(SEEDS_2[0])
    args = program.args()
    d = directions(program, args)[0]
    assert f"def {PHI}(t):\n    return f(" in phi_source(program, args, d)
    mod, _ = load(with_phi(program, args, d), "selfcheck")
    try:
        phi = getattr(mod, PHI)
        assert phi(0.0) == mod.f(*program.args())
        t = 0.25
        moved = list(program.args())
        for i, di in zip(program.float_argnums, d):
            moved[i] = moved[i] + t * (di if np.ndim(moved[i]) else float(di))
        assert phi(t) == pytest.approx(mod.f(*moved), rel=1e-12)
    finally:
        unload(mod)


def test_the_dispatch_refusing_an_order_is_a_refusal():
    """The documented refusal when it runs (cpsad/dispatch.py ``_not_next_order``) is
    ``refused``; another ``TypeError`` is a crash."""
    msg = (
        "cpsad: differentiating again the backpropagator of `g`, called through a value, is not "
        "supported for a call of 5 arguments through a value (a derivative of this order); call "
        "it by name, or differentiate one order less"
    )
    assert _classify(TypeError(msg), "x.py")[0] == "refused"
    assert _classify(TypeError("unsupported operand"), "x.py")[0] == "crash"
