# ruff: noqa: B007, B023, F841  (the programs are what the fuzzer found, unused names and all)
"""wrong-value: `x *= c` inside an `if` is lost when a loop before it read `x`.

    for i in range(1): y = x
    if x > -5.0: x *= 0.5
    return x
cpsad (value_and_grad): value 0.3, gradient 1.0; right: 0.15 and 0.5 (jvp is right).
The loop makes `x` "maybe shared", so `x *= 0.5` becomes `x_5 = inplace_mul(x, 0.5)`, but the
continuation after the `if` (`after_if_L..`) still returns `x`.
Features: for_range, if, aug_num.
"""


def f(x):
    for i in range(1):
        y = x
    if x > -5.0:
        x *= 0.5
    return x


ARGS = (0.3,)
STATUS = "fixed"

if __name__ == "__main__":
    from tests.fuzz.findings import show

    show(__file__)
