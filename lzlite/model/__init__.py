"""Networks: MuZero (representation, dynamics, prediction), AlphaZero (policy-value), value supports.

Importing this package registers 'MuZeroModel', 'MuZeroModelMLP', 'AlphaZeroModel' and 'UniZeroModel' in
``lzlite.registry.MODEL_REGISTRY``.
"""
from lzlite.model.alphazero import AlphaZeroModel
from lzlite.model.muzero import MuZeroModel, MuZeroModelMLP, MZNetworkOutput
from lzlite.model.transformer import GPT, KVCache
from lzlite.model.unizero import SegmentOutput, UniZeroModel, UZNetworkOutput
from lzlite.model.support import (
    VALUE_TRANSFORM_EPS,
    decode_scalar,
    inverse_value_transform,
    scalar_to_support,
    support_size,
    support_to_scalar,
    value_transform,
    zero_logits,
)

__all__ = [
    "AlphaZeroModel",
    "MuZeroModel",
    "MuZeroModelMLP",
    "MZNetworkOutput",
    "UniZeroModel",
    "UZNetworkOutput",
    "SegmentOutput",
    "GPT",
    "KVCache",
    "VALUE_TRANSFORM_EPS",
    "decode_scalar",
    "inverse_value_transform",
    "scalar_to_support",
    "support_size",
    "support_to_scalar",
    "value_transform",
    "zero_logits",
]
