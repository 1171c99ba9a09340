"""The evaluator: the greedy policy against zoo bots (board games) or alone (single-player envs).

Board games: for every bot named in ``eval_bots`` it plays ``eval_episodes`` games, half with the
agent moving first and half second, all at once in one vector env, and reports win/draw/loss rates
per side. Single-player envs: the mean return over ``eval_episodes`` episodes.
"""
from __future__ import annotations

from typing import Any, Dict, List, Tuple

import numpy as np
from easydict import EasyDict

from lzlite.config import Range, at_least
from lzlite.envs.games import make_bot
from lzlite.envs.vector import BoardVectorEnv, VectorEnv
from lzlite.registry import EVALUATOR_REGISTRY
from lzlite.worker.metrics import graded_positions, losing_positions_vs_any_opponent, optimal_move_rate

__all__ = ["Evaluator", "play_against_bot"]


def play_against_bot(policy: Any, venv: BoardVectorEnv, bot: Any,
                     rng: np.random.Generator) -> Tuple[np.ndarray, np.ndarray, List[List[int]]]:
    """Plays one game per env of ``venv`` between the policy's eval-mode search and ``bot``: the agent
    moves first in the even games, second in the odd ones. Returns (winner [n]: 0 / 1, -1 a draw;
    agent_player [n]; moves: each game's actions from the initial position, both sides)."""
    n = venv.num_envs
    agent_player = np.arange(n) % 2  # even games: agent moves first
    moves: List[List[int]] = [[] for _ in range(n)]
    venv.reset()
    while not venv.done.all():
        running = np.flatnonzero(~venv.done)
        to_play = venv.to_play()[running]
        agent_idx = running[to_play == agent_player[running]]
        bot_idx = running[to_play != agent_player[running]]
        if len(agent_idx):
            _step_and_record(venv, agent_idx, policy.act(venv, agent_idx, rng, mode="eval").action, moves)
        if len(bot_idx):
            _step_and_record(venv, bot_idx, bot.act_batch(np.ascontiguousarray(venv.states[bot_idx])), moves)
    return venv.winner(), agent_player, moves


def _step_and_record(venv: BoardVectorEnv, idx: np.ndarray, actions: np.ndarray, moves: List[List[int]]) -> None:
    venv.step(actions, idx)
    for i, a in zip(idx, np.asarray(actions)):
        moves[i].append(int(a))


