# ruff: noqa: E731, F811  (the program is what the fuzzer found, its lambdas and all)
"""crash: InternalError: aliasing: no fixpoint.

    def g3(u4):
        return np.sum(A)
    g3 = lambda u6: apply_twice(g3, u6)    # refers to itself as a value
    fs = [lambda u, i=i: u * i for i in range(3)]
    for fn in fs: ...

Aliasing analyses each function again while a function it depends on changes, and noted, for
each, the versions it had seen of the functions it *calls* -- not of those it refers to as
values, though they too make it depend on them (and count it among their callers). The lambda
refers to itself as a value: each pass over it found a version it had "not seen" of itself, and
put itself back, forever (100 passes per function, then the assertion). Fixed: a function notes
the versions of every function it uses, called or referred to.

Found by the fuzzer (python -m tests.fuzz --show 551279, the feature redefined_fn), then reduced.
Features: local_def, lambda, redefined_fn, apply_multi, listcomp, for_seq.
"""

import numpy as np


def apply_twice(fn, v):
    return fn(fn(v))


def f(A):
    def g3(u4):
        return np.sum(A)

    g3 = lambda u6: apply_twice(g3, u6)
    fs = [lambda u, i=i: u * i for i in range(3)]
    s = 0.0
    for fn in fs:
        s = s + fn(A[1, 0])
    return s + np.sum(A)


ARGS = (np.array([[0.5, -1.0, 0.25], [1.5, 0.75, -0.5], [0.3, 0.2, -0.9]]),)
STATUS = "fixed"

if __name__ == "__main__":
    from tests.fuzz.findings import show

    show(__file__)
