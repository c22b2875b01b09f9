# ruff: noqa: B007, B023, F841  (the programs are what the fuzzer found, unused names and all)
"""wrong-value (on the lead's list): `(-0.5) ** 2` is emitted as `-0.5 ** 2`.

cpsad: value -0.25 * x; right 0.25 * x (and `math.sqrt(1.0 + (-1.2) ** 2 ...)` of such a value
raises "math domain error" inside emitted code).
Features: neg_const_pow.
"""


def f(x):
    return x * (-0.5) ** 2


ARGS = (0.3,)
STATUS = "fixed"

if __name__ == "__main__":
    from tests.fuzz.findings import show

    show(__file__)
