"""The collector: many games at once, one batched search per move, GameSegments out.

Two-player board games are self-play (both sides use the policy), optionally with a fraction of the
games against a zoo bot (``collect_bot``); single-player envs just play.
The collector knows nothing of the algorithm: it asks the policy to ``act``, for the ``policy_target``
of each search and for any extra per-step records it declared (``record_step``), and stores what the
buffer needs.
"""
from __future__ import annotations

import time
from typing import Any, Callable, Dict, List, Optional, Tuple

import numpy as np
from easydict import EasyDict

from lzlite.buffer.game_segment import GameSegment
from lzlite.config import Range, at_least, between
from lzlite.envs.games import make_bot
from lzlite.registry import COLLECTOR_REGISTRY
from lzlite.telemetry.events import MoveEvent, MoveHook, cells_from_observation

__all__ = ["Collector"]



def report_moves(on_move: MoveHook, game: str, sel: np.ndarray, game_ids: np.ndarray, ply: np.ndarray,
                 obs: np.ndarray, legal: np.ndarray, to_play: np.ndarray, out: Any, action: np.ndarray,
                 done: np.ndarray, winner: np.ndarray) -> None:
    """Give ``on_move`` a MoveEvent for each move played at rows ``sel`` (every collector's spectator events).

    Args:
        game: the game's registry name.
        sel: int [k], the rows of the watched moves.
        game_ids / ply / to_play / action / done / winner: int [B] per row (winner after the move).
        obs: [B, P, R, C] and legal: bool [B, A], the positions searched; out: their SearchOutput.
    """
    if len(sel) == 0:
        return
    cells = cells_from_observation(obs[sel], to_play[sel])
    n_rows, n_cols = obs.shape[-2:]
    for k, j in enumerate(sel.tolist()):
        moves = np.flatnonzero(legal[j])
        on_move(MoveEvent(
            game_id=str(int(game_ids[j])), game=game, ply=int(ply[j]), rows=int(n_rows), cols=int(n_cols),
            cells=cells[k].tolist(), to_play=int(to_play[j]), action=int(action[j]), legal=moves.tolist(),
            visits=out.visit_counts[j, moves].astype(int).tolist(), q=out.qvalues[j, moves].astype(float).tolist(),
            prior=out.root_prior[j, moves].astype(float).tolist(), root_value=float(out.root_value[j]),
            done=bool(done[j]), winner=int(winner[j]) if done[j] else -1))


