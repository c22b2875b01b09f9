"""A binary Tree-LSTM (Tai et al., 2015) over parse trees, as in the paper's sentiment experiment.

    python examples/treelstm.py            # train 8 epochs on synthetic sentiment trees
    python examples/treelstm.py --quick    # 2 epochs on fewer trees, a few seconds
    python examples/treelstm.py --out DIR  # where the loss/accuracy curve goes (default out/)

The model recurses over a tree of ``Node`` objects -- a class of our own -- with its parameters in a
dict. cpsad differentiates the recursion as written: the backpropagator of ``tree_lstm`` calls itself
for the two children, each call with the continuation of the rest of the tree, so the backward
pass walks the tree in reverse as the recursion unwinds.

The data are synthetic so that the example runs offline: random binary trees over a small
vocabulary of positive, negative, neutral and negating words; a sentence is positive when the sum of
its words' polarities is, where "not" flips the polarity of the phrase it combines with. Learning it
needs the tree structure, which is what a Tree-LSTM uses. (The paper's data, the Stanford
Sentiment Treebank, ships with no package and states no licence that would let the project copy
it: see ``data/README.md``.)
"""

import os
import time

import numpy as np
from common import Adam, one_blas_thread, parser, progress_bar, save_curves

import cpsad

BACKPROPAGATORS = {"loss": "params"}

WORDS = ["good", "great", "fun", "bad", "awful", "dull", "the", "film", "plot", "not"]
POLARITY = {"good": 1, "great": 2, "fun": 1, "bad": -1, "awful": -2, "dull": -1}


class Node:
    """A node of a binary parse tree: a leaf carries a word index, an inner node two children."""

    def __init__(self, left=None, right=None, word=None):
        self.left = left
        self.right = right
        self.word = word


def sigmoid(z):
    return 1.0 / (1.0 + np.exp(-z))


def tree_lstm(params, node):
    """(h, c) of the subtree at ``node``."""
    if node.word is not None:
        x = params["embed"][node.word]
        i = sigmoid(params["Wi"] @ x + params["bi"])
        o = sigmoid(params["Wo"] @ x + params["bo"])
        u = np.tanh(params["Wu"] @ x + params["bu"])
        c = i * u
        return o * np.tanh(c), c
    hl, cl = tree_lstm(params, node.left)
    hr, cr = tree_lstm(params, node.right)
    h2 = np.concatenate([hl, hr])
    i = sigmoid(params["Ui"] @ h2 + params["bi"])
    fl = sigmoid(params["Ufl"] @ h2 + params["bf"])
    fr = sigmoid(params["Ufr"] @ h2 + params["bf"])
    o = sigmoid(params["Uo"] @ h2 + params["bo"])
    u = np.tanh(params["Uu"] @ h2 + params["bu"])
    c = i * u + fl * cl + fr * cr
    return o * np.tanh(c), c


def loss(params, tree, label):
    """Cross-entropy of the sentiment (0: negative, 1: positive) predicted at the root."""
    h, _ = tree_lstm(params, tree)
    logits = params["Ws"] @ h + params["bs"]
    m = np.max(logits)
    return m + np.log(np.sum(np.exp(logits - m))) - logits[label]


def predict(params, tree):
    h, _ = tree_lstm(params, tree)
    return int(np.argmax(params["Ws"] @ h + params["bs"]))


def init_params(rng, hidden=16, embed=12):
    def m(*shape):
        return rng.normal(size=shape) * np.sqrt(1.0 / shape[-1])

    p = {"embed": rng.normal(size=(len(WORDS), embed)) * 0.5}
    for gate in "iou":
        p["W" + gate] = m(hidden, embed)
        p["U" + gate] = m(hidden, 2 * hidden)
        p["b" + gate] = np.zeros(hidden)
    p["Ufl"] = m(hidden, 2 * hidden)
    p["Ufr"] = m(hidden, 2 * hidden)
    p["bf"] = np.ones(hidden)
    p["Ws"] = m(2, hidden)
    p["bs"] = np.zeros(2)
    return p


def random_tree(rng, depth):
    """A random binary tree and its polarity score."""
    if depth == 0 or rng.random() < 0.25:
        w = WORDS[int(rng.integers(len(WORDS) - 1))]  # leaves are not "not"
        return Node(word=WORDS.index(w)), POLARITY.get(w, 0)
    if rng.random() < 0.2:  # "not X": flips X
        sub, score = random_tree(rng, depth - 1)
        return Node(Node(word=WORDS.index("not")), sub), -score
    left, a = random_tree(rng, depth - 1)
    right, b = random_tree(rng, depth - 1)
    return Node(left, right), a + b


def dataset(rng, n, depth=4):
    out = []
    while len(out) < n:
        tree, score = random_tree(rng, depth)
        if score != 0:
            out.append((tree, int(score > 0)))
    return out


def train(epochs=8, n_train=400, n_test=200, lr=3e-3, seed=0, verbose=True, progress=True):
    """Adam, one tree at a time; (params, history): loss and test accuracy of every epoch."""
    rng = np.random.default_rng(seed)
    train_set, test_set = dataset(rng, n_train), dataset(rng, n_test)
    params = init_params(rng)
    opt = Adam(params, lr=lr)
    step = cpsad.value_and_grad(loss)
    history = {"epoch": [], "train loss": [], "test loss": [], "test accuracy": []}
    bar = progress_bar(epochs * len(train_set), "treelstm", unit="tree", show=verbose and progress)
    for epoch in range(1, epochs + 1):
        total = 0.0
        for j in rng.permutation(len(train_set)):
            tree, label = train_set[j]
            value, g = step(params, tree, label)
            params = opt.step(params, g)
            total += value
            bar.set_postfix(loss=value, refresh=False)
            bar.update()
        history["epoch"].append(epoch)
        history["train loss"].append(total / len(train_set))
        history["test loss"].append(float(np.mean([loss(params, t, y) for t, y in test_set])))
        history["test accuracy"].append(
            float(np.mean([predict(params, t) == y for t, y in test_set]))
        )
        if verbose:
            bar.write(
                f"epoch {epoch}  loss {history['train loss'][-1]:.3f}  "
                f"test accuracy {history['test accuracy'][-1]:.3f}"
            )
    bar.close()
    return params, history


@one_blas_thread
def main(argv=None):
    args = parser(__doc__, epochs=8).parse_args(argv)
    t0 = time.perf_counter()
    epochs, n_train = (2, 150) if args.quick else (args.epochs, 400)
    _, history = train(
        epochs=epochs, n_train=n_train, seed=args.seed, progress=not args.no_progress
    )
    seconds = time.perf_counter() - t0
    png = save_curves(
        os.path.join(args.out, "treelstm.png"),
        "Tree-LSTM on synthetic sentiment trees",
        {
            "cross-entropy": {
                "train": (history["epoch"], history["train loss"]),
                "test": (history["epoch"], history["test loss"]),
            },
            "test accuracy": {"test": (history["epoch"], history["test accuracy"])},
        },
    )
    print(
        f"treelstm: test accuracy {history['test accuracy'][-1]:.3f} after {epochs} epochs "
        f"(chance 0.5), {seconds:.1f} s; curves in {png}"
    )
    return history


if __name__ == "__main__":
    main()
