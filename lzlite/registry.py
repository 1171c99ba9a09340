"""Name -> component class registries.

Every pluggable component (policy, model, env, buffer, collector, evaluator, learner) registers
itself under a short name with a decorator; configs refer to components by that name. A user's own
module is imported through ``create_config.<kind>.import_names`` so its registered subclass is found.

Board games register what lzlite needs from them by game name (lzlite/envs/games.py looks them up):
the batched binding (``GAME_REGISTRY``), the bots (``BOT_REGISTRY``) and the positions the optimal-move
rate is graded on (``GRADED_POSITIONS_REGISTRY``). This module imports no other lzlite module.
"""
from __future__ import annotations

import difflib
import importlib
from typing import Callable, Dict, Iterable, List, Optional, TypeVar

T = TypeVar("T")

__all__ = [
    "Registry",
    "RegistryError",
    "POLICY_REGISTRY",
    "MODEL_REGISTRY",
    "ENV_REGISTRY",
    "BUFFER_REGISTRY",
    "COLLECTOR_REGISTRY",
    "EVALUATOR_REGISTRY",
    "LEARNER_REGISTRY",
    "CLUSTER_REGISTRY",
    "GAME_REGISTRY",
    "BOT_REGISTRY",
    "GRADED_POSITIONS_REGISTRY",
    "import_modules",
]


class RegistryError(KeyError):
    """An unknown or duplicate name in a registry; the message lists the known names."""

    def __str__(self) -> str:  # KeyError would wrap the message in quotes
        return str(self.args[0]) if self.args else ""


class Registry:
    """A named map from strings to classes (or factories).

    Example:
        >>> @POLICY_REGISTRY.register('my_muzero')
        ... class MyMuZeroPolicy(MuZeroPolicy): ...
        >>> POLICY_REGISTRY.get('my_muzero')
    """

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self._items: Dict[str, Callable] = {}

    def register(self, name: str, *, force: bool = False) -> Callable[[T], T]:
        """Decorator registering a class under ``name``; re-registering a different object fails."""
        if not isinstance(name, str) or not name:
            raise RegistryError(f"{self.kind} registry: a name must be a non-empty string, got {name!r}")

        def deco(obj: T) -> T:
            old = self._items.get(name)
            if old is not None and old is not obj and not force and _qualname(old) != _qualname(obj):
                raise RegistryError(
                    f"{self.kind} '{name}' is already registered to {_qualname(old)}; "
                    f"pick another name or pass force=True to replace it"
                )
            self._items[name] = obj  # same qualified name: a module reload, keep the newest
            return obj

        return deco

    def get(self, name: str) -> Callable:
        """Return the object registered under ``name``; unknown names list the known ones."""
        if name not in self._items:
            _import_builtin_components()
        try:
            return self._items[name]
        except KeyError:
            known = sorted(self._items)
            close = difflib.get_close_matches(str(name), known, n=3, cutoff=0.5)
            hint = f" Did you mean {', '.join(repr(c) for c in close)}?" if close else ""
            raise RegistryError(
                f"unknown {self.kind} '{name}'.{hint} Known {self.kind}s: {', '.join(known) or '(none)'}. "
                f"A {self.kind} from your own module is found when create_config lists it in import_names."
            ) from None

    def __contains__(self, name: object) -> bool:
        return name in self._items

    def names(self) -> List[str]:
        _import_builtin_components()
        return sorted(self._items)

    def __repr__(self) -> str:
        return f"Registry({self.kind!r}, {sorted(self._items)})"


def _qualname(obj: object) -> str:
    return f"{getattr(obj, '__module__', '?')}.{getattr(obj, '__qualname__', repr(obj))}"


# Modules whose import registers lzlite's own components. Missing optional pieces are skipped so
# that a partial install still reports the names it does know. This list is the one place in lzlite
# that names the zoo: lzlite code never imports it (the zoo imports lzlite to register its games, envs,
# bots and graded positions), so a lookup by name loads it here, by its module name, on first use.
_BUILTIN_MODULES = (
    "zoo",
    "lzlite.envs.gym_env",
    "lzlite.policy",
    "lzlite.model",
    "lzlite.buffer",
    "lzlite.worker",
    "lzlite.cluster",
)
_builtins_loaded = False


def _import_builtin_components() -> None:
    global _builtins_loaded
    if _builtins_loaded:
        return
    _builtins_loaded = True
    for mod in _BUILTIN_MODULES:
        try:
            importlib.import_module(mod)
        except ModuleNotFoundError as e:
            if e.name is None or not mod.startswith(e.name):  # a real missing dependency: surface it
                raise


def import_modules(names: Optional[Iterable[str]]) -> None:
    """Import the user's modules named in ``import_names`` so their registrations run."""
    for name in names or ():
        try:
            importlib.import_module(name)
        except ModuleNotFoundError as e:
            raise RegistryError(
                f"import_names lists '{name}', which cannot be imported ({e}). Put the module on "
                f"PYTHONPATH or next to the config file."
            ) from None


POLICY_REGISTRY = Registry("policy")
MODEL_REGISTRY = Registry("model")
ENV_REGISTRY = Registry("env")
BUFFER_REGISTRY = Registry("buffer")
COLLECTOR_REGISTRY = Registry("collector")
EVALUATOR_REGISTRY = Registry("evaluator")
LEARNER_REGISTRY = Registry("learner")
CLUSTER_REGISTRY = Registry("cluster")  # the actor / learner keys' declaring component (lzlite/cluster/settings.py)
# Board games, by game name (lzlite/envs/games.py is the lookup; zoo/__init__.py shows a registration):
GAME_REGISTRY = Registry("game")  # factory(game_name) -> BatchGame, the game's batched binding
BOT_REGISTRY = Registry("bot")  # make_bot(game_name, kind, **kwargs) -> a bot (act, act_batch)
GRADED_POSITIONS_REGISTRY = Registry("graded positions")  # () -> (states uint8 [M, S], optimal bool [M, A])
