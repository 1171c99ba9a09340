"""The segment collector ('segment_collector'): fixed-length padded GameSegments from games that keep running.

Unlike the episode collector, games are NOT reset at every ``collect`` call: each env plays on from
where the previous call stopped, and a call returns as soon as ``num_segments`` segments are closed,
so one call can stop in the middle of every episode (long CartPole episodes are trained on long
before they end). Every env fills one :class:`PaddedGameSegment` of ``game_segment_length`` moves at
a time. When it is full, a new one starts, and the full one stays open as a *tail*:

* the next P moves (P = ``num_unroll_steps + td_steps``) are appended to it as padding as well as to
  the new segment, so unrolls and n-step value targets near the cut read real moves;
* then it is closed with ``bootstrap_value`` = the root value of the very next search of that env
  (the value of the state after its last padding move), like the episode collector's pending close;
* if the episode ends first, it is closed as terminal (``done=True``) with whatever padding it has.

Segment k of an episode therefore holds moves [kL, (k+1)L) as its own moves plus moves
[(k+1)L, (k+1)L + P) as padding; its final row is the state after the last stored move.

The collector knows nothing of the algorithm: it asks the policy to ``act`` and for the
``policy_target`` of each search, exactly as the episode collector does.
"""
from __future__ import annotations

import time
from typing import Any, Callable, Dict, List, Optional, Tuple

import numpy as np
from easydict import EasyDict

from lzlite.buffer.unizero_buffer import PaddedGameSegment
from lzlite.config import Range, at_least
from lzlite.registry import COLLECTOR_REGISTRY
from lzlite.telemetry.events import MoveHook
from lzlite.worker.collector import Collector, report_moves

__all__ = ["SegmentCollector"]


