"""End-to-end tic-tac-toe MuZero training throughput, compared like with like with LightZero's run.

LightZero's figures (``LIGHTZERO``) come from its tic-tac-toe MuZero in play-with-bot mode, measured on this
machine: the agent plays first and LightZero's rule bot replies inside ``env.step``, so one env step is one
agent move (about 34 per 8 games); 50 learner updates per 8-game collect make 1.45 updates per env step;
batch 256, 0.16 s per update, 3.7 env steps/s, 85% of wall time in its learner.

Both runs use LightZero's shape (``lightzero_shape_config``): 8 games per collect on 8 envs, 25 simulations,
batch 256, K=5 unroll steps, td_steps=9, a 1-block x 16-channel residual net with 8-unit fc heads and support
21, no reanalyze, one torch thread. The script runs the real ``train_muzero`` and compares:

* **seconds per update** (buffer ``sample`` + learner ``train``): same batch, same net, so the same work.
* **env steps/s at LightZero's 1.45 updates per env step**, over the steady state: from the first collect that
  is followed by updates (the warm-up collects that fill the buffer to one batch are left out) to the last
  update. The runs aim at that rate with ``update_per_collect=None`` and ``replay_ratio`` rather than a fixed
  ``update_per_collect``: each collect then gets ceil(transitions x replay_ratio) updates, so the rate follows
  each collect's length as games get longer or shorter while the policy learns. Where the measured rate still
  differs (against the bot the policy's share of the moves varies), the figure is taken at exactly 1.45: the
  window's learn time is replaced by 1.45 x env steps x seconds per update (learn time is proportional to
  updates; the collect time per env step is as measured). Two counting conventions:

  - ``vs rule bot``: every collected game is against lzlite's rule bot (``collect_bot_fraction=1``) and an env
    step is one of the policy's own moves, as in LightZero. lzlite records both sides' moves (the bot's with the
    policy's search target), about two stored transitions per policy move, so ``replay_ratio=1.45 / 2``. It
    also searches at the bot's turns, about two searches per counted step where LightZero does one, and the
    bot takes a random side per game (LightZero's agent always moves first).
  - ``self-play``: lzlite's default; every move is an env step (one search, one stored transition),
    ``replay_ratio=1.45``.

  The measured updates per env step is printed beside LightZero's 1.45, and each run's figure at its measured
  rate under the table.

Figures are medians over ``--repeats`` runs per convention (run alternately). Each is given per wall second
and per process-CPU second: on a shared machine other jobs inflate wall time, CPU time much less. The
ratio is how many times faster lzlite is than LightZero's (wall-clock) figure.

    python benchmarks/bench_train.py              # about 1000 updates per run, 3 repeats per convention
    python benchmarks/bench_train.py --quick      # about 100 updates per run, 1 repeat (a minute or two)
"""
from __future__ import annotations

import argparse
import contextlib
import functools
import io
import statistics
import tempfile
import time
from typing import Any, Dict, List

import torch

from lzlite.config import extend_base
from lzlite.entry import train_muzero
from lzlite.registry import BUFFER_REGISTRY, COLLECTOR_REGISTRY
from lzlite.worker.learner import Learner

LIGHTZERO = dict(env_steps_per_s=3.7, s_per_update=0.16, learn_share=0.85, updates_per_env_step=1.45,
                 env_steps_per_game=34 / 8)
CONVENTIONS = {  # name: (policy config overrides, what one env step is)
    "vs rule bot": (dict(collect_bot="rule", collect_bot_fraction=1.0,
                         replay_ratio=LIGHTZERO["updates_per_env_step"] / 2),
                    "a policy move in a game against the rule bot (LightZero's count)"),
    "self-play": (dict(replay_ratio=LIGHTZERO["updates_per_env_step"]), "any move of a self-play game"),
}


