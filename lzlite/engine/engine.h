// lzlite self-play engine: many games on worker threads, their network requests batched through one
// inference callback per route, an inference cache that obeys the weights generation.
//
// Header-only C++17, no Python headers. The engine reaches the game only through a GameTable
// (game_api.h) and searches with the tree rules of lzlite/mcts/ctree/tree.h (one Tree of one root per
// slot: PUCT or Gumbel, exactly the rules lzlite.mcts.search runs). docs/engine.md explains the design.
//
// Roles:
//   - Slot: one of n_games episode holders (game state, one search, the game's records so far). A slot
//     is owned by at most one thread at a time: it is either queued, being advanced by one worker,
//     parked (waiting for a prediction), or idle; hand-offs go through mutexes, so no slot field needs
//     its own lock.
//   - Worker (n_threads, the scheduler's thread included): pops a ready slot and advances its search until it needs a network
//     prediction, then writes the request as a row straight into its route's open arena (or parks a
//     cache ticket) and takes the next ready slot.
//   - Scheduler (the thread that calls run_window; it advances ready slots while nothing is to be
//     fired, so one thread alone runs the whole engine): fires an arena when it is full, when its route
//     stalls (no fire of it for kStallFires engine-wide fires) and at quiescence (no slot queued or
//     being advanced); one fire is one call of the infer callback; the predictions go back to the
//     parked slots, which are queued again.
//   - Route: one inference destination (one shared callback, or one per player to move at the root).
//   - Arena: a route's preallocated batch buffer of batch_size observation rows; the rows of a fire.
//   - Gated ticket: a cache hit, parked on the route's open arena until that arena fires, so a hit
//     obeys the same weights generation as real rows; a ticket whose generation is older than the
//     current one at release is demoted (its slot re-emits the row, which is re-inferred).
//   - Alias: a request whose key equals a row already in an open or in-flight arena of the same route
//     reuses that row's prediction.
//
// Determinism: every game draws its randomness (opening, root noise, action sampling) from its own
// generator seeded by (window seed, game number), so a game's records depend only on the predictions
// it receives; with a network that is a function of each row, any thread count gives the same games.
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdint>
#include <cstring>
#include <deque>
#include <memory>
#include <mutex>
#include <random>
#include <shared_mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "engine_types.h"
#include "game_api.h"
#include "inference_cache.h"
#include "../mcts/ctree/tree.h"

namespace lzlite {
namespace engine {

// ================================================================================================
// The engine.
// ================================================================================================
class Engine {
 public:
  static constexpr int32_t kMaxRoutes = 2;      // players
  static constexpr int32_t kMaxQueues = 2 * kMaxRoutes;  // (player, row kind)
  static constexpr int64_t kStallFires = 8;  // engine-wide fires without a fire of a route with demand

  Engine(const lz::GameTable* game, const EngineConfig& cfg) : g_(game), cfg_(cfg) {
    if (game == nullptr) throw std::invalid_argument("game table is null");
    if (cfg.n_games < 1 || cfg.n_threads < 1 || cfg.batch_size < 1)
      throw std::invalid_argument("n_games, n_threads and batch_size must be >= 1");
    if (cfg.latent_model && cfg.cache_size > 0)
      throw std::invalid_argument("the inference cache keys game positions; a latent model's leaves are not positions");
    A_ = game->num_actions;
    obs_dim_ = static_cast<int64_t>(game->obs_planes) * game->rows * game->cols;
    sb_ = game->state_bytes;
    S_ = cfg.search.tree.num_simulations;
    cfg_.search.tree.batch_size = 1;
    cfg_.search.tree.num_actions = A_;
    cache_.allocate(cfg.cache_size, A_);
    slots_.reserve(static_cast<size_t>(cfg.n_games));
    for (int32_t i = 0; i < cfg.n_games; ++i) slots_.emplace_back(new Slot(i, cfg_.search.tree, S_, sb_, obs_dim_, A_));
    for (int32_t q = 0; q < kMaxQueues; ++q) {  // see queue_index
      routes_[q].player = cfg.latent_model ? q / 2 : q;
      routes_[q].kind = cfg.latent_model ? static_cast<RowKind>(q % 2) : RowKind::kObservation;
    }
  }

  ~Engine() {
    if (async_.joinable()) async_.join();
    stop_workers();
  }
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  int32_t num_actions() const { return A_; }
  int64_t obs_dim() const { return obs_dim_; }
  int32_t n_games() const { return cfg_.n_games; }
  int32_t batch_size() const { return cfg_.batch_size; }
  bool has_cache() const { return cache_.enabled(); }

  // A new weights generation: cached predictions of older ones are never served again. Any thread.
  void weights_updated() { generation_.fetch_add(1, std::memory_order_acq_rel); }
  int32_t generation() const { return generation_.load(std::memory_order_acquire); }

  Telemetry telemetry() {
    std::lock_guard<std::mutex> lk(stats_mu_);
    Telemetry t = stats_;
    t.cache_hits = n_hits_.load(std::memory_order_relaxed);
    t.cache_misses = n_misses_.load(std::memory_order_relaxed);
    t.cache_aliases = n_aliases_.load(std::memory_order_relaxed);
    t.terminal_leaves = n_terminal_.load(std::memory_order_relaxed);
    t.positions = n_positions_.load(std::memory_order_relaxed);
    t.games = n_games_.load(std::memory_order_relaxed);
    return t;
  }

