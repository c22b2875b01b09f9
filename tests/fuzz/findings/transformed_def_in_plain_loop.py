# ruff: noqa: B007, B023, F841  (the programs are what the fuzzer found, unused names and all)
"""crash: `NameError: name 'g12' is not defined` in emitted code.

    def g12(u13): return u13
    for i21 in range(1):
        def g22(u23): return g12(v)
        s28 = apply_all([g22, 0.5], 0.5)
cpsad: `g12` became `g12_bp` (a function used as a value calls it with an input), `g22` was
transformed to call that -- but the loop's function that defines `g22` was not, so the plain
`g22` stayed, calling the `g12` that no longer exists. (Seeds 31150, 37009, 38069, 38241,
40226, 47270, 47319, 48836, 49382, 49434.) The function that defines a transformed function is
transformed too.
Features: local_def, closure_helper, fn_in_list, for_range.
"""


def apply_all(fns, v):
    fn = fns[0]
    total = fn(0.5)


def f(v):
    def g12(u13):
        return u13

    for i21 in range(1):

        def g22(u23):
            return g12(v)

        s28 = apply_all([g22, 0.5], 0.5)
    return 0.5 + v


ARGS = (0.3,)
STATUS = "fixed"

if __name__ == "__main__":
    from tests.fuzz.findings import show

    show(__file__)
