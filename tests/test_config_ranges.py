"""Declared ranges: every numeric key of every shipped component has one (or a stated reason not to), and
compile_config refuses, in one line naming the key, the value and the allowed range, what would hang, train
nothing or crash later."""
import math
import os
import sys
from collections.abc import Mapping

import pytest

import zoo.connect4.grounded_muzero  # noqa: F401  (registers the Connect Four recipe's policy)
from lzlite import registry as R
from lzlite.config import ConfigError, Range, above, at_least, between, compile_config
from lzlite.config.ranges import ranges_of

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "entry"))
from tiny_configs import tiny_config  # noqa: E402

ROLES = dict(policy=R.POLICY_REGISTRY, model=R.MODEL_REGISTRY, env=R.ENV_REGISTRY, buffer=R.BUFFER_REGISTRY,
             collector=R.COLLECTOR_REGISTRY, evaluator=R.EVALUATOR_REGISTRY, learner=R.LEARNER_REGISTRY)

# Numeric keys without a range, each with the reason. (role, dotted key) -> why.
NO_RANGE = {
    # LightZero keys accepted so its configs load unchanged and read by no lzlite code: any value works, so a range
    # would only refuse configs that run.
    ("env", "stop_value"): "LightZero's stop condition; lzlite stops at max_env_step / max_train_iter",
    ("env", "collector_env_num"): "LightZero's; the policy section's collector_env_num is the one read",
    ("env", "evaluator_env_num"): "LightZero's; the evaluator plays all eval_episodes at once",
    ("env", "n_evaluator_episode"): "LightZero's; the policy section's eval_episodes is the one read",
    ("env", "prob_random_agent"): "LightZero's collection noise; the env does not read it",
    ("env", "prob_expert_agent"): "LightZero's collection noise; the env does not read it",
    ("evaluator", "evaluator_env_num"): "LightZero's; the evaluator plays all eval_episodes at once",
    ("learner", "learn.learner.hook.save_ckpt_after_iter"): "LightZero's; save_ckpt_freq is the one read",
    ("model", "frame_stack_num"): "LightZero's; observation_shape already holds stacked frames",
    # set by the training loop, never by a config (the buffer's wired_keys); the buffer refuses anything but +1 / -1
    ("buffer", "value_sign"): "wired from the env by the training loop",
}


def _components():
    """(role, registered name, class) of every shipped component (lzlite's and the zoo's), once per class."""
    out, seen = [], set()
    for role, reg in ROLES.items():
        for name in reg.names():
            cls = reg.get(name)
            if cls in seen or not cls.__module__.startswith(("lzlite.", "zoo.")):
                continue
            seen.add(cls)
            out.append((role, name, cls))
    return out


def _numeric_keys(d, prefix=""):
    for key, value in d.items():
        if isinstance(value, Mapping):
            yield from _numeric_keys(value, f"{prefix}{key}.")
        elif isinstance(value, (int, float)) and not isinstance(value, bool):
            yield f"{prefix}{key}"


def _own_defaults(role, cls):
    defaults = dict(cls.default_config())
    if role == "policy":
        defaults.pop("model")  # the model class's keys: walked as the model's
    return defaults


COMPONENTS = _components()


def test_every_shipped_component_is_walked():
    names = {(role, name) for role, name, _ in COMPONENTS}
    for expected in [("policy", "muzero"), ("policy", "grounded_gumbel_muzero"), ("model", "UniZeroModel"),
                     ("env", "tictactoe"), ("env", "cartpole"), ("buffer", "unizero_buffer"),
                     ("collector", "segment_collector"), ("evaluator", "bot_evaluator"), ("learner", "base_learner")]:
        assert expected in names


