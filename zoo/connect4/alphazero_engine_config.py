"""Connect Four, AlphaZero collected by the C++ self-play engine with its inference cache (docs/engine.md).

The recipe of alphazero_config.py; only the collector differs. With a trained network the engine plays 2.7-2.8x the
moves per second of the lock-step collector on one core (docs/benchmarks.md).

    python -m lzlite.entry --cfg zoo/connect4/alphazero_engine_config.py
"""
import copy

from zoo.connect4.alphazero_config import create_config as _create
from zoo.connect4.alphazero_config import main_config as _main

main_config = copy.deepcopy(_main)
main_config["exp_name"] = "connect4_alphazero_engine"
main_config["policy"]["engine_infer_cache"] = 1 << 16  # positions; a collect of 128 games looks up ~500k
create_config = copy.deepcopy(_create)
create_config["collector"] = dict(type="engine_collector")
