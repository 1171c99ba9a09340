"""One rank of a multi-process test: ``python ddp_worker.py SCENARIO OUT_DIR`` under a DDP environment.

Each scenario writes ``OUT_DIR/rank<r>.json`` (or a .pt file); the tests in test_ddp.py launch the
ranks and compare what they wrote. Kept apart from the tests so pytest never imports torch.distributed
state into its own process.
"""
from __future__ import annotations

import json
import os
import sys
import time

import numpy as np
import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "entry"))  # tiny_configs

from lzlite.distributed import ddp  # noqa: E402


def _write(out_dir: str, payload: dict) -> None:
    with open(os.path.join(out_dir, f"rank{ddp.get_rank()}.json"), "w") as f:
        json.dump(payload, f)


def scenario_utils(out_dir: str) -> None:
    """Every collective helper, with values that differ per rank."""
    from lzlite.entry.utils import calculate_update_per_collect

    assert ddp.setup_ddp() is True
    rank, world = ddp.get_rank(), ddp.get_world_size()
    tensor_sum = ddp.ddp_all_reduce_sum(torch.tensor([1.0, 2.0]) * (rank + 1))
    # ranks collect 12 and 28 transitions: both must take ceil(40 * 0.25) = 10 steps
    counts = [12, 28]
    upc = calculate_update_per_collect({"policy": {"update_per_collect": None, "replay_ratio": 0.25}},
                                       counts[rank], world)
    upc_local = calculate_update_per_collect({"policy": {"update_per_collect": None, "replay_ratio": 0.25}},
                                             counts[rank], 1)
    ddp.ddp_synchronize()
    _write(out_dir, dict(
        rank=rank, world=world, local_rank=ddp.get_local_rank(), enabled=ddp.is_ddp_enabled(),
        int_sum=ddp.ddp_all_reduce_sum(rank + 3), int_type=type(ddp.ddp_all_reduce_sum(rank + 3)).__name__,
        big_int_sum=ddp.ddp_all_reduce_sum(2**53 + 1 + rank),
        float_sum=ddp.ddp_all_reduce_sum(0.5 * (rank + 1)),
        np_int_sum=ddp.ddp_all_reduce_sum(np.int64(10 * (rank + 1))),
        tensor_sum=tensor_sum.tolist(), tensor_dtype=str(tensor_sum.dtype),
        input_unchanged=(torch.tensor([1.0]) * (rank + 1)).tolist(),
        mean=ddp.ddp_all_reduce_mean(float(rank)),
        tensor_mean=ddp.ddp_all_reduce_mean(torch.tensor([2 * rank], dtype=torch.int64)).tolist(),
        dict_mean=ddp.ddp_all_reduce_mean({"loss": 1.0 + rank, "acc": 0.5 * rank}),
        all_true_mixed=ddp.ddp_all_true(rank == 0), all_true_all=ddp.ddp_all_true(True),
        upc=upc, upc_local=upc_local,
    ))
    ddp.teardown_ddp()


def scenario_learner(out_dir: str) -> None:
    """Ranks with different data take 4 DDP learner steps per algorithm (argv[3:]): parameters must end bit-identical."""
    ddp.setup_ddp()
    for algo in sys.argv[3:]:
        _learner_steps(out_dir, algo)
    ddp.teardown_ddp()


def _learner_steps(out_dir: str, algo: str) -> None:
    from tiny_configs import tiny_config

    from lzlite.config import compile_config
    from lzlite.entry.loop import build_components
    from lzlite.entry.utils import set_global_seed
    from lzlite.worker.learner import Learner

    cfg = compile_config(*tiny_config(algo), seed=0)
    rank = ddp.get_rank()
    cfg.seed += rank  # as the training loop does: different games and a different initialisation per rank
    set_global_seed(cfg.seed)
    torch.set_num_threads(1)
    parts = build_components(cfg)
    policy, buffer = parts["policy"], parts["buffer"]
    init = [p.detach().clone() for p in policy.model.parameters()]
    segments, _ = parts["collector"].collect()
    buffer.push_segments(segments)
    learner = Learner(policy, cfg.policy)
    learner.compute_loss = ddp.wrap_loss(policy.model, policy.compute_loss)
    policy.update_target()
    after_wrap_differs = any(not torch.equal(a, p) for a, p in zip(init, policy.model.parameters()))
    rng = np.random.default_rng([cfg.seed, 2])
    losses = []
    for _ in range(4):
        batch = buffer.sample(cfg.policy.batch_size // ddp.get_world_size(), rng)
        losses.append(learner.train(batch)["loss"])
    torch.save(dict(params=[p.detach() for p in policy.model.parameters()],
                    target=[p.detach() for p in policy.target_model.parameters()]),
               os.path.join(out_dir, f"{algo}_rank{rank}.pt"))
    data = np.concatenate([s.freeze().action for s in segments])
    with open(os.path.join(out_dir, f"{algo}_rank{rank}.json"), "w") as f:
        json.dump(dict(losses=losses, train_iter=learner.train_iter, after_wrap_differs=after_wrap_differs,
                       data_fingerprint=[int(len(data)), int(data.sum())]), f)


def scenario_hang(out_dir: str) -> None:
    """Rank 1 stops taking part after init (hung or killed); rank 0's next collective must fail fast."""
    ddp.setup_ddp()
    rank = ddp.get_rank()
    ddp.ddp_synchronize()
    with open(os.path.join(out_dir, f"ready{rank}"), "w"):
        pass
    if rank == 1:
        time.sleep(600)  # the test kills us, or the timeout of rank 0 ends the run
    t0 = time.monotonic()
    try:
        ddp.ddp_all_reduce_sum(1)
    except ddp.DistributedError as e:
        _write(out_dir, dict(error=str(e), waited_s=time.monotonic() - t0))
        sys.stdout.flush()
        os._exit(3)  # a process group whose collective timed out can abort in its C++ teardown
    _write(out_dir, dict(error=None))


def scenario_peer_dies(out_dir: str) -> None:
    """Rank 1 exits at the place argv[3] names; rank 0 must fail there with a DistributedError, not gloo's traceback.

    'setup': before DistributedDataParallel's construction (its weight broadcast); 'backward': after it, so rank 0's
    first learner step waits on DDP's collectives (the buffer broadcast of its forward, the gradient all-reduce).
    """
    from tiny_configs import tiny_config

    from lzlite.config import compile_config
    from lzlite.entry.loop import build_components
    from lzlite.worker.learner import Learner

    where = sys.argv[3]
    ddp.setup_ddp()
    rank = ddp.get_rank()
    cfg = compile_config(*tiny_config("muzero"), seed=rank)
    torch.set_num_threads(1)
    parts = build_components(cfg)
    policy, buffer = parts["policy"], parts["buffer"]
    buffer.push_segments(parts["collector"].collect()[0])
    learner = Learner(policy, cfg.policy)
    ddp.ddp_synchronize()
    if rank == 1 and where == "setup":
        os._exit(0)
    try:
        if rank == 0 and where == "setup":
            time.sleep(1.0)  # let the peer's exit close its connections first
        learner.compute_loss = ddp.wrap_loss(policy.model, policy.compute_loss)
        if rank == 1:
            os._exit(0)
        time.sleep(1.0)
        learner.train(buffer.sample(cfg.policy.batch_size // ddp.get_world_size(), np.random.default_rng(0)))
    except ddp.DistributedError as e:
        _write(out_dir, dict(error=str(e)))
        sys.stdout.flush()
        os._exit(3)
    _write(out_dir, dict(error=None))


if __name__ == "__main__":
    globals()[f"scenario_{sys.argv[1]}"](sys.argv[2])
