"""Self-play throughput of the engine against the lock-step collector: Connect Four AlphaZero and Gumbel MuZero.

Both sides run what training runs: ``build_components`` on zoo/connect4/alphazero_config.py (the default net,
2 residual blocks x 64 channels; untrained, weights do not change speed) or, with ``--algo gumbel_muzero``, a
Connect Four Gumbel MuZero of the same conv trunk (configs/gumbel_muzero.py over Connect Four: the shipped recipe's
'grounded' variant records extra per-step fields, which the engine does not make) with ``--games`` games per collect,
then one timed ``collect()`` playing each game once: 'episode_collector' (one batched search per move, the
games in lock-step) and 'engine_collector' (the C++ engine: ``engine_threads`` workers, batches of up to 256
rows, the inference cache off or on). Torch runs on one intra-op thread, as in training.

Columns: positions (moves) per wall second and per CPU second of the process (steadier on a shared machine),
the speedup over the lock-step collector of the same game count, the cache hit rate (hits and aliases over
lookups), the share of wall time outside the network call (lock-step: outside ``model.forward``; engine:
outside the ``infer`` callback), and the mean fill of the engine's batches.

    python benchmarks/bench_engine.py                          # 64 and 256 games, 1 and 2 threads, cache off / on
    python benchmarks/bench_engine.py --games 64 --simulations 25 --threads 1   # a quicker run
    python benchmarks/bench_engine.py --algo gumbel_muzero --simulations 16     # the latent-model engine (no cache)
    python benchmarks/bench_engine.py --ckpt runs/connect4_alphazero/ckpt/iteration_10000.pt   # a trained network

An untrained network's priors are uniform and its values zero (the last layers start at zero), so its searches
spread wider and meet fewer positions twice than a trained one's: ``--ckpt`` loads a run's weights (an AlphaZero
checkpoint of the default net) for the cache figures training sees.
"""
from __future__ import annotations

import argparse
import copy
import functools
import time
from typing import Any, Dict, List, Optional

import torch

from lzlite.config import compile_config, extend_base, load_config_file
from lzlite.entry.loop import build_components
from lzlite.worker.checkpoint import load_checkpoint

CACHE_ENTRIES = 1 << 18  # positions: far more than one collect visits


def components(algo: str, games: int, simulations: int, collector: str, threads: int = 1,
               cache: int = 0) -> Dict[str, Any]:
    if algo == "alphazero":
        main, create = copy.deepcopy(list(load_config_file("zoo/connect4/alphazero_config.py")))
        # float32 network calls: the figures in docs/benchmarks.md (the recipe itself searches in bfloat16 where it can)
        main["policy"].update(search_dtype="float32", learner_dtype="float32", channels_last=False)
    else:
        model = dict(observation_shape=[3, 6, 7], action_space_size=7, num_res_blocks=2, num_channels=64,
                     reward_head_channels=16, value_head_channels=16, policy_head_channels=16, fc_reward_layers=[32],
                     fc_value_layers=[32], fc_policy_layers=[32], support_scale=10)
        main, create = extend_base("gumbel_muzero", dict(exp_name="bench_engine", policy=dict(model=model)),
                                   dict(env=dict(type="connect4")))
    main["policy"].update(collector_env_num=games, n_episode=games, num_simulations=simulations, num_threads=1,
                          device="cpu", evaluator_env_num=1)
    if collector == "engine_collector":
        main["policy"].update(engine_threads=threads, engine_batch_size=min(256, games), engine_infer_cache=cache)
    create["collector"] = dict(type=collector)
    return build_components(compile_config(main, create, seed=0))


def time_calls(model: torch.nn.Module, names: List[str]) -> List[float]:
    """Wraps the model's methods ``names`` (instance attributes shadow the class's); sums their seconds."""
    spent = [0.0]

    def wrap(fn: Any) -> Any:
        @functools.wraps(fn)
        def timed(*args: Any, **kwargs: Any) -> Any:
            t0 = time.perf_counter()
            out = fn(*args, **kwargs)
            spent[0] += time.perf_counter() - t0
            return out
        return timed

    for name in names:
        setattr(model, name, wrap(getattr(model, name)))
    return spent


def run(algo: str, games: int, simulations: int, collector: str, threads: int = 1, cache: int = 0,
        weights: Optional[Dict[str, Any]] = None) -> Dict[str, float]:
    parts = components(algo, games, simulations, collector, threads, cache)
    if weights is not None:
        parts["policy"].load_state_dict(weights)
    col = parts["collector"]
    col.collect(n_episode=2)  # warm-up: torch's first calls, the engine's threads and arenas
    names = ["forward"] if algo == "alphazero" else ["initial_inference", "recurrent_inference"]
    spent = time_calls(parts["policy"].model, names) if collector == "episode_collector" else None
    wall, cpu = time.perf_counter(), time.process_time()
    _, stats = col.collect()
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    out = dict(positions=stats["env_steps"], pos_s=stats["env_steps"] / wall, pos_cpu_s=stats["env_steps"] / cpu)
    if spent is not None:
        out.update(hit_rate=float("nan"), outside=1.0 - spent[0] / wall, fill=float("nan"))
    else:
        out.update(hit_rate=stats["engine_cache_hit_rate"] if cache else float("nan"),
                   outside=stats["engine_outside_infer_share"], fill=stats["engine_mean_batch_fill"])
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--games", type=int, nargs="+", default=[64, 256])
    ap.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--simulations", type=int, default=100, help="default: the AlphaZero config's 100")
    ap.add_argument("--algo", choices=["alphazero", "gumbel_muzero"], default="alphazero")
    ap.add_argument("--ckpt", help="play with this checkpoint's weights (a run of the AlphaZero config; default: "
                                   "an untrained network)")
    args = ap.parse_args()
    if args.ckpt and args.algo != "alphazero":
        ap.error("--ckpt takes a checkpoint of zoo/connect4/alphazero_config.py (--algo alphazero)")
    weights = load_checkpoint(args.ckpt)["policy"] if args.ckpt else None
    torch.set_num_threads(1)
    caches = (0, CACHE_ENTRIES) if args.algo == "alphazero" else (0,)  # a learned model's leaves are not positions
    header = (f"{'collector':<18}{'games':>6}{'threads':>8}{'cache':>6}{'moves':>7}{'pos/s':>9}{'pos/CPU s':>10}"
              f"{'speedup':>8}{'hit rate':>9}{'outside net':>12}{'batch fill':>11}")
    print(f"Connect Four {args.algo}, 2x64 conv net ({args.ckpt or 'untrained'}), {args.simulations} simulations, "
          f"one collect per row")
    print(header)
    print("-" * len(header))
    for games in args.games:
        base = run(args.algo, games, args.simulations, "episode_collector", weights=weights)
        rows = [("lock-step", 1, "-", base)]
        for threads in args.threads:
            for cache in caches:
                rows.append(("engine", threads, "on" if cache else "off",
                             run(args.algo, games, args.simulations, "engine_collector", threads, cache, weights)))
        for name, threads, cache, r in rows:
            print(f"{name:<18}{games:>6}{threads:>8}{cache:>6}{int(r['positions']):>7}{r['pos_s']:>9.1f}"
                  f"{r['pos_cpu_s']:>10.1f}{r['pos_s'] / base['pos_s']:>8.2f}{r['hit_rate']:>9.2f}"
                  f"{r['outside']:>12.3f}{r['fill']:>11.2f}", flush=True)


if __name__ == "__main__":
    main()
