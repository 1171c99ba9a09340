"""Tic-tac-toe, ReZero: MuZero with scheduled whole-buffer backward-view reanalyze (self-play).

    python -m lzlite.entry --cfg zoo/tictactoe/rezero_config.py

The game settings are muzero_config.py's, so the two can be compared run for run; the reanalyze keys
come from configs/rezero.py.
"""
from lzlite.config import deep_update, extend_base
from zoo.tictactoe import muzero_config as _muzero

main_config, create_config = extend_base(
    "rezero",
    deep_update(_muzero.main_config, dict(
        exp_name="tictactoe_rezero",
        # Root values only: policy targets rewritten by a noise-free search collapse onto the prior's
        # favourite move (after an opening corner, never the centre); see docs/results.md.
        policy=dict(reanalyze_policy_targets=False),
    )),
    deep_update(_muzero.create_config, dict(policy=dict(type="rezero"))),
)