  // Plays one collection window.
  //   n_routes: 1 (one callback) or 2 (route = the player to move at the search's root).
  //   fresh: start every slot from a new game (abandoning games in progress); otherwise slots keep
  //     the games of earlier windows.
  //   max_new_games: games this window may start (-1: unbounded). The window ends when every game
  //     has finished and none may start, or
  //   floor_records: (>= 0) once the finished games hold this many moves, every slot stops at its
  //     next move boundary (its search is completed first) and the window ends; games in progress
  //     continue in the next window.
  // Finished games are appended to `out` in order of completion. Throws std::runtime_error when the
  // callback fails (the games in progress are then abandoned).
  void run_window(InferFn infer, void* ctx, int32_t n_routes, bool fresh, int64_t max_new_games,
                  int64_t floor_records, uint64_t seed, std::vector<GameRecord>* out) {
    if (n_routes < 1 || n_routes > kMaxRoutes) throw std::invalid_argument("n_routes must be 1 or 2");
    if (window_running_.exchange(true)) throw std::logic_error("a window is already running on this engine");
    struct Done {
      std::atomic<bool>& flag;
      ~Done() { flag.store(false); }
    } done{window_running_};
    const auto t0 = std::chrono::steady_clock::now();
    n_routes_ = n_routes;
    n_queues_ = cfg_.latent_model ? 2 * n_routes : n_routes;
    window_seed_ = seed;
    games_started_ = 0;
    max_new_games_ = max_new_games;
    floor_records_ = floor_records;
    finished_records_ = 0;
    draining_.store(false);
    error_ = false;
    finished_ = out;
    for (auto& r : routes_) r.reset_window();
    fires_total_ = 0;
    start_workers();
    {
      std::lock_guard<std::mutex> lk(q_mu_);
      for (auto& sp : slots_) {
        Slot& s = *sp;
        if (fresh || s.phase == Phase::kIdle) {
          s.phase = Phase::kIdle;
          if (!admit(s)) continue;
        } else {
          s.phase = Phase::kStartMove;  // resume a game of an earlier window at its move boundary
        }
        ready_.push_back(s.id);
        ++active_;
      }
    }
    work_cv_.notify_all();
    std::string err;
    scheduler_loop(infer, ctx, &err);
    if (error_) {
      drain_workers();
      // Abandon everything in flight: slots restart fresh games in the next window.
      for (auto& sp : slots_) sp->phase = Phase::kIdle;
      for (auto& r : routes_) r.reset_window();
    }
    const double dt = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    {
      std::lock_guard<std::mutex> lk(stats_mu_);
      stats_.window_seconds += dt;
    }
    finished_ = nullptr;
    if (error_) throw std::runtime_error(err.empty() ? "the infer callback failed" : err);
  }

  // run_window on a background thread (collect_stream); at most one window runs at a time.
  void start_window_async(InferFn infer, void* ctx, int32_t n_routes, bool fresh, int64_t max_new_games,
                          int64_t floor_records, uint64_t seed, std::vector<GameRecord>* out) {
    if (async_.joinable()) throw std::logic_error("a streamed window is still running; join it first");
    async_error_.clear();
    async_done_.store(false);
    async_ = std::thread([=] {
      try {
        run_window(infer, ctx, n_routes, fresh, max_new_games, floor_records, seed, out);
      } catch (const std::exception& e) {
        async_error_ = e.what();
      }
      async_done_.store(true);
    });
  }
  bool async_running() const { return async_.joinable(); }
  bool async_done() const { return async_done_.load(); }
  // Waits for the streamed window; returns its error message ("" when it succeeded).
  std::string join_async() {
    if (async_.joinable()) async_.join();
    return async_error_;
  }

 private:
  // ----------------------------------------------------------------------------------------------
  // Slots.
  // ----------------------------------------------------------------------------------------------
  enum class Phase : int32_t {
    kIdle,        // no game (or a finished window's game waiting at its move boundary: see run_window)
    kStartMove,   // next: encode the root and request it
    kRootParked,  // the root's request is out
    kSimulate,    // next: traverse
    kLeafParked,  // a leaf's request is out
  };

  enum class Ticket : int32_t { kNone, kRow, kGated, kAlias };

