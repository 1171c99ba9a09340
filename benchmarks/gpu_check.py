"""Single-GPU check: a short tic-tac-toe MuZero run on CUDA, then learner steps/s and self-play positions/s.

    python benchmarks/gpu_check.py                 # cuda (exit 77 when no GPU is visible)
    python benchmarks/gpu_check.py --device cpu    # the same measurement on CPU, for a side-by-side

Prints the torch / CUDA build first so a failure on a lent machine is easy to place. Stages:
1. end to end: ``train_muzero`` with the device set (collect -> learn -> eval -> checkpoint) for a
   small env-step budget, which proves the whole loop runs on the device;
2. self-play: ``collector.collect()`` rounds timed, positions (transitions) per second;
3. learner: ``learner.train`` steps on a filled buffer, timed with device synchronisation.
Every figure is the median of the timed repeats (the first, warm-up round is not timed).
"""
from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import tempfile
import time

EXIT_NO_GPU = 77  # the "skipped" exit code of autotools/ctest: nothing was checked


def _print_environment() -> bool:
    import numpy as np
    import torch

    print(f"python {platform.python_version()}  numpy {np.__version__}  torch {torch.__version__}  "
          f"(built for CUDA {torch.version.cuda})")
    print(f"cuda available: {torch.cuda.is_available()}  devices: {torch.cuda.device_count()}  "
          f"cpu threads: {torch.get_num_threads()}  cpus: {os.cpu_count()}")
    if not torch.cuda.is_available():
        return False
    for i in range(torch.cuda.device_count()):
        p = torch.cuda.get_device_properties(i)
        print(f"  cuda:{i} {p.name}  capability {p.major}.{p.minor}  memory {p.total_memory / 2**30:.1f} GiB")
    try:
        nccl = ".".join(map(str, torch.cuda.nccl.version()))
    except Exception as e:  # some builds ship without NCCL; only DDP on GPUs needs it
        nccl = f"unavailable ({type(e).__name__})"
    print(f"cudnn {torch.backends.cudnn.version()}  nccl {nccl}")
    return True


def _config(device: str, batch_size: int):
    from lzlite.config import compile_config, load_config_file

    here = os.path.dirname(os.path.abspath(__file__))
    main, create = load_config_file(os.path.join(here, "..", "zoo", "tictactoe", "muzero_config.py"))
    main["policy"].update(device=device, batch_size=batch_size, eval_freq=10**9, save_ckpt_freq=10**9,
                          eval_episodes=4, eval_bots=["random"], eval_optimal_move_rate=False)
    return main, create, compile_config(main, create, seed=0)


def _sync(device: str) -> None:
    import torch

    if device.startswith("cuda"):
        torch.cuda.synchronize()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--device", default="cuda", help="torch device (default cuda)")
    ap.add_argument("--batch-size", type=int, default=256, help="learner minibatch (default: the config's 256)")
    ap.add_argument("--collect-rounds", type=int, default=3, help="timed collect rounds (32 games each)")
    ap.add_argument("--learner-steps", type=int, default=200, help="timed learner steps (x 3 repeats)")
    ap.add_argument("--e2e-env-steps", type=int, default=600, help="env-step budget of the end-to-end run")
    args = ap.parse_args()

    import numpy as np
    import torch

    has_gpu = _print_environment()
    if args.device.startswith("cuda") and not has_gpu:
        print(f"gpu_check: SKIPPED: no CUDA device visible to torch {torch.__version__} "
              f"(CUDA build: {torch.version.cuda}); run with --device cpu for the CPU figures", flush=True)
        return EXIT_NO_GPU
    try:
        import lzlite.mcts.ctree  # noqa: F401  the native search tree must be built
        import zoo._zoo  # noqa: F401
    except ImportError as e:
        print(f"gpu_check: native extensions missing ({e}); build them with "
              f"`python setup.py build_ext --inplace -q` in the repository root", flush=True)
        return 2

    from lzlite.entry import train_muzero
    from lzlite.entry.loop import build_components
    from lzlite.worker.learner import Learner

    device = args.device
    main_cfg, create_cfg, cfg = _config(device, args.batch_size)
    torch.set_num_threads(max(1, cfg.policy.num_threads))

    # 1. end to end through the public entry function
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory() as run_dir:
        policy = train_muzero([main_cfg, create_cfg], seed=0, max_env_step=args.e2e_env_steps, run_dir=run_dir,
                              progress=False)
        assert os.path.isfile(os.path.join(run_dir, "ckpt", "last.pt")), "no checkpoint written"
    e2e_s = time.perf_counter() - t0
    dev_of_model = next(policy.model.parameters()).device
    print(f"end-to-end train_muzero: {args.e2e_env_steps} env steps in {e2e_s:.1f} s on {dev_of_model}  "
          f"(final eval vs random: {policy.final_eval.get('random/win', float('nan')):.2f} win)", flush=True)

    # 2. self-play positions per second (search + network on the device)
    parts = build_components(cfg)
    collector, buffer, policy = parts["collector"], parts["buffer"], parts["policy"]
    segments, _ = collector.collect()  # warm-up: CUDA context, kernels, allocator
    buffer.push_segments(segments)
    rates = []
    for _ in range(args.collect_rounds):
        _sync(device)
        t0 = time.perf_counter()
        segments, _ = collector.collect()
        _sync(device)
        rates.append(sum(len(s) for s in segments) / (time.perf_counter() - t0))
        buffer.push_segments(segments)
    sp = statistics.median(rates)
    print(f"self-play: {sp:.0f} positions/s  (median of {len(rates)} rounds of {cfg.policy.n_episode} games, "
          f"{cfg.policy.num_simulations} simulations, batch {cfg.policy.collector_env_num} roots)", flush=True)

    # 3. learner steps per second on the filled buffer
    while buffer.num_transitions < args.batch_size:
        buffer.push_segments(collector.collect()[0])
    learner = Learner(policy, cfg.policy)
    rng = np.random.default_rng(0)
    batches = [buffer.sample(args.batch_size, rng) for _ in range(8)]  # sampling is not what is timed
    for b in batches:
        learner.train(b)  # warm-up
    step_rates = []
    for _ in range(3):
        _sync(device)
        t0 = time.perf_counter()
        for i in range(args.learner_steps):
            learner.train(batches[i % len(batches)])
        _sync(device)
        step_rates.append(args.learner_steps / (time.perf_counter() - t0))
    ls = statistics.median(step_rates)
    print(f"learner: {ls:.1f} steps/s  (median of 3 x {args.learner_steps} steps, batch {args.batch_size}, "
          f"unroll {cfg.policy.num_unroll_steps}; {ls * args.batch_size:.0f} samples/s)", flush=True)
    if device.startswith("cuda"):
        print(f"peak cuda memory: {torch.cuda.max_memory_allocated() / 2**20:.0f} MiB")
    print(f"RESULT device={device} selfplay_positions_per_s={sp:.0f} learner_steps_per_s={ls:.1f} "
          f"e2e_s={e2e_s:.1f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
