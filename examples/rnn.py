"""A character-level recurrent network, written with a plain Python loop, differentiated by cpsad.

    python examples/rnn.py            # train on the Zen of Python, print samples
    python examples/rnn.py --steps 50 # a short run

The text is the Zen of Python (``import this``, shipped with every Python; PSF licence). The loss
runs the recurrence over a window of characters with a ``for`` loop and collects the states in a
list -- the backpropagator is that loop as a recursive function (``loop_L..``) whose backward
part runs as the recursion unwinds: backpropagation through time, with no tape.
"""

import argparse
import ast
import codecs
import importlib.util

import numpy as np

import cpsad

BACKPROPAGATORS = {"loss": "params"}


def zen() -> str:
    """The Zen of Python, read from the standard library's ``this`` module (importing it prints)."""
    path = importlib.util.find_spec("this").origin
    with open(path) as fh:
        source = ast.parse(fh.read())
    for node in source.body:
        if isinstance(node, ast.Assign) and getattr(node.targets[0], "id", None) == "s":
            return codecs.decode(ast.literal_eval(node.value), "rot13")
    raise RuntimeError("the `this` module has changed")


def init_params(rng, vocab, hidden=48):
    return {
        "Wxh": rng.normal(size=(hidden, vocab)) * 0.01,
        "Whh": rng.normal(size=(hidden, hidden)) * 0.01,
        "Why": rng.normal(size=(vocab, hidden)) * 0.01,
        "bh": np.zeros(hidden),
        "by": np.zeros(vocab),
    }


def loss(params, inputs, targets, h):
    """Mean cross-entropy of predicting each next character; inputs are one-hot rows."""
    total = 0.0
    for x, t in zip(inputs, targets):
        h = np.tanh(params["Wxh"] @ x + params["Whh"] @ h + params["bh"])
        logits = params["Why"] @ h + params["by"]
        m = np.max(logits)
        log_z = m + np.log(np.sum(np.exp(logits - m)))
        total = total + log_z - logits[t]
    return total / len(targets)


def sample(params, h, first, n, chars, rng):
    out = [first]
    x = np.eye(len(chars))[first]
    for _ in range(n):
        h = np.tanh(params["Wxh"] @ x + params["Whh"] @ h + params["bh"])
        p = np.exp(params["Why"] @ h + params["by"])
        i = int(rng.choice(len(chars), p=p / p.sum()))
        out.append(i)
        x = np.eye(len(chars))[i]
    return "".join(chars[i] for i in out)


def train(steps=600, window=25, lr=0.1, seed=0, log=print):
    text = zen()
    chars = sorted(set(text))
    index = {c: i for i, c in enumerate(chars)}
    data = np.array([index[c] for c in text])
    eye = np.eye(len(chars))
    rng = np.random.default_rng(seed)
    params = init_params(rng, len(chars))
    memory = {k: np.zeros_like(v) for k, v in params.items()}  # Adagrad
    hidden = params["bh"].shape[0]
    step = cpsad.value_and_grad(loss)
    smooth = np.log(len(chars))
    pos = 0
    for n in range(1, steps + 1):
        if pos + window + 1 >= len(data):
            pos = 0
        inputs = eye[data[pos : pos + window]]
        targets = [int(t) for t in data[pos + 1 : pos + window + 1]]
        value, g = step(params, inputs, targets, np.zeros(hidden))
        for k in params:
            gk = np.clip(g[k], -5, 5)
            memory[k] += gk * gk
            params[k] = params[k] - lr * gk / np.sqrt(memory[k] + 1e-8)
        smooth = 0.99 * smooth + 0.01 * value
        pos += window
        if n % 200 == 0 or n == steps:
            log(
                f"step {n:4d}  loss {smooth:.3f}  "
                f"sample: {sample(params, np.zeros(hidden), data[0], 40, chars, rng)!r}"
            )
    return params, smooth


def main():
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--steps", type=int, default=1000)
    args = p.parse_args()
    train(steps=args.steps)


if __name__ == "__main__":
    main()
