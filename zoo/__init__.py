"""The game zoo: bitboard C++ cores, batched binding, envs and bots."""
