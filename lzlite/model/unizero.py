"""UniZero world model: a causal transformer over interleaved observation and action tokens.

UniZero (Pu et al., 2024) replaces MuZero's recurrent dynamics g(latent, action) by a transformer:
an encoder turns each observation into one latent token that describes only that observation; the
history lives in the transformer's context; heads on the hidden states predict the next latent,
the reward, the policy and the value. Search extends the context by (action, predicted latent)
tokens and reuses the keys/values of the context (:class:`lzlite.model.transformer.KVCache`).

Token sequence (time step t contributes two tokens, position index = token index)::

    obs_0, act_0, obs_1, act_1, ..., obs_t          (2t + 1 tokens)

* obs token  = encode(obs_t) in [B, E] (after the latent normalisation), a predicted latent in search.
* act token  = a learned embedding of the action, [B, E].
* hidden at an obs token -> policy logits [A] and value (support logits [V]) of that state.
* hidden at an act token -> next latent [E] (normalised like encode) and reward [V] of the move.

Latent normalisation (``latent_norm``): 'simnorm' (the paper's choice: softmax over groups of
``simnorm_group_size`` features, so each group is a point on a simplex), 'layernorm' (LayerNorm
without affine) or 'none'. Both the encoder output and the predicted next latent pass through it.

Values are from the view of the player to move at the obs token (the lzlite sign convention); the
network itself is sign-agnostic, the targets decide.
"""
from __future__ import annotations

from typing import Any, Dict, Mapping, NamedTuple, Optional, Sequence, Tuple, Union

import torch
import torch.nn.functional as F
from easydict import EasyDict
from torch import nn

from lzlite.config import ConfigError, Range, at_least
from lzlite.model.common import MLP, ResBlock, flat_size
from lzlite.model.support import decode_scalar, scalar_to_support, support_size, zero_logits
from lzlite.model.transformer import GPT, KVCache
from lzlite.registry import MODEL_REGISTRY

__all__ = ["UniZeroModel", "UZNetworkOutput", "SegmentOutput", "KVCache"]

LATENT_NORMS = ("simnorm", "layernorm", "none")


class UZNetworkOutput(NamedTuple):
    """One inference call; the first four fields match :class:`lzlite.model.muzero.MZNetworkOutput`.

    Attributes:
        value: [B, V] support logits (categorical) or [B, 1]; the value of the state.
        reward: [B, V] / [B, 1]; the reward of the move into the state (``initial_inference``: logits
            that decode to exactly 0, or zeros [B, 1]).
        policy_logits: [B, A] over the full action space.
        latent_state: [B, E] the state's latent (encoded at the root, predicted after a move).
        cache: the KV cache of the context INCLUDING this state's obs token; pass it to
            ``recurrent_inference`` to step on.
    """

    value: torch.Tensor
    reward: torch.Tensor
    policy_logits: torch.Tensor
    latent_state: torch.Tensor
    cache: KVCache


class SegmentOutput(NamedTuple):
    """Teacher-forced predictions over a segment of T moves (``forward_segment``).

    Attributes:
        policy_logits: [B, T+1, A], at obs tokens 0..T.
        value: [B, T+1, V|1], at obs tokens 0..T.
        reward: [B, T, V|1], at act tokens 0..T-1 (the move t -> t+1).
        next_latent: [B, T, E], predicted latent of obs t+1 (at act token t).
        obs_latent: [B, T+1, E], encode(obs_t) (with gradient; detach it for a target).
    """

    policy_logits: torch.Tensor
    value: torch.Tensor
    reward: torch.Tensor
    next_latent: torch.Tensor
    obs_latent: torch.Tensor


class SimNorm(nn.Module):
    """Softmax over consecutive groups of ``group_size`` features: [..., E] -> [..., E]."""

    def __init__(self, group_size: int) -> None:
        super().__init__()
        self.group_size = group_size

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        shape = x.shape
        return torch.softmax(x.reshape(*shape[:-1], -1, self.group_size), dim=-1).reshape(shape)


