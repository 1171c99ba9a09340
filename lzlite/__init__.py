"""lzlite: fast, small MCTS-based reinforcement learning (AlphaZero, MuZero, Gumbel MuZero, ...)."""
from lzlite.config import ConfigError, compile_config, load_config_file
from lzlite.registry import (
    BOT_REGISTRY,
    BUFFER_REGISTRY,
    COLLECTOR_REGISTRY,
    ENV_REGISTRY,
    EVALUATOR_REGISTRY,
    GAME_REGISTRY,
    GRADED_POSITIONS_REGISTRY,
    LEARNER_REGISTRY,
    MODEL_REGISTRY,
    POLICY_REGISTRY,
    Registry,
    RegistryError,
)

__version__ = "0.1.0"

# Entry functions are imported on first use so that `import lzlite` stays light (no torch import).
_ENTRY_NAMES = ("train_alphazero", "train_muzero", "train_rezero", "train_unizero_segment",
                "eval_alphazero", "eval_muzero")


def __getattr__(name: str):
    if name in _ENTRY_NAMES:
        import lzlite.entry as _entry

        return getattr(_entry, name)
    if name in ("load_agent", "Agent", "AgentError"):  # the agent API (lzlite/entry/agent.py) imports torch
        import lzlite.entry.agent as _agent

        return getattr(_agent, name)
    if name == "TrainingStopped":  # what train_* raise after SIGINT / SIGTERM; lzlite.entry imports torch
        from lzlite.entry.stop import TrainingStopped

        return TrainingStopped
    raise AttributeError(f"module 'lzlite' has no attribute '{name}'")


__all__ = [
    "__version__",
    "train_alphazero",
    "train_muzero",
    "train_rezero",
    "train_unizero_segment",
    "eval_alphazero",
    "eval_muzero",
    "load_agent",
    "Agent",
    "AgentError",
    "ConfigError",
    "TrainingStopped",
    "compile_config",
    "load_config_file",
    "Registry",
    "RegistryError",
    "POLICY_REGISTRY",
    "MODEL_REGISTRY",
    "ENV_REGISTRY",
    "BUFFER_REGISTRY",
    "COLLECTOR_REGISTRY",
    "EVALUATOR_REGISTRY",
    "LEARNER_REGISTRY",
    "GAME_REGISTRY",
    "BOT_REGISTRY",
    "GRADED_POSITIONS_REGISTRY",
]
