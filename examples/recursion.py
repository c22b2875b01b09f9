"""Recursion differentiated as the user wrote it: the continuation of each recursive call is a
closure, so the backward pass runs as the recursion unwinds -- no tape.
"""

import numpy as np

BACKPROPAGATORS = {"power": "x", "horner": "x", "continued_fraction": "x"}


def power(x, n):
    """x ** n by repeated multiplication."""
    if n == 0:
        return 1.0
    return x * power(x, n - 1)


def horner(coeffs, x, i=0):
    """Evaluate a polynomial with coefficients coeffs[i:] at x."""
    if i == len(coeffs) - 1:
        return coeffs[i]
    return coeffs[i] + x * horner(coeffs, x, i + 1)


def continued_fraction(x, depth):
    """x / (1 + x / (1 + x / ...)), depth levels deep."""
    if depth == 0:
        return x
    return x / (1.0 + continued_fraction(x, depth - 1))


if __name__ == "__main__":
    import cpsad

    print(cpsad.grad(power)(1.5, 10), 10 * 1.5**9)
    print(cpsad.grad(horner, argnums=1)(np.array([1.0, 2.0, 3.0]), 0.5))
    print(cpsad.show(continued_fraction, argnums=0))