  struct Slot {
    Slot(int32_t id_, const mcts::TreeConfig& tc, int32_t S, int32_t sb, int64_t obs_dim, int32_t A)
        : id(id_), tree(tc), states(static_cast<size_t>(S + 1) * sb), game(sb), obs(obs_dim),
          legal(A), root_legal(A), pred_logits(A), noise(A), gumbel(A), prior(A), visits(A), qvalues(A),
          improved(A), rng(0) {}
    const int32_t id;
    mcts::Tree tree;                  // one root; its node k lives at states[k].
    std::vector<uint8_t> states;      // [(S + 1) * state_bytes] the tree's real game states
    std::vector<uint8_t> game;        // [state_bytes] the game being played
    std::vector<float> obs;           // [obs_dim] the pending request's observation
    std::vector<uint8_t> legal;       // [A] the pending leaf's legal mask
    std::vector<uint8_t> root_legal;  // [A]
    std::vector<float> pred_logits;   // [A] the prediction being delivered
    std::vector<float> noise, gumbel; // [A] root noise of the current search
    std::vector<float> prior;         // [A] the current search's root prior (after the Dirichlet noise)
    std::vector<int32_t> visits;      // [A] outputs scratch
    std::vector<float> qvalues, improved;
    std::mt19937_64 rng;              // the game's own generator
    GameRecord rec;
    Phase phase = Phase::kIdle;
    int32_t ply = 0;
    int32_t route = 0;                // the current search's player route (0 with one route)
    int32_t queue = 0;                // the pending request's (route, row kind) queue
    int32_t parent = 0, action = 0, child = 0;  // latent model: the pending recurrent row
    float pred_reward = 0.0f;
    int32_t search_gen = 0;           // generation when the current search began
    int32_t root_to_play = 0;
    float root_net_value = 0.0f;
    bool greedy = false;
    // The request in flight.
    uint64_t key = 0;
    Ticket ticket = Ticket::kNone;
    int32_t ticket_gen = 0;           // gated: the cached prediction's generation
    bool demoted = false;             // re-emit the request as a row, bypassing the cache
    float pred_value = 0.0f;
  };

  // ----------------------------------------------------------------------------------------------
  // Routes and arenas.
  // ----------------------------------------------------------------------------------------------
  struct Arena {
    explicit Arena(int32_t cap, int64_t obs_dim, int32_t A, RowKind kind)
        : obs(kind == RowKind::kObservation ? static_cast<size_t>(cap) * obs_dim : 0), value(cap),
          logits(static_cast<size_t>(cap) * A), slot(cap), key(cap), reward(cap), latent(cap), parent(cap),
          action(cap), child(cap) {}
    std::vector<float> obs;            // [cap * obs_dim] rows written by workers
    std::vector<float> value;          // [cap] predictions written by the callback
    std::vector<float> logits;         // [cap * A]
    std::vector<int32_t> slot;         // [cap] slot of each row
    std::vector<uint64_t> key;         // [cap] cache key of each row (0: none)
    std::vector<float> reward;         // [cap] recurrent rows' rewards, written by the callback
    std::vector<int32_t> latent;       // [cap] latent model: the root's latent slot (observation rows)
    std::vector<int32_t> parent, action, child;  // [cap] latent model: recurrent rows
    std::vector<std::vector<int32_t>> aliases;  // [rows] slots reusing row i's prediction
    std::vector<int32_t> gated;        // slots holding a cache hit released with this arena
    int32_t rows = 0;
    int32_t fire_gen = -1;             // the generation its fire began in; -1 while not fired (under route.mu)
    void clear() {
      rows = 0;
      fire_gen = -1;
      gated.clear();
      for (auto& a : aliases) a.clear();
    }
  };

  struct Route {
    int32_t player = 0;
    RowKind kind = RowKind::kObservation;
    std::mutex mu;                                  // guards everything below
    Arena* open = nullptr;                          // being filled
    std::vector<std::unique_ptr<Arena>> owned;      // every arena of this route
    std::vector<Arena*> free_list;
    std::deque<Arena*> closed;                      // full, waiting to fire
    std::unordered_map<uint64_t, std::pair<Arena*, int32_t>> in_flight;  // key -> (arena, row)
    int64_t last_fire = 0;                          // fires_total_ at this route's last fire
    void reset_window() {
      std::lock_guard<std::mutex> lk(mu);
      open = nullptr;
      closed.clear();
      in_flight.clear();
      free_list.clear();
      for (auto& a : owned) {
        a->clear();
        free_list.push_back(a.get());
      }
      last_fire = 0;
    }
  };

  // Under route.mu: the open arena, made (or recycled) by the worker that needs it.
  Arena* open_arena(Route& r) {
    if (r.open == nullptr) {
      if (r.free_list.empty()) {
        r.owned.emplace_back(new Arena(cfg_.batch_size, obs_dim_, A_, r.kind));
        r.owned.back()->aliases.resize(static_cast<size_t>(cfg_.batch_size));
        r.free_list.push_back(r.owned.back().get());
      }
      r.open = r.free_list.back();
      r.free_list.pop_back();
      r.open->clear();
    }
    return r.open;
  }

  // The slot's request key: its position hash and route (each route may have its own network).
  void set_key(Slot& s, uint64_t position_hash) const { s.key = InferenceCache::key(position_hash, s.route); }

  // A current-generation prediction for the slot's key: copied into the slot (returns true).
  bool cache_lookup(Slot& s, int32_t gen) {
    if (!cache_.lookup(s.key, gen, &s.pred_value, s.pred_logits.data())) return false;
    s.ticket_gen = gen;
    return true;
  }

  // ----------------------------------------------------------------------------------------------
  // Worker side.
  // ----------------------------------------------------------------------------------------------
  void start_workers() {
    if (!workers_.empty()) return;
    stop_ = false;
    // The scheduler advances slots too whenever no batch is ready to fire: n_threads - 1 more threads.
    for (int32_t t = 1; t < cfg_.n_threads; ++t) workers_.emplace_back([this] { worker_main(); });
  }

  void stop_workers() {
    {
      std::lock_guard<std::mutex> lk(q_mu_);
      stop_ = true;
    }
    work_cv_.notify_all();
    for (auto& t : workers_) t.join();
    workers_.clear();
  }

