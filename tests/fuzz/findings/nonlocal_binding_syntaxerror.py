# ruff: noqa: B007, B023, F841  (the programs are what the fuzzer found, unused names and all)
"""crash: the emitted module does not compile ("no binding for nonlocal").

A local def beside a keyword argument whose value is a conditional expression:
cpsad: SyntaxError: no binding for nonlocal 's3_bar' found (the emitted backpropagator). Right:
value 2.99457, gradient (1.0, 0.0). The same SyntaxError (with `g5_bar`, `lambda_L16_bar`, ...)
is the commonest crash of the fuzzer: tuples of functions iterated, lambdas in comprehensions,
functions passed to helpers.
Features: local_def, keyword_arg, ternary, helper_call.
"""

import numpy as np


def helper14(a15):
    return np.eye(3)


def f(x, y):
    s1 = x
    s3 = 1.0

    def rec11(u12, m13):
        return u12

    s10 = rec11(s1, 3)
    mat16 = helper14(a15=y if 2 else s3)
    return s10 + np.trace(mat16)


ARGS = (-0.00542679190400297, 0.8806767088884426)
STATUS = "fixed"

if __name__ == "__main__":
    from tests.fuzz.findings import show

    show(__file__)
