"""CartPole default experiment: MuZero (see muzero_config.py).

    pip install gymnasium && python -m lzlite.entry --cfg zoo/cartpole/config.py
"""
from zoo.cartpole.muzero_config import create_config, main_config  # noqa: F401
