"""Rules of ``power_slope(x, y) = y x^(y-1)``, the derivative of ``x ** y`` in ``x`` (0 for
``y == 0``), which the rules of ``**`` and ``pow`` call (cpsad/rules/operators.py).

Its rules are expressions of ``power_slope`` itself and numpy's functions, the log zero where
``x`` is (as ``pow``'s rule in ``y``): at ``y == 0``, where the slope is the constant 0, its
derivative in ``x`` is 0 too.
"""

from __future__ import annotations

import numpy as np

from cpsad.rules import operators as op
from cpsad.rules.core import defjvp, defvjp
from cpsad.runtime import unbroadcast


def power_slope_x(g, ans, x, y):
    """``y (y-1) x^(y-2) = y power_slope(x, y - 1)``; 0 for ``y == 0``, where the slope is the
    constant 0 (``y - (y != 0)`` keeps ``power_slope``'s own zero, not ``0 * inf``)."""
    return unbroadcast(g * y * op.power_slope(x, y - (y != 0)), x)


def power_slope_y(g, ans, x, y):
    """``x^(y-1) (1 + y log x)``, the log zero where ``x`` is (as ``pow_y``); ``np.power``:
    numpy's infinity at ``x = 0`` for ``y < 1``."""
    return unbroadcast(
        g
        * np.power(x, y - 1)
        * (1 + y * np.log(np.where(x == 0, 1, x), dtype=np.result_type(ans))),
        y,
    )


defvjp(op.power_slope, power_slope_x, power_slope_y)


def power_slope_x_jvp(t, ans, x, y):
    return t * y * op.power_slope(x, y - (y != 0))


def power_slope_y_jvp(t, ans, x, y):
    return (
        t * np.power(x, y - 1) * (1 + y * np.log(np.where(x == 0, 1, x), dtype=np.result_type(ans)))
    )


defjvp(op.power_slope, power_slope_x_jvp, power_slope_y_jvp)
