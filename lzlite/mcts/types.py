"""Typed data that crosses the search boundary: model outputs in, search results out, the config.

Shapes: B roots, A actions (the full action space, never compacted), S simulations, N = S + 1
nodes (slots) per root. Every value is from the view of the player to move at that node.
"""
from __future__ import annotations

import dataclasses
from typing import Any, Optional, Protocol

import numpy as np
from easydict import EasyDict

__all__ = ["RootOutput", "RecurrentOutput", "SearchOutput", "SearchAdapter", "SearchConfig", "default_config"]


@dataclasses.dataclass
class RootOutput:
    """The model's evaluation of the B roots.

    Attributes:
        value: float32 [B], root value (player-to-move view).
        prior_logits: float32 [B, A], policy logits (illegal entries are ignored).
        legal_mask: bool [B, A], legal actions at each root (every row needs one).
        to_play: int [B] or None, the player to move (informational; the search does not read it).
    """
    value: np.ndarray
    prior_logits: np.ndarray
    legal_mask: np.ndarray
    to_play: Optional[np.ndarray] = None


@dataclasses.dataclass
class RecurrentOutput:
    """The model's evaluation of the B children created by one simulation.

    Rows whose `needs_eval` was 0 are ignored by the tree and may hold anything.

    Attributes:
        reward: float32 [B], reward of the move parent -> child, from the mover's view.
        value: float32 [B], child value (child's player-to-move view; the game result for terminals).
        prior_logits: float32 [B, A], child policy logits (ignored for terminal children).
        legal_mask: bool [B, A] or None; None: every action is legal inside the tree (MuZero).
        terminal: bool [B] or None; terminal children are never expanded.
    """
    reward: np.ndarray
    value: np.ndarray
    prior_logits: np.ndarray
    legal_mask: Optional[np.ndarray] = None
    terminal: Optional[np.ndarray] = None


@dataclasses.dataclass
class SearchOutput:
    """What one search returns for its B roots.

    Attributes:
        action: int64 [B], the action to play.
        visit_counts: int32 [B, A], root children visits (sum S per root).
        root_value: float32 [B], mean return at the root (root player's view).
        qvalues: float32 [B, A], Q of each root child from the root's view; 0 where unvisited.
        improved_policy: float32 [B, A], the policy target (PUCT: normalised visits; Gumbel:
            softmax(logits + sigma(completed Q)) over legal actions).
        root_prior: float32 [B, A], the prior used at the root (after Dirichlet noise).
        predicted_value: float32 [B], the network's root value (before search).
    """
    action: np.ndarray
    visit_counts: np.ndarray
    root_value: np.ndarray
    qvalues: np.ndarray
    improved_policy: np.ndarray
    root_prior: np.ndarray
    predicted_value: np.ndarray


class SearchAdapter(Protocol):
    """How a model (or a game + network) enters the search. See lzlite/mcts/adapters.py."""

    def prepare(self, batch_size: int, num_slots: int) -> None:
        """Allocates per-slot storage for B roots of `num_slots` = N nodes each (reused across searches)."""

    def initial(self, obs: Any) -> RootOutput:
        """Evaluates the roots and stores their latents / states at slots b * N."""

    def recurrent(self, parent_slot: np.ndarray, action: np.ndarray, child_slot: np.ndarray,
                  needs_eval: np.ndarray) -> RecurrentOutput:
        """Steps (latent or game) from each parent slot by `action` into `child_slot`.

        Args:
            parent_slot: int32 [B]; action: int32 [B]; child_slot: int32 [B]; needs_eval: uint8 [B]
                (rows with 0 may be skipped: their outputs are ignored).
        """


def default_config() -> EasyDict:
    """The search's config keys, each with its default and a one-line meaning."""
    return EasyDict(dict(
        rule="puct",  # root/interior selection: "puct" (MuZero/AlphaZero) or "gumbel" (Gumbel MuZero)
        num_simulations=50,  # S, simulations per search (>= 1)
        pb_c_base=19652.0,  # PUCT exploration: c = pb_c_init + log((N + pb_c_base + 1) / pb_c_base)
        pb_c_init=1.25,  # PUCT exploration constant at small visit counts
        discount=0.997,  # per-move discount of returns inside the tree
        value_sign=-1.0,  # -1: two-player alternating zero-sum; +1: single-player
        root_dirichlet_alpha=0.3,  # PUCT root noise: Dirichlet(alpha) over the legal actions
        root_noise_weight=0.25,  # PUCT root prior = (1 - w) * prior + w * noise (when noise is on)
        max_num_considered_actions=16,  # Gumbel m: actions sampled at the root by Gumbel-top-m
        gumbel_scale=1.0,  # Gumbel root noise = gumbel_scale * Gumbel(0, 1) (when noise is on)
        c_visit=50.0,  # Gumbel sigma(q) = (c_visit + max N) * c_scale * q
        c_scale=1.0,  # Gumbel sigma scale (0.1 with rescale_values, as in mctx)
        rescale_values=False,  # Gumbel: min-max rescale completed Q to [0, 1] before sigma
        backend="c",  # tree backend: "c" (C++ lzlite.mcts.ctree, fast) or "py" (numpy ptree, the spec)
    ))


@dataclasses.dataclass
class SearchConfig:
    """Typed view of default_config(); `SearchConfig(**cfg)` accepts an EasyDict of the same keys."""
    rule: str = "puct"
    num_simulations: int = 50
    pb_c_base: float = 19652.0
    pb_c_init: float = 1.25
    discount: float = 0.997
    value_sign: float = -1.0
    root_dirichlet_alpha: float = 0.3
    root_noise_weight: float = 0.25
    max_num_considered_actions: int = 16
    gumbel_scale: float = 1.0
    c_visit: float = 50.0
    c_scale: float = 1.0
    rescale_values: bool = False
    backend: str = "c"

    @classmethod
    def from_any(cls, cfg: Any) -> "SearchConfig":
        """Builds a SearchConfig from a SearchConfig, dict or EasyDict; unknown keys are an error."""
        if isinstance(cfg, cls):
            return cfg
        names = {f.name for f in dataclasses.fields(cls)}
        unknown = sorted(set(cfg) - names)
        if unknown:
            raise ValueError(f"unknown search config keys {unknown}; valid keys: {sorted(names)}")
        return cls(**dict(cfg))
