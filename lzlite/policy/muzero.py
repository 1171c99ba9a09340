"""MuZero and Gumbel MuZero: a learned model searched in latent space.

The loss (Schrittwieser et al., 2020, appendix G) unrolls the learned model K steps from each sampled
position along the moves actually played:

    l = sum_{k=0..K} [ w_v l_v(v_k, z_{t+k}) + w_p l_p(p_k, pi_{t+k}) ] + sum_{k=1..K} w_r l_r(r_k, u_{t+k-1})

with the value and reward as categorical distributions over a transformed support (or scalars), the
policy as a cross-entropy against the search's target, and the gradient into the dynamics halved at each
step. EfficientZero's consistency loss (``ssl_loss_weight``) optionally pulls the projection of each
unrolled latent toward the target network's projection of the real observation there.

Auxiliary losses of research variants hook in through ``_hook_aux_losses`` (see ``AuxLosses``), so this
loop stays the paper's; ``zoo/connect4/grounded_muzero.py`` is one.
"""
from __future__ import annotations

from typing import Any, Callable, Dict, Optional, Tuple

import numpy as np
import torch
import torch.nn.functional as F
from easydict import EasyDict

from lzlite.buffer.game_segment import StepField
from lzlite.config import Range, at_least
from lzlite.mcts.adapters import LatentModelAdapter
from lzlite.model.support import scalar_to_support
from lzlite.policy.base import Policy
from lzlite.registry import POLICY_REGISTRY

__all__ = ["MuZeroPolicy", "GumbelMuZeroPolicy", "AuxLosses", "scale_gradient"]


def scale_gradient(x: torch.Tensor, scale: float) -> torch.Tensor:
    """Identity forward; gradient multiplied by ``scale`` (MuZero's 0.5 on the dynamics path)."""
    return x * scale + x.detach() * (1.0 - scale)


class AuxLosses:
    """Extra per-row loss terms a MuZero variant adds along the unroll (returned by ``_hook_aux_losses``).

    The unroll calls ``on_dynamics_input`` with the latent of position t+k just before the dynamics takes
    it (gradient already halved), and ``on_latent`` with each latent of a real position as the model makes
    it (k = 0: the representation's; k >= 1: the dynamics'). ``terms`` then gives the weighted terms.
    """

    def on_dynamics_input(self, k: int, latent: torch.Tensor) -> None:
        """``latent`` [Bt, ...]: position t+k's latent as the dynamics step k+1 takes it."""

    def on_latent(self, k: int, latent: torch.Tensor) -> None:
        """``latent`` [Bt, ...]: the model's latent of position t+k."""

    def terms(self) -> Dict[str, Tuple[float, torch.Tensor]]:
        """name -> (weight, per-row loss [Bt]); each adds ``weight * loss`` to the total and ``<name>_loss`` to the stats."""
        return {}


