"""Monte Carlo tree search: one search loop, typed model adapters, two tree backends.

`search(adapter, root, cfg, rng)` is the only simulation loop; `ptree` is the numpy reference tree
(the spec), `ctree` the C++ one; `get_tree_class(backend)` picks between them.
"""
from lzlite.mcts.adapters import AlphaZeroAdapter, LatentModelAdapter
from lzlite.mcts.search import dirichlet_noise, get_tree_class, search, select_action
from lzlite.mcts.unizero_adapter import UniZeroAdapter
from lzlite.mcts.types import (
    RecurrentOutput,
    RootOutput,
    SearchAdapter,
    SearchConfig,
    SearchOutput,
    default_config,
)

__all__ = [
    "search",
    "get_tree_class",
    "dirichlet_noise",
    "select_action",
    "RootOutput",
    "RecurrentOutput",
    "SearchOutput",
    "SearchAdapter",
    "SearchConfig",
    "default_config",
    "LatentModelAdapter",
    "AlphaZeroAdapter",
    "UniZeroAdapter",
]
