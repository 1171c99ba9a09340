"""User errors at the command lines are one line and exit code 2, not tracebacks; LZLITE_DEBUG=1 brings the
traceback back: a checkpoint of another game or network, a diverged run, a move of thousands of digits, values out
of their declared range."""
import os
import re

import pytest

from lzlite.config import ConfigError, compile_config, load_config_file
from lzlite.entry import eval as eval_cli
from lzlite.entry import play as play_cli
from lzlite.entry.__main__ import main as train_cli
from lzlite.entry.loop import build_components
from lzlite.worker.checkpoint import CheckpointError, save_checkpoint
from tiny_configs import tiny_config

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _config_file(tmp_path, name, algo="alphazero", **policy):
    main, create = tiny_config(algo, exp_name=name, **policy)
    path = tmp_path / f"{name}.py"
    path.write_text(f"main_config = {main!r}\ncreate_config = {create!r}\n")
    return str(path)


def _checkpoint(tmp_path, cfg_path, name):
    """The untrained weights of a config's policy, saved as training saves them."""
    policy = build_components(compile_config(*load_config_file(cfg_path)))["policy"]
    path = str(tmp_path / f"{name}.pt")
    save_checkpoint(path, dict(policy=policy.state_dict()))
    return path


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("user_errors")
    cfg = _config_file(tmp, "ttt_alphazero")
    return dict(
        tmp=tmp, cfg=cfg, ckpt=_checkpoint(tmp, cfg, "ttt_alphazero"),
        connect4=_checkpoint(tmp, os.path.join(REPO, "zoo", "connect4", "alphazero_config.py"), "c4_alphazero"),
        muzero=_checkpoint(tmp, _config_file(tmp, "ttt_muzero", "muzero"), "ttt_muzero"),
    )


def _one_line(err: str) -> str:
    """The one error line of stderr (progress bar redraws aside); no traceback anywhere."""
    assert "Traceback" not in err, err
    lines = [line for line in err.replace("\r", "\n").splitlines() if "error:" in line]
    assert len(lines) == 1, err
    return lines[0][lines[0].index("lzlite"):]


def test_eval_of_a_checkpoint_of_another_game_names_the_first_mismatching_weight(files, capsys):
    assert eval_cli.main(["--cfg", files["cfg"], "--ckpt", files["connect4"], "--episodes", "2"]) == 2
    line = _one_line(capsys.readouterr().err)
    assert line.startswith("lzlite.eval: error: checkpoint") and "c4_alphazero.pt' does not match" in line
    assert "experiment 'ttt_alphazero'" in line and "AlphaZeroModel" in line
    assert re.search(r"weights differ in shape \(first trunk\.\S+: checkpoint \(\d+, 3, 3, 3\) vs model \(8, 3, 3, 3\)\)",
                     line), line


def test_model_path_of_another_network_is_one_line(files, capsys):
    run_dir = str(files["tmp"] / "run_model_path")
    code = train_cli(["--cfg", files["cfg"], "--model-path", files["muzero"], "--run-dir", run_dir,
                      "--max-env-step", "20"])
    assert code == 2
    line = _one_line(capsys.readouterr().err)
    assert "ttt_muzero.pt' does not match the model of the config of experiment 'ttt_alphazero'" in line
    assert "weights of the model are missing (first trunk." in line and "weights are not the model's (first " in line


def test_a_diverged_run_names_the_step_and_the_learning_rate(tmp_path, capsys):
    cfg = _config_file(tmp_path, "diverges", learning_rate=1e9)
    code = train_cli(["--cfg", cfg, "--run-dir", str(tmp_path / "run"), "--max-env-step", "3000"])
    assert code == 2
    line = _one_line(capsys.readouterr().err)
    assert line.startswith("lzlite: error: training diverged at learner step ")
    assert "(learning rate 1e+09): non-finite loss" in line and "lower policy.learning_rate" in line


