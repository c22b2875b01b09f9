# ruff: noqa: B007, B023, F841  (the programs are what the fuzzer found, unused names and all)
"""wrong-value: a function value returns the very array a closure captured; `+=` then changes it.

    acc = 1.0 - np.linspace(...);  g = lambda u: acc;  fs = [g, ...]
    for fn in fs: v = fn(v)          (v is now acc itself)
    v += 0.5;  return np.sum(acc)
Python: acc changed in place (sum 3.0); cpsad: 1.5, the rebinding's -- not refused, since the
alias analysis took a call through a function value to return only what it was given. (Seed
20706.) A call of a function value may return what the closures it may be read: now refused
when it runs, where `v` is `acc`.
Features: capture, fn_list, call_fn_value, aug_array.
"""

import numpy as np


def f(y):
    acc4 = 1.0
    acc4 -= np.linspace(0.5, 0.5, 3)
    g8 = lambda u9: acc4

    def g10(u11):
        return u11

    fs12 = [g8, g10]
    vec13 = 1.0
    for fn in fs12:
        vec13 = fn(vec13)
    vec13 += 0.5
    return np.sum(acc4) * y


ARGS = (1.0,)
STATUS = "fixed"

if __name__ == "__main__":
    from tests.fuzz.findings import show

    show(__file__)
