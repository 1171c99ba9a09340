"""THE simulation loop: every algorithm (AlphaZero, MuZero, Gumbel MuZero, ReZero, UniZero) searches here.

Algorithms differ only in the config (rule and its parameters), the adapter that evaluates nodes,
and optional ReZero reuse inputs; this loop never branches on an algorithm name. Randomness (root
Dirichlet / Gumbel noise, action sampling) is drawn here from the caller's generator, never inside a
tree, so the numpy and C++ trees see identical numbers.

Typical use::

    adapter.prepare(batch_size, cfg.num_simulations + 1)
    root = adapter.initial(obs)
    out = search(adapter, root, cfg, rng, temperature=1.0)
"""
from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Any, Optional

import numpy as np

from lzlite.mcts.ptree import Tree as PyTree
from lzlite.mcts.ptree.gumbel import masked_softmax
from lzlite.mcts.types import RootOutput, SearchAdapter, SearchConfig, SearchOutput

__all__ = ["search", "get_tree_class", "get_tree", "dirichlet_noise", "select_action"]

# Trees are cached by shape because their storage is allocated once, in the constructor. A
# collector's batch size changes as its games finish, so the cache sees many shapes: it keeps the
# most recently used trees, at most _MAX_CACHED_TREES of them holding at most _MAX_CACHED_EDGES edges
# (B * (S + 1) * A) in all, about 140 MB for the C++ tree (33 bytes an edge) and 90 MB for the numpy
# one; the tree in use is always kept, however large. Building a tree costs about 20 ns an edge,
# small beside the search it serves, so an evicted shape is cheap to rebuild.
_MAX_CACHED_TREES = 8
_MAX_CACHED_EDGES = 1 << 22
# One cache per thread: a tree holds the state of one search in flight, so two threads (e.g. a
# collector and an evaluator) must never share one.
_local = threading.local()


def get_tree_class(backend: str) -> type:
    """The Tree class of a backend: "c" -> lzlite.mcts.ctree.Tree, "py" -> lzlite.mcts.ptree.Tree."""
    if backend == "py":
        return PyTree
    if backend == "c":
        try:  # a compiled extension: imported on first use so that lzlite (and backend 'py') works without it
            from lzlite.mcts.ctree import Tree
        except ImportError as err:
            raise ImportError(
                "search backend 'c' needs the compiled tree lzlite.mcts.ctree._ctree; build it with "
                "`LZLITE_EXTS=lzlite.mcts.ctree._ctree python setup.py build_ext --inplace` "
                "or set the search config's backend='py'") from err
        return Tree
    raise ValueError(f"search backend must be 'c' or 'py', got {backend!r}")


def get_tree(cfg: SearchConfig, batch_size: int, num_actions: int) -> Any:
    """A Tree for this shape and rule, reused across calls (its storage is preallocated once)."""
    key = (cfg.backend, batch_size, num_actions, cfg.num_simulations, cfg.rule, cfg.pb_c_base, cfg.pb_c_init,
           cfg.discount, cfg.value_sign, cfg.max_num_considered_actions, cfg.c_visit, cfg.c_scale,
           cfg.rescale_values)
    cache = getattr(_local, "trees", None)
    if cache is None:
        cache = _local.trees = OrderedDict()
    tree = cache.get(key)
    if tree is None:
        tree = get_tree_class(cfg.backend)(
            batch_size, num_actions, cfg.num_simulations, rule=cfg.rule, pb_c_base=cfg.pb_c_base,
            pb_c_init=cfg.pb_c_init, discount=cfg.discount, value_sign=cfg.value_sign,
            max_num_considered_actions=cfg.max_num_considered_actions, c_visit=cfg.c_visit,
            c_scale=cfg.c_scale, rescale_values=cfg.rescale_values)
        cache[key] = tree
        # Least recently used first; the new tree (the last entry) is never evicted.
        edges = sum(_num_edges(t) for t in cache.values())
        while len(cache) > 1 and (len(cache) > _MAX_CACHED_TREES or edges > _MAX_CACHED_EDGES):
            edges -= _num_edges(cache.popitem(last=False)[1])
    cache.move_to_end(key)
    return tree


