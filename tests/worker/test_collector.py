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


def _perturbed_parts(**overrides):
    """Tic-tac-toe Gumbel MuZero components with a seeded, perturbed (so decisive) random network."""
    parts = build_components(compile_config(*tiny_config("gumbel_muzero", random_opening_plies=0,
                                                         symmetry_augmentation=False, **overrides), seed=0))
    torch.manual_seed(0)
    with torch.no_grad():
        for p in parts["policy"].model.parameters():
            p.add_(0.1 * torch.randn_like(p))
    return parts


def _bot_collect(n_episode=8, **overrides):
    segments, stats = _perturbed_parts(**overrides)["collector"].collect(n_episode=n_episode)
    return [seg.to_arrays() for seg in segments], stats


def _optimal_sides(arr):
    """Which players (0 / 1) played only optimal moves in one recorded tic-tac-toe game."""
    from zoo.bots import optimal_moves

    venv = BoardVectorEnv("tictactoe", 1)
    venv.reset()
    all_optimal = {0: True, 1: True}
    for action, player in zip(arr["action"], arr["to_play"]):
        all_optimal[int(player)] &= int(action) in optimal_moves("tictactoe", venv.states[0])
        venv.step(np.array([action]), np.array([0]))
    return {p for p, ok in all_optimal.items() if ok}


def test_collect_bot_plays_one_side_of_each_game():
    games, stats = _bot_collect(collect_bot="perfect", collect_bot_fraction=1.0)
    assert stats["bot_games"] == 8.0 and len(games) == 8
    assert stats["bot_win"] == 0.0, "nobody beats the perfect tic-tac-toe bot"
    assert stats["bot_loss"] > 0.0, "a perturbed random network loses to it"
    sides = [_optimal_sides(arr) for arr in games]
    assert all(len(s) >= 1 for s in sides), "in every game one side (the bot) plays only optimal moves"
    assert {0, 1} <= set().union(*[s for s in sides if len(s) == 1]), "the bot takes both sides across games"
    for arr in games:  # every position, the bot's included, keeps the policy's own search target
        np.testing.assert_allclose(arr["policy"].sum(axis=1), 1.0, atol=1e-5)
        assert (arr["policy"][~arr["legal_mask"]] == 0).all()
    # without the bot the same network loses a self-play game to nobody and plays suboptimal moves both sides
    self_play, stats0 = _bot_collect()
    assert "bot_games" not in stats0
    assert any(len(_optimal_sides(arr)) == 0 for arr in self_play)


def test_collect_bot_fraction_zero_leaves_self_play_unchanged():
    a, _ = _bot_collect()
    b, stats = _bot_collect(collect_bot="perfect", collect_bot_fraction=0.0)
    assert "bot_games" not in stats
    assert [list(x["action"]) for x in a] == [list(x["action"]) for x in b]


def test_collect_bot_fraction_mixes_self_play_and_bot_games():
    _, stats = _bot_collect(n_episode=32, collect_bot="random", collect_bot_fraction=0.5)
    assert 4 <= stats["bot_games"] <= 28
    assert stats["episodes"] == 32.0


def _bot_collector(**overrides):
    parts = build_components(compile_config(*tiny_config("gumbel_muzero", random_opening_plies=0,
                                                         symmetry_augmentation=False, collect_bot="perfect",
                                                         collect_bot_fraction=1.0, **overrides), seed=0))
    return parts["collector"]


def test_collect_bot_sides_are_even_odds_and_reported_per_side():
    _, stats = _bot_collector().collect(n_episode=48)
    assert stats["bot_games_as_first"] + stats["bot_games_as_second"] == 48
    assert 12 <= stats["bot_games_as_first"] <= 36, stats
    assert stats["bot_win_as_first"] == stats["bot_win_as_second"] == 0.0  # nobody beats the perfect bot


@pytest.mark.parametrize("overrides, message", [
    (dict(collect_bot_fraction=0.5), "needs collect_bot"),
    (dict(collect_bot="alpha_bet", collect_bot_fraction=0.5), "did you mean 'alpha_beta'"),
    (dict(collect_bot="random", collect_bot_fraction=1.5), r"in \[0, 1\]"),
])
def test_collect_bot_bad_config_is_a_clear_error(overrides, message):
    with pytest.raises(ValueError, match=message):
        build_components(compile_config(*tiny_config("gumbel_muzero", **overrides), seed=0))


def test_segment_collector_refuses_collect_bot():
    with pytest.raises(ValueError, match="not supported by the segment collector"):
        build_components(compile_config(*tiny_config("unizero", collect_bot="random", collect_bot_fraction=0.5),
                                        seed=0))
