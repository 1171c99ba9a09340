"""End-to-end training on tic-tac-toe: every entry function, checkpoints, resume, reproducibility."""
import os
import re

import numpy as np
import pytest
import torch

from lzlite.entry import train_alphazero, train_muzero
from lzlite.entry.utils import calculate_update_per_collect
from lzlite.worker.checkpoint import CheckpointError, load_checkpoint, save_checkpoint
from tiny_configs import tiny_config

ALGOS = [("alphazero", train_alphazero), ("gumbel_alphazero", train_alphazero), ("muzero", train_muzero),
         ("gumbel_muzero", train_muzero)]


class NotPlainData:
    pass


def _params(policy):
    return [p.detach().clone() for p in policy.model.parameters()]


@pytest.mark.parametrize("algo, entry", ALGOS)
def test_entry_trains_end_to_end(tmp_path, algo, entry):
    cfg = tiny_config(algo)
    from lzlite.config import compile_config
    from lzlite.entry.loop import build_components

    initial = _params(build_components(compile_config(*cfg, seed=0))["policy"])
    policy = entry(cfg, seed=0, max_env_step=150, run_dir=str(tmp_path), progress=False)
    assert os.path.isfile(tmp_path / "config.py")
    state = load_checkpoint(str(tmp_path / "ckpt" / "last.pt"))
    assert state["counters"]["env_steps"] >= 150
    assert state["counters"]["train_iter"] == state["learner"]["train_iter"] > 0
    # the weights moved away from the seeded initialisation
    assert any(not torch.equal(a, b) for a, b in zip(initial, _params(policy)))
    ev = policy.final_eval
    assert abs(ev["random/win"] + ev["random/draw"] + ev["random/loss"] - 1.0) < 1e-6
    assert os.listdir(tmp_path / "tb")


def test_seeded_runs_are_reproducible(tmp_path):
    a = train_alphazero(tiny_config("alphazero"), seed=3, max_env_step=100, run_dir=str(tmp_path / "a"), progress=False)
    b = train_alphazero(tiny_config("alphazero"), seed=3, max_env_step=100, run_dir=str(tmp_path / "b"), progress=False)
    c = train_alphazero(tiny_config("alphazero"), seed=4, max_env_step=100, run_dir=str(tmp_path / "c"), progress=False)
    assert all(torch.equal(x, y) for x, y in zip(_params(a), _params(b)))
    assert not all(torch.equal(x, y) for x, y in zip(_params(a), _params(c)))


@pytest.mark.parametrize("algo, entry, extra", [
    (*ALGOS[0], {}), (*ALGOS[2], {}),
    (*ALGOS[2], dict(symmetry_augmentation=True, value_bootstrap="target_network")),  # both draw on resumed state
    ("grounded_gumbel_muzero", train_muzero, dict(symmetry_augmentation=True)),  # torch's generator, extras
])
def test_resume_continues_exactly(tmp_path, algo, entry, extra):
    # one uninterrupted run of two collects ...
    full = entry(tiny_config(algo, **extra), seed=1, max_env_step=100, run_dir=str(tmp_path / "full"), progress=False)
    # ... equals one collect, a stop, and a resumed second collect
    entry(tiny_config(algo, **extra), seed=1, max_env_step=50, run_dir=str(tmp_path / "split"), progress=False)
    first = load_checkpoint(str(tmp_path / "split" / "ckpt" / "last.pt"))
    resumed = entry(tiny_config(algo, **extra), seed=1, max_env_step=100, run_dir=str(tmp_path / "split"),
                    resume=True, progress=False)
    second = load_checkpoint(str(tmp_path / "split" / "ckpt" / "last.pt"))
    assert second["counters"]["env_steps"] > first["counters"]["env_steps"]
    assert all(torch.equal(x, y) for x, y in zip(_params(full), _params(resumed)))


