"""Config for the user-defined 'sharp_muzero' policy (docs/examples/sharp_muzero.py), on tic-tac-toe.

    python -m lzlite.entry --cfg docs/examples/sharp_muzero_config.py
"""
from zoo.tictactoe.muzero_config import create_config as _create
from zoo.tictactoe.muzero_config import main_config as _main

from lzlite.config import deep_update

main_config = deep_update(_main, dict(exp_name="tictactoe_sharp_muzero", policy=dict(target_temperature=0.5)))
create_config = deep_update(_create, dict(policy=dict(type="sharp_muzero", import_names=["sharp_muzero"])))
