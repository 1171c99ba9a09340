"""The agent API: a trained board-game agent to ask for a move or an analysis of a position.

    import lzlite
    agent = lzlite.load_agent("runs/tictactoe_alphazero")          # its config.py and ckpt/last.pt
    agent.move(moves=[4, 0])                                       # the agent's move after b2, a1: an action index
    a = agent.analyse(moves=[4, 0])                                # visits, Q and prior per legal move, root value
    agent = lzlite.load_agent(cfg="runs/x/config.py", ckpt="runs/x/ckpt/best.pt", simulations=200)

A position is a list of moves from the start (action indices: a cell row-major from the top-left, or a
Connect Four column), or an observation (float [3, rows, cols]: the player to move's stones, the
opponent's, and a constant to-play plane, as the env writes it). The agent searches in evaluation mode (no
root noise; its search is deterministic for a seed). ``play`` (the terminal game) and the web bridge's play
endpoint both go through this class.
"""
from __future__ import annotations

import dataclasses
import os
from typing import Any, List, Optional, Sequence, Union

import numpy as np

from lzlite.config import ConfigError, compile_config, load_config_file
from lzlite.envs.vector import BoardVectorEnv, make_vector_env
from lzlite.registry import POLICY_REGISTRY
from lzlite.telemetry.events import cells_from_observation
from lzlite.worker.checkpoint import load_policy_weights

__all__ = ["Agent", "Analysis", "AgentError", "load_agent", "board_cells"]


class AgentError(ValueError):
    """A position the agent cannot search (an illegal move, a finished game, a malformed observation) or an agent
    that cannot be built; the message is one line saying what was wrong."""


@dataclasses.dataclass
class Analysis:
    """The agent's search of one position; per-move lists hold one entry per legal action, in ``legal``'s order.

    Attributes:
        legal: the legal actions, ascending.
        visits: search visits of each legal action (they sum to the number of simulations).
        q: each action's mean value after the search, from the view of the player to move (0 where unvisited).
        prior: the network's prior probability of each action at the root.
        root_value: the search's value of the position for the player to move (+1: it expects to win).
        action: the move the agent plays here.
        to_play: the player to move (0 first, 1 second).
    """

    legal: List[int]
    visits: List[int]
    q: List[float]
    prior: List[float]
    root_value: float
    action: int
    to_play: int


def board_cells(game: Any, states: np.ndarray) -> np.ndarray:
    """The boards of state rows as cells: int8 [N, rows * cols], row-major, top row first, -1 empty, 0 / 1 a stone
    of player 0 / 1 (``from_cells``' convention, zoo/common/game.h).

    Args:
        game: a zoo BatchGame.
        states: uint8 [N, state_bytes].
    """
    return cells_from_observation(game.observe(states), game.to_play(states))


