"""MuZero networks: representation h, dynamics g, prediction f (LightZero-compatible API).

Two variants share one inference API (``_MuZeroBase``):

* ``MuZeroModel``: conv residual nets over board planes [B, C, H, W]; the action enters the dynamics
  as extra planes.
* ``MuZeroModelMLP``: MLPs over vector observations [B, D] (e.g. CartPole, D = 4); the action enters
  as a one-hot vector.

``initial_inference(obs)`` runs h then f; ``recurrent_inference(latent, action)`` runs g then f.
Both return an :class:`MZNetworkOutput`. Heads output support logits [B, V] (``V = 2 *
support_scale + 1``, see :mod:`lzlite.model.support`) when ``categorical_distribution`` is true,
else raw scalars [B, 1]; :meth:`_MuZeroBase.to_scalar` turns either into [B].

Values are from the view of the player to move in the state the latent stands for (the lzlite sign
convention); the network itself is sign-agnostic, the targets decide.
"""
from __future__ import annotations

from typing import Any, Dict, Mapping, NamedTuple, Optional, Sequence, Tuple, Union

import torch
from easydict import EasyDict
from torch import nn

from lzlite.config import ConfigError, Range, at_least
from lzlite.model.common import (
    MLP,
    ConvHead,
    ConvTrunk,
    ResBlock,
    flat_size,
    make_activation,
    min_max_normalize,
    norm_2d,
)
from lzlite.model.support import decode_scalar, support_size, zero_logits
from lzlite.registry import MODEL_REGISTRY

__all__ = ["MZNetworkOutput", "MuZeroModel", "MuZeroModelMLP"]


class MZNetworkOutput(NamedTuple):
    """One batched network call, as the search adapter reads it.

    Attributes:
        value: [B, V] support logits (categorical) or [B, 1] scalars; the value of the state.
        reward: [B, V] / [B, 1]; the reward of the transition into the state. At the root
            (``initial_inference``) there is no transition: categorical models return logits whose
            softmax is one-hot on the middle bin (decoding to exactly 0), scalar models zeros [B, 1].
        policy_logits: [B, A] unnormalised prior logits over the full action space (mask illegal
            actions outside the model).
        latent_state: [B, C, H, W] (conv) or [B, L] (MLP); feed back into ``recurrent_inference``.
    """

    value: torch.Tensor
    reward: torch.Tensor
    policy_logits: torch.Tensor
    latent_state: torch.Tensor


# Keys shared by both variants; each line documents its key (configs are strict, see lzlite.config).
_SHARED_DEFAULTS = dict(
    action_space_size=9,  # A: number of discrete actions (full action space, legal or not)
    fc_reward_layers=[32],  # hidden widths of the reward head MLP
    fc_value_layers=[32],  # hidden widths of the value head MLP
    fc_policy_layers=[32],  # hidden widths of the policy head MLP
    support_scale=300,  # S: value/reward support is -S..S (V = 2S+1 bins) after h(x); LightZero 300, board games ~10
    categorical_distribution=True,  # heads predict support logits [B, V]; False: scalar heads [B, 1]
    support_transform=True,  # two-hot h(x) (MuZero); False: two-hot x itself, for values in [-S, S] (board games, S=1)
    last_linear_layer_init_zero=True,  # zero the last Linear of each head: uniform prior, zero value at init
    state_norm=False,  # min-max normalise every latent into [0, 1] per sample (MuZero appendix G)
    self_supervised_learning_loss=False,  # build the projection/prediction heads used by project() (EfficientZero)
    proj_hid=256,  # projection MLP hidden width (LightZero: 1024)
    proj_out=256,  # projection output width (LightZero: 1024)
    pred_hid=128,  # SimSiam prediction head hidden width (LightZero: 512)
    pred_out=256,  # SimSiam prediction head output width; must equal proj_out
    observation_decoder=False,  # build the decoder decode_observation() uses (policy.obs_recon_loss_weight)
    norm_type="BN",  # 'BN' | 'LN' | 'none'; zoo MuZero configs use 'LN' (BN stats mix root and unrolled latents)
    activation="relu",  # 'relu' | 'gelu' | 'silu' | 'elu' | 'leaky_relu' | 'tanh' (or an nn.Module in code)
    discrete_action_encoding_type="one_hot",  # one_hot | not_one_hot (a / A) | spatial (conv: cell or column plane)
    image_channel=None,  # accepted for LightZero configs and ignored: observation_shape already says it
    frame_stack_num=1,  # accepted for LightZero configs and ignored: stack frames into observation_shape
)
# the allowed values of the numeric keys of _SHARED_DEFAULTS (lzlite/config/ranges.py)
_SHARED_RANGES = dict(action_space_size=at_least(1), support_scale=at_least(1), proj_hid=at_least(1),
                      proj_out=at_least(1), pred_hid=at_least(1), pred_out=at_least(1))


