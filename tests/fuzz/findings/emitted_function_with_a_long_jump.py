# ruff: noqa: B007, B023, E501, F821, F841  (the programs are what the fuzzer found, unused names and all)
"""refused: a local function called as a value, long enough that a jump in it needs two bytes.

    def g3(u4):
        if (s1 * s1) <= 0.46:
            mat5 = np.where(...)                      # (a long line: many instructions)
            if np.sum(mat5) >= (-0.4):
                pass
            elif np.exp(np.tanh(s1)) > 0.31 and np.sin(s1) < 1.2:
                pass
        ...
    k6 = g3
    vec7 = k6(np.minimum(w, (-1.04)))
cpsad: TransformError "the source file of `__cpsad_factory__.<locals>.f_bp.<locals>.g3` changed
since it was imported" -- it had not. `g3`, called through `k6`, is differentiated when called,
from the emitted code that defines it; Parse checks that those lines compile to the code that
runs by compiling them after `import np`, where the emitted module binds `np` inside a function:
then every `np.f(...)` call has one instruction more, a jump's offset passes 255 in one form
only, and the `EXTENDED_ARG` it needs was compared as an instruction.
Right: the gradient (central differences agree; autograd too). Found by `python -m tests.fuzz`
(seed 420634), as generated: the bytes of each instruction decide it.
Features: local function called through an alias, branches, `and` in an `elif`.
"""

import numpy as np


def f(v, w):
    s1 = 0.4
    mat2 = ((np.ones((3, 3)) * (-0.29)) + (((np.eye(3) * 0.8) ** 2) @ np.diag(v)))
    def g3(u4):
        if (s1 * s1) <= 0.46:
            u4 = np.sinc(np.square(u4))
        elif np.maximum(s1, s1) <= 0.05:
            mat5 = np.where((np.arange(9.0).reshape(3, 3) * 0.21) > 0.0, (np.arange(9.0).reshape(3, 3) * 0.21), 0.2 * (np.arange(9.0).reshape(3, 3) * 0.21))
            if np.sum(mat5) >= (-0.4):
                pass
            elif np.sum(mat5) < (-0.0):
                pass
            elif np.exp(np.tanh(s1)) > 0.31 and np.sin(s1) < 1.2:
                pass
            else:
                pass
        elif s1 < 0.78:
            pass
        return np.stack([np.sqrt(1.0 + s1 ** 2), (s1 - s1), s1])
    k6 = g3
    vec7 = k6(np.minimum(w, (-1.04)))
    return (-1.16) * np.trace(mat2) + 0.52 * np.sum(vec7)


ARGS = (
    np.array([0.3, -0.2, 0.5]),
    np.array([-1.2, 0.1, -1.5]),
)
STATUS = "fixed"

if __name__ == "__main__":
    from tests.fuzz.findings import show

    show(__file__)