class Agent:
    """A policy with trained weights and a one-game board env to set positions in. Build one with ``load_agent``.

    Args:
        policy: a lzlite Policy holding the weights.
        venv: a ``BoardVectorEnv`` of one game.
        cfg: the compiled config the policy was built from.
        seed: seed of the search's generator; each call starts from it, so equal positions get equal answers.
    Attributes:
        game_name: the game's registry name ('tictactoe', 'connect4', 'gomoku').
        game: the zoo BatchGame (rows, cols, num_actions, render).
        cfg: the compiled config.
    """

    def __init__(self, policy: Any, venv: BoardVectorEnv, cfg: Any = None, seed: int = 0) -> None:
        self.policy = policy
        self.venv = venv
        self.cfg = cfg
        self.seed = int(seed)
        self.game = venv.game
        self.game_name = venv.game_name

    # ------------------------------------------------------------------------------------------ positions
    def set_position(self, moves: Optional[Sequence[int]] = None, observation: Optional[Any] = None) -> None:
        """Put the agent's env at a position: ``moves`` from the start, or an ``observation``; neither: the start.

        Raises:
            AgentError: both given, an action that is not an int in range or not legal where it is played, a move
                after the game ended, or an observation of the wrong shape or not a position of this game.
        """
        if moves is not None and observation is not None:
            raise AgentError("give the position as moves or as an observation, not both")
        self.venv.reset()
        if observation is not None:
            self.venv.states[0] = self._state_from_observation(observation)
            self.venv.done[0] = bool(self.game.is_terminal(self.venv.states)[0])
            return
        if moves is None:
            return
        if isinstance(moves, (str, bytes)) or not isinstance(moves, (Sequence, np.ndarray)):
            raise AgentError(f"moves must be a list of action indices, got {type(moves).__name__}")
        n_actions = int(self.game.num_actions)
        for ply, action in enumerate(list(moves)):
            if isinstance(action, (bool, np.bool_)) or not isinstance(action, (int, np.integer)):
                raise AgentError(f"move {ply} is {action!r}: an action index must be an int in 0..{n_actions - 1}")
            action = int(action)
            if self.venv.done[0]:
                raise AgentError(f"move {ply} ({action}) comes after the game ended at move {ply - 1}")
            if not 0 <= action < n_actions:
                raise AgentError(f"move {ply} ({action}) is out of range: {self.game_name} actions are "
                                 f"0..{n_actions - 1}")
            if not self.venv.legal_mask()[0, action]:
                raise AgentError(f"move {ply} ({action}) is illegal in {self.game_name} at that point: "
                                 f"legal are {np.flatnonzero(self.venv.legal_mask()[0]).tolist()}")
            self.venv.step(np.array([action]), np.array([0]))

    def _state_from_observation(self, observation: Any) -> np.ndarray:
        try:
            obs = np.asarray(observation, dtype=np.float32)
        except (TypeError, ValueError):
            raise AgentError(f"observation must be a numeric array, got {type(observation).__name__}") from None
        want = tuple(self.game.obs_shape)
        if obs.shape != want:
            raise AgentError(f"observation has shape {tuple(obs.shape)}, {self.game_name} expects {want} (planes: "
                             f"the mover's stones, the opponent's, the player to move)")
        if not np.all(np.isin(obs[:2], (0.0, 1.0))) or np.any((obs[0] > 0) & (obs[1] > 0)):
            raise AgentError("observation planes 0 and 1 must hold 0 / 1 stones that never share a cell")
        to_play = obs[2].flat[0]
        if to_play not in (0.0, 1.0) or not np.all(obs[2] == to_play):
            raise AgentError("observation plane 2 must be all 0 (first player to move) or all 1 (second)")
        mover, other = int(to_play), 1 - int(to_play)
        marks = np.full(obs.shape[1:], ".", dtype="<U1")
        marks[obs[0] > 0] = "XO"[mover]
        marks[obs[1] > 0] = "XO"[other]
        try:  # the binding's text parser checks the stone counts, gravity and winning lines
            state = self.game.parse("\n".join("".join(row) for row in marks))
        except ValueError as e:
            raise AgentError(f"observation is not a {self.game_name} position: {e}") from None
        if int(self.game.to_play(state[None])[0]) != mover:
            raise AgentError(f"observation says player {mover} is to move, but the stone counts say player "
                             f"{1 - mover}")
        return state

    # ------------------------------------------------------------------------------------------ the search
    def analyse(self, moves: Optional[Sequence[int]] = None, observation: Optional[Any] = None) -> Analysis:
        """Search the position and return the search's view of every legal move.

        Raises:
            AgentError: a bad position (``set_position``) or a finished game.
        """
        self.set_position(moves, observation)
        if self.venv.done[0]:
            raise AgentError(f"the game is over (winner: {_winner_name(int(self.venv.winner()[0]))}); there is "
                             f"no move to search")
        out = self.policy.act(self.venv, np.array([0]), np.random.default_rng(self.seed), mode="eval")
        legal = np.flatnonzero(self.venv.legal_mask()[0])
        prior = np.asarray(out.root_prior[0], dtype=np.float64)
        return Analysis(legal=legal.tolist(), visits=np.asarray(out.visit_counts[0])[legal].astype(int).tolist(),
                        q=np.asarray(out.qvalues[0], dtype=np.float64)[legal].tolist(),
                        prior=prior[legal].tolist(), root_value=float(out.root_value[0]),
                        action=int(out.action[0]), to_play=int(self.venv.to_play()[0]))

    def move(self, moves: Optional[Sequence[int]] = None, observation: Optional[Any] = None) -> int:
        """The action the agent plays in the position (an index in 0..A-1).

        Raises:
            AgentError: a bad position (``set_position``) or a finished game.
        """
        return self.analyse(moves, observation).action