@POLICY_REGISTRY.register("muzero")
class MuZeroPolicy(Policy):
    """MuZero (Schrittwieser et al., 2020): PUCT search over a learned latent model (see the module docstring)."""

    entry = "train_muzero"
    model_classes = {"conv": "MuZeroModel", "mlp": "MuZeroModelMLP"}

    @classmethod
    def default_config(cls) -> EasyDict:
        cfg = super().default_config()
        cfg.value_loss_weight = 0.25  # weight of each unrolled position's value loss (the paper's 0.25)
        cfg.policy_loss_weight = 1.0  # weight of the policy loss
        cfg.reward_loss_weight = 1.0  # weight of the reward loss
        cfg.ssl_loss_weight = 0.0  # weight of EfficientZero's consistency loss (needs model.self_supervised_learning_loss)
        return cfg

    @classmethod
    def config_ranges(cls) -> Dict[str, Range]:
        return dict(super().config_ranges(), value_loss_weight=at_least(0), policy_loss_weight=at_least(0),
                    reward_loss_weight=at_least(0), ssl_loss_weight=at_least(0))

    def __init__(self, cfg: EasyDict, model: Optional[torch.nn.Module] = None, value_sign: float = -1.0) -> None:
        super().__init__(cfg, model=model, value_sign=value_sign)
        if cfg.ssl_loss_weight > 0 and not getattr(self.model, "self_supervised_learning_loss", False):
            raise ValueError(f"policy.ssl_loss_weight={cfg.ssl_loss_weight} needs the model's projection heads: "
                             f"set policy.model.self_supervised_learning_loss=True (or ssl_loss_weight=0)")

    def step_fields(self) -> Dict[str, StepField]:
        # the consistency loss reads the real observations at the unrolled positions
        return {"obs": StepField(observation=True)} if self.cfg.ssl_loss_weight > 0 else {}

    # ------------------------------------------------------------------ acting
    def _hook_make_adapter(self, model: torch.nn.Module, venv: Any) -> Any:
        return self._latent_adapter(model)

    def _latent_adapter(self, model: torch.nn.Module) -> Any:
        return LatentModelAdapter(model, model.value_to_scalar, model.to_scalar, self.device)

    def _hook_root_input(self, venv: Any, idx: np.ndarray) -> Any:
        return self.to_tensor(venv.observe()[idx])

    def reanalyze_fn(self) -> Optional[Callable[[np.ndarray, np.ndarray], Tuple[np.ndarray, Optional[np.ndarray]]]]:
        """Root values and policy targets of stored positions searched again with the target model.

        MuZero Reanalyse: no root noise, the stored legal masks at the root.
        """
        adapter = self._latent_adapter(self.target_model)
        rng = np.random.default_rng(0)

        def fn(obs: np.ndarray, legal_mask: np.ndarray) -> Tuple[np.ndarray, Optional[np.ndarray]]:
            out = self._search_roots(adapter, self.to_tensor(obs), legal_mask, rng, add_noise=False)
            return out.root_value.astype(np.float32), self.policy_target(out)

        return fn

    def _hook_target_value(self, obs: torch.Tensor) -> torch.Tensor:
        return self.target_model.value_to_scalar(self.target_model.initial_inference(obs).value)

    # ----------------------------------------------------------------- learning
    def _value_loss(self, head: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
        """[Bt] loss of the value head's output against scalar targets [Bt]: the reward head's loss (MuZero's)."""
        return self._reward_loss(head, target)

    def _reward_loss(self, head: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
        """[Bt] loss of a value or reward head's output (categorical: cross-entropy against the two-hot target;
        scalar: squared error) against scalar targets [Bt]."""
        model = self._unwrap(self.model)
        if model.categorical_distribution:
            t = scalar_to_support(target, model.support_scale, model.support_transform)
            return -(t * F.log_softmax(head, dim=-1)).sum(-1)
        return (head.view(-1) - target) ** 2

    def _hook_aux_losses(self, batch: Any) -> Optional[AuxLosses]:
        """A variant's extra loss terms along the unroll (see AuxLosses); MuZero has none."""
        return None

    def _hook_loss(self, batch: Any) -> Tuple[torch.Tensor, Dict[str, float], Optional[np.ndarray]]:
        cfg = self.cfg
        model = self._unwrap(self.model)
        obs = self.to_tensor(batch.obs)  # [Bt, *obs_shape]
        actions = self.to_tensor(batch.actions, torch.int64)  # [Bt, K]
        t_reward = self.to_tensor(batch.target_reward)  # [Bt, K]
        t_value = self.to_tensor(batch.target_value)  # [Bt, K+1]
        t_policy = self.to_tensor(batch.target_policy)  # [Bt, K+1, A]
        mask = self.to_tensor(batch.mask_unroll)  # [Bt, K+1]
        K = actions.shape[1]

        out = self.model.initial_inference(obs)
        latent = out.latent_state
        root_value_loss = self._value_loss(out.value, t_value[:, 0])
        value_loss = torch.zeros_like(root_value_loss)  # the unrolled positions'
        policy_loss = -(t_policy[:, 0] * F.log_softmax(out.policy_logits, dim=-1)).sum(-1)
        reward_loss = torch.zeros_like(value_loss)
        ssl_loss = torch.zeros_like(value_loss)
        pred_root_value = model.value_to_scalar(out.value).detach()
        aux = self._hook_aux_losses(batch)
        if aux is not None:
            aux.on_latent(0, latent)
        for k in range(1, K + 1):
            latent = scale_gradient(latent, 0.5)
            if aux is not None:
                aux.on_dynamics_input(k - 1, latent)
            out = self.model.recurrent_inference(latent, actions[:, k - 1])
            latent = out.latent_state
            if aux is not None:
                aux.on_latent(k, latent)
            value_loss = value_loss + self._value_loss(out.value, t_value[:, k])
            reward_loss = reward_loss + self._reward_loss(out.reward, t_reward[:, k - 1])
            policy_loss = policy_loss + mask[:, k] * -(t_policy[:, k] * F.log_softmax(out.policy_logits, dim=-1)).sum(-1)
            if cfg.ssl_loss_weight > 0:
                ssl_loss = ssl_loss - mask[:, k] * self._consistency(model, latent, batch.unrolled["obs"][:, k])

        terms = dict(root_value=(cfg.value_loss_weight, root_value_loss), value=(cfg.value_loss_weight, value_loss),
                     policy=(cfg.policy_loss_weight, policy_loss), reward=(cfg.reward_loss_weight, reward_loss),
                     ssl=(cfg.ssl_loss_weight, ssl_loss))
        terms.update(aux.terms() if aux is not None else {})
        total = sum(weight * loss for weight, loss in terms.values())
        loss = (self.to_tensor(batch.weights) * total).mean()
        stats = {f"{name}_loss": term.mean().item() for name, (_, term) in terms.items()}
        stats.update(value_loss=(root_value_loss + value_loss).mean().item(),
                     pred_value=float(pred_root_value.mean()), target_value=float(t_value[:, 0].mean()))
        priorities = (pred_root_value - t_value[:, 0]).abs().cpu().numpy() + 1e-6
        return loss, stats, priorities

    def _consistency(self, model: torch.nn.Module, latent: torch.Tensor, obs: np.ndarray) -> torch.Tensor:
        """[Bt] cosine similarity of the projected ``latent`` and the target network's projection of ``obs``
        (EfficientZero's self-supervised consistency; the target side carries no gradient)."""
        with torch.no_grad():
            target_latent = self.target_model.initial_inference(self.to_tensor(obs)).latent_state
            target_proj = self.target_model.project(target_latent, with_grad=False)
        return F.cosine_similarity(model.project(latent, with_grad=True), target_proj, dim=-1)


@POLICY_REGISTRY.register("gumbel_muzero")
class GumbelMuZeroPolicy(MuZeroPolicy):
    """Gumbel MuZero (Danihelka et al., 2022): Gumbel root + sequential halving, improved-policy targets."""

    @classmethod
    def default_config(cls) -> EasyDict:
        cfg = super().default_config()
        cfg.search_rule = "gumbel"  # Gumbel-top-k sampling and sequential halving at the root
        return cfg

    def _hook_policy_target(self, out: Any) -> np.ndarray:
        return out.improved_policy  # softmax(logits + sigma(completed Q)): the paper's policy target
