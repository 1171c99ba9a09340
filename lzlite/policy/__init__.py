"""Policies: the template (base.Policy) and one small subclass per algorithm."""
from lzlite.policy.alphazero import AlphaZeroPolicy, GumbelAlphaZeroPolicy
from lzlite.policy.base import Policy
from lzlite.policy.muzero import GumbelMuZeroPolicy, MuZeroPolicy
from lzlite.policy.rezero import ReZeroPolicy
from lzlite.policy.unizero import UniZeroPolicy

__all__ = ["Policy", "AlphaZeroPolicy", "GumbelAlphaZeroPolicy", "MuZeroPolicy", "GumbelMuZeroPolicy", "ReZeroPolicy",
           "UniZeroPolicy"]
