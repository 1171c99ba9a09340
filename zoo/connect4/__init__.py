"""connect4: C++ core (connect4.h), env, pure-Python reference."""