def test_symmetry_augmentation_trains_on_transformed_batches(tmp_path, monkeypatch):
    from lzlite.buffer.augment import SymmetryAugmenter

    seen = []
    original = SymmetryAugmenter.__call__

    def spy(self, batch, rng, g=None):
        out = original(self, batch, rng, g)
        seen.append(not np.array_equal(out.obs, batch.obs))
        return out

    monkeypatch.setattr(SymmetryAugmenter, "__call__", spy)
    train_alphazero(tiny_config("alphazero", symmetry_augmentation=True), seed=0, max_env_step=100,
                    run_dir=str(tmp_path / "az"), progress=False)
    iters = load_checkpoint(str(tmp_path / "az" / "ckpt" / "last.pt"))["counters"]["train_iter"]
    assert iters > 0 and len(seen) == iters and any(seen)  # every learner batch, and it changed them


def test_symmetry_augmentation_on_an_env_without_symmetry_is_a_clear_error():
    from lzlite.config import compile_config
    from lzlite.entry.loop import build_components

    main, create = tiny_config("muzero", symmetry_augmentation=True)
    main["policy"]["model"] = dict(model_type="mlp", observation_shape=[4], action_space_size=2)
    create["env"]["type"] = "cartpole"
    with pytest.raises(ValueError, match="declares no board symmetry"):
        build_components(compile_config(main, create, seed=0))


def test_cosine_schedule_spans_the_run(tmp_path):
    from lzlite.config import ConfigError

    train_alphazero(tiny_config("alphazero", lr_schedule="cosine"), seed=0, max_env_step=200,
                    run_dir=str(tmp_path / "a"), progress=False)
    state = load_checkpoint(str(tmp_path / "a" / "ckpt" / "last.pt"))
    lr = state["learner"]["optimizer"]["param_groups"][0]["lr"]
    # ~200 env steps x replay ratio 0.25 = the horizon, so the run ends near the 10% floor (0.0003)
    assert 0.0003 <= lr < 0.0006, lr
    with pytest.raises(ConfigError, match="needs a known number of learner steps"):
        train_alphazero(tiny_config("alphazero", lr_schedule="cosine", update_per_collect=5), seed=0,
                        max_env_step=200, run_dir=str(tmp_path / "b"), progress=False)


def test_resume_without_checkpoint_and_corrupt_checkpoint(tmp_path):
    with pytest.raises(CheckpointError, match="no checkpoint"):
        train_alphazero(tiny_config("alphazero"), max_env_step=10, run_dir=str(tmp_path), resume=True, progress=False)
    ckpt = tmp_path / "ckpt" / "last.pt"
    ckpt.parent.mkdir(parents=True)
    ckpt.write_bytes(b"not a checkpoint at all")
    with pytest.raises(CheckpointError, match="corrupt"):
        train_alphazero(tiny_config("alphazero"), max_env_step=10, run_dir=str(tmp_path), resume=True, progress=False)


def test_mismatched_checkpoint_is_a_clear_error(tmp_path):
    train_alphazero(tiny_config("alphazero"), max_env_step=20, run_dir=str(tmp_path), progress=False)
    bigger = tiny_config("alphazero")
    bigger[0]["policy"]["model"]["num_channels"] = 16
    with pytest.raises(CheckpointError, match="does not match"):
        train_alphazero(bigger, max_env_step=40, run_dir=str(tmp_path), resume=True, progress=False)


def test_checkpoint_refuses_pickled_objects(tmp_path):
    path = str(tmp_path / "evil.pt")  # a class instance could run code on unpickling without weights_only
    torch.save({"lzlite_checkpoint_version": 1, "x": NotPlainData()}, path)
    with pytest.raises(CheckpointError, match="not plain data"):
        load_checkpoint(path)
    save_checkpoint(path, {"x": torch.ones(2), "n": 3})
    assert load_checkpoint(path)["n"] == 3 and not any(f.startswith("evil.pt.tmp") for f in os.listdir(tmp_path))


@pytest.mark.parametrize(
    "update_per_collect, replay_ratio, new, expected",
    [(50, 0.25, 1000, 50), (None, 0.25, 1000, 250), (None, 0.25, 3, 1), (None, 0.1, 25, 3), (None, 1.0, 0, 1)],
)
def test_calculate_update_per_collect(update_per_collect, replay_ratio, new, expected):
    cfg = dict(policy=dict(update_per_collect=update_per_collect, replay_ratio=replay_ratio))
    assert calculate_update_per_collect(cfg, new) == expected


