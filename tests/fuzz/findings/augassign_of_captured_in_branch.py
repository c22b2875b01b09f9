# ruff: noqa: B007, B023, F841  (the programs are what the fuzzer found, unused names and all)
"""wrong-value: `x *= 2.0` in one branch is lost when a lambda in the other branch captures x.

    if y > 0.0: x *= 2.0
    else: g = lambda: x
    return x
cpsad (value_and_grad): value 0.3, gradient (1.0, 0.0) at x = 0.3, y = 1.0; right: 0.6 and
(2.0, 0.0) (jvp is right; with `x = x * 2.0` cpsad is right).
Features: if, else, aug_num, lambda, capture.
"""


def f(x, y):
    if y > 0.0:
        x *= 2.0
    else:
        g = lambda: x
    return x


ARGS = (0.3, 1.0)
STATUS = "fixed"

if __name__ == "__main__":
    from tests.fuzz.findings import show

    show(__file__)