  void worker_main() {
    for (;;) {
      int32_t id;
      {
        std::unique_lock<std::mutex> lk(q_mu_);
        work_cv_.wait(lk, [this] { return stop_ || !ready_.empty(); });
        if (stop_) return;
        id = ready_.front();
        ready_.pop_front();
      }
      advance(*slots_[static_cast<size_t>(id)]);
      bool quiet;
      {
        std::lock_guard<std::mutex> lk(q_mu_);
        quiet = --active_ == 0;
      }
      if (quiet) sched_cv_.notify_one();
    }
  }

  // After an aborted window: drops the queued slots and waits for the ones being advanced.
  void drain_workers() {
    std::unique_lock<std::mutex> lk(q_mu_);
    active_ -= static_cast<int64_t>(ready_.size());
    ready_.clear();
    sched_cv_.wait(lk, [this] { return active_ == 0; });
    closed_count_ = 0;
  }

  // Starts a new game in slot s if the window allows one; returns whether it did. Caller holds q_mu_
  // or owns the slot exclusively with the game counter under q_mu_ (see finish_game).
  bool admit(Slot& s) {
    if (draining_.load() || (max_new_games_ >= 0 && games_started_ >= max_new_games_)) return false;
    const int64_t index = games_started_++;  // the game's number in this window seeds its generator
    s.rng.seed(mix64(window_seed_ ^ mix64(static_cast<uint64_t>(index) + 1)));
    s.rec.clear();
    s.rec.game_id = next_game_id_++;
    s.demoted = false;
    s.ticket = Ticket::kNone;
    s.ply = 0;
    s.phase = Phase::kStartMove;
    g_->reset(s.game.data(), 1, nullptr);
    random_opening(s);
    return true;
  }

  // U{0..k} uniformly random legal moves, unrecorded; a game that ends during them restarts.
  void random_opening(Slot& s) {
    const int32_t k = cfg_.search.random_opening_plies;
    if (k <= 0) return;
    const int32_t plies = static_cast<int32_t>(std::uniform_int_distribution<int32_t>(0, k)(s.rng));
    for (int32_t p = 0; p < plies; ++p) {
      g_->legal_mask(s.game.data(), 1, s.legal.data());
      int32_t n = 0;
      for (int32_t a = 0; a < A_; ++a) n += s.legal[a];
      int32_t pick = static_cast<int32_t>(std::uniform_int_distribution<int32_t>(0, n - 1)(s.rng));
      int64_t action = 0;
      for (int32_t a = 0; a < A_; ++a) {
        if (s.legal[a] && pick-- == 0) { action = a; break; }
      }
      float reward;
      uint8_t done;
      g_->step(s.game.data(), 1, &action, &reward, &done);
      if (done) {
        g_->reset(s.game.data(), 1, nullptr);
        return;
      }
    }
  }

  // Advances slot s until it parks on a request, or has nothing more to do this window.
  void advance(Slot& s) {
    if (s.demoted) {  // a stale cache hit: re-infer it
      s.demoted = false;
      emit(s, /*use_cache=*/false);
      return;
    }
    if (s.phase == Phase::kRootParked) {
      begin_search(s);
    } else if (s.phase == Phase::kLeafParked) {
      if (cfg_.latent_model) {  // every action legal inside a learned model; no terminal leaves
        s.tree.expand_and_backup(&s.pred_reward, &s.pred_value, s.pred_logits.data(), nullptr, nullptr);
      } else {
        const float zero = 0.0f;
        const uint8_t not_terminal = 0;
        s.tree.expand_and_backup(&zero, &s.pred_value, s.pred_logits.data(), s.legal.data(), &not_terminal);
      }
      s.phase = Phase::kSimulate;
    }
    for (;;) {
      if (s.phase == Phase::kIdle) return;
      if (s.phase == Phase::kStartMove) {
        if (draining_.load()) {
          return;  // stop at the move boundary; the next window resumes here
        }
        start_move(s);
        return;
      }
      // kSimulate
      if (s.tree.num_done() >= S_) {
        finish_move(s);
        continue;
      }
      s.tree.traverse();
      if (!s.tree.out_needs_eval()[0]) continue;  // a terminal leaf: traverse backed it up
      const int32_t parent = s.tree.out_parent()[0];
      const int32_t child = s.tree.out_child()[0];
      const int32_t action = s.tree.out_action()[0];
      if (cfg_.latent_model) {
        const int32_t base = s.id * (S_ + 1);
        s.parent = base + parent;
        s.action = action;
        s.child = base + child;
        s.queue = queue_index(s.route, RowKind::kRecurrent);
        s.phase = Phase::kLeafParked;
        emit(s, /*use_cache=*/false);
        return;
      }
      uint8_t terminal = 0;
      float tvalue = 0.0f;
      int kind = 0;
      g_->expand(s.states.data(), S_ + 1, 1, &parent, &child, &action, s.obs.data(), s.legal.data(), &terminal,
                 &tvalue, &kind);
      if (terminal) {
        const float zero = 0.0f;
        s.tree.expand_and_backup(&zero, &tvalue, s.pred_logits.data(), s.legal.data(), &terminal);
        count_terminal_leaf();
        continue;
      }
      s.phase = Phase::kLeafParked;
      s.queue = queue_index(s.route, RowKind::kObservation);
      uint64_t hash = 0;
      g_->query(&s.states[static_cast<size_t>(child) * sb_], 1, nullptr, nullptr, nullptr, nullptr, &hash, nullptr);
      set_key(s, hash);
      emit(s, /*use_cache=*/true);
      return;
    }
  }

