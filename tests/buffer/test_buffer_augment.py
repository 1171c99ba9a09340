"""Symmetry augmentation: each zoo game's declared symmetry really is one, and batches transform consistently."""
import numpy as np
import pytest

import zoo
from lzlite.buffer import Batch, StepField
from lzlite.buffer.augment import SymmetryAugmenter, board_symmetries
from lzlite.registry import ENV_REGISTRY

GAMES = ["tictactoe", "connect4", "gomoku"]


def _augmenter(game_name):
    g = zoo.make_batch_game(game_name)
    fields = dict(obs=StepField(observation=True), per_move=StepField(action_axes=(-1,)))
    return SymmetryAugmenter.for_env(ENV_REGISTRY.get(game_name), tuple(g.obs_shape), int(g.num_actions), fields), g


def _random_lines(game, n, plies, rng):
    """n random games of up to ``plies`` moves: (actions int [n, plies] (-1 after the end), states per ply)."""
    states = game.new_states(n)
    actions = np.full((n, plies), -1, np.int64)
    history = [states.copy()]
    for t in range(plies):
        live = np.flatnonzero(~game.is_terminal(states))
        if len(live) == 0:
            break
        legal = game.legal_mask(states[live])
        pick = np.array([rng.choice(np.flatnonzero(row)) for row in legal], np.int32)
        sub = np.ascontiguousarray(states[live])
        game.step(sub, pick)
        states[live] = sub
        actions[live, t] = pick
        history.append(states.copy())
    return actions, history


def _play(game, actions):
    states = game.new_states(len(actions))
    for t in range(actions.shape[1]):
        live = np.flatnonzero(actions[:, t] >= 0)
        if len(live):
            sub = np.ascontiguousarray(states[live])
            game.step(sub, actions[live, t].astype(np.int32))
            states[live] = sub
    return states


def test_groups():
    cells, acts = board_symmetries("dihedral", 3, 3, 9)
    assert cells.shape == (8, 9) and len({c.tobytes() for c in cells}) == 8
    np.testing.assert_array_equal(cells[0], np.arange(9))
    composed = {cells[a][cells[b]].tobytes() for a in range(8) for b in range(8)}
    assert composed == {c.tobytes() for c in cells}  # closed under composition: a group
    np.testing.assert_array_equal(cells[1], [2, 1, 0, 5, 4, 3, 8, 7, 6])  # the left-right mirror
    np.testing.assert_array_equal(acts, cells)
    cells, acts = board_symmetries("mirror", 6, 7, 7)
    assert cells.shape == (2, 42)
    np.testing.assert_array_equal(acts, [np.arange(7), np.arange(7)[::-1]])
    with pytest.raises(ValueError, match="square board"):
        board_symmetries("dihedral", 6, 7, 42)
    with pytest.raises(ValueError, match="unknown symmetry 'rotate'"):
        board_symmetries("rotate", 3, 3, 9)
    with pytest.raises(ValueError, match="cannot map 5 actions"):
        board_symmetries("mirror", 6, 7, 5)


@pytest.mark.parametrize("game_name", GAMES)
def test_declared_symmetry_commutes_with_the_rules(game_name):
    # Playing the transformed moves gives the transformed position: same observation planes (transformed),
    # legal moves, terminal flags and winner. This is what makes the augmented examples valid.
    aug, game = _augmenter(game_name)
    rng = np.random.default_rng(7)
    actions, history = _random_lines(game, 24, 30 if game_name != "tictactoe" else 9, rng)
    final = history[-1]
    for g in range(aug.num_symmetries):
        moved = np.where(actions >= 0, aug.action_dest[g][np.maximum(actions, 0)], -1)
        mirrored = _play(game, moved)
        obs = game.observe(final)
        want = obs.reshape(*obs.shape[:2], -1)[..., aug.cell_perms[g]].reshape(obs.shape)
        np.testing.assert_array_equal(game.observe(mirrored), want)
        np.testing.assert_array_equal(game.legal_mask(mirrored), game.legal_mask(final)[:, aug.action_perms[g]])
        np.testing.assert_array_equal(game.is_terminal(mirrored), game.is_terminal(final))
        np.testing.assert_array_equal(game.winner(mirrored), game.winner(final))


@pytest.mark.parametrize("game_name", ["tictactoe", "connect4"])
def test_augmented_batch_is_the_transformed_trajectory(game_name):
    aug, game = _augmenter(game_name)
    rng = np.random.default_rng(3)
    K, B = 3, 16
    actions, history = _random_lines(game, B, K, rng)
    keep = (actions >= 0).all(1)
    actions, history = actions[keep], [h[keep] for h in history]
    B = len(actions)
    obs = np.stack([game.observe(h) for h in history], 1)  # [B, K+1, C, H, W]
    legal = np.stack([game.legal_mask(h) for h in history], 1)
    policy = rng.random(legal.shape).astype(np.float32) * legal
    policy /= policy.sum(-1, keepdims=True)
    batch = Batch(obs=obs[:, 0].copy(), actions=actions.copy(), mask_unroll=np.ones((B, K + 1), bool),
                  target_reward=rng.random((B, K)).astype(np.float32),
                  target_value=rng.random((B, K + 1)).astype(np.float32), target_policy=policy, legal_mask=legal,
                  to_play=np.zeros((B, K + 1), np.int64), indices=np.arange(B), weights=np.ones(B, np.float32),
                  unrolled=dict(obs=obs.copy(), per_move=policy.copy()))
    g = np.arange(B) % aug.num_symmetries
    out = aug(batch, rng, g=g)
    # replaying the transformed actions from the start reproduces the transformed observations and masks
    states = game.new_states(B)
    for k in range(K + 1):
        np.testing.assert_array_equal(out.unrolled["obs"][:, k], game.observe(states))
        if k == 0:
            np.testing.assert_array_equal(out.obs, game.observe(states))
        np.testing.assert_array_equal(out.legal_mask[:, k], game.legal_mask(states))
        if k < K:
            game.step(states, out.actions[:, k].astype(np.int32))
    # the policy target follows its moves: the probability of each played move is unchanged
    for k in range(K):
        np.testing.assert_array_equal(np.take_along_axis(out.target_policy[:, k], out.actions[:, k:k + 1], 1),
                                      np.take_along_axis(policy[:, k], actions[:, k:k + 1], 1))
    # a declared per-move field (StepField action_axes) is permuted like the policy target
    np.testing.assert_array_equal(out.unrolled["per_move"], out.target_policy)
    for name in ("target_value", "target_reward", "weights", "indices", "mask_unroll"):
        np.testing.assert_array_equal(getattr(out, name), getattr(batch, name))
    np.testing.assert_array_equal(batch.obs, obs[:, 0])  # the input batch is not modified
    # identity rows are untouched; a random draw is reproducible from the generator
    same = aug(batch, rng, g=np.zeros(B, np.int64))
    np.testing.assert_array_equal(same.obs, batch.obs)
    np.testing.assert_array_equal(same.actions, batch.actions)
    a = aug(batch, np.random.default_rng(5))
    b = aug(batch, np.random.default_rng(5))
    np.testing.assert_array_equal(a.obs, b.obs)


def test_env_without_symmetry_is_a_clear_error():
    class NoSymmetryEnv:
        pass

    with pytest.raises(ValueError, match="declares no board symmetry"):
        SymmetryAugmenter.for_env(NoSymmetryEnv, (3, 3, 3), 9)
    with pytest.raises(ValueError, match="must be a permutation"):
        SymmetryAugmenter(np.array([[0, 0, 1]]), np.array([[0, 1, 2]]))
