"""ReZero (LightZero team, 2024): MuZero plus scheduled whole-buffer reanalyze with backward-view reuse.

The policy is MuZero's (same networks, search, loss, collector and buffer sampling); what it adds is
one hook: after a collect, every ``reanalyze_interval`` learner steps, it searches every sampleable
position of the replay buffer again with the TARGET network and overwrites the stored root values
and policy targets (lzlite/policy/reanalyze.py). With ``use_backward_view`` each trajectory is
searched from its end backwards and the action actually taken is not searched again: its value is
the reward plus the discounted value the search of the next position just found.
"""
from __future__ import annotations

from typing import Any, Dict, Optional

from easydict import EasyDict

from lzlite.config import Range, at_least
from lzlite.policy.reanalyze import CountingLatentAdapter, ReanalyzeStats, reanalyze_buffer
from lzlite.policy.muzero import MuZeroPolicy
from lzlite.registry import POLICY_REGISTRY

__all__ = ["ReZeroPolicy"]


@POLICY_REGISTRY.register("rezero")
class ReZeroPolicy(MuZeroPolicy):
    """MuZero + ReZero's whole-buffer reanalyze (see the module docstring)."""

    entry = "train_rezero"

    @classmethod
    def default_config(cls) -> EasyDict:
        cfg = super().default_config()
        cfg.reanalyze_interval = 100  # learner steps between whole-buffer reanalyzes, run after a collect (0: never)
        cfg.reanalyze_batch_size = 256  # positions (roots) per batched reanalyze search
        cfg.use_backward_view = True  # ReZero reuse of the next position's value for the action taken; False: plain
        cfg.reanalyze_policy_targets = True  # also overwrite the stored policy targets (False: root values only)
        return cfg

    @classmethod
    def config_ranges(cls) -> Dict[str, Range]:
        return dict(super().config_ranges(), reanalyze_interval=at_least(0), reanalyze_batch_size=at_least(1))

    def __init__(self, cfg: EasyDict, model: Optional[Any] = None, value_sign: float = -1.0) -> None:
        super().__init__(cfg, model=model, value_sign=value_sign)
        if int(cfg.reanalyze_interval) < 0:
            raise ValueError(f"reanalyze_interval must be >= 0 learner steps (0: never), got {cfg.reanalyze_interval}")
        if int(cfg.reanalyze_batch_size) < 1:
            raise ValueError(f"reanalyze_batch_size must be >= 1, got {cfg.reanalyze_batch_size}")
        self._last_reanalyze_iter = 0
        #: stats of the most recent whole-buffer reanalyze (None before the first)
        self.last_reanalyze: Optional[ReanalyzeStats] = None
        self.num_reanalyzes = 0

    def after_collect(self, buffer: Any, train_iter: int) -> None:
        """Reanalyze the whole buffer when ``reanalyze_interval`` learner steps passed since the last one."""
        interval = int(self.cfg.reanalyze_interval)
        if interval == 0 or train_iter - self._last_reanalyze_iter < interval or buffer.num_transitions == 0:
            return
        self._last_reanalyze_iter = int(train_iter)
        self.reanalyze_buffer(buffer)

    def reanalyze_buffer(self, buffer: Any, *, backward_view: Optional[bool] = None, write: bool = True,
                         **kwargs: Any) -> ReanalyzeStats:
        """Reanalyze every sampleable row of ``buffer`` with the target network now.

        Args:
            buffer: the replay buffer.
            backward_view: overrides ``cfg.use_backward_view`` (benchmarks compare both).
            write: False computes the targets without storing them.
            **kwargs: passed to ``lzlite.policy.reanalyze.reanalyze_buffer`` (e.g. ``on_search``).
        """
        adapter = CountingLatentAdapter(self.target_model, self.target_model.value_to_scalar, self.target_model.to_scalar,
                                        self.device)
        stats = reanalyze_buffer(
            buffer, adapter, self.search_cfg,
            batch_size=int(self.cfg.reanalyze_batch_size),
            backward_view=self.cfg.use_backward_view if backward_view is None else bool(backward_view),
            policy_target_fn=self.policy_target if self.cfg.reanalyze_policy_targets else None,
            write=write, **kwargs,
        )
        self.last_reanalyze = stats
        self.num_reanalyzes += 1
        return stats

    # The schedule is part of the training state, so a resumed run reanalyzes when the original would.
    def state_dict(self) -> Dict[str, Any]:
        state = super().state_dict()
        state["last_reanalyze_iter"] = self._last_reanalyze_iter
        return state

    def load_state_dict(self, state: Dict[str, Any]) -> None:
        super().load_state_dict(state)
        self._last_reanalyze_iter = int(state.get("last_reanalyze_iter", 0))
