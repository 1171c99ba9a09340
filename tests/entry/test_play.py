"""The play CLI (`python -m lzlite.entry.play`): move parsing, scripted games, quitting, bad checkpoints."""
import os
import re
import subprocess
import sys

import numpy as np
import pytest

import zoo
from lzlite.entry import train_alphazero
from lzlite.entry.play import MoveError, main, move_name, parse_move, render_board
from lzlite.worker.checkpoint import save_checkpoint

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TESTS_ENTRY = os.path.dirname(os.path.abspath(__file__))


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    """A tiny tic-tac-toe AlphaZero run (50 env steps): its resolved config file and checkpoint."""
    from tiny_configs import tiny_config

    run_dir = tmp_path_factory.mktemp("play_run")
    train_alphazero(tiny_config("alphazero"), seed=0, max_env_step=50, run_dir=str(run_dir), progress=False)
    return str(run_dir / "config.py"), str(run_dir / "ckpt" / "last.pt")


class Script:
    """input_fn replaying fixed lines (EOF after the last); print_fn collecting the output lines."""

    def __init__(self, lines):
        self.lines = list(lines)
        self.out = []
        self.prompts = 0

    def input(self, prompt):
        self.prompts += 1
        if not self.lines:
            raise EOFError
        return self.lines.pop(0)

    def print(self, *args):
        self.out.extend(" ".join(str(a) for a in args).splitlines())

    def grep(self, pattern):
        return [line for line in self.out if re.search(pattern, line)]


# --------------------------------------------------------------------------------- move notation
@pytest.mark.parametrize("text, action", [("b2", 4), ("B2", 4), ("2 2", 4), ("2,3", 5), ("4", 4), ("a1", 0),
                                          ("c3", 8), (" 0 ", 0), ("3 1", 6)])
def test_tictactoe_move_notation(text, action):
    g = zoo.make_batch_game("tictactoe")
    assert parse_move(g, text, np.ones(9, dtype=bool)) == action


@pytest.mark.parametrize("text, message", [("d1", "off the board"), ("a4", "off the board"), ("9", "out of range"),
                                           ("0 1", "off the board"), ("hello", "not a move"), ("b", "not a move")])
def test_tictactoe_bad_input_explains(text, message):
    g = zoo.make_batch_game("tictactoe")
    with pytest.raises(MoveError, match=message):
        parse_move(g, text, np.ones(9, dtype=bool))


def test_occupied_cell_and_full_column_are_rejected():
    ttt = zoo.make_batch_game("tictactoe")
    legal = np.ones(9, dtype=bool)
    legal[4] = False
    with pytest.raises(MoveError, match=r"b2 \(cell 4\) is already taken"):
        parse_move(ttt, "2 2", legal)
    c4 = zoo.make_batch_game("connect4")
    legal = np.ones(7, dtype=bool)
    legal[2] = False
    assert parse_move(c4, "1", legal) == 0 and parse_move(c4, "7", legal) == 6
    with pytest.raises(MoveError, match="column 3 is full"):
        parse_move(c4, "3", legal)
    with pytest.raises(MoveError, match="out of range"):
        parse_move(c4, "0", legal)
    with pytest.raises(MoveError, match="not a column"):
        parse_move(c4, "d4", legal)


def test_gomoku_coordinates_and_board_labels():
    g = zoo.make_batch_game("gomoku")
    assert parse_move(g, "i9", np.ones(81, dtype=bool)) == 80
    assert parse_move(g, "1 9", np.ones(81, dtype=bool)) == 8
    assert move_name(g, 10) == "b2"
    board = render_board(g, g.new_states(1)[0]).splitlines()
    assert board[0].split() == list("abcdefghi") and board[9].split()[0] == "9"
    c4 = zoo.make_batch_game("connect4")
    assert render_board(c4, c4.new_states(1)[0]).splitlines()[-1].split() == [str(c) for c in range(1, 8)]
    assert move_name(c4, 0) == "column 1"


# ------------------------------------------------------------------------------------ scripted games
def test_full_game_ends_with_a_result_line(trained):
    cfg, ckpt = trained
    # the human walks the cells in order: taken cells are answered and asked again until one is free
    s = Script([str(c) for c in range(9)])
    assert main(["--cfg", cfg, "--ckpt", ckpt, "--human-first"], s.input, s.print) == 0
    results = s.grep(r"^Result: ")
    assert len(results) == 1
    human, agent = s.grep(r"^you play "), s.grep(r"^agent plays ")
    assert len(human) - len(agent) in (0, 1) and 5 <= len(human) + len(agent) <= 9
    assert human[0] == "you play a1"  # cell 0 is the human's first move when the human starts
    final = [line.split()[1:] for line in s.out[-4:-1]]  # the last board's 3 rows, labels dropped
    cells = [c for row in final for c in row]
    assert cells.count("X") == len(human) and cells.count("O") == len(agent)