class _MuZeroBase(nn.Module):
    """Inference API shared by the conv and MLP MuZero networks; subclasses build h, g and f."""

    model_type = ""  # 'conv' or 'mlp', LightZero's model.model_type
    action_encodings: Tuple[str, ...] = ("one_hot", "not_one_hot")  # accepted discrete_action_encoding_type

    @staticmethod
    def config_ranges() -> Dict[str, Range]:
        return dict(_SHARED_RANGES)

    @classmethod
    def check_config(cls, cfg: Mapping, path: str) -> None:
        """The projection heads' rule: the prediction head predicts the target projection."""
        if cfg.get("self_supervised_learning_loss") and cfg.get("pred_out") != cfg.get("proj_out"):
            raise ConfigError(f"config key '{path}.pred_out' must equal {path}.proj_out={cfg.get('proj_out')} (the "
                              f"prediction head predicts the target projection), got {cfg.get('pred_out')}")

    def __init__(
        self,
        observation_shape: Union[int, Sequence[int]],
        action_space_size: int,
        support_scale: int,
        categorical_distribution: bool,
        support_transform: bool,
        state_norm: bool,
        self_supervised_learning_loss: bool,
        discrete_action_encoding_type: str,
        model_type: Optional[str],
    ) -> None:
        super().__init__()
        if model_type is not None and model_type != self.model_type:
            raise ValueError(
                f"{type(self).__name__} got model_type={model_type!r}, expected {self.model_type!r}; use "
                f"{'MuZeroModelMLP' if model_type == 'mlp' else 'MuZeroModel'} for model_type={model_type!r}"
            )
        if not isinstance(action_space_size, int) or action_space_size < 1:
            raise ValueError(f"action_space_size must be a positive int, got {action_space_size!r}")
        if discrete_action_encoding_type not in self.action_encodings:
            raise ValueError(
                f"discrete_action_encoding_type must be one of {', '.join(map(repr, self.action_encodings))} for "
                f"{type(self).__name__}, got {discrete_action_encoding_type!r}"
            )
        if isinstance(observation_shape, int):
            observation_shape = (observation_shape,)
        self.observation_shape = tuple(int(s) for s in observation_shape)
        self.action_space_size = action_space_size
        self.support_scale = support_scale
        self.categorical_distribution = categorical_distribution
        self.support_transform = bool(support_transform)
        self.value_support_size = support_size(support_scale) if categorical_distribution else 1
        self.state_norm = state_norm
        self.self_supervised_learning_loss = self_supervised_learning_loss
        self.action_encoding = discrete_action_encoding_type
        self.action_one_hot = discrete_action_encoding_type == "one_hot"
        self.projection: Optional[nn.Module] = None
        self.prediction_head: Optional[nn.Module] = None
        self.decoder: Optional[nn.Module] = None

    # ----------------------------------------------------------------- subclass hooks
    def _representation(self, obs: torch.Tensor) -> torch.Tensor:
        raise NotImplementedError

    def _dynamics(self, latent: torch.Tensor, action: torch.Tensor) -> Tuple[torch.Tensor, torch.Tensor]:
        raise NotImplementedError

    def _prediction(self, latent: torch.Tensor) -> Tuple[torch.Tensor, torch.Tensor]:
        raise NotImplementedError

    def _prepare_obs(self, obs: Any) -> torch.Tensor:
        raise NotImplementedError

    # ----------------------------------------------------------------- public API
    def initial_inference(self, obs: Any) -> MZNetworkOutput:
        """Encode observations and predict at the root.

        Args:
            obs: [B, *observation_shape] (a flat [B, prod(shape)] is reshaped), any numeric dtype;
                a numpy array is accepted and moved to the model's device.

        Returns:
            MZNetworkOutput with value [B, V|1], reward "zero" [B, V|1], policy_logits [B, A],
            latent_state [B, ...].
        """
        latent = self.representation_step(obs)
        policy_logits, value = self.prediction_step(latent)
        return MZNetworkOutput(value, self._root_reward(latent.shape[0], value), policy_logits, latent)

    def recurrent_inference(self, latent_state: torch.Tensor, action: Any) -> MZNetworkOutput:
        """Unroll one step of the learned dynamics and predict at the next latent.

        Args:
            latent_state: [B, ...] from a previous inference.
            action: int64 [B] (or [B, 1]) action indices in [0, A).

        Returns:
            MZNetworkOutput with value [B, V|1], reward [B, V|1] of this transition, policy_logits
            [B, A], latent_state [B, ...] of the next state.
        """
        action = self._prepare_action(action, latent_state)
        next_latent, reward = self._dynamics(latent_state, action)
        if self.state_norm:
            next_latent = min_max_normalize(next_latent)
        policy_logits, value = self.prediction_step(next_latent)
        return MZNetworkOutput(value, reward, policy_logits, next_latent)

    def representation_step(self, obs: Any) -> torch.Tensor:
        """``initial_inference`` without the prediction: the latent states [B, ...] of observations."""
        latent = self._representation(self._prepare_obs(obs))
        return min_max_normalize(latent) if self.state_norm else latent

    def dynamics_step(self, latent_state: torch.Tensor, action: Any) -> Tuple[torch.Tensor, torch.Tensor]:
        """``recurrent_inference`` without the prediction: (next latent [B, ...], reward [B, V|1])."""
        next_latent, reward = self._dynamics(latent_state, self._prepare_action(action, latent_state))
        if self.state_norm:
            next_latent = min_max_normalize(next_latent)
        return next_latent, reward

    def prediction_step(self, latent_state: torch.Tensor) -> Tuple[torch.Tensor, torch.Tensor]:
        """The prediction function alone: (policy logits [B, A], value [B, V|1]) of latent states."""
        return self._prediction(latent_state)

    def project(self, latent_state: torch.Tensor, with_grad: bool = True) -> torch.Tensor:
        """SimSiam-style projection for the EfficientZero consistency loss.

        Args:
            latent_state: [B, ...].
            with_grad: True for the online branch (projection then prediction head, differentiable);
                False for the target branch (projection only, detached).

        Returns:
            [B, pred_out] (with_grad) or [B, proj_out] (detached).
        """
        if self.projection is None or self.prediction_head is None:
            raise RuntimeError(
                f"{type(self).__name__}.project() needs the projection heads; build the model with "
                f"self_supervised_learning_loss=True"
            )
        proj = self.projection(latent_state.flatten(1))
        if with_grad:
            return self.prediction_head(proj)
        return proj.detach()

    def decode_observation(self, latent_state: torch.Tensor) -> torch.Tensor:
        """Logits [B, *observation_shape] of the observation a latent stands for (one per observation entry).

        The decoder is linear (a 1x1 conv over the latent's channels for the conv net, a Linear for the MLP one), so
        a latent it decodes well holds the observation cell by cell in its features, not merely somewhere.
        """
        if self.decoder is None:
            raise RuntimeError(
                f"{type(self).__name__}.decode_observation() needs the decoder; build the model with "
                f"observation_decoder=True"
            )
        return self.decoder(latent_state).reshape(latent_state.shape[0], *self.observation_shape)

    def to_scalar(self, head_output: torch.Tensor) -> torch.Tensor:
        """Value or reward head output ([B, V] logits or [B, 1]) -> scalars [B]."""
        return decode_scalar(head_output, self.support_scale, self.categorical_distribution, self.support_transform)

    def value_to_scalar(self, value: torch.Tensor) -> torch.Tensor:
        """Value head output -> scalars [B]: :meth:`to_scalar`, the reward head's decoding."""
        return self.to_scalar(value)

    # ----------------------------------------------------------------- helpers
    def _root_reward(self, batch: int, like: torch.Tensor) -> torch.Tensor:
        if self.categorical_distribution:
            return zero_logits(batch, self.support_scale, device=like.device, dtype=like.dtype)
        return torch.zeros(batch, 1, device=like.device, dtype=like.dtype)

    def _param_like(self) -> torch.Tensor:
        return next(self.parameters())

    def _as_float(self, obs: Any) -> torch.Tensor:
        ref = self._param_like()
        x = torch.as_tensor(obs) if not isinstance(obs, torch.Tensor) else obs
        return x.to(device=ref.device, dtype=ref.dtype)

    def _prepare_action(self, action: Any, latent: torch.Tensor) -> torch.Tensor:
        """Validate ``action`` and return its encoding: [B, A] one-hot, [B, 1] a / A, or (spatial) the
        int64 indices [B], which the conv dynamics turn into planes."""
        a = torch.as_tensor(action, device=latent.device) if not isinstance(action, torch.Tensor) else action
        a = a.to(latent.device)
        if a.dim() == 2 and a.shape[1] == 1:
            a = a[:, 0]
        if a.dim() != 1 or a.shape[0] != latent.shape[0]:
            raise ValueError(
                f"recurrent_inference: action must have shape [B] = [{latent.shape[0]}] (one index per "
                f"latent), got {tuple(a.shape)}"
            )
        if a.is_floating_point():
            raise ValueError(f"recurrent_inference: action must be an integer tensor (int64 indices), got {a.dtype}")
        # Range check only on CPU: on an accelerator it would force a device sync per simulation.
        if a.device.type == "cpu" and a.numel() and (int(a.min()) < 0 or int(a.max()) >= self.action_space_size):
            raise ValueError(
                f"recurrent_inference: action indices must lie in [0, {self.action_space_size}), got "
                f"min {int(a.min())} max {int(a.max())}"
            )
        dtype = latent.dtype
        if self.action_encoding == "spatial":
            return a.long()
        if self.action_one_hot:
            ids = torch.arange(self.action_space_size, device=a.device)
            return (a.unsqueeze(1) == ids).to(dtype)
        return (a.to(dtype) / self.action_space_size).unsqueeze(1)

    def _build_projection(self, in_features: int, cfg: dict) -> None:
        if cfg["pred_out"] != cfg["proj_out"]:
            raise ValueError(
                f"pred_out ({cfg['pred_out']}) must equal proj_out ({cfg['proj_out']}): the prediction head "
                f"predicts the target projection"
            )
        norm, act = cfg["norm_type"], cfg["activation"]
        self.projection = MLP(in_features, [cfg["proj_hid"], cfg["proj_hid"]], cfg["proj_out"], norm, act)
        self.prediction_head = MLP(cfg["proj_out"], [cfg["pred_hid"]], cfg["pred_out"], norm, act)


