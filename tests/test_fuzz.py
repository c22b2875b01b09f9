"""The random-program differential fuzzer's CI set (tests/fuzz/): a fixed list of seeds, each a
generated module judged against plain Python, central differences and autograd.

Each seed is its own test, once for reverse mode (``value_and_grad``) and once for forward mode
(``jvp``). Seeds on which cpsad fails today are in ``KNOWN`` / ``KNOWN_JVP`` as
``xfail(strict=True)``, with the reduced program (tests/fuzz/findings/) that explains them where
one does: when a fix makes such a seed pass, its xfail "passes", the test fails, and the entry is
removed. ``python -m tests.fuzz --ci-known`` prints both tables afresh (after a change to the
generator every seed's program changes, and so do the tables).
"""

from __future__ import annotations

import functools

import numpy as np
import pytest

from tests.fuzz import findings
from tests.fuzz.gen import generate_source
from tests.fuzz.oracle import (
    CLEAN,
    FAILURES,
    check,
    check_seed,
    slope_agrees,
    smooth,
    valid_program,
)
from tests.fuzz.reduce import reduce

# Every feature (200 programs), and without the features of the bugs already on the lead's list
# (150, seeds from CLEAN on: see oracle.KNOWN_BUG_FEATURES), so those do not hide the others.
CI_SEEDS = list(range(200)) + list(range(CLEAN, CLEAN + 150))

# Documented refusals (docs/reference.md): not failures. Any other refusal of a generated program
# refuses code the documentation says cpsad differentiates.
DOCUMENTED = (
    "would change in place an array that another name shares",
    "which is not a variable of the function being differentiated",  # a global list
    "which the loop makes anew in each iteration",  # a kept closure calling a redefined function
    "changed in place the array",  # a helper changing what the backward pass reads
    # a store into an array the function did not make, or one a nested function reads (the
    # rebinding would not reach it: docs/reference.md), at the line or when it runs
    "the function did not make itself",
    "changes an array that another name shares",
    # an iterator kept and read twice (the second read empty), numpy's out= on such a value
    "which cpsad follows only where it is consumed where it is made",
    "in place, which cpsad does not follow",
)


def _acceptable(cls, message) -> bool:
    if cls in ("ok", "nonsmooth"):
        return True
    documented = any(d in message for d in DOCUMENTED) and "nobody else holds" not in message
    return cls == "refused" and documented


def acceptable(r) -> bool:
    return _acceptable(r.cls, r.message)


def acceptable_jvp(r) -> bool:
    return _acceptable(r.jvp_cls, r.jvp_detail)


# seed -> the finding (tests/fuzz/findings/NAME.py) its reduced program reproduces, or the verdict
KNOWN: dict = {}
KNOWN_JVP: dict = {}


@functools.cache
def verdict(seed):
    return check_seed(seed)


def _params(known):
    return [
        pytest.param(s, marks=pytest.mark.xfail(strict=True, reason=known[s])) if s in known else s
        for s in CI_SEEDS
    ]


def _explain(r):
    return f"seed {r.seed}: {r.cls} {r.message}\n{r.detail}\n\n{r.source}"


@pytest.mark.parametrize("seed", _params(KNOWN))
def test_reverse(seed):
    r = verdict(seed)
    assert r.cls != "discarded", f"seed {seed} has no valid program"
    assert acceptable(r), _explain(r)


@pytest.mark.parametrize("seed", _params(KNOWN_JVP))
def test_forward(seed):
    r = verdict(seed)
    assert r.cls != "discarded", f"seed {seed} has no valid program"
    assert acceptable_jvp(r), f"jvp: {r.jvp_cls} {r.jvp_detail}\n" + _explain(r)


@pytest.mark.parametrize("name", findings.files())
def test_finding(name, request):
    """Each reduced program: open ones still fail (strict xfail), fixed ones are regression tests."""
    program, status = findings.program_of(name)
    if status == "open":
        request.node.add_marker(pytest.mark.xfail(strict=True, reason="open finding"))
    r = check(program)
    assert acceptable(r) and acceptable_jvp(r), f"{r.cls} {r.message} {r.detail} / jvp {r.jvp_cls}"


# --------------------------------------------------------------------------- the fuzzer itself


