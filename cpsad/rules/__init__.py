"""The derivative rules: a table of small named functions, grouped by family.

Importing this package registers every family; ``defvjp`` adds a rule of your own.
"""

from cpsad.rules import (  # noqa: F401
    composite,
    containers,
    elementwise,
    emitted,
    fft,
    joining,
    linalg,
    nondiff,
    operators,
    pyoperator,
    reductions,
    scipy_integrate,
    scipy_linalg,
    scipy_special,
    scipy_stats,
    shape,
    stores,
)
from cpsad.rules.core import (  # noqa: F401
    DISCRETE,
    defcomposite,
    defjvp,
    defnondiff,
    defvjp,
    is_nondiff,
    lookup,
)
