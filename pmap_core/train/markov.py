"""The transformer's task: a fixed random second-order Markov chain over `vocab` tokens, drawn from the seed.

Each context (a, b) of the two previous tokens has `SUCCESSORS` possible next tokens with random
probabilities; a sequence starts with two uniform tokens. Why this task rather than text: it is
generated from the seed (nothing to store, the same for any device count), its best possible loss is
known (the chain's own cross-entropy on the batch, `floor_loss`), and predicting it needs attention —
the next token depends on the token *before* the current one, which only attention to position t − 1
can bring in. Its loss falls visibly within 200 SGD steps from ln(vocab) as the model learns which
tokens follow which (measured in tests/core/test_transformer.py). `train.transformer` re-exports these names.
"""

from __future__ import annotations

import math

import numpy as np

from pmap_core.train.transformer_size import Dims

SUCCESSORS = 3       # next tokens a context of two tokens can have


def chain(dims: Dims, seed: int) -> np.ndarray:
    """(vocab, vocab, vocab): P[a, b, c], the probability that c follows the tokens a, b — `SUCCESSORS`
    possible c for each context, with weights from a flat Dirichlet."""
    rng = np.random.default_rng(seed + 1_000_033)
    v = dims.vocab
    table = np.zeros((v, v, v))
    successors = min(SUCCESSORS, v)
    for a in range(v):
        for b in range(v):
            table[a, b, rng.choice(v, successors, replace=False)] = rng.dirichlet(np.ones(successors))
    return table


def make_sequences(dims: Dims, samples: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """(x, y), each (samples, seq_len) int32: y is x shifted by one, the next token at each position."""
    table = chain(dims, seed)
    cdf = np.cumsum(table, axis=-1)
    rng = np.random.default_rng(seed)
    tokens = np.zeros((samples, dims.seq_len + 1), np.int64)
    tokens[:, :2] = rng.integers(0, dims.vocab, (samples, 2))
    for t in range(2, dims.seq_len + 1):
        u = rng.random(samples)[:, None]
        tokens[:, t] = np.minimum((cdf[tokens[:, t - 2], tokens[:, t - 1]] < u).sum(-1), dims.vocab - 1)
    return tokens[:, :-1].astype(np.int32), tokens[:, 1:].astype(np.int32)


def floor_loss(dims: Dims, x: np.ndarray, y: np.ndarray, seed: int) -> float:
    """The chain's own cross-entropy on (x, y): the best loss any model can expect on that batch. The first
    target follows one uniform token (ln vocab); every later one has its context (x[t−1], x[t])."""
    table = chain(dims, seed)
    p = table[x[:, :-1], x[:, 1:], y[:, 1:]]
    first = np.full((x.shape[0], 1), math.log(dims.vocab))
    return float(np.mean(np.concatenate([first, -np.log(p)], axis=1)))