def lightzero_shape_config(**policy_overrides: Any) -> list:
    """[main_config, create_config]: tic-tac-toe MuZero as LightZero's tictactoe_muzero_bot_mode_config.

    Args:
        policy_overrides: policy keys to change (``run`` sets ``update_per_collect=None``, a ``replay_ratio``
            and, against the bot, ``collect_bot`` / ``collect_bot_fraction``).
    """
    model = dict(observation_shape=[3, 3, 3], action_space_size=9, num_res_blocks=1, num_channels=16,
                 reward_head_channels=8, value_head_channels=8, policy_head_channels=8,
                 fc_reward_layers=[8], fc_value_layers=[8], fc_policy_layers=[8], support_scale=10)
    policy = dict(model=model, num_simulations=25, collector_env_num=8, n_episode=8, evaluator_env_num=5,
                  batch_size=256, update_per_collect=50, num_unroll_steps=5, td_steps=9, discount_factor=1.0,
                  replay_buffer_size=100000, reanalyze_ratio=0.0, eval_freq=10 ** 9, eval_episodes=10,
                  eval_bots=["rule"], save_ckpt_freq=10 ** 9, num_threads=1, device="cpu", mcts_ctree=True)
    policy.update(policy_overrides)
    main, create = extend_base("muzero", dict(exp_name="bench_train_tictactoe_muzero", policy=policy),
                               dict(env=dict(type="tictactoe")))
    return [main, create]


class _CountingBot:
    """A zoo bot that counts the moves it plays (the collector searches and records them too)."""

    def __init__(self, bot: Any, timer: "PhaseTimer") -> None:
        self._bot, self._timer = bot, timer

    def act_batch(self, states: Any) -> Any:
        self._timer.bot_moves += len(states)
        return self._bot.act_batch(states)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._bot, name)


class PhaseTimer:
    """Wraps class methods so every call adds its wall and process-CPU time to a named phase.

    Each collect is also logged (start / end times, moves played, bot moves, updates before it) so that the
    steady state can be cut out afterwards.
    """

    def __init__(self) -> None:
        self.seconds: Dict[str, float] = {}
        self.cpu_seconds: Dict[str, float] = {}
        self.calls: Dict[str, int] = {}
        self.collects: List[Dict[str, float]] = []
        self.last_train_end = (0.0, 0.0)  # (wall, CPU) clock at the end of the last update
        self.bot_moves = 0
        self._undo = []

    def wrap(self, cls: type, method: str, phase: str) -> None:
        original = getattr(cls, method)

        @functools.wraps(original)
        def timed(*args: Any, **kwargs: Any) -> Any:
            t0, c0, bot0 = time.perf_counter(), time.process_time(), self.bot_moves
            updates_before = self.calls.get("train", 0)
            out = original(*args, **kwargs)
            t1, c1 = time.perf_counter(), time.process_time()
            self.seconds[phase] = self.seconds.get(phase, 0.0) + t1 - t0
            self.cpu_seconds[phase] = self.cpu_seconds.get(phase, 0.0) + c1 - c0
            self.calls[phase] = self.calls.get(phase, 0) + 1
            if phase == "collect":
                moves = int(out[1]["env_steps"])
                self.collects.append(dict(t0=t0, c0=c0, seconds=t1 - t0, moves=moves, updates_before=updates_before,
                                          policy_moves=moves - (self.bot_moves - bot0)))
            elif phase == "train":
                self.last_train_end = (t1, c1)
            return out

        self._patch(cls, method, timed)

    def count_bot_moves(self) -> None:
        collector_cls = COLLECTOR_REGISTRY.get("episode_collector")
        original = collector_cls._new_bot

        @functools.wraps(original)
        def counting(collector: Any, *args: Any, **kwargs: Any) -> Any:
            return _CountingBot(original(collector, *args, **kwargs), self)

        self._patch(collector_cls, "_new_bot", counting)

    def _patch(self, cls: type, method: str, replacement: Any) -> None:
        self._undo.append((cls, method, getattr(cls, method)))
        setattr(cls, method, replacement)

    def restore(self) -> None:
        for cls, method, original in reversed(self._undo):
            setattr(cls, method, original)


