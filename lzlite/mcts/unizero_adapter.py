"""Search adapter for the UniZero transformer world model (lzlite.model.unizero.UniZeroModel).

A node's context is its root's context (history + root obs tokens) followed by one (action token,
predicted latent token) pair per move on the path root -> node. Expanding a child therefore only
needs the keys/values of that context plus two new tokens.

Storage design (why not a full cache per slot): a preallocated cache [B*N, L, 2, H, Tmax, D] costs
B*N*Tmax token columns, i.e. O(B * S^2) with Tmax ~ 2S, and copying a parent's whole cache into
every child costs O(depth) per simulation anyway. Instead every slot stores only the keys/values
of the TWO tokens it added, and a path table says which slots lie on its path:

* ``root_kv``   [L, 2, B, H, C, D]   keys/values of the C root-context tokens of each root.
* ``slot_kv``   [L, 2, B*N, H, 2, D] keys/values of each node's (action, latent) tokens.
* ``path``      int64 [B*N, S]       slots on the path root -> node (depth 1..d), host memory.
* ``depth``     int64 [B*N]          d, the number of moves from the root.

Memory is O(B * N) token pairs, the same order as the tree itself. A simulation gathers, for each
leaf's parent, ``root_kv`` plus the ``slot_kv`` of its d path slots (one index_select of B * dmax
pairs: depths are small), pads rows to the batch's deepest parent with a key mask, and runs ONE
``model.recurrent_inference`` (two incremental 1-token transformer passes) over it; the two new
columns of the returned cache are written to the child slot. No simulation ever re-runs the
transformer over the context.

``use_kv_cache=False`` is the reference: every simulation rebuilds each leaf's full token sequence
(root context tokens + path tokens + new action token) and runs the transformer from scratch over
it (twice: once to predict the next latent, once more with that latent appended). It must agree
with the cached path to float rounding.
"""
from __future__ import annotations

from typing import Any, Optional, Tuple

import numpy as np
import torch

from lzlite.mcts.adapters import _to_numpy
from lzlite.mcts.types import RecurrentOutput, RootOutput
from lzlite.model.transformer import KVCache

__all__ = ["UniZeroAdapter"]


