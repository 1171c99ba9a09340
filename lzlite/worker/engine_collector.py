"""'engine_collector': the episode collector's contract, played by the C++ self-play engine (lzlite.engine).

The engine holds ``collector_env_num`` games in C++ slots, advances them on ``engine_threads`` worker threads
and batches their network requests (``engine_batch_size`` rows a fire) through one call of the policy's
network; ``engine_infer_cache`` caches predictions by position within one weights generation. It serves the
AlphaZero family (search adapter ``AlphaZeroAdapter``: real game states) and the MuZero family (``LatentModelAdapter``:
a learned model whose latents stay on the model's device, in a store this collector keeps, indexed by the engine's
latent slots) on a zoo board game; anything else is refused with the collector to use instead. Select it with
``create_config.collector.type = 'engine_collector'`` (docs/engine.md).
"""
from __future__ import annotations

import contextlib
import time
from typing import Any, Callable, Dict, List, Optional, Tuple

import numpy as np
import torch
from easydict import EasyDict

from lzlite.buffer.game_segment import GameSegment
from lzlite.config import Range, at_least
from lzlite.mcts.adapters import AlphaZeroAdapter, LatentModelAdapter
from lzlite.mcts.types import SearchOutput
from lzlite.registry import COLLECTOR_REGISTRY
from lzlite.telemetry.events import MoveHook
from lzlite.worker.collector import Collector, report_moves

__all__ = ["EngineCollector"]


class _Stopped(Exception):
    """Raised inside ``infer`` when ``should_stop()`` asks the collect to end (the window is abandoned)."""


