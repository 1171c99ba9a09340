// Exact (strong) Connect Four solver: bitboard negamax with alpha-beta, a fixed-size transposition
// table, threat-based move ordering and an iterative null-window search on the score.
//
// Score of a position, from the view of the player to move (the project's sign convention):
//   0 for a draw with best play; +k when the mover wins, where k = 22 - (number of stones the mover
//   will have on the board after its winning move), so a win with the mover's 4th stone scores 18 and
//   one with its 21st (last) stone scores 1; -k when the mover loses, k counted for the opponent.
//   Faster wins score higher: per-move scores rank optimal moves by speed.
//
// Internal layout (independent of the game core's): 7 columns of 7 bits, bit col*7 + row with row 0 at
// the bottom; the 7th bit of a column is a sentinel that keeps shifted lines from wrapping. A
// position is (current: the mover's stones, mask: all stones); current + mask is a unique key.
// It is the same layout as connect4.h's, so converting a game state is free (see from_state).
#pragma once

#include <cstdint>
#include <cstring>
#include <vector>

#include "common/game.h"
#include "connect4/connect4.h"

namespace lz {
namespace c4 {

constexpr int kWidth = 7, kHeight = 6, kCells = kWidth * kHeight;

constexpr uint64_t bottom_row() {
  uint64_t m = 0;
  for (int c = 0; c < kWidth; ++c) m |= 1ULL << (c * (kHeight + 1));
  return m;
}
constexpr uint64_t kBottom = bottom_row();
constexpr uint64_t kBoard = kBottom * ((1ULL << kHeight) - 1);
constexpr uint64_t top_bit(int c) { return 1ULL << (kHeight - 1 + c * (kHeight + 1)); }
constexpr uint64_t bottom_bit(int c) { return 1ULL << (c * (kHeight + 1)); }
constexpr uint64_t column_bits(int c) { return ((1ULL << kHeight) - 1) << (c * (kHeight + 1)); }

struct Position {
  uint64_t current = 0;  // stones of the player to move
  uint64_t mask = 0;     // all stones
  int moves = 0;         // stones on the board

  bool can_play(int c) const { return (mask & top_bit(c)) == 0; }
  void play_bits(uint64_t move) {  // move: the single landing bit
    current ^= mask;
    mask |= move;
    ++moves;
  }
  void play(int c) { play_bits((mask + bottom_bit(c)) & column_bits(c)); }
  uint64_t key() const { return current + mask; }
  uint64_t possible() const { return (mask + kBottom) & kBoard; }

  // Empty cells (reachable or not) that would complete four for the stones in `pos`.
  static uint64_t winning_cells(uint64_t pos, uint64_t mask) {
    // vertical: three stacked below
    uint64_t r = (pos << 1) & (pos << 2) & (pos << 3);
    for (int shift : {kHeight + 1, kHeight, kHeight + 2}) {  // horizontal, two diagonals
      uint64_t p = (pos << shift) & (pos << 2 * shift);
      r |= p & (pos << 3 * shift);
      r |= p & (pos >> shift);
      p = (pos >> shift) & (pos >> 2 * shift);
      r |= p & (pos << shift);
      r |= p & (pos >> 3 * shift);
    }
    return r & (kBoard ^ mask);
  }
  uint64_t my_wins() const { return winning_cells(current, mask); }
  uint64_t opp_wins() const { return winning_cells(current ^ mask, mask); }
  bool can_win_next() const { return (my_wins() & possible()) != 0; }
  bool is_winning_move(int c) const { return (my_wins() & possible() & column_bits(c)) != 0; }
  // Did the player who just moved complete four?
  bool last_mover_won() const {
    const uint64_t p = current ^ mask;
    for (int shift : {1, kHeight + 1, kHeight, kHeight + 2}) {
      const uint64_t m = p & (p >> shift);
      if (m & (m >> 2 * shift)) return true;
    }
    return false;
  }

