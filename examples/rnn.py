"""A character-level recurrent network, written with a plain Python loop, differentiated by cpsad.

    python examples/rnn.py               # train 1,500 steps (under a minute), print samples
    python examples/rnn.py --quick       # 150 steps, a few seconds
    python examples/rnn.py --out DIR     # where the loss curve goes (default out/)

An Elman network, h' = tanh(x Wxh + h Whh + bh), reads a batch of windows of Shakespeare's
Sonnets one character at a time (one-hot rows) and predicts the next character. The loss runs the
recurrence over the window with a ``for`` loop; the backpropagator is that loop as a recursive
function (``loop_L..``) whose backward part runs as the recursion unwinds: backpropagation
through time, with no tape. ``examples/lstm.py`` is the same language model with LSTM cells.

The score is the cross-entropy in bits per character on the last 10% of the text, held out; a
uniform guess over the 62 characters scores log2(62) = 5.95.

Data: ``data/sonnets.txt``, public domain (see ``data/README.md``).
"""

import os
import time

import numpy as np
from common import (
    Adam,
    encode_text,
    load_sonnets,
    one_blas_thread,
    parser,
    progress_bar,
    save_curves,
    windows,
)

import cpsad

BACKPROPAGATORS = {"loss": "params"}


def init_params(rng, vocab, hidden=128):
    return {
        "Wxh": rng.normal(size=(vocab, hidden)) * 0.1,
        "Whh": rng.normal(size=(hidden, hidden)) / np.sqrt(hidden),
        "bh": np.zeros(hidden),
        "Why": rng.normal(size=(hidden, vocab)) / np.sqrt(hidden),
        "by": np.zeros(vocab),
    }


def rnn_cell(params, x, h):
    return np.tanh(x @ params["Wxh"] + h @ params["Whh"] + params["bh"])


def loss(params, inputs, targets, h):
    """Mean cross-entropy (nats) of the next characters.

    inputs: one-hot characters (steps, batch, vocab); targets: their successors (steps, batch);
    h: the initial state (batch, hidden).
    """
    total = 0.0
    for x, t in zip(inputs, targets):
        h = rnn_cell(params, x, h)
        logits = h @ params["Why"] + params["by"]
        m = np.max(logits, axis=1, keepdims=True)
        logp = logits - m - np.log(np.sum(np.exp(logits - m), axis=1, keepdims=True))
        total = total - np.mean(logp[np.arange(len(t)), t])
    return total / len(targets)


def sample(params, chars, first, n, rng, temperature=0.7):
    """n characters drawn from the model, one after another, after the character ``first``."""
    eye = np.eye(len(chars))
    h = np.zeros((1, params["Whh"].shape[0]))
    out = [first]
    for _ in range(n):
        h = rnn_cell(params, eye[[out[-1]]], h)
        logits = (h @ params["Why"] + params["by"])[0] / temperature
        p = np.exp(logits - logits.max())
        out.append(int(rng.choice(len(chars), p=p / p.sum())))
    return "".join(chars[i] for i in out)


def evaluate(params, codes, vocab, length=64, batch=64):
    """Bits per character on ``codes``, cut into windows (each from a zero state)."""
    starts = np.arange(0, len(codes) - length - 1, length)
    total = 0.0
    for i in range(0, len(starts), batch):
        xs, ys = windows(codes, length, starts[i : i + batch])
        h = np.zeros((xs.shape[1], params["Whh"].shape[0]))
        total += loss(params, np.eye(vocab)[xs], ys, h) * xs.shape[1]
    return total / len(starts) / np.log(2)


def train(
    steps=1500, length=32, batch=32, hidden=128, lr=3e-3, seed=0, verbose=True, progress=True
):
    """Adam on random windows; (params, history) with the train and test bits per character."""
    chars, train_codes, test_codes = encode_text(load_sonnets())
    vocab = len(chars)
    eye = np.eye(vocab)
    rng = np.random.default_rng(seed)
    params = init_params(rng, vocab, hidden)
    opt = Adam(params, lr=lr)
    step = cpsad.value_and_grad(loss)
    history = {"step": [], "train bits/char": [], "test step": [], "test bits/char": []}
    every = max(1, steps // 10)
    bar = progress_bar(steps, "rnn", show=verbose and progress)
    for n in range(1, steps + 1):
        xs, ys = windows(train_codes, length, rng.integers(0, len(train_codes) - length - 1, batch))
        value, g = step(params, eye[xs], ys, np.zeros((batch, hidden)))
        params = opt.step(params, g)
        history["step"].append(n)
        history["train bits/char"].append(value / np.log(2))
        bar.set_postfix(bits=value / np.log(2), refresh=False)
        bar.update()
        if n % every == 0 or n == steps:
            history["test step"].append(n)
            history["test bits/char"].append(evaluate(params, test_codes, vocab))
            if verbose:
                bar.write(f"step {n:5d}  test {history['test bits/char'][-1]:.3f} bits/char")
    bar.close()
    return params, history


@one_blas_thread
def main(argv=None):
    args = parser(__doc__, steps=1500).parse_args(argv)
    t0 = time.perf_counter()
    steps = 150 if args.quick else args.steps
    params, history = train(steps=steps, seed=args.seed, progress=not args.no_progress)
    seconds = time.perf_counter() - t0
    png = save_curves(
        os.path.join(args.out, "rnn.png"),
        "Character RNN on Shakespeare's Sonnets",
        {
            "cross-entropy (bits/char)": {
                "train (each batch)": (history["step"], history["train bits/char"]),
                "test (held-out 10%)": (history["test step"], history["test bits/char"]),
            }
        },
        xlabel="step",
    )
    chars = sorted(set(load_sonnets()))
    text = sample(params, chars, chars.index("\n"), 200, np.random.default_rng(args.seed))
    print(f"sample:\n{text}\n")
    print(
        f"rnn: test {history['test bits/char'][-1]:.3f} bits/char after {steps} steps "
        f"(uniform: {np.log2(len(chars)):.2f}), {seconds:.1f} s; curves in {png}"
    )
    return history


if __name__ == "__main__":
    main()
