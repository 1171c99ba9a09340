"""Checkpoints: written atomically, loaded with ``weights_only=True`` (never unpickled blindly)."""
from __future__ import annotations

import os
import zipfile
from typing import Any, Dict

import torch

__all__ = ["CheckpointError", "save_checkpoint", "load_checkpoint", "latest_checkpoint", "remove_stale_temp_files"]

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
