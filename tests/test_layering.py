"""Every dependency arrow points one way: lzlite's packages import only the layers below them, and the zoo
imports lzlite, never the reverse.

The layers of lzlite, lowest first (docs/architecture.md, "Layers"); a module may import its own package
and the packages before it, never one after it:

    registry < config < telemetry < distributed < envs < buffer < model < mcts < policy < worker < entry < webui

``lzlite/__init__.py`` (the public API) sits above them all. The zoo sits beside ``envs``: it imports
``registry``, ``config`` and ``envs`` to register its games, envs, bots and graded positions (a research
variant's registered policy subclass, named in its config's ``import_names``, may import up to ``policy``, as a
user's module does), and lzlite never imports it; the registries load it by module name (``_BUILTIN_MODULES`` in lzlite/registry.py, the one
place that names it) the first time a name is looked up.

Imports are read with ``ast`` from every module, those inside functions included, plus
``importlib.import_module`` calls whose module name starts with a literal (``f"zoo.{game}..."``); the
Cython bindings (``.pyx``) are read line by line for their Python-level ``import`` / ``from ... import``.
"""
from __future__ import annotations

import ast
import os
import re
import sys
from typing import Dict, Iterator, List, Tuple

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LAYERS = ("registry", "config", "telemetry", "distributed", "envs", "buffer", "model", "mcts", "engine", "policy",
          "worker", "cluster", "entry", "webui")
TOP = "lzlite"  # lzlite/__init__.py, the public API: above every layer
ZOO_MAY_IMPORT = LAYERS[:LAYERS.index("envs") + 1]
# zoo modules that hold a registered policy subclass (a shipped recipe's variant): they may import up to policy
ZOO_POLICY_MODULES = (os.path.join("zoo", "connect4", "grounded_muzero.py"),)

_PYX_IMPORT = re.compile(r"^\s*(?:from\s+([\w.]+)\s+import\b|import\s+([\w.]+))")


def _modules(top: str) -> Iterator[str]:
    """Paths (relative to the repository) of every .py and .pyx file under ``top``."""
    for root, dirs, files in os.walk(os.path.join(REPO, top)):
        dirs[:] = sorted(d for d in dirs if d not in ("__pycache__", "build"))
        for name in sorted(files):
            if name.endswith((".py", ".pyx")):
                yield os.path.relpath(os.path.join(root, name), REPO)


def _literal_prefix(node: ast.expr) -> str:
    """The leading literal text of a str constant or f-string ('' if it has none)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr) and node.values and isinstance(node.values[0], ast.Constant):
        return str(node.values[0].value)
    return ""


def _resolve_from_lzlite(name: str) -> str:
    """``from lzlite import name``: the submodule when ``name`` is one, else the package's public API."""
    sub = os.path.join(REPO, "lzlite", name)
    return f"lzlite.{name}" if os.path.isdir(sub) or os.path.isfile(sub + ".py") else "lzlite"


def imports_of(path: str) -> List[Tuple[int, str]]:
    """(line, imported module) for every import in the file at ``path`` (relative to the repository)."""
    with open(os.path.join(REPO, path), encoding="utf-8") as f:
        text = f.read()
    found: List[Tuple[int, str]] = []
    if path.endswith(".pyx"):  # Cython: not parseable by ast; its Python imports are plain statements
        for lineno, line in enumerate(text.splitlines(), 1):
            m = _PYX_IMPORT.match(line)
            if m:
                found.append((lineno, m.group(1) or m.group(2)))
        return found
    for node in ast.walk(ast.parse(text, filename=path)):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            if node.module == "lzlite":
                found += [(node.lineno, _resolve_from_lzlite(alias.name)) for alias in node.names]
            else:
                found.append((node.lineno, node.module))
        elif isinstance(node, ast.Call) and node.args:
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            prefix = _literal_prefix(node.args[0])
            if name == "import_module" and prefix:
                found.append((node.lineno, prefix.rstrip(".")))
    return sorted(found)


