"""`python -m lzlite.entry.play --cfg FILE --ckpt CKPT`: a human plays a trained agent in the terminal.

    python -m lzlite.entry --cfg zoo/tictactoe/config.py            # train; writes runs/<exp>/...
    python -m lzlite.entry.play --cfg runs/tictactoe_alphazero/config.py \\
        --ckpt runs/tictactoe_alphazero/ckpt/last.pt --agent-first

How to type a move (the board is drawn with its coordinates):

- tictactoe / gomoku: a coordinate ``b2`` (column letter, row number; row 1 is the top row), or
  ``row col`` as two numbers (``2 2``, 1-based, as labelled), or the cell index ``4`` (0-based,
  row-major from the top-left: the action index the agent uses).
- connect4: a column number 1-7, as labelled under the board (1 is the leftmost column).
- ``q`` quits, ``h`` prints this help. Illegal or malformed input is answered and asked again.

The agent searches with the checkpoint's network in evaluation mode (no root noise, greedy move) and
prints its search value, from its own view (+1: it expects to win). A missing or corrupt checkpoint,
or a config whose model does not match the checkpoint, is one error line and exit code 2.
"""
from __future__ import annotations

import argparse
import re
import sys
from typing import Any, Callable, List, Optional

import numpy as np

from lzlite.config import ConfigError
from lzlite.entry.agent import Agent, AgentError, load_agent
from lzlite.entry.utils import debug_tracebacks
from lzlite.registry import RegistryError
from lzlite.worker.checkpoint import CheckpointError

__all__ = ["main", "build_parser", "parse_move", "move_name", "render_board", "play_game", "MoveError"]

EXIT_USAGE = 2
QUIT_WORDS = ("q", "quit", "exit")
HELP_WORDS = ("h", "help", "?")
PLAYER_MARKS = ("X", "O")  # BatchGame.render: X is the first player, O the second
MAX_MOVE_CHARS = 16  # a move is a few characters ('b2', '9 9', '80'): longer input is none


class MoveError(ValueError):
    """Input that is not a legal move; the message says why and what to type instead."""


# ----------------------------------------------------------------------------------- move notation
def _is_columns_game(game: Any) -> bool:
    # connect4's actions are columns (A == cols); the other board games' actions are cells (A == rows*cols)
    return int(game.num_actions) == int(game.cols)


def move_name(game: Any, action: int) -> str:
    """Human name of ``action``: 'b2' for a cell game, 'column 4' (1-based) for connect4."""
    if _is_columns_game(game):
        return f"column {action + 1}"
    row, col = divmod(int(action), int(game.cols))
    return f"{chr(ord('a') + col)}{row + 1}"


def move_help(game: Any) -> str:
    """How to type a move in ``game``."""
    if _is_columns_game(game):
        return f"type a column number 1-{game.cols} (as labelled under the board), or q to quit"
    last = move_name(game, game.num_actions - 1)
    return (f"type a cell as a1..{last} (column letter, row number), as 'row col' (e.g. '2 3', 1-based), "
            f"or as a cell index 0-{game.num_actions - 1} (row-major from the top-left); q quits")


def parse_move(game: Any, text: str, legal_mask: np.ndarray) -> int:
    """The action index a human typed.

    Args:
        game: a zoo BatchGame (tictactoe, connect4, gomoku).
        text: the typed line.
        legal_mask: bool [A], legal actions in the current position.
    Returns:
        The action index in [0, A).
    Raises:
        MoveError: malformed, out of range or illegal input; the message explains what to type.
    """
    s = text.strip().lower()
    if len(s) > MAX_MOVE_CHARS:  # also keeps int() from a number of thousands of digits (Python refuses > 4300)
        raise MoveError(f"'{s[:12]}...' ({len(s)} characters) is not a move: {move_help(game)}")
    rows, cols = int(game.rows), int(game.cols)
    if _is_columns_game(game):
        if not re.fullmatch(r"\d+", s):
            raise MoveError(f"'{text.strip()}' is not a column: {move_help(game)}")
        col = int(s)
        if not 1 <= col <= cols:
            raise MoveError(f"column {col} is out of range: columns are numbered 1-{cols}")
        action = col - 1
        if not legal_mask[action]:
            raise MoveError(f"column {col} is full; choose another column")
        return action
    if m := re.fullmatch(r"([a-z])\s*(\d+)", s):
        col, row = ord(m.group(1)) - ord("a"), int(m.group(2)) - 1
        if not (0 <= col < cols and 0 <= row < rows):
            raise MoveError(f"'{s}' is off the board: columns are a-{chr(ord('a') + cols - 1)}, rows 1-{rows}")
        action = row * cols + col
    elif m := re.fullmatch(r"(\d+)\s*[\s,]\s*(\d+)", s):
        row, col = int(m.group(1)) - 1, int(m.group(2)) - 1
        if not (0 <= row < rows and 0 <= col < cols):
            raise MoveError(f"row {row + 1}, column {col + 1} is off the board: rows and columns are 1-based, "
                            f"rows 1-{rows}, columns 1-{cols}")
        action = row * cols + col
    elif re.fullmatch(r"\d+", s):
        action = int(s)
        if not 0 <= action < game.num_actions:
            raise MoveError(f"cell index {action} is out of range 0-{game.num_actions - 1} "
                            f"(for row/column coordinates type e.g. 'b2' or '2 2')")
    else:
        raise MoveError(f"'{text.strip()}' is not a move: {move_help(game)}")
    if not legal_mask[action]:
        raise MoveError(f"{move_name(game, action)} (cell {action}) is already taken; choose an empty '.' cell")
    return action


