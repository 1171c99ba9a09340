"""Entry functions (LightZero-compatible signatures) and the command line (`python -m lzlite.entry`)."""
from __future__ import annotations

import difflib
import importlib
from typing import Callable, Dict, List

from lzlite.config import ConfigError

# entry name -> "module:function"
ENTRY_FUNCTIONS: Dict[str, str] = {
    "train_alphazero": "lzlite.entry.train_alphazero:train_alphazero",
    "train_muzero": "lzlite.entry.train_muzero:train_muzero",
    "train_rezero": "lzlite.entry.train_rezero:train_rezero",
    "train_unizero_segment": "lzlite.entry.train_unizero_segment:train_unizero_segment",
    "eval_alphazero": "lzlite.entry.eval:eval_alphazero",
    "eval_muzero": "lzlite.entry.eval:eval_muzero",
}

__all__ = list(ENTRY_FUNCTIONS) + ["get_entry", "entry_names"]


def entry_names() -> List[str]:
    return sorted(ENTRY_FUNCTIONS)


def get_entry(name: str) -> Callable:
    """Return the entry function called ``name``; unknown names list the known ones."""
    if name not in ENTRY_FUNCTIONS:
        close = difflib.get_close_matches(name, ENTRY_FUNCTIONS, n=2, cutoff=0.5)
        hint = f" Did you mean {' or '.join(repr(c) for c in close)}?" if close else ""
        raise ConfigError(f"unknown entry '{name}'.{hint} Known entries: {', '.join(entry_names())}")
    module, func = ENTRY_FUNCTIONS[name].split(":")
    try:
        mod = importlib.import_module(module)
    except ModuleNotFoundError as e:
        if e.name == module:
            raise NotImplementedError(f"entry '{name}' is not available in this version of lzlite") from None
        raise
    return getattr(mod, func)


def __getattr__(name: str) -> Callable:
    if name in ENTRY_FUNCTIONS:
        return get_entry(name)
    raise AttributeError(f"module 'lzlite.entry' has no attribute '{name}'")


# Bind the functions that share their module's name eagerly: importing a submodule
# (lzlite.entry.train_muzero) would otherwise shadow the function with the module object. The others
# (eval_*) stay lazy, so `python -m lzlite.entry.eval` runs a module the package has not imported.
for _name, _target in ENTRY_FUNCTIONS.items():
    if _target.split(":")[0].rsplit(".", 1)[1] != _name:
        continue
    try:
        globals()[_name] = get_entry(_name)
    except NotImplementedError:  # not in this version yet: get_entry explains when it is asked for
        pass
del _name, _target
