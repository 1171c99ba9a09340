// Batched loops over any game core G (see game.h), reached from Python and from the self-play engine
// through one table of function pointers per game (GameTable, declared in lzlite/engine/game_api.h).
// The indirect call happens once per batch; every per-element loop is a template instantiated for G,
// so the compiler inlines the core into it.
//
// States are rows of a caller-owned uint8 buffer, `state_bytes = sizeof(G::State)` bytes each. Rows are
// read and written with memcpy, which lets them sit at any alignment (numpy gives byte arrays no
// alignment promise) and compiles to plain loads and stores.
//
// Functions that can meet bad input (step, expand) validate the whole batch before changing anything
// and return the index of the first bad element, or -1 when all is well. Nothing here allocates.
#pragma once

#include <cstdint>
#include <cstring>

#include "common/game.h"
#include "../../lzlite/engine/game_api.h"  // relative: the zoo depends on lzlite, not the reverse

namespace lz {

template <class G>
struct Batch {
  using S = typename G::State;
  static constexpr int64_t kBytes = static_cast<int64_t>(sizeof(S));
  static constexpr int64_t kObs = static_cast<int64_t>(G::kObsPlanes) * G::kRows * G::kCols;

  static S load(const uint8_t* states, int64_t i) {
    S s;
    std::memcpy(&s, states + i * kBytes, sizeof(S));
    return s;
  }
  static void store(uint8_t* states, int64_t i, const S& s) {
    std::memcpy(states + i * kBytes, &s, sizeof(S));
  }

  static void reset(uint8_t* states, int64_t n, const int64_t* indices) {
    S s;
    std::memset(&s, 0, sizeof(S));  // padding bytes too, so equal positions are equal rows
    G::init(s);
    for (int64_t i = 0; i < n; ++i) store(states, indices ? indices[i] : i, s);
  }

  static int64_t step(uint8_t* states, int64_t n, const int64_t* actions, float* rewards,
                      uint8_t* done) {
    for (int64_t i = 0; i < n; ++i) {
      const S s = load(states, i);
      const int64_t a = actions[i];
      if (!G::is_terminal(s) && (a < 0 || a >= G::kNumActions || !G::is_legal(s, static_cast<int>(a))))
        return i;
    }
    for (int64_t i = 0; i < n; ++i) {
      S s = load(states, i);
      if (G::is_terminal(s)) {
        rewards[i] = 0.0f;
        done[i] = 1;
        continue;
      }
      const int mover = G::to_play(s);
      G::play(s, static_cast<int>(actions[i]));
      store(states, i, s);
      rewards[i] = G::winner(s) == mover ? 1.0f : 0.0f;
      done[i] = G::is_terminal(s);
    }
    return -1;
  }

  static void legal_mask(const uint8_t* states, int64_t n, uint8_t* out) {
    for (int64_t i = 0; i < n; ++i) G::legal_mask(load(states, i), out + i * G::kNumActions);
  }

  static void observe(const uint8_t* states, int64_t n, float* out) {
    for (int64_t i = 0; i < n; ++i) G::observe(load(states, i), out + i * kObs);
  }

  static void query(const uint8_t* states, int64_t n, int8_t* to_play, uint8_t* terminal,
                    int8_t* winner, float* value, uint64_t* hash, int32_t* num_moves) {
    for (int64_t i = 0; i < n; ++i) {
      const S s = load(states, i);
      if (to_play) to_play[i] = static_cast<int8_t>(G::to_play(s));
      if (terminal) terminal[i] = G::is_terminal(s);
      if (winner) winner[i] = static_cast<int8_t>(G::winner(s));
      if (value) value[i] = G::is_terminal(s) ? terminal_value<G>(s) : 0.0f;
      if (hash) hash[i] = G::hash(s);
      if (num_moves) num_moves[i] = G::num_moves(s);
    }
  }

  static int64_t expand(uint8_t* states, int64_t n_slots, int64_t B, const int32_t* parent,
                        const int32_t* child, const int32_t* actions, float* obs, uint8_t* legal,
                        uint8_t* terminal, float* value, int* error_kind) {
    // Validate against the states as they are before the batch: nothing changes on a bad batch
    // unless a later parent is an earlier child (then the second pass below still stops at it).
    for (int64_t b = 0; b < B; ++b) {
      if (parent[b] < 0 || parent[b] >= n_slots || child[b] < 0 || child[b] >= n_slots) {
        *error_kind = 1;
        return b;
      }
    }
    for (int64_t b = 0; b < B; ++b) {
      if (!G::is_legal(load(states, parent[b]), actions[b])) {
        *error_kind = 2;
        return b;
      }
    }
    for (int64_t b = 0; b < B; ++b) {
      S s = load(states, parent[b]);
      if (!G::is_legal(s, actions[b])) {
        *error_kind = 2;
        return b;
      }
      G::play(s, actions[b]);
      store(states, child[b], s);
      G::observe(s, obs + b * kObs);
      G::legal_mask(s, legal + b * G::kNumActions);
      terminal[b] = G::is_terminal(s);
      value[b] = G::is_terminal(s) ? terminal_value<G>(s) : 0.0f;
    }
    *error_kind = 0;
    return -1;
  }

  static uint64_t random_playouts(int64_t n_games, uint64_t seed) {
    Rng rng(seed);
    uint64_t plies = 0;
    for (int64_t g = 0; g < n_games; ++g) {
      S s;
      G::init(s);
      while (!G::is_terminal(s)) {
        G::play(s, G::random_legal_action(s, rng));
        ++plies;
      }
    }
    return plies;
  }

  static uint64_t perft_rec(const S& s, int depth) {
    if (depth == 0) return 1;
    if (G::is_terminal(s)) return 0;
    uint64_t total = 0;
    for (int a = 0; a < G::kNumActions; ++a) {
      if (!G::is_legal(s, a)) continue;
      if (depth == 1) {
        ++total;  // bulk count: a legal move from a running position is one leaf
        continue;
      }
      S t = s;
      G::play(t, a);
      total += perft_rec(t, depth - 1);
    }
    return total;
  }
  static uint64_t perft(const uint8_t* state, int depth) { return perft_rec(load(state, 0), depth); }

  static int from_cells(uint8_t* state, const int8_t* cells) {
    S s;
    std::memset(&s, 0, sizeof(S));
    const int lines = G::from_cells(s, cells);
    store(state, 0, s);
    return lines;
  }

  static GameTable table() {
    return GameTable{G::kName, G::kNumActions, G::kRows, G::kCols, G::kObsPlanes, G::kMaxMoves,
                     static_cast<int>(sizeof(S)), &reset, &step, &legal_mask, &observe, &query,
                     &expand, &random_playouts, &perft, &from_cells};
  }
};

}  // namespace lz
