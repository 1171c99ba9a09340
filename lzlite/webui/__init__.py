"""The web bridge: ``python -m lzlite.webui`` serves the built React UI and a WebSocket API fed from Redis, where
training runs publish their status, curves and games (``logger.redis_url``); its play endpoint searches with a
run's checkpoint through ``lzlite.load_agent``. See docs/webui.md.

``create_app`` (``lzlite/webui/app.py``) is imported on first use: it needs the ``webui`` extra (starlette, uvicorn,
redis), which ``python -m lzlite.webui`` names in one line when it is missing.
"""
__all__ = ["create_app"]


def __getattr__(name: str):
    if name == "create_app":  # on first use: starlette is an optional extra
        from lzlite.webui.app import create_app

        return create_app
    raise AttributeError(f"module 'lzlite.webui' has no attribute '{name}'")
