// The self-play engine's inference cache (header-only C++17, no Python headers): network predictions
// (value and logits) keyed by (position hash, route), each tagged with the weights generation that made
// it. A 4-way set-associative table allocated once; a full set overwrites its entry of an older
// generation first. Lookups take a shared lock (worker threads), inserts an exclusive one (the
// scheduler, once per fire). Only a current-generation entry is ever returned; the engine's gating and
// demotion (engine.h) make sure a hit is also current when it is served.
#pragma once

#include <cstdint>
#include <cstring>
#include <mutex>
#include <shared_mutex>
#include <vector>

namespace lzlite {
namespace engine {

// splitmix64's finaliser: a 64-bit mixer for keys and seeds.
inline uint64_t mix64(uint64_t x) {
  x += 0x9E3779B97F4A7C15ULL;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
  return x ^ (x >> 31);
}

class InferenceCache {
 public:
  static constexpr size_t kWays = 4;  // entries per set

  // The key of a position for a route (never 0, which marks an empty entry).
  static uint64_t key(uint64_t position_hash, int32_t route) {
    const uint64_t k = mix64(position_hash ^ (0x9E3779B97F4A7C15ULL * static_cast<uint64_t>(route + 1)));
    return k == 0 ? 1 : k;
  }

  // Room for at least `capacity` predictions of `num_actions` logits (0: the cache is off).
  void allocate(int64_t capacity, int32_t num_actions) {
    A_ = num_actions;
    if (capacity <= 0) return;
    int64_t cap = static_cast<int64_t>(kWays);
    while (cap < capacity) cap <<= 1;
    mask_ = static_cast<uint64_t>(cap / static_cast<int64_t>(kWays) - 1);  // sets of kWays entries
    keys_.assign(static_cast<size_t>(cap), 0);
    gen_.assign(static_cast<size_t>(cap), -1);
    pred_.assign(static_cast<size_t>(cap) * (A_ + 1), 0.0f);
  }

  bool enabled() const { return !keys_.empty(); }

  // Copies the prediction of `key` made in generation `gen` into value / logits [A]; false if none.
  bool lookup(uint64_t key, int32_t gen, float* value, float* logits) {
    std::shared_lock<std::shared_mutex> lk(mu_);
    const size_t first = static_cast<size_t>(key & mask_) * kWays;
    for (size_t i = first; i < first + kWays; ++i) {
      if (keys_[i] != key || gen_[i] != gen) continue;
      const float* p = &pred_[i * (A_ + 1)];
      *value = p[0];
      std::memcpy(logits, p + 1, sizeof(float) * A_);
      return true;
    }
    return false;
  }

  // Stores n predictions (keys [n], 0 = skip; values [n]; logits [n, A]) made in generation `gen`.
  void insert(int64_t n, const uint64_t* keys, const float* values, const float* logits, int32_t gen) {
    std::unique_lock<std::shared_mutex> lk(mu_);
    for (int64_t row = 0; row < n; ++row) {
      const uint64_t key = keys[row];
      if (key == 0) continue;
      // The way to (over)write: this key's own entry, else an empty or older-generation one, else one
      // chosen by the key's high bits (a cheap stand-in for least recently used).
      const size_t first = static_cast<size_t>(key & mask_) * kWays;
      size_t i = first + static_cast<size_t>(key >> 62) % kWays;
      for (size_t j = first; j < first + kWays; ++j) {
        if (keys_[j] == key) {
          i = j;
          break;
        }
        if (keys_[j] == 0 || gen_[j] != gen) i = j;
      }
      keys_[i] = key;
      gen_[i] = gen;
      float* p = &pred_[i * (A_ + 1)];
      p[0] = values[row];
      std::memcpy(p + 1, logits + static_cast<size_t>(row) * A_, sizeof(float) * A_);
    }
  }

 private:
  int32_t A_ = 0;
  uint64_t mask_ = 0;
  std::shared_mutex mu_;       // guards the arrays' contents
  std::vector<uint64_t> keys_;  // [cap] 0: empty
  std::vector<int32_t> gen_;    // [cap]
  std::vector<float> pred_;     // [cap * (1 + A)]: value, then logits
};

}  // namespace engine
}  // namespace lzlite
