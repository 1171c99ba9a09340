"""UniZero search: time per simulation with the KV cache vs recomputing each leaf's context from scratch.

    python benchmarks/bench_unizero_kv.py            # B {8, 64} x S {25, 50} x history {0, 8}
    python benchmarks/bench_unizero_kv.py --quick    # a subset, < 60 s
    python benchmarks/bench_unizero_kv.py --device cuda

Workload: one full lzlite.mcts.search (PUCT, C++ tree, Dirichlet noise) per repeat from B random
tic-tac-toe-shaped observations with UniZeroModel's default config (E=64, 2 layers, 2 heads) and
random non-zero heads; "ctx" is the root context in tokens (2 * history + 1). ms/sim = wall time of
the search (adapter.initial included) / S, median over repeats; ratio = no-cache / cache. The
"depth" column is the deepest node of the cached run (the path length a leaf gathers).
"""
from __future__ import annotations

import argparse
import statistics
import time

import numpy as np
import torch

from lzlite.mcts import default_config, search
from lzlite.mcts.unizero_adapter import UniZeroAdapter
from lzlite.model.unizero import UniZeroModel


def build_model(device: str) -> UniZeroModel:
    torch.manual_seed(0)
    cfg = UniZeroModel.default_config()
    cfg.update(last_linear_layer_init_zero=False, max_tokens=2 * (8 + 50) + 1)
    return UniZeroModel(**cfg).to(device).eval()


def time_search(model: UniZeroModel, B: int, S: int, history: int, use_kv: bool, repeats: int,
                device: str) -> tuple[float, int]:
    g = torch.Generator().manual_seed(1)
    obs = torch.rand(B, 3, 3, 3, generator=g).to(device)
    hist = None
    if history:
        hist = (torch.rand(B, history, 3, 3, 3, generator=g).to(device),
                torch.randint(0, 9, (B, history), generator=g).to(device))
    cfg = default_config()
    cfg.update(num_simulations=S, backend="c")
    adapter = UniZeroAdapter(model, device=device, use_kv_cache=use_kv)
    times = []
    for r in range(repeats + 1):   # the first run warms up allocations and is dropped
        if device.startswith("cuda"):
            torch.cuda.synchronize()
        t0 = time.perf_counter()
        adapter.prepare(B, S + 1)
        root = adapter.initial(obs, history=hist)
        search(adapter, root, cfg, np.random.default_rng(r))
        if device.startswith("cuda"):
            torch.cuda.synchronize()
        if r:
            times.append(time.perf_counter() - t0)
    return 1e3 * statistics.median(times) / S, int(adapter.depth.max())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="a subset of the grid, < 60 s")
    parser.add_argument("--repeats", type=int, default=None, help="timed searches per cell (default 5, quick 2)")
    parser.add_argument("--device", default="cpu", help="torch device")
    parser.add_argument("--threads", type=int, default=1, help="torch intra-op threads on CPU")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    repeats = args.repeats or (2 if args.quick else 5)
    grid_b, grid_s, grid_h = ((8, 64), (25,), (0, 8)) if args.quick else ((8, 64), (25, 50), (0, 8))
    model = build_model(args.device)
    print(f"device={args.device} threads={args.threads} repeats={repeats} (median) model: E={model.embed_dim} "
          f"L={model.transformer.num_layers} H={model.transformer.num_heads}")
    print(f"{'B':>4} {'S':>4} {'ctx':>4} {'depth':>5} {'cache ms/sim':>13} {'full ms/sim':>12} {'ratio':>6}")
    with torch.inference_mode():
        for B in grid_b:
            for S in grid_s:
                for h in grid_h:
                    kv, depth = time_search(model, B, S, h, True, repeats, args.device)
                    full, _ = time_search(model, B, S, h, False, repeats, args.device)
                    print(f"{B:>4} {S:>4} {2 * h + 1:>4} {depth:>5} {kv:>13.3f} {full:>12.3f} {full / kv:>6.2f}",
                          flush=True)


if __name__ == "__main__":
    main()
