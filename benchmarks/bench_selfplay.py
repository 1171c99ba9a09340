"""Self-play throughput: Connect Four positions per second through the real Collector and Policy.

What runs is what training runs: ``build_components`` on a Connect Four config (AlphaZero over real game
states, or MuZero over a learned latent model), then ``Collector.collect()`` playing ``--games``
concurrent games, one batched search per move. The default model is a zoo-sized Connect Four conv net
(there is no zoo/connect4 config yet): observation [3, 6, 7], 7 actions, 2 residual blocks x 32
channels, heads of 16 channels, 32-unit fc layers, BatchNorm, untrained (weights do not change speed).

The network share is the wall time spent inside the model's calls (AlphaZero: ``model.forward``;
MuZero: ``model.initial_inference`` / ``model.recurrent_inference``) divided by the collect's wall
time; everything else (tree, game stepping, observation encoding, segment building) is overhead.
Torch runs on one intra-op thread, as in training (policy.num_threads=1). 'pos/CPU s' divides by the
process's CPU time instead of wall time: on a machine shared with other jobs it is the steadier figure.

    python benchmarks/bench_selfplay.py                         # alphazero + muzero, 64 and 256 games
    python benchmarks/bench_selfplay.py --algo alphazero --games 256 --simulations 50 --profile
    python benchmarks/bench_selfplay.py --quick                 # a smoke run in a few seconds
    python benchmarks/bench_selfplay.py --search-dtype both --games 128   # fp32 vs bf16 search (AMX CPUs, GPUs)
"""
from __future__ import annotations

import argparse
import cProfile
import functools
import pstats
import statistics
import time
from typing import Any, Callable, Dict, List

import torch

from lzlite.config import compile_config, extend_base
from lzlite.entry.loop import build_components


def connect4_config(algo: str, games: int, simulations: int, channels: int, blocks: int,
                    search_dtype: str = "float32") -> Any:
    """A compiled Connect Four config for ``algo`` with ``games`` concurrent games per collect (bfloat16
    searches keep conv weights NHWC, ``channels_last``: oneDNN's fast bf16 layout)."""
    model = dict(observation_shape=[3, 6, 7], action_space_size=7, num_res_blocks=blocks, num_channels=channels,
                 value_head_channels=16, policy_head_channels=16, fc_value_layers=[32], fc_policy_layers=[32])
    if algo == "muzero":
        model.update(reward_head_channels=16, fc_reward_layers=[32], support_scale=10)
    policy = dict(model=model, num_simulations=simulations, collector_env_num=games, n_episode=games,
                  evaluator_env_num=1, num_threads=1, mcts_ctree=True, device="cpu", search_dtype=search_dtype,
                  channels_last=search_dtype == "bfloat16")
    if algo == "muzero":
        policy.update(discount_factor=1.0)
    main, create = extend_base(algo, dict(exp_name=f"bench_selfplay_{algo}", policy=policy),
                               dict(env=dict(type="connect4")))
    return compile_config(main, create, seed=0)


class NetTimer:
    """Wraps model methods (instance attributes shadow the class's) and sums the seconds spent in them."""

    def __init__(self, model: torch.nn.Module, names: List[str]) -> None:
        self.seconds = 0.0
        self.calls = 0
        self.rows = 0
        for name in names:
            setattr(model, name, self._timed(getattr(model, name)))

    def _timed(self, fn: Callable) -> Callable:
        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            t0 = time.perf_counter()
            out = fn(*args, **kwargs)  # CPU torch is synchronous: the result is ready on return
            self.seconds += time.perf_counter() - t0
            self.calls += 1
            self.rows += int(args[0].shape[0])
            return out

        return wrapper

    def reset(self) -> None:
        self.seconds, self.calls, self.rows = 0.0, 0, 0


def run_case(algo: str, games: int, simulations: int, channels: int, blocks: int, repeats: int,
             profile: bool, search_dtype: str = "float32") -> Dict[str, float]:
    torch.set_num_threads(1)
    torch.manual_seed(0)
    cfg = connect4_config(algo, games, simulations, channels, blocks, search_dtype)
    parts = build_components(cfg)
    policy, collector = parts["policy"], parts["collector"]
    names = ["forward"] if algo == "alphazero" else ["initial_inference", "recurrent_inference"]
    timer = NetTimer(policy.model, names)
    collector.collect(n_episode=min(games, 8))  # warm-up: allocations, tree cache, first torch calls
    rows = []
    for _ in range(repeats):
        timer.reset()
        t0, c0 = time.perf_counter(), time.process_time()
        segments, stats = collector.collect()
        wall, cpu = time.perf_counter() - t0, time.process_time() - c0
        positions = int(stats["env_steps"])
        rows.append(dict(positions=positions, wall=wall, pos_per_s=positions / wall, pos_per_cpu_s=positions / cpu,
                         net_share=timer.seconds / wall,
                         net_batch=timer.rows / max(timer.calls, 1), net_calls=timer.calls))
    result: Dict[str, Any] = {k: statistics.median(r[k] for r in rows) for k in rows[0]}
    if profile:
        result["profile"] = overhead_profile(collector)
    return result


