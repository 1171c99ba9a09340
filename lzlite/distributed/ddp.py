"""Data-parallel learner support read from torchrun's environment (RANK, WORLD_SIZE, LOCAL_RANK).

This module owns: validating the launch, initialising the process group (nccl on GPU, gloo on CPU),
the device of each local rank, the collective helpers the training loop uses to keep ranks in
lockstep, and wrapping a policy's loss in DistributedDataParallel. Without torchrun every helper is a
no-op, so the same code and config run single-process.

Settings come from the environment, never from a separate config file (../../shared/STYLE.md, 14):

- ``LZLITE_DDP_BACKEND``: 'gloo' or 'nccl' (default: nccl when the policy runs on CUDA, else gloo).
- ``LZLITE_DDP_TIMEOUT_S``: seconds any collective may wait for the other ranks before this rank
  raises (default 600). A rank that dies or hangs therefore stops the others within this bound.
"""
from __future__ import annotations

import contextlib
import datetime
import os
from typing import Any, Callable, Dict, Iterator, Mapping, Optional, Union

import numpy as np
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel

from lzlite.config import ConfigError

__all__ = [
    "DistributedError", "launched_by_torchrun", "is_ddp_enabled", "get_rank", "get_world_size",
    "get_local_rank", "ddp_timeout_s", "check_launch", "setup_ddp", "teardown_ddp", "wrap_model",
    "wrap_loss", "collective", "ddp_synchronize", "ddp_all_reduce_sum", "ddp_all_reduce_mean", "ddp_all_true",
]

Number = Union[int, float]

DEFAULT_TIMEOUT_S = 600.0
_BACKENDS = ("gloo", "nccl")
_TORCHRUN_VARS = ("RANK", "WORLD_SIZE", "LOCAL_RANK", "MASTER_ADDR", "MASTER_PORT")
_DDP_ONLY_VARS = ("LZLITE_DDP_BACKEND", "LZLITE_DDP_TIMEOUT_S")


class DistributedError(RuntimeError):
    """A collective failed: another rank died, hung past the timeout, or the group is misconfigured."""


# --------------------------------------------------------------------------- environment
def launched_by_torchrun() -> bool:
    """True when torchrun (or an equivalent launcher) set WORLD_SIZE, whatever its value."""
    return "WORLD_SIZE" in os.environ


def _env_int(name: str, default: int) -> int:
    raw = os.environ.get(name)
    if raw is None or raw == "":
        return default
    try:
        return int(raw)
    except ValueError:
        raise ConfigError(f"environment variable {name}={raw!r} must be an integer (torchrun sets it)") from None


def is_ddp_enabled() -> bool:
    """True when launched by torchrun with more than one process."""
    return _env_int("WORLD_SIZE", 1) > 1


def get_rank() -> int:
    """Global rank of this process (0 without DDP)."""
    if dist.is_available() and dist.is_initialized():
        return dist.get_rank()
    return _env_int("RANK", 0)


def get_world_size() -> int:
    """Number of processes in the job (1 without DDP)."""
    if dist.is_available() and dist.is_initialized():
        return dist.get_world_size()
    return _env_int("WORLD_SIZE", 1)


def get_local_rank() -> int:
    """Rank of this process on its machine (selects the CUDA device)."""
    return _env_int("LOCAL_RANK", 0)


def ddp_timeout_s() -> float:
    """The collective timeout: ``LZLITE_DDP_TIMEOUT_S`` or 600 seconds."""
    raw = os.environ.get("LZLITE_DDP_TIMEOUT_S", "")
    if raw == "":
        return DEFAULT_TIMEOUT_S
    try:
        value = float(raw)
    except ValueError:
        value = -1.0
    if not value > 0:
        raise ConfigError(f"LZLITE_DDP_TIMEOUT_S={raw!r} must be a positive number of seconds, e.g. 600")
    return value