class UniZeroAdapter:
    """SearchAdapter for UniZeroModel: per-slot (action, latent) keys/values plus a path table.

    Args:
        model: a UniZeroModel (``initial_inference``, ``recurrent_inference``, ``to_scalar``,
            ``transformer``, ``embed_action``, ``predict_at_action``, ``predict_at_obs``).
        device: where latents and caches live; default: the model's device.
        use_kv_cache: True: reuse keys/values (one incremental step per simulation); False: recompute
            each leaf's full context from scratch (the reference, O(context) per simulation).
    """

    def __init__(self, model: Any, device: Optional[torch.device | str] = None, use_kv_cache: bool = True):
        self.model = model
        if device is None:
            device = next(model.parameters()).device
        self.device = torch.device(device)
        self.use_kv_cache = bool(use_kv_cache)
        self.batch_size = 0
        self.num_slots: Optional[int] = None
        self.context_length = 0                       # C, tokens in each root's context
        self.latents: Optional[torch.Tensor] = None   # [B*N, E] each node's latent (root: encoded)
        self.slot_action: Optional[np.ndarray] = None  # int64 [B*N], the move into each node
        self.path: Optional[np.ndarray] = None        # int64 [B*N, S]
        self.depth: Optional[np.ndarray] = None       # int64 [B*N]
        self.root_kv: Optional[torch.Tensor] = None   # [L, 2, B, H, C, D]
        self.slot_kv: Optional[torch.Tensor] = None   # [L, 2, B*N, H, 2, D]
        self.root_tokens: Optional[torch.Tensor] = None  # [B, C, E] (reference path only)

    # ------------------------------------------------------------------ protocol
    def prepare(self, batch_size: int, num_slots: int) -> None:
        """Sizes the slot tables for B roots of N = S + 1 nodes (tensors are allocated by initial())."""
        if batch_size < 1 or num_slots < 2:
            raise ValueError(f"need batch_size >= 1 and num_slots >= 2, got {batch_size}, {num_slots}")
        if (batch_size, num_slots) != (self.batch_size, self.num_slots):
            total = batch_size * num_slots
            self.path = np.zeros((total, num_slots - 1), np.int64)
            self.depth = np.zeros(total, np.int64)
            self.slot_action = np.full(total, -1, np.int64)
            self.latents = self.slot_kv = None
        self.batch_size, self.num_slots = batch_size, num_slots

    @torch.inference_mode()
    def initial(self, obs: Any, legal_mask: Optional[np.ndarray] = None, to_play: Optional[np.ndarray] = None,
                history: Optional[Tuple[Any, Any]] = None) -> RootOutput:
        """Evaluates the B roots (optionally after a history context) and stores them at slots b * N.

        Args:
            obs: [B, *observation_shape] current observations.
            legal_mask: bool [B, A] legal actions at the roots; None: all legal.
            to_play: int [B] or None, passed through for information.
            history: None or (past_obs [B, Hh, *observation_shape], past_actions int [B, Hh]); the
                root context then has C = 2 * Hh + 1 tokens.
        """
        if self.num_slots is None:
            raise RuntimeError("call prepare(batch_size, num_simulations + 1) before initial()")
        B, N = self.batch_size, self.num_slots
        obs_t = torch.as_tensor(obs, device=self.device)
        if obs_t.shape[0] != B:
            raise ValueError(f"obs has batch size {obs_t.shape[0]} but prepare() was called with batch_size={B}")
        model = self.model
        tokens, latent = model.context_tokens(obs_t, history)
        hidden, cache = model.transformer(tokens)
        logits_t, value_t = model.predict_at_obs(hidden[:, -1])
        self.context_length = C = tokens.shape[1]
        if C + 2 > model.transformer.max_tokens:
            raise ValueError(f"the root context has {C} tokens, so no move fits in max_tokens="
                             f"{model.transformer.max_tokens}; raise max_tokens or shorten the history")
        E = latent.shape[1]
        if self.latents is None or self.latents.shape[1] != E or self.latents.dtype != latent.dtype:
            self.latents = torch.zeros(B * N, E, dtype=latent.dtype, device=self.device)
        roots = torch.arange(B, device=self.device) * N
        self.latents.index_copy_(0, roots, latent)
        self.depth[::N] = 0
        self.slot_action[::N] = -1
        if self.use_kv_cache:
            self.root_kv = torch.stack([torch.stack([k, v]) for k, v in zip(cache.keys, cache.values)])
            shape = self.root_kv.shape          # [L, 2, B, H, C, D]
            want = (shape[0], 2, B * N, shape[3], 2, shape[5])
            if self.slot_kv is None or tuple(self.slot_kv.shape) != want or self.slot_kv.dtype != self.root_kv.dtype:
                # Zeros, not empty: padded gathers read slot 0 and masked keys must still be finite.
                self.slot_kv = torch.zeros(want, dtype=self.root_kv.dtype, device=self.device)
        else:
            self.root_tokens = tokens
        logits = _to_numpy(logits_t, "policy_logits", (B, logits_t.shape[-1]))
        value = _to_numpy(model.to_scalar(value_t), "value", (B,))
        legal = np.ones(logits.shape, bool) if legal_mask is None else np.asarray(legal_mask).astype(bool)
        return RootOutput(value=value, prior_logits=logits, legal_mask=legal, to_play=to_play)

    @torch.inference_mode()
    def recurrent(self, parent_slot: np.ndarray, action: np.ndarray, child_slot: np.ndarray,
                  needs_eval: np.ndarray) -> RecurrentOutput:
        """Extends each parent's context by (action, predicted latent) and evaluates the child.

        Rows with needs_eval == 0 are computed from their root instead of their parent (their
        output is ignored; this keeps their context short and never past max_tokens).
        """
        if self.latents is None:
            raise RuntimeError("call prepare() and initial() before recurrent()")
        B, N = self.batch_size, self.num_slots
        A = self.model.action_space_size
        evals = np.asarray(needs_eval).astype(bool)
        if not evals.any():   # every leaf is terminal / reused: no network call at all
            return RecurrentOutput(reward=np.zeros(B, np.float32), value=np.zeros(B, np.float32),
                                   prior_logits=np.zeros((B, A), np.float32))
        rows = np.arange(B)
        parent = np.where(evals, np.asarray(parent_slot, np.int64), rows * N)
        child = np.asarray(child_slot, np.int64)
        act = np.asarray(action, np.int64)
        if parent.shape != (B,) or child.shape != (B,) or act.shape != (B,):
            raise ValueError(f"parent_slot, action, child_slot must have shape ({B},), got {parent.shape}, "
                             f"{act.shape}, {child.shape}")
        if ((parent // N) != rows).any() or ((child // N) != rows).any():
            raise ValueError(f"slot b*N + k must belong to root b (N={N}); got parent_slot {parent.tolist()}, "
                             f"child_slot {child.tolist()}")
        if (act < 0).any() or (act >= A).any():
            raise ValueError(f"action indices must lie in [0, {A}), got {act.tolist()}")
        d = self.depth[parent]
        max_tokens = self.model.transformer.max_tokens
        needed = self.context_length + 2 * (int(d.max()) + 1)
        if needed > max_tokens:
            raise ValueError(f"a leaf at depth {int(d.max()) + 1} needs {needed} tokens (context "
                             f"{self.context_length} + 2 per move) but the model's max_tokens={max_tokens}; "
                             f"build the model with max_tokens >= 2 * (history + num_simulations) + 1")
        # Bookkeeping first (host memory): the child's path is its parent's plus itself.
        self.path[child] = self.path[parent]
        self.depth[child] = d + 1
        self.path[child, d] = child
        self.slot_action[child] = act
        act_t = torch.from_numpy(act).to(self.device)
        dmax = int(d.max())
        if self.use_kv_cache:
            out = self._step_cached(parent, d, dmax, act_t)
        else:
            out = self._step_full(parent, d, dmax, act_t)
        value, reward, logits, next_latent, new_kv = out
        child_t = torch.from_numpy(child).to(self.device)
        self.latents.index_copy_(0, child_t, next_latent.to(self.latents.dtype))
        if new_kv is not None:
            self.slot_kv.index_copy_(2, child_t, new_kv.to(self.slot_kv.dtype))
        return RecurrentOutput(
            reward=_to_numpy(self.model.to_scalar(reward), "reward", (B,)),
            value=_to_numpy(self.model.to_scalar(value), "value", (B,)),
            prior_logits=_to_numpy(logits, "policy_logits", (B, A)),
        )

    # ------------------------------------------------------------------ the two ways to step
    def _path_index(self, parent: np.ndarray, dmax: int) -> np.ndarray:
        """int64 [B * dmax] slots on each parent's path, padded with slot 0 (masked out later)."""
        idx = self.path[parent, :dmax]
        idx = np.where(np.arange(dmax)[None, :] < self.depth[parent][:, None], idx, 0)
        return np.ascontiguousarray(idx.reshape(-1))

    def _step_cached(self, parent: np.ndarray, d: np.ndarray, dmax: int, act_t: torch.Tensor):
        B, C = self.batch_size, self.context_length
        L, _, _, H, _, D = self.slot_kv.shape
        kv = self.root_kv
        valid = None
        if dmax > 0:
            idx = torch.from_numpy(self._path_index(parent, dmax)).to(self.device)
            pairs = self.slot_kv.index_select(2, idx)                                   # [L, 2, B*dmax, H, 2, D]
            pairs = pairs.view(L, 2, B, dmax, H, 2, D).permute(0, 1, 2, 4, 3, 5, 6).reshape(L, 2, B, H, 2 * dmax, D)
            kv = torch.cat([kv, pairs], dim=4)
            d_t = torch.from_numpy(d).to(self.device)
            path_valid = (torch.arange(2 * dmax, device=self.device)[None, :] // 2) < d_t[:, None]
            valid = torch.cat([torch.ones(B, C, dtype=torch.bool, device=self.device), path_valid], dim=1)
        next_pos = torch.from_numpy(C + 2 * d).to(self.device)
        cache = KVCache([kv[l, 0] for l in range(L)], [kv[l, 1] for l in range(L)], valid, next_pos,
                        C + 2 * dmax)
        out = self.model.recurrent_inference(cache, act_t)
        new = torch.stack([torch.stack([k[:, :, -2:], v[:, :, -2:]]) for k, v in
                           zip(out.cache.keys, out.cache.values)])                  # [L, 2, B, H, 2, D]
        return out.value, out.reward, out.policy_logits, out.latent_state, new

    def _step_full(self, parent: np.ndarray, d: np.ndarray, dmax: int, act_t: torch.Tensor):
        model = self.model
        B, C = self.batch_size, self.context_length
        E = self.latents.shape[1]
        T = C + 2 * dmax + 2
        tokens = torch.zeros(B, T, E, dtype=self.latents.dtype, device=self.device)
        tokens[:, :C] = self.root_tokens
        if dmax > 0:
            idx_np = self._path_index(parent, dmax)
            idx = torch.from_numpy(idx_np).to(self.device)
            path_act = torch.from_numpy(np.maximum(self.slot_action[idx_np], 0)).to(self.device)
            pairs = torch.stack([model.embed_action(path_act, (B * dmax,)), self.latents.index_select(0, idx)],
                                dim=1)                                               # [B*dmax, 2, E]
            tokens[:, C:C + 2 * dmax] = pairs.view(B, 2 * dmax, E)
        rows = torch.arange(B, device=self.device)
        at = torch.from_numpy(C + 2 * d).to(self.device)   # index of the new action token of each row
        # Right padding is harmless under causal attention: row b reads hidden states at index <= at[b] + 1.
        tokens[rows, at] = model.embed_action(act_t, (B,))
        hidden, _ = model.transformer(tokens[:, :int(at.max()) + 1])
        next_latent, reward = model.predict_at_action(hidden[rows, at])
        tokens[rows, at + 1] = next_latent
        hidden, _ = model.transformer(tokens[:, :int(at.max()) + 2])
        logits, value = model.predict_at_obs(hidden[rows, at + 1])
        return value, reward, logits, next_latent, None

    # ------------------------------------------------------------------ inspection
    def path_actions(self, slot: int) -> np.ndarray:
        """int64 [d] the moves from the root to node ``slot`` (for tests and debugging)."""
        d = int(self.depth[slot])
        return self.slot_action[self.path[slot, :d]].copy()
