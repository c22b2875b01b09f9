# ruff: noqa: B007, B023, F841  (the programs are what the fuzzer found, unused names and all)
"""crash: `TypeError: unsupported operand type(s) for +: 'float' and 'NoneType'`.

    def g12(u13):
        g16 = lambda u17: y
        s18 = g16(twice(g16)(0.5))
        return y
    s26 = g12(0.5)          (unused)
cpsad: the continuation of `g12(0.5)` returned nothing (its result reaches nothing), but
`g12`'s backpropagator adds what its continuation returns to `y`'s adjoint (`y` is active inside
it): `y_bar + None`. (Seed 33390.) Such a continuation returns a zero.
Features: local_def, lambda, fn_returned, call_fn_value.
"""


def twice(fn):
    def both(t):
        pass

    return both


def f(y):
    def g12(u13):
        g16 = lambda u17: y
        s18 = g16(twice(g16)(0.5))
        return y

    s26 = g12(0.5)
    return 1.0 + y


ARGS = (-0.08,)
STATUS = "fixed"

if __name__ == "__main__":
    from tests.fuzz.findings import show

    show(__file__)
