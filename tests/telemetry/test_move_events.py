"""The collectors' on_move seam: MoveEvents for the first games of a collect, agreeing with what was recorded, and a
collect with a hook plays exactly the games of one without."""
import os
import sys

import numpy as np
import pytest
import torch

from lzlite.config import compile_config
from lzlite.entry.loop import build_components
from lzlite.telemetry.events import MoveEvent, MoveHook, cells_from_observation

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "entry"))
from tiny_configs import tiny_config  # noqa: E402


@pytest.fixture(autouse=True)
def one_torch_thread():
    """As training runs (policy.num_threads=1): small nets, and two threads fight on a busy machine."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


def _parts(algo, collector=None, **overrides):
    main, create = tiny_config(algo, **overrides)
    if collector:
        create["collector"] = dict(type=collector)
    parts = build_components(compile_config(main, create, seed=0))
    torch.manual_seed(0)
    return parts


@pytest.mark.parametrize("algo, collector", [("alphazero", None), ("muzero", None), ("alphazero", "engine_collector"),
                                             ("muzero", "engine_collector")])
def test_a_hook_changes_no_game_and_sees_the_first_games_whole(algo, collector):
    """The lock-step collector reports each move as it is played; the engine's collector from its records after
    the window (the same events, later)."""
    plain, watched = _parts(algo, collector), _parts(algo, collector)
    events = []
    hook = MoveHook(2, events.append)
    for call in range(2):
        torch.manual_seed(call)
        a, _ = plain["collector"].collect()
        torch.manual_seed(call)
        b, _ = watched["collector"].collect(on_move=hook)
        for x, y in zip(a, b, strict=True):
            for key, value in x.to_arrays().items():
                np.testing.assert_array_equal(value, y.to_arrays()[key], err_msg=key)
    ids = sorted({e.game_id for e in events}, key=int)
    assert ids == ["0", "1", "8", "9"]  # the first two of each collect of 8; ids count the run's games
    games = {}
    for e in events:
        games.setdefault(e.game_id, []).append(e)
    recorded = {tuple(seg.to_arrays()["action"]) for seg in b}
    assert tuple(e.action for e in games["8"]) in recorded and tuple(e.action for e in games["9"]) in recorded
    for moves in games.values():
        assert [e.ply for e in moves] == list(range(len(moves)))
        assert moves[-1].done and moves[-1].winner in (-1, 0, 1) and not any(e.done for e in moves[:-1])
        for e in moves:
            assert isinstance(e, MoveEvent) and e.rows == e.cols == 3 and len(e.cells) == 9
            assert e.legal == [c for c in range(9) if e.cells[c] == -1]  # tic-tac-toe: the empty cells
            assert sum(e.visits) == 8 and len(e.q) == len(e.prior) == len(e.legal)
            assert abs(sum(e.prior) - 1.0) < 1e-4 and min(e.prior) >= 0.0  # the root prior over the legal moves
            assert e.to_play == e.ply % 2 and e.action in e.legal


def test_the_segment_collector_reports_its_first_slots():
    parts = _parts("unizero")
    events = []
    parts["collector"].collect(on_move=MoveHook(1, events.append))
    assert events and {e.game_id for e in events} <= {"0", str(parts["venv"].num_envs)}
    first = [e for e in events if e.game_id == "0"]
    assert [e.ply for e in first] == list(range(len(first)))


def test_hook_prefix_and_games_zero():
    seen = []
    hook = MoveHook(0, seen.append, prefix="actor2-")
    parts = _parts("alphazero")
    parts["collector"].collect(on_move=hook)
    assert seen == []
    e = MoveEvent("7", "tictactoe", 0, 3, 3, [-1] * 9, 0, 4, [4], [1], [0.5], [1.0], 0.5, False, -1)
    MoveHook(1, seen.append, prefix="actor2-")(e)
    assert seen[0].game_id == "actor2-7" and '"game_id":"actor2-7"' in seen[0].to_json()
    with pytest.raises(ValueError):
        MoveHook(-1, seen.append)


def test_cells_from_observation():
    obs = np.zeros((2, 3, 3, 3), dtype=np.float32)
    obs[0, 0, 0, 0] = 1  # player 0 to move: its stone at a1, the opponent's at b2
    obs[0, 1, 1, 1] = 1
    obs[1, 0, 2, 2] = 1  # player 1 to move: its stone at c3
    cells = cells_from_observation(obs, np.array([0, 1]))
    assert cells.tolist() == [[0, -1, -1, -1, 1, -1, -1, -1, -1], [-1] * 8 + [1]]


def test_a_game_without_a_board_never_calls_the_hook():
    pytest.importorskip("gymnasium", reason="gymnasium is not installed (pip install -e '.[test]')")
    from zoo.cartpole.muzero_config import create_config, main_config

    main = dict(main_config, policy=dict(main_config["policy"], num_simulations=2, collector_env_num=2, n_episode=2))
    parts = build_components(compile_config(main, create_config, seed=0))
    calls = []
    segments, _ = parts["collector"].collect(on_move=MoveHook(2, calls.append))
    assert segments and calls == []
