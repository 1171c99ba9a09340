"""What the front-end tests need from the machine: node and npm (new enough for webui/package.json's
pinned packages) and webui/node_modules (installed with `npm ci` from the committed lock file on first use).

Each check returns the reason to skip, or None; the tests skip with that reason, so a machine without node
reports it instead of passing in silence.
"""
from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path
from typing import Optional

WEBUI = Path(__file__).resolve().parents[2] / "webui"
# Vite 7 and jsdom 28 need node 20.19 or newer (webui/package.json "engines").
MIN_NODE = (20, 19)


def node_env() -> dict:
    """The environment for npm and node: no colours (the tests read the output), no update notices."""
    return dict(os.environ, NO_COLOR="1", FORCE_COLOR="0", CI="1", npm_config_update_notifier="false",
                npm_config_fund="false", npm_config_audit="false")


def node_missing() -> Optional[str]:
    """Why node / npm cannot run the front end's tools here, or None."""
    for tool in ("node", "npm"):
        if shutil.which(tool) is None:
            return f"{tool} is not installed (the front-end tests need Node.js >= 20.19 and npm; .ci/run installs them)"
    out = subprocess.run(["node", "--version"], capture_output=True, text=True, check=False).stdout.strip()
    m = re.match(r"v(\d+)\.(\d+)", out)
    if not m or (int(m.group(1)), int(m.group(2))) < MIN_NODE:
        return f"node {out or '(unknown version)'} is older than {MIN_NODE[0]}.{MIN_NODE[1]}, which webui/ needs"
    return None


def ensure_node_modules() -> None:
    """Runs `npm ci` in webui/ when node_modules is missing (fails the test, with npm's output, if it cannot)."""
    if (WEBUI / "node_modules" / ".package-lock.json").exists():
        return
    proc = subprocess.run(["npm", "ci"], cwd=WEBUI, env=node_env(), capture_output=True, text=True,
                          timeout=600, check=False)
    assert proc.returncode == 0, f"npm ci in webui/ failed:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"


def npm(*args: str, timeout: float = 300) -> subprocess.CompletedProcess:
    """Runs `npm ARGS` in webui/ and returns the finished process (output captured as text)."""
    return subprocess.run(["npm", *args], cwd=WEBUI, env=node_env(), capture_output=True, text=True,
                          timeout=timeout, check=False)
