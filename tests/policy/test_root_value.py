"""benchmarks/model_report.py's reports (root values against the solver, --line, --selfplay, --real-search, lookahead)
and Gumbel AlphaZero's improved-policy target."""
from __future__ import annotations

import os
import sys

import numpy as np
import pytest
import torch

from lzlite.envs.vector import BoardVectorEnv

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "entry"))
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", ".."))
from benchmarks.model_report import (_moves, handing_pairs, line_report, search_report, selfplay_report,  # noqa: E402
                                     tactical_errors, win_perception)
from tiny_configs import tiny_policy as _policy  # noqa: E402


def _random_weights(policy):
    """Random weights (an untrained value head outputs exactly 0)."""
    torch.manual_seed(0)
    with torch.no_grad():
        for p in policy.model.parameters():
            p.add_(0.3 * torch.randn_like(p))
    return policy


def _searched(policy, mode):
    venv = BoardVectorEnv("tictactoe", 6)
    venv.reset()
    venv.step(np.array([4, 0, 8, 2, 1, 3]))  # six different one-move openings
    return policy.act(venv, np.arange(6), np.random.default_rng(0), mode=mode)


def test_model_report_grades_both_root_values_against_the_solver_sign():
    """benchmarks/model_report.py's search report: each root value's error to the solver's sign."""
    from lzlite.worker.metrics import graded_positions

    policy = _random_weights(_policy("gumbel_muzero"))
    states, _ = graded_positions("tictactoe")
    scores = np.random.default_rng(1).integers(-1, 2, len(states))  # stand-in solver scores
    got = search_report(policy, "tictactoe", scores)
    venv = BoardVectorEnv("tictactoe", len(states))
    venv.states[:] = states
    out = policy.act(venv, np.arange(len(states)), np.random.default_rng(0), mode="eval")
    rows = np.arange(len(states))
    assert (out.visit_counts[rows, out.action] > 0).all()
    for kind, v in (("mean", out.root_value), ("move_q", out.qvalues[rows, out.action])):
        np.testing.assert_allclose(got[f"search_{kind}_sq_err"], ((v - np.sign(scores)) ** 2).mean(), rtol=1e-5)
        d = scores != 0
        np.testing.assert_allclose(got[f"search_{kind}_sign"], (np.sign(v[d]) == np.sign(scores[d])).mean())
    assert got["search_mean_sq_err"] != got["search_move_q_sq_err"]


def test_model_report_line_searches_the_position_after_the_moves():
    """benchmarks/model_report.py --line: the eval search after a move sequence, as the policy plays it."""

    policy = _random_weights(_policy("gumbel_muzero"))
    rows = line_report(policy, "tictactoe", [[], [4, 0]])
    assert [r["line"] for r in rows] == ["(start)", "4,0"]
    venv = BoardVectorEnv("tictactoe", 1)
    venv.reset()
    venv.step(np.array([4]), np.array([0]))
    venv.step(np.array([0]), np.array([0]))
    out = policy.act(venv, np.array([0]), np.random.default_rng(0), mode="eval")
    assert rows[1]["move"] == out.action[0] and rows[1]["move"] not in (0, 4), "occupied squares are never played"
    np.testing.assert_allclose(rows[1]["visits"], out.visit_counts[0])
    assert rows[1]["visits"][[0, 4]].sum() == 0
    np.testing.assert_allclose(rows[1]["prior"].sum(), 1.0, rtol=1e-5)
    assert rows[0]["value"] != rows[1]["value"]
    assert _moves("3, 3,2") == [3, 3, 2] and _moves("") == []
    with pytest.raises(Exception, match="comma-separated actions"):
        _moves("3;3")
    with pytest.raises(ValueError, match="illegal action 4"):  # model_report turns it into a usage error
        line_report(policy, "tictactoe", [[4, 4]])


def test_model_report_counts_missed_and_handed_immediate_wins():
    """--selfplay's move grading on hand-made tic-tac-toe positions (cells 0-8 row by row)."""
    venv = BoardVectorEnv("tictactoe", 1)
    venv.reset()
    for a in (0, 4, 1):  # X 0, 1 and O 4: O to move, X threatens 2
        venv.step(np.array([a]), np.array([0]))
    state = venv.states[0].copy()
    assert tactical_errors(venv.game, state, 2) == (False, False), "blocking is no error"
    assert tactical_errors(venv.game, state, 7) == (False, True), "anything else hands X the win at 2"
    venv.step(np.array([2]), np.array([0]))  # O blocks and threatens 2-4-6
    state = venv.states[0].copy()
    assert tactical_errors(venv.game, state, 6) == (False, False)
    assert tactical_errors(venv.game, state, 3) == (False, True)
    venv.step(np.array([3]), np.array([0]))  # X errs: O to move wins at 6
    state = venv.states[0].copy()
    assert tactical_errors(venv.game, state, 6) == (False, False)
    assert tactical_errors(venv.game, state, 5) == (True, False), "passing up the win at 6"


def test_model_report_selfplay_plays_whole_games_reproducibly():
    policy = _random_weights(_policy("gumbel_muzero"))
    a = selfplay_report(policy, "tictactoe", 8, random_opening_plies=2, temperature_moves=2, seed=3)
    b = selfplay_report(policy, "tictactoe", 8, random_opening_plies=2, temperature_moves=2, seed=3)
    assert a == b
    assert a["selfplay_games"] == 8 and 3 <= a["selfplay_length"] <= 9  # recorded plies after a 0-2 ply opening
    assert 0 <= a["selfplay_draws"] <= 1
    for key in ("missed_win", "handed_win", "missed_win_best_move_plies", "handed_win_best_move_plies"):
        assert 0 <= a[f"selfplay_{key}"] <= 1
    assert a["selfplay_handed_win"] + a["selfplay_missed_win"] > 0, "random weights blunder somewhere in 8 games"


