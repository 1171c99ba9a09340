"""The single-game envs: registry, config, observation dict, rewards, bot mode, errors."""
from __future__ import annotations

import numpy as np
import pytest

import zoo
from lzlite.envs import BoardGameEnv, EnvError
from lzlite.registry import ENV_REGISTRY


def test_every_game_registered(name):
    env_cls = ENV_REGISTRY.get(name)
    assert issubclass(env_cls, BoardGameEnv) and env_cls.game_name == name
    assert {"tictactoe": zoo.TicTacToeEnv, "connect4": zoo.Connect4Env, "gomoku": zoo.GomokuEnv}[name] is env_cls


def test_default_config_types(name):
    cfg = ENV_REGISTRY.get(name).default_config()
    assert cfg.env_id == name
    expected = dict(env_id=str, battle_mode=str, bot_action_type=str, agent_vs_human=bool,
                    prob_random_agent=float, prob_expert_agent=float, channel_last=bool, scale=bool,
                    stop_value=float, collector_env_num=int, evaluator_env_num=int,
                    n_evaluator_episode=int, manager=dict)
    for key, typ in expected.items():
        assert type(cfg[key]) is typ or (typ is dict and isinstance(cfg[key], dict)), key
    assert cfg.manager.shared_memory is False


def test_observation_dict_and_self_play_rewards():
    env = zoo.TicTacToeEnv()
    obs = env.reset(seed=1)
    assert obs["observation"].shape == (3, 3, 3) and obs["observation"].dtype == np.float32
    assert obs["action_mask"].dtype == np.int8 and obs["action_mask"].tolist() == [1] * 9
    assert obs["to_play"] == 0
    for action in (0, 3, 1, 4):
        obs, reward, done, _ = env.step(action)
        assert reward == 0.0 and not done
    assert obs["to_play"] == 0 and obs["observation"][1, 1].tolist() == [1, 1, 0]  # O's stones
    obs, reward, done, info = env.step(2)
    assert reward == 1.0 and done and info["winner"] == 0
    with pytest.raises(EnvError, match="reset"):
        env.step(5)


def test_illegal_action_lists_legal_actions():
    env = zoo.TicTacToeEnv()
    env.reset()
    env.step(4)
    with pytest.raises(zoo.IllegalActionError, match=r"action 4 is illegal here; legal actions: \[0, 1, 2, 3, 5, 6, 7, 8\]"):
        env.step(4)


def test_clone_is_independent_and_channel_last():
    env = zoo.Connect4Env(dict(channel_last=True))
    obs = env.reset()
    assert obs["observation"].shape == (6, 7, 3)
    env.step(3)
    twin = env.clone()
    twin.step(3)
    assert env.render() != twin.render() and env.to_play() == 1 and twin.to_play() == 0
    a, b = env.clone(), env.clone()
    assert [a.random_action() for _ in range(5)] == [b.random_action() for _ in range(5)]


def test_config_rejects_unknown_keys_and_modes():
    with pytest.raises(KeyError, match="battle_mod.*Did you mean 'battle_mode'"):
        zoo.GomokuEnv(dict(battle_mod="self_play_mode"))
    with pytest.raises(ValueError, match="battle_mode must be one of"):
        zoo.GomokuEnv(dict(battle_mode="duel"))


def test_play_with_random_bot_rewards_from_agent_view():
    env = zoo.TicTacToeEnv(dict(battle_mode="play_with_bot_mode", bot_action_type="random"))
    rng = np.random.default_rng(0)
    results = []
    for episode in range(30):
        obs = env.reset(seed=episode)
        done = False
        while not done:
            assert obs["to_play"] == 0  # the agent always moves first and is always to move
            obs, reward, done, info = env.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))
        winner = info["winner"]
        assert reward == {0: 1.0, 1: -1.0, -1: 0.0}[winner]
        results.append(reward)
    assert {1.0, -1.0} <= set(results)


def test_start_from_text():
    env = zoo.Connect4Env()
    obs = env.reset(start_text=". . . . . . .\n" * 5 + "X O X O . . .")
    assert obs["to_play"] == 0 and env.state.shape == (env.game.state_bytes,)


def test_eval_mode_with_a_zoo_bot_replies_each_move():
    env = zoo.TicTacToeEnv(dict(battle_mode="eval_mode", bot_action_type="rule"))
    env.reset(start_text="X . .\n. O .\n. . .")
    obs, reward, done, info = env.step(1)  # X threatens 0-1-2; a rule bot blocks at 2
    assert info["bot_action"] == 2 and not done and reward == 0.0
    assert obs["to_play"] == 0 and env.game.num_moves(env._states)[0] == 4
