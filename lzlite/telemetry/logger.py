"""Run logging: TensorBoard scalars, a tqdm progress bar with the headline numbers, a final summary."""
from __future__ import annotations

import os
import sys
import time
from typing import Any, Dict, Optional

from tqdm import tqdm

__all__ = ["RunLogger", "format_summary"]


class RunLogger:
    """Logs scalars to ``run_dir/tb`` and drives the terminal progress bar (rank 0 only).

    Args:
        run_dir: the run directory.
        enabled: False on non-zero DDP ranks: every method is then a no-op.
        progress: show a tqdm bar on stderr.
        total: the bar's total (env steps or learner iterations).
        unit: the bar's unit label.
    """

    def __init__(self, run_dir: str, enabled: bool = True, progress: bool = True, total: Optional[int] = None,
                 unit: str = "env steps") -> None:
        self.enabled = enabled
        self.writer = None
        self.bar = None
        self._n = 0
        self._postfix: Dict[str, Any] = {}
        self._drawn_at = 0.0
        if not enabled:
            return
        try:  # on first use: tensorboard is slow to import, and a run without it still trains
            from torch.utils.tensorboard import SummaryWriter

            self.writer = SummaryWriter(os.path.join(run_dir, "tb"))
        except ImportError:  # tensorboard missing: training goes on without it
            self.writer = None
        if progress:
            self.bar = tqdm(total=total, unit=f" {unit}", dynamic_ncols=True, file=sys.stderr,
                            bar_format="{l_bar}{bar}| {n_fmt}/{total_fmt} [{elapsed}<{remaining}] {postfix}")

    def scalars(self, prefix: str, stats: Dict[str, float], step: int) -> None:
        if self.writer is None:
            return
        for key, value in stats.items():
            self.writer.add_scalar(f"{prefix}/{key}", float(value), step)

    def update(self, n: int, postfix: Optional[Dict[str, Any]] = None) -> None:
        """Move the bar to ``n`` and set ``postfix``'s fields beside it (the others stay).

        Cheap enough to call after every move of a collect: tqdm redraws at most every 0.1 s, and a changed
        postfix alone is redrawn at most every 0.5 s.
        """
        if self.bar is None:
            return
        if self.bar.total is not None:
            n = min(n, self.bar.total)
        if postfix:
            self._postfix.update({k: (f"{v:.3f}" if isinstance(v, float) else v) for k, v in postfix.items()})
            self.bar.set_postfix(self._postfix, refresh=False)
        drawn = self.bar.update(n - self._n)
        self._n = n
        now = time.monotonic()
        if drawn:
            self._drawn_at = now
        elif postfix and now - self._drawn_at >= 0.5:
            self.bar.refresh()
            self._drawn_at = now

    def summary(self, stats: Dict[str, Any]) -> None:
        if not self.enabled:
            return
        if self.bar is not None:
            self.bar.close()
            self.bar = None
        print(format_summary(stats), flush=True)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
        if self.writer is not None:
            self.writer.flush()
            self.writer.close()


def format_summary(stats: Dict[str, Any], title: str = "training summary") -> str:
    """A two-column table of the final statistics."""
    rows = [(k, f"{v:.4g}" if isinstance(v, float) else str(v)) for k, v in stats.items()]
    width = max((len(k) for k, _ in rows), default=10)
    line = "-" * (width + 14)
    body = "\n".join(f"  {k:<{width}}  {v:>10}" for k, v in rows)
    return f"{line}\n  {title}\n{line}\n{body}\n{line}"
