"""MuZero base config: zoo/<game>/muzero_config.py extends it (lzlite.config.extend_base).

MuZero's hyperparameters are the defaults of the components that read them (the policy, its model, the
collector, replay buffer, evaluator and learner: see their ``default_config()``); a base config holds only
an algorithm's deviations from them, and MuZero has none.
"""
main_config = dict(policy=dict())
create_config = dict(policy=dict(type="muzero"))
