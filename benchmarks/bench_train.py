"""End-to-end tic-tac-toe MuZero training throughput in LightZero's config shape, next to LightZero's.

Runs the real ``train_muzero`` (collect -> push -> learn -> evaluate -> checkpoint) with LightZero's
tic-tac-toe MuZero shape: 8 games per collect on 8 envs, 25 simulations, batch 256, 50 learner updates
per collect (update_per_collect=50), K=5 unroll steps, td_steps=9, a small residual net (1 block x 16
channels, 8-unit fc heads, categorical support 21), no reanalyze, evaluation against the rule bot at the
end. Updates start once the buffer holds one batch (256 transitions), as in LightZero. The budget is
``--collects`` collects that train (``max_train_iter = 50 x collects``).

Wall time is split by timing the collector's ``collect``, the buffer's ``sample`` plus the learner's
``train`` (together: learn) and the evaluator's ``eval``; the rest (pushing segments, logging,
checkpoints) is 'other'. Torch runs on one intra-op thread (policy.num_threads=1).

LightZero (opendilab/LightZero, same config shape) measured on this machine: 3.7 env steps/s, about
0.16 s per learner update, 85% of wall time in its learner.

    python benchmarks/bench_train.py             # 20 training collects (1000 updates)
    python benchmarks/bench_train.py --quick     # 2 training collects, under a minute
"""
from __future__ import annotations

import argparse
import contextlib
import functools
import io
import tempfile
import time
from typing import Any, Dict

import torch

from lzlite.config import extend_base
from lzlite.entry import train_muzero
from lzlite.registry import BUFFER_REGISTRY, COLLECTOR_REGISTRY, EVALUATOR_REGISTRY
from lzlite.worker.learner import Learner

LIGHTZERO = dict(env_steps_per_s=3.7, s_per_update=0.16, learn_share=0.85)


def lightzero_shape_config() -> list:
    """[main_config, create_config]: tic-tac-toe MuZero as LightZero's tictactoe_muzero_bot_mode_config."""
    model = dict(observation_shape=[3, 3, 3], action_space_size=9, num_res_blocks=1, num_channels=16,
                 reward_head_channels=8, value_head_channels=8, policy_head_channels=8,
                 fc_reward_layers=[8], fc_value_layers=[8], fc_policy_layers=[8], support_scale=10)
    policy = dict(model=model, num_simulations=25, collector_env_num=8, n_episode=8, evaluator_env_num=5,
                  batch_size=256, update_per_collect=50, num_unroll_steps=5, td_steps=9, discount_factor=1.0,
                  replay_buffer_size=100000, reanalyze_ratio=0.0, eval_freq=10 ** 9, eval_episodes=10,
                  eval_bots=["rule"], save_ckpt_freq=10 ** 9, num_threads=1, device="cpu", mcts_ctree=True)
    main, create = extend_base("muzero", dict(exp_name="bench_train_tictactoe_muzero", policy=policy),
                               dict(env=dict(type="tictactoe")))
    return [main, create]


class PhaseTimer:
    """Wraps class methods so every call adds its wall time to a named phase."""

    def __init__(self) -> None:
        self.seconds: Dict[str, float] = {}
        self.cpu_seconds: Dict[str, float] = {}  # process CPU time: robust to other jobs on a shared machine
        self.calls: Dict[str, int] = {}
        self.env_steps = 0  # summed from the collector's returned stats
        self._undo = []

    def wrap(self, cls: type, method: str, phase: str) -> None:
        original = getattr(cls, method)

        @functools.wraps(original)
        def timed(*args: Any, **kwargs: Any) -> Any:
            t0, c0 = time.perf_counter(), time.process_time()
            try:
                out = original(*args, **kwargs)
                if phase == "collect":
                    self.env_steps += int(out[1]["env_steps"])
                return out
            finally:
                self.seconds[phase] = self.seconds.get(phase, 0.0) + time.perf_counter() - t0
                self.cpu_seconds[phase] = self.cpu_seconds.get(phase, 0.0) + time.process_time() - c0
                self.calls[phase] = self.calls.get(phase, 0) + 1

        setattr(cls, method, timed)
        self._undo.append((cls, method, original))

    def restore(self) -> None:
        for cls, method, original in reversed(self._undo):
            setattr(cls, method, original)


