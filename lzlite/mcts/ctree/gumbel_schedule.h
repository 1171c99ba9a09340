// The sequential-halving schedule of the Gumbel rule (header-only C++17, no Python headers).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

namespace lzlite {
namespace mcts {

// Sequential-halving visit schedule of Gumbel MuZero (Danihelka et al. 2022): entry s is the visit
// count the root child chosen at simulation s must have. Phases consider m, m/2, ... (never fewer
// than 2) actions and give each max(1, floor(S / (ceil(log2 m) * considered))) extra visits; m == 1
// gives 0, 1, 2, ... A pure function, mirrored from lzlite/mcts/ptree/gumbel.py and tested as a table.
inline void considered_visit_sequence(int32_t m, int32_t num_simulations, int32_t* out) {
  if (m <= 1) {
    for (int32_t s = 0; s < num_simulations; ++s) out[s] = s;
    return;
  }
  const int32_t num_phases = static_cast<int32_t>(std::ceil(std::log2(static_cast<double>(m))));
  std::vector<int32_t> visits(static_cast<size_t>(m), 0);  // Constructor-time only.
  int32_t written = 0;
  int32_t survivors = m;
  while (written < num_simulations) {
    const int32_t per_survivor = std::max<int32_t>(1, num_simulations / (num_phases * survivors));
    for (int32_t e = 0; e < per_survivor; ++e) {
      for (int32_t i = 0; i < survivors; ++i) {
        if (written < num_simulations) out[written++] = visits[static_cast<size_t>(i)];
        ++visits[static_cast<size_t>(i)];
      }
    }
    survivors = std::max<int32_t>(2, survivors / 2);
  }
}

}  // namespace mcts
}  // namespace lzlite