def run(convention: str, updates: int, seed: int) -> Dict[str, float]:
    """One ``train_muzero`` run of about ``updates`` learner updates; its steady-state figures."""
    torch.set_num_threads(1)
    overrides, _ = CONVENTIONS[convention]
    cfg = lightzero_shape_config(update_per_collect=None, **overrides)
    batch, games_per_collect = cfg[0]["policy"]["batch_size"], cfg[0]["policy"]["n_episode"]
    # the loop stops at a collect boundary once this many transitions are stored, so every collect gets all
    # its updates; the first `batch` transitions only fill the buffer
    max_env_step = batch + int(updates / overrides["replay_ratio"])
    timer = PhaseTimer()
    timer.wrap(COLLECTOR_REGISTRY.get("episode_collector"), "collect", "collect")
    timer.wrap(BUFFER_REGISTRY.get("game_buffer"), "sample", "sample")
    timer.wrap(Learner, "train", "train")
    timer.count_bot_moves()
    try:
        with tempfile.TemporaryDirectory() as run_dir:
            with contextlib.redirect_stdout(io.StringIO()):  # the run's own summary table; we print ours
                policy = train_muzero(cfg, seed=seed, max_env_step=max_env_step, run_dir=run_dir, progress=False)
    finally:
        timer.restore()
    n_updates = timer.calls.get("train", 0)
    training = [c for i, c in enumerate(timer.collects)
                if (timer.collects[i + 1]["updates_before"] if i + 1 < len(timer.collects) else n_updates)
                > c["updates_before"]]
    if not training:
        raise RuntimeError(f"no collect was followed by updates ({len(timer.collects)} collects): raise --updates")
    first = training[0]
    window = [c for c in timer.collects if c["t0"] >= first["t0"]]
    wall = timer.last_train_end[0] - first["t0"]
    cpu = timer.last_train_end[1] - first["c0"]
    steps = sum(c["policy_moves"] if convention == "vs rule bot" else c["moves"] for c in window)
    learn = timer.seconds["sample"] + timer.seconds["train"]
    learn_cpu = timer.cpu_seconds["sample"] + timer.cpu_seconds["train"]
    # at exactly LightZero's rate the window would hold rate x steps updates: swap the learn time for that
    rate = LIGHTZERO["updates_per_env_step"]
    wall_at_rate = wall - learn + rate * steps * learn / n_updates
    cpu_at_rate = cpu - learn_cpu + rate * steps * learn_cpu / n_updates
    ev = getattr(policy, "final_eval", {})
    return dict(
        s_per_update=learn / n_updates, cpu_s_per_update=learn_cpu / n_updates,
        sample_s_per_update=timer.seconds["sample"] / n_updates,
        env_steps_per_s=steps / wall_at_rate, env_steps_per_cpu_s=steps / cpu_at_rate,
        learn_share=rate * steps * learn / n_updates / wall_at_rate,
        updates_per_env_step=n_updates / steps, env_steps_per_game=steps / (games_per_collect * len(window)),
        measured_env_steps_per_s=steps / wall, cpu_per_wall=cpu / wall,
        steps=steps, updates=n_updates, training_collects=len(window), warmup_collects=len(timer.collects) - len(window),
        wall=wall, eval_win=ev.get("rule/win", 0.0), eval_draw=ev.get("rule/draw", 0.0), eval_loss=ev.get("rule/loss", 0.0))


def _median(runs: List[Dict[str, float]], key: str) -> float:
    return statistics.median(r[key] for r in runs)


def _fmt(x: float) -> str:
    return f"{x:.3g}" if x < 1000 else f"{x:.0f}"


