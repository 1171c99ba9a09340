"""Building blocks shared by the MuZero and AlphaZero networks.

Norm and activation are chosen by name so that configs stay plain data:
``norm_type`` is 'BN' (batch norm, the MuZero/AlphaZero default), 'LN' (layer norm: ``GroupNorm(1, C)``
for feature maps, i.e. normalised over C, H, W with a per-channel affine, so it needs no spatial size;
``LayerNorm`` for vectors) or 'none'. ``activation`` is 'relu', 'gelu', 'silu', 'elu', 'leaky_relu',
'tanh', or an ``nn.Module`` instance (LightZero passes ``nn.ReLU(inplace=True)``), copied per use.
"""
from __future__ import annotations

import copy
import math
from typing import Sequence, Tuple, Union

import torch
from torch import nn

__all__ = [
    "NORM_TYPES",
    "ACTIVATIONS",
    "make_activation",
    "norm_2d",
    "norm_1d",
    "ResBlock",
    "ConvTrunk",
    "ConvHead",
    "MLP",
    "min_max_normalize",
    "flat_size",
]

NORM_TYPES = ("BN", "LN", "none")
ACTIVATIONS = {
    "relu": nn.ReLU,
    "gelu": nn.GELU,
    "silu": nn.SiLU,
    "elu": nn.ELU,
    "leaky_relu": nn.LeakyReLU,
    "tanh": nn.Tanh,
}

Activation = Union[str, nn.Module]


def make_activation(activation: Activation) -> nn.Module:
    """A fresh activation module from a name or a module instance."""
    if isinstance(activation, nn.Module):
        return copy.deepcopy(activation)
    if isinstance(activation, str) and activation.lower() in ACTIVATIONS:
        return ACTIVATIONS[activation.lower()]()
    raise ValueError(
        f"unknown activation {activation!r}; expected one of {sorted(ACTIVATIONS)} or an nn.Module instance"
    )


def _check_norm(norm_type: str) -> str:
    if norm_type not in NORM_TYPES:
        raise ValueError(f"unknown norm_type {norm_type!r}; expected one of {NORM_TYPES}")
    return norm_type


def norm_2d(norm_type: str, channels: int) -> nn.Module:
    """Normalisation for feature maps [B, C, H, W]."""
    kind = _check_norm(norm_type)
    if kind == "BN":
        return nn.BatchNorm2d(channels)
    if kind == "LN":
        return nn.GroupNorm(1, channels)
    return nn.Identity()


def norm_1d(norm_type: str, features: int) -> nn.Module:
    """Normalisation for vectors [B, F]."""
    kind = _check_norm(norm_type)
    if kind == "BN":
        return nn.BatchNorm1d(features)
    if kind == "LN":
        return nn.LayerNorm(features)
    return nn.Identity()


def _conv3x3(cin: int, cout: int, stride: int = 1, bias: bool = False) -> nn.Conv2d:
    return nn.Conv2d(cin, cout, kernel_size=3, stride=stride, padding=1, bias=bias)


class ResBlock(nn.Module):
    """Pre-activation-free basic residual block: act(x + norm(conv(act(norm(conv(x))))))."""

    def __init__(self, channels: int, norm_type: str = "BN", activation: Activation = "relu") -> None:
        super().__init__()
        # A conv followed by a norm needs no bias; with no norm the bias is the only offset.
        bias = norm_type == "none"
        self.conv1 = _conv3x3(channels, channels, bias=bias)
        self.norm1 = norm_2d(norm_type, channels)
        self.conv2 = _conv3x3(channels, channels, bias=bias)
        self.norm2 = norm_2d(norm_type, channels)
        self.act = make_activation(activation)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """[B, C, H, W] -> [B, C, H, W]."""
        y = self.act(self.norm1(self.conv1(x)))
        y = self.norm2(self.conv2(y))
        return self.act(x + y)


