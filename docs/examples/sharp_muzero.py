"""A new algorithm in a user's own module: MuZero trained on sharpened visit distributions.

MuZero's policy target is the root visit distribution. This variant raises the visit counts to the
power 1/T before normalising (T < 1 sharpens), a common trick when few simulations make the visit
distribution too flat. Everything else (search, collector, buffer, learner, loop) is MuZero's.
"""
import numpy as np
from easydict import EasyDict

from lzlite.policy.muzero import MuZeroPolicy
from lzlite.registry import POLICY_REGISTRY


@POLICY_REGISTRY.register("sharp_muzero")
class SharpMuZeroPolicy(MuZeroPolicy):
    """MuZero whose policy target is visits ** (1 / target_temperature), normalised."""

    @classmethod
    def default_config(cls) -> EasyDict:
        cfg = super().default_config()
        cfg.target_temperature = 0.5  # policy target = visits ** (1 / T), normalised; T < 1 sharpens
        return cfg

    def _hook_policy_target(self, out) -> np.ndarray:
        sharp = out.visit_counts.astype(np.float64) ** (1.0 / self.cfg.target_temperature)
        return (sharp / sharp.sum(axis=1, keepdims=True)).astype(np.float32)
