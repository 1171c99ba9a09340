"""UniZero (Pu et al., 2024): a transformer world model trained on whole segments, searched with a KV cache.

The policy is the shared template plus four choices:

* model: :class:`lzlite.model.unizero.UniZeroModel` (both 'conv' and 'mlp' encoders);
* adapter: :class:`lzlite.mcts.unizero_adapter.UniZeroAdapter`; the root context is the current
  observation alone (one token), so search and training agree: a training segment also starts from
  a bare observation at position 0 and unrolls ``num_unroll_steps`` moves;
* loss: the model's joint loss over the sampled segment (latent consistency, reward, policy, value;
  weights are ``policy.model.*_loss_weight``), no priorities;
* data: the 'segment_collector' (fixed-length padded segments from games that keep running) and the
  'unizero_buffer' (segment samples, scheduled reanalyze, age-weighted sampling).

``after_collect`` reanalyzes the ``reanalyze_num_segments`` stalest segments of the buffer every
``reanalyze_interval`` learner steps with the TARGET network (search without root noise).
"""
from __future__ import annotations

from typing import Any, Callable, Dict, Optional, Tuple

import numpy as np
import torch
from easydict import EasyDict

from lzlite.config import ConfigError, Range, at_least
from lzlite.mcts.unizero_adapter import UniZeroAdapter
from lzlite.model.unizero import UniZeroModel
from lzlite.policy.base import Policy
from lzlite.registry import POLICY_REGISTRY

__all__ = ["UniZeroPolicy"]


def _segment_and_token_error(cfg: EasyDict, max_tokens: int, path: str) -> Optional[str]:
    """Why a UniZero policy section cannot train or search with a model of ``max_tokens`` positions, or None.

    The dynamics learn from segments (num_unroll_steps >= 1); a state after k moves sits at token 2k, so a
    segment needs 2 * num_unroll_steps + 1 tokens and a search 2 * S + 1 (its worst-case depth is S, the collect's
    num_simulations or the evaluation's eval_num_simulations).
    """
    if int(cfg.num_unroll_steps) < 1:
        return (f"{path}.num_unroll_steps must be >= 1 for UniZero (the dynamics are trained on segments), "
                f"got {cfg.num_unroll_steps}")
    depth = max(int(cfg.num_unroll_steps), int(cfg.num_simulations), int(cfg.get("eval_num_simulations") or 0))
    if 2 * depth + 1 > max_tokens:
        return (f"{path}.model.max_tokens={max_tokens} is too small: a training segment of num_unroll_steps="
                f"{cfg.num_unroll_steps} moves or a search of num_simulations={cfg.num_simulations} (eval_num_"
                f"simulations={cfg.get('eval_num_simulations')}; worst-case depth) needs 2 * {depth} + 1 = "
                f"{2 * depth + 1} tokens; raise max_tokens")
    return None


