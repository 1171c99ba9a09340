"""The agent API (lzlite.load_agent -> Agent.move / Agent.analyse): positions where the search alone finds the
win, the analysis's invariants, and one-line errors for every bad input."""
import numpy as np
import pytest

import lzlite
from lzlite.config import ConfigError
from lzlite.entry import train_alphazero
from lzlite.entry.agent import Agent, AgentError, board_cells, load_agent
from lzlite.worker.checkpoint import CheckpointError

SIMS = 64


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory):
    """A tiny tic-tac-toe AlphaZero run (50 env steps)."""
    from tiny_configs import tiny_config

    run_dir = tmp_path_factory.mktemp("agent_run")
    train_alphazero(tiny_config("alphazero"), seed=0, max_env_step=50, run_dir=str(run_dir), progress=False)
    return str(run_dir)


@pytest.fixture(scope="module")
def agent(run_dir):
    return load_agent(run_dir, simulations=SIMS)


def test_public_api_and_both_ways_to_load(run_dir, agent):
    assert lzlite.load_agent is load_agent and "load_agent" in lzlite.__all__
    other = lzlite.load_agent(cfg=f"{run_dir}/config.py", ckpt=f"{run_dir}/ckpt/best.pt", simulations=SIMS)
    assert isinstance(other, Agent) and other.game_name == agent.game_name == "tictactoe"


def test_the_search_takes_an_immediate_win(agent):
    # X: a1 b1 (cells 0, 1); O: a2 b2 (cells 3, 4); X to move wins at c1 (cell 2), and O threatens c2 (cell 5)
    moves = [0, 3, 1, 4]
    a = agent.analyse(moves=moves)
    assert a.legal == [2, 5, 6, 7, 8] and a.to_play == 0
    assert a.action == 2 and agent.move(moves=moves) == 2
    assert sum(a.visits) == SIMS and len(a.q) == len(a.prior) == 5
    assert a.q[0] == pytest.approx(1.0)  # the winning child's value is the game's, not the network's
    assert a.visits[0] == max(a.visits) and a.root_value > 0.5
    assert sum(a.prior) == pytest.approx(1.0, abs=1e-5)


def test_the_second_player_takes_its_win(agent):
    # X: a1 b1 c3 (0, 1, 8); O: b2 a3 (4, 6); O to move wins at c1 (cell 2), which X threatens too
    moves = [0, 4, 1, 6, 8]
    assert agent.move(moves=moves) == 2


def test_observation_gives_the_same_analysis_as_the_moves(agent):
    moves = [0, 3, 1, 4]
    agent.set_position(moves)
    obs = agent.venv.observe()[0].copy()
    by_obs, by_moves = agent.analyse(observation=obs), agent.analyse(moves=moves)
    assert by_obs == by_moves  # and the search is deterministic for the agent's seed
    assert agent.analyse(moves=moves) == by_moves


def test_board_cells_follow_from_cells_convention(agent):
    agent.set_position([4, 0, 8])
    cells = board_cells(agent.game, agent.venv.states)[0]
    assert cells.tolist() == [1, -1, -1, -1, 0, -1, -1, -1, 0]


@pytest.mark.parametrize("kwargs, message", [
    (dict(moves=[4, 4]), r"move 1 \(4\) is illegal"),
    (dict(moves=[9]), r"move 0 \(9\) is out of range: tictactoe actions are 0..8"),
    (dict(moves=[-1]), "out of range"),
    (dict(moves=[0, 3, 1, 4, 2, 5]), r"move 5 \(5\) comes after the game ended"),
    (dict(moves=[True]), "must be an int"),
    (dict(moves=["b2"]), "must be an int"),
    (dict(moves=[1.0]), "must be an int"),
    (dict(moves="012"), "must be a list of action indices"),
    (dict(moves=[0, 3, 1, 4, 2]), "the game is over"),
    (dict(moves=[0], observation=np.zeros((3, 3, 3))), "not both"),
    (dict(observation=np.zeros((3, 4, 4))), r"shape \(3, 4, 4\)"),
    (dict(observation="x"), "numeric array"),
    (dict(observation=np.full((3, 3, 3), 0.5)), "0 / 1 stones"),
    (dict(observation=np.stack([np.eye(3), np.eye(3), np.zeros((3, 3))])), "never share a cell"),
    # two stones of the mover and none of the opponent, first player to move: counts say otherwise
    (dict(observation=np.stack([np.diag([1.0, 1.0, 0.0]), np.zeros((3, 3)), np.zeros((3, 3))])),
     "not a tictactoe position"),
    # one X stone, and the to-play plane says X moves again
    (dict(observation=np.stack([np.diag([1.0, 0.0, 0.0]), np.zeros((3, 3)), np.zeros((3, 3))])),
     "stone counts say"),
])
def test_bad_positions_are_one_line_errors(agent, kwargs, message):
    with pytest.raises(AgentError, match=message) as e:
        agent.analyse(**kwargs)
    assert "\n" not in str(e.value)


def test_bad_loads_are_one_line_errors(run_dir, tmp_path):
    with pytest.raises(AgentError, match="needs a run dir"):
        load_agent()
    with pytest.raises(AgentError, match="does not exist"):
        load_agent(str(tmp_path / "nope"))
    with pytest.raises(AgentError, match="simulations must be an int of at least 1"):
        load_agent(run_dir, simulations=0)
    with pytest.raises(CheckpointError):
        load_agent(run_dir, ckpt=str(tmp_path / "missing.pt"))
    with pytest.raises(ConfigError):
        load_agent(cfg=str(tmp_path / "missing.py"), ckpt=f"{run_dir}/ckpt/last.pt")
    cartpole = tmp_path / "cartpole.py"
    cartpole.write_text("from zoo.cartpole.config import main_config, create_config\n")
    with pytest.raises(AgentError, match="not a two-player zoo board game"):
        load_agent(cfg=str(cartpole), ckpt=f"{run_dir}/ckpt/last.pt")
