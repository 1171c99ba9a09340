"""The positions tic-tac-toe's optimal-move rate is graded on: all 4,520 reachable non-terminal ones."""
from typing import Tuple

import numpy as np


def graded_positions() -> Tuple[np.ndarray, np.ndarray]:
    """(states uint8 [4520, state_bytes], optimal bool [4520, 9]), graded by full search."""
    import zoo
    from lzlite.worker.metrics import optimal_move_mask, reachable_positions

    states = reachable_positions(zoo.make_batch_game("tictactoe"))
    return states, optimal_move_mask("tictactoe", states)
