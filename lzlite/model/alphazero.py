"""AlphaZero policy-value network: conv residual trunk, policy logits [B, A], tanh value [B, 1].

The value is from the view of the player to move in the observed position, in [-1, 1].
API as in LightZero: ``forward(obs) -> (logits, value)`` and ``compute_policy_value(obs) -> (probs,
value)``; the latter optionally zeroes illegal actions given a boolean legal mask.
"""
from __future__ import annotations

from typing import Any, Dict, Optional, Sequence, Tuple, Union

import torch
from easydict import EasyDict
from torch import nn

from lzlite.config import Range, at_least
from lzlite.model.common import ConvHead, ConvTrunk, flat_size
from lzlite.registry import MODEL_REGISTRY

__all__ = ["AlphaZeroModel"]


@MODEL_REGISTRY.register("AlphaZeroModel")
class AlphaZeroModel(nn.Module):
    """Conv residual policy-value network over board planes [B, C, H, W].

    Keyword arguments are the keys of :meth:`default_config`, so ``AlphaZeroModel(**cfg.model)`` works.
    """

    @staticmethod
    def default_config() -> EasyDict:
        """Defaults sized for tic-tac-toe; every key is documented beside its value."""
        return EasyDict(
            dict(
                observation_shape=[3, 3, 3],  # [C, H, W] board planes (tic-tac-toe: 3 planes of 3x3)
                action_space_size=9,  # A: full action space (legal or not)
                num_res_blocks=1,  # residual blocks in the trunk
                num_channels=32,  # trunk channels
                value_head_channels=16,  # 1x1 conv channels before the value MLP
                policy_head_channels=16,  # 1x1 conv channels before the policy MLP
                fc_value_layers=[32],  # hidden widths of the value MLP
                fc_policy_layers=[32],  # hidden widths of the policy MLP
                last_linear_layer_init_zero=True,  # zero the heads' last Linear: uniform prior, value 0 at init
                norm_type="BN",  # 'BN' | 'LN' | 'none'
                activation="relu",  # 'relu' | 'gelu' | 'silu' | 'elu' | 'leaky_relu' | 'tanh'
                downsample=False,  # two stride-2 convs in the stem (images); False keeps the board size
                categorical_distribution=False,  # accepted for LightZero configs; must be False (tanh value)
                model_type="conv",  # accepted for LightZero configs; must be 'conv'
                image_channel=None,  # accepted for LightZero configs and ignored
                frame_stack_num=1,  # accepted for LightZero configs and ignored
            )
        )

    @staticmethod
    def config_ranges() -> Dict[str, Range]:
        """The allowed values of the numeric keys of ``default_config`` (``lzlite/config/ranges.py``)."""
        return dict(action_space_size=at_least(1), num_res_blocks=at_least(0), num_channels=at_least(1),
                    value_head_channels=at_least(1), policy_head_channels=at_least(1))

    def __init__(
        self,
        observation_shape: Sequence[int] = (3, 3, 3),
        action_space_size: int = 9,
        num_res_blocks: int = 1,
        num_channels: int = 32,
        value_head_channels: int = 16,
        policy_head_channels: int = 16,
        fc_value_layers: Sequence[int] = (32,),
        fc_policy_layers: Sequence[int] = (32,),
        last_linear_layer_init_zero: bool = True,
        norm_type: str = "BN",
        activation: Union[str, nn.Module] = "relu",
        downsample: bool = False,
        categorical_distribution: bool = False,
        model_type: Optional[str] = "conv",
        image_channel: Optional[int] = None,  # ignored (LightZero compatibility)
        frame_stack_num: int = 1,  # ignored (LightZero compatibility)
    ) -> None:
        super().__init__()
        if categorical_distribution:
            raise ValueError(
                "AlphaZeroModel predicts a tanh value in [-1, 1]; categorical_distribution=True is not "
                "supported, set it to False"
            )
        if model_type not in (None, "conv"):
            raise ValueError(f"AlphaZeroModel is a conv network, got model_type={model_type!r}; use 'conv'")
        shape = tuple(int(s) for s in observation_shape) if not isinstance(observation_shape, int) else ()
        if len(shape) != 3:
            raise ValueError(f"AlphaZeroModel needs observation_shape [C, H, W], got {observation_shape!r}")
        if not isinstance(action_space_size, int) or action_space_size < 1:
            raise ValueError(f"action_space_size must be a positive int, got {action_space_size!r}")
        self.observation_shape = shape
        self.action_space_size = action_space_size
        c_in, height, width = shape
        hw = ConvTrunk.output_hw(height, width, downsample)
        zero = last_linear_layer_init_zero
        self.trunk = ConvTrunk(c_in, num_channels, num_res_blocks, norm_type, activation, downsample)
        self.policy_head = ConvHead(num_channels, policy_head_channels, hw, fc_policy_layers, action_space_size,
                                    norm_type, activation, zero)
        self.value_head = ConvHead(num_channels, value_head_channels, hw, fc_value_layers, 1, norm_type,
                                   activation, zero)

    def _prepare_obs(self, obs: Any) -> torch.Tensor:
        ref = next(self.parameters())
        x = torch.as_tensor(obs) if not isinstance(obs, torch.Tensor) else obs
        x = x.to(device=ref.device, dtype=ref.dtype)
        if x.dim() == 2 and x.shape[1] == flat_size(self.observation_shape):
            x = x.view(x.shape[0], *self.observation_shape)
        if x.dim() != 4 or tuple(x.shape[1:]) != self.observation_shape:
            raise ValueError(
                f"AlphaZeroModel: observations must have shape [B, {', '.join(map(str, self.observation_shape))}] "
                f"(observation_shape) or [B, {flat_size(self.observation_shape)}], got {tuple(x.shape)}"
            )
        return x

    def forward(self, obs: Any) -> Tuple[torch.Tensor, torch.Tensor]:
        """Policy logits and value.

        Args:
            obs: [B, C, H, W] (or flat [B, C*H*W]), any numeric dtype.

        Returns:
            (logits [B, A], value [B, 1] in [-1, 1] for the player to move).
        """
        x = self.trunk(self._prepare_obs(obs))
        return self.policy_head(x), torch.tanh(self.value_head(x))

    def compute_policy_value(
        self, obs: Any, legal_mask: Optional[torch.Tensor] = None
    ) -> Tuple[torch.Tensor, torch.Tensor]:
        """Policy probabilities and value.

        Args:
            obs: [B, C, H, W] (or flat [B, C*H*W]).
            legal_mask: optional bool [B, A]; illegal actions get probability exactly 0. A row with
                no legal action is left unmasked (its probabilities stay a distribution).

        Returns:
            (probs [B, A] summing to 1 per row, value [B, 1]).
        """
        logits, value = self.forward(obs)
        if legal_mask is not None:
            mask = torch.as_tensor(legal_mask, device=logits.device).bool()
            if mask.shape != logits.shape:
                raise ValueError(
                    f"legal_mask must have shape [B, A] = {tuple(logits.shape)}, got {tuple(mask.shape)}"
                )
            mask = mask | ~mask.any(dim=1, keepdim=True)
            logits = logits.masked_fill(~mask, float("-inf"))
        return torch.softmax(logits, dim=-1), value
