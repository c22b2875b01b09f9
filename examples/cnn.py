"""A small convolutional network on the 8x8 digits: convolution by im2col, in plain numpy.

    python examples/cnn.py               # train 20 epochs (a few seconds), report test accuracy
    python examples/cnn.py --quick       # 3 epochs, a few seconds
    python examples/cnn.py --out DIR     # where the loss/accuracy curve goes (default out/)

The network: 3x3 convolution to 8 channels, ReLU, 2x2 max-pooling (8x8 -> 4x4), 3x3 convolution
to 16 channels, ReLU, max-pooling (4x4 -> 2x2), and a linear layer to the 10 classes.

``conv2d`` is written the way one writes it in numpy: pad, gather the k*k shifted views of the
image with a list comprehension (im2col), and multiply by the filters as one matrix. cpsad
differentiates the comprehension as a loop -- each view's adjoint is added back into the padded
image -- and ``np.pad``, ``np.stack``, ``reshape`` and the broadcasting ``@`` by their rules.
Max-pooling is a reshape and a ``max`` over two axes.

Data: the UCI digits in ``data/digits.npz`` (CC BY 4.0; see ``data/README.md``).
"""

import os
import time

import numpy as np
from common import digits_split, one_blas_thread, parser, progress_bar, save_curves

import cpsad

BACKPROPAGATORS = {"loss": "params", "conv2d": "x, w, b"}


def conv2d(x, w, b):
    """'Same' convolution of images x (n, c, h, w) with filters w (f, c, k, k) and biases b (f,)."""
    n, c, h, wd = x.shape
    f, _, k, _ = w.shape
    p = k // 2
    xp = np.pad(x, ((0, 0), (0, 0), (p, p), (p, p)))
    views = [xp[:, :, i : i + h, j : j + wd] for i in range(k) for j in range(k)]
    cols = np.stack(views, axis=2).reshape(n, c * k * k, h * wd)  # im2col
    out = w.reshape(f, c * k * k) @ cols + b[:, None]  # (n, f, h * w)
    return out.reshape(n, f, h, wd)


def maxpool(x):
    """2x2 max-pooling of x (n, c, h, w)."""
    n, c, h, w = x.shape
    return x.reshape(n, c, h // 2, 2, w // 2, 2).max(axis=(3, 5))


def relu(x):
    return np.maximum(x, 0.0)


def predict(params, X):
    """Class scores of flat 8x8 images X (n, 64)."""
    x = X.reshape(-1, 1, 8, 8)
    h = maxpool(relu(conv2d(x, params["w1"], params["b1"])))
    h = maxpool(relu(conv2d(h, params["w2"], params["b2"])))
    return h.reshape(h.shape[0], -1) @ params["W"] + params["b"]


def loss(params, X, labels):
    """Mean softmax cross-entropy of the integer labels."""
    logits = predict(params, X)
    m = np.max(logits, axis=1, keepdims=True)
    logp = logits - m - np.log(np.sum(np.exp(logits - m), axis=1, keepdims=True))
    return -np.mean(logp[np.arange(len(labels)), labels])


def accuracy(params, X, labels):
    return float(np.mean(np.argmax(predict(params, X), axis=1) == labels))


def init_params(rng, c1=8, c2=16):
    def he(*shape):  # scaled for ReLU
        return rng.standard_normal(shape) * np.sqrt(2.0 / np.prod(shape[1:]))

    return {
        "w1": he(c1, 1, 3, 3),
        "b1": np.zeros(c1),
        "w2": he(c2, c1, 3, 3),
        "b2": np.zeros(c2),
        "W": rng.standard_normal((4 * c2, 10)) * np.sqrt(1.0 / (4 * c2)),
        "b": np.zeros(10),
    }


def train(epochs=20, batch=32, lr=0.02, momentum=0.9, seed=0, verbose=True, progress=True):
    """SGD with momentum; (params, history) with the loss and test accuracy of every epoch."""
    X, labels, X_test, labels_test = digits_split()
    rng = np.random.default_rng(seed)
    params = init_params(rng)
    velocity = {k: np.zeros_like(v) for k, v in params.items()}
    step = cpsad.value_and_grad(loss)
    history = {"epoch": [], "train loss": [], "test loss": [], "test accuracy": []}
    bar = progress_bar(epochs * -(-len(X) // batch), "cnn", unit="batch", show=verbose and progress)
    for epoch in range(1, epochs + 1):
        order = rng.permutation(len(X))
        total = 0.0
        for i in range(0, len(X), batch):
            idx = order[i : i + batch]
            value, g = step(params, X[idx], labels[idx])
            for k in params:
                velocity[k] = momentum * velocity[k] - lr * g[k]
                params[k] = params[k] + velocity[k]
            total += value * len(idx)
            bar.set_postfix(loss=value, refresh=False)
            bar.update()
        history["epoch"].append(epoch)
        history["train loss"].append(total / len(X))
        history["test loss"].append(float(loss(params, X_test, labels_test)))
        history["test accuracy"].append(accuracy(params, X_test, labels_test))
        if verbose:
            bar.write(
                f"epoch {epoch:3d}  loss {history['train loss'][-1]:.4f}  "
                f"test accuracy {history['test accuracy'][-1]:.3f}"
            )
    bar.close()
    return params, history


@one_blas_thread
def main(argv=None):
    args = parser(__doc__, epochs=20).parse_args(argv)
    t0 = time.perf_counter()
    epochs = 3 if args.quick else args.epochs
    _, history = train(epochs=epochs, seed=args.seed, progress=not args.no_progress)
    seconds = time.perf_counter() - t0
    png = save_curves(
        os.path.join(args.out, "cnn.png"),
        "CNN (im2col) on the UCI digits",
        {
            "cross-entropy": {
                "train": (history["epoch"], history["train loss"]),
                "test": (history["epoch"], history["test loss"]),
            },
            "test accuracy": {"test": (history["epoch"], history["test accuracy"])},
        },
    )
    print(
        f"cnn: test accuracy {history['test accuracy'][-1]:.3f} after {epochs} epochs, "
        f"{seconds:.1f} s; curves in {png}"
    )
    return history


if __name__ == "__main__":
    main()