def _action_board(num_actions: int, height: int, width: int, latent_hw: Tuple[int, int]) -> torch.Tensor:
    """[A, 1, H, W] planes for the 'spatial' action encoding: plane a marks action a's cell (A = H*W,
    row-major) or column (A = W)."""
    if latent_hw != (height, width):
        raise ValueError(
            f"discrete_action_encoding_type='spatial' needs the latent at board size {height}x{width}, got "
            f"{latent_hw[0]}x{latent_hw[1]} (downsample=True); use 'one_hot'"
        )
    board = torch.zeros(num_actions, 1, height, width)
    if num_actions == height * width:
        board.view(num_actions, -1)[torch.arange(num_actions), torch.arange(num_actions)] = 1.0
    elif num_actions == width:
        for a in range(width):
            board[a, 0, :, a] = 1.0
    else:
        raise ValueError(
            f"discrete_action_encoding_type='spatial' maps actions to a {height}x{width} board's cells (A = "
            f"{height * width}) or columns (A = {width}); action_space_size={num_actions} is neither: use 'one_hot'"
        )
    return board


def _res_blocks(n: int, channels: int, norm_type: str, activation: Union[str, nn.Module]) -> nn.Sequential:
    return nn.Sequential(*[ResBlock(channels, norm_type, activation) for _ in range(n)])