def test_model_report_lists_the_moves_that_hand_a_win_and_probes_the_reward_head():
    venv = BoardVectorEnv("tictactoe", 1)
    venv.reset()
    for a in (0, 4, 1):  # O to move, X threatens 2: every other move hands X the win at 2
        venv.step(np.array([a]), np.array([0]))
    assert handing_pairs(venv.game, venv.states[0]) == [(3, 2), (5, 2), (6, 2), (7, 2), (8, 2)]
    venv.step(np.array([2]), np.array([0]))  # X to move, O threatens 6 (2-4-6)
    state = venv.states[0].copy()
    assert handing_pairs(venv.game, state) == [(3, 6), (5, 6), (7, 6), (8, 6)]
    venv.step(np.array([3]), np.array([0]))
    assert handing_pairs(venv.game, venv.states[0]) == [], "O can win at once: nothing to avoid"

    policy = _random_weights(_policy("muzero"))
    learned, real = win_perception(policy, venv.game, state, [(3, 6), (8, 6)])
    model = policy.model.eval()
    with torch.no_grad():  # by hand: the real position after X plays 8, then O's reply 6 through the dynamics
        after = np.repeat(state[None], 1, axis=0)
        venv.game.step(after, np.array([8], dtype=np.int32))
        latent = model.initial_inference(policy.to_tensor(venv.game.observe(after))).latent_state
        reward = model.to_scalar(model.recurrent_inference(latent, torch.tensor([6])).reward)
    assert real[1] == pytest.approx(float(reward), abs=1e-5)
    assert learned.shape == real.shape == (2,) and not np.allclose(learned, real), "dynamics != representation"


def test_model_report_selfplay_probes_win_perception_for_learned_models_only():
    stats = selfplay_report(_random_weights(_policy("gumbel_muzero")), "tictactoe", 8, 2, 2, seed=3)
    assert stats["selfplay_handing_moves"] > 0
    for key in ("win_seen_learned", "win_seen_real"):
        assert 0 <= stats[f"selfplay_{key}"] <= 1
    az = selfplay_report(_random_weights(_policy("alphazero")), "tictactoe", 8, 2, 2, seed=3)
    assert not any(k.startswith("selfplay_win_seen") for k in az)


def test_gumbel_alphazero_searches_the_real_game_and_trains_on_the_improved_policy():
    policy = _random_weights(_policy("gumbel_alphazero", max_num_considered_actions=4))
    assert policy.cfg.search_rule == "gumbel"
    out = _searched(policy, "collect")
    target = policy.policy_target(out)
    np.testing.assert_allclose(target, out.improved_policy, atol=1e-6)
    visits = out.visit_counts / out.visit_counts.sum(1, keepdims=True)
    assert not np.allclose(target, visits, atol=1e-3), "not AlphaZero's visit-count target"
    assert (out.visit_counts > 0).sum(1).max() <= 4, "sequential halving over the sampled moves"


@pytest.mark.parametrize("algo", ["muzero", "gumbel_muzero"])
def test_model_report_real_search_searches_the_networks_heads_over_the_real_game(algo):
    """benchmarks/model_report.py --real-search: an untrained network (uniform prior, value and reward 0) searched
    through its learned model knows nothing, while the same heads over the real game see every win and block
    the search reaches."""
    from benchmarks.model_report import real_search_report
    from lzlite.config import compile_config
    from lzlite.entry.loop import build_components
    from tiny_configs import tiny_config

    cfg = compile_config(*tiny_config(algo, num_simulations=32, eval_bots=["perfect"], eval_episodes=8,
                                      eval_optimal_move_rate=True), seed=0)
    parts = build_components(cfg)
    policy = parts["policy"]
    own = parts["evaluator"].eval()
    real = real_search_report(policy, cfg, episodes=8)
    assert real["real_search/optimal_move_rate"] > own["optimal_move_rate"] + 0.15, (real, own)
    assert real["real_search/perfect/loss"] <= own["perfect/loss"]
    assert set(k[len("real_search/"):] for k in real) == set(own)


def test_model_report_lookahead_through_the_real_game():
    """benchmarks/model_report.py: lookahead_real and child_value_gap against the real game stepped move by move."""
    from benchmarks.model_report import report
    from lzlite.worker.metrics import graded_positions

    model = _random_weights(_policy("muzero")).model.eval()
    got = report(model, "tictactoe")
    states, optimal = graded_positions("tictactoe")
    picks, gaps = [], []
    with torch.no_grad():
        for i in range(len(states)):
            root = BoardVectorEnv("tictactoe", 1)
            root.states[:] = states[i:i + 1]
            latent = model.initial_inference(torch.as_tensor(root.observe())).latent_state
            q = {}
            for a in np.flatnonzero(root.legal_mask()[0]):
                env = BoardVectorEnv("tictactoe", 1)
                env.states[:] = states[i:i + 1]
                reward, done = env.step(np.array([a]))
                real = 0.0 if done[0] else model.to_scalar(model.initial_inference(torch.as_tensor(env.observe())).value).item()
                through = model.to_scalar(model.recurrent_inference(latent, torch.tensor([int(a)])).value).item()
                q[a] = float(reward[0]) - real
                gaps.append(abs(through - real))
            picks.append(optimal[i, max(q, key=q.get)])
    np.testing.assert_allclose(got["lookahead_real"], np.mean(picks), atol=1e-9)
    np.testing.assert_allclose(got["child_value_gap"], np.mean(gaps), rtol=1e-4)
    assert got["child_value_gap"] > 0.01  # random weights: the dynamics do not know the real positions' values
