"""crash (forward mode): TypeError: unsupported operand type(s) for *: 'NoneType' and 'float'.

    def f(v):
        d = {"u": Dist(v[2], real=v[0]), "v": Dist(1.3)}   # one struct of constants
        return sum(g.size * g.real for g in d.values())

The dict's tangent has no entry for the struct of constants (``tangent_zeros`` of a struct is
None), and ``field_tangent`` handed that None on as the tangent of `g.size`, which the emitted
code multiplied. Reverse mode was right. Fixed: ``field_tangent`` of a struct without tangent is
the field's zero (and ``dict_view_tangent`` reads missing entries the same way).

Found by the fuzzer (python -m tests.fuzz --seed 841570 --n 1 --features: `struct_reached`, a
dict's values), reduced by hand; wrong before this session too.
Features: struct, attribute_fields, dict, listcomp.
"""

import dataclasses

import numpy as np


@dataclasses.dataclass
class Dist:
    size: object
    real: object = 0.5


def f(v):
    d = {"u": Dist(v[2], real=v[0]), "v": Dist(1.3)}
    return sum(g.size * g.real for g in d.values())


ARGS = (np.array([0.3, 0.5, 0.7]),)
STATUS = "fixed"

if __name__ == "__main__":
    from tests.fuzz.findings import show

    show(__file__)
