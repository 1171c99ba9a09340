"""ReZero base config: MuZero's (configs/muzero.py); the policy's defaults hold the whole-buffer reanalyze schedule.

zoo/<game>/rezero_config.py extends it (lzlite.config.extend_base).
"""
from lzlite.config import extend_base

main_config, create_config = extend_base("muzero", dict(), dict(policy=dict(type="rezero")))