def check_launch(batch_size: Optional[int] = None) -> None:
    """Reject a bad launch before any work is done.

    Raises ConfigError when a DDP-only setting is given without torchrun, torchrun's environment is
    incomplete or inconsistent, or ``batch_size`` (the global minibatch) does not split evenly across
    the ranks.
    """
    if not launched_by_torchrun():
        given = [name for name in _DDP_ONLY_VARS if os.environ.get(name)]
        if given:
            raise ConfigError(
                f"{', '.join(given)} set but this process was not launched by torchrun (WORLD_SIZE is unset); "
                f"launch with `torchrun --nproc_per_node=K -m lzlite.entry --cfg FILE` or unset {given[0]}"
            )
        return
    world, rank, local = _env_int("WORLD_SIZE", 1), _env_int("RANK", 0), _env_int("LOCAL_RANK", 0)
    if world < 1 or not 0 <= rank < world or local < 0:
        raise ConfigError(f"inconsistent torchrun environment RANK={rank} LOCAL_RANK={local} WORLD_SIZE={world}: "
                          f"expected 0 <= RANK < WORLD_SIZE and LOCAL_RANK >= 0")
    if world > 1:
        missing = [name for name in _TORCHRUN_VARS if name not in os.environ]
        if missing:
            raise ConfigError(f"WORLD_SIZE={world} but {', '.join(missing)} unset; launch with torchrun, which sets "
                              f"all of {', '.join(_TORCHRUN_VARS)}")
    backend = os.environ.get("LZLITE_DDP_BACKEND", "")
    if backend and backend not in _BACKENDS:
        raise ConfigError(f"LZLITE_DDP_BACKEND={backend!r} must be one of {list(_BACKENDS)} (or unset for automatic)")
    ddp_timeout_s()  # validates LZLITE_DDP_TIMEOUT_S
    if batch_size is not None and (batch_size < world or batch_size % world):
        raise ConfigError(
            f"policy.batch_size={batch_size} must be a positive multiple of the world size {world} (each rank "
            f"samples batch_size / world_size); use e.g. batch_size={max(1, round(batch_size / world)) * world} "
            f"or --nproc_per_node dividing {batch_size}"
        )


# --------------------------------------------------------------------------- group lifetime
def _wants_cuda(cfg: Any) -> bool:
    if cfg is None:
        return False
    device = str(cfg.policy.device)
    if device == "auto":
        return bool(cfg.policy.cuda) and torch.cuda.is_available()
    return device.startswith("cuda")


def setup_ddp(cfg: Any = None, backend: str = "", timeout_s: Optional[float] = None) -> bool:
    """Initialise the process group from torchrun's environment and pick this rank's device.

    On CUDA the local rank's GPU becomes the current device and ``cfg.policy.device`` is set to it,
    so every rank of a machine trains on its own GPU from the same config.

    Args:
        cfg: the compiled config (``cfg.policy.device`` / ``cuda`` are read and updated); None: CPU.
        backend: 'gloo' or 'nccl'; default ``LZLITE_DDP_BACKEND``, else nccl on CUDA and gloo on CPU.
        timeout_s: collective timeout; default ``ddp_timeout_s()``.

    Returns:
        True when this call created the group (the caller then owns ``teardown_ddp``).
    """
    check_launch()
    if dist.is_initialized():
        return False
    use_cuda = _wants_cuda(cfg)
    if use_cuda:
        local = get_local_rank()
        if not torch.cuda.is_available() or local >= torch.cuda.device_count():
            raise ConfigError(
                f"LOCAL_RANK={local} needs CUDA device {local} but {torch.cuda.device_count()} are visible; "
                f"use --nproc_per_node <= the GPU count or --device cpu"
            )
        torch.cuda.set_device(local)
        cfg.policy.device = f"cuda:{local}"
    backend = backend or os.environ.get("LZLITE_DDP_BACKEND") or ("nccl" if use_cuda else "gloo")
    if backend == "nccl" and not use_cuda:
        raise ConfigError("LZLITE_DDP_BACKEND=nccl needs the policy on CUDA (policy.device='cuda' or --device cuda); "
                          "use gloo for CPU training")
    timeout = float(timeout_s if timeout_s is not None else ddp_timeout_s())
    kwargs: Dict[str, Any] = dict(backend=backend, timeout=datetime.timedelta(seconds=timeout))
    if use_cuda:
        kwargs["device_id"] = torch.device("cuda", get_local_rank())  # binds NCCL to this rank's GPU eagerly
    try:
        dist.init_process_group(**kwargs)
    except (RuntimeError, TimeoutError) as e:  # a peer that never arrives, or an unreachable MASTER_ADDR
        raise _fail("init_process_group", e) from None
    return True


