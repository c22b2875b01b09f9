# ruff: noqa: B007, B023, F841  (the programs are what the fuzzer found, unused names and all)
"""crash: UnboundLocalError after a tuple assignment and a `while` whose body may return.

    m, s = x * 2.0, 1.0
    k = 0
    while k:
        if m: return 0.0
    m = m * 3.0
    return m
cpsad: UnboundLocalError: cannot access local variable 'm_5' where it is not associated with a
value (in emitted code); right: 1.8 and gradient 6.0 (jvp is right). Without the tuple
assignment, or without the `if ...: return` in the loop, it works.
Features: unpack, while, early_return.
"""


def f(x):
    m, s = x * 2.0, 1.0
    k = 0
    while k:
        if m:
            return 0.0
    m = m * 3.0
    return m


ARGS = (0.3,)
STATUS = "fixed"

if __name__ == "__main__":
    from tests.fuzz.findings import show

    show(__file__)
