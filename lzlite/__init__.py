"""lzlite: fast, small MCTS-based reinforcement learning (AlphaZero, MuZero, Gumbel MuZero, ...)."""
from lzlite.config import ConfigError, compile_config, load_config_file
from lzlite.registry import (
    BUFFER_REGISTRY,
    COLLECTOR_REGISTRY,
    ENV_REGISTRY,
    EVALUATOR_REGISTRY,
    LEARNER_REGISTRY,
    MODEL_REGISTRY,
    POLICY_REGISTRY,
    Registry,
    RegistryError,
)

__version__ = "0.1.0"

__all__ = [
    "__version__",
    "ConfigError",
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
]
