"""The pure-numpy search tree (the spec of the C++ tree): `Tree` and the Gumbel helpers."""
from lzlite.mcts.ptree.gumbel import completed_q_sigma, considered_visit_sequence, masked_softmax
from lzlite.mcts.ptree.tree import Tree

__all__ = ["Tree", "considered_visit_sequence", "completed_q_sigma", "masked_softmax"]
