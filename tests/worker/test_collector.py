"""The collector's temperature_moves: games sample their first N plies, then play their best move."""
from __future__ import annotations

import os
import sys

import numpy as np
import pytest
import torch

from lzlite.config import compile_config
from lzlite.entry.loop import build_components
from lzlite.envs.vector import BoardVectorEnv

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "entry"))
from tiny_configs import tiny_config  # noqa: E402

N = 2  # temperature_moves


def _collect(algo):
    parts = build_components(compile_config(*tiny_config(algo, temperature_moves=N, random_opening_plies=0,
                                                         symmetry_augmentation=False), seed=0))
    policy = parts["policy"]
    torch.manual_seed(0)
    with torch.no_grad():  # random weights: uneven priors, so sampling and the best move differ
        for p in policy.model.parameters():
            p.add_(0.1 * torch.randn_like(p))
    segments, _ = parts["collector"].collect(n_episode=8)
    return policy, [seg.to_arrays() for seg in segments]


def test_gumbel_plays_the_noise_free_search_move_after_n_plies():
    policy, games = _collect("gumbel_muzero")
    sampled = 0
    for arr in games:
        venv = BoardVectorEnv("tictactoe", 1)
        venv.reset()
        for ply, action in enumerate(arr["action"]):
            # the eval-mode search is deterministic: past N plies the same move must come out
            best = policy.act(venv, np.array([0]), np.random.default_rng(ply), mode="eval").action[0]
            if ply >= N:
                assert action == best, (ply, arr["action"])
            else:
                sampled += action != best
            venv.step(np.array([action]), np.array([0]))
    assert sampled > 0, "the first plies must still be searched with Gumbel noise"


def test_puct_plays_the_most_visited_move_after_n_plies():
    _, games = _collect("alphazero")
    first_moves = set()
    for arr in games:
        visits = arr["policy"]  # AlphaZero's policy target is the normalised visit counts
        greedy = np.arange(len(arr["action"])) >= N
        np.testing.assert_array_equal(arr["action"][greedy], visits[greedy].argmax(axis=1))
        first_moves.add(int(arr["action"][0]))
    assert len(first_moves) > 1, "the first plies must still be sampled"
