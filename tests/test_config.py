"""Strict configs, the registry and `python -m lzlite.entry` argument/config errors."""
import os
import subprocess
import sys
import textwrap

import pytest
from easydict import EasyDict

from lzlite.config import ConfigError, compile_config, load_config_file, merge_strict
from lzlite.policy import Policy
from lzlite.registry import ENV_REGISTRY, POLICY_REGISTRY, Registry, RegistryError

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


class _DummyEnv:
    @staticmethod
    def default_config():
        return EasyDict(dict(board_size=3, battle_mode="self_play_mode", manager=dict(shared_memory=False)))


class _DummyPolicy(Policy):
    """A policy with a few keys of its own; the composed section adds the default components' keys (batch_size and
    use_priority from the buffer, learning_rate from the learner, ...)."""

    entry = "train_muzero"

    @classmethod
    def default_config(cls):
        return EasyDict(dict(num_simulations=25, model=cls.default_model_config(), kwargs=dict()))

    @classmethod
    def default_model_config(cls, model_type=None):
        return EasyDict(dict(num_channels=32, observation_shape=[3, 3, 3]))


ENV_REGISTRY.register("_test_env")(_DummyEnv)
POLICY_REGISTRY.register("_test_policy")(_DummyPolicy)
CREATE = dict(env=dict(type="_test_env", import_names=[]), policy=dict(type="_test_policy", import_names=[]))


def test_merge_overrides_and_keeps_defaults():
    cfg = compile_config(dict(exp_name="x", policy=dict(batch_size=8, model=dict(num_channels=16))), CREATE)
    assert cfg.policy.batch_size == 8 and cfg.policy.model.num_channels == 16
    assert cfg.policy.learning_rate == 0.003 and cfg.env.board_size == 3
    assert cfg.seed == 0 and cfg.exp_name == "x" and cfg.create.policy.type == "_test_policy"


@pytest.mark.parametrize(
    "user, path, suggestion",
    [
        (dict(policy=dict(learning_rat=0.1)), "main_config.policy.learning_rat", "learning_rate"),
        (dict(policy=dict(model=dict(num_chanels=8))), "main_config.policy.model.num_chanels", "num_channels"),
        (dict(env=dict(batle_mode="x")), "main_config.env.batle_mode", "battle_mode"),
        (dict(polcy=dict()), "main_config.polcy", "policy"),
    ],
)
def test_unknown_key_names_path_and_nearest(user, path, suggestion):
    with pytest.raises(ConfigError) as e:
        compile_config(user, CREATE)
    msg = str(e.value)
    assert f"'{path}'" in msg and suggestion in msg


@pytest.mark.parametrize(
    "user, expected",
    [
        (dict(policy=dict(batch_size="64")), "expects int"),
        (dict(policy=dict(batch_size=64.0)), "expects int"),
        (dict(policy=dict(use_priority=1)), "expects bool"),
        (dict(policy=dict(model=dict(observation_shape=3))), "expects list"),
        (dict(policy=dict(model=5)), "expects dict"),
        (dict(env=dict(battle_mode=None, board_size=True)), "expects int"),
    ],
)
def test_wrong_type_names_expected_type(user, expected):
    with pytest.raises(ConfigError, match=expected):
        compile_config(user, CREATE)


