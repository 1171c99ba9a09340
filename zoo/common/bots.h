// Game-playing bots written once against the game-core concept (common/game.h), so every zoo game
// gets them for free: random, rule-based and depth-limited alpha-beta (negamax).
//
// The concept has no "board" accessor, so the bots read the board through observe(): plane 0 holds
// the mover's stones and plane 1 the opponent's, on a kRows x kCols grid. Two action layouts exist:
//   placement games (tictactoe, gomoku): kNumActions == kRows * kCols and action a is cell a;
//   gravity games (connect4):            kNumActions == kCols and action a is a column; the cell a
//                                        stone lands on is found by playing it on a copy (action_cell).
// Line-based heuristics need the winning line length K: taken from G::kWinLength when the core
// defines it, else from the game's name (tictactoe 3, connect4 4, gomoku 5).
//
// Scores are ints from the view of the player to move (the shared sign convention): a forced win
// found at ply p scores kWinScore - p (faster wins score higher), a loss -(kWinScore - p), a draw 0,
// and heuristic leaves stay far inside (-kWinScore/2, kWinScore/2).
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <type_traits>

#include "common/game.h"

namespace lz {
namespace bots {

constexpr int kWinScore = 1000000;
constexpr int kInf = 2 * kWinScore;

constexpr bool str_eq(const char* a, const char* b) {
  while (*a && *a == *b) ++a, ++b;
  return *a == *b;
}

// Winning line length: G::kWinLength if present, else by registry name.
template <class G, class = void>
struct WinLength {
  static constexpr int value = str_eq(G::kName, "tictactoe") ? 3
                               : str_eq(G::kName, "connect4") ? 4
                               : str_eq(G::kName, "gomoku")   ? 5
                                                              : 0;
  static_assert(value > 0, "bots.h: define G::kWinLength or add the game's name to WinLength");
};
template <class G>
struct WinLength<G, std::void_t<decltype(G::kWinLength)>> {
  static constexpr int value = G::kWinLength;
};

template <class G>
struct Traits {
  static constexpr int kCells = G::kRows * G::kCols;
  static constexpr bool kGravity = G::kNumActions == G::kCols && G::kNumActions != kCells;
  static_assert(kGravity || G::kNumActions == kCells,
                "bots.h handles placement (A == rows*cols) and gravity (A == cols) games only");
  static constexpr int kWin = WinLength<G>::value;
  // Large placement boards: alpha-beta only considers cells within this Chebyshev distance of a
  // stone, which keeps gomoku's branching factor small enough for depth 2-3.
  static constexpr int kCandidateRadius = (!kGravity && kCells > 25) ? 2 : 0;
  static constexpr int kObsFloats = G::kObsPlanes * kCells;
};

// Board seen by the player to move: +1 own stone, -1 opponent stone, 0 empty; row-major cells.
template <class G>
struct Board {
  std::array<int8_t, Traits<G>::kCells> cell;
  explicit Board(const typename G::State& s) {
    float obs[Traits<G>::kObsFloats];
    G::observe(s, obs);
    constexpr int n = Traits<G>::kCells;
    for (int i = 0; i < n; ++i) cell[i] = obs[i] > 0.5f ? 1 : (obs[n + i] > 0.5f ? -1 : 0);
  }
};

// The cell action a fills (precondition: is_legal(s, a)).
template <class G>
int action_cell(const typename G::State& s, int a) {
  if constexpr (!Traits<G>::kGravity) {
    return a;
  } else {
    // The stone's row depends on the core's layout; find it as the only cell that changes.
    const Board<G> before(s);
    typename G::State t = s;
    G::play(t, a);
    const Board<G> after(t);
    for (int r = 0; r < G::kRows; ++r) {
      const int c = r * G::kCols + a;
      if (before.cell[c] == 0 && after.cell[c] != 0) return c;
    }
    return a;  // unreachable for a consistent core
  }
}

// Twice the Manhattan distance from the board centre (integer even on even-sized boards).
template <class G>
int center_dist2(int a) {
  if constexpr (Traits<G>::kGravity) {
    return std::abs(2 * a - (G::kCols - 1));
  } else {
    return std::abs(2 * (a / G::kCols) - (G::kRows - 1)) + std::abs(2 * (a % G::kCols) - (G::kCols - 1));
  }
}

// Actions sorted centre-first (Manhattan distance of the action's column/cell to the board centre,
// ties by index): the ordering alpha-beta uses and the rule bot's base preference.
template <class G>
const std::array<int, G::kNumActions>& center_order() {
  static const std::array<int, G::kNumActions> order = [] {
    std::array<int, G::kNumActions> o{};
    for (int a = 0; a < G::kNumActions; ++a) o[a] = a;
    std::stable_sort(o.begin(), o.end(), [](int x, int y) { return center_dist2<G>(x) < center_dist2<G>(y); });
    return o;
  }();
  return order;
}

// All length-K windows (rows, columns, both diagonals) as cell lists, built once per game.
template <class G>
struct Windows {
  static constexpr int K = Traits<G>::kWin;
  static constexpr int kMax = 4 * Traits<G>::kCells;
  int count = 0;
  std::array<std::array<int16_t, K>, kMax> cells{};
  Windows() {
    const int dr[4] = {0, 1, 1, 1}, dc[4] = {1, 0, 1, -1};
    for (int r = 0; r < G::kRows; ++r)
      for (int c = 0; c < G::kCols; ++c)
        for (int d = 0; d < 4; ++d) {
          const int er = r + dr[d] * (K - 1), ec = c + dc[d] * (K - 1);
          if (er < 0 || er >= G::kRows || ec < 0 || ec >= G::kCols) continue;
          for (int k = 0; k < K; ++k) cells[count][k] = static_cast<int16_t>((r + dr[d] * k) * G::kCols + c + dc[d] * k);
          ++count;
        }
  }
  static const Windows& get() {
    static const Windows w;
    return w;
  }
};

// Heuristic value for the player to move: sum over windows that only one side occupies of 4^(n-1)
// for n stones (open-line counting), own minus opponent's. Bounded by 4^(K-1) * windows.
template <class G>
int evaluate(const typename G::State& s) {
  const Board<G> b(s);
  const auto& w = Windows<G>::get();
  int score = 0;
  for (int i = 0; i < w.count; ++i) {
    int own = 0, opp = 0;
    for (int16_t c : w.cells[i]) {
      own += b.cell[c] > 0;
      opp += b.cell[c] < 0;
    }
    if (own && !opp) score += 1 << (2 * (own - 1));
    else if (opp && !own) score -= 1 << (2 * (opp - 1));
  }
  return score;
}

// Does playing a (legal) make the mover win at once?
template <class G>
bool wins_now(const typename G::State& s, int a) {
  typename G::State t = s;
  const int p = G::to_play(t);
  G::play(t, a);
  return G::winner(t) == p;
}

// Would the opponent win by playing a, were it their turn? The concept has no null move, so we pass
// the turn by playing some other legal move b != a first. That is exact for placement games (b adds
// a mover's stone, which cannot take part in the opponent's line) and for gravity games (a stone in
// column b leaves column a's landing cell unchanged); callers check wins_now first, so b never ends
// the game with a mover's win. With a single legal move there is nothing to block.
template <class G>
bool opponent_wins_at(const typename G::State& s, int a, const uint8_t* mask) {
  for (int b = 0; b < G::kNumActions; ++b) {
    if (b == a || !mask[b]) continue;
    typename G::State t = s;
    G::play(t, b);
    if (G::is_terminal(t)) return false;
    const int opp = G::to_play(t);
    G::play(t, a);
    return G::winner(t) == opp;
  }
  return false;
}

// Uniform over legal moves; -1 at terminal states.
template <class G>
int random_move(const typename G::State& s, Rng& rng) {
  uint8_t mask[G::kNumActions];
  const int n = G::legal_mask(s, mask);
  if (n == 0) return -1;
  int k = static_cast<int>(rng.below(static_cast<uint32_t>(n)));
  for (int a = 0; a < G::kNumActions; ++a)
    if (mask[a] && k-- == 0) return a;
  return -1;
}

// Win now; else block the opponent's immediate win; else prefer cells next to stones (own count
// more) and near the centre, breaking ties uniformly at random. -1 at terminal states.
template <class G>
int rule_move(const typename G::State& s, Rng& rng) {
  uint8_t mask[G::kNumActions];
  if (G::legal_mask(s, mask) == 0) return -1;
  for (int a : center_order<G>())
    if (mask[a] && wins_now<G>(s, a)) return a;
  int blocks[G::kNumActions], nb = 0;
  for (int a = 0; a < G::kNumActions; ++a)
    if (mask[a] && opponent_wins_at<G>(s, a, mask)) blocks[nb++] = a;
  if (nb > 0) return blocks[rng.below(static_cast<uint32_t>(nb))];

  const Board<G> b(s);
  int best = -kInf, ties[G::kNumActions], nt = 0;
  for (int a = 0; a < G::kNumActions; ++a) {
    if (!mask[a]) continue;
    const int cell = action_cell<G>(s, a), r = cell / G::kCols, c = cell % G::kCols;
    int adj = 0;
    for (int dr = -1; dr <= 1; ++dr)
      for (int dc = -1; dc <= 1; ++dc) {
        const int rr = r + dr, cc = c + dc;
        if ((dr || dc) && rr >= 0 && rr < G::kRows && cc >= 0 && cc < G::kCols) {
          const int v = b.cell[rr * G::kCols + cc];
          adj += v > 0 ? 3 : (v < 0 ? 2 : 0);
        }
      }
    const int score = 4 * adj - center_dist2<G>(a);
    if (score > best) best = score, nt = 0;
    if (score == best) ties[nt++] = a;
  }
  return ties[rng.below(static_cast<uint32_t>(nt))];
}

// Negamax with alpha-beta pruning to a fixed depth (plies). Stateless apart from a node counter.
template <class G>
struct AlphaBeta {
  using State = typename G::State;
  int64_t nodes = 0;

