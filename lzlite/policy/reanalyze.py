"""Whole-buffer reanalyze with ReZero's backward-view reuse (LightZero team, 2024).

``reanalyze_buffer`` recomputes the root value and policy target of every sampleable row of a replay
buffer by searching its stored observation again (no root noise) with a given model adapter, in
batches, and writes them back, so later samples build their targets from the new numbers.

Backward view (``backward_view=True``): each stored segment is searched from its last position to its
first. At position t the root child for the action actually taken, a_t, is not searched: the tree's
ReZero reuse option (docs/ctree.md, rule 11) fixes its Q to

    q_t = reward_t + discount * value_sign * V(t + 1)

where V(t + 1) is the root value the search at t + 1 has just found (for the last position: the
stored value of the segment's final row, 0 when the episode ended there, the bootstrap value when it
was cut). Every simulation that selects a_t at the root then ends without a network call, which is
where the saving comes from. With ``backward_view=False`` the same code runs plain reanalyze (no
reuse), for comparison.

Batching: B lanes each walk one segment backwards; a lane that reaches its segment's first position
takes the next segment, so every batched search (but the last few) holds B roots, whatever the
segment lengths. The dependency V(t + 1) -> position t stays inside one lane.

It lives beside the policy that schedules it (lzlite/policy/rezero.py), not in lzlite/buffer: it runs
the search, and the buffer sits below the search (docs/architecture.md, "Layers"). It touches the buffer
only through ``live_segments``, ``read_rows`` and ``write_targets``.
"""
from __future__ import annotations

import dataclasses
import time
from typing import Any, Callable, Optional

import numpy as np
import torch

from lzlite.mcts.adapters import LatentModelAdapter, _to_numpy
from lzlite.mcts.search import search as run_search
from lzlite.mcts.types import RecurrentOutput, RootOutput, SearchConfig, SearchOutput

__all__ = ["ReanalyzeStats", "CountingLatentAdapter", "reanalyze_buffer"]


@dataclasses.dataclass
class ReanalyzeStats:
    """What one whole-buffer reanalyze did."""

    positions: int  # sampleable positions searched (each exactly once)
    segments: int  # stored segments they belong to
    searches: int  # batched search calls
    network_rows: int  # rows the network evaluated: one per root plus one per non-reused simulation
    reused_visits: int  # simulations that ended on a reused child (no network row)
    wall_s: float  # wall time of the whole reanalyze, including the buffer writes

    @property
    def rows_per_position(self) -> float:
        """Network rows per reanalysed position (plain reanalyze: 1 + num_simulations)."""
        return self.network_rows / max(self.positions, 1)


