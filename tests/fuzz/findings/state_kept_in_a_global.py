# ruff: noqa: B007, B023, F841  (the programs are what the fuzzer found, unused names and all)
"""wrong-grad: a differentiated value kept in a global list by one helper, fetched back by another.

    def remember(v): MEMORY.append(v)
    def recall(): return MEMORY[-1]
    remember(vec7);  s8 = np.sum(recall())
Python: the gradient of np.sum(v) (ones); cpsad: zeros -- `remember`'s result was unused, so it
ran as plain Python, and `recall()` (no differentiated argument) was a constant to cpsad. The
derivative travels through module state, which a source transformation cannot follow. Now
refused at the user's line: a call of a helper that may keep its arguments in state outside it
is transformed, and storing a value that depends on the inputs into a global (or an enclosing
function's variable cpsad does not transform) is a TransformError there. (Seeds 12 and 24 of the
grammar with `global_state`; the aliasing twin -- the stored array changed in place, `MEMORY`
holding it -- is refused when it runs.)
Features: global_state, helper_call.
"""

import numpy as np

MEMORY = []


def remember(v):
    MEMORY.append(v)


def recall():
    return MEMORY[-1]


def f(v):
    vec5, s6 = (v, 0.5)
    vec7 = vec5
    remember(vec7)
    s8 = np.sum(recall())
    return s8


ARGS = (np.array([1.072, -0.746, -0.770]),)
STATUS = "fixed"

if __name__ == "__main__":
    from tests.fuzz.findings import show

    show(__file__)
