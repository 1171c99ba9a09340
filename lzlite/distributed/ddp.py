"""DDP utilities read from torchrun's environment (RANK, WORLD_SIZE, LOCAL_RANK)."""
from __future__ import annotations

import datetime
import os
from typing import Any, Union

import torch
import torch.distributed as dist

__all__ = ["is_ddp_enabled", "get_rank", "get_world_size", "get_local_rank", "setup_ddp", "wrap_model",
           "ddp_synchronize", "ddp_all_reduce_sum", "ddp_all_reduce_mean"]


def is_ddp_enabled() -> bool:
    """True when launched by torchrun with more than one process."""
    return int(os.environ.get("WORLD_SIZE", "1")) > 1


def get_rank() -> int:
    if dist.is_available() and dist.is_initialized():
        return dist.get_rank()
    return int(os.environ.get("RANK", "0"))


def get_world_size() -> int:
    if dist.is_available() and dist.is_initialized():
        return dist.get_world_size()
    return int(os.environ.get("WORLD_SIZE", "1"))


def get_local_rank() -> int:
    return int(os.environ.get("LOCAL_RANK", "0"))


def setup_ddp(cfg: Any = None, backend: str = "", timeout_s: float = 300.0) -> None:
    """Initialise the process group (nccl on GPU, gloo on CPU) and pick the device of the local rank."""
    if dist.is_initialized():
        return
    use_cuda = torch.cuda.is_available() and cfg is not None and str(cfg.policy.device) != "cpu" and (
        cfg.policy.cuda or str(cfg.policy.device).startswith("cuda"))
    backend = backend or os.environ.get("LZLITE_DDP_BACKEND") or ("nccl" if use_cuda else "gloo")
    if use_cuda:
        torch.cuda.set_device(get_local_rank())
        if cfg is not None:
            cfg.policy.device = f"cuda:{get_local_rank()}"
    dist.init_process_group(backend=backend, timeout=datetime.timedelta(seconds=timeout_s))


def wrap_model(model: torch.nn.Module) -> torch.nn.Module:
    """Wrap a model in DistributedDataParallel (device_ids for CUDA models)."""
    from torch.nn.parallel import DistributedDataParallel as DDP

    device = next(model.parameters()).device
    return DDP(model, device_ids=[device.index] if device.type == "cuda" else None)


def ddp_synchronize() -> None:
    """Barrier across ranks (no-op without DDP)."""
    if dist.is_available() and dist.is_initialized():
        dist.barrier()


def ddp_all_reduce_sum(x: Union[torch.Tensor, int, float]) -> Union[torch.Tensor, int, float]:
    """Sum a tensor or a number over ranks (returns the input unchanged without DDP)."""
    if not (dist.is_available() and dist.is_initialized()):
        return x
    if isinstance(x, torch.Tensor):
        y = x.clone()
        dist.all_reduce(y, op=dist.ReduceOp.SUM)
        return y
    t = torch.tensor([float(x)], dtype=torch.float64)
    dist.all_reduce(t, op=dist.ReduceOp.SUM)
    return int(t.item()) if isinstance(x, int) else float(t.item())


def ddp_all_reduce_mean(x: Union[torch.Tensor, int, float]) -> Union[torch.Tensor, float]:
    """Mean over ranks, for logged statistics."""
    s = ddp_all_reduce_sum(x)
    n = get_world_size()
    return s / n if isinstance(s, torch.Tensor) else float(s) / n
