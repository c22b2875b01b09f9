# ruff: noqa: B007, B023, F841  (the programs are what the fuzzer found, unused names and all)
"""wrong-value: Simplify merged a copy whose target is assigned again while the source is read.

    s3 = 1.0;  s4 = s3;  s4 += 1.0;  s7 = s3;  return s7 * x
Python: 0.1 * 1.0; cpsad: 0.2 -- `s3` was renamed `s4`, so `s7 = s3` read the `s4` of after
`+=`. (Seed 64649 of 50000..69999.) A copy is merged only where the source is not read after
the target is assigned again.
Features: assign, aug_num, list_extend.
"""


def f(x):
    xs1 = []
    xs1.extend([1.0, x])
    s3 = xs1
    s3 = 1.0
    s4 = s3
    s4 += 1.0
    s7 = s3
    return s7 * x


ARGS = (0.1,)
STATUS = "fixed"

if __name__ == "__main__":
    from tests.fuzz.findings import show

    show(__file__)
