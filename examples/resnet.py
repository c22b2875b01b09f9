"""A small residual network (ResNet-style blocks with skip connections) on the 8x8 digits.

    python examples/resnet.py            # train 12 epochs (under a minute), report test accuracy
    python examples/resnet.py --quick    # 2 epochs, a few seconds
    python examples/resnet.py --out DIR  # where the loss/accuracy curve goes (default out/)

The network: a 3x3 convolution to 16 channels, then two stages of two residual blocks each,
    y = relu(x + conv(relu(conv(x))))
with 2x2 max-pooling after each stage (8x8 -> 4x4 -> 2x2), and a linear layer on the 2x2x16
features. (Global average pooling, as in the ResNet paper, learned much more slowly here: on
2x2 maps with no batch normalization, the averages barely differ between images at the start.)

The parameters are a pytree -- a dict holding a list of stages, each a list of blocks, each a
dict of arrays -- and ``predict`` walks it with two nested ``for`` loops; cpsad hands back a
gradient of the same structure. The convolution is ``conv2d`` of ``cnn.py`` (im2col),
imported from there: cpsad differentiates helpers of other modules too.

Data: the UCI digits in ``data/digits.npz`` (CC BY 4.0; see ``data/README.md``).
"""

import os
import time

import numpy as np
from cnn import conv2d, maxpool, relu
from common import digits_split, one_blas_thread, parser, progress_bar, save_curves

import cpsad

BACKPROPAGATORS = {"loss": "params", "residual_block": "block, x"}


def residual_block(block, x):
    """relu(x + F(x)) with F two 3x3 convolutions and a ReLU between them."""
    h = relu(conv2d(x, block["w1"], block["b1"]))
    h = conv2d(h, block["w2"], block["b2"])
    return relu(x + h)


def predict(params, X):
    """Class scores of flat 8x8 images X (n, 64)."""
    h = relu(conv2d(X.reshape(-1, 1, 8, 8), params["stem_w"], params["stem_b"]))
    for stage in params["stages"]:
        for block in stage:
            h = residual_block(block, h)
        h = maxpool(h)
    return h.reshape(h.shape[0], -1) @ params["W"] + params["b"]


def loss(params, X, labels):
    """Mean softmax cross-entropy of the integer labels."""
    logits = predict(params, X)
    m = np.max(logits, axis=1, keepdims=True)
    logp = logits - m - np.log(np.sum(np.exp(logits - m), axis=1, keepdims=True))
    return -np.mean(logp[np.arange(len(labels)), labels])


def accuracy(params, X, labels):
    return float(np.mean(np.argmax(predict(params, X), axis=1) == labels))


def init_params(rng, channels=16, stages=2, blocks=2, residual_scale=0.1):
    """He initialization; the second convolution of a block starts small, so that each block
    starts close to the identity (as Fixup and zero-init ResNets do)."""

    def he(*shape):
        return rng.standard_normal(shape) * np.sqrt(2.0 / np.prod(shape[1:]))

    def block():
        return {
            "w1": he(channels, channels, 3, 3),
            "b1": np.zeros(channels),
            "w2": he(channels, channels, 3, 3) * residual_scale,
            "b2": np.zeros(channels),
        }

    return {
        "stem_w": he(channels, 1, 3, 3),
        "stem_b": np.zeros(channels),
        "stages": [[block() for _ in range(blocks)] for _ in range(stages)],
        "W": rng.standard_normal((4 * channels, 10)) * np.sqrt(1.0 / (4 * channels)),
        "b": np.zeros(10),
    }


def sgd(params, grads, velocity, lr, momentum):
    """One step of SGD with momentum over matching pytrees; returns (params, velocity)."""
    if isinstance(params, dict):
        pairs = {k: sgd(params[k], grads[k], velocity[k], lr, momentum) for k in params}
        return {k: p for k, (p, _) in pairs.items()}, {k: v for k, (_, v) in pairs.items()}
    if isinstance(params, list):
        pairs = [sgd(p, g, v, lr, momentum) for p, g, v in zip(params, grads, velocity)]
        return [p for p, _ in pairs], [v for _, v in pairs]
    v = momentum * velocity - lr * grads
    return params + v, v


def zeros_like_tree(tree):
    if isinstance(tree, dict):
        return {k: zeros_like_tree(v) for k, v in tree.items()}
    if isinstance(tree, list):
        return [zeros_like_tree(v) for v in tree]
    return np.zeros_like(tree)


def train(epochs=12, batch=32, lr=0.02, momentum=0.9, seed=0, verbose=True, progress=True):
    """SGD with momentum; (params, history) with the loss and test accuracy of every epoch."""
    X, labels, X_test, labels_test = digits_split()
    rng = np.random.default_rng(seed)
    params = init_params(rng)
    velocity = zeros_like_tree(params)
    step = cpsad.value_and_grad(loss)
    history = {"epoch": [], "train loss": [], "test loss": [], "test accuracy": []}
    bar = progress_bar(
        epochs * -(-len(X) // batch), "resnet", unit="batch", show=verbose and progress
    )
    for epoch in range(1, epochs + 1):
        order = rng.permutation(len(X))
        total = 0.0
        for i in range(0, len(X), batch):
            idx = order[i : i + batch]
            value, g = step(params, X[idx], labels[idx])
            params, velocity = sgd(params, g, velocity, lr, momentum)
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
    args = parser(__doc__, epochs=12).parse_args(argv)
    t0 = time.perf_counter()
    epochs = 2 if args.quick else args.epochs
    _, history = train(epochs=epochs, seed=args.seed, progress=not args.no_progress)
    seconds = time.perf_counter() - t0
    png = save_curves(
        os.path.join(args.out, "resnet.png"),
        "Residual network on the UCI digits",
        {
            "cross-entropy": {
                "train": (history["epoch"], history["train loss"]),
                "test": (history["epoch"], history["test loss"]),
            },
            "test accuracy": {"test": (history["epoch"], history["test accuracy"])},
        },
    )
    print(
        f"resnet: test accuracy {history['test accuracy'][-1]:.3f} after {epochs} epochs, "
        f"{seconds:.1f} s; curves in {png}"
    )
    return history


if __name__ == "__main__":
    main()
