# ruff: noqa: B007, B023, F841  (the programs are what the fuzzer found, unused names and all)
"""crash: a list holding one closure twice, passed to a helper, crashes the backward pass.

    h = make(x);  apply_all([h, h], 1.0) + x       (apply_all need not even call them)
cpsad: TypeError: unsupported operand type(s) for +: 'NoneType' and 'NoneType' (in emitted
code; the adjoints of the two entries, both None, are added). With [h] alone it works.
Features: fn_returned, fn_in_list, helper_call.
"""


def apply_all(fns, v):
    return 0.5


def make(c):
    def inner(u):
        return u

    return inner


def f(x):
    h = make(x)
    return apply_all([h, h], 1.0) + x


ARGS = (0.3,)
STATUS = "fixed"

if __name__ == "__main__":
    from tests.fuzz.findings import show

    show(__file__)
