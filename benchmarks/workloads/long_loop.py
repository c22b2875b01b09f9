"""Long scalar loop: the scalar loop's code run for 100,000 iterations.

In continuation-passing style a loop's backpropagator calls itself once per iteration; cpsad
runs that chain of continuations as a stack of saved frames and two while loops (the
defunctionalize stage). This is where depth, not the cost per operation, would show.
"""

from benchmarks.problem import Problem
from benchmarks.workloads.scalar_loop import handwritten, jax_jit_loss, loss, torch_loss

NAME = "100k loop"
TITLE = "the scalar loop for 100,000 iterations"
N = 100_000

__all__ = ["NAME", "TITLE", "loss", "handwritten", "torch_loss", "jax_jit_loss", "problem"]


def problem(tiny: bool) -> Problem:
    skip = {
        "jax eager": "thousands of times hand-written numpy on the 1,000-step loop: minutes a call",
    }
    return Problem(
        args=(0.5, 0.7, 0.3, 20 if tiny else N),
        argnums=(0, 1, 2),
        static=(3,),
        skip={} if tiny else skip,
        rtol=1e-7,
    )