@COLLECTOR_REGISTRY.register("segment_collector")
class SegmentCollector(Collector):
    """Collects ``num_segments`` closed fixed-length segments per ``collect`` call; see the module docstring.

    Args:
        policy: a lzlite Policy.
        venv: a vector env; all its ``num_envs`` games play at once.
        cfg: the policy config section (reads game_segment_length, num_segments, num_unroll_steps,
            td_steps, temperature_moves, random_opening_plies).
        rng: generator for root noise and action sampling.
    """

    @staticmethod
    def default_config() -> EasyDict:
        cfg = Collector.default_config()
        cfg.game_segment_length = 50  # L: own moves per segment (episodes are cut into pieces of L moves)
        cfg.num_segments = 8  # closed segments returned by one collect() call (its unit of work, not n_episode)
        return cfg

    @classmethod
    def config_ranges(cls) -> Dict[str, Range]:
        return dict(super().config_ranges(), num_segments=at_least(1))

    def __init__(self, policy: Any, venv: Any, cfg: EasyDict, rng: np.random.Generator) -> None:
        super().__init__(policy, venv, cfg, rng)
        if self.bot_fraction > 0.0:
            raise ValueError("collect_bot_fraction > 0 is not supported by the segment collector (UniZero): its "
                             "games are pure self-play; set collect_bot_fraction=0")
        self.segment_length = int(cfg.game_segment_length)
        if self.segment_length < 1:
            raise ValueError(f"game_segment_length must be >= 1, got {cfg.game_segment_length}")
        self.num_padding = int(cfg.get("num_unroll_steps", 0)) + int(cfg.get("td_steps", 1))
        n = venv.num_envs
        self._started = False
        self._train_iter = 0  # the train_iter of the collect call under way (segments record where they began)
        self._current: List[Optional[PaddedGameSegment]] = [None] * n
        self._tails: List[List[PaddedGameSegment]] = [[] for _ in range(n)]
        self._ply = np.zeros(n, dtype=np.int64)
        self._return = np.zeros(n, dtype=np.float64)
        self._game_ids = np.arange(n)  # each slot's game, numbered in the order games start (MoveEvent.game_id)
        self._next_game_id = n

    def _new_segment(self) -> PaddedGameSegment:
        seg = PaddedGameSegment(self.venv.num_actions, self.segment_length, self.num_padding)
        seg.played_from = self._train_iter  # segments run on across calls: whose weights began it
        return seg

    def collect(self, n_episode: Optional[int] = None, train_iter: int = 0, num_segments: Optional[int] = None,
                should_stop: Optional[Callable[[], bool]] = None,
                progress: Optional[Callable[[int], None]] = None,
                on_move: Optional[MoveHook] = None) -> Tuple[List[PaddedGameSegment], Dict[str, float]]:
        """Play on until ``num_segments`` (default ``cfg.num_segments``) segments are closed.

        Args:
            n_episode: ignored (the episode collector's argument; segments, not episodes, are counted).
            train_iter: learner step, for the temperature schedule.
            num_segments: segments to return at least (one step can close several).
            should_stop: asked before every batched move; once it returns True the call returns at once with
                the segments closed so far (the games play on from where they are at the next call).
            progress: called after every batched move with the env steps this call has played so far.
            on_move: called with a ``MoveEvent`` at every decision of the games in the first ``on_move.games`` env
                slots (board games only; games run on across calls here). None: no event is built.

        Returns:
            (closed segments in closing order, stats: 'segments', 'episodes' finished in this call,
            'env_steps', 'mean_return' / 'mean_length' of those episodes (0 if none), 'env_steps_per_s',
            'temperature').
        """
        venv, policy = self.venv, self.policy
        want = int(num_segments or self.cfg.num_segments)
        if want < 1:
            raise ValueError(f"num_segments must be >= 1, got {want}")
        self._train_iter = int(train_iter)
        if not self._started:
            venv.reset()
            self._random_opening(np.arange(venv.num_envs))  # the episode collector's seam (random_opening_plies)
            self._current = [self._new_segment() for _ in range(venv.num_envs)]
            self._started = True
        temperature = policy.collect_temperature(train_iter)
        finished: List[PaddedGameSegment] = []
        returns, lengths = [], []
        t0 = time.perf_counter()
        steps = 0
        idx = np.arange(venv.num_envs)
        watched = np.arange(min(on_move.games, venv.num_envs) if on_move is not None and venv.two_player else 0)
        while len(finished) < want:
            if should_stop is not None and should_stop():
                break
            obs = venv.observe()
            legal = venv.legal_mask()
            to_play = venv.to_play()
            out, action, target = self._search_step(idx, self._ply, temperature)
            rewards, done = venv.step(action, idx)
            if len(watched):
                report_moves(on_move, venv.game_name, watched, self._game_ids, self._ply, obs, legal, to_play, out,
                             action, done, venv.winner())
            final_obs = venv.observe()  # the state after the move (terminal boards / last CartPole obs)
            steps += len(idx)
            for i in idx.tolist():
                # Tails whose padding is complete wait for exactly this search: its value bootstraps them.
                waiting = [s for s in self._tails[i] if s.is_full]
                for seg in waiting:
                    seg.close(obs[i], done=False, bootstrap_value=float(out.root_value[i]))
                    finished.append(seg)
                self._tails[i] = [s for s in self._tails[i] if not s.is_full]
                record = (obs[i], int(action[i]), float(rewards[i]), int(to_play[i]), legal[i],
                          float(out.root_value[i]), target[i], float(out.predicted_value[i]))
                for seg in [self._current[i]] + self._tails[i]:
                    seg.append(*record)
                self._ply[i] += 1
                self._return[i] += rewards[i]
                if done[i]:
                    for seg in self._tails[i] + [self._current[i]]:
                        seg.close(final_obs[i], done=True)
                        finished.append(seg)
                    self._tails[i] = []
                    returns.append(self._return[i])
                    lengths.append(int(self._ply[i]))
                    self._ply[i], self._return[i] = 0, 0.0
                    self._game_ids[i], self._next_game_id = self._next_game_id, self._next_game_id + 1
                    venv.reset(np.array([i]))
                    self._random_opening(np.array([i]))
                    self._current[i] = self._new_segment()
                elif self._current[i].own_full:
                    self._tails[i].append(self._current[i])
                    self._current[i] = self._new_segment()
            if progress is not None:
                progress(steps)
        self.env_steps += steps
        self.episodes += len(returns)
        elapsed = time.perf_counter() - t0
        stats = dict(
            segments=float(len(finished)),
            episodes=float(len(returns)),
            env_steps=float(steps),
            mean_return=float(np.mean(returns)) if returns else 0.0,
            mean_length=float(np.mean(lengths)) if lengths else 0.0,
            env_steps_per_s=steps / max(elapsed, 1e-9),
            temperature=float(temperature),
        )
        return finished, stats