@POLICY_REGISTRY.register("unizero")
class UniZeroPolicy(Policy):
    """UniZero; see the module docstring."""

    entry = "train_unizero_segment"
    model_classes = {"conv": "UniZeroModel", "mlp": "UniZeroModel"}
    collector_type = "segment_collector"
    buffer_type = "unizero_buffer"

    @classmethod
    def default_config(cls) -> EasyDict:
        cfg = super().default_config()
        cfg.use_kv_cache = True  # search reuses keys/values (one incremental step per simulation)
        cfg.reanalyze_interval = 100  # learner steps between scheduled reanalyzes, run after a collect (0: never)
        cfg.reanalyze_num_segments = 64  # stalest segments refreshed per scheduled reanalyze
        cfg.reanalyze_batch_size = 256  # roots per batched reanalyze search
        return cfg

    @classmethod
    def config_ranges(cls) -> Dict[str, Range]:
        return dict(super().config_ranges(), reanalyze_interval=at_least(0), reanalyze_num_segments=at_least(1),
                    reanalyze_batch_size=at_least(1))

    @classmethod
    def check_config(cls, cfg: EasyDict, path: str) -> None:
        super().check_config(cfg, path)
        error = _segment_and_token_error(cfg, int(cfg.model.max_tokens), path)
        if error:
            raise ConfigError(error)

    def __init__(self, cfg: EasyDict, model: Optional[torch.nn.Module] = None, value_sign: float = -1.0) -> None:
        super().__init__(cfg, model=model, value_sign=value_sign)
        # the model built (or passed in) decides the token budget, not cfg.model
        error = _segment_and_token_error(cfg, int(self._unwrap(self.model).transformer.max_tokens), "policy")
        if error:
            raise ValueError(error)
        for key in ("reanalyze_interval",):
            if int(cfg[key]) < 0:
                raise ValueError(f"{key} must be >= 0 (0: never), got {cfg[key]}")
        for key in ("reanalyze_num_segments", "reanalyze_batch_size"):
            if int(cfg[key]) < 1:
                raise ValueError(f"{key} must be >= 1, got {cfg[key]}")
        self._last_reanalyze_iter = 0
        self._reanalyze_rng = np.random.default_rng(0)  # only breaks sampling ties: no noise in reanalyze
        #: stats of the most recent scheduled reanalyze (None before the first)
        self.last_reanalyze: Optional[Dict[str, float]] = None

    # ------------------------------------------------------------------ hooks
    def _hook_make_model(self) -> torch.nn.Module:
        mcfg = dict(self.cfg.model)
        if mcfg.get("model_type") not in self.model_classes:
            raise ValueError(f"policy.model.model_type must be one of {sorted(self.model_classes)}, "
                             f"got {mcfg.get('model_type')!r}")
        own = set(UniZeroModel.default_config())
        return UniZeroModel(**{k: v for k, v in mcfg.items() if k in own})  # model_type included

    def _hook_make_adapter(self, model: torch.nn.Module, venv: Any) -> Any:
        return UniZeroAdapter(model, self.device, use_kv_cache=bool(self.cfg.use_kv_cache))

    def _hook_root_input(self, venv: Any, idx: np.ndarray) -> Any:
        return self.to_tensor(venv.observe()[idx])

    def _hook_loss(self, batch: Any) -> Tuple[torch.Tensor, Dict[str, float], Optional[np.ndarray]]:
        if getattr(batch, "obs_seq", None) is None:
            raise ValueError("UniZero trains on segments: the batch has no obs_seq; use the 'unizero_buffer' "
                             "replay buffer (create_config.replay_buffer.type)")
        loss, stats = self.model.compute_loss(
            self.to_tensor(batch.obs_seq),
            self.to_tensor(batch.actions, torch.int64),
            self.to_tensor(batch.target_value),
            self.to_tensor(batch.target_reward),
            self.to_tensor(batch.target_policy),
            self.to_tensor(batch.mask_state),
            self.to_tensor(batch.weights),
        )
        stats = dict(stats, target_value=float(np.mean(batch.target_value[:, 0])))
        return loss, stats, None

    # ------------------------------------------------------------------ reanalyze
    def search_targets(self, obs: np.ndarray, legal_mask: np.ndarray,
                       model: Optional[torch.nn.Module] = None) -> Tuple[np.ndarray, np.ndarray]:
        """Root values [M] and policy targets [M, A] of M observations, searched without root noise.

        Args:
            obs: [M, *obs_shape] observations.
            legal_mask: bool [M, A] legal actions (every row needs one).
            model: the network to search with (default: the target network).
        """
        model = self.target_model if model is None else model
        model.eval()
        adapter = UniZeroAdapter(model, self.device, use_kv_cache=bool(self.cfg.use_kv_cache))
        bs = int(self.cfg.reanalyze_batch_size)
        values, policies = [], []
        for s in range(0, len(obs), bs):
            out = self._search_roots(adapter, self.to_tensor(obs[s:s + bs]), legal_mask[s:s + bs],
                                     self._reanalyze_rng, add_noise=False)
            values.append(out.root_value.astype(np.float32))
            policies.append(self.policy_target(out))
        A = self._unwrap(self.model).action_space_size
        if not values:
            return np.zeros(0, np.float32), np.zeros((0, A), np.float32)
        return np.concatenate(values), np.concatenate(policies)

    def after_collect(self, buffer: Any, train_iter: int) -> None:
        """Reanalyze the stalest segments when ``reanalyze_interval`` learner steps passed since the last time."""
        interval = int(self.cfg.reanalyze_interval)
        if interval == 0 or train_iter - self._last_reanalyze_iter < interval or buffer.num_transitions == 0:
            return
        if not hasattr(buffer, "reanalyze_segments"):
            raise TypeError(f"UniZero's scheduled reanalyze needs the 'unizero_buffer' (reanalyze_segments), got "
                            f"{type(buffer).__name__}; set reanalyze_interval=0 or use replay_buffer.type "
                            f"'unizero_buffer'")
        self._last_reanalyze_iter = int(train_iter)
        self.last_reanalyze = buffer.reanalyze_segments(self.search_targets, int(self.cfg.reanalyze_num_segments))

    def reanalyze_fn(self) -> Optional[Callable[[np.ndarray, np.ndarray], Tuple[np.ndarray, Optional[np.ndarray]]]]:
        """Per-minibatch reanalyze (``reanalyze_ratio > 0``): bootstrap values by target-network search
        from the stored positions (their legal masks at the root); values only."""

        def fn(obs: np.ndarray, legal_mask: np.ndarray) -> Tuple[np.ndarray, Optional[np.ndarray]]:
            values, _ = self.search_targets(obs, np.asarray(legal_mask, bool))
            return values, None

        return fn

    # The schedule is part of the training state, so a resumed run reanalyzes when the original would.
    def state_dict(self) -> Dict[str, Any]:
        state = super().state_dict()
        state["last_reanalyze_iter"] = self._last_reanalyze_iter
        return state

    def load_state_dict(self, state: Dict[str, Any]) -> None:
        super().load_state_dict(state)
        self._last_reanalyze_iter = int(state.get("last_reanalyze_iter", 0))
