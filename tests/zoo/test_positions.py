"""Position tests in the zoo's text notation: every line type wins, draws, illegal moves, parse errors."""
from __future__ import annotations

import numpy as np
import pytest

import zoo
from zoo_helpers import REFERENCES, reference_from_text

TTT = zoo.make_batch_game("tictactoe")
C4 = zoo.make_batch_game("connect4")
GOMOKU = zoo.make_batch_game("gomoku")


def winning_move(game, text: str, action: int, winner: int = 0) -> None:
    """``action`` from ``text`` is legal and wins for ``winner``; the reference agrees."""
    state = game.parse(text)[None].copy()
    assert not game.is_terminal(state)[0]
    assert game.to_play(state)[0] == winner
    rewards, done = game.step(state, np.array([action]))
    assert done[0] and rewards[0] == 1.0
    assert game.winner(state)[0] == winner
    assert game.terminal_value(state)[0] == -1.0  # the player now to move has lost
    assert not game.legal_mask(state).any()
    ref = reference_from_text(REFERENCES[game.name], text)
    ref.play(action)
    assert ref.winner() == winner and ref.to_text() == game.render(state[0])


# ---------------------------------------------------------------------------------- tic-tac-toe
@pytest.mark.parametrize(
    "text, action",
    [
        ("XX. / OO. / ...", 2),  # top row
        ("OO. / ... / XX.", 8),  # bottom row
        ("XO. / XO. / ...", 6),  # left column
        ("X.O / .XO / ...", 8),  # main diagonal
        ("O.X / OX. / ...", 6),  # anti-diagonal
    ],
)
def test_tictactoe_wins(text, action):
    winning_move(TTT, text.replace("/", "\n"), action)


def test_tictactoe_o_wins_and_parse_detects_winner():
    state = TTT.parse("XX.\nOOO\nX..")[None]
    assert TTT.is_terminal(state)[0] and TTT.winner(state)[0] == 1 and TTT.to_play(state)[0] == 0


def test_tictactoe_draw():
    state = TTT.parse("XOX\nXOO\nOX.")[None].copy()
    rewards, done = TTT.step(state, np.array([8]))
    assert done[0] and rewards[0] == 0.0
    assert TTT.winner(state)[0] == -1 and TTT.terminal_value(state)[0] == 0.0
    assert TTT.render(state[0]) == "X O X\nX O O\nO X X"


# ---------------------------------------------------------------------------------- connect four
C4_EMPTY_ROWS = ". . . . . . .\n" * 3


@pytest.mark.parametrize(
    "text, action",
    [
        (C4_EMPTY_ROWS + ". . . . . . .\nO O O . . . .\nX X X . . . .", 3),  # horizontal, row 2
        (C4_EMPTY_ROWS + ". . . . . . .\n. . . . . . .\nO O O . X X X", 3),  # horizontal, middle gap
        (". . . . . . .\n. . . . . . X\n. . . . . . X\n. . . . . . X\n. . . . . . O\n. . . . . O O", 6),  # to the top
    ],
)
def test_connect4_rows_and_columns(text, action):
    winning_move(C4, text, action)


def test_connect4_diagonals():
    rising = """
        . . . . . . .
        . . . . . . .
        . . . . . . .
        . . X O . . .
        . X O X . . .
        X O O X O . .
    """  # X plays column 3 and lands on the fourth cell of the rising diagonal from the corner
    winning_move(C4, rising, 3)
    falling = """
        . . . . . . .
        . . . . . . .
        . . . . . . .
        . . . O X . .
        . . . X O X .
        O . . O X O X
    """  # X plays column 3: (2,3) (3,4) (4,5) (5,6) falls to the bottom-right corner
    winning_move(C4, falling, 3)


def test_connect4_full_column_illegal_and_draw():
    text = """
        X . . . . . .
        O . . . . . .
        X . . . . . .
        O . . . . . .
        X . . . . . .
        O X . . . . .
    """
    state = C4.parse(text)[None].copy()
    assert C4.legal_mask(state)[0].tolist() == [False] + [True] * 6
    with pytest.raises(zoo.IllegalActionError, match="illegal action 0"):
        C4.step(state, np.array([0]))
    # A drawn full board: columns of alternating pairs, so no four anywhere.
    full = """
        X X O O X X O
        O O X X O O X
        X X O O X X O
        O O X X O O X
        X X O O X X O
        O O X X O O X
    """
    lines = full.split()
    state = C4.parse(full.replace("X X O O X X O", "X X . O X X O", 1))[None].copy()
    assert C4.to_play(state)[0] == 1 and C4.legal_mask(state)[0].tolist() == [False, False, True] + [False] * 4
    rewards, done = C4.step(state, np.array([2]))
    assert len(lines) == 42 and done[0] and rewards[0] == 0.0 and C4.winner(state)[0] == -1


