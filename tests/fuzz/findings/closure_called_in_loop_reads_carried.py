# ruff: noqa: B007, B023, F841  (the programs are what the fuzzer found, unused names and all)
"""wrong-value: a closure made before a loop, called in it, reads the variable the loop rebinds.

    g = lambda u: s
    for i in range(2): s = g(0.5) * 2.0
Python: each call reads the variable's current value (one variable of `f`): 4 * x; cpsad (both
modes): 2 * x -- the loop carried `s` as a parameter of its function, so the closure read the
value from before the loop. (Seeds 21063, 22391, 22585, 22709, 22749 of 20000..22999, with
`while`, `for` over a sequence, `-=`, `*=` and `apply`.) The loop now declares such a variable
`nonlocal`, as it did for closures made inside the loop.
Features: capture, for_range, while, call_fn_value.
"""


def apply(fn, v):
    return fn(0.5)


def f(x):
    s = x
    g = lambda u: s
    for i in range(2):
        s = apply(g, 0.5) * 2.0
    k = 0
    while k < 2:
        k += 1
        s *= g(0.5)
    return s


ARGS = (0.7,)
STATUS = "fixed"

if __name__ == "__main__":
    from tests.fuzz.findings import show

    show(__file__)
