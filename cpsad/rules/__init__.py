"""The derivative rules: a table of small named functions, grouped by family.

Importing this package registers every family; ``defvjp`` adds a rule of your own.
"""

from cpsad.rules import (  # noqa: F401
    containers,
    elementwise,
    emitted,
    joining,
    linalg,
    nondiff,
    operators,
    reductions,
    shape,
)
from cpsad.rules.core import DISCRETE, defjvp, defnondiff, defvjp, is_nondiff, lookup  # noqa: F401
