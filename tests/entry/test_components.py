"""The learner and the evaluator are interchangeable through create_config, as the collector and buffer are:
a user's subclass, registered in a module named in ``import_names``, is the one the training loop runs."""
import sys
import textwrap

import pytest

from lzlite.config import ConfigError, compile_config
from lzlite.entry import train_alphazero
from lzlite.registry import LEARNER_REGISTRY
from lzlite.worker.checkpoint import load_checkpoint
from lzlite.worker.learner import Learner
from tiny_configs import tiny_config

USER_MODULE = '''
from lzlite.registry import EVALUATOR_REGISTRY, LEARNER_REGISTRY
from lzlite.worker.evaluator import Evaluator
from lzlite.worker.learner import Learner

TRAIN_CALLS = []
EVAL_CALLS = []


@LEARNER_REGISTRY.register("{name}_learner")
class CountingLearner(Learner):
    """Ten times the configured learning rate; counts its steps."""

    def __init__(self, policy, cfg, max_train_iter=100000):
        super().__init__(policy, cfg, max_train_iter)
        for group in self.optimizer.param_groups:
            group["lr"] *= 10
            group["initial_lr"] *= 10
        self.scheduler.base_lrs = [lr * 10 for lr in self.scheduler.base_lrs]

    def train(self, batch):
        TRAIN_CALLS.append(self.train_iter)
        return super().train(batch)


@EVALUATOR_REGISTRY.register("{name}_evaluator")
class TaggingEvaluator(Evaluator):
    def eval(self):
        EVAL_CALLS.append(1)
        return dict(super().eval(), user_evaluator=42.0)
'''


@pytest.fixture
def user_module(tmp_path, monkeypatch, request):
    """A module in tmp_path registering a learner and an evaluator named after the test; returns its name."""
    name = f"user_components_{request.node.name.replace('[', '_').replace(']', '')}"
    (tmp_path / f"{name}.py").write_text(textwrap.dedent(USER_MODULE.format(name=name)))
    monkeypatch.syspath_prepend(str(tmp_path))
    yield name
    sys.modules.pop(name, None)


def test_default_learner_is_registered():
    assert LEARNER_REGISTRY.get("base_learner") is Learner
    cfg = compile_config(*tiny_config("alphazero"), seed=0)
    assert cfg.create.learner.type is None and cfg.create.evaluator.type is None  # the defaults: base / bot


def test_a_registered_learner_runs_the_learner_steps(tmp_path, user_module):
    main, create = tiny_config("alphazero")
    create["learner"] = dict(type=f"{user_module}_learner", import_names=[user_module])
    train_alphazero([main, create], seed=0, max_env_step=100, run_dir=str(tmp_path / "run"), progress=False)
    state = load_checkpoint(str(tmp_path / "run" / "ckpt" / "last.pt"))
    calls = sys.modules[user_module].TRAIN_CALLS
    assert len(calls) == state["counters"]["train_iter"] > 0
    assert calls == list(range(len(calls)))  # every learner step went through it, in order
    pcfg = compile_config(main, create, seed=0).policy
    assert pcfg.lr_schedule == "constant" and pcfg.warmup_steps == 0
    # its 10x learning rate is the one the optimizer stepped with
    assert state["learner"]["optimizer"]["param_groups"][0]["lr"] == pytest.approx(10 * pcfg.learning_rate)


def test_a_registered_evaluator_scores_the_run(tmp_path, user_module):
    main, create = tiny_config("alphazero")
    create["evaluator"] = dict(type=f"{user_module}_evaluator", import_names=[user_module])
    policy = train_alphazero([main, create], seed=0, max_env_step=40, run_dir=str(tmp_path / "run"), progress=False)
    assert sys.modules[user_module].EVAL_CALLS  # the final evaluation went through it
    assert policy.final_eval["user_evaluator"] == 42.0
    assert "random/win" in policy.final_eval  # and it extends the bot evaluator


def test_an_unknown_learner_lists_the_known_ones(tmp_path):
    main, create = tiny_config("alphazero")
    create["learner"] = dict(type="base_lerner")
    with pytest.raises(ConfigError, match="create_config.learner.type: unknown learner 'base_lerner'. Did you mean "
                                          "'base_learner'"):
        train_alphazero([main, create], seed=0, max_env_step=40, run_dir=str(tmp_path), progress=False)