def _winner_name(winner: int) -> str:
    return "draw" if winner < 0 else f"player {winner}"


def load_agent(run_dir: Optional[str] = None, *, cfg: Union[str, Sequence[dict], None] = None,
               ckpt: Optional[str] = None, simulations: Optional[int] = None, device: str = "cpu",
               seed: int = 0) -> Agent:
    """Load a trained agent from a run directory, or from a config and a checkpoint.

    Args:
        run_dir: a training run's directory: its ``config.py`` and ``ckpt/last.pt`` (the newest weights) unless
            ``cfg`` / ``ckpt`` name others.
        cfg: a config file (``runs/<exp>/config.py``, a zoo config) or ``[main_config, create_config]``.
        ckpt: a checkpoint written by training (``ckpt/last.pt``, ``ckpt/best.pt``, ``ckpt/iteration_<N>.pt``).
        simulations: search simulations per move (default: the config's ``eval_num_simulations``).
        device: torch device of the network.
        seed: seed of the search's generator.
    Returns:
        The ``Agent``.
    Raises:
        AgentError: neither a run dir nor a config and checkpoint, a bad simulations count, or a game that is
            not a two-player zoo board game. ConfigError / CheckpointError: a bad config or checkpoint (one line).
    """
    if run_dir is not None:
        if not os.path.isdir(run_dir):
            raise AgentError(f"run dir '{run_dir}' does not exist")
        cfg = cfg if cfg is not None else os.path.join(run_dir, "config.py")
        ckpt = ckpt if ckpt is not None else os.path.join(run_dir, "ckpt", "last.pt")
    if cfg is None or ckpt is None:
        raise AgentError("load_agent needs a run dir, or both cfg= (a config file) and ckpt= (a checkpoint)")
    if simulations is not None and (isinstance(simulations, bool) or not isinstance(simulations, int)
                                    or simulations < 1):
        raise AgentError(f"simulations must be an int of at least 1, got {simulations!r}")
    if isinstance(cfg, (str, os.PathLike)):
        main_config, create_config = load_config_file(cfg)
        where = f"config '{os.fspath(cfg)}'"
    elif isinstance(cfg, (list, tuple)) and len(cfg) == 2:
        main_config, create_config = cfg
        where = "the given config"
    else:
        raise ConfigError("cfg must be a config file path or [main_config, create_config]")
    compiled = compile_config(main_config, create_config)
    if simulations is not None:
        compiled.policy.eval_num_simulations = int(simulations)  # the agent plays its eval-mode search
    compiled.policy.device = device
    venv = make_vector_env(compiled.env, compiled.create.env.type, 1, seed=compiled.seed)
    if not isinstance(venv, BoardVectorEnv):
        raise AgentError(f"env '{compiled.create.env.type}' is not a two-player zoo board game; the agent plays "
                         f"tictactoe, connect4 and gomoku")
    policy = POLICY_REGISTRY.get(compiled.create.policy.type)(compiled.policy, value_sign=venv.value_sign)
    load_policy_weights(policy, os.fspath(ckpt), where)
    return Agent(policy, venv, compiled, seed=seed)

