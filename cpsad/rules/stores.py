"""Rules of a store into an array the function made: ``out[key] = v`` runs as
``out = stored(out, key, v)``, a new array with the entries set (rebinding semantics, as JAX's
``out.at[key].set(v)``; where another name may hold the array the store is refused when it runs,
see ``runtime.check_in_place``).

``stored``'s adjoint gives the old array the adjoint with zeros where the entries were replaced
(``without``), and ``v`` the adjoint where it went (``stored_part``: summed over what ``v`` was
broadcast to, the last write only where an index repeats); its tangent is the old array's tangent
with ``v``'s placed there. ``stored_part`` and ``placed_part`` are linear in their first argument
and each other's transposes, so the emitted code that calls them is differentiated again too.
"""

from __future__ import annotations

from cpsad.rules.core import DISCRETE, defjvp, defvjp
from cpsad.runtime import placed_part, stored, stored_part, without


def stored_x(g, ans, x, key, v):
    """The replaced entries get nothing from what follows."""
    return without(g, key)


def stored_v(g, ans, x, key, v):
    return stored_part(g, ans, key, v)


defvjp(stored, stored_x, DISCRETE, stored_v)


def stored_x_jvp(t, ans, x, key, v):
    return without(t, key)


def stored_v_jvp(t, ans, x, key, v):
    return placed_part(t, ans, key)


defjvp(stored, stored_x_jvp, None, stored_v_jvp)


def stored_part_c(g, ans, c, out, key, value):
    return placed_part(g, out, key)


defvjp(stored_part, stored_part_c, DISCRETE, DISCRETE, DISCRETE)


def stored_part_c_jvp(t, ans, c, out, key, value):
    return stored_part(t, out, key, value)


defjvp(stored_part, stored_part_c_jvp, None, None, None)


def placed_part_c(g, ans, c, out, key):
    return stored_part(g, out, key, c)


defvjp(placed_part, placed_part_c, DISCRETE, DISCRETE)


def placed_part_c_jvp(t, ans, c, out, key):
    return placed_part(t, out, key)


defjvp(placed_part, placed_part_c_jvp, None, None)
