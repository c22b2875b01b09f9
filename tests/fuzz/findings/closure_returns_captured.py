# ruff: noqa: B007, B023, F841  (the programs are what the fuzzer found, unused names and all)
"""wrong-grad: a closure that returns a captured variable unchanged drops adjoints.

    g = lambda u: x;  f(x) = g(0.5) + g(0.5)
cpsad: df/dx = 1.0 (the right value is 2.0; cpsad.jvp gives 2.0). With g(g(0.5)) it gives 0.0.
The emitted `g_bp` does `x_bar = acc(x_bar, k(x))`: it reads x_bar *before* calling the
continuation, which adds the other call's contribution to x_bar, and then overwrites it.
Features: lambda or local def, capture, a function value called more than once (also through
lists, tuples, dicts, loops over functions and helpers: the commonest silent wrong gradient of
the fuzzer's closure programs).
"""


def f(x):
    g = lambda u: x
    return g(0.5) + g(0.5)


ARGS = (0.3,)
STATUS = "fixed"

if __name__ == "__main__":
    from tests.fuzz.findings import show

    show(__file__)