class CountingLatentAdapter(LatentModelAdapter):
    """A LatentModelAdapter that evaluates only the rows that need it and counts them.

    The base adapter runs all B rows in every simulation (a fixed batch shape suits accelerators);
    a ReZero reanalyze wants the opposite: rows whose simulation ended on a reused (or terminal)
    child are dropped from the network batch, so the saving is real. ``num_net_rows`` counts the
    rows the network saw (roots and children), like ``AlphaZeroAdapter.num_net_rows``.
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.num_net_rows = 0
        self.num_skipped_rows = 0
        self._num_actions = 0

    def initial(self, obs: Any, legal_mask: Optional[np.ndarray] = None,
                to_play: Optional[np.ndarray] = None) -> RootOutput:
        root = super().initial(obs, legal_mask, to_play)
        self._num_actions = root.prior_logits.shape[1]
        self.num_net_rows += self.batch_size
        return root

    @torch.inference_mode()
    def recurrent(self, parent_slot: np.ndarray, action: np.ndarray, child_slot: np.ndarray,
                  needs_eval: np.ndarray) -> RecurrentOutput:
        """Dynamics + prediction for the rows with ``needs_eval`` only; other rows are zeros (ignored)."""
        B, A = self.batch_size, self._num_actions
        rows = np.flatnonzero(np.asarray(needs_eval))
        self.num_net_rows += rows.size
        self.num_skipped_rows += B - rows.size
        if rows.size == B:
            return super().recurrent(parent_slot, action, child_slot, needs_eval)
        reward = np.zeros(B, np.float32)
        value = np.zeros(B, np.float32)
        logits = np.zeros((B, A), np.float32)
        if rows.size:
            k = rows.size
            pick = lambda x: torch.from_numpy(np.asarray(x, np.int64)[rows]).to(self.device)  # noqa: E731
            out = self.model.recurrent_inference(self.latents.index_select(0, pick(parent_slot)), pick(action))
            # The skipped rows' child slots stay unwritten: a reused or terminal child is never expanded.
            self.latents.index_copy_(0, pick(child_slot), out.latent_state.to(self.latents.dtype))
            reward[rows] = _to_numpy(self.reward_to_scalar(out.reward), "reward_to_scalar(reward)", (k,))
            value[rows] = _to_numpy(self.value_to_scalar(out.value), "value_to_scalar(value)", (k,))
            logits[rows] = _to_numpy(out.policy_logits, "policy_logits", (k, A))
        return RecurrentOutput(reward=reward, value=value, prior_logits=logits)


def reanalyze_buffer(
    buffer: Any,
    adapter: Any,
    search_cfg: SearchConfig,
    *,
    batch_size: int = 256,
    backward_view: bool = True,
    policy_target_fn: Optional[Callable[[SearchOutput], np.ndarray]] = None,
    write: bool = True,
    on_search: Optional[Callable[[np.ndarray, SearchOutput, Optional[np.ndarray], Optional[np.ndarray]], None]] = None,
) -> ReanalyzeStats:
    """Search every sampleable row of ``buffer`` again and store the new root values (and policies).

    Args:
        buffer: a ReplayBuffer (uses ``live_segments``, ``read_rows``, ``write_targets``).
        adapter: a search adapter over the model to reanalyse with (ReZero: the target network), e.g.
            a ``CountingLatentAdapter``; its ``num_net_rows`` (when present) feeds the stats.
        search_cfg: the search config (num_simulations, discount, value_sign, rule ...). No root
            noise is added and the search is deterministic (temperature 0).
        batch_size: roots per batched search (lanes).
        backward_view: True: ReZero reuse of the next position's value for the action taken;
            False: plain reanalyze of the same rows.
        policy_target_fn: SearchOutput -> policy target [B, A] (e.g. ``Policy.policy_target``);
            None keeps the stored policy targets.
        write: False computes without writing (benchmarks).
        on_search: optional callback ``(positions [B], out, reuse_action [B] or None, reuse_value [B]
            or None)`` after every search (tests, diagnostics).

    Returns:
        ``ReanalyzeStats``.
    """
    if int(batch_size) < 1:
        raise ValueError(f"reanalyze batch_size must be >= 1, got {batch_size}")
    cfg = SearchConfig.from_any(search_cfg)
    t0 = time.perf_counter()
    rows0 = getattr(adapter, "num_net_rows", 0)
    first, end = buffer.live_segments()
    lengths = end - first
    n_pos = int(lengths.sum())
    # Results are kept in one flat array in segment order, and written once at the end.
    offset = np.concatenate(([0], np.cumsum(lengths)[:-1])).astype(np.int64)
    positions = np.repeat(first - offset, lengths) + np.arange(n_pos, dtype=np.int64)
    new_value = np.zeros(n_pos, np.float32)
    new_policy = np.zeros((n_pos, buffer.action_space_size), np.float32) if policy_target_fn and n_pos else None
    final_value = buffer.read_rows(end)["root_value"] if n_pos else np.zeros(0, np.float32)

    L = min(int(batch_size), len(first))
    lane_seg = np.arange(L, dtype=np.int64)  # segment each lane walks
    lane_t = end[:L] - 1  # absolute position each lane searches next
    lane_v = final_value[:L].astype(np.float64)  # V(t + 1) for that position
    next_seg = L
    searches = reused = 0
    while lane_seg.size:
        rows = buffer.read_rows(lane_t)
        reuse_action = reuse_value = None
        if backward_view:
            reuse_action = rows["action"]
            reuse_value = (rows["reward"] + cfg.discount * cfg.value_sign * lane_v).astype(np.float32)
        out = _search(adapter, cfg, rows["obs"], rows["legal_mask"], reuse_action, reuse_value)
        searches += 1
        if backward_view:
            reused += int(out.visit_counts[np.arange(lane_t.size), reuse_action].sum())
        flat = offset[lane_seg] + (lane_t - first[lane_seg])
        new_value[flat] = out.root_value
        if new_policy is not None:
            new_policy[flat] = policy_target_fn(out)
        if on_search is not None:
            on_search(lane_t.copy(), out, reuse_action, reuse_value)
        # Step every lane one position back; a finished lane takes the next segment, or retires.
        lane_v = out.root_value.astype(np.float64)
        lane_t = lane_t - 1
        done = lane_t < first[lane_seg]
        for i in np.flatnonzero(done):
            if next_seg < len(first):
                lane_seg[i], lane_t[i], lane_v[i] = next_seg, end[next_seg] - 1, final_value[next_seg]
                next_seg += 1
                done[i] = False
        keep = ~done
        lane_seg, lane_t, lane_v = lane_seg[keep], lane_t[keep], lane_v[keep]

    if write and n_pos:
        buffer.write_targets(positions, new_value, new_policy)
    return ReanalyzeStats(positions=n_pos, segments=len(first), searches=searches,
                          network_rows=int(getattr(adapter, "num_net_rows", 0) - rows0),
                          reused_visits=reused, wall_s=time.perf_counter() - t0)


def _search(adapter: Any, cfg: SearchConfig, obs: np.ndarray, legal: np.ndarray,
            reuse_action: Optional[np.ndarray], reuse_value: Optional[np.ndarray]) -> SearchOutput:
    """One deterministic batched search from stored positions (roots use the stored legal masks)."""
    with torch.inference_mode():
        adapter.prepare(len(obs), cfg.num_simulations + 1)
        root = adapter.initial(obs)
        root = dataclasses.replace(root, legal_mask=legal.astype(bool))
        # No noise and temperature 0: the generator is never drawn from.
        return run_search(adapter, root, cfg, np.random.default_rng(0), temperature=0.0, add_noise=False,
                          reuse_action=reuse_action, reuse_value=reuse_value)
