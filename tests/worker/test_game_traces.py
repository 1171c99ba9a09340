"""The evaluator's game loop records every move, and ``model_report.py --games`` grades them with the solver."""
from __future__ import annotations

import os
import sys
from types import SimpleNamespace

import numpy as np
from easydict import EasyDict

from lzlite.envs.vector import BoardVectorEnv
from lzlite.worker.evaluator import play_against_bot
from zoo.bots import Connect4Solver, make_bot

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", ".."))
from benchmarks.model_report import game_traces  # noqa: E402


class RandomMover:
    """A stand-in policy: a uniformly random legal move from the generator it is given (as eval search gets)."""

    def act(self, venv, idx, rng, mode="eval"):
        legal = venv.legal_mask()[idx]
        return SimpleNamespace(action=np.array([rng.choice(np.flatnonzero(row)) for row in legal], dtype=np.int64))


def _replay(moves):
    env = BoardVectorEnv("connect4", 1)
    env.reset()
    for a in moves:
        env.step(np.array([a]))
    return env


def test_play_against_bot_records_both_sides_moves():
    venv = BoardVectorEnv("connect4", 6)
    bot = make_bot("connect4", "alpha_beta", depth=2, seed=3)
    winner, agent_player, moves = play_against_bot(RandomMover(), venv, bot, np.random.default_rng(0))
    assert list(agent_player) == [0, 1, 0, 1, 0, 1]
    for i, line in enumerate(moves):
        env = _replay(line)  # the recorded moves alone rebuild each final position and its result
        assert env.done[0] and np.array_equal(env.states[0], venv.states[i])
        assert env.winner()[0] == winner[i]
    assert (winner != agent_player).sum() >= 5  # depth-2 alpha-beta beats a random mover


def test_game_traces_flag_exactly_the_moves_the_solver_calls_result_losing():
    cfg = EasyDict(policy=EasyDict(eval_bot_depth=1))
    from_ply = 8  # positions with 8+ stones solve in well under a second
    rows = game_traces(RandomMover(), cfg, games=8, from_ply=from_ply, seed=1)
    assert sum(r["count"] for r in rows) == 8
    assert [r["count"] for r in rows] == sorted((r["count"] for r in rows), reverse=True)
    solver, graded = Connect4Solver(), 0
    for r in rows:
        side = 0 if r["agent"] == "first" else 1
        env = _replay([])
        expected = []
        for ply, ch in enumerate(r["moves"]):
            a = int(ch)
            if ply % 2 == side and ply >= from_ply:
                graded += 1
                values = solver.move_values(env.states[0])
                if a not in solver.value_preserving_moves(env.states[0]):
                    expected.append((ply, a, int(np.nanmax(values)), int(values[a])))
            env.step(np.array([a]))
        assert r["errors"] == expected
        assert all(before > after for _, _, before, after in r["errors"])
        result = {-1: "draw"}.get(int(env.winner()[0]), "win" if env.winner()[0] == side else "loss")
        assert r["result"] == result
    assert graded == sum(r["graded"] for r in rows) > 0
    assert any(r["errors"] for r in rows)  # a random mover throws results away


def _segment(moves, values):
    """A closed GameSegment of a Connect Four game played along ``moves``, stored search values ``values``."""
    from lzlite.buffer.game_segment import GameSegment

    env = _replay([])
    seg = GameSegment(action_space_size=7)
    for a, v in zip(moves, values):
        pi = np.zeros(7, np.float32)
        pi[a] = 1.0
        seg.append(env.observe()[0], action=a, reward=0.0, to_play=int(env.to_play()[0]),
                   legal_mask=env.legal_mask()[0], root_value=v, policy=pi)
        env.step(np.array([a]))
    seg.close(env.observe()[0], done=False, bootstrap_value=0.0)
    return seg


def test_buffer_line_report_counts_positions_and_their_mirrors_in_the_checkpoint_buffer():
    from benchmarks.model_report import buffer_line_report
    from lzlite.buffer.replay import ReplayBuffer

    buf = ReplayBuffer(dict(replay_buffer_size=100, value_sign=-1))
    # 3,3 is reached by the first two games; 2,4 and its mirror 4,2 are the same position up to the mirror;
    # the third game's 3 at ply 2 follows 0,6, a different position from 3,3.
    buf.push_segments([_segment([3, 3, 2], [0.1, 0.2, 0.3]), _segment([3, 3, 4], [0.1, 0.4, 0.5]),
                       _segment([0, 6, 3], [0.0, 0.0, 0.0]), _segment([2, 4, 1], [0.0, 0.6, 0.6]),
                       _segment([4, 2, 1], [0.0, -0.2, 0.6])])
    rows = buffer_line_report({"buffer": buf.state_dict()}, "connect4", [[], [3], [3, 3], [4, 2], [5, 5]])
    got = {r["line"]: r for r in rows}
    assert [got[k]["count"] for k in ("(start)", "3", "3,3", "4,2", "5,5")] == [5, 2, 2, 2, 0]
    assert all(r["live"] == 15 for r in rows)  # 5 games x 3 moves; the final-state rows are not positions
    assert np.isclose(got["3,3"]["value"], 0.4) and np.isclose(got["4,2"]["value"], 0.6)
    np.testing.assert_allclose(got["3,3"]["policy"], [0, 0, 0.5, 0, 0.5, 0, 0])  # the moves 2 and 4 played there
    np.testing.assert_allclose(got["4,2"]["policy"], [0, 0.5, 0, 0, 0, 0.5, 0])  # 1 after 4,2; 1 after 2,4 mirrored
    assert np.isnan(got["5,5"]["value"])
    try:
        buffer_line_report({"policy": {}}, "connect4", [[3]])
    except ValueError as e:
        assert "no replay buffer" in str(e)
    else:
        raise AssertionError("a checkpoint without a buffer must be refused")
