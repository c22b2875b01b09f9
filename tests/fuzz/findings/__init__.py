"""Reduced programs on which cpsad fails, one file per distinct cause, found by the fuzzer.

Each file is a module with the entry function ``f``, its arguments ``ARGS``, ``STATUS`` ("open"
while cpsad fails on it, "fixed" once it does not) and a docstring saying what cpsad returns, what
is right, and which features are involved. ``python -m tests.fuzz.findings.NAME`` shows the
verdict; tests/test_fuzz.py judges every file (``xfail(strict=True)`` while open, a regression
test once fixed).
"""

from __future__ import annotations

import importlib.util
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))


def files() -> list:
    return sorted(f for f in os.listdir(HERE) if f.endswith(".py") and not f.startswith("_"))


def _kind(v):
    if isinstance(v, bool):
        raise TypeError(v)
    if isinstance(v, int):
        return "I"
    if isinstance(v, float):
        return "S"
    return {1: "V", 2: "M"}[np.ndim(v)]


def _literal(v) -> str:
    if isinstance(v, np.ndarray):
        return f"np.array({v.tolist()!r})"
    return repr(v)


def program_of(name: str):
    """The ``Program`` of the finding ``name`` (a file of this folder), and its ``STATUS``."""
    from tests.fuzz.gen import Program

    path = os.path.join(HERE, name)
    spec = importlib.util.spec_from_file_location("cpsad_finding_" + name[:-3], path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod  # (as an import does: a module may look itself up there)
    spec.loader.exec_module(mod)
    with open(path) as fh:
        source = fh.read()
    import inspect

    params = list(inspect.signature(mod.f).parameters)
    prog = Program(0, source, [(p, _kind(a)) for p, a in zip(params, mod.ARGS)], set(), 0, mod.ARGS)
    return prog, getattr(mod, "STATUS", "open")


def render(small, key, seed, exclude=(), what="") -> str:
    """The text of a finding file for the reduced program ``small``."""
    cls, message = key
    how = f"python -m tests.fuzz --show {seed}" + (
        f" --exclude {','.join(exclude)}" if exclude else ""
    )
    args = ", ".join(_literal(v) for v in small.values) + ("," if len(small.values) == 1 else "")
    return (
        f'"""{cls}: {message or what}\n\n'
        f"Found by the fuzzer ({how}), then reduced.\n"
        '"""\n\n'
        f"{small.source.rstrip()}\n\n\n"
        f"ARGS = ({args})\n"
        'STATUS = "open"\n\n'
        'if __name__ == "__main__":\n'
        "    from tests.fuzz.findings import show\n\n"
        "    show(__file__)\n"
    )


def show(path: str) -> None:
    """Print a finding's verdict: Python's value, cpsad's, the gradient against differences."""
    import sys

    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(HERE))))
    from tests.fuzz.oracle import check

    prog, status = program_of(os.path.basename(path))
    r = check(prog)
    print(f"status {status}: {r.cls} {r.message}\n{r.detail}\njvp: {r.jvp_cls} {r.jvp_detail}")


# --------------------------------------------------------------------------- attribution

import re  # noqa: E402

# (class, what the message says, what the (reduced) source shows) -> the finding it reproduces,
# first match wins. A guess for the KNOWN tables of the CI set, checked by reading, not proof.
RULES = [
    ("bad-refusal", r"`listcomp_L\d+` has no derivative rule", r"", "constant_function_refused"),
    ("bad-refusal", r"cannot read its source", r"", "known_local_fn_to_apply"),
    ("refused", r"decorated function", r"", "known_local_decorator"),
    ("refused", r"unsupported statement", r"", "break_in_for_else"),
    ("refused", r"the attribute", r"", "helper_method_on_expression"),
    (
        "crash",
        r"no binding for nonlocal|NameError",
        r"lambda[^\n]*\bfor\b[^\n]*\]",
        "known_lambda_in_listcomp",
    ),
    ("crash", r"NameError", r"lambda \w+, (\w+)=\1", "default_of_reassigned_in_list"),
    ("crash", r"NameError", r"", "lambda_called_from_local_def"),
    ("crash", r"no binding for nonlocal", r"", "nonlocal_binding_syntaxerror"),
    ("crash", r"unsupported operand type\(s\) for \+", r"", "same_closure_twice_in_list"),
    (
        "crash",
        r"not supported between|unsupported operand type\(s\) for -",
        r"",
        "for_else_with_while",
    ),
    ("crash", r"StopIteration", r"", "max_builtin_stopiteration"),
    ("crash", r"UnboundLocalError", r"", "tuple_assign_while_return"),
    ("crash", r"called (on|with) differentiable values", r"", "constant_array_dot_method"),
    ("crash", r"math domain error", r"", "known_negative_constant_power"),
    ("crash", r"broadcast", r"", "linspace_is_a_number"),
    ("crash", r"IndexError: list index out of range", r"", "known_list_concatenation"),
    ("wrong-grad", r"gradient shape", r"linspace", "linspace_is_a_number"),
    ("wrong-grad", r"gradient shape", r"", "parameter_rebound_to_array"),
    ("wrong-value", r"", r"\(-\d[\d.]*\) \*\* ", "known_negative_constant_power"),
    ("wrong-value", r"", r"append\(lambda|lambda[^\n]*\bfor\b", "known_late_binding"),
    ("wrong-value", r"", r"\] \+ \[", "known_list_concatenation"),
    ("wrong-value", r"", r"lambda|def \w+\(", "augassign_of_captured_in_branch"),
    (
        "wrong-value",
        r"",
        r"\bfor\b[^\n]*\n(.*\n)*\s+\w+ [-+*]= ",
        "inplace_on_shared_array_not_refused",
    ),
    ("wrong-value", r"", r"", "augassign_in_if_after_loop"),
    ("wrong-grad", r"", r"\] \+ \[", "known_list_concatenation"),
    (
        "wrong-grad",
        r"",
        r"def \w+\(\w+, \w+=[a-z]\w*\)|lambda \w+, \w+=[a-z]",
        "known_default_captures_input",
    ),
    ("wrong-grad", r"", r"nonlocal", "cell_rule_reads_later_value"),
    ("wrong-grad", r"", r"apply\(lambda", "inline_lambda_through_apply"),
    ("wrong-grad", r"", r"lambda[^\n]*: \w+\n|return \w+\n", "closure_returns_captured"),
    ("wrong-grad", r"", r"lambda|def ", "cell_rule_reads_later_value"),
]


def _constant_function(message: str, source: str) -> bool:
    """Whether the function a refusal names is a lambda whose body ignores its parameter."""
    m = re.search(r"`(\w*[a-z0-9]\w*)` has no derivative rule", message or "")
    if not m:
        return False
    d = re.search(rf"\b{m.group(1)} = lambda (\w+): ([^\n]*)", source or "")
    return bool(d) and not re.search(rf"\b{d.group(1)}\b", d.group(2))


def attribute(cls: str, message: str, source: str) -> str:
    """The finding a failure of class ``cls`` with ``message`` on ``source`` most likely is."""
    if cls == "bad-refusal" and _constant_function(message, source):
        return "constant_function_refused"
    for c, msg, src, name in RULES:
        if c == cls and re.search(msg, message or "") and re.search(src, source or ""):
            return name
    return f"unattributed {cls}: {message}"
