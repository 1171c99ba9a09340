// The game-core concept every zoo game implements (header-only, no Python headers).
//
// A game core is a struct G with only static members:
//
//   struct State { ... };                 // trivially copyable POD, fixed size; copying it clones a game
//   static constexpr const char* kName;   // registry name, e.g. "tictactoe"
//   static constexpr int kNumActions;     // size of the full action space A (actions are 0..A-1)
//   static constexpr int kRows, kCols;    // board shape used by observations and text rendering
//   static constexpr int kObsPlanes;      // observation planes P; observe() writes P*kRows*kCols floats
//   static constexpr int kMaxMoves;       // upper bound on plies in one game
//
//   static void init(State& s);                         // the initial position
//   static int to_play(const State& s);                 // 0: first player to move, 1: second
//   static bool is_legal(const State& s, int a);        // false for out-of-range a and terminal states
//   static int legal_mask(const State& s, uint8_t* m);  // writes A bytes (1 = legal); returns the count;
//                                                       // all zero once terminal
//   static void play(State& s, int a);                  // precondition: is_legal(s, a)
//   static bool is_terminal(const State& s);            // a win, or a draw (no legal move left)
//   static int winner(const State& s);                  // 0 or 1 when someone has won, else -1
//   static void observe(const State& s, float* out);    // planes from the view of the player to move:
//                                                       //   plane 0: own stones, plane 1: opponent stones,
//                                                       //   plane 2: constant to_play (0.0 or 1.0)
//   static uint64_t hash(const State& s);               // position hash (equal positions, equal hash)
//   static int num_moves(const State& s);               // plies played so far
//   static int random_legal_action(const State& s, Rng& rng);
//                                                       // a uniformly random legal action (-1 when
//                                                       // terminal) without building a mask: used by
//                                                       // playouts and the random bot
//   static int from_cells(State& s, const int8_t* cells);
//                                                       // build a position from kRows*kCols cells
//                                                       // (row-major, top row first, 0/1 = stone of
//                                                       // player 0/1, -1 = empty); num_moves = stone
//                                                       // count, winner = the player with a line.
//                                                       // Returns a bit set of who has a line (bit p
//                                                       // for player p) so the caller can reject
//                                                       // inconsistent boards; used by text parsing
//
// Sign convention (shared with the search): a value is from the view of the player to move. At a
// terminal state the player to move has lost (-1) if the previous mover won, else it is a draw (0):
// see terminal_value() below.
#pragma once

#include <cstdint>
#include <cstring>

namespace lz {

// Value of a terminal state for the player to move: -1 (the opponent just won) or 0 (draw).
template <class G>
inline float terminal_value(const typename G::State& s) {
  return G::winner(s) >= 0 ? -1.0f : 0.0f;
}

// splitmix64: a small, high-quality 64-bit mixer used for hashing and seeding.
inline uint64_t splitmix64(uint64_t x) {
  x += 0x9E3779B97F4A7C15ULL;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
  return x ^ (x >> 31);
}

// A tiny, fast, seedable generator (xorshift64*) for playouts and bots. Never seeded with a constant
// by library code: callers pass the seed.
struct Rng {
  uint64_t state;
  explicit Rng(uint64_t seed) : state(splitmix64(seed) | 1ULL) {}
  inline uint64_t next() {
    state ^= state >> 12;
    state ^= state << 25;
    state ^= state >> 27;
    return state * 0x2545F4914F6CDD1DULL;
  }
  // Uniform integer in [0, n) (Lemire's multiply-shift; bias is negligible for small n).
  inline uint32_t below(uint32_t n) {
    return static_cast<uint32_t>((static_cast<unsigned __int128>(next() >> 32) * n) >> 32);
  }
};

}  // namespace lz