def teardown_ddp() -> None:
    """Destroy the process group (no-op when none exists)."""
    if dist.is_available() and dist.is_initialized():
        dist.destroy_process_group()


# --------------------------------------------------------------------------- models
def wrap_model(model: torch.nn.Module, find_unused_parameters: bool = False) -> torch.nn.Module:
    """Wrap a model whose training forward is ``model(...)`` in DistributedDataParallel.

    Construction broadcasts rank 0's parameters and buffers, so every rank starts identical.
    Models trained through other methods (MuZero's ``initial_inference`` / ``recurrent_inference``)
    need ``wrap_loss`` instead: DDP only reduces gradients of work done inside its own forward.
    """
    device = next(model.parameters()).device
    with collective("DistributedDataParallel setup"):  # construction broadcasts rank 0's weights
        return DistributedDataParallel(model, device_ids=[device.index] if device.type == "cuda" else None,
                                       find_unused_parameters=find_unused_parameters)


class _LossModule(torch.nn.Module):
    """A module whose forward is a policy's whole loss, so one learner step is one DDP forward.

    The model is its only submodule (DDP syncs and reduces exactly the model's parameters); the loss
    function may call any method of the model, any number of times (a MuZero unroll), and may
    leave parameters unused (projection heads with the consistency loss off).
    """

    def __init__(self, model: torch.nn.Module, loss_fn: Callable[[Any], Any]) -> None:
        super().__init__()
        self.model = model
        self._loss_fn = loss_fn

    def forward(self, batch: Any) -> Any:
        return self._loss_fn(batch)


def wrap_loss(model: torch.nn.Module, loss_fn: Callable[[Any], Any]) -> Callable[[Any], Any]:
    """``loss_fn`` run as the forward of a DistributedDataParallel module owning ``model``.

    The returned callable has ``loss_fn``'s signature; its backward averages the gradients of
    ``model``'s parameters over all ranks. Construction broadcasts rank 0's parameters and buffers
    to every rank (so copy the target network after calling it).

    Args:
        model: the network ``loss_fn`` trains (stays unwrapped everywhere else: search, state_dict).
        loss_fn: batch -> (scalar loss tensor, ...); the policy's ``compute_loss``.
    """
    device = next(model.parameters()).device
    # find_unused_parameters: one loss may not touch every parameter (e.g. projection heads when
    # ssl_loss_weight is 0); DDP must then mark them ready itself or the next step would hang.
    with collective("DistributedDataParallel setup"):  # construction broadcasts rank 0's weights
        return DistributedDataParallel(_LossModule(model, loss_fn),
                                       device_ids=[device.index] if device.type == "cuda" else None,
                                       find_unused_parameters=True)


# --------------------------------------------------------------------------- collectives
def _initialised() -> bool:
    return dist.is_available() and dist.is_initialized()


def _collective_device() -> torch.device:
    # NCCL reduces only CUDA tensors on the rank's own device; gloo reduces CPU tensors.
    if dist.get_backend() == "nccl":
        return torch.device("cuda", torch.cuda.current_device())
    return torch.device("cpu")


def _fail(op: str, err: Exception) -> DistributedError:
    return DistributedError(
        f"rank {get_rank()}/{get_world_size()}: {op} failed ({type(err).__name__}: {str(err)[:300]}). Another rank "
        f"probably died or hung past the {ddp_timeout_s():g} s timeout (LZLITE_DDP_TIMEOUT_S); its output names the cause"
    )