def test_autograd_is_asked_of_a_refused_program():
    """A refusal is judged too: autograd's slopes against central differences, so that the
    report lists the refusals of programs a peer differentiates (an array ``MEMORY`` holds,
    changed in place: the run-time check refuses; autograd, a tracer, follows Python)."""
    from tests.fuzz.gen import Program

    pytest.importorskip("autograd")
    source = (
        "import numpy as np\n\nMEMORY = []\n\n\ndef f(x):\n    v = np.ones(3) * 2.0\n"
        "    MEMORY.append(v)\n    v -= np.ones(3)\n    return np.sum(MEMORY[-1] * x)\n"
    )
    program = Program(0, source, [("x", "vector")], set(), 0, (np.array([0.5, -0.2, 0.3]),))
    r = check(program)
    assert r.cls == "refused" and "shares" in r.message, (r.cls, r.message)
    assert r.autograd == "agrees"


SELF_CHECK_SEEDS = range(10_000, 10_025)


@pytest.mark.parametrize("perturb", ["grad", "value"])
def test_a_wrong_cpsad_is_caught(perturb):
    """With cpsad's gradient (or value) made slightly wrong, every program the oracle judges fails."""
    judged = 0
    for seed in SELF_CHECK_SEEDS:
        r = check_seed(seed, perturb=perturb, use_autograd=False)
        if r.cls in ("refused", "bad-refusal", "crash", "discarded", "nonsmooth"):
            continue
        judged += 1
        want = "wrong-value" if perturb == "value" else ("wrong-grad", "wrong-value")
        assert r.cls in want, f"seed {seed}: perturbed {perturb} judged {r.cls}\n{r.source}"
        if r.jvp_cls not in ("refused", "bad-refusal", "crash", "nonsmooth"):
            assert r.jvp_cls in FAILURES, f"seed {seed}: perturbed jvp judged {r.jvp_cls}"
    assert judged >= 10, f"only {judged} programs judged"


def test_generator_is_deterministic():
    for seed in (0, 1, 17, 4242):
        a, b = generate_source(seed), generate_source(seed)
        assert a.source == b.source and a.features == b.features
        assert all(np.array_equal(x, y) for x, y in zip(a.args(), b.args()))


# Every feature the grammar claims appears in a share of the CI programs (so per-feature counts
# mean something).
FEATURES = """
arith np_elementwise reduce matmul index slice reshape stack where maximum matrix vector
if elif else no_else ternary for_range for_seq enumerate zip while break continue early_return
swap unpack aug_num aug_array acc_zeros local_def lambda capture capture_before_assign
capture_reassigned apply_1line apply_multi fn_in_list fn_in_tuple fn_in_dict fn_returned
late_binding default_binding recursion_linear recursion_tree list dict append listcomp
list_concat helper_call helper_multi nonlocal default_arg default_capture decorator alias_fn
int_arg compose tuple_capture_unpack map global_state objects methods nonlocal_through_value
loop_redefined array_store operator
""".split()


def test_every_feature_is_generated_often():
    counts = dict.fromkeys(FEATURES, 0)
    for seed in CI_SEEDS:
        for ft in generate_source(seed).features:
            if ft in counts:
                counts[ft] += 1
    rare = {ft: n for ft, n in counts.items() if n < 5}
    assert not rare, f"features in fewer than 5 of {len(CI_SEEDS)} programs: {rare}"


def test_two_step_sizes_decide_smoothness():
    assert smooth([1.0, 1.0 + 1e-9], 1.0)
    assert not smooth([1.0, 1.5], 1.0)  # a branch flipped between the steps
    assert slope_agrees(1.0 + 1e-8, [1.0, 1.0], 1.0)
    assert not slope_agrees(1.001, [1.0, 1.0], 1.0)


def test_reducer_shrinks_while_the_failure_persists():
    key = ("wrong-value", "")
    for seed in range(20):  # the first program cpsad differentiates, its value made wrong
        program, _ = valid_program(seed)
        if check(program, perturb="value", use_autograd=False, forward=False).key == key:
            break
    small = reduce(program, key, perturb="value", seconds=60)
    assert len(small.source.splitlines()) <= 6, small.source
    again = check(small, perturb="value", use_autograd=False, forward=False)
    assert again.key == key