  void count_terminal_leaf() { n_terminal_.fetch_add(1, std::memory_order_relaxed); }

  // The root of a new move: observe, then request it.
  void start_move(Slot& s) {
    int8_t to_play = 0;
    uint64_t hash = 0;
    g_->query(s.game.data(), 1, &to_play, nullptr, nullptr, nullptr, &hash, nullptr);
    g_->observe(s.game.data(), 1, s.obs.data());
    g_->legal_mask(s.game.data(), 1, s.root_legal.data());
    s.root_to_play = to_play;
    s.route = n_routes_ == 1 ? 0 : to_play;
    s.queue = queue_index(s.route, RowKind::kObservation);
    set_key(s, hash);
    s.search_gen = generation();
    s.phase = Phase::kRootParked;
    emit(s, /*use_cache=*/true);
  }

  // The root's prediction is in: reset the tree with this search's root noise.
  void begin_search(Slot& s) {
    const SearchSpec& sp = cfg_.search;
    const bool gumbel_rule = sp.tree.rule == mcts::Rule::kGumbel;
    s.greedy = sp.temperature_moves >= 0 && s.ply >= sp.temperature_moves;
    s.root_net_value = s.pred_value;
    std::memcpy(s.states.data(), s.game.data(), static_cast<size_t>(sb_));
    const float* noise = nullptr;
    const float* gumbel = nullptr;
    if (!gumbel_rule && sp.root_noise_weight > 0.0) {  // Dirichlet noise (kept on greedy roots, as in AlphaZero)
      dirichlet(s);
      noise = s.noise.data();
    }
    if (gumbel_rule && !s.greedy) {
      std::uniform_real_distribution<double> u(0.0, 1.0);
      for (int32_t a = 0; a < A_; ++a) {
        double x = u(s.rng);
        while (x <= 0.0) x = u(s.rng);
        s.gumbel[a] = static_cast<float>(-std::log(-std::log(x)) * sp.gumbel_scale);
      }
      gumbel = s.gumbel.data();
    }
    s.tree.reset(s.pred_logits.data(), &s.pred_value, s.root_legal.data(), noise,
                 noise != nullptr ? sp.root_noise_weight : 0.0, gumbel, nullptr, nullptr);
    root_prior(s, noise != nullptr ? sp.root_noise_weight : 0.0);
    s.phase = Phase::kSimulate;
  }

  // s.prior = softmax of the root logits over the legal moves, mixed with the noise in s.noise at `weight`
  // (as lzlite.mcts.search reports its root_prior); recorded with the move.
  void root_prior(Slot& s, double weight) {
    double hi = -std::numeric_limits<double>::infinity(), total = 0.0;
    for (int32_t a = 0; a < A_; ++a) if (s.root_legal[a]) hi = std::max(hi, static_cast<double>(s.pred_logits[a]));
    for (int32_t a = 0; a < A_; ++a) {
      const double e = s.root_legal[a] ? std::exp(static_cast<double>(s.pred_logits[a]) - hi) : 0.0;
      s.prior[a] = static_cast<float>(e);
      total += e;
    }
    for (int32_t a = 0; a < A_; ++a) {
      const double p = total > 0.0 ? s.prior[a] / total : 0.0;
      s.prior[a] = static_cast<float>(weight > 0.0 && s.root_legal[a] ? (1.0 - weight) * p + weight * s.noise[a] : p);
    }
  }

  // Dirichlet(alpha) over the legal root actions as normalised Gamma(alpha, 1) draws.
  void dirichlet(Slot& s) {
    std::gamma_distribution<double> gamma(cfg_.search.root_dirichlet_alpha, 1.0);
    double total = 0.0;
    int32_t n_legal = 0;
    for (int32_t a = 0; a < A_; ++a) {
      const double x = s.root_legal[a] ? gamma(s.rng) : 0.0;
      s.noise[a] = static_cast<float>(x);
      total += x;
      n_legal += s.root_legal[a];
    }
    for (int32_t a = 0; a < A_; ++a) {
      // All-underflow (tiny alpha): uniform over the legal actions.
      s.noise[a] = total > 0.0 ? static_cast<float>(s.noise[a] / total)
                               : (s.root_legal[a] ? 1.0f / static_cast<float>(n_legal) : 0.0f);
    }
  }