# Text by which the backends' failures are known: gloo and NCCL raise plain RuntimeErrors on older torch.
_BACKEND_ERROR_MARKS = ("gloo", "nccl", "connection closed", "connection reset", "timed out", "timeout")


def _is_backend_error(err: BaseException) -> bool:
    backend_error = getattr(dist, "DistBackendError", None)
    if backend_error is not None and isinstance(err, backend_error):
        return True
    text = str(err).lower()
    return any(mark in text for mark in _BACKEND_ERROR_MARKS)


@contextlib.contextmanager
def collective(op: str) -> Iterator[None]:
    """Turn a backend failure raised inside the block into ``DistributedError`` naming ``op``.

    For collectives that torch runs on lzlite's behalf: DDP's gradient all-reduce inside
    ``loss.backward()`` and the weight broadcast of its construction. Other errors pass through, and
    without a process group the block runs unchanged.
    """
    try:
        yield
    except RuntimeError as e:
        if _initialised() and _is_backend_error(e):
            raise _fail(op, e) from None
        raise


def ddp_synchronize() -> None:
    """Barrier across ranks (no-op without DDP); raises DistributedError after the timeout."""
    if not _initialised():
        return
    try:
        # an all-reduce rather than dist.barrier(): it honours the group timeout on every backend
        # and needs no device guess on nccl
        t = torch.zeros(1, device=_collective_device())
        dist.all_reduce(t)
    except RuntimeError as e:
        raise _fail("barrier", e) from None


def _reduce_tensor(x: torch.Tensor, op: Any, name: str) -> torch.Tensor:
    device = _collective_device()
    y = x.detach().to(device=device, copy=True)
    try:
        dist.all_reduce(y, op=op)
    except RuntimeError as e:
        raise _fail(name, e) from None
    return y.to(x.device)


def ddp_all_reduce_sum(x: Union[torch.Tensor, Number]) -> Union[torch.Tensor, Number]:
    """Sum over ranks of a tensor (any device; a new tensor on ``x``'s device) or a number.

    Without DDP the input comes back unchanged. Ints stay exact (int64); floats use float64.
    """
    if not _initialised():
        return x
    if isinstance(x, torch.Tensor):
        return _reduce_tensor(x, dist.ReduceOp.SUM, "all_reduce_sum")
    is_int = isinstance(x, (int, np.integer, np.bool_))
    t = torch.tensor([x], dtype=torch.int64 if is_int else torch.float64)
    s = _reduce_tensor(t, dist.ReduceOp.SUM, "all_reduce_sum")
    return int(s.item()) if is_int else float(s.item())


def ddp_all_reduce_mean(
    x: Union[torch.Tensor, Number, Mapping[str, Number]],
) -> Union[torch.Tensor, float, Dict[str, float]]:
    """Mean over ranks, for logged statistics: a tensor (float result), a number, or a dict of numbers.

    A dict is reduced in one collective; every rank must pass the same keys.
    """
    n = get_world_size()
    if isinstance(x, Mapping):
        if not x or not _initialised():
            return {k: float(v) for k, v in x.items()}
        keys = sorted(x)
        s = _reduce_tensor(torch.tensor([float(x[k]) for k in keys], dtype=torch.float64), dist.ReduceOp.SUM,
                           "all_reduce_mean")
        return {k: float(v) / n for k, v in zip(keys, s.tolist())}
    if isinstance(x, torch.Tensor):
        x = x if x.is_floating_point() else x.double()
        return ddp_all_reduce_sum(x) / n
    return float(ddp_all_reduce_sum(float(x))) / n


def ddp_all_true(flag: bool) -> bool:
    """True only when ``flag`` is true on every rank (one MIN all-reduce; ``flag`` without DDP)."""
    if not _initialised():
        return bool(flag)
    t = _reduce_tensor(torch.tensor([int(bool(flag))], dtype=torch.int64), dist.ReduceOp.MIN, "all_reduce_min")
    return bool(t.item())
