// Tic-tac-toe as a bitboard core (see ../common/game.h for the concept).
// Cells are numbered row-major 0..8 (action = cell); bit i of a player's mask is cell i.
#pragma once

#include <cstdint>

#include "common/game.h"

namespace lz {

struct TicTacToe {
  struct State {
    uint16_t stones[2];  // stones[p]: cells held by player p (0 moves first)
    uint8_t moves;       // plies played; the player to move is moves & 1
    int8_t winner;       // -1 while nobody has a line, else the player who completed one
  };

  static constexpr const char* kName = "tictactoe";
  static constexpr int kRows = 3, kCols = 3;
  static constexpr int kNumActions = 9;
  static constexpr int kObsPlanes = 3;
  static constexpr int kMaxMoves = 9;
  static constexpr int kWinLength = 3;
  static constexpr uint16_t kFull = 0x1FF;

  static void init(State& s) {
    s.stones[0] = s.stones[1] = 0;
    s.moves = 0;
    s.winner = -1;
  }
  static int to_play(const State& s) { return s.moves & 1; }
  static bool is_terminal(const State& s) { return s.winner >= 0 || s.moves >= kMaxMoves; }
  static int winner(const State& s) { return s.winner; }
  static int num_moves(const State& s) { return s.moves; }

  static bool has_line(uint16_t b) {
    // rows, columns, both diagonals
    static constexpr uint16_t kLines[8] = {0x007, 0x038, 0x1C0, 0x049, 0x092, 0x124, 0x111, 0x054};
    for (uint16_t line : kLines)
      if ((b & line) == line) return true;
    return false;
  }
  static uint16_t empty(const State& s) { return kFull & ~(s.stones[0] | s.stones[1]); }

  static bool is_legal(const State& s, int a) {
    return a >= 0 && a < kNumActions && !is_terminal(s) && ((empty(s) >> a) & 1);
  }
  static int legal_mask(const State& s, uint8_t* m) {
    const uint16_t e = is_terminal(s) ? 0 : empty(s);
    for (int a = 0; a < kNumActions; ++a) m[a] = (e >> a) & 1;
    return __builtin_popcount(e);
  }
  static void play(State& s, int a) {
    const int p = to_play(s);
    s.stones[p] |= static_cast<uint16_t>(1u << a);
    s.moves++;
    if (has_line(s.stones[p])) s.winner = static_cast<int8_t>(p);
  }
  static int random_legal_action(const State& s, Rng& rng) {
    if (is_terminal(s)) return -1;
    uint32_t e = empty(s);
    // Drop the k lowest set bits, then the lowest remaining one is the k-th empty cell.
    for (uint32_t k = rng.below(static_cast<uint32_t>(__builtin_popcount(e))); k; --k) e &= e - 1;
    return __builtin_ctz(e);
  }
  static void observe(const State& s, float* out) {
    const int p = to_play(s);
    for (int i = 0; i < 9; ++i) {
      out[i] = static_cast<float>((s.stones[p] >> i) & 1);
      out[9 + i] = static_cast<float>((s.stones[p ^ 1] >> i) & 1);
      out[18 + i] = static_cast<float>(p);
    }
  }
  static uint64_t hash(const State& s) {
    return splitmix64((static_cast<uint64_t>(s.stones[0]) << 16) | s.stones[1]);
  }
  static int from_cells(State& s, const int8_t* cells) {
    init(s);
    for (int i = 0; i < 9; ++i)
      if (cells[i] == 0 || cells[i] == 1) {
        s.stones[cells[i]] |= static_cast<uint16_t>(1u << i);
        s.moves++;
      }
    const int lines = (has_line(s.stones[0]) ? 1 : 0) | (has_line(s.stones[1]) ? 2 : 0);
    if (lines == 1 || lines == 2) s.winner = static_cast<int8_t>(lines - 1);
    return lines;
  }
};

}  // namespace lz
