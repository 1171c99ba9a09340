"""Config helpers: strict merge of user configs over component defaults, and the ranges of their values."""
from lzlite.config.compile import (
    CREATE_DEFAULTS,
    TOP_LEVEL_DEFAULTS,
    ConfigError,
    compile_config,
    deep_update,
    extend_base,
    load_config_file,
    merge_strict,
    save_config,
)
from lzlite.config.ranges import Range, above, at_least, between

__all__ = [
    "ConfigError",
    "compile_config",
    "deep_update",
    "extend_base",
    "merge_strict",
    "load_config_file",
    "save_config",
    "TOP_LEVEL_DEFAULTS",
    "CREATE_DEFAULTS",
    "Range",
    "above",
    "at_least",
    "between",
]
