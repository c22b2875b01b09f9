# ruff: noqa: B007, B023, F841  (the programs are what the fuzzer found, unused names and all)
"""wrong-grad: a variable a closure captures is a cell; a rule that reads its result reads the
cell's later value.

    s = 0.5 / x;  s = 0.5 + s;  def g(): return s  (never called);  return s
cpsad: -7.2222 at x = 0.3; the right value is -5.5556 (cpsad.jvp and autograd agree).
The adjoint of `0.5 / x` is written with its result, `-s_bar * s / x`, and `s` (a cell, since
`g` captures it) holds 0.5 + 0.5/x by then. The same with `nonlocal`: `total = np.exp(x);
def bump(): nonlocal total; total = total * 0.5` gives half the gradient (exp, tanh, sqrt,
norm: every rule that reads its output).
Features: capture, capture_reassigned, nonlocal, np_elementwise, div.
"""


def f(x):
    s = 0.5 / x
    s = 0.5 + s

    def g():
        return s

    return s


ARGS = (0.3,)
STATUS = "fixed"

if __name__ == "__main__":
    from tests.fuzz.findings import show

    show(__file__)
