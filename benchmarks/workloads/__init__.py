"""The workloads: one module each, in the order of the results table.

A workload module defines

* ``NAME``, ``TITLE`` -- its key and a one-line description;
* ``loss(...)`` -- the function as a numpy user writes it: what cpsad differentiates (and, with
  ``np`` rebound, autograd and JAX);
* ``handwritten(...) -> (value, gradients)`` -- the same forward computation and an efficient
  hand-written backward pass: the denominator of every ratio;
* ``torch_loss(...)`` -- the same function written for PyTorch;
* ``problem(tiny) -> Problem`` -- its inputs, at benchmark size or tiny (for the test).
"""

from benchmarks.workloads import cnn, long_loop, mlp, rnn, scalar_loop, treelstm

ALL = [scalar_loop, long_loop, mlp, rnn, treelstm, cnn]
