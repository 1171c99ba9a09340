"""Solver-graded metrics: the optimal-move rate and the exhaustive never-lose check."""
import numpy as np
import pytest

import zoo
from lzlite.worker.metrics import graded_positions, losing_positions_vs_any_opponent, optimal_move_rate
from zoo.bots import make_bot


class BotPolicy:
    """A stand-in for a Policy: `act` returns an object with `.action`, chosen by a zoo bot."""

    def __init__(self, game_name, kind):
        self.bot = make_bot(game_name, kind, seed=0)

    def act(self, venv, idx, rng, mode="eval"):
        class Out:
            action = self.bot.act_batch(np.ascontiguousarray(venv.states[idx])).astype(np.int64)

        return Out()


@pytest.fixture(scope="module")
def tictactoe_graded():
    return graded_positions("tictactoe")


def test_tictactoe_graded_set_is_every_reachable_position(tictactoe_graded):
    states, optimal = tictactoe_graded
    g = zoo.make_batch_game("tictactoe")
    assert len(states) == 4520 and len(set(g.hash(states).tolist())) == 4520
    assert not g.is_terminal(states).any()
    assert (optimal <= g.legal_mask(states)).all() and optimal.any(axis=1).all()
    # the empty board: every first move keeps the draw
    empty = np.flatnonzero(g.num_moves(states) == 0)[0]
    assert optimal[empty].sum() == 9


def test_perfect_play_scores_one_and_random_play_does_not(tictactoe_graded):
    states, optimal = tictactoe_graded
    assert optimal_move_rate(BotPolicy("tictactoe", "perfect"), "tictactoe", states, optimal) == 1.0
    assert optimal_move_rate(BotPolicy("tictactoe", "random"), "tictactoe", states, optimal) < 0.9


@pytest.mark.parametrize("side", [0, 1])
def test_never_lose_check(side):
    assert losing_positions_vs_any_opponent(BotPolicy("tictactoe", "perfect"), "tictactoe", side) == 0
    assert losing_positions_vs_any_opponent(BotPolicy("tictactoe", "random"), "tictactoe", side) > 0


def test_connect4_graded_set_matches_the_solver():
    from zoo.bots import Connect4Solver

    states, optimal = graded_positions("connect4")
    solver = Connect4Solver(tt_log2=20)
    for i in range(0, len(states), 40):  # a sample: the solver is the reference
        assert sorted(np.flatnonzero(optimal[i]).tolist()) == solver.value_preserving_moves(states[i])


def test_unknown_game_is_a_clear_error():
    with pytest.raises(ValueError, match="no graded positions"):
        graded_positions("gomoku")
