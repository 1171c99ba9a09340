"""Learner step time of a zoo config in each precision mode, against float32 NCHW in the same run.

Modes: float32 (the default), float32 + channels_last, bfloat16 + channels_last
(``policy.learner_dtype='bfloat16'``, ``policy.channels_last=True``). Each mode trains a fresh policy of
the config on the same replay buffer (one collect of the untrained policy) and times ``Learner.train``
on sampled, augmented batches; the median over ``--steps`` steps after ``--warmup`` is reported, with
the speed-up over float32. Torch uses the config's ``policy.num_threads`` (1 in the zoo configs), as training does.

bfloat16 pays off on CPUs with AMX or AVX512-BF16 (Sapphire Rapids and later; the capability line
below says what torch found) and on recent GPUs; on CPUs without them bfloat16 convolutions are emulated
and slower.

    python benchmarks/bench_learner.py                                 # Connect Four MuZero (32 channels)
    python benchmarks/bench_learner.py --cfg zoo/tictactoe/muzero_config.py --steps 10

``--policy KEY=VALUE ...`` changes the config's policy section for every mode (dotted keys for nested ones,
values read as Python literals); ``--against KEY=VALUE ...`` adds a row: bfloat16 + channels_last with those
policy keys changed too, its speed-up against the same mode without them. What the grounding losses of the
shipped Connect Four Gumbel MuZero recipe cost:

    python benchmarks/bench_learner.py --cfg zoo/connect4/gumbel_muzero_config.py \
        --against action_reward_loss_weight=0.0 obs_recon_loss_weight=0.0
"""
from __future__ import annotations

import argparse
import ast
import copy
import time

import numpy as np
import torch

from lzlite.config import compile_config, deep_update, load_config_file
from lzlite.entry.loop import build_components
from lzlite.worker.learner import Learner

MODES = {
    "float32": dict(learner_dtype="float32", channels_last=False),
    "float32 + channels_last": dict(learner_dtype="float32", channels_last=True),
    "bfloat16 + channels_last": dict(learner_dtype="bfloat16", channels_last=True),
}


def time_mode(main_config: dict, create_config: dict, overrides: dict, segments: list, steps: int,
              warmup: int) -> float:
    """Median seconds per learner step for the config with ``overrides`` in its policy section."""
    cfg = compile_config(deep_update(copy.deepcopy(main_config), dict(policy=overrides)), create_config, seed=0)
    parts = build_components(cfg)
    parts["buffer"].push_segments(segments)
    learner = Learner(parts["policy"], cfg.policy, max_train_iter=warmup + steps)
    rng = np.random.default_rng(0)
    times = []
    for i in range(warmup + steps):
        batch = parts["buffer"].sample(cfg.policy.batch_size, rng)
        if parts["augment"] is not None:
            batch = parts["augment"](batch, rng)
        t0 = time.perf_counter()
        learner.train(batch)
        if i >= warmup:
            times.append(time.perf_counter() - t0)
    return float(np.median(times))


def policy_overrides(pairs: list) -> dict:
    """``["a.b=1", "c='x'"]`` -> ``{"a": {"b": 1}, "c": "x"}`` (values as Python literals, else strings)."""
    out: dict = {}
    for pair in pairs:
        key, sep, text = pair.partition("=")
        if not sep:
            raise SystemExit(f"expected KEY=VALUE, got {pair!r}")
        try:
            value = ast.literal_eval(text)
        except (ValueError, SyntaxError):
            value = text
        *parents, leaf = key.split(".")
        node = out
        for name in parents:
            node = node.setdefault(name, {})
        node[leaf] = value
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cfg", default="zoo/connect4/muzero_config.py", help="a zoo config file")
    parser.add_argument("--steps", type=int, default=20, help="timed learner steps per mode")
    parser.add_argument("--warmup", type=int, default=3, help="untimed learner steps per mode")
    parser.add_argument("--policy", nargs="*", default=[], metavar="KEY=VALUE", help="policy keys for every mode")
    parser.add_argument("--against", nargs="*", default=[], metavar="KEY=VALUE",
                        help="a row with these policy keys changed too (bfloat16 + channels_last)")
    args = parser.parse_args()
    main_config, create_config = load_config_file(args.cfg)
    main_config = deep_update(main_config, dict(policy=policy_overrides(args.policy)))
    cfg = compile_config(copy.deepcopy(main_config), create_config, seed=0)
    if cfg.policy.num_threads > 0:  # as training does
        torch.set_num_threads(cfg.policy.num_threads)
    parts = build_components(cfg)  # one collect of the untrained policy fills every mode's buffer
    segments, _ = parts["collector"].collect()
    print(f"{args.cfg}: batch {cfg.policy.batch_size}, K={cfg.policy.num_unroll_steps}, "
          f"{sum(len(s) for s in segments)} transitions in the buffer, torch threads {torch.get_num_threads()}, "
          f"CPU capability {torch.backends.cpu.get_cpu_capability()}")
    base = None
    print(f"{'mode':<26} {'s/step (median)':>16} {'steps/s':>8} {'speed-up':>9}")
    for name, overrides in MODES.items():
        t = time_mode(main_config, create_config, overrides, segments, args.steps, args.warmup)
        base, last = base or t, t
        print(f"{name:<26} {t:>16.3f} {1 / t:>8.2f} {base / t:>8.2f}x")
    if args.against:
        mode = "bfloat16 + channels_last"
        t = time_mode(main_config, create_config, deep_update(dict(MODES[mode]), policy_overrides(args.against)),
                      segments, args.steps, args.warmup)
        print(f"{mode}, {' '.join(args.against)}: {t:.3f} s/step, {1 / t:.2f} steps/s, {last / t:.2f}x against "
              f"the same mode without")


if __name__ == "__main__":
    main()
