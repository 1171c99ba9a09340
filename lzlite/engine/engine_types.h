// The self-play engine's plain types (header-only C++17, no Python headers): its configuration, the
// inference callback's batch, the telemetry counters and a game's records. engine.h holds the engine.
#pragma once

#include <cstdint>
#include <vector>

#include "../mcts/ctree/tree.h"

namespace lzlite {
namespace engine {

// ================================================================================================
// Configuration (constant for the engine's life).
// ================================================================================================
struct SearchSpec {
  mcts::TreeConfig tree;             // batch_size is forced to 1: one root per slot.
  double root_dirichlet_alpha = 0.3; // PUCT root noise Dirichlet(alpha) over legal actions.
  double root_noise_weight = 0.25;   // PUCT root prior = (1 - w) * prior + w * noise.
  double gumbel_scale = 1.0;         // Gumbel root noise = gumbel_scale * Gumbel(0, 1).
  double temperature = 1.0;          // PUCT action sampling visits^(1/T); 0: most visited.
  int32_t temperature_moves = -1;    // >= 0: plies from this one on play the best move (greedy root).
  int32_t random_opening_plies = 0;  // each game starts after U{0..k} uniformly random unrecorded moves.
};

struct EngineConfig {
  SearchSpec search;
  int32_t n_games = 1;         // Slots.
  int32_t n_threads = 1;       // Threads advancing slots, the scheduler's included (n_threads - 1 workers).
  int32_t batch_size = 1;      // Rows per arena (a full fire).
  int64_t cache_size = 0;      // Inference cache entries (rounded up to a power of two, >= 4); 0: no cache.
  bool latent_model = false;   // the tree searches a learned model (rows name latent slots), not the game
};

// The inference callback: rows obs [n, obs_dim] of route `route` -> value [n] (view of the player to
// move) and logits [n, A]. Returns 0, or non-zero to abort the window (the binding keeps the error).
//
// A latent-model engine (EngineConfig::latent_model, the MuZero family) keeps no latent: the caller does,
// indexed by latent slot `episode slot * (S + 1) + tree node`. Its rows are of two kinds: initial (an
// observation row and the latent slot to store the root's latent at) and recurrent (parent latent slot,
// action, child latent slot: the dynamics' input and where its output goes), fired separately.
enum class RowKind : int32_t { kObservation = 0, kRecurrent = 1 };

struct FireBatch {
  int32_t player = 0;          // the route's player (0 with one route)
  RowKind kind = RowKind::kObservation;
  int64_t n = 0;               // rows
  const float* obs;            // [n, obs_dim] (kObservation)
  const int32_t* latent;       // [n] latent slot of each root (kObservation, latent model only)
  const int32_t* parent;       // [n] (kRecurrent)
  const int32_t* action;       // [n] (kRecurrent)
  const int32_t* child;        // [n] (kRecurrent)
  float* value;                // out [n], the player to move's view
  float* reward;               // out [n] (kRecurrent): reward of the move into the child, mover's view
  float* logits;               // out [n, A]
};
using InferFn = int (*)(void* ctx, const FireBatch& batch);

// Counters since the engine was made (Telemetry::fires etc.); read with telemetry().
struct Telemetry {
  int64_t fires = 0;            // infer calls.
  int64_t rows = 0;             // rows sent to infer.
  int64_t full_fires = 0;       // fires of a full arena.
  int64_t stall_fires = 0;      // partial fires because the route stalled.
  int64_t quiescence_fires = 0; // partial fires at quiescence.
  int64_t stall_releases = 0;   // ticket-only arenas released without an infer call (stall or quiescence).
  int64_t cache_hits = 0;
  int64_t cache_misses = 0;
  int64_t cache_demotions = 0;
  int64_t cache_aliases = 0;
  int64_t terminal_leaves = 0;  // leaves valued by the game, without a row.
  int64_t positions = 0;        // recorded moves.
  int64_t games = 0;            // finished games.
  double infer_seconds = 0.0;   // wall time inside the callback.
  double window_seconds = 0.0;  // wall time of run_window calls.
};

// One finished (or, for collect windows, in-progress) game's records, one entry per move.
struct GameRecord {
  int64_t game_id = -1;                 // unique in the engine, increasing in the order games start.
  std::vector<float> obs;               // [L * obs_dim] position before the move, player-to-move view.
  std::vector<int32_t> action;          // [L]
  std::vector<float> reward;            // [L] mover's view.
  std::vector<int8_t> to_play;          // [L]
  std::vector<uint8_t> legal;           // [L * A]
  std::vector<float> root_value;        // [L] search value, player-to-move view.
  std::vector<float> predicted_value;   // [L] network value of the root.
  std::vector<int32_t> visit_counts;    // [L * A]
  std::vector<float> improved_policy;   // [L * A] PUCT: visit distribution; Gumbel: improved policy.
  std::vector<float> qvalues;           // [L * A] root Q from the root's view; 0 where unvisited.
  std::vector<float> root_prior;        // [L * A] the root prior (after the Dirichlet noise).
  std::vector<int32_t> generation;      // [L] weights generation when the move's search began.
  bool done = false;                    // the last move ended the game.
  int32_t winner = -1;                  // when done: 0 / 1, or -1 for a draw.

  size_t size() const { return action.size(); }
  void clear() {
    obs.clear(); action.clear(); reward.clear(); to_play.clear(); legal.clear(); root_value.clear();
    predicted_value.clear(); visit_counts.clear(); improved_policy.clear(); qvalues.clear(); root_prior.clear();
    generation.clear();
    done = false; winner = -1; game_id = -1;
  }
};

}  // namespace engine
}  // namespace lzlite