@pytest.mark.parametrize("key, value, message", [
    ("batch_size", 0, r"'main_config.policy.batch_size' must be in [1, inf), got 0"),
    ("discount_factor", 1.5, r"'main_config.policy.discount_factor' must be in [0, 1], got 1.5"),
    ("num_simulations", 0, r"'main_config.policy.num_simulations' must be in [1, inf), got 0"),
    ("replay_buffer_size", 16, "'main_config.policy.replay_buffer_size' must be greater than"),
])
def test_out_of_range_values_stop_the_command_line_in_one_line(tmp_path, capsys, key, value, message):
    cfg = _config_file(tmp_path, "bad", **{key: value})
    assert train_cli(["--cfg", cfg, "--run-dir", str(tmp_path / "run"), "--max-env-step", "100"]) == 2
    err = capsys.readouterr().err
    assert message in _one_line(err) and err.count("\n") == 1
    assert not os.path.exists(tmp_path / "run"), "a refused config writes nothing"


def test_play_answers_a_move_of_thousands_of_digits_and_goes_on(files):
    out = []
    lines = iter(["9" * 5000, "1 " + "9" * 5000, "q"])
    code = play_cli.main(["--cfg", files["cfg"], "--ckpt", files["ckpt"], "--simulations", "2"],
                         lambda prompt: next(lines), lambda *a: out.append(" ".join(map(str, a))))
    assert code == 0
    answers = [line for line in out if line.startswith("illegal move")]
    assert len(answers) == 2 and all(len(a) < 300 for a in answers), answers
    assert answers[0].startswith(f"illegal move: '{'9' * 12}...' (5000 characters) is not a move: type a cell")
    assert answers[1].startswith("illegal move: '1 9999999999...' (5002 characters) is not a move")
    assert out[-1] == "Quit: game abandoned."


def test_lzlite_debug_brings_the_traceback_back(files, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("LZLITE_DEBUG", "1")
    cfg = _config_file(tmp_path, "bad", batch_size=0)
    with pytest.raises(ConfigError, match="batch_size"):
        train_cli(["--cfg", cfg, "--run-dir", str(tmp_path / "run")])
    with pytest.raises(CheckpointError, match="does not match"):
        eval_cli.main(["--cfg", files["cfg"], "--ckpt", files["connect4"]])
    with pytest.raises(CheckpointError, match="checkpoint not found"):
        play_cli.main(["--cfg", files["cfg"], "--ckpt", str(tmp_path / "none.pt")], input, print)
    monkeypatch.setenv("LZLITE_DEBUG", "0")
    assert train_cli(["--cfg", cfg, "--run-dir", str(tmp_path / "run")]) == 2
    assert "Traceback" not in capsys.readouterr().err


def test_collector_flag_picks_the_collector_and_an_unknown_name_is_one_line(files, tmp_path, capsys):
    run_dir = tmp_path / "run"
    assert train_cli(["--cfg", files["cfg"], "--collector", "engine_collector", "--max-env-step", "1",
                      "--run-dir", str(run_dir)]) == 0
    _, create = load_config_file(str(run_dir / "config.py"))
    assert create["collector"]["type"] == "engine_collector"  # the resolved config (and so its actors) plays so
    capsys.readouterr()
    assert train_cli(["--cfg", files["cfg"], "--collector", "engine_colector", "--max-env-step", "1",
                      "--run-dir", str(tmp_path / "bad")]) == 2
    line = _one_line(capsys.readouterr().err)
    assert "engine_colector" in line and "engine_collector" in line, line


def test_collector_flag_plays_an_engine_recipe_lock_step(tmp_path, capsys):
    """Keys only the config's own collector reads are left out, in one line, rather than refused as unknown."""
    main, create = tiny_config("alphazero", exp_name="engine_recipe", engine_infer_cache=1024)
    create["collector"] = dict(type="engine_collector")
    cfg = tmp_path / "engine_recipe.py"
    cfg.write_text(f"main_config = {main!r}\ncreate_config = {create!r}\n")
    run_dir = tmp_path / "run"
    assert train_cli(["--cfg", str(cfg), "--collector", "episode_collector", "--max-env-step", "1",
                      "--run-dir", str(run_dir)]) == 0
    assert "leaving out engine_infer_cache (read by engine_collector only)" in capsys.readouterr().err
    main_run, create_run = load_config_file(str(run_dir / "config.py"))
    assert create_run["collector"]["type"] == "episode_collector"
    assert "engine_infer_cache" not in main_run["policy"]
