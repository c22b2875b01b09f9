"""The function docs/tutorial.md walks through every stage of the pipeline."""

import numpy as np

BACKPROPAGATORS = {"f": "x, w"}


def f(x, w):
    h = np.tanh(w * x)
    if h > 0:
        y = h * h
    else:
        y = -h
    return y * x