  // Legal (and, on large boards, nearby) moves in centre-first order; returns the count.
  static int candidates(const State& s, int* out) {
    uint8_t mask[G::kNumActions];
    if (G::legal_mask(s, mask) == 0) return 0;
    constexpr int R = Traits<G>::kCandidateRadius;
    if constexpr (R > 0) {
      const Board<G> b(s);
      uint8_t near[G::kNumActions] = {};
      bool any = false;
      for (int i = 0; i < Traits<G>::kCells; ++i) {
        if (!b.cell[i]) continue;
        any = true;
        const int r = i / G::kCols, c = i % G::kCols;
        for (int rr = std::max(0, r - R); rr <= std::min(G::kRows - 1, r + R); ++rr)
          for (int cc = std::max(0, c - R); cc <= std::min(G::kCols - 1, c + R); ++cc) near[rr * G::kCols + cc] = 1;
      }
      if (any)
        for (int a = 0; a < G::kNumActions; ++a) mask[a] &= near[a];
    }
    int n = 0;
    for (int a : center_order<G>())
      if (mask[a]) out[n++] = a;
    return n;
  }

  int negamax(const State& s, int depth, int alpha, int beta, int ply) {
    ++nodes;
    if (G::is_terminal(s)) return G::winner(s) >= 0 ? -(kWinScore - ply) : 0;
    int moves[G::kNumActions];
    const int n = candidates(s, moves);
    // An immediate win needs no search (and keeps "fastest win" exact at any depth).
    for (int i = 0; i < n; ++i)
      if (wins_now<G>(s, moves[i])) return kWinScore - ply - 1;
    if (depth <= 0) return evaluate<G>(s);
    int best = -kInf;
    for (int i = 0; i < n; ++i) {
      State t = s;
      G::play(t, moves[i]);
      const int v = -negamax(t, depth - 1, -beta, -alpha, ply + 1);
      if (v > best) best = v;
      if (v > alpha) alpha = v;
      if (alpha >= beta) break;
    }
    return best;
  }

