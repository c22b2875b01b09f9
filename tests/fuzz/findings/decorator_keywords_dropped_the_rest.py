# ruff: noqa: B007, B023, F841  (the programs are what the fuzzer found, unused names and all)
"""crash: a decorated helper called with keywords; the wrapper forwards `**kwargs`.

    def double(fn):
        def wrapper(*args, **kwargs): return fn(*args, **kwargs)
        return wrapper
    vec7 = helper5(a6=q);  return np.sum(q) + vec7
cpsad: `TypeError: unsupported operand type(s) for +: 'NoneType' and 'float'` in emitted code --
Simplify removed `call_bp(fn, after_L5, ...)` from the wrapper's backpropagator as a pure
runtime helper whose result was unused, and with it the continuation: the rest of `f` never
ran. (Seeds 21111, 21484, 21620, 21838, 22520.) A helper given a function (a continuation) is
no longer pure. Beneath it, `**kwargs` holding an array was refused when it ran: the dispatch
now returns (and, forward, takes) the adjoints (tangents) of keyword arguments
(`call_bp_keywords`, `call_jvp_keywords`).
Features: decorator, helper_call, keyword_args.
"""

import numpy as np


def double(fn):
    def wrapper(*args, **kwargs):
        return fn(*args, **kwargs)

    return wrapper


@double
def helper5(a6):
    return 0.5


def f(q):
    total2 = q
    vec7 = helper5(a6=q)
    s1 = vec7
    return np.sum(total2) + s1


ARGS = (np.array([0.63, 0.2, -0.78]),)
STATUS = "fixed"

if __name__ == "__main__":
    from tests.fuzz.findings import show

    show(__file__)
