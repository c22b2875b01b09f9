"""What the examples share that is not the model: data loading, progress, curves, options.

Nothing here is differentiated; the models and their losses live in the example files.
"""

from __future__ import annotations

import argparse
import functools
import os

import numpy as np
from tqdm.auto import tqdm

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(HERE, "data")


# ------------------------------------------------------------------------------------------- data


def load_digits():
    """The 1,797 UCI digits: images as floats in [0, 1], shape (1797, 64), and labels 0..9."""
    data = np.load(os.path.join(DATA, "digits.npz"))
    return data["images"].astype(np.float64) / 16.0, data["labels"].astype(np.int64)


def digits_split(seed=0, n_test=360):
    """(train images, train labels, test images, test labels), a fixed random split."""
    X, labels = load_digits()
    order = np.random.default_rng(seed).permutation(len(X))
    test, train = order[:n_test], order[n_test:]
    return X[train], labels[train], X[test], labels[test]


def load_sonnets():
    """Shakespeare's Sonnets as one string (public domain; see data/README.md)."""
    with open(os.path.join(DATA, "sonnets.txt")) as fh:
        return fh.read()


def encode_text(text, held_out=0.1):
    """(characters, train codes, test codes): the last ``held_out`` of the text is for testing."""
    chars = sorted(set(text))
    index = {c: i for i, c in enumerate(chars)}
    codes = np.array([index[c] for c in text], dtype=np.int64)
    cut = int(len(codes) * (1 - held_out))
    return chars, codes[:cut], codes[cut:]


def windows(codes, length, starts):
    """Inputs and next-character targets of the windows at ``starts``, each (length, batch)."""
    idx = np.asarray(starts)[None, :] + np.arange(length)[:, None]
    return codes[idx], codes[idx + 1]


# ----------------------------------------------------------------------------------- progress bar


def progress_bar(total, label, unit="step", show=True, file=None):
    """tqdm's progress bar over ``total`` steps, on stderr (``tqdm.auto``: a widget in a notebook).

    ``bar.set_postfix(loss=..., refresh=False)`` shows the latest numbers, ``bar.update()`` moves it
    on, ``bar.write(line)`` prints a line to stdout above it, ``bar.close()`` ends it. It is drawn
    only where it can be redrawn in place, a terminal or a notebook (tqdm's ``disable=None``): a log
    or a pipe gets the printed lines alone. ``show=False`` (``--no-progress``) leaves it out anywhere.
    """
    return tqdm(
        total=total, desc=label, unit=unit, file=file, disable=None if show else True, leave=True
    )


# ----------------------------------------------------------------------------------------- curves


def save_curves(path, title, panels, xlabel="epoch"):
    """Plot ``{panel title: {curve label: (xs, ys)}}`` side by side into the PNG file ``path``."""
    import matplotlib

    matplotlib.use("Agg")  # headless: no display needed
    import matplotlib.pyplot as plt
    import matplotlib.ticker

    fig, axes = plt.subplots(1, len(panels), figsize=(5 * len(panels), 3.6), squeeze=False)
    for ax, (name, curves) in zip(axes[0], panels.items()):
        for label, (xs, ys) in curves.items():
            ax.plot(xs, ys, marker="." if len(xs) < 40 else None, label=label)
        ax.set_title(name)
        ax.set_xlabel(xlabel)
        ax.xaxis.set_major_locator(matplotlib.ticker.MaxNLocator(integer=True))
        ax.grid(alpha=0.3)
        ax.legend()
    fig.suptitle(title)
    fig.tight_layout()
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path


# ------------------------------------------------------------------------------------ the options


def one_blas_thread(main):
    """Run ``main`` with numpy's BLAS on one thread (restored afterwards).

    The examples multiply small matrices, thousands of times: a second BLAS thread only adds its
    hand-over, and on a busy machine its waiting can make a step ten times slower.
    """

    @functools.wraps(main)
    def run(*args, **kwargs):
        try:
            from threadpoolctl import threadpool_limits
        except ImportError:  # the `examples` extra is not installed: run as is
            return main(*args, **kwargs)
        with threadpool_limits(limits=1, user_api="blas"):
            return main(*args, **kwargs)

    return run


def parser(doc, **defaults):
    """The options every example takes: --quick, --out, --seed, and its own numbers."""
    p = argparse.ArgumentParser(
        description=doc, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--quick", action="store_true", help="a run of a few seconds, to try it out")
    p.add_argument("--out", default="out", help="folder for the curve PNG (default: out/)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    for name, value in defaults.items():
        p.add_argument(f"--{name.replace('_', '-')}", type=type(value), default=value)
    return p


# -------------------------------------------------------------------------------------- optimizer


class Adam:
    """Adam (Kingma and Ba, 2015) on a flat dict of arrays, with the gradient's norm clipped."""

    def __init__(self, params, lr=2e-3, beta1=0.9, beta2=0.999, eps=1e-8, clip=5.0):
        self.lr, self.beta1, self.beta2, self.eps, self.clip = lr, beta1, beta2, eps, clip
        self.m = {k: np.zeros_like(v) for k, v in params.items()}
        self.v = {k: np.zeros_like(v) for k, v in params.items()}
        self.t = 0

    def step(self, params, grads):
        """The parameters after one step (a new dict; the old one is left alone)."""
        norm = np.sqrt(sum(float(np.sum(g * g)) for g in grads.values()))
        scale = min(1.0, self.clip / (norm + 1e-12))
        self.t += 1
        out = {}
        for k, p in params.items():
            g = grads[k] * scale
            self.m[k] = self.beta1 * self.m[k] + (1 - self.beta1) * g
            self.v[k] = self.beta2 * self.v[k] + (1 - self.beta2) * g * g
            m_hat = self.m[k] / (1 - self.beta1**self.t)
            v_hat = self.v[k] / (1 - self.beta2**self.t)
            out[k] = p - self.lr * m_hat / (np.sqrt(v_hat) + self.eps)
        return out