def test_calculate_update_per_collect_counts_segments():
    class Seg:
        def __init__(self, n):
            self.n = n

        def __len__(self):
            return self.n

    cfg = dict(policy=dict(update_per_collect=None, replay_ratio=0.5))
    assert calculate_update_per_collect(cfg, [Seg(5), Seg(7)]) == 6
    with pytest.raises(ValueError):
        calculate_update_per_collect(dict(policy=dict(update_per_collect=0)), 10)


def test_eval_entry_scores_a_checkpoint(tmp_path):
    from lzlite.entry import eval_alphazero

    train_alphazero(tiny_config("alphazero"), max_env_step=40, run_dir=str(tmp_path), progress=False)
    stats = eval_alphazero(tiny_config("alphazero"), seed=5, model_path=str(tmp_path / "ckpt" / "last.pt"),
                           num_episodes_each_seed=6)
    assert abs(stats["random/win"] + stats["random/draw"] + stats["random/loss"] - 1.0) < 1e-6
    with pytest.raises(CheckpointError):
        eval_alphazero(tiny_config("alphazero"), model_path=str(tmp_path / "missing.pt"))


def test_eval_num_simulations_sets_the_greedy_search_only():
    from lzlite.config import compile_config
    from lzlite.entry.loop import build_components

    cfg = compile_config(*tiny_config("alphazero", num_simulations=6, eval_num_simulations=15))
    parts = build_components(cfg)
    policy, venv = parts["policy"], parts["venv"]
    venv.reset()
    idx = np.arange(venv.num_envs)
    collect = policy.act(venv, idx, np.random.default_rng(0), mode="collect", temperature=1.0)
    greedy = policy.act(venv, idx, np.random.default_rng(0), mode="eval")
    assert (collect.visit_counts.sum(axis=1) == 6).all()
    assert (greedy.visit_counts.sum(axis=1) == 15).all()
    for bad in (0, 2.5, True):
        with pytest.raises(ValueError, match="eval_num_simulations"):
            build_components(compile_config(*tiny_config("alphazero", eval_num_simulations=bad)))


def test_eval_command_line(tmp_path, capsys):
    from lzlite.entry.eval import main as eval_main

    train_alphazero(tiny_config("alphazero"), max_env_step=40, run_dir=str(tmp_path), progress=False)
    cfg, ckpt = str(tmp_path / "config.py"), str(tmp_path / "ckpt" / "last.pt")
    capsys.readouterr()  # the training's summary table
    assert eval_main(["--cfg", cfg, "--ckpt", ckpt, "--episodes", "4", "--simulations", "3",
                      "--bots", "perfect", "rule"]) == 0
    lines = dict(line.split() for line in capsys.readouterr().out.strip().splitlines())
    assert {"perfect/win", "perfect/loss", "rule/draw"} <= set(lines)
    for bot in ("perfect", "rule"):  # each side on its own line too
        assert {f"{bot}/{r}_as_{side}" for r in ("win", "loss") for side in ("first", "second")} <= set(lines)
    # the perfect tic-tac-toe player never loses
    assert float(lines["perfect/win"]) == 0.0
    assert abs(sum(float(lines[f"rule/{r}"]) for r in ("win", "draw", "loss")) - 1.0) < 1e-6
    assert eval_main(["--cfg", cfg, "--ckpt", str(tmp_path / "missing.pt")]) == 2
    assert "missing.pt" in capsys.readouterr().err
    assert eval_main(["--cfg", cfg, "--ckpt", ckpt, "--simulations", "0"]) == 2
    assert "--simulations must be at least 1" in capsys.readouterr().err
    assert eval_main(["--cfg", cfg, "--ckpt", ckpt, "--bots", "alphabeta"]) == 2
    err = capsys.readouterr().err
    assert "unknown bot kind 'alphabeta'" in err and "did you mean 'alpha_beta'?" in err


