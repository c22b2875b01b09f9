"""A user primitive with a registered rule (the example of docs/rules.md)."""

import numpy as np

import cpsad


def softplus(x):
    return np.logaddexp(0.0, x)


def softplus_vjp(g, ans, x):
    return g / (1.0 + np.exp(-x))


cpsad.defvjp(softplus, softplus_vjp)


def model(x):
    y = softplus(x)
    return np.sum(y * y)