  // Moves that do not hand the opponent an immediate win (0 when every move loses at once).
  // Precondition: the mover cannot win at once.
  uint64_t non_losing_moves() const {
    uint64_t moves_mask = possible();
    const uint64_t opp = opp_wins();
    const uint64_t forced = moves_mask & opp;
    if (forced) {
      if (forced & (forced - 1)) return 0;  // two threats: cannot block both
      moves_mask = forced;
    }
    return moves_mask & ~(opp >> 1);  // never play just below an opponent's winning cell
  }

  // Build from a move string of 1-based column digits, e.g. "4453"; false if illegal or a game
  // already won along the way.
  bool from_moves(const char* seq) {
    *this = Position();
    for (const char* p = seq; *p; ++p) {
      const int c = *p - '1';
      if (c < 0 || c >= kWidth || !can_play(c) || is_winning_move(c)) return false;
      play(c);
    }
    return true;
  }
};

inline int popcount64(uint64_t x) { return __builtin_popcountll(x); }

// Transposition table: a fixed array of packed entries (key << 8 | bound byte), no allocation after
// construction. The byte holds the score (offset to be positive) and whether it is a lower or upper
// bound. Keys fit in 49 bits, so a full key is stored and a hit is never a false positive.
class TranspositionTable {
 public:
  explicit TranspositionTable(int log2_size) : entries_(size_t{1} << log2_size, 0) {}
  void clear() { std::fill(entries_.begin(), entries_.end(), 0); }
  void put(uint64_t key, int score, bool lower) {
    entries_[index(key)] = (key << 8) | static_cast<uint64_t>((score + kScoreOffset) | (lower ? 0x80 : 0));
  }
  // Returns 0 on a miss, else the byte; decode with score_of / is_lower.
  int get(uint64_t key) const {
    const uint64_t e = entries_[index(key)];
    return (e >> 8) == key ? static_cast<int>(e & 0xFF) : 0;
  }
  static int score_of(int byte) { return (byte & 0x7F) - kScoreOffset; }
  static bool is_lower(int byte) { return (byte & 0x80) != 0; }
  size_t bytes() const { return entries_.size() * sizeof(uint64_t); }

 private:
  static constexpr int kScoreOffset = 32;  // bounds lie in [-21, 21]; the byte is never 0
  size_t index(uint64_t key) const { return splitmix64(key) & (entries_.size() - 1); }
  std::vector<uint64_t> entries_;
};

class Solver {
 public:
  // log2_tt_entries: transposition-table size (8 bytes per entry; 22 -> 32 MiB).
  explicit Solver(int log2_tt_entries = 22) : tt_(log2_tt_entries) {
    for (int i = 0; i < kWidth; ++i) order_[i] = kWidth / 2 + (1 - 2 * (i % 2)) * (i + 1) / 2;
  }

  int64_t nodes() const { return nodes_; }
  void reset() {
    tt_.clear();
    nodes_ = 0;
  }

  // Exact score of a non-terminal position (see the header comment). weak: only the sign
  // (-1 / 0 / +1) is computed, which is much faster.
  int solve(const Position& p, bool weak = false) {
    if (p.can_win_next()) return weak ? 1 : (kCells + 1 - p.moves) / 2;
    int lo = -(kCells - p.moves) / 2, hi = (kCells + 1 - p.moves) / 2;
    if (weak) lo = -1, hi = 1;
    // Iterative null-window search: each probe asks "is the score > med?", biased towards 0 first
    // because small windows near the true value prune best.
    while (lo < hi) {
      int med = lo + (hi - lo) / 2;
      if (med <= 0 && lo / 2 < med) med = lo / 2;
      else if (med >= 0 && hi / 2 > med) med = hi / 2;
      const int r = negamax(p, med, med + 1);
      if (r <= med) hi = r;
      else lo = r;
    }
    return lo;
  }