def test_the_progress_bar_shows_each_side():
    from lzlite.worker.run import headline

    stats = {"alpha_beta/games": 40.0, "alpha_beta/win": 0.5, "alpha_beta/loss": 0.4, "alpha_beta/win_as_first": 0.9,
             "alpha_beta/loss_as_first": 0.05, "alpha_beta/win_as_second": 0.1, "alpha_beta/loss_as_second": 0.75,
             "optimal_move_rate": 0.91234}
    assert headline(stats) == {"alpha_beta_win_1st": 0.9, "alpha_beta_loss_1st": 0.05, "alpha_beta_win_2nd": 0.1,
                               "alpha_beta_loss_2nd": 0.75, "optimal_move_rate": 0.912}


def test_each_evaluation_keeps_the_weights_it_scored(tmp_path):
    from lzlite.entry import eval_alphazero

    policy = train_alphazero(tiny_config("alphazero", eval_freq=5), seed=0, max_env_step=100,
                             run_dir=str(tmp_path / "a"), progress=False)
    ckpt = tmp_path / "a" / "ckpt"
    last = load_checkpoint(str(ckpt / "last.pt"))
    n = last["counters"]["train_iter"]
    kept = sorted(int(f[len("iteration_"):-3]) for f in os.listdir(ckpt) if f.startswith("iteration_"))
    assert n > 10 and kept == sorted(set(range(5, n + 1, 5)) | {n})  # every evaluation, and the final one
    final = load_checkpoint(str(ckpt / f"iteration_{n}.pt"))
    assert final["counters"] == dict(env_steps=last["counters"]["env_steps"], train_iter=n)
    assert final["eval"] == pytest.approx(dict(policy.final_eval))
    assert "buffer" not in final and "learner" not in final  # weights only: small
    for name, tensor in last["policy"]["model"].items():
        assert torch.equal(final["policy"]["model"][name], tensor)
    early = load_checkpoint(str(ckpt / "iteration_5.pt"))
    assert early["counters"]["train_iter"] == 5
    assert any(not torch.equal(early["policy"]["model"][k], v) for k, v in last["policy"]["model"].items())
    stats = eval_alphazero(tiny_config("alphazero"), seed=5, model_path=str(ckpt / "iteration_5.pt"),
                           num_episodes_each_seed=4)
    assert abs(stats["random/win"] + stats["random/draw"] + stats["random/loss"] - 1.0) < 1e-6

    # best.pt: the weights of the best-scoring evaluation, the latest of equals
    from lzlite.worker.evaluator import Evaluator

    scores = {k: Evaluator.score(load_checkpoint(str(ckpt / f"iteration_{k}.pt"))["eval"]) for k in kept}
    top = max(kept, key=lambda k: (scores[k], k))
    best = load_checkpoint(str(ckpt / "best.pt"))
    assert best["counters"]["train_iter"] == top and last["counters"]["best_score"] == list(scores[top])
    for name, tensor in load_checkpoint(str(ckpt / f"iteration_{top}.pt"))["policy"]["model"].items():
        assert torch.equal(best["policy"]["model"][name], tensor)

    train_alphazero(tiny_config("alphazero", eval_freq=5, keep_eval_ckpts=False), seed=0, max_env_step=40,
                    run_dir=str(tmp_path / "b"), progress=False)
    assert sorted(os.listdir(tmp_path / "b" / "ckpt")) == ["best.pt", "last.pt"]


def test_best_checkpoint_survives_resume(tmp_path, monkeypatch):
    from lzlite.worker.evaluator import Evaluator

    calls = []

    def falling_score(stats):  # every evaluation scores lower than the one before: the first stays best
        calls.append(1)
        return -float(len(calls)), 0.0

    monkeypatch.setattr(Evaluator, "score", staticmethod(falling_score))
    cfg = tiny_config("alphazero", eval_freq=5)
    train_alphazero(cfg, seed=0, max_env_step=50, run_dir=str(tmp_path), progress=False)
    first = load_checkpoint(str(tmp_path / "ckpt" / "best.pt"))["counters"]["train_iter"]
    n_before = len(calls)
    train_alphazero(cfg, seed=0, max_env_step=100, run_dir=str(tmp_path), resume=True, progress=False)
    assert len(calls) > n_before  # the resumed run evaluated ...
    assert load_checkpoint(str(tmp_path / "ckpt" / "best.pt"))["counters"]["train_iter"] == first == 5  # ... and lost


