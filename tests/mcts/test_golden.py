"""Golden trees: the full node arrays of a few searches, committed as JSON and reviewed on change.

A failure means the search's behaviour changed. If the change is intended, regenerate with
`python tests/mcts/make_golden.py` and review the JSON diff.
"""
import json
import os

import numpy as np
import pytest
from make_golden import CONFIGS, GOLDEN_DIR, NODE_KEYS, run_config


@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_golden_tree(name):
    with open(os.path.join(GOLDEN_DIR, f"{name}.json")) as f:
        golden = json.load(f)
    tree, out, _ = run_config(name)
    for b, want in enumerate(golden["roots"]):
        got = tree.node_arrays(b)
        for key in NODE_KEYS:
            np.testing.assert_allclose(np.asarray(got[key], np.float64), np.asarray(want[key], np.float64),
                                       rtol=1e-9, atol=1e-12, err_msg=f"{name}: root {b} {key}")
    for key, want in golden["outputs"].items():
        np.testing.assert_allclose(np.asarray(out[key], np.float64), np.asarray(want, np.float64),
                                   rtol=1e-6, err_msg=f"{name}: outputs[{key!r}]")


def test_golden_files_cover_the_interesting_cases():
    docs = {}
    for name in CONFIGS:
        with open(os.path.join(GOLDEN_DIR, f"{name}.json")) as f:
            docs[name] = json.load(f)
    # Terminal children, reuse children and multi-level trees really occur in the goldens.
    assert any(any(r["terminal"][k] and r["parent"][k] != 0 or r["terminal"][k]
                   for r in d["roots"] for k in range(len(r["terminal"]))) for d in docs.values())
    assert max(max(r["parent"]) for d in docs.values() for r in d["roots"]) >= 2, "no depth >= 3 node"
    reuse = docs["puct_reuse_terminal"]["roots"][0]
    k = reuse["children"][0][1]
    assert k > 0 and reuse["terminal"][k] and reuse["reward"][k] == pytest.approx(0.5)
