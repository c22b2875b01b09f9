# ruff: noqa: B007, B023, F841  (the programs are what the fuzzer found, unused names and all)
"""wrong-grad: a lambda written in the call, passed to a one-line helper, gets no gradient.

    def apply(fn, v): return fn(v)
    f(x) = apply(lambda u: u * x, 2.0)
cpsad (reverse and forward): gradient 0.0; right: 2.0. Silently wrong where a named local lambda
passed the same way is refused (the lead's list); `apply(lambda unused: expr, 0.0)` of any
expression of captured values is 0 or wrong (the metamorphic "apply" rewrite).
Features: lambda_inline, apply_1line, capture.
"""


def apply(fn, v):
    return fn(v)


def f(x):
    return apply(lambda u: u * x, 2.0)


ARGS = (0.3,)
STATUS = "fixed"

if __name__ == "__main__":
    from tests.fuzz.findings import show

    show(__file__)