  // Score of each column after playing it, from the view of the player to move now: scores[c] is
  // the exact score when c is legal, and valid[c] = 0 for full columns. A move that ends the game
  // in a draw scores 0. Precondition: the position is not terminal.
  void move_scores(const Position& p, int* scores, uint8_t* valid, bool weak = false) {
    for (int c = 0; c < kWidth; ++c) {
      valid[c] = p.can_play(c);
      scores[c] = 0;
      if (!valid[c]) continue;
      if (p.is_winning_move(c)) {
        scores[c] = weak ? 1 : (kCells + 1 - p.moves) / 2;
        continue;
      }
      Position q = p;
      q.play(c);
      scores[c] = q.moves == kCells ? 0 : -solve(q, weak);
    }
  }

 private:
  // Negamax in the window (alpha, beta), fail-soft within the score bounds. Precondition: the
  // player to move cannot win at once (callers and the recursion check it).
  int negamax(const Position& p, int alpha, int beta) {
    ++nodes_;
    const uint64_t next = p.non_losing_moves();
    if (next == 0) return -(kCells - p.moves) / 2;  // every move lets the opponent win at once
    if (p.moves >= kCells - 2) return 0;            // the last two stones cannot make four

    int lo = -(kCells - 2 - p.moves) / 2;  // the opponent cannot win on its next move
    if (alpha < lo) {
      alpha = lo;
      if (alpha >= beta) return alpha;
    }
    int hi = (kCells - 1 - p.moves) / 2;  // we cannot win on this move
    if (const int e = tt_.get(p.key())) {
      const int v = TranspositionTable::score_of(e);
      if (TranspositionTable::is_lower(e)) {
        if (v > lo) lo = v;
        if (alpha < lo) {
          alpha = lo;
          if (alpha >= beta) return alpha;
        }
      } else {
        if (v < hi) hi = v;
      }
    }
    if (beta > hi) {
      beta = hi;
      if (alpha >= beta) return beta;
    }

    // Order moves by how many winning cells they create for us (threats), ties centre-first.
    uint64_t moves[kWidth];
    int keys[kWidth], n = 0;
    for (int i = 0; i < kWidth; ++i) {
      const uint64_t m = next & column_bits(order_[i]);
      if (!m) continue;
      const int k = popcount64(Position::winning_cells(p.current | m, p.mask));
      int j = n++;
      for (; j > 0 && keys[j - 1] < k; --j) moves[j] = moves[j - 1], keys[j] = keys[j - 1];
      moves[j] = m, keys[j] = k;
    }

    for (int i = 0; i < n; ++i) {
      Position q = p;
      q.play_bits(moves[i]);
      const int v = -negamax(q, -beta, -alpha);
      if (v >= beta) {
        tt_.put(p.key(), v, /*lower=*/true);
        return v;
      }
      if (v > alpha) alpha = v;
    }
    tt_.put(p.key(), alpha, /*lower=*/false);
    return alpha;
  }

  TranspositionTable tt_;
  int order_[kWidth];
  int64_t nodes_ = 0;
};

// Position from the game core's state. Connect4 uses this file's bit layout (bit 7c + r, r from the
// bottom, sentinel row 6), so the conversion is two bitboard operations.
inline Position from_state(const Connect4::State& s) {
  static_assert(Connect4::kHeight == kHeight + 1 && Connect4::kCols == kWidth, "layouts must agree");
  Position p;
  p.mask = s.stones[0] | s.stones[1];
  p.current = s.stones[Connect4::to_play(s)];
  p.moves = s.moves;
  return p;
}

// Same, from a raw state row (sizeof(Connect4::State) bytes, as the batched binding stores them).
inline Position from_bytes(const uint8_t* row) {
  Connect4::State s;
  std::memcpy(&s, row, sizeof(s));
  return from_state(s);
}

// Game over in this row (a four on the board or a full board)? The solver needs a live position.
inline bool row_is_terminal(const uint8_t* row) {
  Connect4::State s;
  std::memcpy(&s, row, sizeof(s));
  return Connect4::is_terminal(s);
}

}  // namespace c4
}  // namespace lz
