"""The bridge's play endpoint: games of a browser against a run's current checkpoint, searched server-side.

Agents come from ``lzlite.load_agent(run_dir)`` (the run's ``config.py`` and ``ckpt/last.pt``) and are kept while
their checkpoint file is unchanged; a newer checkpoint loads a new agent for the next game. A game is the list of
its moves: every request replays it into the agent's env, so one agent serves any number of games (one search at a
time: its lock).
"""
from __future__ import annotations

import dataclasses
import os
import secrets
import threading
from collections import OrderedDict
from typing import Any, Callable, Dict, List, Optional, Tuple

import numpy as np

from lzlite.entry.agent import Agent, AgentError, Analysis, board_cells, load_agent

__all__ = ["PlayGame", "AgentCache", "PlayError", "play_new", "play_move", "MAX_AGENTS"]

MAX_AGENTS = 4  # runs whose agents stay loaded (least recently used goes first)


class PlayError(ValueError):
    """A play request that cannot be served; the message is the error frame's."""


@dataclasses.dataclass
class PlayGame:
    """One game against a run's agent.

    Attributes:
        game: its id (the client's handle).
        run: the run whose agent plays.
        agent: the agent (its checkpoint as loaded when the game began).
        agent_side: 0: the agent moves first; 1: second.
        moves: the moves so far.
        analysis: the agent's search at its last move, or None.
    """

    game: str
    run: str
    agent: Agent
    lock: threading.Lock
    agent_side: int
    moves: List[int] = dataclasses.field(default_factory=list)
    analysis: Optional[Analysis] = None


class AgentCache:
    """Agents by run directory, reloaded when ``ckpt/last.pt`` changes.

    Args:
        loader: builds an agent from a run directory (``lzlite.load_agent``).
    """

    def __init__(self, loader: Callable[[str], Agent] = load_agent) -> None:
        self.loader = loader
        self._agents: "OrderedDict[str, Tuple[float, Agent, threading.Lock]]" = OrderedDict()
        self._lock = threading.Lock()

    def get(self, run_dir: str) -> Tuple[Agent, threading.Lock]:
        """The agent of ``run_dir`` and the lock its searches take (blocking: call it from a worker thread).

        Raises:
            PlayError: the run has no checkpoint yet, or its config / checkpoint cannot be loaded.
        """
        ckpt = os.path.join(run_dir, "ckpt", "last.pt")
        try:
            stamp = os.stat(ckpt).st_mtime
        except OSError:
            raise PlayError(f"the run has no checkpoint yet ({ckpt}); try again once it has saved one") from None
        with self._lock:
            held = self._agents.get(run_dir)
            if held is not None and held[0] == stamp:
                self._agents.move_to_end(run_dir)
                return held[1], held[2]
            try:
                agent = self.loader(run_dir)
            except Exception as e:  # ConfigError / CheckpointError / AgentError: one line for the page
                raise PlayError(f"cannot load the run's agent: {e}") from None
            self._agents[run_dir] = (stamp, agent, threading.Lock())
            self._agents.move_to_end(run_dir)
            while len(self._agents) > MAX_AGENTS:
                self._agents.popitem(last=False)
            return agent, self._agents[run_dir][2]


def _agent_turn(g: PlayGame) -> None:
    """If the game is on and the agent is to move, search and play its move."""
    agent = g.agent
    agent.set_position(g.moves)
    if agent.venv.done[0] or int(agent.venv.to_play()[0]) != g.agent_side:
        return
    g.analysis = agent.analyse(g.moves)
    g.moves.append(g.analysis.action)


def play_new(cache: AgentCache, run: str, run_dir: str, agent_side: int) -> Tuple[PlayGame, Dict[str, Any]]:
    """Start a game against ``run``'s agent (it moves at once when ``agent_side`` is 0); blocking.

    Returns:
        (the game, its ``play`` frame).
    """
    agent, lock = cache.get(run_dir)
    g = PlayGame(game=secrets.token_hex(8), run=run, agent=agent, lock=lock, agent_side=int(agent_side))
    with lock:
        _agent_turn(g)
        return g, _frame(g)


def play_move(g: PlayGame, action: int) -> Dict[str, Any]:
    """Play the human's ``action``, then the agent's reply; blocking.

    Raises:
        PlayError: the game is over, it is the agent's turn, or ``action`` is not legal (the game is unchanged).
    """
    with g.lock:
        agent = g.agent
        agent.set_position(g.moves)
        if agent.venv.done[0]:
            raise PlayError("the game is over; start a new one")
        legal = np.flatnonzero(agent.venv.legal_mask()[0])
        if action not in legal.tolist():
            raise PlayError(f"{action} is not a legal move here; legal moves are {legal.tolist()}")
        try:
            agent.set_position(g.moves + [action])
        except AgentError as e:
            raise PlayError(str(e)) from None
        g.moves.append(int(action))
        g.analysis = None
        _agent_turn(g)
        return _frame(g)


def _frame(g: PlayGame) -> Dict[str, Any]:
    """The ``play`` frame of a game: the position after the last move, and the agent's search before its move."""
    agent = g.agent
    agent.set_position(g.moves)
    venv, game = agent.venv, agent.game
    done = bool(venv.done[0])
    a = g.analysis
    return dict(type="play", game=g.game, game_name=agent.game_name, rows=int(game.rows), cols=int(game.cols),
                cells=board_cells(game, venv.states)[0].tolist(), to_play=int(venv.to_play()[0]),
                legal=[] if done else np.flatnonzero(venv.legal_mask()[0]).tolist(), agent_side=g.agent_side,
                last_move=g.moves[-1] if g.moves else None,
                analysis=None if a is None else dict(legal=a.legal, visits=a.visits, q=a.q, prior=a.prior,
                                                     root_value=a.root_value),
                done=done, winner=int(venv.winner()[0]) if done else -1)