@COLLECTOR_REGISTRY.register("engine_collector")
class EngineCollector:
    """Plays ``n_episode`` games per ``collect`` call on the self-play engine; same contract as 'episode_collector'.

    Args:
        policy: an AlphaZero-family lzlite Policy (search adapter ``AlphaZeroAdapter``).
        venv: a BoardVectorEnv (its ``game`` hands the engine the game's function table).
        cfg: the policy config section.
        rng: seeds each collect's games (so ``--resume`` replays a dropped collect).
    """

    # ``progress`` comes from inside the network calls, with most games' searches under way: a caller must not
    # load new weights there (an actor loads them between collects instead)
    progress_between_searches = False

    @staticmethod
    def default_config() -> EasyDict:
        cfg = Collector.default_config()  # the same game keys: a config switches collectors by name alone
        cfg.update(dict(
            engine_threads=1,  # threads advancing the games, the one calling the network included (1: no hand-offs)
            engine_batch_size=256,  # rows per network call when enough games wait (fewer at the end of a collect)
            engine_infer_cache=0,  # positions the inference cache holds (0: off); a collect never reuses another's
        ))
        return cfg

    @classmethod
    def config_ranges(cls) -> Dict[str, Range]:
        """The allowed values of the numeric keys of ``default_config`` (``lzlite/config/ranges.py``)."""
        return dict(Collector.config_ranges(), engine_threads=at_least(1), engine_batch_size=at_least(1),
                    engine_infer_cache=at_least(0))

    def __init__(self, policy: Any, venv: Any, cfg: EasyDict, rng: np.random.Generator) -> None:
        self.policy = policy
        self.venv = venv
        self.cfg = cfg
        self.rng = rng
        self.env_steps = 0
        self.episodes = 0
        if float(cfg.get("collect_bot_fraction", 0.0) or 0.0) > 0.0:
            raise ValueError("engine_collector plays self-play only; collect_bot_fraction > 0 needs "
                             "collector type 'episode_collector'")
        if not hasattr(getattr(venv, "game", None), "game_table"):
            raise ValueError(f"engine_collector plays zoo board games (a BoardVectorEnv); {type(venv).__name__} has "
                             f"no game table: use collector type 'episode_collector'")
        extra = sorted(set(policy.step_fields()) - {"obs"})
        if extra:
            raise ValueError(f"{type(policy).__name__} needs per-step records {extra} (step_fields) that "
                             f"engine_collector cannot make; use collector type 'episode_collector'")
        adapter = policy.search_adapter(venv)  # the policy's network as its search sees it
        if not isinstance(adapter, (AlphaZeroAdapter, LatentModelAdapter)):
            raise ValueError(f"engine_collector searches real game states (AlphaZero family) or a MuZero-style latent "
                             f"model; {type(policy).__name__} searches with {type(adapter).__name__}: use collector "
                             f"type '{policy.collector_type}'")
        self._latent = adapter if isinstance(adapter, LatentModelAdapter) else None
        if self._latent is not None and int(cfg.engine_infer_cache) > 0:
            raise ValueError(f"engine_infer_cache={cfg.engine_infer_cache}: the inference cache keys game positions, and "
                             f"{type(policy).__name__} searches learned latents; set engine_infer_cache=0")
        self._net_fn = getattr(adapter, "net_fn", None)
        self._engine: Any = None
        self._store: Optional[LatentStore] = None
        self._temperature: Optional[float] = None

    def _engine_for(self, temperature: float) -> Any:
        """The engine (made on first use, and again when the collection temperature changes)."""
        if self._engine is None or temperature != self._temperature:
            try:  # a compiled extension: imported on first use so that lzlite (and this registry entry) loads without it
                from lzlite.engine import Engine
            except ImportError as err:
                raise ImportError(f"engine_collector needs the compiled engine: {err}") from err
            cfg = self.cfg
            self._engine = Engine(self.venv.game, self.policy.search_cfg, n_games=int(cfg.collector_env_num),
                                  n_threads=int(cfg.engine_threads), batch_size=int(cfg.engine_batch_size),
                                  infer_cache=int(cfg.engine_infer_cache), temperature=temperature,
                                  temperature_moves=int(cfg.temperature_moves),
                                  random_opening_plies=int(cfg.random_opening_plies),
                                  latent_model=self._latent is not None)
            self._temperature = temperature
        return self._engine

    def weights_updated(self) -> None:
        """New weights were loaded: no prediction cached from the old ones is served again."""
        if self._engine is not None:
            self._engine.weights_updated()

    def collect(self, n_episode: Optional[int] = None, train_iter: int = 0,
                should_stop: Optional[Callable[[], bool]] = None,
                progress: Optional[Callable[[int], None]] = None,
                on_move: Optional[MoveHook] = None) -> Tuple[List[GameSegment], Dict[str, float]]:
        """Play ``n_episode`` full episodes; return their GameSegments and statistics.

        Args:
            n_episode: episodes to play (default ``cfg.n_episode``).
            train_iter: learner step, for the temperature schedule.
            should_stop: asked before every network call; once it returns True the games in progress are
                abandoned and the call returns no segments (the training loop drops such a collect whole).
            progress: called before every network call with the moves finished games hold so far (inside the
                searches: see ``progress_between_searches``).
            on_move: the spectator hook of the collector contract: a ``MoveEvent`` for every move of this call's
                first ``on_move.games`` games (board games). The engine plays in C++, so the events come from its
                records once the games have ended, each game's moves in order, not as they are played.
        """
        policy = self.policy
        n_episode = int(n_episode or self.cfg.n_episode)
        temperature = policy.collect_temperature(train_iter)
        engine = self._engine_for(temperature)
        engine.weights_updated()  # the learner may have changed the weights since the last collect
        policy.model.eval()
        before = engine.telemetry()
        seed = int(self.rng.integers(2**63))
        infer = self._make_infer(engine, before, should_stop, progress)
        t0 = time.perf_counter()
        try:
            records = engine.play_games(n_episode, infer, seed=seed)
        except _Stopped:
            return [], dict(episodes=0.0, env_steps=0.0)
        elapsed = time.perf_counter() - t0
        out = SearchOutput(action=records.action, visit_counts=records.visit_counts, root_value=records.root_value,
                           qvalues=records.qvalues, improved_policy=records.improved_policy,
                           root_prior=records.root_prior, predicted_value=records.predicted_value)
        segments, returns, lengths = self._segments(records, self.policy.policy_target(out))
        if on_move is not None and on_move.games and self.venv.two_player:
            self._report_moves(on_move, records, out)
        steps = len(records)
        self.env_steps += steps
        self.episodes += len(returns)
        stats = dict(
            episodes=float(len(returns)),
            env_steps=float(steps),
            mean_return=float(np.mean(returns)) if returns else 0.0,
            mean_length=float(np.mean(lengths)) if lengths else 0.0,
            env_steps_per_s=steps / max(elapsed, 1e-9),
            temperature=float(temperature),
        )
        stats.update(self._engine_stats(before, engine.telemetry()))
        return segments, stats

    def _make_infer(self, engine: Any, before: Dict[str, float], should_stop: Optional[Callable[[], bool]],
                    progress: Optional[Callable[[int], None]]) -> Any:
        """The engine's infer: the policy's network under its search dtype, asking ``should_stop`` first."""
        policy, net_fn = self.policy, self._net_fn
        start = before["positions"]

        def check() -> None:
            if should_stop is not None and should_stop():
                raise _Stopped()
            if progress is not None:
                progress(int(engine.telemetry()["positions"] - start))

        def mode() -> Any:
            return torch.autocast(policy.device.type, dtype=torch.bfloat16, enabled=policy.search_dtype == "bfloat16")

        if self._latent is not None:  # one store per engine: its latents are allocated once
            if self._store is None or self._store.latent_slots != engine.latent_slots:
                self._store = LatentStore(self._latent, engine.latent_slots)
            self._store.check, self._store.mode = check, mode
            return self._store

        def infer(obs: np.ndarray) -> Tuple[Any, Any]:
            check()
            with torch.inference_mode(), mode():
                return net_fn(obs)

        return infer

    def _segments(self, rec: Any, target: np.ndarray) -> Tuple[List[GameSegment], List[float], List[int]]:
        """GameSegments of a window's Records and policy targets [R, A] (cut every game_segment_length moves, as
        'episode_collector' does)."""
        A = self.venv.num_actions
        seg_len = self.cfg.game_segment_length
        segments: List[GameSegment] = []
        returns: List[float] = []
        lengths: List[int] = []
        for rows in rec.games():
            seg = GameSegment(A, seg_len)
            for t in range(rows.start, rows.stop):
                seg.append(rec.obs[t], int(rec.action[t]), float(rec.reward[t]), int(rec.to_play[t]),
                           rec.legal_mask[t], float(rec.root_value[t]), target[t], float(rec.predicted_value[t]))
                if t == rows.stop - 1:
                    seg.close(None, done=True)
                    segments.append(seg)
                elif seg.is_full:  # cut: bootstrap from the next position's search, as the lock-step collector does
                    seg.close(rec.obs[t + 1], done=False, bootstrap_value=float(rec.root_value[t + 1]))
                    segments.append(seg)
                    seg = GameSegment(A, seg_len)
            returns.append(float(rec.reward[rows].sum()))
            lengths.append(rows.stop - rows.start)
        return segments, returns, lengths

    def _report_moves(self, on_move: MoveHook, rec: Any, out: SearchOutput) -> None:
        """``on_move`` a MoveEvent for each move of the window's first ``on_move.games`` games (in the order they
        started; game ids count this collector's episodes, as the lock-step collector's do)."""
        starts = rec.game_start[:min(on_move.games, rec.num_games) + 1]
        game = np.repeat(np.arange(len(starts) - 1), np.diff(starts))  # each watched row's game
        rows = np.arange(starts[-1])
        last = rows == starts[game + 1] - 1
        report_moves(on_move, self.venv.game_name, rows, self.episodes + game, rows - starts[game], rec.obs,
                     rec.legal_mask, rec.to_play, out, rec.action, last, rec.game_winner[game])

    def _engine_stats(self, before: Dict[str, float], after: Dict[str, float]) -> Dict[str, float]:
        """This collect's engine counters (logged as collect/engine_*)."""
        d = {k: after[k] - before[k] for k in ("fires", "rows", "stall_fires", "stall_releases", "cache_hits",
                                               "cache_misses", "cache_demotions", "cache_aliases", "positions",
                                               "infer_seconds", "window_seconds")}
        lookups = d["cache_hits"] + d["cache_misses"] + d["cache_aliases"]
        return dict(
            engine_fires=d["fires"],
            engine_mean_batch_fill=d["rows"] / (d["fires"] * self._engine.batch_size) if d["fires"] else 0.0,
            engine_stall_fires=d["stall_fires"],
            engine_stall_releases=d["stall_releases"],
            engine_cache_hit_rate=(d["cache_hits"] + d["cache_aliases"]) / lookups if lookups else 0.0,
            engine_cache_demotions=d["cache_demotions"],
            engine_cache_aliases=d["cache_aliases"],
            engine_positions_per_s=d["positions"] / d["window_seconds"] if d["window_seconds"] > 0 else 0.0,
            engine_outside_infer_share=1.0 - d["infer_seconds"] / d["window_seconds"] if d["window_seconds"] > 0 else 0.0,
        )


