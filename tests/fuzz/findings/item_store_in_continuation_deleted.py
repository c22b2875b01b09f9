# ruff: noqa: B007, B023, F841  (the programs are what the fuzzer found, unused names and all)
"""crash: `UnboundLocalError` in emitted code -- a `del` of an enclosing function's dict.

    def g10(u11):
        d14 = {'a': 0.5, 'b': 0.5}
        d14['c'] = apply_twice(h2, s12)       (the rest of g10 runs in a continuation)
cpsad: Release counted `d14['c'] = ...` in the continuation as an assignment of `d14` there and
put `del d14` after it, which made `d14` the continuation's own variable, unbound. (Seed
22067.) A store into an item binds nothing.
Features: dict_store, closure_helper, fn_in_list, call_fn_value.
"""


def apply_twice(fn, v):
    twice = fn(0.5)


def apply_all(fns, v):
    fn = fns[0]
    total = fn(0.5)


def f(x):
    g3 = lambda u4: 0.5
    h2 = g3

    def g10(u11):
        s12 = x
        d14 = {"a": 0.5, "b": 0.5}
        d14["c"] = apply_twice(h2, s12)
        return 0.5

    h9 = g10
    s17 = apply_all([h9, 0.5], 0.5)
    return 0.5 + x


ARGS = (-0.28,)
STATUS = "fixed"

if __name__ == "__main__":
    from tests.fuzz.findings import show

    show(__file__)
