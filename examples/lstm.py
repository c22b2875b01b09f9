"""An LSTM language model over characters, on Shakespeare's Sonnets, differentiated by cpsad.

    python examples/lstm.py              # train 2,000 steps (two to three minutes), print samples
    python examples/lstm.py --quick      # 100 steps of a smaller LSTM, a few seconds
    python examples/lstm.py --out DIR    # where the loss curve goes (default out/)

Each character is looked up in an embedding table (``params["embed"][x]``, an integer index:
its adjoint adds each row's gradients back, repeated characters included), fed to an LSTM cell
(Hochreiter and Schmidhuber, 1997, with a forget gate) written as a function of its own, and the
cell's output scores the next character. ``loss`` runs the cell over a batch of windows with a
``for`` loop, as ``rnn.py`` does; cpsad turns the loop and the call of ``lstm_cell`` inside it
into continuations, so the backward pass runs back through time as they return.

The score is the cross-entropy in bits per character on the last 10% of the text, held out (a
uniform guess: log2(62) = 5.95 bits).

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

BACKPROPAGATORS = {"loss": "params", "lstm_cell": "params, h, c"}


def sigmoid(z):
    return 1.0 / (1.0 + np.exp(-z))


def lstm_cell(params, x, h, c):
    """One step of the LSTM: x holds character codes (batch,), h and c the state (batch, hidden)."""
    z = params["embed"][x] @ params["Wx"] + h @ params["Wh"] + params["b"]
    i, f, o, g = np.split(z, 4, axis=1)  # input, forget and output gates; the candidate
    c = sigmoid(f) * c + sigmoid(i) * np.tanh(g)
    h = sigmoid(o) * np.tanh(c)
    return h, c


def loss(params, inputs, targets):
    """Mean cross-entropy (nats) of the next characters; inputs and targets are (steps, batch)."""
    batch, hidden = inputs.shape[1], params["Wh"].shape[0]
    h, c = np.zeros((batch, hidden)), np.zeros((batch, hidden))
    total = 0.0
    for x, t in zip(inputs, targets):
        h, c = lstm_cell(params, x, h, c)
        logits = h @ params["Wy"] + params["by"]
        m = np.max(logits, axis=1, keepdims=True)
        logp = logits - m - np.log(np.sum(np.exp(logits - m), axis=1, keepdims=True))
        total = total - np.mean(logp[np.arange(batch), t])
    return total / len(targets)


def init_params(rng, vocab, hidden=128, embed=32):
    b = np.zeros(4 * hidden)
    b[hidden : 2 * hidden] = 1.0  # forget gates start open
    return {
        "embed": rng.normal(size=(vocab, embed)) * 0.1,
        "Wx": rng.normal(size=(embed, 4 * hidden)) / np.sqrt(embed),
        "Wh": rng.normal(size=(hidden, 4 * hidden)) / np.sqrt(hidden),
        "b": b,
        "Wy": rng.normal(size=(hidden, vocab)) / np.sqrt(hidden),
        "by": np.zeros(vocab),
    }


def sample(params, chars, first, n, rng, temperature=0.7):
    """n characters drawn from the model, one after another, after the character ``first``."""
    hidden = params["Wh"].shape[0]
    h, c = np.zeros((1, hidden)), np.zeros((1, hidden))
    out = [first]
    for _ in range(n):
        h, c = lstm_cell(params, np.array([out[-1]]), h, c)
        logits = (h @ params["Wy"] + params["by"])[0] / temperature
        p = np.exp(logits - logits.max())
        out.append(int(rng.choice(len(chars), p=p / p.sum())))
    return "".join(chars[i] for i in out)


def evaluate(params, codes, length=64, batch=64):
    """Bits per character on ``codes``, cut into windows (each from a zero state)."""
    starts = np.arange(0, len(codes) - length - 1, length)
    total = 0.0
    for i in range(0, len(starts), batch):
        xs, ys = windows(codes, length, starts[i : i + batch])
        total += loss(params, xs, ys) * xs.shape[1]
    return total / len(starts) / np.log(2)


def train(
    steps=2000, length=32, batch=32, hidden=128, lr=3e-3, seed=0, verbose=True, progress=True
):
    """Adam on random windows; (params, history) with the train and test bits per character."""
    chars, train_codes, test_codes = encode_text(load_sonnets())
    rng = np.random.default_rng(seed)
    params = init_params(rng, len(chars), hidden)
    opt = Adam(params, lr=lr)
    step = cpsad.value_and_grad(loss)
    history = {"step": [], "train bits/char": [], "test step": [], "test bits/char": []}
    every = max(1, steps // 10)
    bar = progress_bar(steps, "lstm", show=verbose and progress)
    for n in range(1, steps + 1):
        xs, ys = windows(train_codes, length, rng.integers(0, len(train_codes) - length - 1, batch))
        value, g = step(params, xs, ys)
        params = opt.step(params, g)
        history["step"].append(n)
        history["train bits/char"].append(value / np.log(2))
        bar.set_postfix(bits=value / np.log(2), refresh=False)
        bar.update()
        if n % every == 0 or n == steps:
            history["test step"].append(n)
            history["test bits/char"].append(evaluate(params, test_codes))
            if verbose:
                bar.write(f"step {n:5d}  test {history['test bits/char'][-1]:.3f} bits/char")
    bar.close()
    return params, history


@one_blas_thread
def main(argv=None):
    args = parser(__doc__, steps=2000).parse_args(argv)
    t0 = time.perf_counter()
    steps, hidden = (100, 64) if args.quick else (args.steps, 128)
    params, history = train(
        steps=steps, hidden=hidden, seed=args.seed, progress=not args.no_progress
    )
    seconds = time.perf_counter() - t0
    png = save_curves(
        os.path.join(args.out, "lstm.png"),
        "LSTM language model on Shakespeare's Sonnets",
        {
            "cross-entropy (bits/char)": {
                "train (each batch)": (history["step"], history["train bits/char"]),
                "test (held-out 10%)": (history["test step"], history["test bits/char"]),
            }
        },
        xlabel="step",
    )
    chars = sorted(set(load_sonnets()))
    text = sample(params, chars, chars.index("\n"), 300, np.random.default_rng(args.seed))
    print(f"sample:\n{text}\n")
    print(
        f"lstm: test {history['test bits/char'][-1]:.3f} bits/char after {steps} steps "
        f"(uniform: {np.log2(len(chars)):.2f}), {seconds:.1f} s; curves in {png}"
    )
    return history


if __name__ == "__main__":
    main()
