"""AlphaZero: search over real game states (zoo C++ cores), a policy-value net, Monte-Carlo targets."""
from __future__ import annotations

from typing import Any, Dict, Optional, Tuple

import numpy as np
import torch
import torch.nn.functional as F
from easydict import EasyDict

from lzlite.config import Range, at_least
from lzlite.mcts.adapters import AlphaZeroAdapter
from lzlite.policy.base import Policy
from lzlite.registry import POLICY_REGISTRY

__all__ = ["AlphaZeroPolicy", "GumbelAlphaZeroPolicy"]


@POLICY_REGISTRY.register("alphazero")
class AlphaZeroPolicy(Policy):
    """AlphaZero (Silver et al., 2018) as a small subclass of the policy template.

    The search runs on real game states held by the AlphaZero search adapter (terminal leaves are valued
    by the game, without a network call); the value target is the game outcome (n-step return with n
    longer than any game and discount 1) and the policy target is the visit distribution.
    """

    entry = "train_alphazero"
    model_classes = {"conv": "AlphaZeroModel"}
    # no dynamics model: targets only at the sampled position, and no search to reanalyze them with
    fixed_config = dict(num_unroll_steps=0, reanalyze_ratio=0.0)

    @classmethod
    def default_config(cls) -> EasyDict:
        cfg = super().default_config()
        cfg.value_loss_weight = 1.0  # weight of the value loss (AlphaZero weighs value and policy equally)
        cfg.policy_loss_weight = 1.0  # weight of the policy loss
        return cfg

    @classmethod
    def config_ranges(cls) -> Dict[str, Range]:
        return dict(super().config_ranges(), value_loss_weight=at_least(0), policy_loss_weight=at_least(0))

    def _hook_make_adapter(self, model: torch.nn.Module, venv: Any) -> Any:
        device = self.device

        def net_fn(obs: np.ndarray) -> Tuple[np.ndarray, np.ndarray]:
            logits, value = model(torch.as_tensor(obs, device=device))
            return value.view(-1).float().cpu().numpy(), logits.float().cpu().numpy()

        return AlphaZeroAdapter(venv.game, net_fn)

    def _hook_root_input(self, venv: Any, idx: np.ndarray) -> Any:
        return np.ascontiguousarray(venv.states[idx])

    def _hook_target_value(self, obs: torch.Tensor) -> torch.Tensor:
        return self.target_model(obs)[1]

    def _hook_loss(self, batch: Any) -> Tuple[torch.Tensor, Dict[str, float], Optional[np.ndarray]]:
        obs = self.to_tensor(batch.obs)
        target_pi = self.to_tensor(batch.target_policy[:, 0])
        target_v = self.to_tensor(batch.target_value[:, 0])
        weights = self.to_tensor(batch.weights)
        logits, value = self.model(obs)
        value = value.view(-1)
        policy_loss = -(target_pi * F.log_softmax(logits, dim=-1)).sum(-1)
        value_loss = (value - target_v) ** 2
        loss = (weights * (self.cfg.policy_loss_weight * policy_loss + self.cfg.value_loss_weight * value_loss)).mean()
        entropy = -(target_pi * torch.log(target_pi.clamp_min(1e-12))).sum(-1)
        stats = dict(policy_loss=float(policy_loss.mean().detach()), value_loss=float(value_loss.mean().detach()),
                     target_entropy=float(entropy.mean().detach()))
        priorities = (value - target_v).abs().detach().cpu().numpy() + 1e-6
        return loss, stats, priorities


@POLICY_REGISTRY.register("gumbel_alphazero")
class GumbelAlphaZeroPolicy(AlphaZeroPolicy):
    """AlphaZero with Gumbel MuZero's root (Danihelka et al., 2022) over the real game.

    The search samples ``max_num_considered_actions`` moves with Gumbel-top-k and narrows them by sequential
    halving; the policy target is the improved policy softmax(logits + sigma(completed Q)), as in Gumbel
    MuZero, but every state in the tree is a real game state. With the learned model taken out, it is
    also the control that tells a weak learned model from a weak Gumbel target (docs/results.md).
    """

    @classmethod
    def default_config(cls) -> EasyDict:
        cfg = super().default_config()
        cfg.search_rule = "gumbel"
        return cfg

    def _hook_policy_target(self, out: Any) -> np.ndarray:
        return out.improved_policy