@MODEL_REGISTRY.register("MuZeroModel")
class MuZeroModel(_MuZeroBase):
    """Conv residual MuZero network over board planes [B, C, H, W].

    * representation: 3x3 conv stem + ``num_res_blocks`` residual blocks -> latent [B, num_channels, H', W'].
    * dynamics: concat(latent, action planes) -> 3x3 conv + norm, plus the latent (residual), act,
      ``num_res_blocks`` blocks -> next latent; reward head (1x1 conv + MLP) on the next latent.
    * prediction: ``num_res_blocks`` blocks, then policy and value heads (1x1 conv + MLP).

    Action planes: 'one_hot' adds A constant planes (plane a is all ones for action a), 'not_one_hot'
    one plane filled with a / A (cheaper when A is large), 'spatial' one plane with ones where the action
    acts on the board (MuZero's encoding for Go and chess): the cell of a placement game (A = H*W), the
    column of a drop game (A = W). Constant planes carry no position, so a 3x3 conv stack can only tell
    which column action a means from the board's edges, a few layers in; a spatial plane says it at once.

    Keyword arguments are the keys of :meth:`default_config`, so ``MuZeroModel(**cfg.model)`` works.
    """

    model_type = "conv"
    action_encodings = ("one_hot", "not_one_hot", "spatial")

    @staticmethod
    def default_config() -> EasyDict:
        """Defaults sized for tic-tac-toe; every key is documented beside its value."""
        return EasyDict(
            dict(
                model_type="conv",  # LightZero's switch; must be 'conv' here ('mlp': use MuZeroModelMLP)
                observation_shape=[3, 3, 3],  # [C, H, W] board planes (tic-tac-toe: 3 planes of 3x3)
                num_res_blocks=1,  # residual blocks in each of representation, dynamics and prediction
                num_channels=32,  # latent channels
                reward_head_channels=16,  # 1x1 conv channels before the reward MLP
                value_head_channels=16,  # 1x1 conv channels before the value MLP
                policy_head_channels=16,  # 1x1 conv channels before the policy MLP
                downsample=False,  # two stride-2 convs in the stem (images); False keeps the board size
                **_SHARED_DEFAULTS,
            )
        )

    @staticmethod
    def config_ranges() -> Dict[str, Range]:
        return dict(_SHARED_RANGES, num_res_blocks=at_least(0), num_channels=at_least(1),
                    reward_head_channels=at_least(1), value_head_channels=at_least(1), policy_head_channels=at_least(1))

    def __init__(
        self,
        observation_shape: Sequence[int] = (3, 3, 3),
        action_space_size: int = 9,
        num_res_blocks: int = 1,
        num_channels: int = 32,
        reward_head_channels: int = 16,
        value_head_channels: int = 16,
        policy_head_channels: int = 16,
        fc_reward_layers: Sequence[int] = (32,),
        fc_value_layers: Sequence[int] = (32,),
        fc_policy_layers: Sequence[int] = (32,),
        support_scale: int = 300,
        categorical_distribution: bool = True,
        support_transform: bool = True,
        last_linear_layer_init_zero: bool = True,
        state_norm: bool = False,
        self_supervised_learning_loss: bool = False,
        proj_hid: int = 256,
        proj_out: int = 256,
        pred_hid: int = 128,
        pred_out: int = 256,
        observation_decoder: bool = False,
        norm_type: str = "BN",
        activation: Union[str, nn.Module] = "relu",
        downsample: bool = False,
        discrete_action_encoding_type: str = "one_hot",
        model_type: Optional[str] = "conv",
        image_channel: Optional[int] = None,  # ignored (LightZero compatibility)
        frame_stack_num: int = 1,  # ignored (LightZero compatibility)
    ) -> None:
        super().__init__(observation_shape, action_space_size, support_scale, categorical_distribution,
                         support_transform, state_norm, self_supervised_learning_loss, discrete_action_encoding_type,
                         model_type)
        if len(self.observation_shape) != 3:
            raise ValueError(
                f"MuZeroModel needs observation_shape [C, H, W], got {observation_shape!r}; use "
                f"MuZeroModelMLP for vector observations"
            )
        c_in, height, width = self.observation_shape
        self.downsample = downsample
        h2, w2 = ConvTrunk.output_hw(height, width, downsample)
        self.latent_shape = (num_channels, h2, w2)
        zero = last_linear_layer_init_zero
        v_out = self.value_support_size
        action_planes = action_space_size if self.action_one_hot else 1
        if self.action_encoding == "spatial":
            self.register_buffer("action_board", _action_board(action_space_size, height, width, (h2, w2)),
                                 persistent=False)

        self.representation = ConvTrunk(c_in, num_channels, num_res_blocks, norm_type, activation, downsample)
        self.dynamics_conv = nn.Conv2d(num_channels + action_planes, num_channels, 3, padding=1,
                                       bias=norm_type == "none")
        self.dynamics_norm = norm_2d(norm_type, num_channels)
        self.dynamics_act = make_activation(activation)
        self.dynamics_blocks = _res_blocks(num_res_blocks, num_channels, norm_type, activation)
        self.reward_head = ConvHead(num_channels, reward_head_channels, (h2, w2), fc_reward_layers, v_out,
                                    norm_type, activation, zero)
        self.prediction_blocks = _res_blocks(num_res_blocks, num_channels, norm_type, activation)
        self.value_head = ConvHead(num_channels, value_head_channels, (h2, w2), fc_value_layers, v_out,
                                   norm_type, activation, zero)
        self.policy_head = ConvHead(num_channels, policy_head_channels, (h2, w2), fc_policy_layers,
                                    action_space_size, norm_type, activation, zero)
        if self_supervised_learning_loss:
            self._build_projection(num_channels * h2 * w2, dict(proj_hid=proj_hid, proj_out=proj_out, pred_hid=pred_hid,
                                                                pred_out=pred_out, norm_type=norm_type,
                                                                activation=activation))
        if observation_decoder:  # built last, so the other weights start as they would without it
            if (h2, w2) != (height, width):
                raise ValueError(f"observation_decoder=True decodes each board cell from the latent's cell: it needs "
                                 f"the latent at board size {height}x{width}, got {h2}x{w2} (downsample=True)")
            self.decoder = nn.Conv2d(num_channels, c_in, 1)

    def _prepare_obs(self, obs: Any) -> torch.Tensor:
        x = self._as_float(obs)
        if x.dim() == 2 and x.shape[1] == flat_size(self.observation_shape):
            x = x.view(x.shape[0], *self.observation_shape)
        if x.dim() != 4 or tuple(x.shape[1:]) != self.observation_shape:
            raise ValueError(
                f"MuZeroModel: observations must have shape [B, {', '.join(map(str, self.observation_shape))}] "
                f"(observation_shape) or [B, {flat_size(self.observation_shape)}], got {tuple(x.shape)}"
            )
        return x

    def _representation(self, obs: torch.Tensor) -> torch.Tensor:
        return self.representation(obs)

    def _dynamics(self, latent: torch.Tensor, action: torch.Tensor) -> Tuple[torch.Tensor, torch.Tensor]:
        b, _, h, w = latent.shape
        if self.action_encoding == "spatial":
            planes = self.action_board[action].to(latent.dtype)  # [B, 1, h, w]
        else:
            planes = action[:, :, None, None].expand(b, action.shape[1], h, w)
        x = self.dynamics_conv(torch.cat([latent, planes], dim=1))
        # The residual keeps the unrolled latent close to its parent early in training.
        x = self.dynamics_act(self.dynamics_norm(x) + latent)
        next_latent = self.dynamics_blocks(x)
        return next_latent, self.reward_head(next_latent)

    def _prediction(self, latent: torch.Tensor) -> Tuple[torch.Tensor, torch.Tensor]:
        x = self.prediction_blocks(latent)
        return self.policy_head(x), self.value_head(x)