def test_illegal_input_reprompts(trained):
    cfg, ckpt = trained
    s = Script(["hello", "9", "4 4", "", "h"])  # then EOF: quits
    assert main(["--cfg", cfg, "--ckpt", ckpt, "--agent-first", "--no-value"], s.input, s.print) == 0
    errors = s.grep(r"^illegal move: ")
    assert len(errors) == 3 and "not a move" in errors[0] and "out of range" in errors[1] and "off the board" in errors[2]
    assert s.prompts == 6  # five scripted lines re-prompted, the sixth read hit EOF
    assert s.grep("^agent plays ") and not s.grep("search value")
    assert s.grep("^Quit") and not s.grep("^Result")


def test_taken_cell_is_answered_and_game_goes_on(trained):
    cfg, ckpt = trained
    out = []

    def input_fn(prompt, state={"n": 0}):
        state["n"] += 1
        if state["n"] == 1:  # type the agent's opening cell: it is taken
            return re.search(r"agent plays (\w\d)", "\n".join(out)).group(1)
        if state["n"] == 2:
            return "q"
        raise AssertionError("asked for a third move after quitting")

    assert main(["--cfg", cfg, "--ckpt", ckpt, "--agent-first"], input_fn, out.append) == 0
    assert any("is already taken" in line for line in out)
    assert any(line.startswith("Quit") for line in out)


def test_quit_immediately(trained):
    cfg, ckpt = trained
    s = Script(["q"])
    assert main(["--cfg", cfg, "--ckpt", ckpt], s.input, s.print) == 0
    assert s.prompts == 1 and not s.grep("plays") and s.grep("^Quit")


def test_connect4_game_with_an_untrained_agent(tmp_path):
    # the CLI works on any zoo board game; an untrained checkpoint suffices to drive a full game
    from lzlite.config import compile_config
    from lzlite.entry.loop import build_components

    cfg_file = tmp_path / "c4.py"
    cfg_file.write_text(
        "from lzlite.config import extend_base\n"
        "main_config, create_config = extend_base('alphazero', dict(exp_name='c4', policy=dict(\n"
        "    num_simulations=4, collector_env_num=1, evaluator_env_num=1, model=dict(observation_shape=[3, 6, 7],\n"
        "    action_space_size=7, num_res_blocks=1, num_channels=8))), dict(env=dict(type='connect4')))\n")
    from lzlite.config import load_config_file

    policy = build_components(compile_config(*load_config_file(str(cfg_file))))["policy"]
    save_checkpoint(str(tmp_path / "c4.pt"), dict(policy=policy.state_dict()))
    s = Script([str(1 + c % 7) for c in range(60)])
    assert main(["--cfg", str(cfg_file), "--ckpt", str(tmp_path / "c4.pt"), "--simulations", "2"], s.input, s.print) == 0
    assert len(s.grep("^Result: ")) == 1
    assert s.grep("^you play column 1$")


# ------------------------------------------------------------------------------------ bad setups
def test_missing_corrupt_and_mismatched_checkpoints_exit_2(trained, tmp_path, capsys):
    cfg, ckpt = trained
    assert main(["--cfg", cfg, "--ckpt", str(tmp_path / "none.pt")], Script([]).input, print) == 2
    assert "checkpoint not found" in capsys.readouterr().err
    (tmp_path / "bad.pt").write_bytes(b"not a checkpoint")
    assert main(["--cfg", cfg, "--ckpt", str(tmp_path / "bad.pt")], Script([]).input, print) == 2
    assert "corrupt" in capsys.readouterr().err
    wider = tmp_path / "wider.py"
    wider.write_text(open(cfg).read().replace("'num_channels': 8", "'num_channels': 16"))
    assert main(["--cfg", str(wider), "--ckpt", ckpt], Script([]).input, print) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "does not match" in err[0] and "(8, 3, 3, 3)" in err[0] and "(16, 3, 3, 3)" in err[0]
    assert main(["--cfg", cfg, "--ckpt", ckpt, "--simulations", "0"], Script([]).input, print) == 2
    assert "--simulations must be at least 1" in capsys.readouterr().err


def test_command_line_with_scripted_stdin(trained):
    cfg, ckpt = trained
    stdin = "".join(f"{c}\n" for c in range(9))
    proc = subprocess.run([sys.executable, "-m", "lzlite.entry.play", "--cfg", cfg, "--ckpt", ckpt, "--agent-first",
                           "--simulations", "4"], input=stdin, capture_output=True, text=True, cwd=REPO, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr
    assert len(re.findall(r"^Result: ", proc.stdout, flags=re.M)) == 1
