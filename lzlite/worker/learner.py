"""The learner: optimizer, LR schedule, gradient clipping, target updates, hooks, checkpoint state.

The policy defines the loss (``Policy.compute_loss``); the learner owns everything around it.
"""
from __future__ import annotations

import math
from typing import Any, Callable, Dict, List, Optional

import numpy as np
import torch
from easydict import EasyDict

from lzlite.config import Range, above, at_least
from lzlite.distributed import ddp
from lzlite.registry import LEARNER_REGISTRY

__all__ = ["Learner", "NonFiniteLossError"]


class NonFiniteLossError(FloatingPointError):
    """Training diverged: a learner step's loss is NaN or infinite (``Policy.compute_loss`` detects it)."""


@LEARNER_REGISTRY.register("base_learner")
class Learner:
    """Runs learner steps for a policy (registered as 'base_learner'; ``create_config.learner.type`` picks
    another, e.g. a user's subclass).

    Args:
        policy: a lzlite Policy (its ``model`` is optimised).
        cfg: the policy config section (optim_type, learning_rate, weight_decay, momentum,
            lr_schedule, warmup_steps, grad_clip_value, target_update_freq).
        max_train_iter: total planned steps (the cosine schedule decays over it).
    """

    @staticmethod
    def default_config() -> EasyDict:
        return EasyDict(dict(
            update_per_collect=None,  # learner steps per collect; None: transitions x replay_ratio
            replay_ratio=0.25,  # learner steps per collected transition when update_per_collect is None
            optim_type="AdamW",  # 'AdamW', 'Adam' or 'SGD'
            learning_rate=0.003,  # peak learning rate
            weight_decay=0.0001,  # decoupled weight decay (AdamW) / L2 (SGD)
            momentum=0.9,  # SGD momentum
            lr_schedule="constant",  # 'constant' or 'cosine' (to 10% over max_train_iter, else env steps x replay_ratio)
            warmup_steps=0,  # linear LR warm-up steps
            grad_clip_value=0.5,  # global gradient-norm clip
            target_update_freq=100,  # learner steps between target-network copies
            symmetry_augmentation=False,  # train on a random board symmetry of each sampled position (the
            #                       env's `symmetry`: tictactoe/gomoku 8 rotations+reflections, connect4 mirror)
            save_ckpt_freq=1000,  # learner steps between checkpoints (and one at the end)
            learn=dict(learner=dict(hook=dict(save_ckpt_after_iter=1000))),  # LightZero compatibility
        ))

    @staticmethod
    def config_ranges() -> Dict[str, Range]:
        """The allowed values of the numeric keys of ``default_config`` (``lzlite/config/ranges.py``)."""
        return dict(
            update_per_collect=at_least(1),  # or None
            replay_ratio=at_least(0),  # 0: one learner step per collect (calculate_update_per_collect)
            learning_rate=above(0),
            weight_decay=at_least(0),
            momentum=Range(0, 1, high_open=True),
            warmup_steps=at_least(0),
            grad_clip_value=Range(0, math.inf, low_open=True),  # inf: no clipping
            target_update_freq=at_least(1),
            save_ckpt_freq=at_least(1),
        )

    def __init__(self, policy: Any, cfg: EasyDict, max_train_iter: int = 100000) -> None:
        self.policy = policy
        self.cfg = cfg
        self.train_iter = 0
        self.max_train_iter = max(1, int(max_train_iter))
        params = [p for p in policy.model.parameters() if p.requires_grad]
        if cfg.optim_type == "AdamW":
            self.optimizer = torch.optim.AdamW(params, lr=cfg.learning_rate, weight_decay=cfg.weight_decay)
        elif cfg.optim_type == "Adam":
            self.optimizer = torch.optim.Adam(params, lr=cfg.learning_rate, weight_decay=cfg.weight_decay)
        elif cfg.optim_type == "SGD":
            self.optimizer = torch.optim.SGD(params, lr=cfg.learning_rate, momentum=cfg.momentum,
                                             weight_decay=cfg.weight_decay)
        else:
            raise ValueError(f"policy.optim_type must be 'AdamW', 'Adam' or 'SGD', got {cfg.optim_type!r}")
        if cfg.lr_schedule not in ("constant", "cosine"):
            raise ValueError(f"policy.lr_schedule must be 'constant' or 'cosine', got {cfg.lr_schedule!r}")
        self.scheduler = torch.optim.lr_scheduler.LambdaLR(self.optimizer, self._lr_factor)
        self.after_step_hooks: List[Callable[["Learner", Dict[str, float]], None]] = []
        #: batch -> (loss, stats, priorities); under DDP the loop swaps in the DDP-wrapped loss
        self.compute_loss: Callable[[Any], Any] = policy.compute_loss

    def _lr_factor(self, step: int) -> float:
        warm = self.cfg.warmup_steps
        if warm > 0 and step < warm:
            return (step + 1) / warm
        if self.cfg.lr_schedule == "cosine":
            frac = min(1.0, (step - warm) / max(1, self.max_train_iter - warm))
            return 0.1 + 0.9 * 0.5 * (1.0 + math.cos(math.pi * frac))
        return 1.0

    def train(self, batch: Any) -> Dict[str, float]:
        """One learner step on ``batch``; returns the loss statistics (plus lr and grad_norm).

        Raises:
            NonFiniteLossError: the loss is NaN or infinite; the message names the step and the learning rate.
        """
        # under DDP the forward broadcasts the model's buffers and backward all-reduces the gradients
        with ddp.collective("learner step"):
            try:
                loss, stats, priorities = self.compute_loss(batch)
            except FloatingPointError as e:
                lr = self.optimizer.param_groups[0]["lr"]
                raise NonFiniteLossError(f"training diverged at learner step {self.train_iter + 1} (learning rate "
                                         f"{lr:g}): {e}") from e
            self.optimizer.zero_grad(set_to_none=True)
            loss.backward()
        grad_norm = torch.nn.utils.clip_grad_norm_(self.policy.model.parameters(), self.cfg.grad_clip_value)
        self.optimizer.step()
        self.scheduler.step()
        self.train_iter += 1
        if self.train_iter % max(1, self.cfg.target_update_freq) == 0:
            self.policy.update_target()
        stats = dict(stats, loss=float(loss.detach()), grad_norm=float(grad_norm),
                     lr=float(self.optimizer.param_groups[0]["lr"]))
        self.last_priorities: Optional[np.ndarray] = priorities
        for hook in self.after_step_hooks:
            hook(self, stats)
        return stats

    def state_dict(self) -> Dict[str, Any]:
        return {"optimizer": self.optimizer.state_dict(), "scheduler": self.scheduler.state_dict(),
                "train_iter": self.train_iter}

    def load_state_dict(self, state: Dict[str, Any]) -> None:
        self.optimizer.load_state_dict(state["optimizer"])
        self.scheduler.load_state_dict(state["scheduler"])
        self.train_iter = int(state["train_iter"])
