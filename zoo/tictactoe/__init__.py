"""tictactoe: C++ core (tictactoe.h), env, pure-Python reference."""
