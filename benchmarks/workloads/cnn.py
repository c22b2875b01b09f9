"""Small CNN: 8 filters 3x3 (valid) on a batch of 16 one-channel 28x28 images, convolution as
im2col and a matrix product, ReLU, a linear layer to 10 classes, softmax cross-entropy; the
gradient with respect to every parameter.

im2col gathers the nine shifted views of the input with slices and stacks them, as a numpy user
writes it; the input is data, so only the products and the elementwise work are differentiated.
"""

import numpy as np

from benchmarks.peers import torch
from benchmarks.problem import Problem

NAME = "CNN"
TITLE = "CNN: 8 filters 3x3 on 16x1x28x28 (im2col), ReLU, linear 5408-10, softmax cross-entropy"


def im2col(x, k):
    """(n, c, h, w) -> (n, c * k * k, (h - k + 1) * (w - k + 1)): the k x k patches as columns."""
    n, c, h, w = x.shape
    oh, ow = h - k + 1, w - k + 1
    cols = [x[:, :, i : i + oh, j : j + ow] for i in range(k) for j in range(k)]
    return np.stack(cols, axis=2).reshape(n, c * k * k, oh * ow)


def loss(params, x, y):
    W = params["W"]
    cols = im2col(x, W.shape[2])
    z = W.reshape(W.shape[0], -1) @ cols + params["b"][:, None]
    a = np.maximum(z, 0.0)
    logits = a.reshape(x.shape[0], -1) @ params["Wfc"] + params["bfc"]
    m = np.max(logits, axis=1, keepdims=True)
    shifted = logits - m
    logp = shifted - np.log(np.sum(np.exp(shifted), axis=1, keepdims=True))
    return -np.mean(np.sum(logp * y, axis=1))


def handwritten(params, x, y):
    W, b, Wfc, bfc = params["W"], params["b"], params["Wfc"], params["bfc"]
    n, f = x.shape[0], W.shape[0]
    cols = im2col(x, W.shape[2])
    z = W.reshape(f, -1) @ cols + b[:, None]  # (n, f, positions)
    a = np.maximum(z, 0.0)
    flat = a.reshape(n, -1)
    logits = flat @ Wfc + bfc
    shifted = logits - np.max(logits, axis=1, keepdims=True)
    e = np.exp(shifted)
    s = np.sum(e, axis=1, keepdims=True)
    value = -np.sum((shifted - np.log(s)) * y) / n
    # backward: y is one-hot, so d(value)/d(logits) = (softmax - y) / n
    dlogits = e / s
    dlogits -= y
    dlogits /= n
    dz = (dlogits @ Wfc.T).reshape(z.shape)
    dz *= z > 0
    grads = {
        # one small product per image, summed: 62 us, where np.tensordot over both axes (one
        # 8 x 10816 x 9 product) takes 620 us in OpenBLAS
        "W": (dz @ cols.transpose(0, 2, 1)).sum(axis=0).reshape(W.shape),
        "b": dz.sum(axis=(0, 2)),
        "Wfc": flat.T @ dlogits,
        "bfc": dlogits.sum(axis=0),
    }
    return value, grads


def torch_im2col(x, k):
    n, c, h, w = x.shape
    oh, ow = h - k + 1, w - k + 1
    cols = [x[:, :, i : i + oh, j : j + ow] for i in range(k) for j in range(k)]
    return torch.stack(cols, dim=2).reshape(n, c * k * k, oh * ow)


def torch_loss(params, x, y):
    W = params["W"]
    cols = torch_im2col(x, W.shape[2])
    z = W.reshape(W.shape[0], -1) @ cols + params["b"][:, None]
    a = torch.clamp(z, min=0.0)
    logits = a.reshape(x.shape[0], -1) @ params["Wfc"] + params["bfc"]
    m = torch.amax(logits, dim=1, keepdim=True)
    shifted = logits - m
    logp = shifted - torch.log(torch.sum(torch.exp(shifted), dim=1, keepdim=True))
    return -torch.mean(torch.sum(logp * y, dim=1))


def problem(tiny: bool) -> Problem:
    n, size, filters, classes = (2, 6, 2, 3) if tiny else (16, 28, 8, 10)
    rng = np.random.default_rng(0)
    positions = (size - 2) ** 2
    params = {
        "W": rng.standard_normal((filters, 1, 3, 3)) / 3.0,
        "b": rng.standard_normal(filters) * 0.1,
        "Wfc": rng.standard_normal((filters * positions, classes)) / np.sqrt(filters * positions),
        "bfc": rng.standard_normal(classes) * 0.1,
    }
    x = rng.random((n, 1, size, size))
    y = np.eye(classes)[rng.integers(classes, size=n)]
    return Problem(args=(params, x, y), argnums=(0,))