def test_connect4_gravity_and_counts_rejected():
    floating = C4_EMPTY_ROWS + ". . . X . . .\n. . . . . . .\n. . . O . . ."
    with pytest.raises(ValueError, match="column 3 has a floating stone"):
        C4.parse(floating)
    with pytest.raises(ValueError, match="X must equal O or O \\+ 1"):
        C4.parse(C4_EMPTY_ROWS + ". . . . . . .\n. . . . . . .\nX X . . . . .")
    with pytest.raises(ValueError, match="6 rows"):
        C4.parse(". . . . . . .")
    with pytest.raises(ValueError, match="unexpected 'Z'"):
        C4.parse(C4_EMPTY_ROWS + ". . . . . . .\n. . . . . . .\nZ . . . . . .")
    with pytest.raises(ValueError, match="has 6 cells, expected 7"):
        C4.parse(C4_EMPTY_ROWS + ". . . . . . .\n. . . . . . .\n. . . . . .")


# ---------------------------------------------------------------------------------- gomoku
def gomoku_text(x_cells, o_cells) -> str:
    board = [["."] * 9 for _ in range(9)]
    for r, c in x_cells:
        board[r][c] = "X"
    for r, c in o_cells:
        board[r][c] = "O"
    return "\n".join(" ".join(row) for row in board)


@pytest.mark.parametrize(
    "line",
    [
        [(0, c) for c in range(5)],  # top row from the left edge
        [(8, c) for c in range(4, 9)],  # bottom row to the right edge (cells >= 64)
        [(6, c) for c in range(0, 5)],  # row 6 crosses bit 64 of the 128-bit board
        [(r, 8) for r in range(4, 9)],  # right column to the bottom edge
        [(r, 0) for r in range(0, 5)],  # left column
        [(k, k) for k in range(4, 9)],  # main diagonal ending in the corner
        [(k, 8 - k) for k in range(0, 5)],  # anti-diagonal from the top-right corner
        [(4 + k, 4 - k) for k in range(5)],  # anti-diagonal to the bottom-left corner
    ],
)
def test_gomoku_five_on_every_line_type(line):
    o_cells = [(r, c) for r in (1, 3) for c in (1, 3, 5, 7)][:4]
    o_cells = [cell for cell in o_cells if cell not in line]
    o_cells += [(2, 7), (3, 7), (1, 7)][: 4 - len(o_cells)]
    text = gomoku_text(line[:4], o_cells)
    r, c = line[4]
    winning_move(GOMOKU, text, r * 9 + c)
    # Completing the five in the middle of the line wins too.
    text = gomoku_text(line[:2] + line[3:], o_cells)
    r, c = line[2]
    winning_move(GOMOKU, text, r * 9 + c)


def test_gomoku_six_in_a_row_wins_freestyle():
    text = gomoku_text([(4, 0), (4, 1), (4, 2), (4, 4), (4, 5)], [(0, 0), (0, 2), (0, 4), (0, 6), (0, 8)])
    winning_move(GOMOKU, text, 4 * 9 + 3)


def test_gomoku_no_wrap_across_rows():
    # Four at the end of row 3 and one at the start of row 4 are adjacent bits without the sentinel.
    text = gomoku_text([(3, 5), (3, 6), (3, 7), (3, 8)], [(0, 0), (0, 2), (0, 4), (0, 6)])
    state = GOMOKU.parse(text)[None].copy()
    GOMOKU.step(state, np.array([4 * 9 + 0]))
    assert not GOMOKU.is_terminal(state)[0]
    # and diagonally: (2,8) then (3,0) must not continue a falling diagonal from the previous row.
    text = gomoku_text([(0, 5), (1, 6), (2, 7), (3, 8)], [(8, 0), (8, 2), (8, 4), (8, 6)])
    state = GOMOKU.parse(text)[None].copy()
    GOMOKU.step(state, np.array([5 * 9 + 0]))
    assert not GOMOKU.is_terminal(state)[0]


def test_gomoku_draw_on_full_board():
    # Columns in pairs XXOO.., rows alternating the phase by two: no five anywhere.
    rows = []
    for r in range(9):
        shift = 2 * (r % 2)
        rows.append(" ".join("X" if ((c + shift) // 2) % 2 == 0 else "O" for c in range(9)))
    text = "\n".join(rows)
    cells = text.split()
    n_x, n_o = cells.count("X"), cells.count("O")
    # Free one X cell so the last move is X's (X has one more stone when the board is full).
    assert n_x == n_o + 1
    last = cells.index("X")
    state = GOMOKU.parse(text[: 2 * last] + "." + text[2 * last + 1 :])[None].copy()
    assert GOMOKU.legal_mask(state)[0].sum() == 1
    rewards, done = GOMOKU.step(state, np.array([last]))
    assert done[0] and rewards[0] == 0.0 and GOMOKU.winner(state)[0] == -1


def test_parse_rejects_inconsistent_wins():
    with pytest.raises(ValueError, match="X has a winning line but O moved after it"):
        TTT.parse("XXX\nOO.\nO..")
    with pytest.raises(ValueError, match="both players"):
        TTT.parse("XXX\nOOO\n...")
