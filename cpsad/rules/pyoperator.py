"""Python's ``operator`` module, as composites: ``operator.mul`` is ``a * b``.

A user who passes ``operator.mul`` as a value (``functools.reduce(operator.mul, xs)``) means the
operator, and gets its derivative: each function here is the operator written out, registered with
``defcomposite``, so a call of it -- written in the code or through a value -- is transformed as
that expression, with the operator's rule for the kinds it meets (numbers, arrays, a list times an
int). Reverse and forward mode and every order come from those rules. (The in-place forms,
``operator.iadd`` and kin, change a list in place: not here, so they stay refused.)
"""

from __future__ import annotations

import builtins
import operator

from cpsad.rules.core import defcomposite


def add(a, b):
    return a + b


def sub(a, b):
    return a - b


def mul(a, b):
    return a * b


def truediv(a, b):
    return a / b


def floordiv(a, b):
    return a // b


def mod(a, b):
    return a % b


def pow(a, b):  # noqa: A001  (operator.pow's name)
    return a**b


def matmul(a, b):
    return a @ b


def neg(a):
    return -a


def pos(a):
    return +a


def abs(a):  # noqa: A001  (operator.abs's name)
    return builtins.abs(a)


def getitem(a, b):
    return a[b]


for _name in (
    "add",
    "sub",
    "mul",
    "truediv",
    "floordiv",
    "mod",
    "pow",
    "matmul",
    "neg",
    "pos",
    "abs",
):
    defcomposite(getattr(operator, _name), globals()[_name])
defcomposite(operator.getitem, getitem)
