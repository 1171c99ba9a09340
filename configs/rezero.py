"""ReZero base config: MuZero's (configs/muzero.py) plus the whole-buffer reanalyze schedule.

zoo/<game>/rezero_config.py extends it (lzlite.config.extend_base).
"""
from lzlite.config import extend_base

main_config, create_config = extend_base(
    "muzero",
    dict(
        policy=dict(
            reanalyze_interval=100,  # learner steps between whole-buffer reanalyzes (after a collect)
            reanalyze_batch_size=256,  # roots per batched reanalyze search
            use_backward_view=True,  # ReZero's reuse of the next position's search value
            reanalyze_policy_targets=True,  # overwrite policy targets as well as root values
            reanalyze_ratio=0.0,  # no per-minibatch reanalyze: the whole buffer is refreshed instead
        ),
    ),
    dict(policy=dict(type="rezero")),
)
