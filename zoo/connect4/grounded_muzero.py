"""Grounded Gumbel MuZero: Gumbel MuZero plus two losses that ground its learned model in the real board.

The shipped Connect Four Gumbel MuZero recipe (``gumbel_muzero_config.py``) trains this registered subclass;
the config names it in ``create_config.policy`` (``type='grounded_gumbel_muzero'``, ``import_names`` this
module). It is also the worked example of a research variant: a subclass in its own module that declares the
extra per-step records it needs (``step_fields`` / ``record_step``) and adds loss terms along MuZero's unroll
(``AuxLosses``), without an edit to the shared collector, buffer or loop.

- **Per-move rewards** (``action_reward_loss_weight``): the collector records the reward every legal move
  would give at each position (board games: does it win at once?), and each unrolled latent also learns the
  reward of one more move from it, a winning one half the time there is one, else a random legal one. MuZero's
  reward head otherwise sees only the moves self-play played, so the learned model misses the one-move wins
  and blunders of moves it did not play.
- **Observation reconstruction** (``obs_recon_loss_weight``, with ``model.observation_decoder=True``): every
  latent of a real position (the root's and each unrolled one's) is decoded back into that position's
  observation, binary cross-entropy per board cell, so the dynamics carry the board (de Vries et al., 2021,
  "Visualizing MuZero Models"; UniZero's latent reconstruction loss).

docs/results.md gives the measurements behind both.
"""
from __future__ import annotations

from typing import Any, Dict, Optional, Tuple

import numpy as np
import torch
import torch.nn.functional as F
from easydict import EasyDict

from lzlite.buffer.game_segment import StepField
from lzlite.config import Range, at_least
from lzlite.policy.muzero import AuxLosses, GumbelMuZeroPolicy
from lzlite.registry import POLICY_REGISTRY

__all__ = ["GroundedGumbelMuZeroPolicy", "move_rewards"]


def move_rewards(game: Any, states: np.ndarray) -> np.ndarray:
    """float32 [m, A]: the reward each legal move would give its mover in each of ``states`` [m, S] (a zoo
    BatchGame's states), 0 for illegal moves and finished games; the states are left as they were."""
    A = int(game.num_actions)
    legal = game.legal_mask(np.ascontiguousarray(states))
    live = legal.any(axis=1)
    rewards = np.zeros((len(states), A), np.float32)
    if live.any():
        trial = np.ascontiguousarray(np.repeat(states[live], A, axis=0))  # one copy per move
        # an illegal move plays a legal one instead, masked out below
        moves = np.where(legal[live], np.arange(A), legal[live].argmax(axis=1, keepdims=True)).astype(np.int32)
        r, _ = game.step(trial, moves.reshape(-1))
        rewards[live] = r.reshape(-1, A)
    return np.where(legal, rewards, 0.0).astype(np.float32)


