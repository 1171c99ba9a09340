"""The conformance suite: every game in zoo.GAME_NAMES against the invariants all games share and
against its pure-Python reference, move by move."""
from __future__ import annotations

import numpy as np
import pytest

import zoo
from lzlite.registry import ENV_REGISTRY

from zoo_helpers import REFERENCES, TRANSPOSITIONS, play, random_actions


def test_game_names_and_shapes(name, game):
    assert zoo.GAME_NAMES == ("tictactoe", "connect4", "gomoku")
    assert game.name == name
    expected = {"tictactoe": (9, 3, 3), "connect4": (7, 6, 7), "gomoku": (81, 9, 9)}[name]
    assert (game.num_actions, game.rows, game.cols) == expected
    assert game.obs_shape == (3, game.rows, game.cols)
    assert game.max_moves == game.rows * game.cols
    assert game.new_states(5).shape == (5, game.state_bytes)


def test_batched_random_play_matches_reference(name, game, reference):
    """16 random games stepped as one batch agree with 16 reference games after every move."""
    rng = np.random.default_rng(0)
    n = 16
    states = game.new_states(n)
    refs = [reference() for _ in range(n)]
    for _ in range(game.max_moves + 1):
        mask = game.legal_mask(states)
        for i, ref in enumerate(refs):
            assert np.flatnonzero(mask[i]).tolist() == ref.legal_actions()
            assert game.render(states[i]) == ref.to_text()
        assert game.is_terminal(states).tolist() == [r.is_terminal() for r in refs]
        assert game.winner(states).tolist() == [r.winner() for r in refs]
        assert game.num_moves(states).tolist() == [r.moves for r in refs]
        assert game.to_play(states).tolist() == [r.to_play() for r in refs]
        actions = random_actions(game, states, rng)
        was_done = game.is_terminal(states)
        rewards, done = game.step(states, actions)
        for i, ref in enumerate(refs):
            if was_done[i]:
                assert rewards[i] == 0.0 and done[i]
                continue
            mover = ref.to_play()
            ref.play(int(actions[i]))
            assert done[i] == ref.is_terminal()
            assert rewards[i] == (1.0 if ref.winner() == mover else 0.0)
    assert game.is_terminal(states).all()


def test_output_dtypes(game):
    states = game.new_states(4)
    rewards, done = game.step(states, np.zeros(4, dtype=np.uint8))
    assert rewards.dtype == np.float32 and done.dtype == np.bool_
    assert game.legal_mask(states).dtype == np.bool_
    assert game.observe(states).dtype == np.float32
    assert game.observe(states).shape == (4,) + game.obs_shape
    assert game.to_play(states).dtype in (np.int8, np.int32)
    assert game.is_terminal(states).dtype == np.bool_
    assert game.winner(states).dtype == np.int8
    assert game.terminal_value(states).dtype == np.float32
    assert game.hash(states).dtype == np.uint64
    assert game.num_moves(states).dtype == np.int32


def test_terminal_absorbs_and_masks(game):
    """Running games have legal moves; finished ones have none and absorb any action unchanged."""
    rng = np.random.default_rng(1)
    states = game.new_states(8)
    while not game.is_terminal(states).all():
        running = ~game.is_terminal(states)
        assert game.legal_mask(states)[running].any(axis=1).all()
        game.step(states, random_actions(game, states, rng))
    assert not game.legal_mask(states).any()
    before = states.copy()
    for action in (0, -5, 10**6):
        rewards, done = game.step(states, np.full(8, action))
        assert (states == before).all() and done.all() and (rewards == 0).all()
    values = game.terminal_value(states)
    winners = game.winner(states)
    assert ((values == -1.0) == (winners >= 0)).all() and ((values == 0.0) == (winners < 0)).all()


def test_terminal_value_zero_while_running(game):
    assert (game.terminal_value(game.new_states(3)) == 0).all()


