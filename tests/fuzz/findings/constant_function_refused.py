# ruff: noqa: B007, B023, F841  (the programs are what the fuzzer found, unused names and all)
"""bad refusal: a local function whose result does not depend on its parameter.

    g = lambda u: 2.0;  return g(x) + x
cpsad: TransformError "`g` has no derivative rule and cpsad cannot read its source" (the call
of a constant function on a differentiable value). Right: 2.0 + x, gradient 1.0. A list
comprehension with a constant element, `ys = [1.0 for e in v]; np.sum(ys)`, is refused the same
way ("`listcomp_L..` has no derivative rule ..."): its desugared function is one too. Most of the
bad refusals of programs without a one-line `apply` are this.
Features: lambda, local_def, listcomp.
"""


def f(x):
    g = lambda u: 2.0
    return g(x) + x


ARGS = (0.3,)
STATUS = "fixed"

if __name__ == "__main__":
    from tests.fuzz.findings import show

    show(__file__)
