# ruff: noqa: E731  (the program is what the fuzzer found, its lambdas and all)
"""wrong-grad: the gradient through a lambda that its name was later bound again.

    g = lambda u: u + x
    h = g
    s = h(x)                       # 2x: the first lambda, called through a value
    g = lambda u: u * x            # the name defined again
    return s + g(x)                # 2x + x**2: the gradient is 2 + 2x

cpsad returned 1 + 2x, in both modes: the first lambda ran as a plain function, its `x` (a
variable it reads) a constant. Activity finds a local function used as a value by its name,
and kept one function per name: the last defined. So the first lambda was never seen to be
used as a value, its parameters and result never made active, and it was not transformed; the
dispatch then differentiated it for its parameter `u` alone. Aliasing kept one function per
name the same way. Fixed: both keep every function a name is defined by in a scope, and a
value read of the name may be any of them.

Found while reducing the fuzzer's seed 530441 (python -m tests.fuzz --seed 530441 --n 1
--rewrite unroll, whose unrolled loop defines a lambda twice), with the result made to read
the first lambda's value.
Features: lambda, alias_fn, call_fn_value, capture.
"""


def f(x):
    g = lambda u: u + x
    h = g
    s = h(x)
    g = lambda u: u * x
    return s + g(x)


ARGS = (0.3,)
STATUS = "fixed"

if __name__ == "__main__":
    from tests.fuzz.findings import show

    show(__file__)