def _layer(module: str) -> str:
    """The layer of a dotted lzlite module name ('lzlite.envs.vector' -> 'envs'; 'lzlite' -> TOP)."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else TOP


def _path_layer(path: str) -> str:
    """The layer of an lzlite file ('lzlite/envs/vector.py' -> 'envs'; 'lzlite/registry.py' -> 'registry')."""
    parts = path.split(os.sep)
    if len(parts) == 2:  # lzlite/<module>.py
        stem = os.path.splitext(parts[1])[0]
        return TOP if stem == "__init__" else stem
    return parts[1]


def _is(module: str, package: str) -> bool:
    return module == package or module.startswith(package + ".")


def _violations(top: str, bad) -> List[str]:
    """'path:line imports module' for every import in ``top`` for which ``bad(path, module)`` holds."""
    return [f"{path}:{line} imports {module}" for path in _modules(top) for line, module in imports_of(path)
            if bad(path, module)]


def test_every_lzlite_package_is_in_a_layer():
    packages = sorted(os.path.splitext(p)[0] for p in os.listdir(os.path.join(REPO, "lzlite"))
                      if not p.startswith(("_", ".")) and (p.endswith(".py") or
                                                           os.path.isdir(os.path.join(REPO, "lzlite", p))))
    assert [p for p in packages if p not in LAYERS] == [], \
        "a new lzlite package: add it to LAYERS here and to docs/architecture.md ('Layers')"


def test_lzlite_layers_import_only_layers_below():
    rank: Dict[str, int] = {name: i for i, name in enumerate(LAYERS)}  # TOP and unknown names: above all

    def upward(path: str, module: str) -> bool:
        return _is(module, "lzlite") and rank.get(_layer(module), len(LAYERS)) > rank.get(_path_layer(path), len(LAYERS))

    assert _violations("lzlite", upward) == [], f"layer order, lowest first: {' < '.join(LAYERS)}"


def test_lzlite_never_imports_the_zoo():
    assert _violations("lzlite", lambda path, module: _is(module, "zoo")) == [], \
        "look games, bots and graded positions up by name (lzlite/envs/games.py, the registries) instead"


def test_envs_never_import_the_zoo():
    assert _violations(os.path.join("lzlite", "envs"), lambda path, module: _is(module, "zoo")) == []


@pytest.mark.parametrize("above", ["lzlite.mcts", "lzlite.policy", "lzlite.worker"])
def test_buffer_never_imports_search_policy_or_workers(above):
    assert _violations(os.path.join("lzlite", "buffer"), lambda path, module: _is(module, above)) == []


@pytest.mark.parametrize("above", ["lzlite.worker", "lzlite.entry"])
def test_zoo_never_imports_workers_or_entry(above):
    assert _violations("zoo", lambda path, module: _is(module, above)) == []


def test_zoo_imports_only_the_layers_up_to_envs():
    def bad(path: str, module: str) -> bool:
        allowed = LAYERS[:LAYERS.index("policy") + 1] if path.endswith(ZOO_POLICY_MODULES) else ZOO_MAY_IMPORT
        return _is(module, "lzlite") and _layer(module) not in allowed

    assert _violations("zoo", bad) == [], f"the zoo may import lzlite's {', '.join(ZOO_MAY_IMPORT)}"


def test_the_reader_sees_every_kind_of_import(tmp_path, monkeypatch):
    """The checks above are only as good as the import reader: each form it must catch, caught."""
    monkeypatch.setattr(sys.modules[__name__], "REPO", str(tmp_path))
    (tmp_path / "lzlite").mkdir()
    (tmp_path / "lzlite" / "registry.py").write_text("")
    (tmp_path / "m.py").write_text(
        "import zoo.bots\n"
        "from lzlite import registry, compile_config\n"
        "def f(game):\n"
        "    from lzlite.worker.metrics import graded_positions\n"
        "    return importlib.import_module(f'zoo.{game}.eval_positions')\n")
    (tmp_path / "b.pyx").write_text("from libc.stdint cimport int32_t\ncimport numpy as cnp\n"
                                    "import numpy as np\nfrom lzlite.envs.base import IllegalActionError\n")
    assert imports_of("m.py") == [(1, "zoo.bots"), (2, "lzlite"), (2, "lzlite.registry"),
                                  (4, "lzlite.worker.metrics"), (5, "zoo")]
    assert imports_of("b.pyx") == [(3, "numpy"), (4, "lzlite.envs.base")]
