"""Regenerates the golden trees under tests/mcts/golden/ (review every diff before committing).

    python tests/mcts/make_golden.py

Each golden file holds one configuration searched with the numpy reference tree and a deterministic
fake model whose priors, values and rewards are a hash of (config name, root, path of actions from
the root), so they do not depend on slot numbering or on the other roots.
"""
from __future__ import annotations

import json
import os
import sys
import zlib

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
GOLDEN_DIR = os.path.join(HERE, "golden")

# name -> (tree kwargs, options). B = 2 roots, A = 4 actions in every config.
CONFIGS = {
    "puct_two_player": (dict(num_simulations=12, rule="puct", value_sign=-1.0, discount=1.0), dict()),
    "puct_one_player_masks_noise": (dict(num_simulations=12, rule="puct", value_sign=1.0, discount=0.9),
                                    dict(masks=True, noise=True)),
    "puct_reuse_terminal": (dict(num_simulations=12, rule="puct", value_sign=-1.0, discount=1.0),
                            dict(reuse=True, terminal=True, masks=True)),
    "gumbel_two_player": (dict(num_simulations=12, rule="gumbel", value_sign=-1.0, discount=1.0,
                               max_num_considered_actions=4), dict(gumbel=True)),
    "gumbel_one_player_rescaled_masks": (dict(num_simulations=10, rule="gumbel", value_sign=1.0, discount=0.9,
                                              max_num_considered_actions=3, c_scale=0.1, rescale_values=True),
                                         dict(gumbel=True, masks=True, terminal=True)),
    "gumbel_reuse": (dict(num_simulations=8, rule="gumbel", value_sign=-1.0, discount=1.0,
                          max_num_considered_actions=2), dict(gumbel=True, reuse=True)),
}
B, A = 2, 4
NODE_KEYS = ("parent", "action", "visits", "value_sum", "reward", "raw_value", "terminal", "prior", "children")


def _rng(*key) -> np.random.Generator:
    """A generator seeded by a stable hash of `key` (Python's hash() is salted per process)."""
    return np.random.default_rng(zlib.crc32(repr(key).encode()))


def _fake_eval(name: str, b: int, path: tuple[int, ...], opts: dict, one_player: bool):
    r = _rng(name, b, path)
    legal = r.random(A) < 0.75 if opts.get("masks") else np.ones(A, bool)
    if not legal.any():
        legal[int(r.integers(A))] = True
    terminal = bool(opts.get("terminal") and r.random() < 0.25)
    reward = float(np.round(r.uniform(-1, 1), 3)) if one_player else 0.0
    value = float(np.round(r.uniform(-1, 1), 3))
    logits = np.round(r.normal(size=A), 3)
    return reward, value, logits, legal, terminal


def _path(tree, b: int, node: int) -> tuple[int, ...]:
    actions = []
    while node > 0:
        actions.append(int(tree.action[b, node]))
        node = int(tree.parent[b, node])
    return tuple(reversed(actions))


def run_config(name: str):
    """Searches config `name` with the ptree; returns (tree, outputs, inputs) for the golden file."""
    from lzlite.mcts.ptree import Tree

    kwargs, opts = CONFIGS[name]
    one_player = kwargs["value_sign"] > 0
    r = _rng(name, "root")
    logits = np.round(r.normal(size=(B, A)), 3).astype(np.float32)
    value = np.round(r.uniform(-1, 1, size=B), 3).astype(np.float32)
    legal = r.random((B, A)) < 0.75 if opts.get("masks") else np.ones((B, A), bool)
    legal[:, 1] = True
    reset = dict(prior_logits=logits, value=value, legal_mask=legal)
    if opts.get("noise"):
        noise = np.where(legal, np.round(r.dirichlet(np.full(A, 0.5), size=B), 3), 0.0)
        reset.update(noise=(noise / noise.sum(1, keepdims=True)).astype(np.float32), noise_weight=0.25)
    if opts.get("gumbel"):
        reset.update(gumbel=np.round(r.gumbel(size=(B, A)), 3).astype(np.float32))
    if opts.get("reuse"):
        reset.update(reuse_action=np.array([1, -1], np.int32), reuse_value=np.array([0.5, 0.0], np.float32))
    tree = Tree(B, A, **kwargs)
    tree.reset(**reset)
    N = tree.num_nodes
    for _ in range(kwargs["num_simulations"]):
        parent, action, _, _ = tree.traverse()
        rows = [_fake_eval(name, b, _path(tree, b, int(parent[b] - b * N)) + (int(action[b]),), opts, one_player)
                for b in range(B)]
        reward, val, lg, lm, term = (np.array(x) for x in zip(*rows))
        tree.expand_and_backup(reward.astype(np.float32), val.astype(np.float32), lg.astype(np.float32),
                               lm if opts.get("masks") else None, term if opts.get("terminal") else None)
    return tree, tree.outputs(), reset


def _jsonable(x):
    if isinstance(x, np.ndarray):
        return x.tolist()
    return x


def main() -> None:
    sys.path.insert(0, os.path.dirname(os.path.dirname(HERE)))
    os.makedirs(GOLDEN_DIR, exist_ok=True)
    for name in CONFIGS:
        tree, out, reset = run_config(name)
        doc = dict(
            config=dict(name=name, tree_kwargs=CONFIGS[name][0], options=CONFIGS[name][1]),
            inputs={k: _jsonable(v) for k, v in reset.items()},
            outputs={k: _jsonable(v) for k, v in out.items()},
            roots=[{k: _jsonable(tree.node_arrays(b)[k]) for k in NODE_KEYS} for b in range(B)],
        )
        path = os.path.join(GOLDEN_DIR, f"{name}.json")
        with open(path, "w") as f:
            json.dump(doc, f, indent=1)
            f.write("\n")
        print("wrote", path)


if __name__ == "__main__":
    main()
