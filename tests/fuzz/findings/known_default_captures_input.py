# ruff: noqa: B007, B023, F841  (the programs are what the fuzzer found, unused names and all)
"""wrong-grad (on the lead's list): a default that captures an input.

    def g(u, c=x): return u * c;   f(x) = g(2.0)
cpsad: gradient 0.0 (right: 2.0).
Features: default_capture, default_arg, local_def.
"""


def f(x):
    def g(u, c=x):
        return u * c

    return g(2.0)


ARGS = (0.3,)
STATUS = "fixed"

if __name__ == "__main__":
    from tests.fuzz.findings import show

    show(__file__)
