"""Bots as positions: wins taken, losses blocked, forced wins found, perfect play never losing."""
from __future__ import annotations

import numpy as np
import pytest

import zoo
from zoo.bots import AlphaBetaBot, PerfectBot, RandomBot, RuleBot, make_bot, optimal_moves

GAMES = {name: zoo.make_batch_game(name) for name in ("tictactoe", "connect4", "gomoku")}

GOMOKU_EMPTY = ".........\n" * 9

# (game, text where the player to move can win at once, the winning actions)
WINS = [
    ("tictactoe", "XX.\nOO.\n...", [2]),
    ("connect4", ".......\n.......\n.......\n.......\nOOO....\nXXX....", [3]),
    ("gomoku", ".........\n.XXXX....\n.OOO.....\n....O....\n" + ".........\n" * 5, [9, 14]),
]
# (game, text where the opponent threatens to win next and the mover cannot win, the blocking action)
BLOCKS = [
    ("tictactoe", "X..\nOO.\nX..", 5),
    ("connect4", ".......\n.......\n.......\n..O....\n..O....\nX.O.XX.", 2),  # vertical
    ("connect4", ".......\n.......\n.......\n.......\nO......\nOXXX...", 4),  # O to move
    ("gomoku", ".........\n.........\nXOOOO....\n.........\n.........\n.........\nX.X.X....\n"
     ".........\n.........", 23),
]


def row(game: str, text: str) -> np.ndarray:
    return GAMES[game].parse(text)


@pytest.mark.parametrize("game,text,wins", WINS)
@pytest.mark.parametrize("make", [lambda g, s: RuleBot(g, seed=s), lambda g, s: AlphaBetaBot(g, depth=2, seed=s)])
def test_takes_immediate_win(game, text, wins, make):
    for seed in range(5):
        assert make(game, seed).act(row(game, text)) in wins


@pytest.mark.parametrize("game,text,block", BLOCKS)
@pytest.mark.parametrize("make", [lambda g, s: RuleBot(g, seed=s), lambda g, s: AlphaBetaBot(g, depth=2, seed=s)])
def test_blocks_immediate_loss(game, text, block, make):
    for seed in range(5):
        assert make(game, seed).act(row(game, text)) == block


def test_gomoku_blocks_an_open_four_at_one_end():
    # O's open four wins at 19 or 24; X cannot win, so the rule bot takes one of the two ends.
    text = (".........\n.........\n..OOOO...\n..X......\n..X......\n.........\n....X....\n"
            ".......X.\n.........")
    assert {RuleBot("gomoku", seed=s).act(row("gomoku", text)) for s in range(6)} <= {19, 24}


def test_rule_bot_prefers_win_over_block():
    # X can win at 2 and must otherwise block O at 5: winning comes first.
    assert all(RuleBot("tictactoe", seed=s).act(row("tictactoe", "XX.\nOO.\n...")) == 2 for s in range(5))


def _x_always_wins(game, states: np.ndarray, bot) -> bool:
    """X (to move in `states`) plays `bot`; O tries every reply: does X win every line?"""
    x_move = bot.act(states[0])
    s = states.copy()
    rewards, done = game.step(s, np.array([x_move]))
    if done[0]:
        return rewards[0] == 1.0
    for reply in np.flatnonzero(game.legal_mask(s)[0]):
        t = s.copy()
        _, done = game.step(t, np.array([reply]))
        if done[0] or not _x_always_wins(game, t, bot):
            return False
    return True


def test_alpha_beta_depth3_finds_forced_win_depth1_misses():
    # X corner, O adjacent corner: X wins by a fork with 3, 6 or 8 but not with the centre, which the
    # depth-1 line-count heuristic prefers.
    g = GAMES["tictactoe"]
    start = g.parse("X.O\n...\n...")[None]
    assert optimal_moves("tictactoe", start[0]) == [3, 6, 8]
    for seed in range(5):
        deep = AlphaBetaBot("tictactoe", depth=3, seed=seed)
        assert deep.act(start[0]) in (3, 6, 8)
        assert _x_always_wins(g, start, deep)
        assert AlphaBetaBot("tictactoe", depth=1, seed=seed).act(start[0]) == 4


