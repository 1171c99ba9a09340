"""`python -m lzlite.webui [--redis URL] [--host 127.0.0.1] [--port 8000] [--build]`: serve the web UI and its
WebSocket API.

    python -m lzlite.entry --cfg zoo/tictactoe/config.py --redis redis://127.0.0.1:6379/0   # a run that publishes
    python -m lzlite.webui --build                                                          # build the UI, serve it
    # then open http://127.0.0.1:8000

The bridge binds 127.0.0.1 unless ``--host`` says otherwise: its play endpoint runs searches and its pages show
what Redis holds, so exposing it is the user's decision (``--host 0.0.0.0`` on a trusted network).
"""
from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
from typing import List, Optional

EXIT_USAGE = 2


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m lzlite.webui",
                                description="Serve lzlite's web UI (runs, live curves and boards, play the agent) and "
                                            "its WebSocket API, fed from the Redis that training runs publish to.")
    p.add_argument("--redis", default="redis://127.0.0.1:6379/0", metavar="URL",
                   help="the Redis the runs publish to (their logger.redis_url; default %(default)s)")
    p.add_argument("--host", default="127.0.0.1", help="address to bind (default %(default)s: this machine only)")
    p.add_argument("--port", type=int, default=8000, help="port (default %(default)s)")
    p.add_argument("--ui-dir", default=None, metavar="DIR",
                   help="the built UI to serve (default: webui/dist of this source tree)")
    p.add_argument("--build", action="store_true",
                   help="first build the UI (npm ci && npm run build in webui/; needs Node 20.19+)")
    return p


def build_ui(webui_dir: str) -> None:
    """Run ``npm ci && npm run build`` in ``webui_dir`` (writes ``webui/dist``).

    Raises:
        RuntimeError: npm missing, no webui/ folder, or the build failing (one line).
    """
    npm = shutil.which("npm")
    if npm is None:
        raise RuntimeError("npm is not installed: install Node.js 20.19+ (with npm) to build the web UI")
    if not os.path.isfile(os.path.join(webui_dir, "package.json")):
        raise RuntimeError(f"no web UI sources at {webui_dir} (build from a source checkout of lzlite)")
    for step in (["ci"], ["run", "build"]):
        if subprocess.run([npm, *step], cwd=webui_dir).returncode != 0:
            raise RuntimeError(f"`npm {' '.join(step)}` failed in {webui_dir} (its output is above)")


def main(argv: Optional[List[str]] = None) -> int:
    args = build_parser().parse_args(argv)
    if not 0 < args.port < 65536:
        print(f"lzlite.webui: error: --port must be in 1..65535, got {args.port}", file=sys.stderr)
        return EXIT_USAGE
    if not args.redis.startswith(("redis://", "rediss://", "unix://")):
        print(f"lzlite.webui: error: --redis must be a Redis URL such as redis://127.0.0.1:6379/0, got {args.redis!r}",
              file=sys.stderr)
        return EXIT_USAGE
    try:  # the bridge's extra: starlette, uvicorn, redis
        import uvicorn

        from lzlite.webui.app import create_app, default_ui_dir
    except ImportError as e:
        print(f"lzlite.webui: error: the web bridge needs its extra ({e.name} is missing): pip install -e '.[webui]'",
              file=sys.stderr)
        return EXIT_USAGE
    ui_dir = args.ui_dir or default_ui_dir()
    if args.build:
        try:
            build_ui(os.path.dirname(ui_dir))
        except RuntimeError as e:
            print(f"lzlite.webui: error: {e}", file=sys.stderr)
            return EXIT_USAGE
    print(f"lzlite web UI: http://{args.host}:{args.port}  (Redis {args.redis}; Ctrl-C stops)", flush=True)
    uvicorn.run(create_app(args.redis, ui_dir), host=args.host, port=args.port, log_level="warning")
    return 0


if __name__ == "__main__":
    sys.exit(main())
