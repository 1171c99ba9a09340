"""The positions tic-tac-toe's optimal-move rate is graded on: all 4,520 reachable non-terminal ones."""
from typing import Tuple

import numpy as np

from lzlite.envs.games import reachable_positions
from lzlite.registry import GRADED_POSITIONS_REGISTRY
from zoo._zoo import make_batch_game
from zoo.bots import optimal_move_mask


@GRADED_POSITIONS_REGISTRY.register("tictactoe")
def graded_positions() -> Tuple[np.ndarray, np.ndarray]:
    """(states uint8 [4520, state_bytes], optimal bool [4520, 9]), graded by full search."""
    states = reachable_positions(make_batch_game("tictactoe"))
    return states, optimal_move_mask("tictactoe", states)
