"""Functions with branches: robust losses and a piecewise activation, as a user writes them.

An `if` whose branches compute differentiable values becomes, in the backpropagator, one
continuation (`after_if_L..`) holding the rest of the function, called from both branches.
"""

import numpy as np

BACKPROPAGATORS = {"huber": "r", "smooth_step": "x", "tilted": "x, tau", "soft_clip": "x"}


def huber(r, delta=1.0):
    """The Huber loss of a residual: quadratic near zero, linear beyond delta."""
    a = abs(r)
    if a <= delta:
        loss = 0.5 * r * r
    else:
        loss = delta * (a - 0.5 * delta)
    return loss


def smooth_step(x):
    """0 below 0, 1 above 1, a cubic in between; then scaled."""
    if x <= 0.0:
        y = 0.0
    elif x >= 1.0:
        y = 1.0
    else:
        y = x * x * (3.0 - 2.0 * x)
    return 2.0 * y - 1.0


def tilted(x, tau):
    """The pinball (quantile) loss, with an early return."""
    if x < 0:
        return (tau - 1.0) * x
    return tau * x


def soft_clip(x, lo=-1.0, hi=1.0):
    """Clip an array softly: tanh inside the range when it is wide, identity otherwise."""
    width = hi - lo
    centre = (hi + lo) / 2
    z = (x - centre) / width
    if np.max(np.abs(z)) > 0.25:
        z = np.tanh(z)
    return np.sum(centre + width * z)


if __name__ == "__main__":
    import cpsad

    for name in BACKPROPAGATORS:
        print(cpsad.show(globals()[name]))
