"""Helpers the corpus imports from another module, as a user's project would."""

import numpy as np


def scaled(x, factor=2.0):
    return x * factor


def affine(a, b, shift=0.0):
    return a * b + shift + np.cos(a)


def chain(x):
    return scaled(affine(x, x), factor=1.5)


def smooth(a, c):
    """Several statements: called through its backpropagator, not inlined; it calls a function
    of its module whose result is not differentiated."""
    t = a * c * factor(3)
    u = np.tanh(t)
    return u * u + np.sin(t)


def factor(n):
    m = n * 2
    return 2.0 / m


OFFSET = 0.5


def offset(a):
    """Reads data of its module."""
    t = a + OFFSET
    return t * t