def report(results: Dict[str, List[Dict[str, float]]], updates: int) -> None:
    every = [r for runs in results.values() for r in runs]
    repeats = len(next(iter(results.values())))
    print(f"tic-tac-toe MuZero in LightZero's shape (batch 256, 1x16 res net, S=25, K=5, 8 games per collect, "
          f"one torch thread); about {updates} updates per run, median of {repeats} run(s) per convention; "
          f"steady state only (from the first collect that trains)")
    print("compared: seconds per update at the same batch and net; env steps/s at LightZero's 1.45 updates "
          "per env step, where an env step is")
    for name, (_, meaning) in CONVENTIONS.items():
        print(f"  {name}: {meaning}")
    rows = []  # (metric, lzlite per wall s, lzlite per CPU s, LightZero, lzlite is faster by (wall), (CPU))
    s_upd, cpu_upd = _median(every, "s_per_update"), _median(every, "cpu_s_per_update")
    lz = LIGHTZERO["s_per_update"]
    rows.append(("s per update (sample + train)", _fmt(s_upd), _fmt(cpu_upd), _fmt(lz),
                 f"{lz / s_upd:.1f}x", f"{lz / cpu_upd:.1f}x"))
    rows.append(("  of which sampling + targets", _fmt(_median(every, "sample_s_per_update")), "", "", "", ""))
    for name, runs in results.items():
        eps, eps_cpu = _median(runs, "env_steps_per_s"), _median(runs, "env_steps_per_cpu_s")
        lz = LIGHTZERO["env_steps_per_s"]
        rows.append((f"env steps / s at 1.45 updates per env step, {name}", _fmt(eps), _fmt(eps_cpu), _fmt(lz), f"{eps / lz:.1f}x", f"{eps_cpu / lz:.1f}x"))
        rows.append(("  updates per env step, as run", _fmt(_median(runs, "updates_per_env_step")), "",
                     _fmt(LIGHTZERO["updates_per_env_step"]), "", ""))
        rows.append(("  env steps per game", _fmt(_median(runs, "env_steps_per_game")), "",
                     _fmt(LIGHTZERO["env_steps_per_game"]), "", ""))
        rows.append(("  share of wall: learn", _fmt(_median(runs, "learn_share")), "",
                     _fmt(LIGHTZERO["learn_share"]), "", ""))
    header = ("metric", "lzlite (wall)", "lzlite (CPU)", "LightZero", "ratio (wall)", "ratio (CPU)")
    print("| " + " | ".join(header) + " |")
    print("|---|" + "---:|" * (len(header) - 1))
    for row in rows:
        print("| " + " | ".join(row) + " |")
    for name, runs in results.items():
        for r in runs:
            print(f"  {name}: {r['warmup_collects']} warm-up + {r['training_collects']} training collects, "
                  f"{r['steps']} env steps, {r['updates']} updates, {r['wall']:.1f} s wall "
                  f"({r['measured_env_steps_per_s']:.3g} env steps/s as run), CPU/wall "
                  f"{r['cpu_per_wall']:.2f}; final eval vs rule bot win/draw/loss {r['eval_win']:.2f} / "
                  f"{r['eval_draw']:.2f} / {r['eval_loss']:.2f}")
    print("  (ratio: lzlite's figure over LightZero's wall-clock one, s per update inverted, so > 1 means lzlite "
          "is faster; CPU/wall below 1 means other jobs shared the cores)")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--updates", type=int, default=1000, help="learner updates per run, about (default 1000)")
    p.add_argument("--repeats", type=int, default=None, help="runs per convention (default 3; 1 with --quick)")
    p.add_argument("--seed", type=int, default=0, help="seed of the first repeat; repeat i uses seed + i")
    p.add_argument("--quick", action="store_true", help="about 100 updates per run, 1 repeat (a minute or two)")
    args = p.parse_args()
    updates = 100 if args.quick else args.updates
    repeats = args.repeats if args.repeats is not None else (1 if args.quick else 3)
    results: Dict[str, List[Dict[str, float]]] = {name: [] for name in CONVENTIONS}
    for i in range(repeats):  # alternate the conventions so that load changes hit both alike
        for name in CONVENTIONS:
            results[name].append(run(name, updates, args.seed + i))
    report(results, updates)


if __name__ == "__main__":
    main()
