# ruff: noqa: B007, B023, F841  (the programs are what the fuzzer found, unused names and all)
"""crash: lambdas with a default taken from a variable reassigned between them, kept in a list.

    i = 0;  fs.append(lambda u, i=i: u * (i + 1))
    i = 1;  fs.append(lambda u, i=i: u * (i + 1))
    return fs[0](x) + fs[1](x)
cpsad (value_and_grad): NameError: name 'i_1' is not defined (in emitted code); right: 0.9,
gradient 3.0 (jvp is right). (What `for i in range(2): fs.append(lambda u, i=i: ...)` becomes
when unrolled: the metamorphic "unroll" rewrite.)
Features: default_binding, default_arg, append, lambda, fn_in_list.
"""


def f(x):
    fs = []
    i = 0
    fs.append(lambda u, i=i: u * (i + 1))
    i = 1
    fs.append(lambda u, i=i: u * (i + 1))
    return fs[0](x) + fs[1](x)


ARGS = (0.3,)
STATUS = "fixed"

if __name__ == "__main__":
    from tests.fuzz.findings import show

    show(__file__)
