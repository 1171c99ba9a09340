"""Strict config merging: a user config over the defaults of the components it names.

A user config follows LightZero's layout::

    main_config = dict(exp_name=..., env=dict(...), policy=dict(...))
    create_config = dict(env=dict(type='tictactoe', import_names=[...]),
                         policy=dict(type='muzero', import_names=[...]))

``compile_config`` looks the named components up in the registries, merges the user's values over
their ``default_config()`` and rejects every key it does not know (naming its path and the nearest
valid keys) and every value of the wrong type (naming the expected type).

The ``policy`` section is composed, LightZero-style, from the defaults of every component that reads
it: the policy, its model (by ``model.model_type``), and the collector, replay buffer, evaluator and
learner the config trains with, and the cluster's keys (actors and a learner, ``lzlite/cluster/settings.py``). Each key has one default, declared by the one component that reads it;
a key declared by two is an error.

Values are checked by the same components (``lzlite/config/ranges.py``): every key against the range its
component declares in ``config_ranges()`` (nested model keys against the model class's, env keys against the
env's), then each component's cross-key rules, ``check_config(cfg, path)`` (a buffer smaller than a batch, say).
"""
from __future__ import annotations

import copy
import difflib
import os
import pprint
import runpy
import sys
from typing import Any, Dict, Mapping, Optional, Tuple

from easydict import EasyDict

from lzlite import registry as _reg
from lzlite.config.ranges import Range, at_least, ranges_of

__all__ = [
    "ConfigError",
    "compile_config",
    "merge_strict",
    "load_config_file",
    "save_config",
    "TOP_LEVEL_DEFAULTS",
    "CREATE_DEFAULTS",
    "LOGGER_DEFAULTS",
]


class ConfigError(ValueError):
    """An invalid config: unknown key, wrong type, value out of range, missing variable, unknown component."""


# main_config.logger: what a run reports besides TensorBoard and the progress bar (lzlite/telemetry/logger.py reads
# it; the logger is not a registered component, so its keys and ranges are declared here).
LOGGER_DEFAULTS = dict(
    wandb=False,  # also log to Weights & Biases (offline unless a W&B key is configured; `pip install lzlite[wandb]`)
    wandb_project="lzlite",  # the W&B project the run goes to
    redis_url=None,  # e.g. 'redis://127.0.0.1:6379/0': live status, curves and games for the web UI (--redis URL)
    spectate_games=2,  # games of each collect whose every decision goes to Redis for the web UI (0: none)
)
LOGGER_RANGES = dict(spectate_games=at_least(0))

# Keys of main_config that are not owned by a component.
TOP_LEVEL_DEFAULTS = dict(
    exp_name="default_experiment",  # run directory name under `runs/`; the resolved config is written there
    entry=None,  # entry function name (e.g. 'train_muzero'); None: the policy's own default entry
    seed=None,  # default seed when the command line gives none (None: 0)
    max_env_step=None,  # stop after this many collected env steps (None: no limit; --max-env-step wins)
    max_train_iter=None,  # stop after this many learner steps (None: no limit; --max-train-iter wins)
    logger=LOGGER_DEFAULTS,  # W&B and Redis reporting (LOGGER_DEFAULTS above)
)

# create_config: which registered component fills each role. Unknown roles are errors too.
_CREATE_ITEM = dict(
    type=None,  # registered name of the component
    import_names=[],  # modules to import first so a user's registered class is found
)
CREATE_DEFAULTS = dict(
    env=dict(_CREATE_ITEM),  # the environment (ENV_REGISTRY)
    policy=dict(_CREATE_ITEM),  # the algorithm (POLICY_REGISTRY)
    env_manager=dict(_CREATE_ITEM),  # accepted for LightZero configs; lzlite steps games in batches itself
    collector=dict(_CREATE_ITEM),  # optional override of the policy's collector (COLLECTOR_REGISTRY)
    evaluator=dict(_CREATE_ITEM),  # optional override of the evaluator, default 'bot_evaluator' (EVALUATOR_REGISTRY)
    replay_buffer=dict(_CREATE_ITEM),  # optional override of the policy's buffer (BUFFER_REGISTRY)
    learner=dict(_CREATE_ITEM),  # optional override of the learner, default 'base_learner' (LEARNER_REGISTRY)
)

