"""Rules of the functions emitted code calls: what makes emitted code differentiable again.

A backpropagator calls, by name, the runtime's helpers (``acc``, ``unbroadcast``,
``getitem_adjoint``, ...) and the rule functions that are not inlined (``matmul_x``, ``max_vjp``,
``cholesky_vjp``, ...); a forward-mode function calls ``broadcast_like``, ``tangent_or_zeros``, ...
To transform emitted code again -- ``grad(grad(f))``, Hessian-vector products -- each of those
needs rules of its own, in both directions, or is marked non-differentiable (``count``,
``zeros_like``: their results do not change with their inputs' values).

Most of them are linear in the adjoint (or tangent) they take, and every primitive's adjoint and
tangent rules are transposes of each other: the rule of ``max_vjp`` with respect to its ``g`` is
``max_vjp`` itself forward and ``max_jvp`` backward. The primal values a helper takes (``x``,
``ans``) are ordinary inputs of a numpy function here: where the helper reads only their shape or
which element was chosen, they are discrete; otherwise they get the helper's partial derivatives.
Where the helper switches formulas at zeros (``prod_vjp``, ``cumprod``), the partial derivatives
hold the zeros' positions fixed, and the derivative along a zero reaches the result through
``ans``: the two add up to the derivative of the helper along ``ans = f(x)``.

The parameters of a helper named ``g``, ``ans`` and ``t`` (which a rule's own first two parameters
are called) are ``c``, ``out`` and ``v`` here. A ``Sparse`` (a container's adjoint) has as its
adjoint and tangent a ``Sparse``; ``None`` (an absent adjoint) has ``None``, and is zero wherever a
rule receives it.

The rules are in families, one module each, whose docstring says what every rule in it
guarantees. Importing this package registers them in this order:

* ``nondiff`` -- the results that do not change with the values of the inputs;
* ``runtime`` -- the runtime's helpers that add, route and reshape adjoints (``acc``, ...);
* ``containers`` -- containers' and choices' helpers (``spread``, ``max_builtin``, ...);
* ``parts`` -- an array's adjoint cut into its parts, parts joined (``parts``, ``concatenate``);
* ``shapes`` -- axes and entries moved (``untranspose``, ``mT``, diagonals);
* ``reductions`` -- ``expand``, ``max``, ``var``, ``std``, ``cumsum``;
* ``products`` -- ``@``, ``np.dot``, ``np.einsum``; ``solve`` and ``cholesky`` -- the helpers of
  ``np.linalg.solve``'s and ``np.linalg.cholesky``'s rules;
* ``elements`` -- products of elements (``cumprod``, ``prod``), zeros handled;
* ``norms``, ``powers``, ``determinants`` -- ``np.linalg.norm``, ``**``, ``det`` and ``slogdet``;
* ``decompositions`` -- the helpers of eigh, eigvalsh, svd, qr and pinv's rules.
"""

# The rule modules whose helpers these are register first, as when the families were one module
# that imported them at its top; then the families, in the order above, not isort's: the order
# the rules register in stays what it was.
from cpsad.rules import containers as _ct  # noqa: F401
from cpsad.rules import elementwise as _el  # noqa: F401
from cpsad.rules import joining as _jn  # noqa: F401
from cpsad.rules import linalg as _la  # noqa: F401
from cpsad.rules import operators as _op  # noqa: F401
from cpsad.rules import reductions as _rd  # noqa: F401
from cpsad.rules import shape as _sh  # noqa: F401

# isort: off
from cpsad.rules.emitted import (  # noqa: F401
    nondiff,
    runtime,
    containers,
    parts,
    shapes,
    reductions,
    products,
    solve,
    cholesky,
    elements,
    norms,
    powers,
    determinants,
    decompositions,
)

# isort: on