@POLICY_REGISTRY.register("grounded_gumbel_muzero")
class GroundedGumbelMuZeroPolicy(GumbelMuZeroPolicy):
    """Gumbel MuZero with the per-move reward and reconstruction losses (see the module docstring)."""

    @classmethod
    def default_config(cls) -> EasyDict:
        cfg = super().default_config()
        # the weight of the per-move reward loss (0 disables it and its records); 4, as MuZero's reward_loss_weight
        # in the Connect Four recipe: a win is one move in ~15-30
        cfg.action_reward_loss_weight = 4.0
        # the weight of the observation reconstruction loss (0 disables it; > 0 needs model.observation_decoder)
        cfg.obs_recon_loss_weight = 1.0
        return cfg

    @classmethod
    def config_ranges(cls) -> Dict[str, Range]:
        return dict(super().config_ranges(), action_reward_loss_weight=at_least(0), obs_recon_loss_weight=at_least(0))

    @classmethod
    def default_model_config(cls, model_type: Optional[str] = None) -> EasyDict:
        cfg = super().default_model_config(model_type)
        cfg.observation_decoder = True  # the linear decoder decode_observation() uses
        return cfg

    def __init__(self, cfg: EasyDict, model: Optional[torch.nn.Module] = None, value_sign: float = -1.0) -> None:
        super().__init__(cfg, model=model, value_sign=value_sign)
        if cfg.obs_recon_loss_weight > 0 and getattr(self._unwrap(self.model), "decoder", None) is None:
            raise ValueError(f"policy.obs_recon_loss_weight={cfg.obs_recon_loss_weight} needs the model's observation "
                             f"decoder: set policy.model.observation_decoder=True (or obs_recon_loss_weight=0)")
        self._recon_checked = False  # whether the observations' range was checked (once: it needs a sync)

    def step_fields(self) -> Dict[str, StepField]:
        fields = super().step_fields()
        if self.cfg.obs_recon_loss_weight > 0:
            fields["obs"] = StepField(observation=True)
        if self.cfg.action_reward_loss_weight > 0:
            fields["action_reward"] = StepField(action_axes=(0,))  # [A]: one reward per move
        return fields

    def record_step(self, venv: Any, idx: np.ndarray) -> Dict[str, np.ndarray]:
        if not self.cfg.action_reward_loss_weight > 0:
            return {}
        if not (hasattr(venv, "game") and hasattr(venv, "states")):
            raise ValueError(f"policy.action_reward_loss_weight={self.cfg.action_reward_loss_weight} tries every move "
                             f"of the collected positions on copies of the games, which needs a board-game env "
                             f"({type(venv).__name__} holds no game states): set it to 0")
        return {"action_reward": move_rewards(venv.game, venv.states[np.asarray(idx, dtype=np.int64)])}

    def _hook_aux_losses(self, batch: Any) -> AuxLosses:
        return _GroundingLosses(self, batch)

    def obs_recon(self, latent: torch.Tensor, obs: Any) -> torch.Tensor:
        """[Bt] binary cross-entropy of the decoded ``latent`` against the observations ``obs`` [Bt, ...] it
        stands for, mean over the observation's entries (which must lie in [0, 1]: board planes)."""
        target = (obs if isinstance(obs, torch.Tensor) else self.to_tensor(obs)).float()
        if not self._recon_checked:
            if target.numel() and (float(target.min()) < 0 or float(target.max()) > 1):
                raise ValueError(f"policy.obs_recon_loss_weight > 0 learns observations entry by entry with binary "
                                 f"cross-entropy, so they must lie in [0, 1] (board planes); got values in "
                                 f"[{float(target.min()):g}, {float(target.max()):g}]")
            self._recon_checked = True
        logits = self._unwrap(self.model).decode_observation(latent).float()
        return F.binary_cross_entropy_with_logits(logits, target.reshape(logits.shape),
                                                  reduction="none").flatten(1).mean(1)

    @staticmethod
    def extra_moves(rewards: torch.Tensor, legal: torch.Tensor) -> torch.Tensor:
        """[Bt, K] int64: per unrolled position, a rewarding legal move (uniform among them) half the time there is
        one, otherwise a uniformly random legal one (any move where nothing is legal: its loss is masked).
        ``rewards`` [Bt, K, A], ``legal`` [Bt, K, A]; drawn from torch's seeded CPU generator (checkpointed)."""
        legal = legal.float()
        legal = torch.where(legal.sum(-1, keepdim=True) > 0, legal, torch.ones_like(legal))
        win = legal * (rewards != 0).float()
        n_win = win.sum(-1, keepdim=True)
        uniform = legal / legal.sum(-1, keepdim=True)
        weights = torch.where(n_win > 0, 0.5 * uniform + 0.5 * win / n_win.clamp(min=1), uniform)
        return torch.multinomial(weights.flatten(0, 1), 1).view(weights.shape[:2])


class _GroundingLosses(AuxLosses):
    """The two grounding terms of one batch, accumulated along MuZero's unroll."""

    def __init__(self, policy: GroundedGumbelMuZeroPolicy, batch: Any) -> None:
        self.policy, self.batch = policy, batch
        cfg = policy.cfg
        self.mask = policy.to_tensor(batch.mask_unroll)  # [Bt, K+1]
        zeros = torch.zeros(self.mask.shape[0], device=policy.device)
        self.action_reward, self.recon = zeros, zeros
        if cfg.action_reward_loss_weight > 0:
            K = batch.actions.shape[1]
            rewards = torch.as_tensor(np.ascontiguousarray(batch.unrolled["action_reward"][:, :K]))  # [Bt, K, A]
            self.extra = policy.extra_moves(rewards, torch.as_tensor(batch.legal_mask[:, :K])).to(policy.device)
            self.rewards = policy.to_tensor(rewards.numpy())

    def on_dynamics_input(self, k: int, latent: torch.Tensor) -> None:
        policy = self.policy
        if not policy.cfg.action_reward_loss_weight > 0:
            return
        extra = self.extra[:, k]
        _, reward = policy._unwrap(policy.model).dynamics_step(latent, extra)
        loss = policy._reward_loss(reward, self.rewards[:, k].gather(1, extra[:, None]).squeeze(1))
        self.action_reward = self.action_reward + self.mask[:, k] * loss

    def on_latent(self, k: int, latent: torch.Tensor) -> None:
        policy = self.policy
        if not policy.cfg.obs_recon_loss_weight > 0:
            return
        if k == 0:
            self.recon = policy.obs_recon(latent, self.batch.obs)
        else:  # the move into position t+k was real where mask[:, k - 1]: its observation is stored
            self.recon = self.recon + self.mask[:, k - 1] * policy.obs_recon(latent, self.batch.unrolled["obs"][:, k])

    def terms(self) -> Dict[str, Tuple[float, torch.Tensor]]:
        cfg = self.policy.cfg
        return dict(action_reward=(cfg.action_reward_loss_weight, self.action_reward),
                    obs_recon=(cfg.obs_recon_loss_weight, self.recon))
