"""Weights & Biases: the run's scalars, its resolved config and its final evaluation (``logger.wandb=True``).

Offline by default: the run is written under ``<run_dir>/wandb`` (``wandb sync`` uploads it later) unless the user
has configured a key (``WANDB_API_KEY``, or ``wandb login``'s entry in ~/.netrc), or set ``WANDB_MODE`` themselves.
The package missing, or W&B failing at any point: one warning, and the run trains on without it.
"""
from __future__ import annotations

import math
import netrc
import os
import warnings
from typing import Any, Dict, Mapping, Optional

__all__ = ["WandbSink", "wandb_mode"]


def wandb_mode() -> Optional[str]:
    """'online' when a W&B key is configured, None when the user set ``WANDB_MODE`` (W&B reads it), else 'offline'."""
    if os.environ.get("WANDB_MODE"):
        return None
    if os.environ.get("WANDB_API_KEY"):
        return "online"
    try:
        path = os.path.join(os.path.expanduser("~"), ".netrc")
        if os.path.isfile(path) and netrc.netrc(path).authenticators("api.wandb.ai"):
            return "online"
    except (OSError, netrc.NetrcParseError):
        pass
    return "offline"


def _line(e: BaseException) -> str:
    """An exception in one short line (W&B's messages run over several)."""
    text = str(e).strip().splitlines()
    return f"{type(e).__name__}: {text[0][:160] if text else ''}"


class WandbSink:
    """One W&B run for a training run (rank 0 only: the run logger makes it there alone).

    Args:
        run_dir: the run directory (W&B writes under ``run_dir/wandb``).
        project: the W&B project.
        name: the W&B run's name (the lzlite run id).
        config: the resolved config, as plain dicts.
    Attributes:
        run: the W&B run, or None when W&B is unavailable (every method is then a no-op).
        warned: the one warning given, if any.
    """

    def __init__(self, run_dir: str, project: str, name: str, config: Mapping[str, Any]) -> None:
        self.run = None
        self.warned: Optional[str] = None
        try:
            import wandb  # optional: `pip install lzlite[wandb]`
        except ImportError:
            self._warn("the wandb package is not installed (pip install 'lzlite[wandb]')")
            return
        mode = wandb_mode()
        try:
            os.makedirs(run_dir, exist_ok=True)
            self.run = self._init(wandb, run_dir, project, name, config, mode)
        except Exception as e:  # W&B's own errors (network, auth, service)
            if mode == "offline":
                self._warn(f"wandb.init failed ({_line(e)})")
                return
            try:  # no network or a bad key: keep the run's W&B log offline (``wandb sync`` uploads it later)
                self.run = self._init(wandb, run_dir, project, name, config, "offline")
                self._warn(f"wandb.init online failed ({_line(e)}); logging offline to {run_dir}/wandb", keep=True)
            except Exception as e2:
                self._warn(f"wandb.init failed ({_line(e2)})")

    @staticmethod
    def _init(wandb: Any, run_dir: str, project: str, name: str, config: Mapping[str, Any], mode: Optional[str]) -> Any:
        return wandb.init(project=project, name=name, dir=run_dir, config=dict(config), mode=mode,
                          settings=wandb.Settings(silent=True, init_timeout=20))

    def _warn(self, what: str, keep: bool = False) -> None:
        """The one warning; W&B is then off unless ``keep`` (it fell back to offline)."""
        if not keep:
            self.run = None
        if self.warned is None:
            self.warned = what
            warnings.warn(f"lzlite: logger.wandb: {what}; training goes on without W&B", RuntimeWarning, stacklevel=3)

    def log(self, data: Dict[str, float], step: int) -> None:
        """Log scalars at ``step`` (env steps, as TensorBoard's)."""
        if self.run is None:
            return
        try:
            self.run.log(data, step=int(step))
        except Exception as e:  # never let W&B stop training
            self._warn(f"log failed ({_line(e)})")

    def summary(self, stats: Mapping[str, Any]) -> None:
        """The run's final numbers (the final evaluation) in the W&B run summary."""
        if self.run is None:
            return
        try:
            for key, value in stats.items():
                if isinstance(value, (int, float)) and not (isinstance(value, float) and math.isnan(value)):
                    self.run.summary[f"final/{key}"] = value
        except Exception as e:
            self._warn(f"summary failed ({_line(e)})")

    def close(self) -> None:
        if self.run is None:
            return
        try:
            self.run.finish()
        except Exception as e:
            self._warn(f"finish failed ({_line(e)})")
        self.run = None