class LatentStore:
    """``initial`` / ``recurrent`` of a latent-model engine: the model's latents stay on its device, in one tensor
    [latent_slots, *latent_shape] indexed by the engine's latent slots (``Engine.latent_slots``).

    Args:
        adapter: the policy's ``LatentModelAdapter`` (model, value / reward decoding, device).
        latent_slots: ``Engine.latent_slots``.
        check: called before every network call (may raise to stop the window).
        mode: a context manager factory for the network calls (autocast).
    """

    def __init__(self, adapter: LatentModelAdapter, latent_slots: int, check: Callable[[], None] = lambda: None,
                 mode: Callable[[], Any] = contextlib.nullcontext) -> None:
        self.adapter = adapter
        self.latent_slots = int(latent_slots)
        self.check = check
        self.mode = mode
        self.latents: Optional[torch.Tensor] = None  # [latent_slots, *latent_shape], allocated at the first root

    def _put(self, slots: np.ndarray, latent: torch.Tensor) -> None:
        if self.latents is None or self.latents.shape[1:] != latent.shape[1:] or self.latents.dtype != latent.dtype:
            self.latents = torch.zeros((self.latent_slots,) + tuple(latent.shape[1:]), dtype=latent.dtype,
                                       device=self.adapter.device)
        self.latents.index_copy_(0, torch.as_tensor(slots, dtype=torch.int64, device=self.adapter.device), latent)

    def _out(self, x: Any, n: int) -> np.ndarray:
        return x.detach().float().cpu().numpy().reshape(n)

    def initial(self, obs: np.ndarray, latent_slot: np.ndarray) -> Tuple[np.ndarray, np.ndarray]:
        """Roots: obs float32 [n, P, R, C] -> (value [n], logits [n, A]); stores the latents at ``latent_slot``."""
        self.check()
        a = self.adapter
        with torch.inference_mode(), self.mode():
            out = a.model.initial_inference(torch.as_tensor(obs, device=a.device))
            self._put(latent_slot, out.latent_state)
            return self._out(a.value_to_scalar(out.value), len(obs)), out.policy_logits.float().cpu().numpy()

    def recurrent(self, parent: np.ndarray, action: np.ndarray, child: np.ndarray
                  ) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Leaves: the dynamics from the latents at ``parent`` by ``action``, stored at ``child`` ->
        (reward [n], value [n], logits [n, A])."""
        self.check()
        a = self.adapter
        n = len(parent)
        with torch.inference_mode(), self.mode():
            src = self.latents.index_select(0, torch.as_tensor(parent, dtype=torch.int64, device=a.device))
            out = a.model.recurrent_inference(src, torch.as_tensor(action, dtype=torch.int64, device=a.device))
            self._put(child, out.latent_state.to(self.latents.dtype))
            return (self._out(a.reward_to_scalar(out.reward), n), self._out(a.value_to_scalar(out.value), n),
                    out.policy_logits.float().cpu().numpy())
