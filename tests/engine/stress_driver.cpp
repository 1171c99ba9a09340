// A C++ stress driver for the self-play engine (lzlite/engine/engine.h), built by
// tests/engine/test_sanitizers.py with -fsanitize=thread and with -fsanitize=address,undefined.
//
// Several worker threads, per-player routes of unequal speed (random sleeps in one route's callback),
// the inference cache on, weights_updated() from another thread while windows run, streamed and
// plain windows. The fake network tags every value with the generation of the weights it "loaded";
// the driver checks that every root value a search used is at least the generation its search began
// in (no stale cache hit), that every game finishes, and exits non-zero otherwise.
#include <atomic>
#include <chrono>
#include <cstdio>
#include <random>
#include <thread>
#include <vector>

#include "common/game_table.h"
#include "../../lzlite/engine/engine.h"

namespace {

struct FakeNet {
  std::atomic<int32_t> version{0};  // the "loaded weights": bumped before engine.weights_updated()
  int32_t A = 0;
  int64_t obs_dim = 0;
  std::atomic<int64_t> calls{0};
};

int infer(void* ctx, const lzlite::engine::FireBatch& b) {
  FakeNet* net = static_cast<FakeNet*>(ctx);
  const int32_t v = net->version.load();
  thread_local std::mt19937 rng(12345);
  if (b.player == 1) std::this_thread::sleep_for(std::chrono::microseconds(rng() % 400));  // the slow route
  for (int64_t i = 0; i < b.n; ++i) {
    b.value[i] = 0.01f * static_cast<float>(v);  // the generation tag
    for (int32_t a = 0; a < net->A; ++a) {
      const float own = b.kind == lzlite::engine::RowKind::kObservation ? b.obs[i * net->obs_dim + a % net->obs_dim]
                                                                         : 0.1f * static_cast<float>(b.action[i]);
      b.logits[i * net->A + a] = 0.5f * own + 0.01f * static_cast<float>(a);
    }
    if (b.kind == lzlite::engine::RowKind::kRecurrent) b.reward[i] = 0.0f;
  }
  net->calls.fetch_add(1);
  return 0;
}

int check(const std::vector<lzlite::engine::GameRecord>& games, int64_t expect_games, const char* what) {
  int bad = 0;
  if (expect_games >= 0 && static_cast<int64_t>(games.size()) != expect_games) {
    std::fprintf(stderr, "%s: %zu games finished, expected %lld\n", what, games.size(),
                 static_cast<long long>(expect_games));
    ++bad;
  }
  for (const auto& g : games) {
    if (!g.done) ++bad;
    for (size_t i = 0; i < g.size(); ++i) {
      const int32_t tag = static_cast<int32_t>(g.predicted_value[i] * 100.0f + 0.5f);
      if (tag < g.generation[i]) {
        std::fprintf(stderr, "%s: stale value (weights %d) served to a search of generation %d\n", what, tag,
                     g.generation[i]);
        ++bad;
      }
    }
  }
  return bad;
}

}  // namespace

int main() {
  int count = 0;
  const lz::GameTable* tables = lz::game_tables(&count);
  int failures = 0;
  for (int gi = 0; gi < 2; ++gi) {  // tic-tac-toe (many cache hits), Connect Four
    const lz::GameTable* game = &tables[gi];
    lzlite::engine::EngineConfig cfg;
    cfg.n_games = 24;
    cfg.n_threads = 4;
    cfg.batch_size = 8;
    cfg.cache_size = 1 << 12;
    cfg.search.tree.num_simulations = 12;
    cfg.search.tree.rule = gi == 0 ? lzlite::mcts::Rule::kPuct : lzlite::mcts::Rule::kGumbel;
    cfg.search.tree.max_num_considered_actions = 4;
    cfg.search.random_opening_plies = 2;
    lzlite::engine::Engine engine(game, cfg);
    FakeNet net;
    net.A = game->num_actions;
    net.obs_dim = engine.obs_dim();
    std::atomic<bool> done{false};
    std::thread bumper([&] {  // new weights, then a new generation: the order an actor uses
      while (!done.load()) {
        std::this_thread::sleep_for(std::chrono::microseconds(700));
        net.version.fetch_add(1);
        engine.weights_updated();
      }
    });
    std::vector<lzlite::engine::GameRecord> out;
    engine.run_window(&infer, &net, 2, true, 60, -1, 7 + gi, &out);
    failures += check(out, 60, "play_games");
    for (int w = 0; w < 3; ++w) {  // streamed windows with a floor: games continue across windows
      std::vector<lzlite::engine::GameRecord> streamed;
      engine.start_window_async(&infer, &net, 1, false, -1, 40, 100 + w, &streamed);
      const std::string err = engine.join_async();
      if (!err.empty()) {
        std::fprintf(stderr, "stream: %s\n", err.c_str());
        ++failures;
      }
      failures += check(streamed, -1, "collect_stream");
      int64_t moves = 0;
      for (const auto& g : streamed) moves += static_cast<int64_t>(g.size());
      if (moves < 40) {
        std::fprintf(stderr, "stream: %lld moves below the floor 40\n", static_cast<long long>(moves));
        ++failures;
      }
    }
    done.store(true);
    bumper.join();
    const auto t = engine.telemetry();
    std::printf("%s: fires %lld hits %lld demotions %lld aliases %lld stall fires %lld releases %lld\n", game->name,
                static_cast<long long>(t.fires), static_cast<long long>(t.cache_hits),
                static_cast<long long>(t.cache_demotions), static_cast<long long>(t.cache_aliases),
                static_cast<long long>(t.stall_fires), static_cast<long long>(t.stall_releases));
  }
  {  // a latent-model engine (MuZero family): recurrent rows name latent slots, no cache
    lzlite::engine::EngineConfig cfg;
    cfg.n_games = 12;
    cfg.n_threads = 3;
    cfg.batch_size = 5;
    cfg.latent_model = true;
    cfg.search.tree.num_simulations = 10;
    lzlite::engine::Engine engine(&tables[1], cfg);
    FakeNet net;
    net.A = tables[1].num_actions;
    net.obs_dim = engine.obs_dim();
    std::vector<lzlite::engine::GameRecord> out;
    engine.run_window(&infer, &net, 2, true, 30, -1, 3, &out);
    failures += check(out, 30, "latent model");
    std::printf("latent: fires %lld\n", static_cast<long long>(engine.telemetry().fires));
  }
  if (failures) {
    std::fprintf(stderr, "%d failures\n", failures);
    return 1;
  }
  std::printf("ok\n");
  return 0;
}
