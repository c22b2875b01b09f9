"""The example on the first screen of README.md."""

import numpy as np

BACKPROPAGATORS = {"loss": "w"}


def loss(w, x, y):
    h = np.tanh(x @ w)
    return np.mean((h - y) ** 2)


if __name__ == "__main__":
    import cpsad

    rng = np.random.default_rng(0)
    w, x, y = rng.normal(size=3), rng.normal(size=(5, 3)), rng.normal(size=5)
    print(cpsad.grad(loss)(w, x, y))
    print(cpsad.show(loss, argnums=0))