@COLLECTOR_REGISTRY.register("episode_collector")
class Collector:
    """Plays ``n_episode`` games per ``collect`` call with up to ``num_envs`` running at once.

    Args:
        policy: a lzlite Policy.
        venv: a vector env (BoardVectorEnv / GymVectorEnv).
        cfg: the policy config section (reads n_episode, game_segment_length, temperature keys).
        rng: generator for root noise and action sampling.
    """

    # ``collect``'s ``progress`` is called between searches: a caller may load new weights there (an actor does)
    progress_between_searches = True

    @staticmethod
    def default_config() -> EasyDict:
        return EasyDict(dict(
            collector_env_num=8,  # games played at once
            n_episode=8,  # episodes per collect() call
            game_segment_length=400,  # max transitions per GameSegment; longer episodes are cut
            random_opening_plies=0,  # each game starts after U{0..N} uniformly random, unrecorded moves
            temperature_moves=-1,  # >= 0: sample only for the first N plies of a game, then play the best move
            # two-player collection against a zoo bot (LightZero's play_with_bot_mode, mixed with self-play): this
            #  fraction of each collect's games has `collect_bot` play one side (first or second at random), the
            #  policy the other; every position is still searched and recorded (the bot's moves with the policy's
            #  own search target), so the buffer's lines include the bot's replies
            collect_bot=None,  # None (pure self-play) or a zoo bot kind: 'random', 'rule', 'alpha_beta', 'perfect'
            collect_bot_fraction=0.0,  # fraction of the games it plays (its side drawn per game)
            collect_bot_depth=4,  # its depth when it is 'alpha_beta'
        ))

    @classmethod
    def config_ranges(cls) -> Dict[str, Range]:
        """The allowed values of the numeric keys of ``default_config`` (``lzlite/config/ranges.py``)."""
        return dict(collector_env_num=at_least(1), n_episode=at_least(1), game_segment_length=at_least(1),
                    random_opening_plies=at_least(0), temperature_moves=at_least(-1),  # -1: always sample
                    collect_bot_fraction=between(0, 1), collect_bot_depth=at_least(1))

    def __init__(self, policy: Any, venv: Any, cfg: EasyDict, rng: np.random.Generator) -> None:
        self.policy = policy
        self.venv = venv
        self.cfg = cfg
        self.rng = rng
        self.env_steps = 0
        self.episodes = 0
        self.bot_fraction = float(cfg.get("collect_bot_fraction", 0.0) or 0.0)
        self.bot_kind = cfg.get("collect_bot", None)
        if not 0.0 <= self.bot_fraction <= 1.0:
            raise ValueError(f"collect_bot_fraction must be in [0, 1], got {self.bot_fraction}")
        if self.bot_fraction > 0.0:
            if self.bot_kind is None:
                raise ValueError(f"collect_bot_fraction={self.bot_fraction} needs collect_bot (a zoo bot kind)")
            if not hasattr(venv, "game_name"):
                raise ValueError("collect_bot plays two-player board games; this env is single-player")
            self._new_bot(seed=0)  # an unknown kind fails now (make_bot names the nearest), not at the first collect

    def _new_bot(self, seed: int) -> Any:
        kwargs: Dict[str, Any] = {"seed": seed}
        if self.bot_kind == "alpha_beta":
            kwargs["depth"] = int(self.cfg.collect_bot_depth)
        return make_bot(self.venv.game_name, self.bot_kind, **kwargs)

    def _make_bot(self) -> Any:
        """A fresh bot for one collect() call, seeded from the collector's generator (so --resume replays it)."""
        return self._new_bot(int(self.rng.integers(2**31))) if self.bot_fraction > 0.0 else None

    def _bot_side(self, bot: Any) -> int:
        """The player (0 / 1) the bot takes in a new game, or -1 for a self-play game."""
        if bot is None or self.rng.random() >= self.bot_fraction:
            return -1
        return int(self.rng.integers(2))

    @staticmethod
    def _bot_side_stats(results: List[float], sides: List[int]) -> Dict[str, float]:
        """Per-side statistics of one collect's bot games: games and win rate as first and second player."""
        res, policy_side = np.asarray(results), 1 - np.asarray(sides, dtype=np.int64)
        stats: Dict[str, float] = {}
        for side, name in ((0, "first"), (1, "second")):
            mine = res[policy_side == side]
            stats[f"bot_games_as_{name}"] = float(len(mine))
            if len(mine):
                stats[f"bot_win_as_{name}"] = float((mine > 0).mean())
        return stats

    def _random_opening(self, idx: np.ndarray) -> None:
        """Play U{0..random_opening_plies} uniformly random legal moves in games ``idx`` (not recorded).

        Self-play from the start position alone rarely reaches odd openings; starting some games from
        random positions makes the value and policy learn them too. A game that ends during its
        opening is reset and left at the start position.
        """
        k = int(self.cfg.random_opening_plies)
        if k <= 0 or len(idx) == 0:
            return
        plies = self.rng.integers(0, k + 1, size=len(idx))
        for step in range(k):
            active = idx[plies > step]
            if len(active) == 0:
                break
            legal = self.venv.legal_mask()[active]
            choice = (self.rng.random(legal.shape) * legal).argmax(axis=1)  # uniform over legal moves
            _, done = self.venv.step(choice, active)
            if done.any():
                self.venv.reset(active[done])
                plies[np.isin(idx, active[done])] = 0

    def _search_step(self, idx: np.ndarray, ply: np.ndarray, temperature: float) -> Tuple[Any, np.ndarray, np.ndarray]:
        """One batched search for games ``idx`` (at plies ``ply``): (SearchOutput, action [n], policy target [n, A]).

        With ``temperature_moves >= 0`` (AlphaZero style) games past that ply play their best move (the
        most visited one under PUCT, the noise-free search's choice under Gumbel; ``Policy.act``).
        """
        moves = int(self.cfg.temperature_moves)
        kwargs = {"greedy": ply >= moves} if moves >= 0 else {}
        out = self.policy.act(self.venv, idx, self.rng, mode="collect", temperature=temperature, **kwargs)
        return out, out.action.copy(), self.policy.policy_target(out)

    def collect(self, n_episode: Optional[int] = None, train_iter: int = 0,
                should_stop: Optional[Callable[[], bool]] = None,
                progress: Optional[Callable[[int], None]] = None,
                on_move: Optional[MoveHook] = None) -> Tuple[List[GameSegment], Dict[str, float]]:
        """Play ``n_episode`` full episodes; return their GameSegments and statistics.

        Args:
            n_episode: episodes to play (default ``cfg.n_episode``).
            train_iter: learner step, for the temperature schedule.
            should_stop: asked before every batched move; once it returns True the call returns at once with
                the segments closed so far, and the games in progress are abandoned (the training loop drops
                such a collect whole).
            progress: called after every batched move with the env steps this call has played so far (the
                training loop moves its progress bar with it).
            on_move: called with a ``MoveEvent`` at every decision of this call's first ``on_move.games`` games
                (board games only; the web UI's spectator boards). None: no event is built.
        """
        venv, policy = self.venv, self.policy
        n_episode = int(n_episode or self.cfg.n_episode)
        n = venv.num_envs
        A = venv.num_actions
        temperature = policy.collect_temperature(train_iter)
        seg_len = self.cfg.game_segment_length
        bot = self._make_bot()
        venv.reset()
        self._random_opening(np.arange(n))
        started = min(n, n_episode)
        active = np.zeros(n, dtype=bool)
        active[:started] = True
        bot_side = np.array([self._bot_side(bot) if i < started else -1 for i in range(n)], dtype=np.int64)
        watch = on_move.games if on_move is not None and venv.two_player else 0
        game_no = np.arange(n)  # each slot's game: its number among this call's games (for on_move)
        bot_results: List[float] = []  # the policy's result (+1 / 0 / -1) in each game against the bot
        bot_sides: List[int] = []  # and the side the bot played in it
        segs: List[Optional[GameSegment]] = [GameSegment(A, seg_len) if i < started else None for i in range(n)]
        pending: List[Optional[GameSegment]] = [None] * n  # full segments waiting for their bootstrap value
        ply = np.zeros(n, dtype=np.int64)
        ret = np.zeros(n, dtype=np.float64)
        finished: List[GameSegment] = []
        returns, lengths = [], []
        t0 = time.perf_counter()
        steps = 0
        while active.any():
            if should_stop is not None and should_stop():
                break
            idx = np.flatnonzero(active)
            obs = venv.observe()[idx]
            legal = venv.legal_mask()[idx]
            to_play = venv.to_play()[idx]
            out, action, target = self._search_step(idx, ply[idx], temperature)
            bot_turn = (bot_side[idx] >= 0) & (bot_side[idx] == to_play)  # single-player envs: to_play is -1 too
            if bot_turn.any():  # the bot moves instead; the policy's search still gives the position's target
                action[bot_turn] = bot.act_batch(np.ascontiguousarray(venv.states[idx[bot_turn]]))
            records = policy.record_step(venv, idx)  # the policy's extra per-step records: name -> [n, ...]
            rewards, done = venv.step(action, idx)
            if watch:
                report_moves(on_move, venv.game_name, np.flatnonzero(game_no[idx] < watch),
                             self.episodes + game_no[idx], ply[idx], obs, legal, to_play, out, action, done,
                             venv.winner()[idx])
            steps += len(idx)
            for j, i in enumerate(idx.tolist()):
                if pending[i] is not None:  # close the previous piece: bootstrap from this search
                    pending[i].close(obs[j], done=False, bootstrap_value=float(out.root_value[j]))
                    finished.append(pending[i])
                    pending[i] = None
                seg = segs[i]
                seg.append(obs[j], int(action[j]), float(rewards[j]), int(to_play[j]), legal[j],
                           float(out.root_value[j]), target[j], float(out.predicted_value[j]),
                           extras={name: x[j] for name, x in records.items()})
                ply[i] += 1
                ret[i] += rewards[j]
                if done[j]:
                    seg.close(None, done=True)
                    finished.append(seg)
                    returns.append(ret[i])
                    lengths.append(int(ply[i]))
                    if bot_side[i] >= 0:  # the reward is the mover's: the policy's result, or minus it
                        bot_results.append(float(np.sign(rewards[j])) * (-1.0 if to_play[j] == bot_side[i] else 1.0))
                        bot_sides.append(int(bot_side[i]))
                    ply[i], ret[i] = 0, 0.0
                    if started < n_episode:
                        venv.reset(np.array([i]))
                        self._random_opening(np.array([i]))
                        segs[i] = GameSegment(A, seg_len)
                        bot_side[i] = self._bot_side(bot)
                        game_no[i] = started
                        started += 1
                    else:
                        active[i] = False
                        segs[i] = None
                elif seg.is_full:
                    pending[i] = seg
                    segs[i] = GameSegment(A, seg_len)
            if progress is not None:
                progress(steps)
        self.env_steps += steps
        self.episodes += len(returns)
        elapsed = time.perf_counter() - t0
        stats = dict(
            episodes=float(len(returns)),
            env_steps=float(steps),
            mean_return=float(np.mean(returns)) if returns else 0.0,
            mean_length=float(np.mean(lengths)) if lengths else 0.0,
            env_steps_per_s=steps / max(elapsed, 1e-9),
            temperature=float(temperature),
        )
        if bot is not None:
            res = np.asarray(bot_results)
            stats.update(bot_games=float(len(res)),
                         bot_win=float((res > 0).mean()) if len(res) else 0.0,
                         bot_loss=float((res < 0).mean()) if len(res) else 0.0,
                         **self._bot_side_stats(bot_results, bot_sides))
        return finished, stats
