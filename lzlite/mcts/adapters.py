"""Search adapters: how a model enters the search loop (lzlite.mcts.search).

- `LatentModelAdapter`: MuZero-style learned models; latents stay on the model's device in one
  preallocated tensor [B * N, *latent_shape] indexed by slot.
- `AlphaZeroAdapter`: real game states (a zoo BatchGame) plus a policy-value network; terminal
  leaves are valued by the game and never cost a network call.

Both keep per-slot storage sized by `prepare(batch_size, num_slots)` and reused across searches.
"""
from __future__ import annotations

from typing import Any, Callable, Optional

import numpy as np
import torch

from lzlite.mcts.types import RecurrentOutput, RootOutput

__all__ = ["LatentModelAdapter", "AlphaZeroAdapter"]


def _to_numpy(x: Any, name: str, shape: tuple[int, ...]) -> np.ndarray:
    arr = x.detach().float().cpu().numpy() if isinstance(x, torch.Tensor) else np.asarray(x, np.float32)
    arr = arr.astype(np.float32, copy=False)
    if arr.shape != shape:
        # Scalar heads often come as [B, 1].
        if arr.size == int(np.prod(shape)) and arr.ndim == len(shape) + 1 and arr.shape[-1] == 1:
            arr = arr.reshape(shape)
        else:
            raise ValueError(f"{name} must have shape {shape}, got {arr.shape}")
    return arr


class LatentModelAdapter:
    """Adapter for models with LightZero-compatible initial_inference / recurrent_inference.

    `model.initial_inference(obs [B, ...]) -> out` and `model.recurrent_inference(latent [B, ...],
    action int64 [B]) -> out`, where out has `value`, `reward`, `policy_logits` [B, A] and
    `latent_state` [B, ...]. `value_to_scalar` / `reward_to_scalar` turn the raw heads (e.g.
    categorical logits) into tensors or arrays of shape [B].

    Every simulation makes ONE batched recurrent call over all B rows (rows whose needs_eval is 0
    are computed and ignored: a fixed batch shape is cheaper than a gather on accelerators). Their
    latents land in that simulation's unused slot, which no later simulation reads.
    """

    def __init__(self, model: Any, value_to_scalar: Callable[[Any], Any],
                 reward_to_scalar: Callable[[Any], Any], device: Optional[torch.device | str] = None):
        self.model = model
        self.value_to_scalar = value_to_scalar
        self.reward_to_scalar = reward_to_scalar
        if device is None:
            params = list(model.parameters()) if hasattr(model, "parameters") else []
            device = params[0].device if params else "cpu"
        self.device = torch.device(device)
        self.batch_size = 0
        self.num_slots: Optional[int] = None
        self.latents: Optional[torch.Tensor] = None   # [B * N, *latent_shape] on self.device

    def prepare(self, batch_size: int, num_slots: int) -> None:
        """Sizes the latent store for B roots of N slots (allocated lazily: the latent shape comes
        from the first initial_inference)."""
        if batch_size < 1 or num_slots < 2:
            raise ValueError(f"need batch_size >= 1 and num_slots >= 2, got {batch_size}, {num_slots}")
        if (batch_size, num_slots) != (self.batch_size, self.num_slots):
            self.latents = None
        self.batch_size, self.num_slots = batch_size, num_slots

    def _store(self, slots: torch.Tensor, latent: torch.Tensor) -> None:
        total = self.batch_size * self.num_slots
        if self.latents is None or self.latents.shape[1:] != latent.shape[1:] or self.latents.dtype != latent.dtype:
            self.latents = torch.zeros((total,) + tuple(latent.shape[1:]), dtype=latent.dtype, device=self.device)
        self.latents.index_copy_(0, slots, latent)

    @torch.inference_mode()
    def initial(self, obs: Any, legal_mask: Optional[np.ndarray] = None, to_play: Optional[np.ndarray] = None
                ) -> RootOutput:
        """Evaluates the roots and stores their latents at slots b * N.

        Args:
            obs: [B, ...] observations (numpy or tensor).
            legal_mask: bool [B, A] legal actions at the roots; None: all legal.
            to_play: int [B] or None, passed through for information.
        """
        if self.num_slots is None:
            raise RuntimeError("call prepare(batch_size, num_simulations + 1) before initial()")
        obs_t = torch.as_tensor(obs, device=self.device)
        if obs_t.dtype != torch.float32:
            obs_t = obs_t.float()
        B = self.batch_size
        if obs_t.shape[0] != B:
            raise ValueError(f"obs has batch size {obs_t.shape[0]} but prepare() was called with batch_size={B}")
        out = self.model.initial_inference(obs_t)
        logits = _to_numpy(out.policy_logits, "policy_logits", (B, out.policy_logits.shape[-1]))
        A = logits.shape[1]
        slots = torch.arange(B, device=self.device) * self.num_slots
        self._store(slots, out.latent_state)
        value = _to_numpy(self.value_to_scalar(out.value), "value_to_scalar(value)", (B,))
        legal = np.ones((B, A), bool) if legal_mask is None else np.asarray(legal_mask).astype(bool)
        return RootOutput(value=value, prior_logits=logits, legal_mask=legal, to_play=to_play)

    @torch.inference_mode()
    def recurrent(self, parent_slot: np.ndarray, action: np.ndarray, child_slot: np.ndarray,
                  needs_eval: np.ndarray) -> RecurrentOutput:
        """One batched dynamics + prediction call: latent[child] = g(latent[parent], action)."""
        if self.latents is None:
            raise RuntimeError("call prepare() and initial() before recurrent()")
        B = self.batch_size
        parent = torch.from_numpy(np.asarray(parent_slot, np.int64)).to(self.device)
        child = torch.from_numpy(np.asarray(child_slot, np.int64)).to(self.device)
        act = torch.from_numpy(np.asarray(action, np.int64)).to(self.device)
        out = self.model.recurrent_inference(self.latents.index_select(0, parent), act)
        self.latents.index_copy_(0, child, out.latent_state.to(self.latents.dtype))
        return RecurrentOutput(
            reward=_to_numpy(self.reward_to_scalar(out.reward), "reward_to_scalar(reward)", (B,)),
            value=_to_numpy(self.value_to_scalar(out.value), "value_to_scalar(value)", (B,)),
            prior_logits=_to_numpy(out.policy_logits, "policy_logits", (B, out.policy_logits.shape[-1])),
        )