def test_the_policy_section_composes_each_components_defaults_once():
    from lzlite.registry import (BUFFER_REGISTRY, CLUSTER_REGISTRY, COLLECTOR_REGISTRY, EVALUATOR_REGISTRY,
                                 LEARNER_REGISTRY)

    main = dict(policy=dict(model=dict(observation_shape=[3, 3, 3], action_space_size=9)))
    cfg = compile_config(main, dict(env=dict(type="tictactoe"), policy=dict(type="muzero")))
    parts = [POLICY_REGISTRY.get("muzero").default_config(), COLLECTOR_REGISTRY.get("episode_collector").default_config(),
             BUFFER_REGISTRY.get("game_buffer").default_config(), EVALUATOR_REGISTRY.get("bot_evaluator").default_config(),
             LEARNER_REGISTRY.get("base_learner").default_config(), CLUSTER_REGISTRY.get("zmq_cluster").default_config()]
    keys = [k for part in parts for k in part if k not in ("value_sign", "unroll_fields")]  # the loop wires those
    assert len(keys) == len(set(keys)), "a key declared by two components"
    assert sorted(cfg.policy) == sorted(keys)
    assert cfg.policy.td_steps == BUFFER_REGISTRY.get("game_buffer").default_config().td_steps
    # the model section holds the chosen model class's keys only (the conv net's, not the MLP's)
    assert "latent_state_dim" not in cfg.policy.model and "num_res_blocks" in cfg.policy.model
    # a component named in create_config brings its own keys, which other configs do not offer
    with pytest.raises(ConfigError, match="reanalyze_weight_decay"):
        compile_config(dict(policy=dict(reanalyze_weight_decay=0.5)), dict(env=dict(type="tictactoe"),
                                                                           policy=dict(type="muzero")))
    cfg = compile_config(dict(policy=dict(reanalyze_weight_decay=0.25)), dict(
        env=dict(type="tictactoe"), policy=dict(type="muzero"), replay_buffer=dict(type="unizero_buffer")))
    assert cfg.policy.reanalyze_weight_decay == 0.25


def test_a_key_declared_by_two_components_is_an_error():
    class Clash(Policy):
        @classmethod
        def default_config(cls):
            return EasyDict(dict(td_steps=3))  # the buffer's key

    POLICY_REGISTRY.register("_test_clash")(Clash)
    with pytest.raises(ConfigError, match="'policy.td_steps' is declared by both policy '_test_clash' and "
                                          "replay_buffer 'game_buffer'"):
        compile_config(dict(), dict(env=dict(type="tictactoe"), policy=dict(type="_test_clash")))


def test_an_alphazero_config_offers_no_muzero_keys():
    create = dict(env=dict(type="tictactoe"), policy=dict(type="alphazero"))
    for key in ("reward_loss_weight", "ssl_loss_weight", "num_unroll_steps", "reanalyze_ratio"):
        assert key not in POLICY_REGISTRY.get("alphazero").default_config()
    for key in ("reward_loss_weight", "ssl_loss_weight"):
        with pytest.raises(ConfigError, match=f"unknown config key 'main_config.policy.{key}'"):
            compile_config(dict(policy={key: 1.0}), create)
    with pytest.raises(ConfigError, match="policy 'alphazero' fixes it to 0, got 5"):
        compile_config(dict(policy=dict(num_unroll_steps=5)), create)
    cfg = compile_config(dict(policy=dict(num_unroll_steps=0)), create)  # a resolved config.py restates it
    assert cfg.policy.num_unroll_steps == 0 and cfg.policy.reanalyze_ratio == 0.0
    assert compile_config(dict(), create).policy.num_unroll_steps == 0  # no policy section: the defaults


def test_int_widens_to_float_and_open_dicts_accept_anything():
    cfg = compile_config(dict(policy=dict(learning_rate=1, kwargs=dict(anything=[1, 2]))), CREATE)
    assert isinstance(cfg.policy.learning_rate, float) and cfg.policy.kwargs.anything == [1, 2]


def test_unknown_registry_name_lists_known():
    with pytest.raises(ConfigError) as e:
        compile_config(dict(), dict(env=dict(type="_test_env"), policy=dict(type="_test_polcy")))
    assert "_test_policy" in str(e.value) and "Known policys" in str(e.value)


def test_create_config_strict_too():
    with pytest.raises(ConfigError, match="create_config.policy.imports"):
        compile_config(dict(), dict(env=dict(type="_test_env"), policy=dict(type="_test_policy", imports=[])))


def test_registry_duplicate_and_lookup():
    reg = Registry("thing")

    @reg.register("a")
    class A:
        pass

    assert reg.get("a") is A
    with pytest.raises(RegistryError, match="already registered"):
        reg.register("a")(type("B", (), {}))
    with pytest.raises(RegistryError, match="Known things: a"):
        reg.get("b")