_NUMBER = (int, float)

# Seeds are offset per rank and per component (cfg.seed + 7919 ...), so the range keeps room below numpy's 2**32.
MAX_SEED = 2**31


def _type_name(value: Any) -> str:
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int):
        return "int"
    if isinstance(value, float):
        return "float"
    if isinstance(value, (list, tuple)):
        return "list"
    if isinstance(value, Mapping):
        return "dict"
    return type(value).__name__


def _check_type(path: str, default: Any, value: Any) -> Any:
    """Return ``value`` (ints widened to float where a float is expected) or raise ConfigError."""
    if default is None or value is None:
        return value  # None defaults are free-typed; None values mean "unset"
    if isinstance(default, bool):
        ok = isinstance(value, bool)
    elif isinstance(default, int):
        ok = isinstance(value, int) and not isinstance(value, bool)
    elif isinstance(default, float):
        ok = isinstance(value, _NUMBER) and not isinstance(value, bool)
        if ok:
            value = float(value)
    elif isinstance(default, str):
        ok = isinstance(value, str)
    elif isinstance(default, (list, tuple)):
        ok = isinstance(value, (list, tuple))
    elif isinstance(default, Mapping):
        ok = isinstance(value, Mapping)
    else:
        ok = isinstance(value, type(default))
    if not ok:
        raise ConfigError(
            f"config key '{path}' expects {_type_name(default)} (default {default!r}), "
            f"got {_type_name(value)} {value!r}"
        )
    return value


def merge_strict(default: Mapping, user: Optional[Mapping], path: str = "") -> EasyDict:
    """Deep-merge ``user`` over ``default``; unknown keys and wrong types raise ConfigError.

    A default dict that is empty is open: it accepts any keys (used for free-form kwargs).

    Args:
        default: the component defaults (nested dicts).
        user: the user's values, or None.
        path: dotted prefix used in error messages.
    """
    out = EasyDict(copy.deepcopy(dict(default)))
    if user is None:
        return out
    if not isinstance(user, Mapping):
        raise ConfigError(f"config key '{path or '<root>'}' expects dict, got {_type_name(user)} {user!r}")
    open_dict = len(default) == 0
    for key, value in user.items():
        key_path = f"{path}.{key}" if path else str(key)
        if key not in default:
            if open_dict:
                out[key] = copy.deepcopy(value)
                continue
            close = difflib.get_close_matches(str(key), [str(k) for k in default], n=3, cutoff=0.6)
            hint = f" Did you mean {' or '.join(repr(c) for c in close)}?" if close else ""
            valid = ", ".join(sorted(str(k) for k in default))
            raise ConfigError(f"unknown config key '{key_path}'.{hint} Valid keys here: {valid}")
        dv = default[key]
        if isinstance(dv, Mapping) and isinstance(value, Mapping):
            out[key] = merge_strict(dv, value, key_path)
        else:
            out[key] = copy.deepcopy(_check_type(key_path, dv, value))
    return out


def _component_defaults(reg: _reg.Registry, type_name: Optional[str], role: str) -> Tuple[Any, dict]:
    if not type_name:
        raise ConfigError(f"create_config.{role}.type is required (known: {', '.join(reg.names())})")
    try:
        cls = reg.get(type_name)
    except _reg.RegistryError as e:
        raise ConfigError(f"create_config.{role}.type: {e}") from None
    if not hasattr(cls, "default_config"):
        raise ConfigError(f"{role} '{type_name}' ({cls}) has no default_config()")
    return cls, cls.default_config()


