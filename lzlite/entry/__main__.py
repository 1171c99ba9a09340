"""`python -m lzlite.entry --cfg FILE`: train (or evaluate) the experiment a config file describes.

The config file is a Python file defining ``main_config`` and ``create_config`` (LightZero's layout).
The entry function is ``main_config.entry`` when set, otherwise the default entry of the policy type
named in ``create_config.policy.type`` (e.g. 'muzero' -> train_muzero). Errors in the file or the
config, a checkpoint that does not fit it and a diverged training run are reported as one clear line and exit
code 2, not a traceback; ``LZLITE_DEBUG=1`` re-raises them with their traceback.
"""
from __future__ import annotations

import argparse
import os
import shlex
import signal
import sys
from typing import List, Optional

from lzlite.config import ConfigError, load_config_file
from lzlite.config.compile import MAX_SEED
from lzlite.distributed.ddp import DistributedError, launched_by_torchrun
from lzlite.entry import get_entry
from lzlite.entry.stop import TrainingStopped
from lzlite.entry.utils import debug_tracebacks
from lzlite.registry import COLLECTOR_REGISTRY, POLICY_REGISTRY, RegistryError, import_modules
from lzlite.telemetry.logger import format_summary
import lzlite.worker  # noqa: F401  (registers the collectors that --collector names)
from lzlite.worker.checkpoint import CheckpointError
from lzlite.worker.learner import NonFiniteLossError

EXIT_USAGE = 2

# Optional packages -> the setup.py extra that installs each: a run that needs a missing one stops with one line.
OPTIONAL_EXTRAS = {"gymnasium": "gym"}

_EPILOG = """examples:
  python -m lzlite.entry --cfg zoo/tictactoe/config.py
  python -m lzlite.entry --cfg zoo/connect4/gumbel_muzero_config.py --seed 1 --max-env-step 200000
  python -m lzlite.entry --cfg zoo/tictactoe/config.py --resume      # continue the last checkpoint
  torchrun --nproc_per_node=2 -m lzlite.entry --cfg zoo/tictactoe/config.py   # DDP learner
  python -m lzlite.entry --cfg zoo/tictactoe/config.py --actors 2     # a learner and 2 actor processes
  python -m lzlite.entry --cfg zoo/connect4/alphazero_config.py --actors 0 --collector episode_collector
                                                  # the same recipe in one process, lock-step collection
  python -m lzlite.entry --cfg FILE --role learner                     # a learner that actors join:
  python -m lzlite.entry --cfg FILE --role actor --learner tcp://HOST:5555

The config file must define `main_config` (exp_name, env, policy) and `create_config` (env.type,
policy.type, import_names). Unknown keys, wrong types and unknown component names are errors that name
the key and suggest the nearest valid one. The resolved config is written to <run-dir>/config.py.
"""