class ConvTrunk(nn.Module):
    """Conv stem then residual blocks: [B, C_in, H, W] -> [B, C, H', W'].

    With ``downsample=False`` (board games) H' = H, W' = W. With ``downsample=True`` (images) the stem
    is two stride-2 convs with a residual block between, so H' = ceil(ceil(H / 2) / 2).
    """

    def __init__(
        self,
        in_channels: int,
        num_channels: int,
        num_res_blocks: int,
        norm_type: str = "BN",
        activation: Activation = "relu",
        downsample: bool = False,
    ) -> None:
        super().__init__()
        bias = norm_type == "none"
        if downsample:
            mid = max(num_channels // 2, 1)
            stem = [
                _conv3x3(in_channels, mid, stride=2, bias=bias),
                norm_2d(norm_type, mid),
                make_activation(activation),
                ResBlock(mid, norm_type, activation),
                _conv3x3(mid, num_channels, stride=2, bias=bias),
            ]
        else:
            stem = [_conv3x3(in_channels, num_channels, bias=bias)]
        self.stem = nn.Sequential(*stem, norm_2d(norm_type, num_channels), make_activation(activation))
        self.blocks = nn.Sequential(*[ResBlock(num_channels, norm_type, activation) for _ in range(num_res_blocks)])

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.blocks(self.stem(x))

    @staticmethod
    def output_hw(height: int, width: int, downsample: bool) -> Tuple[int, int]:
        """Spatial size after the trunk."""
        if not downsample:
            return height, width
        return math.ceil(math.ceil(height / 2) / 2), math.ceil(math.ceil(width / 2) / 2)


class MLP(nn.Module):
    """Linear -> norm -> act for each hidden size, then a final Linear (optionally zero-initialised).

    Args:
        in_features: input width.
        hidden: hidden layer widths (may be empty: a single Linear).
        out_features: output width.
        norm_type: norm after each hidden Linear.
        activation: activation after each hidden layer.
        zero_init_last: zero the last layer's weight and bias, so a fresh head predicts uniform
            logits / zero value (LightZero's ``last_linear_layer_init_zero``).
        output_activation: also normalise and activate the output (for representation / dynamics MLPs
            whose output is a latent, not logits).
    """

    def __init__(
        self,
        in_features: int,
        hidden: Sequence[int],
        out_features: int,
        norm_type: str = "BN",
        activation: Activation = "relu",
        zero_init_last: bool = False,
        output_activation: bool = False,
    ) -> None:
        super().__init__()
        layers = []
        width = in_features
        for h in hidden:
            layers += [nn.Linear(width, int(h)), norm_1d(norm_type, int(h)), make_activation(activation)]
            width = int(h)
        last = nn.Linear(width, out_features)
        if zero_init_last:
            nn.init.zeros_(last.weight)
            nn.init.zeros_(last.bias)
        layers.append(last)
        if output_activation:
            layers += [norm_1d(norm_type, out_features), make_activation(activation)]
        self.net = nn.Sequential(*layers)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """[B, in_features] -> [B, out_features]."""
        return self.net(x)


class ConvHead(nn.Module):
    """1x1 conv to a few channels, norm, act, flatten, then an MLP: [B, C, H, W] -> [B, out]."""

    def __init__(
        self,
        in_channels: int,
        head_channels: int,
        spatial: Tuple[int, int],
        hidden: Sequence[int],
        out_features: int,
        norm_type: str = "BN",
        activation: Activation = "relu",
        zero_init_last: bool = False,
    ) -> None:
        super().__init__()
        self.conv = nn.Conv2d(in_channels, head_channels, kernel_size=1, bias=norm_type == "none")
        self.norm = norm_2d(norm_type, head_channels)
        self.act = make_activation(activation)
        self.mlp = MLP(head_channels * spatial[0] * spatial[1], hidden, out_features, norm_type, activation,
                       zero_init_last=zero_init_last)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.act(self.norm(self.conv(x)))
        return self.mlp(y.flatten(1))


def min_max_normalize(latent: torch.Tensor) -> torch.Tensor:
    """Scale each sample's latent into [0, 1] by its own min and max (MuZero appendix G).

    Args:
        latent: [B, ...].

    Returns:
        Same shape; per sample, (x - min) / (max - min), with the range floored at 1e-5 so a constant
        latent maps to 0 instead of dividing by zero.
    """
    flat = latent.flatten(1)
    lo = flat.min(dim=1, keepdim=True).values
    hi = flat.max(dim=1, keepdim=True).values
    scale = (hi - lo).clamp_min(1e-5)
    return ((flat - lo) / scale).view_as(latent)


def flat_size(shape: Union[int, Sequence[int]]) -> int:
    """Number of features in an observation of ``shape`` (an int or a sequence of ints)."""
    if isinstance(shape, int):
        return shape
    return int(math.prod(int(s) for s in shape))
