// Gomoku on a 9x9 board, freestyle rules: five OR MORE stones in a row win; a full board is a draw.
// See ../common/game.h for the concept.
//
// Layout: a 128-bit board, 9 rows of 10 bits; bit 10r + c is row r (top row 0), column c, and the
// tenth bit of each row (c = 9) is an always-empty sentinel. The sentinel stops horizontal and
// diagonal shifts from wrapping a line from one row's end into the next row's start, so the win test
// is plain shifts with no masks. Stored as two uint64 words per player (alignment 8, so numpy rows
// need no 16-byte alignment) and combined into unsigned __int128 for arithmetic.
// Action = row * 9 + col (the observation's row-major cell index).
#pragma once

#include <cstdint>

#include "common/game.h"

namespace lz {

struct Gomoku {
  using Bits = unsigned __int128;

  struct State {
    uint64_t lo[2];  // lo[p]: bits 0..63 of player p's stones (player 0 moves first)
    uint64_t hi[2];  // hi[p]: bits 64..127 (only bits up to 89 are ever used)
    uint8_t moves;   // plies played; the player to move is moves & 1
    int8_t winner;   // -1 while nobody has five, else the player who made them
  };

  static constexpr const char* kName = "gomoku";
  static constexpr int kSize = 9;
  static constexpr int kStride = kSize + 1;  // bits per row including the sentinel column
  static constexpr int kRows = kSize, kCols = kSize;
  static constexpr int kNumActions = kSize * kSize;
  static constexpr int kObsPlanes = 3;
  static constexpr int kMaxMoves = kNumActions;
  static constexpr int kWinLength = 5;

  static constexpr int bit(int a) { return (a / kSize) * kStride + a % kSize; }
  static Bits board(const State& s, int p) { return (static_cast<Bits>(s.hi[p]) << 64) | s.lo[p]; }
  static Bits occupied(const State& s) { return board(s, 0) | board(s, 1); }
  static bool test(const State& s, int p, int b) {
    return b < 64 ? (s.lo[p] >> b) & 1 : (s.hi[p] >> (b - 64)) & 1;
  }
  static bool taken(const State& s, int b) { return test(s, 0, b) || test(s, 1, b); }
  static void set(State& s, int p, int b) {
    if (b < 64) s.lo[p] |= 1ULL << b;
    else s.hi[p] |= 1ULL << (b - 64);
  }

  static void init(State& s) {
    s.lo[0] = s.lo[1] = s.hi[0] = s.hi[1] = 0;
    s.moves = 0;
    s.winner = -1;
  }
  static int to_play(const State& s) { return s.moves & 1; }
  static bool is_terminal(const State& s) { return s.winner >= 0 || s.moves >= kMaxMoves; }
  static int winner(const State& s) { return s.winner; }
  static int num_moves(const State& s) { return s.moves; }

  // Five in a row along d (1: horizontal, 10: vertical, 11 and 9: the diagonals). Any run of five or
  // more contains a run of exactly five, so this one test implements the freestyle rule.
  static bool five_along(Bits b, int d) {
    const Bits two = b & (b >> d);
    const Bits four = two & (two >> (2 * d));
    return (four & (b >> (4 * d))) != 0;
  }
  static bool has_five(Bits b) {
    return five_along(b, 1) || five_along(b, kStride) || five_along(b, kStride + 1) ||
           five_along(b, kStride - 1);
  }

  static bool is_legal(const State& s, int a) {
    return a >= 0 && a < kNumActions && !is_terminal(s) && !taken(s, bit(a));
  }
  static int legal_mask(const State& s, uint8_t* m) {
    if (is_terminal(s)) {
      for (int a = 0; a < kNumActions; ++a) m[a] = 0;
      return 0;
    }
    for (int a = 0; a < kNumActions; ++a) m[a] = !taken(s, bit(a));
    return kNumActions - s.moves;
  }
  static void play(State& s, int a) {
    const int p = to_play(s);
    set(s, p, bit(a));
    s.moves++;
    if (s.moves >= 2 * kWinLength - 1 && has_five(board(s, p))) s.winner = static_cast<int8_t>(p);
  }
  static int random_legal_action(const State& s, Rng& rng) {
    if (is_terminal(s)) return -1;
    // Rejection sampling is cheap while the board is mostly empty; a late board falls back to
    // picking the k-th empty cell so the cost stays bounded.
    for (int tries = 0; tries < 16; ++tries) {
      const int a = static_cast<int>(rng.below(kNumActions));
      if (!taken(s, bit(a))) return a;
    }
    uint32_t k = rng.below(static_cast<uint32_t>(kNumActions - s.moves));
    for (int a = 0; a < kNumActions; ++a)
      if (!taken(s, bit(a)) && k-- == 0) return a;
    return -1;  // unreachable: moves < kMaxMoves leaves an empty cell
  }
  static void observe(const State& s, float* out) {
    const int p = to_play(s);
    for (int a = 0; a < kNumActions; ++a) {
      const int b = bit(a);
      out[a] = static_cast<float>(test(s, p, b));
      out[kNumActions + a] = static_cast<float>(test(s, p ^ 1, b));
      out[2 * kNumActions + a] = static_cast<float>(p);
    }
  }
  static uint64_t hash(const State& s) {
    uint64_t h = splitmix64(s.lo[0]);
    h = splitmix64(h ^ s.hi[0]);
    h = splitmix64(h ^ s.lo[1] ^ 0xD6E8FEB86659FD93ULL);
    return splitmix64(h ^ s.hi[1]);
  }
  static int from_cells(State& s, const int8_t* cells) {
    init(s);
    for (int a = 0; a < kNumActions; ++a)
      if (cells[a] == 0 || cells[a] == 1) {
        set(s, cells[a], bit(a));
        s.moves++;
      }
    const int lines = (has_five(board(s, 0)) ? 1 : 0) | (has_five(board(s, 1)) ? 2 : 0);
    if (lines == 1 || lines == 2) s.winner = static_cast<int8_t>(lines - 1);
    return lines;
  }
};

}  // namespace lz
