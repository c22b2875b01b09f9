# ruff: noqa: B007, B023, F841  (the programs are what the fuzzer found, unused names and all)
"""crash: a `while` loop inside a `for ... else`.

    for i in range(1): pass
    else:
        k = 0
        while k < 3: k += 1
    return x * 2.0
cpsad (reverse and forward): TypeError: '<' not supported between instances of 'NoneType' and
'int' (in emitted code). Right: 0.6, gradient 2.0. A `for` loop with `acc -= 3` in the `else`
crashes the same way (unsupported operand type(s) for -: 'NoneType' and 'int').
Features: for_else, while.
"""


def f(x):
    for i in range(1):
        pass
    else:
        k = 0
        while k < 3:
            k += 1
    return x * 2.0


ARGS = (0.3,)
STATUS = "fixed"

if __name__ == "__main__":
    from tests.fuzz.findings import show

    show(__file__)
