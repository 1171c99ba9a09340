"""CartPole (gymnasium, optional dependency): a single-player env with rewards and discounting."""