def test_illegal_action_names_index_and_changes_nothing(game):
    states = game.new_states(3)
    game.step(states, np.array([0, 0, 0]))
    before = states.copy()
    bad = game.num_actions  # out of range in every game
    with pytest.raises(zoo.IllegalActionError, match=rf"game 2 got illegal action {bad}"):
        game.step(states, np.array([1, 1, bad]))
    assert (states == before).all()
    if game.name != "connect4":  # an occupied cell (in connect4, column 0 still has room)
        with pytest.raises(zoo.IllegalActionError, match=r"game 1 got illegal action 0"):
            game.step(states, np.array([1, 0, 1]))
        assert (states == before).all()
    with pytest.raises(zoo.IllegalActionError, match=r"game 0 got illegal action -1"):
        game.step(states, np.array([-1, 1, 1]))


def test_argument_validation(game):
    states = game.new_states(2)
    with pytest.raises(ValueError, match="uint8"):
        game.step(states.astype(np.int16), np.zeros(2))
    with pytest.raises(ValueError, match=str(game.state_bytes)):
        game.legal_mask(np.zeros((2, game.state_bytes + 1), dtype=np.uint8))
    with pytest.raises(ValueError, match="C-contiguous"):
        game.observe(np.zeros((2, 2 * game.state_bytes), dtype=np.uint8)[:, ::2])
    with pytest.raises(TypeError, match="actions must be an integer array"):
        game.step(states, np.zeros(2, dtype=np.float32))
    with pytest.raises(ValueError, match=r"actions must have shape \[2\]"):
        game.step(states, np.zeros(3, dtype=np.int64))
    with pytest.raises(TypeError, match="numpy uint8 array"):
        game.step([[0] * game.state_bytes], [0])
    with pytest.raises(ValueError, match="out must be"):
        game.legal_mask(states, out=np.zeros((2, game.num_actions), dtype=np.float32))
    with pytest.raises(ValueError, match="unknown game 'chess'"):
        zoo.make_batch_game("chess")


def test_out_arguments_are_filled(game):
    states = play(game, [1])
    mask = np.zeros((1, game.num_actions), dtype=np.uint8)
    obs = np.zeros((1,) + game.obs_shape, dtype=np.float32)
    assert game.legal_mask(states, out=mask) is mask
    assert game.observe(states, out=obs) is obs
    assert (mask.astype(bool) == game.legal_mask(states)).all() and (obs == game.observe(states)).all()


def test_reset_all_or_some(game):
    states = game.new_states(4)
    game.step(states, np.ones(4, dtype=np.int32))
    game.reset(states, indices=np.array([1, 3]))
    assert game.num_moves(states).tolist() == [1, 0, 1, 0]
    game.reset(states)
    assert (states == game.new_states(4)).all()
    with pytest.raises(IndexError):
        game.reset(states, indices=[4])


def test_hash_equal_for_transpositions(name, game):
    first, second = TRANSPOSITIONS[name]
    a, b = play(game, first), play(game, second)
    assert game.render(a[0]) == game.render(b[0])
    assert game.hash(a)[0] == game.hash(b)[0]
    assert game.hash(a)[0] != game.hash(play(game, first[:-1]))[0]


def test_hash_distinguishes_random_positions(game):
    rng = np.random.default_rng(2)
    states = game.new_states(64)
    seen = {}
    for _ in range(6):
        game.step(states, random_actions(game, states, rng))
        for row, h in zip(states, game.hash(states)):
            seen.setdefault(int(h), set()).add(game.render(row))
    assert all(len(boards) == 1 for boards in seen.values())