def _num_edges(tree: Any) -> int:
    """B * (S + 1) * A: the edge slots a tree preallocates, which dominate its memory."""
    return tree.batch_size * (tree.num_simulations + 1) * tree.num_actions


def dirichlet_noise(legal_mask: np.ndarray, alpha: float, rng: np.random.Generator) -> np.ndarray:
    """Dirichlet(alpha) over each row's legal actions, 0 elsewhere: float32 [B, A].

    Drawn as normalised Gamma(alpha, 1) samples, which is the Dirichlet distribution, in one
    vectorised call.
    """
    if not alpha > 0:
        raise ValueError(f"root_dirichlet_alpha must be > 0, got {alpha}")
    g = np.where(legal_mask, rng.gamma(alpha, 1.0, size=legal_mask.shape), 0.0)
    total = g.sum(axis=1, keepdims=True)
    # All-underflow rows (tiny alpha, few actions) fall back to uniform over the legal actions.
    g = np.where(total > 0, g, legal_mask.astype(np.float64))
    total = g.sum(axis=1, keepdims=True)
    return (g / np.where(total > 0, total, 1.0)).astype(np.float32)   # an all-illegal row stays 0


def select_action(visit_counts: np.ndarray, temperature: float, rng: np.random.Generator) -> np.ndarray:
    """PUCT action: argmax visits (temperature 0, ties -> lowest index) or sample visits**(1/T).

    Args:
        visit_counts: [B, A] root children visits.
        temperature: >= 0.

    Returns:
        int64 [B].
    """
    if not temperature >= 0:
        raise ValueError(f"temperature must be >= 0, got {temperature}")
    visits = np.asarray(visit_counts, np.float64)
    if temperature == 0:
        return np.argmax(visits, axis=1).astype(np.int64)
    # visits**(1/T) computed in log space so small temperatures do not overflow.
    logits = np.where(visits > 0, np.log(np.maximum(visits, 1e-300)) / temperature, -np.inf)
    probs = masked_softmax(logits, visits > 0)
    cdf = np.cumsum(probs, axis=1)
    u = rng.random(visits.shape[0])[:, None] * cdf[:, -1:]
    return np.minimum((cdf <= u).sum(axis=1), visits.shape[1] - 1).astype(np.int64)


