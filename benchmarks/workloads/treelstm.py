"""Tree-LSTM: a binary Tree-LSTM (the model of ``examples/treelstm.py``) over a random binary tree
of 63 nodes (32 words), hidden and embedding size 64, a 5-way softmax cross-entropy at the root;
the gradient with respect to every parameter (a dict of 19 arrays).

The loss recurses over a tree of ``Node`` objects, one small matrix-vector product per gate and
node: the work per operation is small, so per-operation overhead matters as much as in a loop.
"""

import numpy as np

from benchmarks.peers import torch
from benchmarks.problem import Problem

NAME = "TreeLSTM"
TITLE = "Tree-LSTM: random binary tree of 63 nodes, hidden 64, recursion over node objects"


class Node:
    """A node of a binary tree: a leaf carries a word index, an inner node two children."""

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
    h, _ = tree_lstm(params, tree)
    logits = params["Ws"] @ h + params["bs"]
    m = np.max(logits)
    return m + np.log(np.sum(np.exp(logits - m))) - logits[label]


# --------------------------------------------------------------------------- by hand


def handwritten(params, tree, label):
    """The same forward recursion, recording each node; the backward pass visits the nodes in
    reverse, and computes each weight gradient as one matrix product over all nodes."""
    P = params
    hidden = P["bi"].shape[0]
    leaves, inner = [], []  # per node: what its backward step needs

    def forward(node):
        if node.word is not None:
            x = P["embed"][node.word]
            i = sigmoid(P["Wi"] @ x + P["bi"])
            o = sigmoid(P["Wo"] @ x + P["bo"])
            u = np.tanh(P["Wu"] @ x + P["bu"])
            c = i * u
            tc = np.tanh(c)
            h = o * tc
            leaves.append((node.word, x, i, o, u, tc))
            return h, c, ("leaf", len(leaves) - 1)
        hl, cl, left = forward(node.left)
        hr, cr, right = forward(node.right)
        h2 = np.concatenate([hl, hr])
        i = sigmoid(P["Ui"] @ h2 + P["bi"])
        fl = sigmoid(P["Ufl"] @ h2 + P["bf"])
        fr = sigmoid(P["Ufr"] @ h2 + P["bf"])
        o = sigmoid(P["Uo"] @ h2 + P["bo"])
        u = np.tanh(P["Uu"] @ h2 + P["bu"])
        c = i * u + fl * cl + fr * cr
        tc = np.tanh(c)
        h = o * tc
        inner.append((left, right, h2, i, fl, fr, o, u, tc, cl, cr))
        return h, c, ("inner", len(inner) - 1)

    h, _, root = forward(tree)
    logits = P["Ws"] @ h + P["bs"]
    m = np.max(logits)
    e = np.exp(logits - m)
    s = np.sum(e)
    value = m + np.log(s) - logits[label]

    # backward
    dlogits = e / s
    dlogits[label] -= 1.0
    dh_of = {root: P["Ws"].T @ dlogits}
    dc_of = {root: np.zeros(hidden)}
    U = np.concatenate([P["Ui"], P["Ufl"], P["Ufr"], P["Uo"], P["Uu"]])  # (5 hidden, 2 hidden)
    DZ = np.empty((len(inner), 5 * hidden))  # pre-activation adjoints of the inner nodes' gates
    for j in range(len(inner) - 1, -1, -1):  # post-order reversed: a parent before its children
        left, right, h2, i, fl, fr, o, u, tc, cl, cr = inner[j]
        dh, dc = dh_of.pop(("inner", j)), dc_of.pop(("inner", j))
        dc = dc + dh * o * (1.0 - tc * tc)
        dz = DZ[j]
        dz[:hidden] = dc * u * i * (1.0 - i)
        dz[hidden : 2 * hidden] = dc * cl * fl * (1.0 - fl)
        dz[2 * hidden : 3 * hidden] = dc * cr * fr * (1.0 - fr)
        dz[3 * hidden : 4 * hidden] = dh * tc * o * (1.0 - o)
        dz[4 * hidden :] = dc * i * (1.0 - u * u)
        dh2 = dz @ U
        dh_of[left], dc_of[left] = dh2[:hidden], dc * fl
        dh_of[right], dc_of[right] = dh2[hidden:], dc * fr
    DL = np.empty((len(leaves), 3 * hidden))  # the leaves' gate pre-activation adjoints
    for j, (_, _, i, o, u, tc) in enumerate(leaves):
        dh, dc = dh_of[("leaf", j)], dc_of[("leaf", j)]
        dc = dc + dh * o * (1.0 - tc * tc)
        dz = DL[j]
        dz[:hidden] = dc * u * i * (1.0 - i)
        dz[hidden : 2 * hidden] = dh * tc * o * (1.0 - o)
        dz[2 * hidden :] = dc * i * (1.0 - u * u)

    H2 = np.array([r[2] for r in inner]).reshape(len(inner), 2 * hidden)
    X = np.array([r[1] for r in leaves])
    gU = DZ.T @ H2
    gW = DL.T @ X
    g_inner = DZ.sum(axis=0)
    g_leaf = DL.sum(axis=0)
    gE = np.zeros_like(P["embed"])
    np.add.at(gE, [r[0] for r in leaves], DL @ np.concatenate([P["Wi"], P["Wo"], P["Wu"]]))
    H = hidden
    grads = {
        "embed": gE,
        "Wi": gW[:H],
        "Wo": gW[H : 2 * H],
        "Wu": gW[2 * H :],
        "Ui": gU[:H],
        "Ufl": gU[H : 2 * H],
        "Ufr": gU[2 * H : 3 * H],
        "Uo": gU[3 * H : 4 * H],
        "Uu": gU[4 * H :],
        "bi": g_inner[:H] + g_leaf[:H],
        "bf": g_inner[H : 2 * H] + g_inner[2 * H : 3 * H],
        "bo": g_inner[3 * H : 4 * H] + g_leaf[H : 2 * H],
        "bu": g_inner[4 * H :] + g_leaf[2 * H :],
        "Ws": np.outer(dlogits, h),
        "bs": dlogits,
    }
    return value, grads