  // Exact depth-limited score of every candidate move that could tie the best (others are upper
  // bounds below it). depth < 0 means search to the end of the game. Returns the candidate count.
  int root_scores(const State& s, int depth, int* moves, int* scores) {
    if (depth < 0) depth = G::kMaxMoves;
    const int n = candidates(s, moves);
    int best = -kInf;
    for (int i = 0; i < n; ++i) {
      State t = s;
      G::play(t, moves[i]);
      // Window (best - 1, +inf): a child equal to the best so far is still scored exactly.
      scores[i] = -negamax(t, depth - 1, -kInf, -(best - 1), 1);
      best = std::max(best, scores[i]);
    }
    return n;
  }

  // Best move at this depth with a uniform random tie-break; -1 at terminal states.
  int best_move(const State& s, int depth, Rng& rng) {
    int moves[G::kNumActions], scores[G::kNumActions] = {};
    const int n = root_scores(s, depth, moves, scores);
    if (n == 0) return -1;
    const int best = *std::max_element(scores, scores + n);
    int ties[G::kNumActions], nt = 0;
    for (int i = 0; i < n; ++i)
      if (scores[i] == best) ties[nt++] = moves[i];
    return ties[rng.below(static_cast<uint32_t>(nt))];
  }
};

// Bytes per state row in the batched binding's arrays.
template <class G>
constexpr int state_bytes() {
  return static_cast<int>(sizeof(typename G::State));
}

// Is this raw state row a finished game?
template <class G>
bool row_is_terminal(const uint8_t* row) {
  typename G::State s;
  std::memcpy(&s, row, sizeof(s));
  return G::is_terminal(s);
}

// Bot kinds the batched entry point dispatches on.
enum Kind : int { kRandom = 0, kRule = 1, kAlphaBeta = 2 };

// One move for each of n states stored as raw bytes (rows of sizeof(State)); -1 for terminal rows.
// One generator walks the rows in order, so a batch is reproducible for a given seed.
template <class G>
void act_batch(const uint8_t* rows, int64_t n, int kind, int depth, Rng& rng, int32_t* out) {
  AlphaBeta<G> ab;
  for (int64_t i = 0; i < n; ++i) {
    typename G::State s;
    std::memcpy(&s, rows + i * sizeof(s), sizeof(s));
    int a = -1;
    if (kind == kRandom) a = random_move<G>(s, rng);
    else if (kind == kRule) a = rule_move<G>(s, rng);
    else a = ab.best_move(s, depth, rng);
    out[i] = a;
  }
}

// Game-theoretic optimal moves by full-depth search: mask_out[a] = 1 when a keeps the position's
// value (win / draw / loss for the mover), however fast. Only feasible for small games (tictactoe).
// Each move is searched with the null-ish window (-1, 1), which decides its sign exactly.
// Returns the number of optimal moves (0 at terminal states).
template <class G>
int optimal_moves(const uint8_t* row, uint8_t* mask_out) {
  typename G::State s;
  std::memcpy(&s, row, sizeof(s));
  for (int a = 0; a < G::kNumActions; ++a) mask_out[a] = 0;
  uint8_t mask[G::kNumActions];
  if (G::legal_mask(s, mask) == 0) return 0;
  AlphaBeta<G> ab;
  int sign[G::kNumActions], best = -2;
  for (int a = 0; a < G::kNumActions; ++a) {
    if (!mask[a]) continue;
    typename G::State t = s;
    G::play(t, a);
    const int v = -ab.negamax(t, G::kMaxMoves, -1, 1, 1);
    sign[a] = (v > 0) - (v < 0);
    best = std::max(best, sign[a]);
  }
  int count = 0;
  for (int a = 0; a < G::kNumActions; ++a)
    if (mask[a] && sign[a] == best) mask_out[a] = 1, ++count;
  return count;
}

}  // namespace bots
}  // namespace lz
