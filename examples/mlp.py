"""A two-layer perceptron on handwritten digits, in plain numpy, differentiated by cpsad.

    python examples/mlp.py               # train 30 epochs (about a second), report test accuracy
    python examples/mlp.py --quick       # 5 epochs
    python examples/mlp.py --demo        # print the backpropagator, check it, train briefly
    python examples/mlp.py --out DIR     # where the loss/accuracy curve goes (default out/)

Data: the 8x8 UCI digits in ``data/digits.npz`` (CC BY 4.0; see ``data/README.md``), 1,437 to
train on and 360 to test on.
"""

import os
import time

import numpy as np
from common import digits_split, load_digits, one_blas_thread, parser, progress_bar, save_curves

import cpsad

# the functions whose backpropagators are committed as snapshots, and what they differentiate
BACKPROPAGATORS = {"loss": "params"}


def init_params(rng, n_in=64, n_hidden=64, n_out=10):
    return {
        "W1": rng.standard_normal((n_in, n_hidden)) * np.sqrt(1.0 / n_in),
        "b1": np.zeros(n_hidden),
        "W2": rng.standard_normal((n_hidden, n_out)) * np.sqrt(1.0 / n_hidden),
        "b2": np.zeros(n_out),
    }


def predict(params, X):
    h = np.tanh(X @ params["W1"] + params["b1"])
    return h @ params["W2"] + params["b2"]


def loss(params, X, Y):
    """Mean softmax cross-entropy; Y holds one-hot labels."""
    logits = predict(params, X)
    m = np.max(logits, axis=1, keepdims=True)
    logp = logits - m - np.log(np.sum(np.exp(logits - m), axis=1, keepdims=True))
    return -np.mean(np.sum(logp * Y, axis=1))


def accuracy(params, X, labels):
    return float(np.mean(np.argmax(predict(params, X), axis=1) == labels))


def train(epochs=30, batch=64, lr=0.5, seed=0, verbose=True, progress=True):
    """SGD on minibatches; (params, history) with the loss and test accuracy of every epoch."""
    X, labels, X_test, labels_test = digits_split()
    Y, Y_test = np.eye(10)[labels], np.eye(10)[labels_test]
    rng = np.random.default_rng(seed)
    params = init_params(rng)
    step = cpsad.value_and_grad(loss)
    history = {"epoch": [], "train loss": [], "test loss": [], "test accuracy": []}
    steps = -(-len(X) // batch)
    bar = progress_bar(epochs * steps, "mlp", unit="batch", show=verbose and progress)
    for epoch in range(1, epochs + 1):
        order = rng.permutation(len(X))
        total = 0.0
        for i in range(0, len(X), batch):
            idx = order[i : i + batch]
            value, g = step(params, X[idx], Y[idx])
            params = {k: params[k] - lr * g[k] for k in params}
            total += value * len(idx)
            bar.set_postfix(loss=value, refresh=False)
            bar.update()
        history["epoch"].append(epoch)
        history["train loss"].append(total / len(X))
        history["test loss"].append(float(loss(params, X_test, Y_test)))
        history["test accuracy"].append(accuracy(params, X_test, labels_test))
        if verbose and (epoch == 1 or epoch % 5 == 0 or epoch == epochs):
            bar.write(
                f"epoch {epoch:3d}  loss {history['train loss'][-1]:.4f}  "
                f"test accuracy {history['test accuracy'][-1]:.3f}"
            )
    bar.close()
    return params, history


def save_history(history, out):
    return save_curves(
        os.path.join(out, "mlp.png"),
        "MLP on the UCI digits (cpsad gradients, SGD)",
        {
            "cross-entropy": {
                "train": (history["epoch"], history["train loss"]),
                "test": (history["epoch"], history["test loss"]),
            },
            "test accuracy": {"test": (history["epoch"], history["test accuracy"])},
        },
    )


def demo(out="out"):
    from cpsad import compiler

    print("cpsad demo: a two-layer perceptron on handwritten digits (examples/mlp.py)\n")
    X, labels = load_digits()
    params = init_params(np.random.default_rng(1))
    Y = np.eye(10)[labels]
    t0 = time.perf_counter()
    g = cpsad.grad(loss)(params, X[:64], Y[:64])
    first = time.perf_counter() - t0
    spec = compiler.specialize(loss, ("params",))
    transform = sum(s.seconds for s in compiler.call_graph(spec))
    t0 = time.perf_counter()
    cpsad.grad(loss)(params, X[:64], Y[:64])
    again = time.perf_counter() - t0
    print(
        f"first call {1000 * first:.1f} ms, of which transforming `loss` and `predict` took "
        f"{1000 * transform:.1f} ms; the next call {1000 * again:.2f} ms\n"
    )
    print("The backpropagator cpsad generated (cpsad show examples/mlp.py loss --wrt params):\n")
    print(cpsad.show(loss, argnums=0))
    # the gradient along a random direction, against central finite differences
    rng = np.random.default_rng(2)
    v = {k: rng.standard_normal(p.shape) for k, p in params.items()}
    eps = 1e-6
    plus = {k: params[k] + eps * v[k] for k in params}
    minus = {k: params[k] - eps * v[k] for k in params}
    fd = (loss(plus, X[:64], Y[:64]) - loss(minus, X[:64], Y[:64])) / (2 * eps)
    ad = sum(float(np.sum(g[k] * v[k])) for k in params)
    print(f"directional derivative: cpsad {ad:.8f}, finite differences {fd:.8f}")
    assert abs(ad - fd) < 1e-6 * max(1.0, abs(fd)), "gradient check failed"
    print("\ntraining with SGD on 1,437 digits, testing on 360:")
    t0 = time.perf_counter()
    _, history = train(epochs=20)
    seconds = time.perf_counter() - t0
    png = save_history(history, out)
    print(f"trained in {seconds:.1f} s; test accuracy {history['test accuracy'][-1]:.3f}")
    print(f"loss and accuracy curves: {png}")


@one_blas_thread
def main(argv=None):
    p = parser(__doc__, epochs=30)
    p.add_argument("--demo", action="store_true", help="show the backpropagator, check it, train")
    args = p.parse_args(argv)
    if args.demo:
        return demo(args.out)
    t0 = time.perf_counter()
    _, history = train(
        epochs=5 if args.quick else args.epochs, seed=args.seed, progress=not args.no_progress
    )
    png = save_history(history, args.out)
    print(
        f"mlp: test accuracy {history['test accuracy'][-1]:.3f} after {history['epoch'][-1]} "
        f"epochs, {time.perf_counter() - t0:.1f} s; curves in {png}"
    )
    return history


if __name__ == "__main__":
    main()
