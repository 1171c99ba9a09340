"""``BoardGameEnv``: one zoo board game as a single env, over the batched C++ binding with n = 1.

Subclasses (zoo/<game>/env.py) only set ``game_name`` and register themselves::

    @ENV_REGISTRY.register('connect4')
    class Connect4Env(BoardGameEnv):
        game_name = 'connect4'
"""
from __future__ import annotations

import copy
import difflib
from typing import Any, Dict, List, Mapping, Optional, Tuple

import numpy as np
from easydict import EasyDict

from lzlite.config import Range, at_least, between
from lzlite.envs.base import BaseEnv, EnvError, IllegalActionError
from lzlite.envs.games import make_batch_game, make_bot
from lzlite.registry import RegistryError

__all__ = ["BoardGameEnv"]

_BATTLE_MODES = ("self_play_mode", "play_with_bot_mode", "eval_mode")


class BoardGameEnv(BaseEnv):
    """A two-player zoo game, one position at a time.

    Observation dict:
        observation: float32 [P, R, C] (own stones, opponent stones, constant to_play plane), or
            [R, C, P] when ``channel_last``.
        action_mask: int8 [A], 1 for legal actions.
        to_play: int, 0 or 1, the player to move next (after a finished game: the player who would
            have moved).

    In ``self_play_mode`` the caller plays both sides and rewards are for the player who just moved.
    In ``play_with_bot_mode`` / ``eval_mode`` the caller is the agent and the env answers each agent
    move with the configured bot's move; the reward is then from the agent's view (+1 win, -1 loss).
    """

    game_name: str = ""  # set by the subclass: a game registered in GAME_REGISTRY (lzlite/envs/games.py)
    #: board symmetry group the rules are invariant under, for symmetry augmentation
    #: (lzlite/buffer/augment.py): 'dihedral' (8 rotations/reflections), 'mirror' (left-right) or None
    symmetry: Optional[str] = None
    @classmethod
    def default_config(cls) -> EasyDict:
        return EasyDict(
            dict(
                env_id=cls.game_name,  # name of the game, as registered in ENV_REGISTRY
                battle_mode="self_play_mode",  # 'self_play_mode' | 'play_with_bot_mode' | 'eval_mode'
                bot_action_type="random",  # bot used outside self-play: 'random' or a zoo.bots name (e.g. 'rule', 'alpha_beta')
                agent_vs_human=False,  # eval_mode against a human at the terminal instead of the bot
                prob_random_agent=0.0,  # probability that a collected move is replaced by a random one (LightZero key; unused by the env itself)
                prob_expert_agent=0.0,  # probability that a collected move is replaced by the bot's (LightZero key; unused by the env itself)
                channel_last=False,  # observation as [R, C, P] instead of [P, R, C]
                scale=True,  # observations are already in [0, 1]; kept for LightZero configs
                stop_value=1.0,  # LightZero key: its stop condition; lzlite stops at max_env_step / max_train_iter
                collector_env_num=8,  # LightZero key: the policy's collector_env_num is what is used
                evaluator_env_num=5,  # LightZero key: the evaluator plays all the policy's eval_episodes at once
                n_evaluator_episode=5,  # LightZero key: the policy's eval_episodes is what is used
                manager=dict(shared_memory=False),  # env-manager options (LightZero key; lzlite batches games itself)
                alphazero_mcts_ctree=False,  # LightZero key (its C++ AlphaZero tree); lzlite always searches in C++
                render_mode=None,  # LightZero key: None, or 'state_realtime_mode' to print the board each step
                replay_path=None,  # LightZero key: where to save replays (None: do not save)
                is_train=True,  # LightZero key: True while collecting for training, False in evaluation
                prob_random_action_in_bot=0.0,  # probability that the bot plays a random move instead of its own
                board_size=None,  # LightZero gomoku key: None, or the board side, which must equal this game's
                agent_first=True,  # in bot modes: True lets the agent move first, False lets the bot open
                seed=0,  # default seed when reset() is given none
            )
        )

    @classmethod
    def config_ranges(cls) -> Dict[str, Range]:
        """The allowed values of the numeric keys of ``default_config`` (``lzlite/config/ranges.py``)."""
        return dict(prob_random_action_in_bot=between(0, 1), board_size=at_least(1), seed=at_least(0))

    def __init__(self, cfg: Optional[Mapping[str, Any]] = None) -> None:
        try:
            self.game = make_batch_game(self.game_name)
        except RegistryError as e:
            raise ValueError(f"{type(self).__name__}.game_name is {self.game_name!r}: {e}") from None
        self.cfg = self.default_config()
        for key, value in (cfg or {}).items():
            if key not in self.cfg:
                close = difflib.get_close_matches(key, list(self.cfg), n=2)
                hint = f" Did you mean {' or '.join(map(repr, close))}?" if close else ""
                raise KeyError(f"unknown {self.game_name} env config key {key!r}.{hint} Known: {sorted(self.cfg)}")
            self.cfg[key] = value
        if self.cfg.battle_mode not in _BATTLE_MODES:
            raise ValueError(f"battle_mode must be one of {_BATTLE_MODES}, got {self.cfg.battle_mode!r}")
        if self.cfg.board_size is not None and int(self.cfg.board_size) != self.game.rows:
            raise ValueError(f"board_size={self.cfg.board_size} but the {self.game_name} core is "
                             f"{self.game.rows}x{self.game.cols}; remove board_size or set it to {self.game.rows}")
        self._states = self.game.new_states(1)
        self._done = False
        self._started = False
        self._bot = None
        self.seed(int(self.cfg.seed))

    # ------------------------------------------------------------------ properties
    @property
    def num_actions(self) -> int:
        return self.game.num_actions

    @property
    def obs_shape(self) -> Tuple[int, int, int]:
        return self.game.obs_shape

    @property
    def state(self) -> np.ndarray:
        """The raw state row, uint8 [state_bytes] (a copy)."""
        return self._states[0].copy()

    def to_play(self) -> int:
        return int(self.game.to_play(self._states)[0])

    # ------------------------------------------------------------------ protocol
    def reset(self, seed: Optional[int] = None, start_text: Optional[str] = None) -> Dict[str, Any]:
        """Start a game (from ``start_text`` in the zoo's text notation when given)."""
        if seed is not None:
            self.seed(seed)
        if start_text is None:
            self.game.reset(self._states)
        else:
            self._states[0] = self.game.parse(start_text)
        self._done = bool(self.game.is_terminal(self._states)[0])
        self._started = True
        if self._bot_mode() and not self.cfg.agent_first and not self._done:
            self._play(self._bot_action())
        return self._observation()

    def step(self, action: int) -> Tuple[Dict[str, Any], float, bool, Dict[str, Any]]:
        if not self._started:
            raise EnvError("step() before reset(): call env.reset() first")
        if self._done:
            raise EnvError("the game is over; call env.reset() to start a new one")
        reward, done = self._play(action)
        info: Dict[str, Any] = {}
        if self._bot_mode() and not done:
            bot_reward, done = self._play(self._bot_action())
            reward = -bot_reward if bot_reward else 0.0  # from the agent's view: the bot winning is the agent losing
            info["bot_action"] = int(self._last_action)
        if self.cfg.render_mode == "state_realtime_mode":
            print(self.render(), end="\n\n")
        if done:
            winner = int(self.game.winner(self._states)[0])
            info["winner"] = winner
            info["eval_episode_return"] = reward
        return self._observation(), reward, done, info

    def legal_actions(self) -> List[int]:
        return np.flatnonzero(self.game.legal_mask(self._states)[0]).tolist()

    def random_action(self) -> int:
        """A uniformly random legal action from the env's generator."""
        legal = self.legal_actions()
        if not legal:
            raise EnvError("no legal action: the game is over")
        return int(self._rng.choice(legal))

    def clone(self) -> "BoardGameEnv":
        other = copy.copy(self)
        other.cfg = copy.deepcopy(self.cfg)
        other._states = self._states.copy()
        other._rng = copy.deepcopy(self._rng)
        return other

    def render(self, mode: str = "ansi") -> str:
        return self.game.render(self._states[0])

    def __repr__(self) -> str:
        return f"{type(self).__name__}(to_play={self.to_play()}, done={self._done})\n{self.render()}"

    # ------------------------------------------------------------------ internals
    def _bot_mode(self) -> bool:
        return self.cfg.battle_mode in ("play_with_bot_mode", "eval_mode") and not self.cfg.agent_vs_human

    def _play(self, action: int) -> Tuple[float, bool]:
        action = int(action)
        try:
            rewards, done = self.game.step(self._states, np.array([action], dtype=np.int64))
        except IllegalActionError:
            raise IllegalActionError(
                f"{self.game_name}: action {action} is illegal here; legal actions: {self.legal_actions()}\n"
                f"{self.render()}"
            ) from None
        self._last_action = action
        self._done = bool(done[0])
        return float(rewards[0]), self._done

    def _bot_action(self) -> int:
        if self.cfg.bot_action_type == "random" or self._rng.random() < self.cfg.prob_random_action_in_bot:
            return self.random_action()
        if self._bot is None:
            self._bot = make_bot(self.game_name, self.cfg.bot_action_type)
        return int(self._bot.act_batch(np.ascontiguousarray(self._states))[0])

    def _observation(self) -> Dict[str, Any]:
        obs = self.game.observe(self._states)[0]
        if self.cfg.channel_last:
            obs = np.ascontiguousarray(obs.transpose(1, 2, 0))
        return {
            "observation": obs,
            "action_mask": self.game.legal_mask(self._states)[0].astype(np.int8),
            "to_play": self.to_play(),
        }
