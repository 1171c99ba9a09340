// The binding table: every zoo game the Python binding (zoo/_zoo.pyx) can make. Adding a game means
// including its core here and adding one Batch<G>::table() line (see docs/adding_a_game.md).
#pragma once

#include <cstring>

#include "common/batch.h"
#include "connect4/connect4.h"
#include "gomoku/gomoku.h"
#include "tictactoe/tictactoe.h"

namespace lz {

inline const GameTable* game_tables(int* count) {
  static const GameTable kTables[] = {
      Batch<TicTacToe>::table(),
      Batch<Connect4>::table(),
      Batch<Gomoku>::table(),
  };
  *count = static_cast<int>(sizeof(kTables) / sizeof(kTables[0]));
  return kTables;
}

}  // namespace lz