def render_board(game: Any, state_row: np.ndarray) -> str:
    """``BatchGame.render`` with coordinates: column letters and row numbers, or connect4 column numbers."""
    lines = game.render(state_row).splitlines()
    if _is_columns_game(game):
        return "\n".join(["  " + line for line in lines] + ["  " + " ".join(str(c + 1) for c in range(game.cols))])
    width = len(str(game.rows))
    header = " " * (width + 2) + " ".join(chr(ord("a") + c) for c in range(game.cols))
    body = [f"{r + 1:>{width}}  {line}" for r, line in enumerate(lines)]
    return "\n".join([header] + body)


# ------------------------------------------------------------------------------------------ a game
def play_game(
    agent: Agent,
    human_player: int,
    input_fn: Callable[[str], str],
    print_fn: Callable[..., None],
    show_value: bool = True,
) -> Optional[str]:
    """Play one game between a human and ``agent`` (``lzlite.load_agent``).

    Args:
        agent: the agent; its one-game env holds the game.
        human_player: 0 (the human moves first, X) or 1 (the agent moves first).
        input_fn: reads one line of human input given a prompt (``input``); EOF quits.
        print_fn: writes one line of output (``print``).
    Returns:
        'human', 'agent' or 'draw'; None when the human quit.
    """
    game = agent.game
    moves: List[int] = []
    agent.set_position(moves)
    venv = agent.venv
    mark = PLAYER_MARKS[human_player]
    print_fn(f"You are {mark} ({'first' if human_player == 0 else 'second'} player). {move_help(game)}.")
    print_fn(render_board(game, venv.states[0]))
    while not venv.done[0]:
        if int(venv.to_play()[0]) == human_player:
            action = _read_human_move(game, venv.legal_mask()[0], mark, input_fn, print_fn)
            if action is None:
                print_fn("Quit: game abandoned.")
                return None
            print_fn(f"you play {move_name(game, action)}")
        else:
            analysis = agent.analyse(moves)  # (sets the position again: the env is left where it was)
            action = analysis.action
            value = f" (search value {analysis.root_value:+.2f} for the agent)" if show_value else ""
            print_fn(f"agent plays {move_name(game, action)}{value}")
        moves.append(action)
        venv.step(np.array([action]), np.array([0]))
        print_fn(render_board(game, venv.states[0]))
    winner = int(venv.winner()[0])
    result = "draw" if winner < 0 else "human" if winner == human_player else "agent"
    print_fn({"draw": "Result: draw.", "human": f"Result: you win ({mark})!",
              "agent": f"Result: the agent wins ({PLAYER_MARKS[1 - human_player]})."}[result])
    return result


def _read_human_move(game: Any, legal: np.ndarray, mark: str, input_fn: Callable[[str], str],
                     print_fn: Callable[..., None]) -> Optional[int]:
    """Ask until a legal move is typed; None when the human quits (q or end of input)."""
    while True:
        try:
            text = input_fn(f"your move ({mark}): ")
        except EOFError:
            return None
        word = text.strip().lower()
        if word in QUIT_WORDS:
            return None
        if word in HELP_WORDS:
            print_fn(move_help(game))
            continue
        if not word:
            continue
        try:
            return parse_move(game, text, legal)
        except MoveError as e:
            print_fn(f"illegal move: {e}")


# ------------------------------------------------------------------------------------- command line
def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m lzlite.entry.play",
        description="Play a trained lzlite agent in the terminal (tictactoe, connect4, gomoku).",
        epilog="moves: tictactoe/gomoku: 'b2' (column letter + row number), 'row col' (1-based) or a cell "
               "index (0-based); connect4: a column 1-7. q quits.",
    )
    p.add_argument("--cfg", required=True, metavar="FILE",
                   help="the experiment's config file (e.g. runs/<exp_name>/config.py written by training)")
    p.add_argument("--ckpt", required=True, metavar="CKPT", help="checkpoint, e.g. runs/<exp_name>/ckpt/last.pt")
    side = p.add_mutually_exclusive_group()
    side.add_argument("--human-first", dest="human_first", action="store_true", default=True,
                      help="you play first, as X (default)")
    side.add_argument("--agent-first", dest="human_first", action="store_false", help="the agent plays first")
    p.add_argument("--simulations", type=int, default=None, metavar="N",
                   help="search simulations per agent move (default: eval_num_simulations, else num_simulations)")
    p.add_argument("--seed", type=int, default=0, help="seed of the search's generator")
    p.add_argument("--device", default="cpu", help="torch device of the agent's network (default: cpu)")
    p.add_argument("--no-value", dest="show_value", action="store_false", help="hide the agent's search value")
    return p


def main(argv: Optional[List[str]] = None, input_fn: Callable[[str], str] = input,
         print_fn: Callable[..., None] = print) -> int:
    """Run the play CLI; returns the exit code (0: played or quit, 2: bad config/checkpoint)."""
    args = build_parser().parse_args(argv)
    try:
        if args.simulations is not None and args.simulations < 1:
            raise AgentError(f"--simulations must be at least 1, got {args.simulations}")
        agent = load_agent(cfg=args.cfg, ckpt=args.ckpt, simulations=args.simulations, device=args.device,
                           seed=args.seed)
    except (ConfigError, RegistryError, CheckpointError, AgentError) as e:
        if debug_tracebacks():  # LZLITE_DEBUG=1: the traceback instead of one line
            raise
        print(f"lzlite.play: error: {e}", file=sys.stderr)
        return EXIT_USAGE
    try:
        play_game(agent, 0 if args.human_first else 1, input_fn, print_fn, show_value=args.show_value)
    except KeyboardInterrupt:
        print_fn("\nQuit: interrupted.")
        return 130
    return 0


if __name__ == "__main__":
    sys.exit(main())
