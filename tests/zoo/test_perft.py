"""Perft (move-sequence counts): C++ against well-known totals and against the pure-Python references."""
from __future__ import annotations

import numpy as np

import zoo
from zoo_helpers import random_actions, reference_from_text
from zoo.connect4 import reference as c4_ref
from zoo.gomoku import reference as gomoku_ref
from zoo.tictactoe import reference as ttt_ref

TICTACTOE = [9, 72, 504, 3024, 15120, 54720, 148176, 200448, 127872]
CONNECT4 = [7, 49, 343, 2401, 16807, 117649, 823536]


def test_tictactoe_known_totals():
    g = zoo.make_batch_game("tictactoe")
    start = g.new_states(1)[0]
    assert [g.perft(start, d) for d in range(1, 10)] == TICTACTOE
    assert g.perft(start, 0) == 1 and g.perft(start, 10) == 0  # no game lasts 10 plies


def test_tictactoe_reference_full_depth():
    assert [ttt_ref.perft(ttt_ref.TicTacToeReference(), d) for d in range(1, 10)] == TICTACTOE


def test_connect4_known_totals():
    g = zoo.make_batch_game("connect4")
    start = g.new_states(1)[0]
    assert [g.perft(start, d) for d in range(1, 8)] == CONNECT4


def test_connect4_reference_matches_cpp_midgame():
    """Depth 4 from a position with a nearly full column and threats, where wins cut the tree."""
    g = zoo.make_batch_game("connect4")
    text = """
        . . . . . . .
        . . . O . . .
        . . . X . . .
        . . . O X . .
        . . X X O . .
        . O X O X . .
    """
    ref = reference_from_text(c4_ref.Connect4Reference, text)
    assert ref.to_text() == g.render(g.parse(text)) and ref.winner() == -1
    state = g.parse(text)
    assert [g.perft(state, d) for d in range(1, 5)] == [c4_ref.perft(ref, d) for d in range(1, 5)]


def test_connect4_reference_depth5_from_start():
    assert c4_ref.perft(c4_ref.Connect4Reference(), 5) == CONNECT4[4]


def test_gomoku_counts():
    g = zoo.make_batch_game("gomoku")
    start = g.new_states(1)[0]
    # Nobody can win before ply 9, so the first counts are falling factorials of 81.
    assert [g.perft(start, d) for d in range(1, 5)] == [81, 81 * 80, 81 * 80 * 79, 81 * 80 * 79 * 78]
    assert gomoku_ref.perft(gomoku_ref.GomokuReference(), 2) == 81 * 80


def test_gomoku_reference_matches_cpp_crowded_board():
    """Depth 3 from a random 60-stone board (21 empty cells), where many replies complete five."""
    g = zoo.make_batch_game("gomoku")
    rng = np.random.default_rng(11)
    states = g.new_states(256)
    for _ in range(60):
        g.step(states, random_actions(g, states, rng))
    running = np.flatnonzero(~g.is_terminal(states))
    assert running.size > 0
    state = states[running[0]]
    ref = reference_from_text(gomoku_ref.GomokuReference, g.render(state))
    assert ref.moves == 60 and ref.winner() == -1
    counts = [g.perft(state, d) for d in range(1, 4)]
    assert counts == [gomoku_ref.perft(ref, d) for d in range(1, 4)]
    assert counts[2] < 21 * 20 * 19  # some lines of play end early in a win


def test_gomoku_depth6_splits_into_children():
    """Depth 6 on a 61-stone board equals the sum of depth 5 over its legal children (C++ only)."""
    g = zoo.make_batch_game("gomoku")
    rng = np.random.default_rng(12)
    states = g.new_states(256)
    for _ in range(61):
        g.step(states, random_actions(g, states, rng))
    state = states[np.flatnonzero(~g.is_terminal(states))[0]]
    children = []
    for action in np.flatnonzero(g.legal_mask(state[None])[0]):
        child = state[None].copy()
        g.step(child, np.array([action]))
        children.append(g.perft(child[0], 5))
    assert len(children) == 20 and g.perft(state, 6) == sum(children)
    assert sum(children) < 20 * 19 * 18 * 17 * 16 * 15