def test_import_names_registers_user_module(tmp_path, monkeypatch):
    mod = tmp_path / "my_user_policy_mod.py"
    mod.write_text(textwrap.dedent("""
        from lzlite.policy import MuZeroPolicy
        from lzlite.registry import POLICY_REGISTRY

        @POLICY_REGISTRY.register('_user_policy_from_file')
        class UserPolicy(MuZeroPolicy):
            @classmethod
            def default_config(cls):
                cfg = super().default_config()
                cfg.alpha = 1.0
                return cfg
    """))
    monkeypatch.syspath_prepend(str(tmp_path))
    cfg = compile_config(
        dict(policy=dict(alpha=2.0)),
        dict(env=dict(type="_test_env"), policy=dict(type="_user_policy_from_file", import_names=["my_user_policy_mod"])),
    )
    assert cfg.policy.alpha == 2.0
    POLICY_REGISTRY.register("_not_a_policy")(_DummyEnv)
    with pytest.raises(ConfigError, match="must subclass lzlite.policy.Policy"):
        compile_config(dict(), dict(env=dict(type="_test_env"), policy=dict(type="_not_a_policy")))
    with pytest.raises(ConfigError, match="cannot be imported"):
        compile_config(dict(), dict(env=dict(type="_test_env"), policy=dict(type="x", import_names=["no_such_mod_zz"])))


def test_resolved_config_is_written_and_reloads(tmp_path):
    cfg = compile_config(dict(exp_name="e", policy=dict(batch_size=7)), CREATE, seed=3, save_dir=str(tmp_path))
    main, create = load_config_file(str(tmp_path / "config.py"))
    assert main["policy"]["batch_size"] == 7 and main["seed"] == 3 and create["policy"]["type"] == "_test_policy"
    again = compile_config(main, create)
    assert again == cfg


def test_merge_strict_rejects_non_dict():
    with pytest.raises(ConfigError, match="expects dict"):
        merge_strict(dict(a=1), [1, 2])


def _run_entry(*args, cwd=REPO):
    return subprocess.run([sys.executable, "-m", "lzlite.entry", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=120)


def test_cli_help_documents_flags():
    r = _run_entry("--help")
    assert r.returncode == 0
    for flag in ("--cfg", "--seed", "--max-env-step", "--max-train-iter", "--resume"):
        assert flag in r.stdout


@pytest.mark.parametrize(
    "content, expected",
    [
        (None, "config file not found"),
        ("x = 1\n", "missing: main_config, create_config"),
        ("main_config = dict()\n", "missing: create_config"),
        ("main_config = 3\ncreate_config = dict()\n", "main_config in"),
        ("raise RuntimeError('boom')\n", "failed to run: RuntimeError: boom"),
        ("main_config = dict()\ncreate_config = dict(policy=dict(type='no_such_policy_zz'))\n", "unknown policy"),
        ("main_config = dict(entry='train_muzro')\ncreate_config = dict()\n", "Did you mean 'train_muzero'"),
    ],
)
def test_cli_bad_config_one_clear_line(tmp_path, content, expected):
    path = tmp_path / "cfg.py"
    if content is not None:
        path.write_text(content)
    r = _run_entry("--cfg", str(path))
    assert r.returncode == 2, r.stderr
    assert expected in r.stderr
    assert "Traceback" not in r.stderr and r.stderr.count("\n") == 1


ZOO_CONFIGS = sorted(
    os.path.relpath(os.path.join(dp, f), REPO)
    for dp, _, files in os.walk(os.path.join(REPO, "zoo")) for f in files if f.endswith("config.py")
)


@pytest.mark.parametrize("path", ZOO_CONFIGS)
def test_every_shipped_config_compiles(path):
    main, create = load_config_file(os.path.join(REPO, path))
    cfg = compile_config(main, create)
    assert cfg.exp_name != "default_experiment" and cfg.create.policy.type and cfg.create.env.type
    name = os.path.basename(path)[: -len(".py")]
    if name.startswith("gumbel_"):  # configs/gumbel_<algo>.py, zoo/<game>/gumbel_<algo>_config.py
        algo = name[: -len("_config")] if name.endswith("_config") else name
        # the algorithm, or a registered subclass of it (Connect Four's grounded Gumbel MuZero)
        assert cfg.policy.search_rule == "gumbel"
        assert issubclass(POLICY_REGISTRY.get(cfg.create.policy.type), POLICY_REGISTRY.get(algo))