@pytest.mark.parametrize("role, name, cls", COMPONENTS, ids=[f"{r}:{n}" for r, n, _ in COMPONENTS])
def test_every_numeric_default_has_a_range_or_a_reason(role, name, cls):
    ranges = ranges_of(cls)
    missing = [key for key in _numeric_keys(_own_defaults(role, cls)) if key not in ranges
               and (role, key) not in NO_RANGE]
    assert not missing, (f"{role} '{name}' ({cls.__qualname__}): numeric keys without a range: {missing}; declare "
                         f"them in its config_ranges() or, with the reason, in NO_RANGE")


@pytest.mark.parametrize("role, name, cls", COMPONENTS, ids=[f"{r}:{n}" for r, n, _ in COMPONENTS])
def test_declared_ranges_name_real_keys_and_hold_their_defaults(role, name, cls):
    defaults = _own_defaults(role, cls)
    for key, allowed in ranges_of(cls).items():
        assert isinstance(allowed, Range)
        assert key in defaults, f"{cls.__qualname__}.config_ranges() names '{key}', which it does not declare"
        assert defaults[key] is None or defaults[key] in allowed, (cls, key, defaults[key], str(allowed))
        assert (role, key) not in NO_RANGE, f"'{key}' has a range and a reason for none"


def test_no_range_entries_name_real_keys():
    keys = {(role, key) for role, _, cls in COMPONENTS for key in _numeric_keys(_own_defaults(role, cls))}
    assert set(NO_RANGE) <= keys, set(NO_RANGE) - keys


@pytest.mark.parametrize("allowed, inside, outside, text", [
    (at_least(1), [1, 2, 10**12], [0, -1, math.inf, math.nan], "[1, inf)"),
    (above(0), [1e-9, 3.0], [0, 0.0, -1e-9, math.inf, math.nan], "(0, inf)"),
    (between(0, 1), [0, 0.5, 1], [-0.01, 1.5, math.nan], "[0, 1]"),
    (Range(0, 1, low_open=True), [0.5, 1.0], [0.0, 1.01], "(0, 1]"),
    (Range(0, 1, high_open=True), [0.0, 0.99], [1.0], "[0, 1)"),
    (Range(0, math.inf, low_open=True), [1e-3, math.inf], [0, math.nan], "(0, inf]"),
    (at_least(-1), [-1, 0, 5], [-2], "[-1, inf)"),
])
def test_range_membership_and_its_interval_notation(allowed, inside, outside, text):
    assert str(allowed) == text
    assert all(v in allowed for v in inside)
    assert not any(v in allowed for v in outside)
    assert True not in allowed and "1" not in allowed and None not in allowed


# ------------------------------------------------------------------------ the values that used to run badly
@pytest.mark.parametrize("algo, overrides, key, allowed", [
    # hung: no env steps ever
    ("alphazero", dict(collector_env_num=0), "collector_env_num", "[1, inf)"),
    ("alphazero", dict(n_episode=0), "n_episode", "[1, inf)"),
    # tracebacks
    ("alphazero", dict(batch_size=0), "batch_size", "[1, inf)"),
    ("alphazero", dict(discount_factor=1.5), "discount_factor", "[0, 1]"),
    ("alphazero", dict(num_simulations=0), "num_simulations", "[1, inf)"),
    ("gumbel_muzero", dict(max_num_considered_actions=0), "max_num_considered_actions", "[1, inf)"),
    ("alphazero", dict(eval_freq=0), "eval_freq", "[1, inf)"),  # ZeroDivisionError at the first learner step
    ("alphazero", dict(save_ckpt_freq=0), "save_ckpt_freq", "[1, inf)"),
    ("alphazero", dict(eval_num_simulations=0), "eval_num_simulations", "[1, inf) or None"),
    # trained nothing
    ("alphazero", dict(learning_rate=0.0), "learning_rate", "(0, inf)"),
    ("alphazero", dict(update_per_collect=0), "update_per_collect", "[1, inf) or None"),
    ("alphazero", dict(discount_factor=math.nan), "discount_factor", "[0, 1]"),
    ("rezero", dict(reanalyze_interval=-1), "reanalyze_interval", "[0, inf)"),
])
def test_out_of_range_values_are_one_line_config_errors(algo, overrides, key, allowed):
    main, create = tiny_config(algo)
    main["policy"].update(overrides)
    with pytest.raises(ConfigError) as e:
        compile_config(main, create)
    msg = str(e.value)
    assert f"'main_config.policy.{key}' must be in {allowed}" in msg and "\n" not in msg, msg
    assert repr(overrides[key]) in msg


