"""The C++ self-play engine (docs/engine.md): many games on worker threads, batched inference through one
callback per route, an inference cache that obeys the weights generation.

``Engine`` is a compiled extension (lzlite/engine/_engine.pyx over the header-only core engine.h); build it with
``python setup.py build_ext --inplace``. ``Records`` is what a window returns.
"""
from lzlite.engine.records import Records

__all__ = ["Engine", "EngineStream", "Records"]


def __getattr__(name: str):
    # the compiled extension is imported on first use, so that lzlite (and Records) imports without it
    if name in ("Engine", "EngineStream"):
        try:
            from lzlite.engine import _engine
        except ImportError as err:
            raise ImportError("lzlite.engine.Engine needs the compiled extension lzlite.engine._engine; build it "
                              "with `LZLITE_EXTS=lzlite.engine._engine python setup.py build_ext --inplace`") from err
        return getattr(_engine, name)
    raise AttributeError(f"module 'lzlite.engine' has no attribute {name!r}")
