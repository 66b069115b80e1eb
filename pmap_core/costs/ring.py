"""The ring's arithmetic: what a collective of S bytes per device costs on a ring of D devices.

    all-reduce (psum):                          2(D−1) hops, 2(D−1)/D · S bytes sent per device
    all-gather, reduce-scatter (psum_scatter):   (D−1) hops,  (D−1)/D · S bytes sent per device
    all-to-all (all_to_all):                     (D−1) steps, (D−1)/D · S bytes sent per device

An all-reduce is a reduce-scatter followed by an all-gather: two passes round the ring. Each hop
pays the per-hop latency α; the bytes factor is what every link carries relative to S, which is
also nccl-tests' bus-bandwidth factor (busbw = algbw × factor).

An all-to-all of S bytes per device (each device's buffer holds one S/D chunk for every device, and receives one
from each) is counted as the pairwise exchange does it, the long-message all-to-all of MPICH (Thakur, Rabenseifner
and Gropp 2005, "Optimization of collective communication operations in MPICH"): D − 1 steps, in each a device
sends one of its chunks of S/D to one other device, t = (D−1)·α + (D−1)/D · S/β (nccl-tests' alltoall.cu: busbw =
algbw × (D−1)/D). One trip round the ring's count, in steps and bytes: a device sends what it does not keep, once.
A ring whose links forward chunks hop by hop carries more per link (the JAX Scaling Book, "Sharded Matrices": an
AllToAll's chunks go part-way round, which takes a quarter of the time of an AllGather of the same array on a
bidirectional ring); the α-β fit of measured times (`costs.fit`) says which the machine is closer to.
"""

from __future__ import annotations

from pmap_core.validation import LabInputError

PASSES = {"psum": 2, "all_gather": 1, "psum_scatter": 1, "all_to_all": 1}  # trips round the ring


def passes(op: str) -> int:
    """Trips round the ring that `op` makes: 2 for all-reduce, 1 for all-gather and reduce-scatter, and 1 for the
    pairwise-exchange all-to-all (D − 1 steps)."""
    if op not in PASSES:
        raise LabInputError("unknown_op", "the ring model has no formula for {op!r}", op=op)
    return PASSES[op]


def hops(op: str, devices: int) -> float:
    """Latency hops of `op` on a ring of `devices`: passes × (D−1)."""
    return float(passes(op) * (devices - 1))


def bytes_factor(op: str, devices: int) -> float:
    """Bytes each device sends per byte of S: passes × (D−1)/D."""
    return passes(op) * (devices - 1) / devices


def seconds(op: str, devices: int, size_bytes: float, alpha_s: float, beta_bytes_per_s: float) -> float:
    """The α-β model: t = hops·α + factor·S/β."""
    return hops(op, devices) * alpha_s + bytes_factor(op, devices) * size_bytes / beta_bytes_per_s