def _policy_defaults(policy_cls: Any, create: Mapping, main_policy: Any) -> Tuple[EasyDict, dict, Dict[str, tuple]]:
    """The composed defaults of a config's ``policy`` section, the keys its policy fixes and who declares each key
    (key -> (description, class); see the module docstring). ``main_policy``: the user's policy section (its
    ``model.model_type`` picks the model's keys)."""
    if not all(hasattr(policy_cls, name) for name in ("default_model_config", "fixed_config", "collector_type")):
        raise ConfigError(f"policy '{create.policy.type}' ({policy_cls.__qualname__}) must subclass "
                          f"lzlite.policy.Policy (its defaults are composed with its components')")
    model_type = None
    if isinstance(main_policy, Mapping) and isinstance(main_policy.get("model"), Mapping):
        model_type = main_policy["model"].get("model_type")
    if model_type is not None and model_type not in policy_cls.model_classes:
        raise ConfigError(f"config key 'main_config.policy.model.model_type' must be one of "
                          f"{sorted(policy_cls.model_classes)} for policy '{create.policy.type}', got {model_type!r}")
    merged = policy_cls.default_config()
    merged.model = policy_cls.default_model_config(model_type)
    owner = {key: (f"policy '{create.policy.type}'", policy_cls) for key in merged}
    fixed = dict(policy_cls.fixed_config)
    roles = (
        ("collector", _reg.COLLECTOR_REGISTRY, create.collector.type or policy_cls.collector_type),
        ("replay_buffer", _reg.BUFFER_REGISTRY, create.replay_buffer.type or policy_cls.buffer_type or "game_buffer"),
        ("evaluator", _reg.EVALUATOR_REGISTRY, create.evaluator.type or policy_cls.evaluator_type),
        ("learner", _reg.LEARNER_REGISTRY, create.learner.type or policy_cls.learner_type),
        ("cluster", _reg.CLUSTER_REGISTRY, "zmq_cluster"),  # actors and a learner (num_actors; lzlite/cluster)
    )
    for role, reg, name in roles:
        cls, defaults = _component_defaults(reg, name, role)
        wired = set(getattr(cls, "wired_keys", ()))  # set by the training loop, not by a config
        for key, value in defaults.items():
            if key in wired or key in fixed:
                continue
            if key in owner:
                raise ConfigError(f"config key 'policy.{key}' is declared by both {owner[key][0]} and {role} '{name}': "
                                  f"each key has one default, declared by the component that reads it")
            merged[key], owner[key] = value, (f"{role} '{name}'", cls)
    return merged, fixed, owner


def _take_fixed(user_policy: Any, fixed: dict, policy_type: str) -> Any:
    """The user's policy section without the keys its policy fixes; restating a fixed value is allowed (a resolved
    config.py holds it), changing it is an error."""
    if not fixed or not isinstance(user_policy, Mapping):
        return user_policy
    out = dict(user_policy)
    for key, value in fixed.items():
        if key in out:
            given = out.pop(key)
            if given != value:
                raise ConfigError(f"config key 'main_config.policy.{key}': policy '{policy_type}' fixes it to "
                                  f"{value!r}, got {given!r}; remove the key")
    return out


def compile_config(
    main_config: Mapping,
    create_config: Optional[Mapping] = None,
    seed: Optional[int] = None,
    save_dir: Optional[str] = None,
) -> EasyDict:
    """Merge a LightZero-style user config over component defaults, strictly.

    Args:
        main_config: dict with ``exp_name``, ``env`` and ``policy`` sections.
        create_config: dict naming the component types (``env.type``, ``policy.type``) and the user
            modules to import first (``import_names``).
        seed: overrides ``main_config.seed`` when given.
        save_dir: when given, the resolved config is written to ``save_dir/config.py``.

    Returns:
        The resolved EasyDict with sections ``env``, ``policy`` and ``create`` (the create config),
        plus the top-level keys of ``TOP_LEVEL_DEFAULTS``.

    Raises:
        ConfigError: unknown keys (with the nearest valid ones), wrong types, unknown components.
    """
    if not isinstance(main_config, Mapping):
        raise ConfigError(f"main_config must be a dict, got {_type_name(main_config)}")
    create = merge_strict(CREATE_DEFAULTS, create_config or {}, "create_config")
    for role in CREATE_DEFAULTS:
        try:
            _reg.import_modules(create[role].import_names)
        except _reg.RegistryError as e:
            raise ConfigError(f"create_config.{role}: {e}") from None

    env_cls, env_defaults = _component_defaults(_reg.ENV_REGISTRY, create.env.type, "env")
    policy_cls, _ = _component_defaults(_reg.POLICY_REGISTRY, create.policy.type, "policy")
    policy_defaults, fixed, owner = _policy_defaults(policy_cls, create, main_config.get("policy"))
    defaults = dict(TOP_LEVEL_DEFAULTS, env=env_defaults, policy=policy_defaults)
    if "policy" in main_config:
        main_config = dict(main_config, policy=_take_fixed(main_config["policy"], fixed, create.policy.type))
    cfg = merge_strict(defaults, main_config, "main_config")
    cfg.policy.update(fixed)
    if seed is not None:
        cfg.seed = seed
    elif cfg.seed is None:
        cfg.seed = 0
    if isinstance(cfg.seed, bool) or not isinstance(cfg.seed, int) or not 0 <= cfg.seed < MAX_SEED:
        raise ConfigError(f"seed must be an int in [0, {MAX_SEED - 1}] (numpy's seed range, less room for the "
                          f"per-rank and per-component offsets), got {cfg.seed!r}")
    cfg.create = create
    _check_values(cfg, policy_cls, policy_defaults, owner, set(fixed), env_cls, env_defaults)
    if save_dir is not None:
        save_config(cfg, os.path.join(save_dir, "config.py"))
    return cfg