def test_evaluation_score_ranks_results():
    from lzlite.worker.evaluator import Evaluator

    good = {"rule/win": 0.9, "rule/draw": 0.1, "rule/loss": 0.0, "alpha_beta/win": 0.5, "alpha_beta/draw": 0.2,
            "alpha_beta/loss": 0.3, "rule/win_as_first": 1.0}
    assert Evaluator.score(good) == pytest.approx((0.0, 0.775))  # no games counted: the mean of 0.95 and 0.6 points
    assert Evaluator.score(dict(good, optimal_move_rate=0.8)) > Evaluator.score(dict(good, optimal_move_rate=0.7))
    assert Evaluator.score(dict(good, **{"rule/loss": 0.1, "rule/draw": 0.0})) < Evaluator.score(good)
    assert Evaluator.score({"mean_return": 412.0, "min_return": 9.0}) == (412.0,)
    # a lower confidence bound: 80% of 20 games is worth less than 78% of 200
    few = {"alpha_beta/games": 20.0, "alpha_beta/win": 0.8, "alpha_beta/draw": 0.0, "alpha_beta/loss": 0.2}
    many = {"alpha_beta/games": 200.0, "alpha_beta/win": 0.78, "alpha_beta/draw": 0.0, "alpha_beta/loss": 0.22}
    assert Evaluator.score(many) > Evaluator.score(few)


def test_best_is_the_checkpoint_to_keep_on_tictactoe():
    """Tic-tac-toe MuZero to the end of its run: the final checkpoint plays perfectly (0.9938 optimal moves, no losing
    line), an early one (0.9489, 17 positions from which a perfect player beats it) beat it against the bots by one
    20-game evaluation's noise. The exact measures decide: the final one is kept."""
    from lzlite.worker.evaluator import Evaluator

    def evaluation(optimal, lines_first, lines_second, rule_win):
        return {"rule/games": 20.0, "rule/win": rule_win, "rule/draw": 1.0 - rule_win, "rule/loss": 0.0,
                "perfect/games": 20.0, "perfect/win": 0.0, "perfect/draw": 1.0, "perfect/loss": 0.0,
                "optimal_move_rate": optimal, "losing_lines_as_first": lines_first,
                "losing_lines_as_second": lines_second}

    early, final = evaluation(0.9489, 5.0, 12.0, 0.95), evaluation(0.9938, 0.0, 0.0, 0.85)
    assert Evaluator.score(final) > Evaluator.score(early)
    assert Evaluator.score(evaluation(0.99, 0.0, 0.0, 0.85)) < Evaluator.score(final)  # then the optimal-move rate


@pytest.mark.skipif(torch.cuda.is_available(), reason="checks the message a CPU-only torch gives")
def test_a_gpu_runs_config_on_a_cpu_is_a_clear_error_and_device_cpu_evaluates_it(tmp_path, capsys):
    from lzlite.config import ConfigError, compile_config
    from lzlite.entry.eval import main as eval_main
    from lzlite.entry.loop import build_components

    with pytest.raises(ConfigError, match=r"policy.device='cuda' asks for a CUDA GPU.*--device cpu"):
        build_components(compile_config(*tiny_config("alphazero", device="cuda")))
    train_alphazero(tiny_config("alphazero"), max_env_step=40, run_dir=str(tmp_path), progress=False)
    ckpt = str(tmp_path / "ckpt" / "last.pt")
    saved, n = re.subn(r"'device': '\w+'", "'device': 'cuda'", (tmp_path / "config.py").read_text())
    assert n == 1
    (tmp_path / "gpu_config.py").write_text(saved)  # as a GPU run writes it
    cfg = str(tmp_path / "gpu_config.py")
    capsys.readouterr()
    assert eval_main(["--cfg", cfg, "--ckpt", ckpt, "--episodes", "2", "--bots", "perfect"]) == 2
    assert "asks for a CUDA GPU" in capsys.readouterr().err
    assert eval_main(["--cfg", cfg, "--ckpt", ckpt, "--episodes", "2", "--bots", "perfect", "--device", "cpu"]) == 0
    assert float(dict(line.split() for line in capsys.readouterr().out.strip().splitlines())["perfect/win"]) == 0.0