def search(adapter: SearchAdapter, root: RootOutput, cfg: Any, rng: np.random.Generator, *,
           temperature: float = 0.0, add_noise: Any = True, greedy: Optional[np.ndarray] = None,
           reuse_action: Optional[np.ndarray] = None, reuse_value: Optional[np.ndarray] = None) -> SearchOutput:
    """Runs cfg.num_simulations simulations from B roots and picks an action per root.

    Args:
        adapter: evaluates children; `adapter.prepare(B, S + 1)` and `adapter.initial(...)` (which
            produced `root`) must have been called for this search.
        root: the roots' evaluation (value [B], prior_logits [B, A], legal_mask [B, A]).
        cfg: SearchConfig, or a dict / EasyDict with its keys (see types.default_config()).
        rng: the source of all randomness (noise and action sampling).
        temperature: PUCT action sampling temperature (0: most visited). Unused by the Gumbel rule,
            whose action is the sequential-halving winner.
        add_noise: PUCT: mix Dirichlet noise into the root prior; Gumbel: draw Gumbel(0, 1) *
            gumbel_scale (otherwise zeros, a deterministic search). A bool [B] array instead applies
            this per root: roots marked False are searched without noise.
        greedy: bool [B] or None, roots that play their best move (collection's ``temperature_moves``):
            PUCT the most visited action (root noise kept, as in AlphaZero); Gumbel the sequential-halving
            winner of a search without Gumbel noise at that root.
        reuse_action: int [B] or None, ReZero: root action whose Q is given (-1: none).
        reuse_value: float [B] or None, that action's Q from the root player's view.

    Returns:
        SearchOutput for the B roots.
    """
    cfg = SearchConfig.from_any(cfg)
    if not isinstance(rng, np.random.Generator):
        raise TypeError(f"rng must be a numpy Generator (np.random.default_rng(seed)), got {type(rng).__name__}")
    logits = np.asarray(root.prior_logits)
    if logits.ndim != 2:
        raise ValueError(f"root.prior_logits must have shape [B, A], got {logits.shape}")
    B, A = logits.shape
    legal = np.asarray(root.legal_mask)
    if legal.shape != (B, A):
        raise ValueError(f"root.legal_mask must have shape {(B, A)} like root.prior_logits, got {legal.shape}")
    num_slots = getattr(adapter, "num_slots", None)
    if num_slots is not None and num_slots != cfg.num_simulations + 1:
        raise ValueError(f"adapter was prepared for {num_slots} slots per root but num_simulations="
                         f"{cfg.num_simulations} needs {cfg.num_simulations + 1}; call "
                         f"adapter.prepare(B, num_simulations + 1) before adapter.initial(...)")

    noisy = np.broadcast_to(np.asarray(add_noise, dtype=bool), (B,))
    if greedy is not None:
        greedy = np.asarray(greedy, dtype=bool)
        if greedy.shape != (B,):
            raise ValueError(f"greedy must be a bool array of shape ({B},), got {greedy.shape}")
        if cfg.rule == "gumbel":
            noisy = noisy & ~greedy
    tree = get_tree(cfg, B, A)
    noise = gumbel = None
    if noisy.any() and cfg.rule == "puct" and cfg.root_noise_weight > 0:
        noise = dirichlet_noise(legal.astype(bool), cfg.root_dirichlet_alpha, rng)
        if not noisy.all():  # a root whose "noise" is its own prior keeps the prior unchanged
            prior = masked_softmax(np.asarray(logits, np.float64), legal.astype(bool))
            noise = np.where(noisy[:, None], noise, prior).astype(noise.dtype)
    if noisy.any() and cfg.rule == "gumbel":
        gumbel = (rng.gumbel(size=(B, A)) * cfg.gumbel_scale).astype(np.float32)
        gumbel[~noisy] = 0.0
    tree.reset(root.prior_logits, root.value, root.legal_mask, noise=noise,
               noise_weight=cfg.root_noise_weight if noise is not None else 0.0, gumbel=gumbel,
               reuse_action=reuse_action, reuse_value=reuse_value)

    for _ in range(cfg.num_simulations):
        parent_slot, action, child_slot, needs_eval = tree.traverse()
        child = adapter.recurrent(parent_slot, action, child_slot, needs_eval)
        tree.expand_and_backup(child.reward, child.value, child.prior_logits, child.legal_mask, child.terminal)

    out = tree.outputs()
    if cfg.rule == "gumbel":
        chosen = out["gumbel_action"].astype(np.int64)
    else:
        chosen = select_action(out["visit_counts"], temperature, rng)
        if greedy is not None:
            chosen[greedy] = select_action(out["visit_counts"][greedy], 0.0, rng)
    root_prior = masked_softmax(np.asarray(logits, np.float64), legal.astype(bool))
    if noise is not None:
        root_prior = np.where(legal.astype(bool), (1 - cfg.root_noise_weight) * root_prior
                              + cfg.root_noise_weight * noise, 0.0)
    return SearchOutput(
        action=chosen,
        visit_counts=np.array(out["visit_counts"], np.int32),
        root_value=np.array(out["root_value"], np.float32),
        qvalues=np.array(out["qvalues"], np.float32),
        improved_policy=np.array(out["improved_policy"], np.float32),
        root_prior=root_prior.astype(np.float32),
        predicted_value=np.array(root.value, np.float32).reshape(B),
    )