def _check_values(cfg: EasyDict, policy_cls: Any, policy_defaults: Mapping, owner: Mapping[str, tuple],
                  fixed: set, env_cls: Any, env_defaults: Mapping) -> None:
    """Every key against its declaring component's range, then every component's cross-key rules (module docstring).

    Raises:
        ConfigError: one line naming the key path, the value and the allowed range (or the broken rule).
    """
    model_type = cfg.policy.model.get("model_type") if isinstance(cfg.policy.get("model"), Mapping) else None
    model_cls = None
    if model_type in getattr(policy_cls, "model_classes", {}):
        model_cls = _reg.MODEL_REGISTRY.get(policy_cls.model_classes[model_type])
    # (section, its defaults, dotted path, key -> (description, class) of its declaring components)
    sections = [(cfg.env, env_defaults, "main_config.env",
                 {key: (f"env '{cfg.create.env.type}'", env_cls) for key in env_defaults}),
                (cfg.policy, policy_defaults, "main_config.policy",
                 {key: who for key, who in owner.items() if key not in fixed})]
    if model_cls is not None:
        sections.append((cfg.policy.model, policy_defaults.model, "main_config.policy.model",
                         {key: (f"model '{model_cls.__name__}'", model_cls) for key in policy_defaults.model}))
    for key, allowed in LOGGER_RANGES.items():
        _check_range("main_config.logger", key, cfg.logger[key], allowed, LOGGER_DEFAULTS[key], "the logger")
    url = cfg.logger.redis_url
    if url is not None and not (isinstance(url, str) and url.startswith(("redis://", "rediss://", "unix://"))):
        raise ConfigError(f"config key 'main_config.logger.redis_url' must be a Redis URL such as "
                          f"'redis://127.0.0.1:6379/0' (redis://, rediss:// or unix://) or None, got {url!r}")
    for section, defaults, path, declared in sections:
        ranges: Dict[Any, Dict[str, Range]] = {}
        for key, (who, cls) in declared.items():
            if cls not in ranges:
                ranges[cls] = ranges_of(cls)
            if key in ranges[cls] and key in section:
                _check_range(path, key, section[key], ranges[cls][key], defaults.get(key), who)
    rules = [(env_cls, cfg.env, "main_config.env")]
    rules += [(cls, cfg.policy, "main_config.policy") for cls in dict.fromkeys(cls for _, cls in owner.values())]
    if model_cls is not None:
        rules.append((model_cls, cfg.policy.model, "main_config.policy.model"))
    for cls, section, path in rules:
        check = getattr(cls, "check_config", None)
        if check is not None:
            check(section, path)


