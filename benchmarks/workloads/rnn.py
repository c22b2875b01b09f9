"""RNN: a tanh recurrence over 50 time steps (batch 32, input 64, hidden 128), a linear readout
(16 outputs) and a squared error at every step; the gradient with respect to every parameter.

The loss is a Python ``for`` loop over the time steps, as users write it: cpsad's backpropagator
runs the steps forward saving what each step's backward part reads, then backward.
"""

import numpy as np

from benchmarks.peers import torch
from benchmarks.problem import Problem

NAME = "RNN"
TITLE = "RNN: 50 steps, batch 32, input 64, hidden 128, readout 16, squared error per step"


def loss(params, xs, ts, h):
    total = 0.0
    for x, t in zip(xs, ts):
        h = np.tanh(x @ params["Wx"] + h @ params["Wh"] + params["b"])
        y = h @ params["Wy"] + params["by"]
        total = total + np.sum((y - t) ** 2)
    return total / (len(xs) * len(h))


def handwritten(params, xs, ts, h0):
    Wx, Wh, b, Wy, by = (params[k] for k in ("Wx", "Wh", "b", "Wy", "by"))
    steps, batch = xs.shape[0], h0.shape[0]
    H = np.empty((steps + 1,) + h0.shape)  # H[t + 1]: the state after step t
    H[0] = h0
    D = np.empty(ts.shape)  # the readout's errors
    total = 0.0
    for t in range(steps):
        H[t + 1] = np.tanh(xs[t] @ Wx + H[t] @ Wh + b)
        D[t] = H[t + 1] @ Wy + by - ts[t]
        total += np.sum(D[t] ** 2)
    value = total / (steps * batch)
    # backward: the readout's and the input's weight gradients are one product over all steps;
    # only the recurrence itself runs step by step
    hidden, out = Wh.shape[0], Wy.shape[1]
    dY = D * (2.0 / (steps * batch))
    dH = dY @ Wy.T  # what each step's readout sends to its state
    DA = np.empty((steps,) + h0.shape)  # the adjoints of the pre-activations
    dh = np.zeros(h0.shape)
    for t in range(steps - 1, -1, -1):
        dh += dH[t]
        da = DA[t]
        np.multiply(dh, 1.0 - H[t + 1] ** 2, out=da)
        dh = da @ Wh.T
    flat_da = DA.reshape(-1, hidden)
    grads = {
        "Wx": xs.reshape(-1, xs.shape[2]).T @ flat_da,
        "Wh": H[:-1].reshape(-1, hidden).T @ flat_da,
        "b": flat_da.sum(axis=0),
        "Wy": H[1:].reshape(-1, hidden).T @ dY.reshape(-1, out),
        "by": dY.reshape(-1, out).sum(axis=0),
    }
    return value, grads


def torch_loss(params, xs, ts, h):
    total = 0.0
    for x, t in zip(xs, ts):
        h = torch.tanh(x @ params["Wx"] + h @ params["Wh"] + params["b"])
        y = h @ params["Wy"] + params["by"]
        total = total + torch.sum((y - t) ** 2)
    return total / (len(xs) * len(h))


def problem(tiny: bool) -> Problem:
    steps, batch, d, hidden, out = (3, 2, 4, 5, 3) if tiny else (50, 32, 64, 128, 16)
    rng = np.random.default_rng(0)
    params = {
        "Wx": rng.standard_normal((d, hidden)) / np.sqrt(d),
        "Wh": rng.standard_normal((hidden, hidden)) / np.sqrt(hidden),
        "b": rng.standard_normal(hidden) * 0.1,
        "Wy": rng.standard_normal((hidden, out)) / np.sqrt(hidden),
        "by": rng.standard_normal(out) * 0.1,
    }
    xs = rng.standard_normal((steps, batch, d))
    ts = rng.standard_normal((steps, batch, out))
    h0 = np.zeros((batch, hidden))
    return Problem(args=(params, xs, ts, h0), argnums=(0,))
