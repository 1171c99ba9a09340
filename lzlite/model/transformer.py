"""A small GPT-style causal transformer with an explicit, functional KV cache (used by UniZero).

Pre-LN blocks (``x + attn(ln(x))``, ``x + mlp(ln(x))``), learned position embeddings over the token
index, a final LayerNorm. Shapes: B batch rows, T tokens, E = embed_dim, H heads, D = E / H.

Incremental decoding: ``forward(tokens, cache)`` processes only the NEW tokens and returns a new
:class:`KVCache` that holds the old keys/values plus the new ones (the input cache is never
modified, so a search tree may extend one parent cache into many children).

Rows of one cache may have different real lengths (leaves of a search tree at different depths):
``KVCache.key_valid`` marks the real key columns and ``KVCache.next_position`` gives each row the
position index of its next token. Padded columns get zero attention weight (masked to -inf before
the softmax), so a padded row computes exactly what the same row would compute alone.
"""
from __future__ import annotations

import dataclasses
from typing import List, Optional, Tuple

import torch
import torch.nn.functional as F
from torch import nn

__all__ = ["KVCache", "CausalSelfAttention", "Block", "GPT"]


@dataclasses.dataclass
class KVCache:
    """Keys and values of every layer for the tokens seen so far.

    Attributes:
        keys: one tensor per layer, [B, H, T, D].
        values: one tensor per layer, [B, H, T, D].
        key_valid: bool [B, T], False on padding columns; None when every column is real.
        next_position: int64 [B], the position index the next token of each row gets (= the number
            of real tokens of the row).
        max_next_position: a Python int >= every entry of ``next_position``; lets the model check
            ``max_tokens`` without a device sync.
    """

    keys: List[torch.Tensor]
    values: List[torch.Tensor]
    key_valid: Optional[torch.Tensor]
    next_position: torch.Tensor
    max_next_position: int

    @property
    def length(self) -> int:
        """T, the number of cached key columns (padding included)."""
        return int(self.keys[0].shape[2])

    @property
    def batch_size(self) -> int:
        return int(self.keys[0].shape[0])

    def select(self, rows: torch.Tensor) -> "KVCache":
        """The cache of a subset (or repetition) of rows: int64 [B'] indices -> a KVCache of B' rows."""
        valid = None if self.key_valid is None else self.key_valid.index_select(0, rows)
        return KVCache([k.index_select(0, rows) for k in self.keys], [v.index_select(0, rows) for v in self.values],
                       valid, self.next_position.index_select(0, rows), self.max_next_position)


class CausalSelfAttention(nn.Module):
    """Multi-head self-attention over [cached keys, new keys] with a caller-supplied mask."""

    def __init__(self, embed_dim: int, num_heads: int, dropout: float) -> None:
        super().__init__()
        self.num_heads = num_heads
        self.head_dim = embed_dim // num_heads
        self.qkv = nn.Linear(embed_dim, 3 * embed_dim)
        self.proj = nn.Linear(embed_dim, embed_dim)
        self.dropout = dropout
        self.resid_dropout = nn.Dropout(dropout)

    def forward(self, x: torch.Tensor, past_k: Optional[torch.Tensor], past_v: Optional[torch.Tensor],
                mask: Optional[torch.Tensor], is_causal: bool) -> Tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """x [B, Tn, E]; past_k/v [B, H, Tc, D] or None; mask bool [B, 1, Tn, Tc + Tn] (True = attend) or None.

        Returns:
            (y [B, Tn, E], k [B, H, Tc + Tn, D], v [B, H, Tc + Tn, D]).
        """
        b, tn, e = x.shape
        q, k, v = self.qkv(x).view(b, tn, 3, self.num_heads, self.head_dim).permute(2, 0, 3, 1, 4)
        if past_k is not None:
            k = torch.cat([past_k, k], dim=2)
            v = torch.cat([past_v, v], dim=2)
        y = F.scaled_dot_product_attention(q, k, v, attn_mask=mask, is_causal=is_causal,
                                           dropout_p=self.dropout if self.training else 0.0)
        y = y.transpose(1, 2).reshape(b, tn, e)
        return self.resid_dropout(self.proj(y)), k, v


