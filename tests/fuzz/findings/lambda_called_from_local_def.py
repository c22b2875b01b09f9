# ruff: noqa: B007, B023, F841  (the programs are what the fuzzer found, unused names and all)
"""crash: a local def that calls a lambda of the enclosing function (result unused).

    g = lambda u: x * 2.0;  s = g(1.0)
    def h(u): g(0.5)
    h(1.0);  return s
cpsad (reverse and forward): NameError: name 'g' is not defined (in emitted code). Right: 0.6,
gradient 2.0.
Features: lambda, local_def, capture (a function value captured by another closure).
"""


def f(x):
    g = lambda u: x * 2.0
    s = g(1.0)

    def h(u):
        g(0.5)

    h(1.0)
    return s


ARGS = (0.3,)
STATUS = "fixed"

if __name__ == "__main__":
    from tests.fuzz.findings import show

    show(__file__)
