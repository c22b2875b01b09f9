"""A two-layer perceptron on handwritten digits, in plain numpy, differentiated by cpsad.

python examples/mlp.py            # train and report accuracy
python examples/mlp.py --demo     # print the backpropagator, check it, train briefly
"""

import argparse
import os
import time

import numpy as np

import cpsad

HERE = os.path.dirname(os.path.abspath(__file__))

# the functions whose backpropagators are committed as snapshots, and what they differentiate
BACKPROPAGATORS = {"loss": "params"}


def load_digits():
    data = np.load(os.path.join(HERE, "data", "digits.npz"))
    X = data["images"].astype(np.float64) / 16.0
    labels = data["labels"].astype(np.int64)
    return X, labels


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


def train(epochs=30, batch=64, lr=0.5, seed=0, log=print):
    X, labels = load_digits()
    rng = np.random.default_rng(seed)
    order = rng.permutation(len(X))
    test, tr = order[:360], order[360:]
    Y = np.eye(10)[labels]
    params = init_params(rng)
    step = cpsad.value_and_grad(loss)
    for epoch in range(1, epochs + 1):
        rng.shuffle(tr)
        total = 0.0
        for i in range(0, len(tr), batch):
            idx = tr[i : i + batch]
            value, g = step(params, X[idx], Y[idx])
            params = {k: params[k] - lr * g[k] for k in params}
            total += value * len(idx)
        if epoch == 1 or epoch % 5 == 0 or epoch == epochs:
            log(
                f"epoch {epoch:3d}  loss {total / len(tr):.4f}  "
                f"test accuracy {accuracy(params, X[test], labels[test]):.3f}"
            )
    return params, accuracy(params, X[test], labels[test])


def demo():
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
    _, acc = train(epochs=20)
    print(f"trained in {time.perf_counter() - t0:.1f} s; test accuracy {acc:.3f}")


def main():
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument(
        "--demo", action="store_true", help="show the backpropagator, check it, train briefly"
    )
    p.add_argument("--epochs", type=int, default=30)
    args = p.parse_args()
    if args.demo:
        demo()
    else:
        train(epochs=args.epochs)


if __name__ == "__main__":
    main()