  // The search is done: choose the move, record the position, play it.
  void finish_move(Slot& s) {
    const SearchSpec& sp = cfg_.search;
    float root_value = 0.0f;
    int32_t gumbel_action = -1, root_visits = 0;
    s.tree.outputs(s.visits.data(), &root_value, s.qvalues.data(), s.improved.data(), &gumbel_action, &root_visits);
    int32_t action;
    if (sp.tree.rule == mcts::Rule::kGumbel) {
      action = gumbel_action;
    } else {
      action = select_action(s, s.greedy ? 0.0 : sp.temperature);
    }
    GameRecord& r = s.rec;
    const size_t at = r.size();
    r.obs.resize((at + 1) * obs_dim_);
    g_->observe(s.game.data(), 1, &r.obs[at * obs_dim_]);
    r.action.push_back(action);
    r.to_play.push_back(static_cast<int8_t>(s.root_to_play));
    r.legal.insert(r.legal.end(), s.root_legal.begin(), s.root_legal.end());
    r.root_value.push_back(root_value);
    r.predicted_value.push_back(s.root_net_value);
    r.visit_counts.insert(r.visit_counts.end(), s.visits.begin(), s.visits.end());
    r.improved_policy.insert(r.improved_policy.end(), s.improved.begin(), s.improved.end());
    r.root_prior.insert(r.root_prior.end(), s.prior.begin(), s.prior.end());
    r.qvalues.insert(r.qvalues.end(), s.qvalues.begin(), s.qvalues.end());
    r.generation.push_back(s.search_gen);
    const int64_t a64 = action;
    float reward = 0.0f;
    uint8_t done = 0;
    g_->step(s.game.data(), 1, &a64, &reward, &done);
    r.reward.push_back(reward);
    ++s.ply;
    if (!done) {
      s.phase = Phase::kStartMove;
      return;
    }
    int8_t winner = -1;
    g_->query(s.game.data(), 1, nullptr, nullptr, &winner, nullptr, nullptr, nullptr);
    r.done = true;
    r.winner = winner;
    const int64_t n_moves = static_cast<int64_t>(r.size());
    {
      std::lock_guard<std::mutex> lk(q_mu_);
      finished_->push_back(std::move(r));
      finished_records_ += n_moves;
      if (floor_records_ >= 0 && finished_records_ >= floor_records_) draining_.store(true);
      s.phase = Phase::kIdle;
      admit(s);
    }
    n_positions_.fetch_add(n_moves, std::memory_order_relaxed);
    n_games_.fetch_add(1, std::memory_order_relaxed);
  }

  // PUCT action: argmax visits (ties: lowest index) at temperature 0, else sample visits^(1/T), as
  // lzlite.mcts.search.select_action does.
  int32_t select_action(Slot& s, double temperature) {
    if (temperature == 0.0) {
      int32_t best = 0;
      for (int32_t a = 1; a < A_; ++a) if (s.visits[a] > s.visits[best]) best = a;
      return best;
    }
    double hi = -std::numeric_limits<double>::infinity();
    for (int32_t a = 0; a < A_; ++a) {
      if (s.visits[a] > 0) hi = std::max(hi, std::log(static_cast<double>(s.visits[a])) / temperature);
    }
    double total = 0.0;
    for (int32_t a = 0; a < A_; ++a) {
      const double w = s.visits[a] > 0 ? std::exp(std::log(static_cast<double>(s.visits[a])) / temperature - hi) : 0.0;
      s.noise[a] = static_cast<float>(w);  // scratch: the root noise is spent once the search is done
      total += w;
    }
    const double u = std::uniform_real_distribution<double>(0.0, 1.0)(s.rng) * total;
    double cdf = 0.0;
    int32_t last = 0;
    for (int32_t a = 0; a < A_; ++a) {
      if (s.visits[a] <= 0) continue;
      last = a;
      cdf += s.noise[a];
      if (u < cdf) return a;
    }
    return last;
  }

  // Sends slot s's request: a gated cache hit, an alias of an identical row in flight, or a row.
  void emit(Slot& s, bool use_cache) {
    Route& r = routes_[s.queue];
    const bool cached = has_cache();
    const int32_t gen = generation();
    bool hit = false;
    if (cached && use_cache) hit = cache_lookup(s, gen);
    bool closed_now = false;
    Ticket kind;  // a local: once the route lock is released the scheduler may own the slot
    {
      std::lock_guard<std::mutex> lk(r.mu);
      Arena* a = open_arena(r);
      if (hit) {
        kind = s.ticket = Ticket::kGated;
        a->gated.push_back(s.id);
      } else {
        auto it = cached ? r.in_flight.find(s.key) : r.in_flight.end();
        // An alias must not get older weights than its request's generation: a twin whose fire began in an
        // earlier generation is not reused (the request takes a row of its own).
        if (it != r.in_flight.end() && (it->second.first->fire_gen < 0 || it->second.first->fire_gen >= gen)) {
          kind = s.ticket = Ticket::kAlias;
          it->second.first->aliases[static_cast<size_t>(it->second.second)].push_back(s.id);
        } else {
          kind = s.ticket = Ticket::kRow;
          const int32_t row = a->rows++;
          a->slot[row] = s.id;
          a->key[row] = cached ? s.key : 0;
          if (r.kind == RowKind::kRecurrent) {
            a->parent[row] = s.parent;
            a->action[row] = s.action;
            a->child[row] = s.child;
          } else {
            a->latent[row] = s.id * (S_ + 1);  // the root's latent slot (used by latent models only)
            std::memcpy(&a->obs[static_cast<size_t>(row) * obs_dim_], s.obs.data(), sizeof(float) * obs_dim_);
          }
          if (cached) r.in_flight[s.key] = {a, row};
          if (a->rows == cfg_.batch_size) {
            r.closed.push_back(a);
            r.open = nullptr;
            closed_now = true;
          }
        }
      }
    }
    if (cached && use_cache) {
      std::atomic<int64_t>& counter = hit ? n_hits_ : kind == Ticket::kAlias ? n_aliases_ : n_misses_;
      counter.fetch_add(1, std::memory_order_relaxed);
    }
    if (closed_now) {
      {
        std::lock_guard<std::mutex> lk(q_mu_);
        ++closed_count_;
      }
      sched_cv_.notify_one();
    }
  }

