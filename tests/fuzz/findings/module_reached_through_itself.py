# ruff: noqa: B007, B023, F821, F841  (the programs are what the fuzzer found, unused names and all)
"""refused: a module that reaches its own helper through a name bound to itself.

    lib = sys.modules[__name__]
    ...
            vec12 = lib.apply(g10, np.exp(np.tanh(w)))
cpsad: TransformError "the source file of `f` changed since it was imported" -- it had not.
Parse checks that the file's lines still compile to the code that runs, compiling them after
`import lib` for each module the function reads: but `lib` is bound by an assignment, and
Python 3.11 calls a method of an imported name with other instructions (a jump moved by one).
Right: the gradient (central differences agree). Found by `python -m tests.fuzz --rewrite module`
(seed 360030), which calls a program's helpers through its module.
Features: module attribute, branches, loops, local functions, lambdas.
"""

import sys

import numpy as np

lib = sys.modules[__name__]


def apply(fn, v):
    return fn(v)


def f(v, w, A):
    s1 = np.arctan(0.42) + 0.1 * w[0]
    if s1 + s1 >= 0.04:
        if s1 <= 0.6:
            return s1 * s1 - (s1 + s1)
    elif s1**2 > 0.48 and w[2] * s1 < 1.7:
        s1 = np.cos(s1)
        fs2 = []
        for i3 in range(3):
            fs2.append(lambda u4: u4 * (i3 + 1) * 0.4 + s1)
        s5 = np.percentile(v, 10)
        for fn in fs2:
            s5 = s5 + fn(np.percentile(v, 10))
        for i6 in range(4):

            def g7(u8):
                A = np.matmul(np.outer(w, v), np.eye(3) * 0.6)
                if i6 * 0.6 * u8 >= 0.3:
                    A = np.maximum(A, 0.83)

            s9 = g7(s1 + s1)

            def g10(u11):
                return np.exp(np.tanh(w @ A))

            vec12 = lib.apply(g10, np.exp(np.tanh(w)))
    return 0.55 * s1 + 0.3 * np.sum(A) + 0.65 * w[0] + 0.7 * s13


ARGS = (
    np.array([0.3, -0.2, 0.5]),
    np.array([0.4, 0.1, -0.3]),
    np.array([[0.5, -0.2, 0.1], [0.3, 0.8, -0.6], [-0.4, 0.2, 0.9]]),
)
STATUS = "fixed"

if __name__ == "__main__":
    from tests.fuzz.findings import show

    show(__file__)
