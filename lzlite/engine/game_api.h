// The batched game table: the one way native lzlite code (the self-play engine) reaches a game core.
//
// Header-only C++17, no Python headers. Every zoo game exports one GameTable (zoo/common/batch.h builds
// it from the game core with Batch<G>::table(); the zoo binding hands it to Python as a PyCapsule named
// "lzlite.GameTable"). The declaration lives here, in lzlite, so that the arrow points zoo -> lzlite:
// lzlite's engine knows this table and nothing of the zoo.
//
// States are rows of a caller-owned uint8 buffer, `state_bytes` bytes each, read and written with
// memcpy (any alignment). Functions that can meet bad input (step, expand) validate the whole batch
// before changing anything and return the index of the first bad element, or -1 when all is well.
// Nothing here allocates; every function is safe to call from several threads on disjoint rows.
#pragma once

#include <cstdint>

namespace lz {

struct GameTable {
  // --- constant description of the game ---
  const char* name;
  int num_actions, rows, cols, obs_planes, max_moves, state_bytes;

  // --- batched operations (n rows of `states`) ---
  // Reset rows; `indices` (nullable) lists which rows, else all n.
  void (*reset)(uint8_t* states, int64_t n, const int64_t* indices);
  // Returns the first i whose running game rejects actions[i], else -1 (then plays the batch).
  // A terminal row absorbs: unchanged, reward 0, done 1.
  int64_t (*step)(uint8_t* states, int64_t n, const int64_t* actions, float* rewards, uint8_t* done);
  void (*legal_mask)(const uint8_t* states, int64_t n, uint8_t* out);  // out [n, A]
  void (*observe)(const uint8_t* states, int64_t n, float* out);      // out [n, P, R, C]
  // Per-row scalars; every output pointer is nullable (skip that field).
  void (*query)(const uint8_t* states, int64_t n, int8_t* to_play, uint8_t* terminal, int8_t* winner,
                float* value, uint64_t* hash, int32_t* num_moves);
  // The search hook: states[child[b]] = states[parent[b]] then play actions[b]; writes the child's
  // observation, legal mask, terminal flag and terminal value. Returns -1, or the first b that is out
  // of range (error_kind 1) or illegal (error_kind 2).
  int64_t (*expand)(uint8_t* states, int64_t n_slots, int64_t B, const int32_t* parent,
                    const int32_t* child, const int32_t* actions, float* obs, uint8_t* legal,
                    uint8_t* terminal, float* value, int* error_kind);
  // n_games uniformly random games from the start; returns the total number of plies.
  uint64_t (*random_playouts)(int64_t n_games, uint64_t seed);
  // Leaf count after `depth` plies (terminal positions before that depth contribute 0).
  uint64_t (*perft)(const uint8_t* state, int depth);
  // Build a state from R*C cells (see game.h from_cells); returns the line bits.
  int (*from_cells)(uint8_t* state, const int8_t* cells);
};

}  // namespace lz
