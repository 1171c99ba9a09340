"""Trees are freed when dropped: no reference cycle keeps one (or its storage) alive, so creating
trees of changing shapes, directly or through the search's tree cache, keeps the process flat."""
import gc
import importlib
import os
import weakref
from collections import OrderedDict

import numpy as np
import pytest

from lzlite.mcts import RecurrentOutput, RootOutput, SearchConfig, get_tree_class, search

search_module = importlib.import_module("lzlite.mcts.search")   # the package exports the function `search`

BACKENDS = ["c", "py"]
# Batch sizes that change from one tree to the next, as a collector's do while its games finish.
BATCH_SIZES = (1, 3, 7, 16, 32, 64)
MAX_GROWTH_MB = 30.0


def rss_mb() -> float:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def assert_flat(step, n: int, warmup: int, check_every: int) -> None:
    """Runs step(i) n times after `warmup` calls; fails as soon as the RSS grows by MAX_GROWTH_MB (a
    leak of ~0.3 MB a tree gets there in ~100 calls, so a failing run stays short)."""
    for i in range(warmup):
        step(i)
    gc.collect()
    start = rss_mb()
    for i in range(n):
        step(warmup + i)
        if i % check_every == check_every - 1 or i == n - 1:
            growth = rss_mb() - start
            assert growth < MAX_GROWTH_MB, f"RSS grew {growth:.0f} MB after {i + 1} calls (from {start:.0f} MB)"


def uniform_root(B: int, A: int) -> RootOutput:
    return RootOutput(np.zeros(B, np.float32), np.zeros((B, A), np.float32), np.ones((B, A), bool))


class UniformAdapter:
    """A zero-cost network: every child has reward 0, value 0 and uniform logits."""

    def __init__(self, num_actions: int):
        self.num_actions = num_actions

    def recurrent(self, parent_slot, action, child_slot, needs_eval) -> RecurrentOutput:
        B = len(parent_slot)
        return RecurrentOutput(np.zeros(B, np.float32), np.zeros(B, np.float32),
                               np.zeros((B, self.num_actions), np.float32))


@pytest.mark.parametrize("backend", BACKENDS)
def test_dropped_tree_is_freed_at_once(backend):
    """Freed by reference counting alone (no cycle for the collector to find), even after a search
    whose traverse() arrays the caller kept: they stay readable and hold only the storage."""
    tree = get_tree_class(backend)(4, 3, 2)
    tree.reset(np.zeros((4, 3), np.float32), np.zeros(4, np.float32), np.ones((4, 3), bool))
    parent_slot, action, child_slot, needs_eval = tree.traverse()
    expected = child_slot.copy()
    alive = weakref.ref(tree)
    gc.disable()
    try:
        del tree
        assert alive() is None, "the dropped tree is still referenced"
    finally:
        gc.enable()
    np.testing.assert_array_equal(child_slot, expected)
    np.testing.assert_array_equal(child_slot, np.arange(4) * 3 + 1)


@pytest.mark.parametrize("backend", BACKENDS)
def test_creating_and_dropping_trees_keeps_memory_flat(backend):
    tree_class = get_tree_class(backend)

    def step(i):
        tree = tree_class(BATCH_SIZES[i % len(BATCH_SIZES)], 9, 50, rule=("puct", "gumbel")[i % 2])
        del tree

    assert_flat(step, n=5000, warmup=200, check_every=250)


@pytest.mark.parametrize("backend", BACKENDS)
def test_searching_with_changing_batch_sizes_keeps_memory_flat(backend, monkeypatch):
    """The real search through its tree cache: 64 batch sizes cycle through a cache of 8 trees."""
    monkeypatch.setattr(search_module._local, "trees", OrderedDict(), raising=False)
    A = 9
    adapter = UniformAdapter(A)
    cfgs = [SearchConfig(rule=rule, num_simulations=32, backend=backend) for rule in ("puct", "gumbel")]
    rng = np.random.default_rng(0)

    def step(i):
        B = 1 + (i * 37) % 64
        search(adapter, uniform_root(B, A), cfgs[i % 2], rng)

    assert_flat(step, n=400 if backend == "c" else 100, warmup=64, check_every=20)
    assert len(search_module._local.trees) <= search_module._MAX_CACHED_TREES


def test_tree_cache_bounds_its_edges_and_keeps_the_tree_in_use(monkeypatch):
    monkeypatch.setattr(search_module._local, "trees", OrderedDict(), raising=False)
    monkeypatch.setattr(search_module, "_MAX_CACHED_EDGES", 1000)
    cfg = SearchConfig(num_simulations=9, backend="py")   # a tree of B roots holds B * 10 * A edges

    def cached():
        return [(t.batch_size, t.num_actions) for t in search_module._local.trees.values()]

    small = search_module.get_tree(cfg, 2, 5)        # 100 edges
    search_module.get_tree(cfg, 4, 5)                # 200
    assert cached() == [(2, 5), (4, 5)]
    assert search_module.get_tree(cfg, 2, 5) is small   # a hit moves it to the end
    search_module.get_tree(cfg, 8, 9)                # 720: evicts the least recently used, (4, 5)
    assert cached() == [(2, 5), (8, 9)]
    search_module.get_tree(cfg, 30, 9)               # 2,700, over the budget alone: kept, alone
    assert cached() == [(30, 9)]