class AlphaZeroAdapter:
    """Adapter for real game states (zoo BatchGame) and a policy-value network.

    Args:
        game: a zoo BatchGame (new_states, num_actions, obs_shape, observe, legal_mask, expand_slots).
        net_fn: obs float32 [k, P, R, C] -> (value [k], logits [k, A]) as numpy (or tensors); value from
            the view of the player to move.
    """

    def __init__(self, game: Any, net_fn: Callable[[np.ndarray], tuple[Any, Any]]):
        self.game = game
        self.net_fn = net_fn
        self.num_actions = int(game.num_actions)
        self.obs_shape = tuple(game.obs_shape)
        self.state_bytes = int(game.new_states(1).shape[1])
        self.batch_size = 0
        self.num_slots: Optional[int] = None
        self.states: Optional[np.ndarray] = None   # uint8 [B * N, state_bytes]
        self.num_net_rows = 0                       # rows sent to net_fn so far (tests, telemetry)

    def prepare(self, batch_size: int, num_slots: int) -> None:
        """Allocates the slot states [B * N, state_bytes] (kept when the shape is unchanged)."""
        if batch_size < 1 or num_slots < 2:
            raise ValueError(f"need batch_size >= 1 and num_slots >= 2, got {batch_size}, {num_slots}")
        if self.states is None or (batch_size, num_slots) != (self.batch_size, self.num_slots):
            self.states = np.zeros((batch_size * num_slots, self.state_bytes), np.uint8)
        self.batch_size, self.num_slots = batch_size, num_slots
        self._obs = np.zeros((batch_size,) + self.obs_shape, np.float32)
        self._legal = np.zeros((batch_size, self.num_actions), np.uint8)
        self._terminal = np.zeros(batch_size, np.uint8)
        self._value = np.zeros(batch_size, np.float32)
        # recurrent()'s outputs, reused every call: the search hands them to expand_and_backup at
        # once, and both trees copy what they keep.
        self._out_reward = np.zeros(batch_size, np.float32)
        self._out_value = np.zeros(batch_size, np.float32)
        self._out_logits = np.zeros((batch_size, self.num_actions), np.float32)
        self._out_legal = np.ones((batch_size, self.num_actions), bool)
        self._out_terminal = np.zeros(batch_size, bool)

    def _evaluate(self, obs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        value, logits = self.net_fn(obs)
        k = obs.shape[0]
        self.num_net_rows += k
        return (_to_numpy(value, "net_fn value", (k,)),
                _to_numpy(logits, "net_fn logits", (k, self.num_actions)))

    def initial(self, root_states: np.ndarray, to_play: Optional[np.ndarray] = None) -> RootOutput:
        """Copies the root states to slots b * N and evaluates them (none may be terminal)."""
        if self.states is None:
            raise RuntimeError("call prepare(batch_size, num_simulations + 1) before initial()")
        root_states = np.ascontiguousarray(root_states, np.uint8)
        if root_states.shape != (self.batch_size, self.state_bytes):
            raise ValueError(f"root_states must have shape {(self.batch_size, self.state_bytes)}, "
                             f"got {root_states.shape}")
        self.states[::self.num_slots] = root_states
        legal = np.asarray(self.game.legal_mask(root_states)).astype(bool)
        value, logits = self._evaluate(np.asarray(self.game.observe(root_states), np.float32))
        return RootOutput(value=value, prior_logits=logits, legal_mask=legal, to_play=to_play)

    def recurrent(self, parent_slot: np.ndarray, action: np.ndarray, child_slot: np.ndarray,
                  needs_eval: np.ndarray) -> RecurrentOutput:
        """Plays the selected moves in the slot states; the network sees only non-terminal children.

        The returned arrays belong to the adapter and are overwritten by the next call (consume them,
        e.g. with Tree.expand_and_backup, before calling again; copy them to keep them).
        """
        rows = np.flatnonzero(np.asarray(needs_eval))
        reward, value, logits = self._out_reward, self._out_value, self._out_logits
        legal, terminal = self._out_legal, self._out_terminal
        reward.fill(0.0)
        value.fill(0.0)
        logits.fill(0.0)
        legal.fill(True)   # rows not evaluated are ignored by the tree
        terminal.fill(False)
        if len(rows):
            k = len(rows)
            obs, lg, term, tval = self._obs[:k], self._legal[:k], self._terminal[:k], self._value[:k]
            self.game.expand_slots(self.states, np.ascontiguousarray(np.asarray(parent_slot)[rows], np.int32),
                                   np.ascontiguousarray(np.asarray(child_slot)[rows], np.int32),
                                   np.ascontiguousarray(np.asarray(action)[rows], np.int32), obs, lg, term, tval)
            term_b = term.astype(bool)
            legal[rows] = lg.astype(bool)
            terminal[rows] = term_b
            value[rows] = tval
            live = ~term_b
            if live.any():
                v, lo = self._evaluate(obs[live])
                value[rows[live]] = v
                logits[rows[live]] = lo
        return RecurrentOutput(reward=reward, value=value, prior_logits=logits, legal_mask=legal,
                               terminal=terminal)