def test_nested_model_and_env_keys_are_checked_against_their_classes():
    main, create = tiny_config("muzero")
    main["policy"]["model"]["num_channels"] = 0
    with pytest.raises(ConfigError, match=r"'main_config.policy.model.num_channels' must be in \[1, inf\), got 0 "
                                          r"\(range declared by model 'MuZeroModel'\)"):
        compile_config(main, create)
    main, create = tiny_config("alphazero")
    main["env"] = dict(prob_random_action_in_bot=2.0)
    with pytest.raises(ConfigError, match=r"'main_config.env.prob_random_action_in_bot' must be in \[0, 1\]"):
        compile_config(main, create)


def test_a_buffer_no_larger_than_a_batch_is_refused():
    """It ran to exit code 0 with train_iter 0: the loop waits for a batch the buffer cannot hold."""
    for size in (16, 32):  # every stored segment also takes a row for its final state: 32 rows hold < 32 moves
        main, create = tiny_config("alphazero", replay_buffer_size=size)
        with pytest.raises(ConfigError, match=rf"'main_config.policy.replay_buffer_size' must be greater than "
                                              rf"main_config.policy.batch_size=32 .* got {size}"):
            compile_config(main, create)
    assert compile_config(*tiny_config("alphazero", replay_buffer_size=33)).policy.replay_buffer_size == 33


def test_a_buffer_that_cannot_hold_a_batch_of_these_games_is_an_error_once_full(tmp_path):
    """33 rows pass the compile-time rule, but tic-tac-toe games of at most 9 moves store at most 9 moves per 10 rows:
    a full buffer holds fewer than 32 moves, so the run collected to its limit and trained nothing."""
    from lzlite.entry import train_alphazero

    with pytest.raises(ConfigError, match=r"policy.replay_buffer_size=33 rows hold only \d+ moves of these games .* "
                                          r"fewer than one batch of 32"):
        train_alphazero(tiny_config("alphazero", replay_buffer_size=33), seed=0, max_env_step=400,
                        run_dir=str(tmp_path), progress=False)


def test_component_rules_run_from_compile_config():
    main, create = tiny_config("unizero")
    main["policy"]["model"].update(embed_dim=12, num_heads=8)
    with pytest.raises(ConfigError, match=r"'main_config.policy.model.embed_dim' must be a multiple of "
                                          r"main_config.policy.model.num_heads=8"):
        compile_config(main, create)
    main, create = tiny_config("unizero", eval_num_simulations=40)  # depth 40 needs 81 tokens > 32
    with pytest.raises(ConfigError, match="max_tokens=32 is too small"):
        compile_config(main, create)
    main, create = tiny_config("muzero")
    main["policy"]["model"].update(self_supervised_learning_loss=True, pred_out=64, proj_out=128)
    with pytest.raises(ConfigError, match=r"'main_config.policy.model.pred_out' must equal "
                                          r"main_config.policy.model.proj_out=128"):
        compile_config(main, create)


def test_unset_and_infinite_values_where_allowed():
    cfg = compile_config(*tiny_config("alphazero", eval_num_simulations=None, update_per_collect=None,
                                      grad_clip_value=math.inf))  # inf: no clipping
    assert cfg.policy.eval_num_simulations is None and cfg.policy.grad_clip_value == math.inf
    main, create = tiny_config("alphazero")
    main["policy"]["batch_size"] = None  # a None for a key whose default is a number: not "unset"
    with pytest.raises(ConfigError, match=r"'main_config.policy.batch_size' must be in \[1, inf\), got None"):
        compile_config(main, create)