def _positive_int(text: str) -> int:
    """argparse type: an int >= 1 (a step limit of 0 or less would train nothing)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive int, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be >= 1 (leave it out for no limit), got {value}")
    return value


def _seed(text: str) -> int:
    """argparse type: a seed in [0, MAX_SEED)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an int, got {text[:40]!r}") from None
    if not 0 <= value < MAX_SEED:
        raise argparse.ArgumentTypeError(f"must be in [0, {MAX_SEED - 1}], got {text[:40]}")
    return value


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m lzlite.entry",
        description="Train or evaluate an lzlite experiment described by a config file.",
        epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--cfg", required=True, metavar="FILE", help="config file defining main_config and create_config")
    p.add_argument("--seed", type=_seed, default=None, help="random seed (default: main_config.seed, else 0)")
    p.add_argument("--max-env-step", type=_positive_int, default=None, metavar="N",
                   help="stop after N collected env steps")
    p.add_argument("--max-train-iter", type=_positive_int, default=None, metavar="N",
                   help="stop after N learner updates")
    p.add_argument("--entry", default=None, metavar="NAME", help="entry function to run (overrides the config)")
    p.add_argument("--collector", default=None, metavar="NAME",
                   help="collector to play the games with (overrides create_config.collector.type), e.g. "
                        "episode_collector (lock-step) or engine_collector (docs/engine.md)")
    p.add_argument("--run-dir", default=None, metavar="DIR",
                   help="where logs, checkpoints and the resolved config go (default: runs/<exp_name>)")
    p.add_argument("--resume", action="store_true", help="continue from the last checkpoint in the run dir")
    p.add_argument("--force", action="store_true",
                   help="start afresh in a run dir that already holds a run, overwriting its checkpoints")
    p.add_argument("--model-path", default=None, metavar="CKPT", help="initialise the model from a checkpoint")
    p.add_argument("--device", default=None, help="torch device, e.g. cpu or cuda:0 (default: the config's)")
    p.add_argument("--redis", default=None, metavar="URL",
                   help="publish live status, curves and games to Redis for the web UI, e.g. redis://127.0.0.1:6379/0 "
                        "(sets logger.redis_url)")
    cluster = p.add_argument_group("actors and a learner (docs/distributed.md)")
    cluster.add_argument("--actors", type=_non_negative_int, default=None, metavar="N",
                         help="train with a learner and N local actor processes (sets policy.num_actors; 0: one "
                              "process)")
    cluster.add_argument("--role", choices=("learner", "actor", "reanalyzer"), default=None,
                         help="learner: the learner alone, which actors join; actor: an actor for --learner; "
                              "reanalyzer: a reanalyze process for --learner")
    cluster.add_argument("--learner", default=None, metavar="tcp://HOST:PORT",
                         help="the learner an actor joins (its policy.cluster_port)")
    cluster.add_argument("--actor-id", type=_non_negative_int, default=0, metavar="K",
                         help="this actor's number in the learner's logs (default 0)")
    cluster.add_argument("--run-id", default=None, metavar="ID",
                         help="an actor with logger.redis_url: the learner's run id in Redis (its status shows it; "
                              "local actors get it from the learner), under which it reports its status and games")
    cluster.add_argument("--weights-file", default=None, metavar="PATH",
                         help="an actor on the learner's file system reads weights from RUN_DIR/weights/latest.pt; "
                              "without it, weights come over the learner's PUB socket")
    cluster.add_argument("--parent-pid", type=int, default=None, help=argparse.SUPPRESS)  # the supervisor's
    return p


def _non_negative_int(text: str) -> int:
    """argparse type: an int >= 0."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an int, got {text[:40]!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be >= 0, got {value}")
    return value


def resolve_entry_name(main_config: dict, create_config: dict, override: Optional[str] = None) -> str:
    """The entry function name: --entry, else main_config['entry'], else the policy's default entry."""
    if override:
        return override
    if main_config.get("entry"):
        return str(main_config["entry"])
    policy = create_config.get("policy") or {}
    if not isinstance(policy, dict) or not policy.get("type"):
        raise ConfigError("create_config.policy.type is required to pick the entry function")
    try:
        import_modules(policy.get("import_names") or [])
        cls = POLICY_REGISTRY.get(policy["type"])
    except RegistryError as e:
        raise ConfigError(f"create_config.policy.type: {e}") from None
    entry = getattr(cls, "entry", None)
    if not entry:
        raise ConfigError(f"policy '{policy['type']}' names no default entry; set main_config.entry")
    return entry


def swap_collector(main_config: dict, create_config: dict, name: str) -> tuple:
    """The configs with ``name`` as the collector; policy keys that only the config's own collector reads are dropped
    (e.g. ``engine_infer_cache`` when an engine recipe is played lock-step), and said so in one line."""
    collector = create_config.get("collector")
    if collector is not None and not isinstance(collector, dict):
        return main_config, create_config  # compile_config names the bad value
    create_config = dict(create_config, collector=dict(collector or {}, type=name))
    old = (collector or {}).get("type")
    policy = main_config.get("policy")
    if not old or old == name or not isinstance(policy, dict):
        return main_config, create_config
    try:
        old_keys = set(COLLECTOR_REGISTRY.get(old).default_config())
        new_keys = set(COLLECTOR_REGISTRY.get(name).default_config())
    except RegistryError:  # a user's collector from import_names, or a misspelt name: compile_config checks it
        return main_config, create_config
    dropped = sorted(k for k in policy if k in old_keys - new_keys)
    if dropped:
        print(f"lzlite: --collector {name}: leaving out {', '.join(dropped)} (read by {old} only)", file=sys.stderr)
        main_config = dict(main_config, policy={k: v for k, v in policy.items() if k not in dropped})
    return main_config, create_config


def missing_optional_package(err: Optional[BaseException]) -> Optional[str]:
    """The package of ``OPTIONAL_EXTRAS`` whose absence raised ``err`` (or one of its causes), else None."""
    while err is not None:
        if isinstance(err, ModuleNotFoundError) and (err.name or "").split(".")[0] in OPTIONAL_EXTRAS:
            return err.name.split(".")[0]
        err = err.__cause__ or err.__context__
    return None