  // ----------------------------------------------------------------------------------------------
  // Scheduler side.
  // ----------------------------------------------------------------------------------------------
  enum class FireReason { kFull, kStall, kQuiescence };

  void scheduler_loop(InferFn infer, void* ctx, std::string* err) {
    for (;;) {
      Route* full = nullptr;
      bool quiet = false;
      int32_t help = -1;
      {
        std::unique_lock<std::mutex> lk(q_mu_);
        sched_cv_.wait(lk, [this] { return closed_count_ > 0 || active_ == 0 || !ready_.empty(); });
        if (closed_count_ > 0) {  // a full batch first: it keeps the network busy
          --closed_count_;
        } else if (!ready_.empty()) {
          help = ready_.front();
          ready_.pop_front();
        } else {
          quiet = true;
        }
      }
      if (help >= 0) {  // nothing to fire: advance a ready slot here, as a worker would
        advance(*slots_[static_cast<size_t>(help)]);
        std::lock_guard<std::mutex> lk(q_mu_);
        --active_;
        continue;
      }
      if (!quiet) {
        for (int32_t i = 0; i < n_queues_ && full == nullptr; ++i) {
          std::lock_guard<std::mutex> lk(routes_[i].mu);
          if (!routes_[i].closed.empty()) full = &routes_[i];
        }
        if (full == nullptr) continue;  // cannot happen: closed_count_ counts closed arenas
        Arena* a;
        {
          std::lock_guard<std::mutex> lk(full->mu);
          a = full->closed.front();
          full->closed.pop_front();
        }
        if (!fire(*full, a, FireReason::kFull, infer, ctx, err)) return;
        if (!stall_ladder(infer, ctx, err)) return;
        continue;
      }
      // Quiescence: nothing queued or running. Fire (or release) every route's open arena; when
      // there is none, the window is over.
      bool any = false;
      for (int32_t i = 0; i < n_queues_; ++i) {
        Arena* a = take_open(routes_[i]);
        if (a == nullptr) continue;
        any = true;
        if (!fire(routes_[i], a, FireReason::kQuiescence, infer, ctx, err)) return;
      }
      if (!any) return;
    }
  }

  // Under no lock: the open arena of r if it holds demand (rows or tickets), closed for firing.
  Arena* take_open(Route& r) {
    std::lock_guard<std::mutex> lk(r.mu);
    Arena* a = r.open;
    if (a == nullptr || (a->rows == 0 && a->gated.empty())) return nullptr;
    r.open = nullptr;
    return a;
  }

  // After a fire: a route with demand that has not fired for kStallFires fires is fired partially.
  bool stall_ladder(InferFn infer, void* ctx, std::string* err) {
    if (n_queues_ == 1) return true;  // the only queue fires whenever anything fires
    for (int32_t i = 0; i < n_queues_; ++i) {
      Route& r = routes_[i];
      if (fires_total_ - r.last_fire < kStallFires) continue;
      Arena* a = take_open(r);
      if (a == nullptr) continue;
      if (!fire(r, a, FireReason::kStall, infer, ctx, err)) return false;
    }
    return true;
  }

  // One fire: infer the arena's rows (if any), deliver them, their aliases and the gated hits.
  bool fire(Route& r, Arena* a, FireReason why, InferFn infer, void* ctx, std::string* err) {
    const int32_t n = a->rows;
    int32_t gen;  // the weights the callback is about to use (or newer ones)
    {
      std::lock_guard<std::mutex> lk(r.mu);
      gen = generation();
      a->fire_gen = gen;
    }
    if (n > 0) {
      const auto t0 = std::chrono::steady_clock::now();
      FireBatch b;
      b.player = r.player;
      b.kind = r.kind;
      b.n = n;
      b.obs = a->obs.data();
      b.latent = a->latent.data();
      b.parent = a->parent.data();
      b.action = a->action.data();
      b.child = a->child.data();
      b.value = a->value.data();
      b.reward = a->reward.data();
      b.logits = a->logits.data();
      if (r.kind == RowKind::kObservation) std::fill_n(a->reward.data(), n, 0.0f);
      const int rc = infer(ctx, b);
      const double dt = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      {
        std::lock_guard<std::mutex> lk(stats_mu_);
        stats_.infer_seconds += dt;
        ++stats_.fires;
        stats_.rows += n;
        if (why == FireReason::kFull) ++stats_.full_fires;
        else if (why == FireReason::kStall) ++stats_.stall_fires;
        else ++stats_.quiescence_fires;
      }
      if (rc != 0) {
        error_ = true;
        *err = "the infer callback failed";
        return false;
      }
      for (int32_t row = 0; row < n; ++row) {
        if (!std::isfinite(a->value[row])) {
          error_ = true;
          *err = "infer returned a non-finite value";
          return false;
        }
      }
      ++fires_total_;
      r.last_fire = fires_total_;
      if (has_cache()) cache_.insert(n, a->key.data(), a->value.data(), a->logits.data(), gen);
    } else {
      std::lock_guard<std::mutex> lk(stats_mu_);
      ++stats_.stall_releases;
      r.last_fire = fires_total_;
    }
    // Collect who to wake: rows, their aliases (no new alias can join once the keys leave in_flight),
    // then the gated hits (current generation) or their demotions.
    wake_.clear();
    {
      std::lock_guard<std::mutex> lk(r.mu);
      for (int32_t row = 0; row < n; ++row) {
        if (a->key[row] != 0) {
          auto it = r.in_flight.find(a->key[row]);
          if (it != r.in_flight.end() && it->second.first == a && it->second.second == row) r.in_flight.erase(it);
        }
      }
    }
    const int32_t now = generation();
    int64_t demotions = 0;
    for (int32_t row = 0; row < n; ++row) {
      Slot& s = *slots_[static_cast<size_t>(a->slot[row])];
      deliver(s, a->value[row], &a->logits[static_cast<size_t>(row) * A_]);
      s.pred_reward = a->reward[row];
      wake_.push_back(s.id);
      for (int32_t id : a->aliases[static_cast<size_t>(row)]) {
        Slot& t = *slots_[static_cast<size_t>(id)];
        deliver(t, a->value[row], &a->logits[static_cast<size_t>(row) * A_]);
        wake_.push_back(id);
      }
    }
    for (int32_t id : a->gated) {
      Slot& s = *slots_[static_cast<size_t>(id)];
      if (s.ticket_gen != now) {  // outlived a weights_updated(): never served stale
        s.demoted = true;
        ++demotions;
      }
      s.ticket = Ticket::kNone;
      wake_.push_back(id);
    }
    if (demotions > 0) {
      std::lock_guard<std::mutex> lk(stats_mu_);
      stats_.cache_demotions += demotions;
    }
    {
      std::lock_guard<std::mutex> lk(r.mu);
      a->clear();
      r.free_list.push_back(a);
    }
    {
      std::lock_guard<std::mutex> lk(q_mu_);
      for (int32_t id : wake_) ready_.push_back(id);
      active_ += static_cast<int64_t>(wake_.size());
    }
    if (!wake_.empty()) work_cv_.notify_all();
    return true;
  }