# --------------------------------------------------------------------------- PyTorch


def torch_sigmoid(z):
    return 1.0 / (1.0 + torch.exp(-z))


def torch_tree_lstm(params, node):
    if node.word is not None:
        x = params["embed"][node.word]
        i = torch_sigmoid(params["Wi"] @ x + params["bi"])
        o = torch_sigmoid(params["Wo"] @ x + params["bo"])
        u = torch.tanh(params["Wu"] @ x + params["bu"])
        c = i * u
        return o * torch.tanh(c), c
    hl, cl = torch_tree_lstm(params, node.left)
    hr, cr = torch_tree_lstm(params, node.right)
    h2 = torch.cat([hl, hr])
    i = torch_sigmoid(params["Ui"] @ h2 + params["bi"])
    fl = torch_sigmoid(params["Ufl"] @ h2 + params["bf"])
    fr = torch_sigmoid(params["Ufr"] @ h2 + params["bf"])
    o = torch_sigmoid(params["Uo"] @ h2 + params["bo"])
    u = torch.tanh(params["Uu"] @ h2 + params["bu"])
    c = i * u + fl * cl + fr * cr
    return o * torch.tanh(c), c


def torch_loss(params, tree, label):
    h, _ = torch_tree_lstm(params, tree)
    logits = params["Ws"] @ h + params["bs"]
    m = torch.max(logits)
    return m + torch.log(torch.sum(torch.exp(logits - m))) - logits[label]


# --------------------------------------------------------------------------- the data


def random_tree(rng, leaves: int, vocab: int) -> Node:
    """A random binary tree with ``leaves`` words (so 2 * leaves - 1 nodes)."""
    if leaves == 1:
        return Node(word=int(rng.integers(vocab)))
    k = int(rng.integers(1, leaves))
    return Node(random_tree(rng, k, vocab), random_tree(rng, leaves - k, vocab))


def problem(tiny: bool) -> Problem:
    leaves, hidden, embed, vocab, classes = (3, 3, 3, 5, 2) if tiny else (32, 64, 64, 100, 5)
    rng = np.random.default_rng(0)

    def m(*shape):
        return rng.standard_normal(shape) / np.sqrt(shape[-1])

    params = {"embed": rng.standard_normal((vocab, embed)) * 0.5}
    for gate in "iou":
        params["W" + gate] = m(hidden, embed)
        params["U" + gate] = m(hidden, 2 * hidden)
        params["b" + gate] = rng.standard_normal(hidden) * 0.1
    params["Ufl"] = m(hidden, 2 * hidden)
    params["Ufr"] = m(hidden, 2 * hidden)
    params["bf"] = np.ones(hidden)
    params["Ws"] = m(classes, hidden)
    params["bs"] = np.zeros(classes)
    tree = random_tree(rng, leaves, vocab)
    return Problem(args=(params, tree, 1), argnums=(0,), static=(1, 2))