def overhead_profile(collector: Any, top: int = 8) -> str:
    """cProfile of one collect: the functions outside the network with the most own time (the overhead)."""
    prof = cProfile.Profile()
    prof.enable()
    t0 = time.perf_counter()
    collector.collect()
    wall = time.perf_counter() - t0
    prof.disable()
    stats = pstats.Stats(prof).stats  # {(file, line, func): (cc, ncalls, tottime, cumtime, callers)}

    def in_net(key: tuple) -> bool:  # torch itself or lzlite's model code (the network's Python side)
        return "torch" in key[0] or "torch" in key[2] or "lzlite/model/" in key[0]

    torch_time = sum(v[2] for k, v in stats.items() if in_net(k))
    rows = sorted(((v[2], v[1], k) for k, v in stats.items() if not in_net(k)), reverse=True)[:top]
    total = sum(v[2] for v in stats.values())
    out = [f"    profiled collect {wall:.2f} s (profiler inflates small calls); own time in the network (torch + lzlite/model): "
           f"{torch_time / total:.0%}, elsewhere: {1 - torch_time / total:.0%}; top elsewhere:"]
    for tottime, ncalls, (file, line, func) in rows:
        where = func if file == "~" else f"{file.split('/work/main/')[-1]}:{line}({func})"
        out.append(f"      {tottime / total:6.1%}  {ncalls:>7} calls  {where}")
    return "\n".join(out)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--algo", choices=["alphazero", "muzero", "both"], default="both")
    p.add_argument("--games", type=int, nargs="+", default=[64, 256], help="concurrent games per collect")
    p.add_argument("--simulations", type=int, default=25, help="simulations per move (S)")
    p.add_argument("--channels", type=int, default=32, help="residual trunk channels")
    p.add_argument("--blocks", type=int, default=2, help="residual blocks")
    p.add_argument("--repeats", type=int, default=3, help="timed collects per case (median reported)")
    p.add_argument("--profile", action="store_true", help="print a cProfile summary of one more collect per case")
    p.add_argument("--search-dtype", choices=["float32", "bfloat16", "both"], default="float32",
                   help="the search's network precision (policy.search_dtype; bfloat16 with NHWC conv weights); "
                        "'both': each case in both, with the bf16/fp32 speed ratio")
    p.add_argument("--quick", action="store_true", help="smoke run: 16 games, S=8, 1 repeat")
    args = p.parse_args()
    if args.quick:
        args.games, args.simulations, args.repeats = [16], 8, 1
    algos = ["alphazero", "muzero"] if args.algo == "both" else [args.algo]
    print(f"Connect Four self-play, model: {args.blocks} res blocks x {args.channels} channels, S={args.simulations}, "
          f"torch threads=1, {args.repeats} collects per case (median)")
    dtypes = ["float32", "bfloat16"] if args.search_dtype == "both" else [args.search_dtype]
    header = f"{'algo':<10} {'dtype':<8} {'games':>6} {'positions':>9} {'wall s':>8} {'pos/s':>9} {'pos/CPU s':>9} {'net share':>9} {'net batch':>9}"
    print(header)
    for algo in algos:
        for games in args.games:
            speed = {}
            for dtype in dtypes:
                r = run_case(algo, games, args.simulations, args.channels, args.blocks, args.repeats, args.profile,
                             dtype)
                speed[dtype] = r["pos_per_cpu_s"]
                print(f"{algo:<10} {dtype:<8} {games:>6} {r['positions']:>9.0f} {r['wall']:>8.2f} {r['pos_per_s']:>9.1f} "
                      f"{r['pos_per_cpu_s']:>9.1f} {r['net_share']:>9.2f} {r['net_batch']:>9.1f}", flush=True)
                if "profile" in r:
                    print(r["profile"], flush=True)
            if len(speed) == 2:
                print(f"{algo:<10} bf16/fp32 positions per CPU second: {speed['bfloat16'] / speed['float32']:.2f}x",
                      flush=True)


if __name__ == "__main__":
    main()