  static void deliver_into(Slot& s, float value, const float* logits, int32_t A) {
    s.pred_value = value;
    std::memcpy(s.pred_logits.data(), logits, sizeof(float) * A);
    s.ticket = Ticket::kNone;
  }
  void deliver(Slot& s, float value, const float* logits) { deliver_into(s, value, logits, A_); }

  // ----------------------------------------------------------------------------------------------
  // Constant for the engine's life.
  // ----------------------------------------------------------------------------------------------
  const lz::GameTable* g_;
  EngineConfig cfg_;
  int32_t A_ = 0, S_ = 0, sb_ = 0;
  int64_t obs_dim_ = 0;

  // ----------------------------------------------------------------------------------------------
  // Per window (written by run_window before the workers see the window's slots).
  // ----------------------------------------------------------------------------------------------
  int32_t n_routes_ = 1;                          // players routed apart (1 or 2)
  int32_t n_queues_ = 1;                          // arena queues in use: routes x row kinds
  // Queue of a (player route, row kind): the route itself for game-state engines (observation rows
  // only), 2 * route + kind for latent models.
  int32_t queue_index(int32_t route, RowKind kind) const {
    return cfg_.latent_model ? 2 * route + static_cast<int32_t>(kind) : route;
  }
  uint64_t window_seed_ = 0;
  int64_t max_new_games_ = -1;
  int64_t floor_records_ = -1;
  std::vector<GameRecord>* finished_ = nullptr;   // under q_mu_
  bool error_ = false;                            // scheduler thread only
  int64_t fires_total_ = 0;                       // scheduler thread only

  // ----------------------------------------------------------------------------------------------
  // Shared, each under the lock named.
  // ----------------------------------------------------------------------------------------------
  std::vector<std::unique_ptr<Slot>> slots_;
  Route routes_[kMaxQueues];         // the queues in use are 0 .. n_queues_ - 1 (queue_index)
  std::mutex q_mu_;                    // ready_, active_, closed_count_, games_started_, finished_*
  std::condition_variable work_cv_;    // workers wait for ready slots
  std::condition_variable sched_cv_;   // the scheduler waits for a closed arena or quiescence
  std::deque<int32_t> ready_;
  int64_t active_ = 0;                 // slots queued or being advanced
  int64_t closed_count_ = 0;           // closed arenas not yet taken by the scheduler
  int64_t games_started_ = 0;         // games started in this window
  int64_t next_game_id_ = 0;          // games started by this engine
  int64_t finished_records_ = 0;
  bool stop_ = false;
  std::atomic<bool> draining_{false};
  std::atomic<bool> window_running_{false};  // one window at a time
  std::atomic<int32_t> generation_{0};
  InferenceCache cache_;               // workers read it, the scheduler writes it (its own lock)
  std::mutex stats_mu_;
  Telemetry stats_;                    // the scheduler's counters (fires, rows, seconds, demotions)
  std::atomic<int64_t> n_hits_{0}, n_misses_{0}, n_aliases_{0}, n_terminal_{0}, n_positions_{0}, n_games_{0};
  std::vector<int32_t> wake_;          // scheduler scratch
  std::vector<std::thread> workers_;
  std::thread async_;                  // the streamed window's thread
  std::string async_error_;            // written by async_ before async_done_, read after join
  std::atomic<bool> async_done_{false};
};

}  // namespace engine
}  // namespace lzlite