@MODEL_REGISTRY.register("UniZeroModel")
class UniZeroModel(nn.Module):
    """UniZero transformer world model with a conv ('conv', boards [C, H, W]) or MLP ('mlp', vectors) encoder.

    Keyword arguments are the keys of :meth:`default_config`, so ``UniZeroModel(**cfg.model)`` works.
    """

    @staticmethod
    def default_config() -> EasyDict:
        """Defaults sized for tic-tac-toe on a CPU; every key is documented beside its value."""
        return EasyDict(dict(
            model_type="conv",  # encoder: 'conv' (observation_shape [C, H, W]) or 'mlp' (flattened vectors)
            observation_shape=[3, 3, 3],  # [C, H, W] for 'conv'; an int D or any shape (flattened) for 'mlp'
            action_space_size=9,  # A: number of discrete actions (full action space, legal or not)
            embed_dim=64,  # E: token width = latent width; divisible by num_heads and simnorm_group_size
            num_layers=2,  # transformer blocks
            num_heads=2,  # attention heads per block
            # Context budget in tokens: a state after k context steps sits at token 2k, so training needs
            # 2 * (history + unroll) + 1 and search 2 * (history + num_simulations) + 1 (worst-case depth).
            max_tokens=128,  # position table size; >= 2 * (history_steps + max(unroll_steps, num_simulations)) + 1
            dropout=0.0,  # dropout inside the transformer (train mode only)
            encoder_channels=16,  # 'conv': channels of the 3x3 conv stem and its residual block
            encoder_hidden=64,  # 'mlp': hidden width of the observation MLP
            head_hidden=64,  # hidden width of every prediction head MLP
            support_scale=10,  # S: value/reward support -S..S (V = 2S+1 bins) after h(x)
            categorical_distribution=True,  # heads predict support logits [.., V]; False: scalars [.., 1]
            latent_norm="simnorm",  # 'simnorm' | 'layernorm' | 'none': applied to encoded and predicted latents
            simnorm_group_size=8,  # SimNorm group width (embed_dim must be a multiple)
            last_linear_layer_init_zero=True,  # zero the last Linear of policy/value/reward heads (uniform, 0)
            latent_loss_weight=1.0,  # weight of the latent consistency loss (1 - cosine to encode(obs_{t+1}))
            reward_loss_weight=1.0,  # weight of the reward cross-entropy (MSE for scalar heads)
            policy_loss_weight=1.0,  # weight of the policy cross-entropy
            value_loss_weight=1.0,  # weight of the value cross-entropy (MSE for scalar heads)
        ))

    @staticmethod
    def config_ranges() -> Dict[str, Range]:
        """The allowed values of the numeric keys of ``default_config`` (``lzlite/config/ranges.py``); the policy
        checks max_tokens against the depth of its segments and searches (``UniZeroPolicy.check_config``)."""
        return dict(
            action_space_size=at_least(1), embed_dim=at_least(1),
            num_layers=at_least(1),  # a world model without a transformer block reads no context
            num_heads=at_least(1), max_tokens=at_least(1), dropout=Range(0, 1, high_open=True),
            encoder_channels=at_least(1), encoder_hidden=at_least(1), head_hidden=at_least(1),
            support_scale=at_least(1), simnorm_group_size=at_least(1), latent_loss_weight=at_least(0),
            reward_loss_weight=at_least(0), policy_loss_weight=at_least(0), value_loss_weight=at_least(0),
        )

    @classmethod
    def check_config(cls, cfg: Mapping, path: str) -> None:
        """Token width: attention heads and SimNorm groups split embed_dim evenly."""
        if cfg.embed_dim % cfg.num_heads:
            raise ConfigError(f"config key '{path}.embed_dim' must be a multiple of {path}.num_heads={cfg.num_heads} "
                              f"(each head takes embed_dim / num_heads channels), got {cfg.embed_dim}")
        if cfg.latent_norm == "simnorm" and cfg.embed_dim % cfg.simnorm_group_size:
            raise ConfigError(f"config key '{path}.embed_dim' must be a multiple of {path}.simnorm_group_size="
                              f"{cfg.simnorm_group_size} for latent_norm='simnorm', got {cfg.embed_dim}")

    def __init__(
        self,
        model_type: str = "conv",
        observation_shape: Union[int, Sequence[int]] = (3, 3, 3),
        action_space_size: int = 9,
        embed_dim: int = 64,
        num_layers: int = 2,
        num_heads: int = 2,
        max_tokens: int = 128,
        dropout: float = 0.0,
        encoder_channels: int = 16,
        encoder_hidden: int = 64,
        head_hidden: int = 64,
        support_scale: int = 10,
        categorical_distribution: bool = True,
        latent_norm: str = "simnorm",
        simnorm_group_size: int = 8,
        last_linear_layer_init_zero: bool = True,
        latent_loss_weight: float = 1.0,
        reward_loss_weight: float = 1.0,
        policy_loss_weight: float = 1.0,
        value_loss_weight: float = 1.0,
    ) -> None:
        super().__init__()
        if model_type not in ("conv", "mlp"):
            raise ValueError(f"model_type must be 'conv' or 'mlp', got {model_type!r}")
        if not isinstance(action_space_size, int) or action_space_size < 1:
            raise ValueError(f"action_space_size must be a positive int, got {action_space_size!r}")
        if latent_norm not in LATENT_NORMS:
            raise ValueError(f"latent_norm must be one of {LATENT_NORMS}, got {latent_norm!r}")
        if latent_norm == "simnorm" and embed_dim % simnorm_group_size != 0:
            raise ValueError(f"embed_dim ({embed_dim}) must be a multiple of simnorm_group_size "
                             f"({simnorm_group_size}) for latent_norm='simnorm'")
        if isinstance(observation_shape, int):
            observation_shape = (observation_shape,)
        self.observation_shape = tuple(int(s) for s in observation_shape)
        if model_type == "conv" and len(self.observation_shape) != 3:
            raise ValueError(f"model_type='conv' needs observation_shape [C, H, W], got {list(observation_shape)}; "
                             f"use model_type='mlp' for vector observations")
        self.model_type = model_type
        self.action_space_size = action_space_size
        self.embed_dim = embed_dim
        self.support_scale = support_scale
        self.categorical_distribution = categorical_distribution
        self.value_support_size = support_size(support_scale) if categorical_distribution else 1
        self.loss_weights = dict(latent=latent_loss_weight, reward=reward_loss_weight,
                                 policy=policy_loss_weight, value=value_loss_weight)

        if model_type == "conv":
            c, h, w = self.observation_shape
            # LN-style norms only: batch norm would make a row's latent depend on the rest of the batch.
            self.encoder = nn.Sequential(
                nn.Conv2d(c, encoder_channels, 3, padding=1), nn.GroupNorm(1, encoder_channels), nn.GELU(),
                ResBlock(encoder_channels, "LN", "gelu"), nn.Flatten(), nn.Linear(encoder_channels * h * w, embed_dim))
        else:
            self.encoder = MLP(flat_size(self.observation_shape), [encoder_hidden], embed_dim, "LN", "gelu")
        if latent_norm == "simnorm":
            self.latent_norm: nn.Module = SimNorm(simnorm_group_size)
        elif latent_norm == "layernorm":
            self.latent_norm = nn.LayerNorm(embed_dim, elementwise_affine=False)
        else:
            self.latent_norm = nn.Identity()
        self.action_embedding = nn.Embedding(action_space_size, embed_dim)
        self.transformer = GPT(embed_dim, num_layers, num_heads, max_tokens, dropout)
        zero = last_linear_layer_init_zero
        v = self.value_support_size
        self.policy_head = MLP(embed_dim, [head_hidden], action_space_size, "none", "gelu", zero_init_last=zero)
        self.value_head = MLP(embed_dim, [head_hidden], v, "none", "gelu", zero_init_last=zero)
        self.reward_head = MLP(embed_dim, [head_hidden], v, "none", "gelu", zero_init_last=zero)
        self.latent_head = MLP(embed_dim, [head_hidden], embed_dim, "none", "gelu")

    # ------------------------------------------------------------------ tokens and heads
    def encode(self, obs: Any) -> torch.Tensor:
        """Observations [B, *observation_shape] (or flat [B, prod]) -> normalised latents [B, E]."""
        x = self._prepare_obs(obs, lead=1, name="obs")
        return self._encode_flat(x)

    def embed_action(self, action: Any, batch_shape: Tuple[int, ...]) -> torch.Tensor:
        """Integer actions of shape ``batch_shape`` (e.g. [B] or [B, T]) -> action tokens [*batch_shape, E]."""
        a = self._prepare_action(action, batch_shape)
        return self.action_embedding(a)

    def predict_at_obs(self, hidden: torch.Tensor) -> Tuple[torch.Tensor, torch.Tensor]:
        """Hidden states at obs tokens [..., E] -> (policy_logits [..., A], value [..., V|1])."""
        return self.policy_head(hidden), self.value_head(hidden)

    def predict_at_action(self, hidden: torch.Tensor) -> Tuple[torch.Tensor, torch.Tensor]:
        """Hidden states at act tokens [..., E] -> (next_latent [..., E] normalised, reward [..., V|1])."""
        return self.latent_norm(self.latent_head(hidden)), self.reward_head(hidden)

    def context_tokens(self, obs: Any, history: Optional[Tuple[Any, Any]] = None) -> Tuple[torch.Tensor, torch.Tensor]:
        """The context of a root: tokens [B, 2 * Hh + 1, E] and the current latent [B, E].

        Args:
            obs: [B, *observation_shape], the current observation.
            history: None, or (past_obs [B, Hh, *observation_shape], past_actions int [B, Hh]) with
                past_actions[:, i] the move played after past_obs[:, i] (the last one leads to ``obs``).
        """
        latent = self.encode(obs)
        if history is None:
            return latent[:, None], latent
        past_obs, past_actions = history
        b = latent.shape[0]
        x = self._prepare_obs(past_obs, lead=2, name="history obs")
        if x.shape[0] != b:
            raise ValueError(f"history obs has batch size {x.shape[0]} but obs has {b}")
        hh = x.shape[1]
        if hh == 0:
            return latent[:, None], latent
        past_latent = self._encode_flat(x.reshape(b * hh, *x.shape[2:])).view(b, hh, -1)
        act = self.embed_action(past_actions, (b, hh))
        pairs = torch.stack([past_latent, act], dim=2).reshape(b, 2 * hh, -1)
        return torch.cat([pairs, latent[:, None]], dim=1), latent

    # ------------------------------------------------------------------ inference
    def initial_inference(self, obs: Any, history: Optional[Tuple[Any, Any]] = None) -> UZNetworkOutput:
        """Encode the root (with optional history as context) and predict there.

        Args:
            obs: [B, *observation_shape] (or flat [B, prod]); numpy or tensor, any numeric dtype.
            history: optional (past_obs [B, Hh, *observation_shape], past_actions int [B, Hh]).

        Returns:
            UZNetworkOutput: value [B, V|1], reward "zero" [B, V|1], policy_logits [B, A],
            latent_state [B, E], cache over the 2 * Hh + 1 context tokens.
        """
        tokens, latent = self.context_tokens(obs, history)
        hidden, cache = self.transformer(tokens)
        policy_logits, value = self.predict_at_obs(hidden[:, -1])
        return UZNetworkOutput(value, self._zero_reward(latent.shape[0], value), policy_logits, latent, cache)

    def recurrent_inference(self, cache: KVCache, action: Any) -> UZNetworkOutput:
        """Step the world model: append the action token, predict the next latent, append it, predict.

        Costs two incremental 1-token transformer passes over the cache (the latent token needs the
        prediction made at the action token), never a pass over the whole context.

        Args:
            cache: from a previous ``initial_inference`` / ``recurrent_inference`` (its ``cache`` field).
            action: int [B] action indices in [0, A).

        Returns:
            UZNetworkOutput: value [B, V|1], reward [B, V|1] of the move, policy_logits [B, A],
            latent_state [B, E] (the predicted next latent), cache extended by the 2 tokens.
        """
        if not isinstance(cache, KVCache):
            raise TypeError(f"recurrent_inference needs the KVCache from a previous inference (out.cache), "
                            f"got {type(cache).__name__}")
        b = cache.batch_size
        hidden, cache = self.transformer(self.embed_action(action, (b,))[:, None], cache)
        next_latent, reward = self.predict_at_action(hidden[:, 0])
        hidden, cache = self.transformer(next_latent[:, None], cache)
        policy_logits, value = self.predict_at_obs(hidden[:, 0])
        return UZNetworkOutput(value, reward, policy_logits, next_latent, cache)

    def to_scalar(self, head_output: torch.Tensor) -> torch.Tensor:
        """Value or reward head output ([B, V] logits or [B, 1]) -> scalars [B]."""
        return decode_scalar(head_output, self.support_scale, self.categorical_distribution)

    # ------------------------------------------------------------------ training
    def forward_segment(self, obs_seq: Any, actions: Any) -> SegmentOutput:
        """Teacher-forced predictions over a segment in ONE causal pass of 2T + 1 tokens.

        Args:
            obs_seq: [B, T+1, *observation_shape], the observations o_0..o_T.
            actions: int [B, T], a_t played after o_t.
        """
        x = self._prepare_obs(obs_seq, lead=2, name="obs_seq")
        b, t1 = x.shape[:2]
        t = t1 - 1
        if t < 0:
            raise ValueError("obs_seq needs at least one observation (T + 1 >= 1)")
        obs_latent = self._encode_flat(x.reshape(b * t1, *x.shape[2:])).view(b, t1, -1)
        act = self.embed_action(actions, (b, t))
        pairs = torch.stack([obs_latent[:, :t], act], dim=2).reshape(b, 2 * t, -1)
        hidden, _ = self.transformer(torch.cat([pairs, obs_latent[:, t:]], dim=1))
        policy_logits, value = self.predict_at_obs(hidden[:, 0::2])
        next_latent, reward = self.predict_at_action(hidden[:, 1::2])
        return SegmentOutput(policy_logits, value, reward, next_latent, obs_latent)

    def compute_loss(self, obs_seq: Any, actions: Any, target_value: torch.Tensor, target_reward: torch.Tensor,
                     target_policy: torch.Tensor, mask: torch.Tensor, weights: Optional[torch.Tensor] = None
                     ) -> Tuple[torch.Tensor, Dict[str, float]]:
        """The UniZero joint loss over a segment (teacher forcing, one causal forward pass).

        Per sample, each term is averaged over its valid positions: policy and value over obs tokens t
        with mask[t]; reward and latent over moves t -> t+1 with mask[t+1]. The latent term is
        ``1 - cosine(predicted next latent, encode(o_{t+1}).detach())`` (stop-gradient target).
        Categorical heads use cross-entropy against ``scalar_to_support`` targets; scalar heads MSE.

        Args:
            obs_seq: [B, T+1, *observation_shape].
            actions: int [B, T].
            target_value: [B, T+1] scalar value targets (player-to-move view at o_t).
            target_reward: [B, T] scalar reward of move t.
            target_policy: [B, T+1, A] probabilities.
            mask: [B, T+1] 1 for real steps, 0 for padding past the episode end.
            weights: [B] importance-sampling weights, or None (all ones).

        Returns:
            (loss: scalar tensor = mean_b weights[b] * sum_k w_k * term_k[b],
             stats: floats 'loss', 'latent_loss', 'reward_loss', 'policy_loss', 'value_loss',
             'policy_entropy' (unweighted batch means of the per-sample terms)).
        """
        out = self.forward_segment(obs_seq, actions)
        b, t1, a = out.policy_logits.shape
        ref = out.policy_logits
        tv = self._check_target(target_value, (b, t1), "target_value", ref)
        tr = self._check_target(target_reward, (b, t1 - 1), "target_reward", ref)
        tp = self._check_target(target_policy, (b, t1, a), "target_policy", ref)
        m = self._check_target(mask, (b, t1), "mask", ref)
        w = torch.ones(b, device=ref.device, dtype=ref.dtype) if weights is None else \
            self._check_target(weights, (b,), "weights", ref)

        log_pi = F.log_softmax(out.policy_logits, dim=-1)
        policy_ce = -(tp * log_pi).sum(-1)
        value_l = self._scalar_loss(out.value, tv)
        reward_l = self._scalar_loss(out.reward, tr)
        latent_l = 1.0 - F.cosine_similarity(out.next_latent, out.obs_latent[:, 1:].detach(), dim=-1, eps=1e-8)

        def per_sample(term: torch.Tensor, mk: torch.Tensor) -> torch.Tensor:
            return (term * mk).sum(1) / mk.sum(1).clamp_min(1.0)

        m_tr = m[:, 1:]
        terms = dict(latent=per_sample(latent_l, m_tr), reward=per_sample(reward_l, m_tr),
                     policy=per_sample(policy_ce, m), value=per_sample(value_l, m))
        total = sum(self.loss_weights[k] * v for k, v in terms.items())
        loss = (w * total).mean()
        with torch.no_grad():
            entropy = per_sample(-(log_pi.exp() * log_pi).sum(-1), m)
            stats = {f"{k}_loss": float(v.mean()) for k, v in terms.items()}
            stats.update(loss=float(loss.detach()), policy_entropy=float(entropy.mean()))
        return loss, stats

    # ------------------------------------------------------------------ helpers
    def _scalar_loss(self, head: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
        if self.categorical_distribution:
            support = scalar_to_support(target, self.support_scale)
            return -(support * F.log_softmax(head, dim=-1)).sum(-1)
        return (head.squeeze(-1) - target) ** 2

    def _zero_reward(self, batch: int, like: torch.Tensor) -> torch.Tensor:
        if self.categorical_distribution:
            return zero_logits(batch, self.support_scale, device=like.device, dtype=like.dtype)
        return torch.zeros(batch, 1, device=like.device, dtype=like.dtype)

    def _encode_flat(self, x: torch.Tensor) -> torch.Tensor:
        """[N, *observation_shape] float -> [N, E]."""
        if self.model_type == "mlp":
            x = x.reshape(x.shape[0], -1)
        return self.latent_norm(self.encoder(x))

    def _param_like(self) -> torch.Tensor:
        return self.action_embedding.weight

    def _prepare_obs(self, obs: Any, lead: int, name: str) -> torch.Tensor:
        """Validate and convert observations with ``lead`` batch axes to float on the model's device."""
        ref = self._param_like()
        x = obs if isinstance(obs, torch.Tensor) else torch.as_tensor(obs)
        x = x.to(device=ref.device, dtype=ref.dtype)
        flat = flat_size(self.observation_shape)
        if x.dim() == lead + 1 and x.shape[-1] == flat:
            x = x.reshape(*x.shape[:lead], *self.observation_shape)
        if x.dim() != lead + len(self.observation_shape) or tuple(x.shape[lead:]) != self.observation_shape:
            axes = "B" if lead == 1 else "B, T"
            raise ValueError(f"{name} must have shape [{axes}, {', '.join(map(str, self.observation_shape))}] "
                             f"(observation_shape) or [{axes}, {flat}], got {tuple(x.shape)}")
        return x

    def _prepare_action(self, action: Any, batch_shape: Tuple[int, ...]) -> torch.Tensor:
        ref = self._param_like()
        a = action if isinstance(action, torch.Tensor) else torch.as_tensor(action)
        a = a.to(ref.device)
        if len(batch_shape) == 1 and a.dim() == 2 and a.shape[1] == 1:
            a = a[:, 0]
        if tuple(a.shape) != tuple(batch_shape):
            raise ValueError(f"actions must have shape {list(batch_shape)}, got {list(a.shape)}")
        if a.is_floating_point() or a.dtype == torch.bool:
            raise ValueError(f"actions must be integer indices (int64), got dtype {a.dtype}")
        # Range check only on CPU: on an accelerator it would force a device sync per call.
        if a.device.type == "cpu" and a.numel() and (int(a.min()) < 0 or int(a.max()) >= self.action_space_size):
            raise ValueError(f"action indices must lie in [0, {self.action_space_size}), got min {int(a.min())} "
                             f"max {int(a.max())}")
        return a.long()

    def _check_target(self, x: Any, shape: Tuple[int, ...], name: str, like: torch.Tensor) -> torch.Tensor:
        t = x if isinstance(x, torch.Tensor) else torch.as_tensor(x)
        if tuple(t.shape) != shape:
            raise ValueError(f"compute_loss: {name} must have shape {list(shape)}, got {list(t.shape)}")
        return t.to(device=like.device, dtype=like.dtype)