def run(collects: int, seed: int) -> Dict[str, float]:
    torch.set_num_threads(1)
    cfg = lightzero_shape_config()
    timer = PhaseTimer()
    timer.wrap(COLLECTOR_REGISTRY.get("episode_collector"), "collect", "collect")
    timer.wrap(BUFFER_REGISTRY.get("game_buffer"), "sample", "sample")
    timer.wrap(Learner, "train", "train")
    timer.wrap(EVALUATOR_REGISTRY.get("bot_evaluator"), "eval", "eval")
    try:
        with tempfile.TemporaryDirectory() as run_dir:
            t0, c0 = time.perf_counter(), time.process_time()
            with contextlib.redirect_stdout(io.StringIO()):  # the run's own summary table; we print ours
                policy = train_muzero(cfg, seed=seed, max_train_iter=50 * collects, run_dir=run_dir, progress=False)
            wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    finally:
        timer.restore()
    s = timer.seconds
    updates = timer.calls.get("train", 0)
    learn = s.get("sample", 0.0) + s.get("train", 0.0)
    learn_cpu = timer.cpu_seconds.get("sample", 0.0) + timer.cpu_seconds.get("train", 0.0)
    env_steps = timer.env_steps
    return dict(wall=wall, cpu=cpu, cpu_s_per_update=learn_cpu / max(updates, 1), env_steps=env_steps, updates=updates, collects=timer.calls.get("collect", 0),
                env_steps_per_s=env_steps / wall, updates_per_s=updates / wall,
                s_per_update=learn / max(updates, 1), sample_s_per_update=s.get("sample", 0.0) / max(updates, 1),
                collect_share=s.get("collect", 0.0) / wall, learn_share=learn / wall,
                eval_share=s.get("eval", 0.0) / wall,
                other_share=1.0 - (s.get("collect", 0.0) + learn + s.get("eval", 0.0)) / wall,
                final_eval=getattr(policy, "final_eval", {}))


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--collects", type=int, default=20, help="training collects (50 updates each)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--quick", action="store_true", help="2 training collects (< 60 s)")
    args = p.parse_args()
    collects = 2 if args.quick else args.collects
    r = run(collects, args.seed)
    print(f"tic-tac-toe MuZero, LightZero shape (S=25, batch 256, 50 updates per 8 games, 1x16 res net), "
          f"{collects} training collects, torch threads=1")
    print(f"  collects {r['collects']} (incl. warm-up collects before the buffer holds a batch), "
          f"env steps {r['env_steps']}, updates {r['updates']}, wall {r['wall']:.1f} s, "
          f"process CPU {r['cpu']:.1f} s (CPU/wall {r['cpu'] / r['wall']:.2f}: below 1 means other jobs shared the cores)")
    print(f"{'metric':<26} {'lzlite':>10} {'LightZero':>10} {'ratio':>8}")
    rows = [("env steps / s", r["env_steps_per_s"], LIGHTZERO["env_steps_per_s"], r["env_steps_per_s"] / LIGHTZERO["env_steps_per_s"]),
            ("updates / s", r["updates_per_s"], None, None),
            ("s per update (learn)", r["s_per_update"], LIGHTZERO["s_per_update"], LIGHTZERO["s_per_update"] / r["s_per_update"]),
            ("  CPU s per update", r["cpu_s_per_update"], None, None),
            ("  of which sampling", r["sample_s_per_update"], None, None),
            ("share: collect", r["collect_share"], None, None),
            ("share: learn", r["learn_share"], LIGHTZERO["learn_share"], None),
            ("share: eval", r["eval_share"], None, None),
            ("share: other", r["other_share"], None, None)]
    for name, ours, theirs, ratio in rows:
        t = f"{theirs:>10.3g}" if theirs is not None else f"{'':>10}"
        q = f"{ratio:>7.1f}x" if ratio is not None else ""
        print(f"{name:<26} {ours:>10.3g} {t} {q}")
    ev = r["final_eval"]
    print(f"  (ratio: how many times faster lzlite is; final eval vs rule bot: win {ev.get('rule/win', 0):.2f} "
          f"draw {ev.get('rule/draw', 0):.2f} loss {ev.get('rule/loss', 0):.2f})")


if __name__ == "__main__":
    main()