def _play_games(game_name: str, bot_x, bot_o, n: int) -> np.ndarray:
    """Winner per game (-1 draw) of n batched games."""
    g = GAMES[game_name]
    states = g.new_states(n)
    ply = 0
    while not g.is_terminal(states).all():
        bot = bot_x if ply % 2 == 0 else bot_o  # all games advance in lockstep
        ply += 1
        actions = bot.act_batch(states)
        live = ~g.is_terminal(states)
        assert (actions[~live] == -1).all() and (actions[live] >= 0).all()
        g.step(states, np.where(live, actions, 0))
    return g.winner(states)


def test_tictactoe_perfect_never_loses_to_random_and_draws_itself():
    assert (_play_games("tictactoe", PerfectBot("tictactoe", seed=1), RandomBot("tictactoe", seed=2), 200) != 1).all()
    assert (_play_games("tictactoe", RandomBot("tictactoe", seed=3), PerfectBot("tictactoe", seed=4), 200) != 0).all()
    assert (_play_games("tictactoe", PerfectBot("tictactoe", seed=5), PerfectBot("tictactoe", seed=6), 50) == -1).all()


@pytest.mark.parametrize("game_name", ["connect4", "gomoku"])
def test_stronger_bots_beat_weaker(game_name):
    winners = _play_games(game_name, RuleBot(game_name, seed=1), RandomBot(game_name, seed=2), 40)
    assert (winners == 0).mean() >= 0.9
    winners = _play_games(game_name, RuleBot(game_name, seed=3), AlphaBetaBot(game_name, depth=2, seed=4), 10)
    assert (winners == 1).mean() >= 0.7


def test_random_bot_is_uniform_over_legal_moves():
    g = GAMES["tictactoe"]
    state = g.parse("X..\n.O.\n...")
    moves = RandomBot("tictactoe", seed=0).act_batch(np.repeat(state[None], 7000, axis=0))
    counts = np.bincount(moves, minlength=9)
    assert counts[0] == counts[4] == 0
    assert np.all(np.abs(counts[[1, 2, 3, 5, 6, 7, 8]] - 1000) < 150)


@pytest.mark.parametrize("kind", ["random", "rule", "alpha_beta"])
def test_seeded_bots_replay_exactly(kind):
    states = GAMES["gomoku"].new_states(16)
    a = make_bot("gomoku", kind, seed=7).act_batch(states)
    b = make_bot("gomoku", kind, seed=7).act_batch(states)
    np.testing.assert_array_equal(a, b)


def test_tictactoe_optimal_moves():
    assert optimal_moves("tictactoe", row("tictactoe", "...\n...\n...")) == list(range(9))  # all draw
    assert optimal_moves("tictactoe", row("tictactoe", "X..\nOO.\nX..")) == [5]  # must block
    assert optimal_moves("tictactoe", row("tictactoe", "XX.\nOO.\n...")) == [2]  # the only win


def test_terminal_rows():
    g = GAMES["tictactoe"]
    done = g.parse("XXX\nOO.\n...")
    live = g.parse("X..\n...\n...")
    for kind in ("random", "rule", "alpha_beta", "perfect"):
        bot = make_bot("tictactoe", kind)
        out = bot.act_batch(np.stack([done, live, done]))
        assert out.dtype == np.int32 and out[0] == out[2] == -1 and out[1] >= 0
        with pytest.raises(ValueError, match="already finished"):
            bot.act(done)
    with pytest.raises(ValueError, match="already finished"):
        optimal_moves("tictactoe", done)


def test_bad_input():
    with pytest.raises(ValueError, match="unknown game 'chess'"):
        RandomBot("chess")
    with pytest.raises(ValueError, match="unknown bot kind 'minimax'.*alpha_beta"):
        make_bot("tictactoe", "minimax")
    with pytest.raises(ValueError, match="no perfect bot for gomoku"):
        make_bot("gomoku", "perfect")
    with pytest.raises(ValueError, match="depth must be >= 1"):
        AlphaBetaBot("connect4", depth=0)
    bot = RuleBot("connect4")
    width = GAMES["connect4"].state_bytes
    with pytest.raises(ValueError, match=rf"shape \[N, {width}\]"):
        bot.act_batch(GAMES["tictactoe"].new_states(2))
    with pytest.raises(ValueError, match="dtype"):
        bot.act_batch(np.zeros((2, width), dtype=np.int32))
    with pytest.raises(ValueError, match="not available for gomoku"):
        optimal_moves("gomoku", GAMES["gomoku"].new_states(1)[0])
