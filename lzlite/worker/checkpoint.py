"""Checkpoints: written atomically, loaded with ``weights_only=True`` (never unpickled blindly)."""
from __future__ import annotations

import os
import zipfile
from typing import Any, Dict

import torch

__all__ = ["CheckpointError", "save_checkpoint", "load_checkpoint", "load_policy_weights", "latest_checkpoint",
           "remove_stale_temp_files"]

FORMAT_VERSION = 1


class CheckpointError(RuntimeError):
    """A missing, corrupt or mismatched checkpoint."""


def save_checkpoint(path: str, state: Dict[str, Any]) -> None:
    """Write ``state`` (tensors, numbers, strings, lists, dicts only) to ``path`` atomically.

    The file is written to a temporary name in the same directory, flushed to disk and renamed over
    the target, so a crash leaves either the old checkpoint or the new one, never half of one.
    """
    os.makedirs(os.path.dirname(os.path.abspath(path)) or ".", exist_ok=True)
    tmp = f"{path}.tmp.{os.getpid()}"
    payload = dict(state, lzlite_checkpoint_version=FORMAT_VERSION)
    with open(tmp, "wb") as f:
        torch.save(payload, f)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


def load_checkpoint(path: str, map_location: Any = "cpu") -> Dict[str, Any]:
    """Load a checkpoint written by ``save_checkpoint``; clear errors for missing or corrupt files."""
    if not os.path.isfile(path):
        raise CheckpointError(f"checkpoint not found: '{path}'")
    if not zipfile.is_zipfile(path):
        raise CheckpointError(f"checkpoint '{path}' is corrupt or not a torch checkpoint (not a zip archive)")
    try:
        state = torch.load(path, map_location=map_location, weights_only=True)
    except (RuntimeError, EOFError, zipfile.BadZipFile, ValueError, OSError) as e:
        raise CheckpointError(
            f"checkpoint '{path}' is corrupt or not a torch checkpoint ({type(e).__name__}: {str(e)[:200]})"
        ) from None
    except Exception as e:  # weights_only rejects pickled objects with an UnpicklingError
        raise CheckpointError(f"checkpoint '{path}' holds objects that are not plain data ({str(e)[:200]})") from None
    if not isinstance(state, dict) or state.get("lzlite_checkpoint_version") != FORMAT_VERSION:
        raise CheckpointError(f"'{path}' is not an lzlite checkpoint (format version {FORMAT_VERSION} expected)")
    return state


def load_policy_weights(policy: Any, path: str, config: str) -> Dict[str, Any]:
    """Load the checkpoint at ``path`` and put its policy weights into ``policy``; returns the checkpoint.

    Args:
        policy: a lzlite Policy built from ``config``.
        path: a checkpoint written by training (``ckpt/last.pt``, ``ckpt/iteration_<N>.pt``, ``ckpt/best.pt``).
        config: the config in words, for the message (``"config 'runs/x/config.py'"``).
    Raises:
        CheckpointError: a missing or corrupt file, one without policy weights, or weights of another network (a
            checkpoint of another game or model shape): one line naming the checkpoint, the config and the first
            mismatching parameter with both shapes, instead of torch's pages of missing and unexpected keys.
    """
    state = load_checkpoint(path)
    weights = state.get("policy")
    if not isinstance(weights, dict) or not isinstance(weights.get("model"), dict):
        raise CheckpointError(f"checkpoint '{path}' holds no policy weights (expected a 'policy' entry written by "
                              f"lzlite training)")
    try:
        policy.load_state_dict(weights)
    except (RuntimeError, KeyError, ValueError) as e:
        model = policy.state_dict()["model"]
        raise CheckpointError(
            f"checkpoint '{path}' does not match the model of {config} ({type(policy.model).__name__} of "
            f"{type(policy).__name__}): {mismatch_summary(model, weights['model'], e)}; pass the config the "
            f"checkpoint was trained with (runs/<exp_name>/config.py)") from None
    return state


def mismatch_summary(expected: Dict[str, Any], found: Dict[str, Any], error: Exception) -> str:
    """One line on how two state dicts differ (``load_state_dict``'s message is pages long): the first parameter of
    another shape with both shapes, then the first missing and the first unexpected one, each with its count."""
    shapes = [f"{k}: checkpoint {tuple(found[k].shape)} vs model {tuple(v.shape)}" for k, v in expected.items()
              if k in found and hasattr(found[k], "shape") and tuple(found[k].shape) != tuple(v.shape)]
    missing = [k for k in expected if k not in found]
    unexpected = [k for k in found if k not in expected]
    parts = []
    if shapes:
        parts.append(f"{len(shapes)} weights differ in shape (first {shapes[0]})")
    if missing:
        parts.append(f"{len(missing)} weights of the model are missing (first {missing[0]})")
    if unexpected:
        parts.append(f"{len(unexpected)} weights are not the model's (first {unexpected[0]})")
    return ", ".join(parts) if parts else " ".join(str(error).split())[:200]


def remove_stale_temp_files(ckpt_dir: str) -> int:
    """Delete the ``*.pt.tmp.<pid>`` files a kill during ``save_checkpoint`` left in ``ckpt_dir``; their count.

    Called when a run starts, so no other writer of this run is alive (only rank 0 writes checkpoints).
    """
    if not os.path.isdir(ckpt_dir):
        return 0
    stale = [name for name in os.listdir(ckpt_dir) if ".pt.tmp." in name]
    for name in stale:
        os.remove(os.path.join(ckpt_dir, name))
    return len(stale)


def latest_checkpoint(ckpt_dir: str) -> str:
    """Path of ``ckpt_dir/last.pt``; CheckpointError when there is none."""
    path = os.path.join(ckpt_dir, "last.pt")
    if not os.path.isfile(path):
        raise CheckpointError(f"--resume: no checkpoint in '{ckpt_dir}' (expected {path})")
    return path
