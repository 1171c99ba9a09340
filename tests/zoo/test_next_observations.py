"""BoardGameEnv.next_observations (the learner's rule for the position after a move not played) against the
C++ games: after every legal move of many random positions, the observation and legal mask the game reports."""
import numpy as np
import pytest
import torch

from lzlite.envs.vector import BoardVectorEnv
from lzlite.registry import ENV_REGISTRY
import zoo  # noqa: F401  (registers the envs)


def _random_positions(game, n, rng):
    venv = BoardVectorEnv(game, n)
    venv.reset()
    plies = rng.integers(0, 12, size=n)
    for ply in range(int(plies.max())):
        live = np.flatnonzero((plies > ply) & ~venv.done)
        if live.size == 0:
            break
        legal = venv.legal_mask()[live]
        actions = np.array([rng.choice(np.flatnonzero(m)) for m in legal])
        venv.step(actions, live)
    return venv


@pytest.mark.parametrize("env_type, game", [("connect4", "connect4"), ("tictactoe", "tictactoe"), ("gomoku", "gomoku")])
def test_next_observations_match_the_game(env_type, game):
    rng = np.random.default_rng(0)
    venv = _random_positions(game, 64, rng)
    live = np.flatnonzero(~venv.done)
    env_cls = ENV_REGISTRY.get(env_type)
    obs, legal = venv.observe()[live], venv.legal_mask()[live]
    checked = 0
    for a in range(venv.num_actions):
        rows = live[legal[:, a]]
        if rows.size == 0:
            continue
        after, after_legal = env_cls.next_observations(torch.as_tensor(venv.observe()[rows]),
                                                       torch.full((rows.size,), a, dtype=torch.int64))
        trial = BoardVectorEnv(game, rows.size)
        trial.states[:] = venv.states[rows]
        _, done = trial.step(np.full(rows.size, a))
        want_obs, want_legal = trial.observe(), trial.legal_mask()
        keep = ~done  # after a game-ending move the game reports no legal moves; the rule does not look for wins
        np.testing.assert_array_equal(after.numpy()[keep], want_obs[keep])
        np.testing.assert_array_equal(after_legal.numpy()[keep], want_legal[keep])
        np.testing.assert_array_equal(after.numpy()[~keep][:, :2], want_obs[~keep][:, :2])
        checked += int(keep.sum())
    assert checked > 100
    assert obs.shape[0] > 0


def test_next_observations_rejects_channel_last():
    with pytest.raises(ValueError, match="channels-first"):
        ENV_REGISTRY.get("connect4").next_observations(torch.zeros(2, 6, 7, 3), torch.zeros(2, dtype=torch.int64))