@EVALUATOR_REGISTRY.register("bot_evaluator")
class Evaluator:
    """Evaluates a policy; see the module docstring.

    Args:
        policy: a lzlite Policy.
        make_venv: callable n -> a fresh vector env with n games.
        cfg: the policy config section (eval_episodes, eval_bots, eval_bot_depth).
        seed: seed of the bots' tie-breaks and of the policy's generator during evaluation.
    """

    @staticmethod
    def default_config() -> EasyDict:
        return EasyDict(dict(
            eval_freq=500,  # learner steps between evaluations (and one at the end)
            evaluator_env_num=8,  # LightZero compatibility: the evaluator plays all eval_episodes at once
            eval_episodes=20,  # games per opponent (half as first player, half as second)
            eval_bots=["rule"],  # zoo bots to play against ('random', 'rule', 'alpha_beta', 'perfect')
            eval_bot_depth=4,  # alpha-beta depth for the 'alpha_beta' bot
            eval_optimal_move_rate=False,  # grade the greedy move on the game's solved positions (tictactoe, connect4)
            eval_never_lose_check=False,  # count losses over every line of opponent play (small games only)
            # True: each evaluation also writes the weights it scored to ckpt/iteration_<N>.pt (policy, counters and
            # the eval stats; no buffer or optimizer), which eval / play / model_path load like last.pt
            # (LightZero keeps iteration_<N>.pth.tar likewise); ckpt/best.pt, the best-scoring one's, is kept either way
            keep_eval_ckpts=True,
            # when the games against the bots leave a checkpoint too close to call against ckpt/best.pt (the exact
            # measures tie, and its points estimate reaches best.pt's bound while its own bound does not), up to this
            # many more rounds of eval_episodes games per bot before it is judged (0: judge on the first round)
            eval_extra_rounds=2,
        ))

    @staticmethod
    def config_ranges() -> Dict[str, Range]:
        """The allowed values of the numeric keys of ``default_config`` (``lzlite/config/ranges.py``)."""
        return dict(eval_freq=at_least(1), eval_episodes=at_least(1), eval_bot_depth=at_least(1),
                    eval_extra_rounds=at_least(0))

    def __init__(self, policy: Any, make_venv: Any, cfg: EasyDict, seed: int = 0) -> None:
        self.policy = policy
        self.make_venv = make_venv
        self.cfg = cfg
        self.seed = int(seed)
        self._venv: VectorEnv = make_venv(int(cfg.eval_episodes))
        self.calls = 0
        self._extra_round = 0  # rounds of eval_more within the current call
        self._positions = None  # reachable positions and their optimal-move masks, built on first use
        self._optimal = None

    def eval(self) -> Dict[str, float]:
        """Run one evaluation; returns flat statistics (e.g. 'rule/win', 'rule/loss_as_second')."""
        self.calls += 1
        self._extra_round = 0
        rng = np.random.default_rng([self.seed, self.calls])
        venv = self._venv
        if isinstance(venv, BoardVectorEnv):
            stats: Dict[str, float] = {}
            for bot_name in self.cfg.eval_bots:
                stats.update(self._vs_bot(venv, bot_name, rng))
            if self.cfg.eval_optimal_move_rate:
                stats["optimal_move_rate"] = self.optimal_move_rate()
            if self.cfg.eval_never_lose_check:
                for side, name in ((0, "first"), (1, "second")):
                    stats[f"losing_lines_as_{name}"] = float(
                        losing_positions_vs_any_opponent(self.policy, venv.game_name, side, self.seed))
            return stats
        return self._single_player(venv, rng)

    @staticmethod
    def score(stats: Dict[str, float]) -> Tuple[float, ...]:
        """How good one evaluation's ``stats`` are, for keeping the best checkpoint (a tuple compared in order,
        higher is better; the loop keeps the later checkpoint of equals).

        Exact measures come first, where the game has them: minus the losing lines of the never-lose check (no
        opponent can beat the agent from any other line), then the optimal-move rate over the graded positions.
        Games against bots come next, as a lower confidence bound: a 20-game evaluation that won 80% is worth
        less than a 200-game one that won 78%. Per bot the agent's points (win 1, draw 1/2) over its games, their
        Wilson lower bound at one standard deviation, then the mean over the bots. Single-player envs: the mean
        return.
        """
        if "mean_return" in stats:
            return (float(stats["mean_return"]),)
        exact = []
        if "losing_lines_as_first" in stats:
            exact.append(-float(stats["losing_lines_as_first"] + stats.get("losing_lines_as_second", 0.0)))
        bounds = [_wilson_lower(points, games) for points, games in _bot_points(stats)]
        return (*exact, float(stats.get("optimal_move_rate", 0.0)), float(np.mean(bounds)) if bounds else 0.0)

    def settle(self, stats: Dict[str, float], best_score: Tuple[float, ...]) -> Dict[str, float]:
        """More games when they could decide whether ``stats`` beat ``best_score``; returns the stats of all games.

        Too close to call: the exact measures tie and the mean points against the bots reach best's lower bound
        while the lower bound of ``stats`` does not. Then another ``eval_episodes`` games per bot, up to
        ``eval_extra_rounds`` times, until the bound clears best's or the estimate falls below it. A lucky short
        evaluation thus meets more games before it can replace ``ckpt/best.pt``, and a clear one costs nothing.
        """
        for _ in range(int(self.cfg.eval_extra_rounds)):
            if not self._too_close(stats, tuple(best_score)):
                break
            stats = self.eval_more(stats)
        return stats

    def _too_close(self, stats: Dict[str, float], best_score: Tuple[float, ...]) -> bool:
        score = self.score(stats)
        pairs = _bot_points(stats)
        if not pairs or len(score) != len(best_score) or score[:-1] != best_score[:-1]:
            return False
        estimate = float(np.mean([points for points, _ in pairs]))
        return score[-1] < best_score[-1] <= estimate

    def eval_more(self, stats: Dict[str, float]) -> Dict[str, float]:
        """Another ``eval_episodes`` games against every bot of ``stats``, merged in: rates weighted by games."""
        self._extra_round += 1
        rng = np.random.default_rng([self.seed, self.calls, self._extra_round])
        merged = dict(stats)
        for bot_name in self.cfg.eval_bots:
            more = self._vs_bot(self._venv, bot_name, rng)
            n_old, n_new = stats[f"{bot_name}/games"], more[f"{bot_name}/games"]
            for key, value in more.items():
                merged[key] = n_old + n_new if key.endswith("/games") else \
                    (stats[key] * n_old + value * n_new) / (n_old + n_new)
        return merged

    def optimal_move_rate(self) -> float:
        """Fraction of the game's graded positions where the greedy policy plays an optimal move."""
        venv = self._venv
        if self._positions is None:
            self._positions, self._optimal = graded_positions(venv.game_name)
        return optimal_move_rate(self.policy, venv.game_name, self._positions, self._optimal, seed=self.seed)

    def _vs_bot(self, venv: BoardVectorEnv, bot_name: str, rng: np.random.Generator) -> Dict[str, float]:
        kwargs: Dict[str, Any] = {"seed": int(rng.integers(2**31))}
        if bot_name == "alpha_beta":
            kwargs["depth"] = int(self.cfg.eval_bot_depth)
        bot = make_bot(venv.game_name, bot_name, **kwargs)
        winner, agent_player, _ = play_against_bot(self.policy, venv, bot, rng)
        win = winner == agent_player
        loss = (winner >= 0) & ~win
        draw = winner < 0
        first = agent_player == 0
        p = bot_name
        return {
            f"{p}/games": float(len(win)),
            f"{p}/win": float(win.mean()), f"{p}/draw": float(draw.mean()), f"{p}/loss": float(loss.mean()),
            f"{p}/win_as_first": float(win[first].mean()), f"{p}/loss_as_first": float(loss[first].mean()),
            f"{p}/win_as_second": float(win[~first].mean()), f"{p}/loss_as_second": float(loss[~first].mean()),
        }

    def _single_player(self, venv: VectorEnv, rng: np.random.Generator) -> Dict[str, float]:
        venv.reset()
        returns = np.zeros(venv.num_envs)
        while not venv.done.all():
            running = np.flatnonzero(~venv.done)
            out = self.policy.act(venv, running, rng, mode="eval")
            rewards, _ = venv.step(out.action, running)
            returns[running] += rewards
        return {"mean_return": float(returns.mean()), "min_return": float(returns.min()),
                "max_return": float(returns.max())}


def _bot_points(stats: Dict[str, float]) -> List[Tuple[float, float]]:
    """(points per game, games) against each bot of ``stats``: a win 1, a draw 1/2."""
    pairs = []
    for key in stats:
        if key.endswith("/win"):
            bot = key[:-len("/win")]
            points = stats[key] + 0.5 * stats.get(f"{bot}/draw", 1.0 - stats[key] - stats[f"{bot}/loss"])
            pairs.append((float(points), float(stats.get(f"{bot}/games", 0.0))))
    return pairs


def _wilson_lower(p: float, n: float, z: float = 1.0) -> float:
    """Wilson score lower bound of a rate ``p`` observed over ``n`` trials (``p`` itself when ``n`` is unknown)."""
    if n <= 0:
        return float(p)
    centre = p + z * z / (2 * n)
    spread = z * np.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return float((centre - spread) / (1 + z * z / n))
