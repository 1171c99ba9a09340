"""gomoku: C++ core (gomoku.h), env, pure-Python reference."""
