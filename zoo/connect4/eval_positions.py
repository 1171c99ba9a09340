"""The positions Connect Four's optimal-move rate is graded on (eval_positions.json beside this file).

Random openings of 10-26 plies, each with the moves that keep its exact value per the bitboard solver;
regenerate with `python zoo/connect4/gen_eval_positions.py`.
"""
import json
import os
from typing import Tuple

import numpy as np

from lzlite.registry import GRADED_POSITIONS_REGISTRY
from zoo._zoo import make_batch_game


@GRADED_POSITIONS_REGISTRY.register("connect4")
def graded_positions() -> Tuple[np.ndarray, np.ndarray]:
    """(states uint8 [M, state_bytes], optimal bool [M, 7])."""
    game = make_batch_game("connect4")
    with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "eval_positions.json"), encoding="utf-8") as f:
        items = json.load(f)["positions"]
    states = np.stack([game.parse(item["position"]) for item in items])
    optimal = np.zeros((len(items), game.num_actions), dtype=bool)
    for i, item in enumerate(items):
        optimal[i, item["optimal"]] = True
    return states, optimal
