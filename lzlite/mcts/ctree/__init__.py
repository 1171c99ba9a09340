"""The C++ search tree (lzlite/mcts/ctree/tree.h) behind one Cython binding.

`Tree` has the same constructor, methods and semantics as `lzlite.mcts.ptree.Tree` (the spec); a
differential test (tests/mcts/test_differential.py) holds the two equal. Build the extension with
`LZLITE_EXTS=lzlite.mcts.ctree._ctree python setup.py build_ext --inplace -q`.
"""
from lzlite.mcts.ctree._ctree import Tree, considered_visit_sequence

__all__ = ["Tree", "considered_visit_sequence"]
