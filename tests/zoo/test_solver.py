"""The Connect Four solver against positions solved by an independent pure-Python search.

tests/zoo/solver_positions.json comes from zoo/connect4/gen_solver_positions.py (plain lists, a line
scan, a dict table; no shared code with solver.h). Score: mover's view, +k a win with k = 22 - the
mover's stones after its winning move, -k a loss, 0 a draw.
"""
from __future__ import annotations

import json
import os

import numpy as np
import pytest

import zoo
from zoo.bots import Connect4Solver, PerfectBot, RuleBot, optimal_moves

C4 = zoo.make_batch_game("connect4")
with open(os.path.join(os.path.dirname(__file__), "solver_positions.json")) as f:
    POSITIONS = json.load(f)["positions"]
SOLVER = Connect4Solver()  # one table for the module: reuse across positions must not change answers


def test_positions_cover_wins_losses_and_draws():
    scores = [p["score"] for p in POSITIONS]
    assert len(POSITIONS) >= 30 and min(p["stones"] for p in POSITIONS) >= 16
    assert min(scores) < 0 < max(scores) and 0 in scores


@pytest.mark.parametrize("pos", POSITIONS, ids=[p["moves"] for p in POSITIONS])
def test_matches_reference(pos):
    state = C4.parse(pos["text"])
    expected = np.array([np.nan if s is None else s for s in pos["move_scores"]], dtype=np.float64)
    assert SOLVER.score(state) == pos["score"]
    np.testing.assert_array_equal(SOLVER.move_scores(state), expected)
    assert SOLVER.optimal_moves(state) == pos["optimal_moves"]
    # Value-preserving moves: same sign of score as the best.
    sign = np.sign(pos["score"])
    keep = [c for c, s in enumerate(pos["move_scores"]) if s is not None and np.sign(s) == sign]
    assert optimal_moves("connect4", state) == keep


def test_text_and_move_sequence_agree():
    for pos in POSITIONS[:5]:
        states = C4.new_states(1)
        for ch in pos["moves"]:
            C4.step(states, np.array([int(ch) - 1]))
        np.testing.assert_array_equal(states[0], C4.parse(pos["text"]))


def _random_positions(stones: int, count: int, seed: int):
    rng = np.random.default_rng(seed)
    out = []
    while len(out) < count:
        s = C4.new_states(1)
        for _ in range(stones):
            legal = np.flatnonzero(C4.legal_mask(s)[0])
            C4.step(s, np.array([rng.choice(legal)]))
            if C4.is_terminal(s)[0]:
                break
        if not C4.is_terminal(s)[0]:
            out.append(s[0].copy())
    return out


def test_middle_game_negamax_consistency():
    # 12-stone positions (too early for the Python reference): score = best move score, playing an
    # optimal move hands the opponent exactly -score, and the weak solve has the same sign.
    solver = Connect4Solver()
    for state in _random_positions(12, 2, seed=3):
        scores = solver.move_scores(state)
        best = solver.score(state)
        assert best == np.nanmax(scores)
        col = solver.optimal_moves(state)[0]
        child = state[None].copy()
        _, done = C4.step(child, np.array([col]))
        if not done[0]:
            assert solver.score(child[0]) == -best
        assert np.sign(solver._solver.score(state, weak=True)) == np.sign(best)


def test_perfect_bot_plays_optimal_moves_and_beats_rule_bot():
    perfect = PerfectBot("connect4", seed=0)
    for pos in POSITIONS[:10]:
        assert perfect.act(C4.parse(pos["text"])) in pos["optimal_moves"]
    # From a won position the perfect bot converts against the rule bot.
    won = next(p for p in POSITIONS if p["score"] > 0 and p["stones"] % 2 == 0)  # X to move, X wins
    states = C4.parse(won["text"])[None].copy()
    rule, ply = RuleBot("connect4", seed=1), 0
    while not C4.is_terminal(states)[0]:
        bot = perfect if ply % 2 == 0 else rule
        C4.step(states, np.array([bot.act(states[0])]))
        ply += 1
    assert C4.winner(states)[0] == 0


def test_bad_input():
    with pytest.raises(ValueError, match="already finished"):
        SOLVER.score(C4.parse(".......\n.......\n...X...\n...XO..\n...XO..\n...XO.."))
    with pytest.raises(ValueError, match=r"shape \[N, "):
        SOLVER.score(zoo.make_batch_game("tictactoe").new_states(1)[0])
    with pytest.raises(ValueError, match="single row|one connect4 row"):
        SOLVER.move_scores(C4.new_states(2))
    with pytest.raises(ValueError, match="tt_log2"):
        Connect4Solver(tt_log2=40)


@pytest.mark.slow
def test_empty_board_is_a_first_player_win_only_in_the_centre():
    # Known result: the first player wins only by starting in the centre column. Weak solves (the
    # sign of the score) of the empty board and its 7 children: many minutes of CPU without an
    # opening book, hence slow.
    solver = Connect4Solver(tt_log2=24)
    empty = C4.new_states(1)[0]
    assert solver._solver.score(empty, weak=True) == 1
    assert solver.value_preserving_moves(empty) == [3]
