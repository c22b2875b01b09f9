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
DOCUMENTED = ("would change in place an array that another name shares",)


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
KNOWN = {
    2: "constant_function_refused",
    3: "known_local_fn_to_apply",
    5: "same_closure_twice_in_list",
    6: "known_late_binding",
    8: "known_negative_constant_power",
    9: "known_local_fn_to_apply",
    13: "known_negative_constant_power",
    17: "inline_lambda_through_apply",
    18: "known_late_binding",
    19: "known_default_captures_input",
    20: "known_negative_constant_power",
    21: "known_local_fn_to_apply",
    22: "known_local_decorator",
    23: "known_local_decorator",
    26: "known_local_fn_to_apply",
    28: "constant_function_refused",
    29: "known_local_decorator",
    31: "known_local_fn_to_apply",
    32: "known_local_decorator",
    33: "known_lambda_in_listcomp",
    34: "known_local_fn_to_apply",
    35: "known_negative_constant_power",
    37: "known_negative_constant_power",
    39: "cell_rule_reads_later_value",
    41: "known_local_decorator",
    42: "known_local_decorator",
    44: "nonlocal_binding_syntaxerror",
    45: "known_lambda_in_listcomp",
    46: "known_local_fn_to_apply",
    47: "known_local_fn_to_apply",
    48: "closure_returns_captured",
    49: "known_local_fn_to_apply",
    51: "known_local_fn_to_apply",
    53: "tuple_assign_while_return",
    56: "constant_function_refused",
    57: "known_local_fn_to_apply",
    61: "known_negative_constant_power",
    62: "known_local_fn_to_apply",
    63: "known_local_decorator",
    64: "known_local_fn_to_apply",
    65: "known_local_fn_to_apply",
    68: "known_late_binding",
    69: "known_local_fn_to_apply",
    70: "linspace_is_a_number",
    71: "constant_function_refused",
    72: "linspace_is_a_number",
    73: "known_lambda_in_listcomp",
    74: "known_local_fn_to_apply",
    75: "known_local_fn_to_apply",
    78: "linspace_is_a_number",
    80: "linspace_is_a_number",
    83: "closure_returns_captured",
    84: "known_local_decorator",
    85: "known_local_fn_to_apply",
    87: "known_negative_constant_power",
    89: "tuple_assign_while_return",
    91: "closure_returns_captured",
    94: "known_local_decorator",
    95: "known_local_fn_to_apply",
    96: "known_negative_constant_power",
    102: "known_local_fn_to_apply",
    103: "known_negative_constant_power",
    104: "same_closure_twice_in_list",
    107: "known_local_fn_to_apply",
    108: "known_local_fn_to_apply",
    113: "known_local_fn_to_apply",
    116: "known_local_fn_to_apply",
    119: "known_local_fn_to_apply",
    120: "cell_rule_reads_later_value",
    121: "constant_function_refused",
    122: "known_local_fn_to_apply",
    123: "known_local_fn_to_apply",
    125: "known_local_decorator",
    126: "known_local_fn_to_apply",
    127: "known_local_decorator",
    129: "constant_function_refused",
    131: "known_local_fn_to_apply",
    135: "known_local_fn_to_apply",
    137: "known_local_fn_to_apply",
    138: "closure_returns_captured",
    142: "known_local_decorator",
    143: "known_local_decorator",
    144: "known_local_fn_to_apply",
    146: "closure_returns_captured",
    147: "known_negative_constant_power",
    149: "known_local_fn_to_apply",
    152: "known_negative_constant_power",
    153: "constant_function_refused",
    154: "known_negative_constant_power",
    156: "known_local_fn_to_apply",
    159: "closure_returns_captured",
    160: "constant_function_refused",
    161: "known_local_fn_to_apply",
    163: "closure_returns_captured",
    164: "known_local_fn_to_apply",
    165: "constant_function_refused",
    166: "same_closure_twice_in_list",
    167: "same_closure_twice_in_list",
    168: "known_late_binding",
    169: "known_local_decorator",
    170: "known_local_fn_to_apply",
    171: "known_local_decorator",
    173: "known_local_fn_to_apply",
    174: "known_local_fn_to_apply",
    175: "closure_returns_captured",
    176: "known_lambda_in_listcomp",
    177: "known_local_decorator",
    178: "known_negative_constant_power",
    180: "known_lambda_in_listcomp",
    181: "closure_returns_captured",
    182: "known_local_fn_to_apply",
    183: "known_local_fn_to_apply",
    184: "augassign_of_captured_in_branch",
    185: "cell_rule_reads_later_value",
    186: "known_local_fn_to_apply",
    188: "known_local_decorator",
    190: "known_local_fn_to_apply",
    192: "known_local_fn_to_apply",
    197: "known_local_fn_to_apply",
    198: "known_local_decorator",
    199: "known_local_fn_to_apply",
    1000014: "augassign_of_captured_in_branch",
    1000039: "constant_function_refused",
    1000042: "closure_returns_captured",
    1000053: "constant_function_refused",
    1000077: "same_closure_twice_in_list",
    1000084: "constant_function_refused",
    1000089: "cell_rule_reads_later_value",
    1000100: "closure_returns_captured",
    1000122: "linspace_is_a_number",
    1000143: "constant_function_refused",
}
KNOWN_JVP = {
    2: "constant_function_refused",
    3: "known_local_fn_to_apply",
    6: "known_late_binding",
    8: "known_negative_constant_power",
    9: "known_local_fn_to_apply",
    13: "known_negative_constant_power",
    17: "inline_lambda_through_apply",
    18: "known_late_binding",
    19: "known_default_captures_input",
    20: "known_negative_constant_power",
    21: "known_local_fn_to_apply",
    22: "known_local_decorator",
    23: "known_local_decorator",
    24: "lambda_called_from_local_def",
    26: "known_local_fn_to_apply",
    28: "constant_function_refused",
    29: "known_local_decorator",
    31: "known_local_fn_to_apply",
    32: "known_local_decorator",
    33: "known_lambda_in_listcomp",
    34: "known_local_fn_to_apply",
    35: "known_negative_constant_power",
    37: "known_negative_constant_power",
    41: "known_local_decorator",
    42: "known_local_decorator",
    45: "known_lambda_in_listcomp",
    46: "known_local_fn_to_apply",
    47: "known_local_fn_to_apply",
    49: "known_local_fn_to_apply",
    51: "known_local_fn_to_apply",
    53: "known_negative_constant_power",
    56: "constant_function_refused",
    57: "known_local_fn_to_apply",
    61: "known_negative_constant_power",
    62: "known_local_fn_to_apply",
    63: "known_local_decorator",
    64: "known_local_fn_to_apply",
    65: "known_local_fn_to_apply",
    68: "known_late_binding",
    69: "known_local_fn_to_apply",
    71: "constant_function_refused",
    73: "known_lambda_in_listcomp",
    74: "known_local_fn_to_apply",
    75: "known_local_fn_to_apply",
    83: "closure_returns_captured",
    84: "known_local_decorator",
    85: "known_local_fn_to_apply",
    87: "known_negative_constant_power",
    89: "known_late_binding",
    94: "known_local_decorator",
    95: "known_local_fn_to_apply",
    96: "known_negative_constant_power",
    102: "known_local_fn_to_apply",
    103: "known_negative_constant_power",
    104: "known_negative_constant_power",
    107: "known_local_fn_to_apply",
    108: "known_local_fn_to_apply",
    113: "known_local_fn_to_apply",
    116: "known_local_fn_to_apply",
    119: "known_local_fn_to_apply",
    121: "constant_function_refused",
    122: "known_local_fn_to_apply",
    123: "known_local_fn_to_apply",
    125: "known_local_decorator",
    126: "known_local_fn_to_apply",
    127: "known_local_decorator",
    129: "constant_function_refused",
    131: "known_local_fn_to_apply",
    135: "known_local_fn_to_apply",
    137: "known_local_fn_to_apply",
    142: "known_local_decorator",
    143: "known_local_decorator",
    144: "known_local_fn_to_apply",
    147: "known_negative_constant_power",
    149: "known_local_fn_to_apply",
    150: "known_list_concatenation",
    152: "known_negative_constant_power",
    153: "constant_function_refused",
    154: "known_negative_constant_power",
    156: "known_local_fn_to_apply",
    160: "constant_function_refused",
    161: "known_local_fn_to_apply",
    164: "known_local_fn_to_apply",
    165: "constant_function_refused",
    167: "known_late_binding",
    168: "known_late_binding",
    169: "known_local_decorator",
    170: "known_local_fn_to_apply",
    171: "known_local_decorator",
    173: "known_local_fn_to_apply",
    174: "known_local_fn_to_apply",
    176: "known_lambda_in_listcomp",
    177: "known_local_decorator",
    178: "known_negative_constant_power",
    180: "known_lambda_in_listcomp",
    181: "closure_returns_captured",
    182: "known_local_fn_to_apply",
    183: "known_local_fn_to_apply",
    184: "augassign_of_captured_in_branch",
    186: "known_local_fn_to_apply",
    188: "known_local_decorator",
    190: "known_local_fn_to_apply",
    192: "known_local_fn_to_apply",
    197: "known_local_fn_to_apply",
    198: "known_local_decorator",
    199: "known_local_fn_to_apply",
    1000039: "constant_function_refused",
    1000053: "constant_function_refused",
    1000084: "constant_function_refused",
    1000143: "constant_function_refused",
}


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

SELF_CHECK_SEEDS = range(10_000, 10_040)


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
int_arg compose tuple_capture_unpack map
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