def _check_range(path: str, key: str, value: Any, allowed: Range, default: Any, owner: str) -> None:
    """ConfigError unless ``value`` is in ``allowed``; a key whose default is None ("unset") may also be None."""
    if value is None and default is None:
        return
    if value not in allowed:
        unset = " or None (unset)" if default is None else ""
        raise ConfigError(f"config key '{path}.{key}' must be in {allowed}{unset}, got {value!r} "
                          f"(range declared by {owner})")


def save_config(cfg: Mapping, path: str) -> None:
    """Write a resolved config as a Python file that ``load_config_file`` reads back (atomically)."""
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    plain = _to_plain(cfg)
    create = plain.pop("create", {})
    text = (
        "# Resolved lzlite config: defaults merged with the user's values.\n"
        f"main_config = {pprint.pformat(plain, sort_dicts=True, width=100)}\n\n"
        f"create_config = {pprint.pformat(create, sort_dicts=True, width=100)}\n"
    )
    tmp = f"{path}.tmp.{os.getpid()}"
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(text)
    os.replace(tmp, path)


def _to_plain(x: Any) -> Any:
    if isinstance(x, Mapping):
        return {str(k): _to_plain(v) for k, v in x.items()}
    if isinstance(x, tuple):
        return [_to_plain(v) for v in x]
    if isinstance(x, list):
        return [_to_plain(v) for v in x]
    return x


def load_config_file(path: str) -> Tuple[dict, dict]:
    """Run a config file and return its ``(main_config, create_config)``.

    The file's directory is put on ``sys.path`` so modules beside it (a user's policy, say) can be
    named in ``import_names``.

    Raises:
        ConfigError: the file is missing, fails to run, or lacks the two variables.
    """
    if not isinstance(path, (str, os.PathLike)):
        raise ConfigError(f"config path must be a string, got {_type_name(path)}")
    path = os.fspath(path)
    if not os.path.isfile(path):
        hint = ""
        if os.path.isdir(path) and os.path.isfile(os.path.join(path, "config.py")):
            hint = f" Did you mean {os.path.join(path, 'config.py')}?"
        raise ConfigError(f"config file not found: '{path}'.{hint}")
    folder = os.path.dirname(os.path.abspath(path))
    if folder not in sys.path:
        sys.path.insert(0, folder)
    try:
        namespace = runpy.run_path(path, run_name="__lzlite_config__")
    except Exception as e:  # the user's file is arbitrary Python: report, don't dump a traceback
        raise ConfigError(f"config file '{path}' failed to run: {type(e).__name__}: {e}") from e
    missing = [name for name in ("main_config", "create_config") if name not in namespace]
    if missing:
        raise ConfigError(
            f"config file '{path}' must define main_config and create_config; missing: {', '.join(missing)}"
        )
    main, create = namespace["main_config"], namespace["create_config"]
    for name, value in (("main_config", main), ("create_config", create)):
        if not isinstance(value, Mapping):
            raise ConfigError(f"{name} in '{path}' must be a dict, got {_type_name(value)}")
    return dict(main), dict(create)


CONFIGS_DIR = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "configs")


def deep_update(base: Mapping, override: Mapping) -> dict:
    """A new dict: ``base`` with ``override`` merged in recursively (no strictness: that is compile_config's)."""
    out = copy.deepcopy(dict(base))
    for key, value in override.items():
        if isinstance(value, Mapping) and isinstance(out.get(key), Mapping):
            out[key] = deep_update(out[key], value)
        else:
            out[key] = copy.deepcopy(value)
    return out


def extend_base(name: str, main_config: Mapping, create_config: Mapping) -> Tuple[dict, dict]:
    """The algorithm base config ``configs/<name>.py`` with a game's settings merged over it.

    Zoo configs call this so that algorithm hyperparameters live in one place per algorithm.
    """
    path = os.path.join(CONFIGS_DIR, f"{name}.py")
    if not os.path.isfile(path):
        known = sorted(f[:-3] for f in os.listdir(CONFIGS_DIR) if f.endswith(".py")) if os.path.isdir(CONFIGS_DIR) else []
        raise ConfigError(f"no base config '{name}' in {CONFIGS_DIR}; known: {', '.join(known) or '(none)'}")
    base_main, base_create = load_config_file(path)
    return deep_update(base_main, main_config), deep_update(base_create, create_config)
