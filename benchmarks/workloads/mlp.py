"""MLP step: batch 64, 784-256-10, tanh hidden layer, softmax cross-entropy; the gradient with
respect to every parameter (a dict of four arrays).

Two matrix products of 64x784x256 (forward, and the weight gradient) dominate: a framework's
overhead shows only as the elementwise work and allocations around them.
"""

import numpy as np

from benchmarks.peers import torch
from benchmarks.problem import Problem

NAME = "MLP"
TITLE = "MLP step: batch 64, 784-256-10, tanh, softmax cross-entropy"


def loss(params, X, Y):
    h = np.tanh(X @ params["W1"] + params["b1"])
    logits = h @ params["W2"] + params["b2"]
    m = np.max(logits, axis=1, keepdims=True)
    z = logits - m
    logp = z - np.log(np.sum(np.exp(z), axis=1, keepdims=True))
    return -np.mean(np.sum(logp * Y, axis=1))


def handwritten(params, X, Y):
    W1, b1, W2, b2 = params["W1"], params["b1"], params["W2"], params["b2"]
    n = X.shape[0]
    h = np.tanh(X @ W1 + b1)
    logits = h @ W2 + b2
    z = logits - np.max(logits, axis=1, keepdims=True)
    e = np.exp(z)
    s = np.sum(e, axis=1, keepdims=True)
    logp = z - np.log(s)
    value = -np.sum(logp * Y) / n
    # backward: Y is one-hot, so d(value)/d(logits) = (softmax - Y) / n
    dlogits = e / s
    dlogits -= Y
    dlogits /= n
    dh = dlogits @ W2.T
    dh *= 1.0 - h * h
    grads = {
        "W1": X.T @ dh,
        "b1": dh.sum(axis=0),
        "W2": h.T @ dlogits,
        "b2": dlogits.sum(axis=0),
    }
    return value, grads


def torch_loss(params, X, Y):
    h = torch.tanh(X @ params["W1"] + params["b1"])
    logits = h @ params["W2"] + params["b2"]
    m = torch.amax(logits, dim=1, keepdim=True)
    z = logits - m
    logp = z - torch.log(torch.sum(torch.exp(z), dim=1, keepdim=True))
    return -torch.mean(torch.sum(logp * Y, dim=1))


def problem(tiny: bool) -> Problem:
    n, d, hidden, k = (4, 20, 8, 3) if tiny else (64, 784, 256, 10)
    rng = np.random.default_rng(0)
    params = {
        "W1": rng.standard_normal((d, hidden)) / np.sqrt(d),
        "b1": rng.standard_normal(hidden) * 0.1,
        "W2": rng.standard_normal((hidden, k)) / np.sqrt(hidden),
        "b2": rng.standard_normal(k) * 0.1,
    }
    X = rng.random((n, d))
    Y = np.eye(k)[rng.integers(k, size=n)]
    return Problem(args=(params, X, Y), argnums=(0,))