def _resume_command(args: argparse.Namespace) -> str:
    """The command line that continues this run: its own options, with --resume instead of --force."""
    words = ["--cfg", args.cfg]
    for flag, value in (("--seed", args.seed), ("--max-env-step", args.max_env_step),
                        ("--max-train-iter", args.max_train_iter), ("--entry", args.entry),
                        ("--collector", args.collector), ("--run-dir", args.run_dir),
                        ("--device", args.device), ("--redis", args.redis), ("--actors", args.actors),
                        ("--role", args.role)):
        if value is not None:
            words += [flag, str(value)]
    launcher = "torchrun <its options> -m lzlite.entry" if launched_by_torchrun() else "python -m lzlite.entry"
    return " ".join([launcher, *map(shlex.quote, words), "--resume"])


def main(argv: Optional[List[str]] = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        if args.role in ("actor", "reanalyzer"):
            if not args.learner:
                raise ConfigError(f"--role {args.role} needs --learner tcp://HOST:PORT (the learner's "
                                  f"policy.cluster_port)")
            # (imported here: pyzmq is for runs with actors only)
            from lzlite.cluster.actor import run_actor

            return run_actor(args.cfg, args.learner, args.actor_id, seed=args.seed, weights_file=args.weights_file,
                             run_id=args.run_id, parent_pid=args.parent_pid, device=args.device, role=args.role)
        if args.learner:
            raise ConfigError("--learner is an actor's option: add --role actor (or reanalyzer)")
        main_config, create_config = load_config_file(args.cfg)
        if args.redis is not None:
            logger = main_config.get("logger")
            if logger is None or isinstance(logger, dict):  # (any other value: compile_config names the bad key)
                main_config = dict(main_config, logger=dict(logger or {}, redis_url=args.redis))
        if args.actors is not None:
            main_config = dict(main_config, policy=dict(main_config.get("policy") or {}, num_actors=args.actors))
        if args.collector is not None:
            main_config, create_config = swap_collector(main_config, create_config, args.collector)
        name = resolve_entry_name(main_config, create_config, args.entry)
        fn = get_entry(name)
        kwargs = dict(seed=args.seed, max_env_step=args.max_env_step, max_train_iter=args.max_train_iter,
                      model_path=args.model_path)
        if name.startswith("train_"):
            kwargs.update(run_dir=args.run_dir, resume=args.resume, force=args.force, device=args.device,
                          role=args.role)
        result = fn([main_config, create_config],
                    **{k: v for k, v in kwargs.items() if v is not None and v is not False})
        if name.startswith("eval_"):
            print(format_summary(result, title="evaluation"))
    except (ConfigError, RegistryError, CheckpointError, DistributedError, NotImplementedError,
            FileNotFoundError, NonFiniteLossError) as e:
        if debug_tracebacks() and not isinstance(e, DistributedError):  # LZLITE_DEBUG=1: the traceback instead
            raise
        print(f"lzlite: error: {e}", file=sys.stderr)
        if isinstance(e, DistributedError):  # a broken process group can abort in its C++ teardown
            sys.stderr.flush()
            sys.stdout.flush()
            os._exit(EXIT_USAGE)
        return EXIT_USAGE
    except ImportError as e:
        package = missing_optional_package(e)
        if package is None or debug_tracebacks():  # a broken install or a bug: keep the traceback
            raise
        extra = OPTIONAL_EXTRAS[package]
        print(f"lzlite: error: this run needs the optional package '{package}', which is not installed: "
              f"pip install 'lzlite[{extra}]' (from a checkout: pip install -e \".[{extra}]\")", file=sys.stderr)
        return EXIT_USAGE
    except TrainingStopped as e:  # SIGINT / SIGTERM: the checkpoint is written
        if e.checkpoint is not None:  # (DDP ranks other than 0 write none and say nothing)
            print(f"lzlite: stopped by {signal.Signals(e.signal_number).name} at env step {e.env_steps}, learner step "
                  f"{e.train_iter}; checkpoint {e.checkpoint}; continue with: {_resume_command(args)}", file=sys.stderr)
        return e.exit_code
    except KeyboardInterrupt:
        print("lzlite: interrupted", file=sys.stderr)
        return 130
    return 0


if __name__ == "__main__":
    code = main()
    if int(os.environ.get("WORLD_SIZE", "1")) > 1:
        # Under torchrun, gloo's worker threads can abort the interpreter's own teardown ("terminate
        # called without an active exception") after a finished run; everything is written and the
        # process group destroyed by now, so leave without it.
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)
    sys.exit(code)
