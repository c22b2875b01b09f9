# ruff: noqa: B007, B023, F841  (the programs are what the fuzzer found, unused names and all)
"""crash: builtin max of two numbers, the name reassigned, then a loop reading it.

    s = max(x, x);  s = 0.5
    for i in range(1): t = s
    return s
cpsad (value_and_grad): StopIteration (in emitted code); right: 0.5, gradient 0.0 (jvp is right).
Features: maximum (builtin max), reassign, for_range.
"""


def f(x):
    s = max(x, x)
    s = 0.5
    for i in range(1):
        t = s
    return s


ARGS = (0.3,)
STATUS = "fixed"

if __name__ == "__main__":
    from tests.fuzz.findings import show

    show(__file__)