def test_a_checkpoint_too_close_to_call_plays_more_games_before_it_is_judged(monkeypatch):
    from lzlite.config import compile_config
    from lzlite.entry.loop import build_components
    from lzlite.worker.evaluator import Evaluator

    evaluator = build_components(compile_config(*tiny_config("alphazero", eval_episodes=20, eval_bots=["rule"]),
                                                seed=0))["evaluator"]
    rounds = []

    def scripted(venv, bot_name, rng):  # each further round of 20 games: all lost
        rounds.append(bot_name)
        return {"rule/games": 20.0, "rule/win": 0.0, "rule/draw": 0.0, "rule/loss": 1.0, "rule/win_as_first": 0.0,
                "rule/loss_as_first": 1.0, "rule/win_as_second": 0.0, "rule/loss_as_second": 1.0}

    monkeypatch.setattr(evaluator, "_vs_bot", scripted)
    lucky = {"rule/games": 20.0, "rule/win": 0.9, "rule/draw": 0.0, "rule/loss": 0.1, "rule/win_as_first": 1.0,
             "rule/loss_as_first": 0.0, "rule/win_as_second": 0.8, "rule/loss_as_second": 0.2}
    best = Evaluator.score({"rule/games": 400.0, "rule/win": 0.85, "rule/draw": 0.0, "rule/loss": 0.15})
    assert Evaluator.score(lucky) < best  # 18 of 20: its bound is below best's (340 of 400) ...
    settled = evaluator.settle(lucky, best)  # ... but its estimate is above: too close to call
    assert rounds == ["rule"] and settled["rule/games"] == 40.0
    assert settled["rule/win"] == pytest.approx(0.45) and settled["rule/win_as_second"] == pytest.approx(0.4)
    assert Evaluator.score(settled) < best  # 18 of 40: judged, and not kept

    rounds.clear()
    assert evaluator.settle(dict(lucky, **{"rule/win": 0.5, "rule/loss": 0.5}), best)["rule/games"] == 20.0
    assert evaluator.settle(dict(lucky, **{"rule/games": 400.0}), best)["rule/games"] == 400.0  # bound clears best
    exact_differs = (1.0,) + tuple(best)  # another optimal-move rate decides alone: no games could change it
    assert evaluator.settle(dict(lucky, optimal_move_rate=0.5), exact_differs)["rule/games"] == 20.0
    assert rounds == []

    def always_lucky(venv, bot_name, rng):  # the estimate stays above best: at most eval_extra_rounds more rounds
        rounds.append(bot_name)
        return dict(lucky)

    monkeypatch.setattr(evaluator, "_vs_bot", always_lucky)
    assert evaluator.settle(lucky, Evaluator.score(dict(lucky, **{"rule/games": 60.0})))["rule/games"] == 60.0
    assert len(rounds) == evaluator.cfg.eval_extra_rounds == 2


def test_the_loop_settles_every_evaluation_after_the_first_against_best(tmp_path, monkeypatch):
    from lzlite.worker.evaluator import Evaluator

    seen = []
    real = Evaluator.settle

    def spy(self, stats, best_score):
        seen.append(tuple(best_score))
        return real(self, stats, best_score)

    monkeypatch.setattr(Evaluator, "settle", spy)
    train_alphazero(tiny_config("alphazero", eval_freq=5), seed=0, max_env_step=40, run_dir=str(tmp_path),
                    progress=False)
    evaluations = len([f for f in os.listdir(tmp_path / "ckpt") if f.startswith("iteration_")])
    assert evaluations >= 2 and len(seen) == evaluations - 1  # the first evaluation has nothing to beat
