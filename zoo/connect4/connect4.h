// Connect Four (7 columns x 6 rows) as a 64-bit bitboard core (see ../common/game.h).
//
// Layout: the classic 7x7 one. Column c owns bits 7c .. 7c+6; bit 7c+r is row r counted from the
// BOTTOM (r = 0..5) and bit 7c+6 is an always-empty sentinel row. The sentinel stops every shift
// used by the win test from carrying a line from the top of one column into the bottom of the next,
// so the test is four shift-and-AND pairs with no masks. Action = column 0..6. Observations and text
// are drawn top row first (observation row i is bitboard row 5 - i).
#pragma once

#include <cstdint>

#include "common/game.h"

namespace lz {

struct Connect4 {
  struct State {
    uint64_t stones[2];  // stones[p]: cells held by player p (0 moves first), layout above
    uint8_t moves;       // plies played; the player to move is moves & 1
    int8_t winner;       // -1 while nobody has four in a row, else the player who made it
  };

  static constexpr const char* kName = "connect4";
  static constexpr int kRows = 6, kCols = 7;
  static constexpr int kHeight = 7;  // bits per column including the sentinel
  static constexpr int kNumActions = kCols;
  static constexpr int kObsPlanes = 3;
  static constexpr int kMaxMoves = kRows * kCols;
  static constexpr int kWinLength = 4;
  // One bit per column at its top playable row (row 5): a column is full when that bit is taken.
  static constexpr uint64_t kTopRow = 0x20ULL * ((1ULL << 0) | (1ULL << 7) | (1ULL << 14) |
                                                 (1ULL << 21) | (1ULL << 28) | (1ULL << 35) |
                                                 (1ULL << 42));

  static constexpr int bit(int col, int row_from_bottom) { return col * kHeight + row_from_bottom; }
  static constexpr uint64_t column_bits(int c) { return 0x3FULL << (c * kHeight); }

  static void init(State& s) {
    s.stones[0] = s.stones[1] = 0;
    s.moves = 0;
    s.winner = -1;
  }
  static int to_play(const State& s) { return s.moves & 1; }
  static bool is_terminal(const State& s) { return s.winner >= 0 || s.moves >= kMaxMoves; }
  static int winner(const State& s) { return s.winner; }
  static int num_moves(const State& s) { return s.moves; }
  static uint64_t occupied(const State& s) { return s.stones[0] | s.stones[1]; }

  // Four in a row along direction d (1: vertical, 7: horizontal, 6 and 8: the diagonals).
  static bool has_four(uint64_t b) {
    uint64_t m = b & (b >> 1);
    if (m & (m >> 2)) return true;
    m = b & (b >> 7);
    if (m & (m >> 14)) return true;
    m = b & (b >> 6);
    if (m & (m >> 12)) return true;
    m = b & (b >> 8);
    return (m & (m >> 16)) != 0;
  }

  static bool is_legal(const State& s, int a) {
    return a >= 0 && a < kNumActions && !is_terminal(s) && !((occupied(s) >> bit(a, 5)) & 1);
  }
  static int legal_mask(const State& s, uint8_t* m) {
    const uint64_t free_top = is_terminal(s) ? 0 : (kTopRow & ~occupied(s));
    for (int c = 0; c < kCols; ++c) m[c] = (free_top >> bit(c, 5)) & 1;
    return __builtin_popcountll(free_top);
  }
  static void play(State& s, int a) {
    const int p = to_play(s);
    // Adding the column's bottom bit to the occupied cells carries into the lowest empty cell.
    const uint64_t move = (occupied(s) + (1ULL << bit(a, 0))) & column_bits(a);
    s.stones[p] |= move;
    s.moves++;
    if (has_four(s.stones[p])) s.winner = static_cast<int8_t>(p);
  }
  static int random_legal_action(const State& s, Rng& rng) {
    if (is_terminal(s)) return -1;
    const uint64_t occ = occupied(s);
    // Rejection sampling: at least one column is open, and usually all seven are.
    for (;;) {
      const int c = static_cast<int>(rng.below(kCols));
      if (!((occ >> bit(c, 5)) & 1)) return c;
    }
  }
  static void observe(const State& s, float* out) {
    const int p = to_play(s);
    constexpr int kArea = kRows * kCols;
    for (int r = 0; r < kRows; ++r)
      for (int c = 0; c < kCols; ++c) {
        const int i = r * kCols + c, b = bit(c, kRows - 1 - r);
        out[i] = static_cast<float>((s.stones[p] >> b) & 1);
        out[kArea + i] = static_cast<float>((s.stones[p ^ 1] >> b) & 1);
        out[2 * kArea + i] = static_cast<float>(p);
      }
  }
  static uint64_t hash(const State& s) {
    return splitmix64(s.stones[0] ^ splitmix64(s.stones[1] + 0x632BE59BD9B4E019ULL));
  }
  // Gravity is the caller's check (text parsing validates it before calling this).
  static int from_cells(State& s, const int8_t* cells) {
    init(s);
    for (int r = 0; r < kRows; ++r)
      for (int c = 0; c < kCols; ++c) {
        const int8_t v = cells[r * kCols + c];
        if (v == 0 || v == 1) {
          s.stones[v] |= 1ULL << bit(c, kRows - 1 - r);
          s.moves++;
        }
      }
    const int lines = (has_four(s.stones[0]) ? 1 : 0) | (has_four(s.stones[1]) ? 2 : 0);
    if (lines == 1 || lines == 2) s.winner = static_cast<int8_t>(lines - 1);
    return lines;
  }
};

}  // namespace lz
