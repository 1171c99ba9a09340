"""The web UI's own tests (Vitest, in webui/src/**/*.test.ts[x]) and its type check, run from pytest.

They cover the WebSocket client (every frame type, error frames, reconnect with backoff), the boards
(cells and the search's visits / Q from a MoveEvent, for tic-tac-toe, Connect Four and gomoku), the
curves, and the play page (play_new, play_move, the bridge's error frame, the end of a game).
Skipped, with the reason, where node or npm is missing.
"""
from __future__ import annotations

import re

import pytest

from node_tools import ensure_node_modules, node_missing, npm

pytestmark = pytest.mark.skipif(node_missing() is not None, reason=str(node_missing()))


def test_vitest_suite_passes():
    ensure_node_modules()
    proc = npm("test")
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, f"npm test failed in webui/:\n{out[-6000:]}"
    # A run that found no test files also exits 0 with some runners: require the tests to have run.
    m = re.search(r"Tests\s+(\d+) passed", out)
    assert m and int(m.group(1)) >= 30, f"expected the Vitest suite to run (30+ tests):\n{out[-3000:]}"
    assert "failed" not in out.split("Test Files")[-1], out[-3000:]


def test_typescript_type_checks():
    ensure_node_modules()
    proc = npm("run", "typecheck")
    assert proc.returncode == 0, f"tsc --noEmit failed in webui/:\n{proc.stdout[-4000:]}{proc.stderr[-2000:]}"
