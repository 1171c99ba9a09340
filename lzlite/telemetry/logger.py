"""Run logging: TensorBoard scalars, a tqdm progress bar with the headline numbers, a final summary; and, as the
config's ``logger`` section asks, the same scalars to Weights & Biases and a live status, curves and spectator games
to Redis for the web UI (``lzlite/telemetry/wandb.py``, ``lzlite/telemetry/redis_status.py``)."""
from __future__ import annotations

import math
import os
import sys
import time
from typing import Any, Dict, Mapping, Optional

from tqdm import tqdm

from lzlite.telemetry.events import MoveHook
from lzlite.telemetry.redis_status import RedisPublisher
from lzlite.telemetry.wandb import WandbSink

__all__ = ["RunLogger", "format_summary", "make_run_id"]


def make_run_id(run_dir: str, start: Optional[float] = None) -> str:
    """A run's id in Redis and W&B: the run directory's base name, '-', the start time in unix seconds."""
    return f"{os.path.basename(os.path.abspath(run_dir))}-{int(time.time() if start is None else start)}"


class RunLogger:
    """Logs scalars to ``run_dir/tb`` and drives the terminal progress bar (rank 0 only); W&B and Redis as
    ``cfg.logger`` asks.

    Args:
        run_dir: the run directory.
        enabled: False on non-zero DDP ranks: every method is then a no-op.
        progress: show a tqdm bar on stderr.
        total: the bar's total (env steps or learner iterations).
        unit: the bar's unit label.
        cfg: the compiled config: its ``logger`` section turns W&B and Redis on; W&B gets it whole, the Redis
            status its experiment, algorithm and game. None: TensorBoard only.
        role: 'learner' (TensorBoard, W&B, the run status) or 'actor' (a self-play process of an actor/learner run:
            only its Redis actor status and spectator games).
        actor_id: the actor's number (role 'actor').
        run_id: the run's id; actors pass their learner's (default: ``make_run_id(run_dir)``).
    Attributes:
        run_id: the run's id.
        move_hook: the collectors' ``on_move`` (a ``MoveHook``), or None when no games are spectated.
        wandb / redis: the W&B sink and the Redis publisher, or None when off.
    """

    def __init__(self, run_dir: str, enabled: bool = True, progress: bool = True, total: Optional[int] = None,
                 unit: str = "env steps", *, cfg: Optional[Mapping[str, Any]] = None, role: str = "learner",
                 actor_id: Optional[int] = None, run_id: Optional[str] = None) -> None:
        self.enabled = enabled
        self.writer = None
        self.bar = None
        self.wandb: Optional[WandbSink] = None
        self.redis: Optional[RedisPublisher] = None
        self.move_hook: Optional[MoveHook] = None
        self.run_id = run_id or make_run_id(run_dir)
        self.role = role
        self._n = 0
        self._postfix: Dict[str, Any] = {}
        self._drawn_at = 0.0
        self._status: Dict[str, Any] = {}
        self._rate_from: Optional[tuple] = None  # (time, env steps) the env steps/s figure counts from
        self._rate_start: Optional[tuple] = None  # (time, env steps) of the first status
        if role not in ("learner", "actor"):
            raise ValueError(f"role must be 'learner' or 'actor', got {role!r}")
        if not enabled:
            return
        log_cfg = (cfg or {}).get("logger") or {}
        if log_cfg.get("redis_url"):
            info = dict(run=self.run_id, exp_name=cfg.get("exp_name"), algorithm=cfg["create"]["policy"]["type"],
                        game=cfg["create"]["env"]["type"], run_dir=os.path.abspath(run_dir), started_at=time.time())
            self.redis = RedisPublisher(log_cfg["redis_url"], self.run_id, role, actor_id, info=info)
            if role == "learner":
                self._status = dict(info, role=role, env_steps=0, train_iter=0, losses={}, win_rates={},
                                    env_steps_per_s=0.0, buffer_size=0, weights_version=0, actors_alive=0,
                                    policy_lag=0.0)
            else:
                self._status = dict(actor=actor_id, env_steps=0, weights_version=0)
            if int(log_cfg.get("spectate_games", 0)) > 0:
                self.move_hook = MoveHook(int(log_cfg["spectate_games"]), self.redis.move,
                                          prefix=f"actor{actor_id}-" if role == "actor" else "")
        if role == "actor":  # an actor reports to Redis only: the learner owns TensorBoard, W&B and the bar
            return
        if log_cfg.get("wandb"):
            self.wandb = WandbSink(run_dir, log_cfg.get("wandb_project") or "lzlite", self.run_id, _plain(cfg))
        try:  # on first use: tensorboard is slow to import, and a run without it still trains
            from torch.utils.tensorboard import SummaryWriter

            self.writer = SummaryWriter(os.path.join(run_dir, "tb"))
        except ImportError:  # tensorboard missing: training goes on without it
            self.writer = None
        if progress:
            self.bar = tqdm(total=total, unit=f" {unit}", dynamic_ncols=True, file=sys.stderr,
                            bar_format="{l_bar}{bar}| {n_fmt}/{total_fmt} [{elapsed}<{remaining}] {postfix}")

    def scalars(self, prefix: str, stats: Dict[str, float], step: int) -> None:
        """Log ``stats`` as ``<prefix>/<key>`` at ``step`` (env steps) to TensorBoard, W&B and the Redis curve; the
        'learn' losses and the 'eval' win rates also go into the run status."""
        if not self.enabled or not stats:
            return
        tagged = {f"{prefix}/{key}": float(value) for key, value in stats.items()}
        if self.writer is not None:
            for tag, value in tagged.items():
                self.writer.add_scalar(tag, value, step)
        if self.wandb is not None:
            self.wandb.log(tagged, step)
        if self.redis is not None:
            now = time.time()
            for tag, value in tagged.items():
                self.redis.curve(tag, step, value, now)
            if prefix == "learn":
                self.status(losses={k: v for k, v in stats.items() if "loss" in k})
            elif prefix == "eval":
                self.status(win_rates={k[:-len("/win")]: v for k, v in stats.items() if k.endswith("/win")})

    def status(self, **fields: Any) -> None:
        """Update the Redis status (the run's, or this actor's) with ``fields``; a no-op without Redis.

        Learner fields (docs/architecture.md, "Redis keys"): ``env_steps``, ``train_iter``, ``buffer_size``,
        ``weights_version``, ``actors_alive``, ``policy_lag`` (``losses`` and ``win_rates`` come from
        ``scalars``; ``env_steps_per_s`` is measured here from ``env_steps``). Actor fields: ``env_steps``,
        ``weights_version``. Cheap: it replaces a dict that the publisher's thread sends.
        """
        if self.redis is None:
            return
        if "env_steps" in fields and self.role == "learner":
            now, steps = time.monotonic(), int(fields["env_steps"])
            if self._rate_from is None:
                self._rate_from = self._rate_start = (now, steps)
            elif now - self._rate_from[0] >= 2.0:  # a rate over at least 2 s, so a short learner phase is no spike
                self._status["env_steps_per_s"] = (steps - self._rate_from[1]) / (now - self._rate_from[0])
                self._rate_from = (now, steps)
            elif now - self._rate_start[0] < 2.0 and now > self._rate_start[0]:  # the first 2 s: since the start
                self._status["env_steps_per_s"] = (steps - self._rate_start[1]) / (now - self._rate_start[0])
        self._status.update(fields)
        self.redis.set_status(_finite(self._status))

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
        """Print the final statistics (and put them in the W&B run's summary)."""
        if not self.enabled:
            return
        if self.wandb is not None:
            self.wandb.summary(stats)
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
        if self.wandb is not None:
            self.wandb.close()
        if self.redis is not None:
            self.redis.close()


def _plain(x: Any) -> Any:
    """A config as plain dicts and lists (what W&B's config takes)."""
    if isinstance(x, Mapping):
        return {str(k): _plain(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_plain(v) for v in x]
    return x


def _finite(x: Any) -> Any:
    """``x`` with NaN and infinities as None: JSON has no such numbers (a browser's JSON.parse refuses them)."""
    if isinstance(x, float) and not math.isfinite(x):
        return None
    if isinstance(x, Mapping):
        return {k: _finite(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_finite(v) for v in x]
    return x


def format_summary(stats: Dict[str, Any], title: str = "training summary") -> str:
    """A two-column table of the final statistics."""
    rows = [(k, f"{v:.4g}" if isinstance(v, float) else str(v)) for k, v in stats.items()]
    width = max((len(k) for k, _ in rows), default=10)
    line = "-" * (width + 14)
    body = "\n".join(f"  {k:<{width}}  {v:>10}" for k, v in rows)
    return f"{line}\n  {title}\n{line}\n{body}\n{line}"