class Block(nn.Module):
    """Pre-LN transformer block: x + attn(ln1(x)), then x + mlp(ln2(x)) (MLP 4E wide, GELU)."""

    def __init__(self, embed_dim: int, num_heads: int, dropout: float) -> None:
        super().__init__()
        self.ln1 = nn.LayerNorm(embed_dim)
        self.attn = CausalSelfAttention(embed_dim, num_heads, dropout)
        self.ln2 = nn.LayerNorm(embed_dim)
        self.mlp = nn.Sequential(nn.Linear(embed_dim, 4 * embed_dim), nn.GELU(), nn.Linear(4 * embed_dim, embed_dim),
                                 nn.Dropout(dropout))

    def forward(self, x: torch.Tensor, past_k: Optional[torch.Tensor], past_v: Optional[torch.Tensor],
                mask: Optional[torch.Tensor], is_causal: bool) -> Tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        a, k, v = self.attn(self.ln1(x), past_k, past_v, mask, is_causal)
        x = x + a
        return x + self.mlp(self.ln2(x)), k, v


class GPT(nn.Module):
    """Causal transformer over pre-embedded tokens [B, T, E] (the caller embeds observations/actions).

    Args:
        embed_dim: E; must be divisible by ``num_heads``.
        num_layers: number of blocks L.
        num_heads: attention heads H.
        max_tokens: size of the learned position table; a row can never hold more tokens.
        dropout: dropout on attention weights, residual branches and the embedded input (train mode only).
    """

    def __init__(self, embed_dim: int, num_layers: int, num_heads: int, max_tokens: int, dropout: float) -> None:
        super().__init__()
        if embed_dim % num_heads != 0:
            raise ValueError(f"embed_dim ({embed_dim}) must be divisible by num_heads ({num_heads}); "
                             f"pick e.g. num_heads={max(h for h in range(1, num_heads + 1) if embed_dim % h == 0)}")
        if max_tokens < 1:
            raise ValueError(f"max_tokens must be >= 1, got {max_tokens}")
        self.embed_dim, self.num_layers, self.num_heads = embed_dim, num_layers, num_heads
        self.head_dim = embed_dim // num_heads
        self.max_tokens = max_tokens
        self.pos_emb = nn.Embedding(max_tokens, embed_dim)
        self.drop = nn.Dropout(dropout)
        self.blocks = nn.ModuleList([Block(embed_dim, num_heads, dropout) for _ in range(num_layers)])
        self.ln_f = nn.LayerNorm(embed_dim)

    def forward(self, tokens: torch.Tensor, cache: Optional[KVCache] = None) -> Tuple[torch.Tensor, KVCache]:
        """Runs the new tokens, attending to the cache (if any) and causally among themselves.

        Args:
            tokens: [B, Tn, E] embedded tokens (no position added yet).
            cache: keys/values of the B rows' earlier tokens, or None (the tokens start at position 0).

        Returns:
            (hidden [B, Tn, E] after the final LayerNorm, the cache extended by the Tn tokens).
        """
        if tokens.dim() != 3 or tokens.shape[-1] != self.embed_dim or tokens.shape[1] == 0:
            raise ValueError(f"tokens must have shape [B, T, {self.embed_dim}] with T >= 1, got {tuple(tokens.shape)}")
        b, tn, _ = tokens.shape
        device = tokens.device
        steps = torch.arange(tn, device=device)
        start_max = 0 if cache is None else cache.max_next_position
        if start_max + tn > self.max_tokens:
            raise ValueError(f"a row would hold {start_max + tn} tokens but max_tokens={self.max_tokens}; raise "
                             f"the model's max_tokens (>= 2 * (history + unroll/simulation steps) + 1) or "
                             f"shorten the context")
        if cache is None:
            positions = steps.expand(b, tn)
            mask, is_causal = None, tn > 1
            past = [(None, None)] * self.num_layers
            valid = None
        else:
            if cache.batch_size != b:
                raise ValueError(f"cache has {cache.batch_size} rows but tokens have {b}")
            positions = cache.next_position[:, None] + steps
            # Cached columns: attend where real; new columns: causal among the new tokens.
            new_part = torch.ones(tn, tn, dtype=torch.bool, device=device).tril()
            if cache.key_valid is None and tn == 1:
                mask = None  # one new token sees everything: no mask needed
            else:
                old = (cache.key_valid if cache.key_valid is not None
                       else torch.ones(b, cache.length, dtype=torch.bool, device=device))
                mask = torch.cat([old[:, None, :].expand(b, tn, cache.length),
                                  new_part.expand(b, tn, tn)], dim=2)[:, None]
            is_causal = False
            past = list(zip(cache.keys, cache.values))
            valid = None if cache.key_valid is None else torch.cat(
                [cache.key_valid, torch.ones(b, tn, dtype=torch.bool, device=device)], dim=1)
        x = self.drop(tokens + self.pos_emb(positions))
        keys, values = [], []
        for block, (pk, pv) in zip(self.blocks, past):
            x, k, v = block(x, pk, pv, mask, is_causal)
            keys.append(k)
            values.append(v)
        return self.ln_f(x), KVCache(keys, values, valid, positions[:, -1] + 1, start_max + tn)
