# ruff: noqa: B007, B023, F841  (the programs are what the fuzzer found, unused names and all)
"""crash (on the lead's list): lambdas made in a list comprehension.

cpsad: NameError: name 'i' is not defined (or SyntaxError "no binding for nonlocal ... found"
in the emitted module); right: 2 * x (late binding: i is 2).
Features: listcomp, late_binding, lambda.
"""


def f(x):
    fs = [lambda u: u * i for i in range(3)]
    return fs[0](x)


ARGS = (0.3,)
STATUS = "fixed"

if __name__ == "__main__":
    from tests.fuzz.findings import show

    show(__file__)