def test_observation_planes_follow_to_play(game):
    rng = np.random.default_rng(3)
    states = game.new_states(32)
    for _ in range(min(game.max_moves, 12)):
        obs = game.observe(states)
        to_play = game.to_play(states).astype(np.float32)
        moves = game.num_moves(states)
        assert (obs[:, 2] == to_play[:, None, None]).all()
        assert (obs[:, 0] + obs[:, 1] <= 1).all()
        # The player to move has placed moves // 2 stones, the opponent the rest.
        assert (obs[:, 0].sum(axis=(1, 2)) == moves // 2).all()
        assert (obs[:, 1].sum(axis=(1, 2)) == moves - moves // 2).all()
        running = ~game.is_terminal(states)
        game.step(states, np.where(running, random_actions(game, states, rng), 0))


def test_batch_and_single_env_agree(name, game):
    env = ENV_REGISTRY.get(name)()
    rng = np.random.default_rng(4)
    obs = env.reset(seed=0)
    states = game.new_states(1)
    done = False
    while not done:
        assert (obs["observation"] == game.observe(states)[0]).all()
        assert (obs["action_mask"] == game.legal_mask(states)[0]).all()
        assert obs["to_play"] == game.to_play(states)[0]
        action = int(rng.choice(env.legal_actions()))
        obs, reward, done, _ = env.step(action)
        rewards, dones = game.step(states, np.array([action]))
        assert reward == rewards[0] and done == dones[0]
    assert env.legal_actions() == []


def test_expand_slots_matches_step(game):
    rng = np.random.default_rng(5)
    n_slots, B = 16, 6
    states = game.new_states(n_slots)
    for _ in range(3):  # varied parents in slots 0..5
        game.step(states, random_actions(game, states, rng))
    parent = np.arange(B, dtype=np.int32)
    child = np.arange(B, 2 * B, dtype=np.int32)
    actions = random_actions(game, states[:B], rng).astype(np.int32)
    expected = states[:B].copy()
    _, exp_done = game.step(expected, actions)
    obs = np.zeros((B,) + game.obs_shape, dtype=np.float32)
    legal = np.zeros((B, game.num_actions), dtype=np.bool_)
    terminal = np.zeros(B, dtype=np.bool_)
    value = np.full(B, 7.0, dtype=np.float32)
    parents_before = states[:B].copy()
    game.expand_slots(states, parent, child, actions, obs, legal, terminal, value)
    assert (states[:B] == parents_before).all()
    assert (game.hash(states[B:2 * B]) == game.hash(expected)).all()
    assert (obs == game.observe(expected)).all()
    assert (legal == game.legal_mask(expected)).all()
    assert (terminal == exp_done).all()
    assert (value == game.terminal_value(expected)).all()

    bad = actions.copy()
    bad[4] = game.num_actions
    snapshot = states.copy()
    with pytest.raises(zoo.IllegalActionError, match=f"entry 4 .*illegal action {game.num_actions}"):
        game.expand_slots(states, parent, child, bad, obs, legal, terminal, value)
    assert (states == snapshot).all()
    with pytest.raises(IndexError, match=r"\[0, 16\)"):
        game.expand_slots(states, parent, child + 20, actions, obs, legal, terminal, value)
    with pytest.raises(TypeError, match="int32"):
        game.expand_slots(states, parent.astype(np.int64), child, actions, obs, legal, terminal, value)


def test_random_playouts_seeded(game):
    a = game.random_playouts(200, 7)
    assert a == game.random_playouts(200, 7)
    min_plies = {"tictactoe": 5, "connect4": 7, "gomoku": 9}[game.name]
    assert 200 * min_plies <= a <= 200 * game.max_moves
    assert game.random_playouts(200, 8) != a or game.name == "tictactoe"


def test_render_parse_round_trip(game):
    rng = np.random.default_rng(6)
    states = game.new_states(16)
    for _ in range(game.max_moves):
        for row in states:
            parsed = game.parse(game.render(row))
            both = np.stack([parsed, row])
            assert game.hash(both)[0] == game.hash(both)[1]
            for query in (game.to_play, game.winner, game.num_moves, game.is_terminal):
                assert query(both)[0] == query(both)[1]
        game.step(states, random_actions(game, states, rng))
