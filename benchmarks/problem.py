"""What a workload hands the harness: the arguments of one call and what is differentiated."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class Problem:
    """The arguments of one call of a workload's ``loss``, and which of them are differentiated."""

    args: tuple
    argnums: tuple[int, ...]
    static: tuple[
        int, ...
    ] = ()  # arguments that are not arrays (loop counts, trees): jit constants
    skip: dict[str, str] = field(default_factory=dict)  # framework -> why it is not measured
    rtol: float = 1e-8  # how closely every gradient must match the hand-written one