@MODEL_REGISTRY.register("MuZeroModelMLP")
class MuZeroModelMLP(_MuZeroBase):
    """MLP MuZero network over vector observations [B, D].

    * representation: MLP D -> latent_state_dim -> latent_state_dim (norm + act on the output).
    * dynamics: MLP over concat(latent, action encoding) -> next latent (plus the latent when
      ``res_connection_in_dynamics``); reward MLP on the next latent.
    * prediction: value and policy MLPs on the latent.

    Keyword arguments are the keys of :meth:`default_config`, so ``MuZeroModelMLP(**cfg.model)`` works.
    """

    model_type = "mlp"

    @staticmethod
    def default_config() -> EasyDict:
        """Defaults sized for CartPole; every key is documented beside its value."""
        cfg = dict(_SHARED_DEFAULTS)
        cfg.update(action_space_size=2)  # CartPole: push left / right
        return EasyDict(
            dict(
                model_type="mlp",  # LightZero's switch; must be 'mlp' here ('conv': use MuZeroModel)
                observation_shape=[4],  # a shape whose product is D (observations are flattened)
                latent_state_dim=128,  # latent width
                res_connection_in_dynamics=True,  # next latent = latent + MLP(...), before state_norm
                **cfg,
            )
        )

    @staticmethod
    def config_ranges() -> Dict[str, Range]:
        return dict(_SHARED_RANGES, latent_state_dim=at_least(1))

    def __init__(
        self,
        observation_shape: Union[int, Sequence[int]] = 4,
        action_space_size: int = 2,
        latent_state_dim: int = 128,
        fc_reward_layers: Sequence[int] = (32,),
        fc_value_layers: Sequence[int] = (32,),
        fc_policy_layers: Sequence[int] = (32,),
        support_scale: int = 300,
        categorical_distribution: bool = True,
        support_transform: bool = True,
        last_linear_layer_init_zero: bool = True,
        state_norm: bool = False,
        self_supervised_learning_loss: bool = False,
        proj_hid: int = 256,
        proj_out: int = 256,
        pred_hid: int = 128,
        pred_out: int = 256,
        observation_decoder: bool = False,
        norm_type: str = "BN",
        activation: Union[str, nn.Module] = "relu",
        res_connection_in_dynamics: bool = True,
        discrete_action_encoding_type: str = "one_hot",
        model_type: Optional[str] = "mlp",
        image_channel: Optional[int] = None,  # ignored (LightZero compatibility)
        frame_stack_num: int = 1,  # ignored (LightZero compatibility)
    ) -> None:
        super().__init__(observation_shape, action_space_size, support_scale, categorical_distribution,
                         support_transform, state_norm, self_supervised_learning_loss, discrete_action_encoding_type,
                         model_type)
        self.obs_dim = flat_size(self.observation_shape)
        self.latent_state_dim = latent_state_dim
        self.res_connection_in_dynamics = res_connection_in_dynamics
        zero = last_linear_layer_init_zero
        v_out = self.value_support_size
        action_dim = action_space_size if self.action_one_hot else 1

        self.representation = MLP(self.obs_dim, [latent_state_dim], latent_state_dim, norm_type, activation,
                                  output_activation=True)
        self.dynamics = MLP(latent_state_dim + action_dim, [latent_state_dim], latent_state_dim, norm_type,
                            activation, output_activation=True)
        self.reward_head = MLP(latent_state_dim, fc_reward_layers, v_out, norm_type, activation, zero)
        self.value_head = MLP(latent_state_dim, fc_value_layers, v_out, norm_type, activation, zero)
        self.policy_head = MLP(latent_state_dim, fc_policy_layers, action_space_size, norm_type, activation, zero)
        if self_supervised_learning_loss:
            self._build_projection(latent_state_dim, dict(proj_hid=proj_hid, proj_out=proj_out, pred_hid=pred_hid,
                                                          pred_out=pred_out, norm_type=norm_type,
                                                          activation=activation))
        if observation_decoder:  # built last, so the other weights start as they would without it
            self.decoder = nn.Linear(latent_state_dim, self.obs_dim)

    def _prepare_obs(self, obs: Any) -> torch.Tensor:
        x = self._as_float(obs)
        if x.dim() >= 2 and flat_size(tuple(x.shape[1:])) == self.obs_dim:
            return x.reshape(x.shape[0], self.obs_dim)
        raise ValueError(
            f"MuZeroModelMLP: observations must have shape [B, {self.obs_dim}] (or [B, *observation_shape] with "
            f"observation_shape={list(self.observation_shape)}), got {tuple(x.shape)}"
        )

    def _representation(self, obs: torch.Tensor) -> torch.Tensor:
        return self.representation(obs)

    def _dynamics(self, latent: torch.Tensor, action: torch.Tensor) -> Tuple[torch.Tensor, torch.Tensor]:
        x = self.dynamics(torch.cat([latent, action], dim=1))
        next_latent = latent + x if self.res_connection_in_dynamics else x
        return next_latent, self.reward_head(next_latent)

    def _prediction(self, latent: torch.Tensor) -> Tuple[torch.Tensor, torch.Tensor]:
        return self.policy_head(latent), self.value_head(latent)
