// The Gumbel rule of lzlite::mcts::Tree (tree.h declares these members; tree.h includes this file
// at its end, after the class): the root's Gumbel-top-k and sequential halving (Danihelka et al.,
// 2022), sigma(completed Q), and the interior selection by the improved policy. docs/ctree.md states
// the rules; lzlite/mcts/ptree/tree.py is the spec.
#pragma once

#include "tree.h"

namespace lzlite {
namespace mcts {

// Gumbel root: logits minus their legal max, g + logits, and the top-m considered actions.
inline void Tree::init_root_logits(int32_t b, const float* logits, const float* gumbel) {
  const int32_t A = A_;  // A local: -fno-strict-aliasing would reload the member per iteration.
  if (cfg_.rule != Rule::kGumbel) return;
  const size_t row = static_cast<size_t>(b) * A_;
  const uint8_t* legal = &legal_[slot(b, 0) * A_];
  double hi = -std::numeric_limits<double>::infinity();
  int32_t num_legal = 0;
  for (int32_t a = 0; a < A; ++a) {
    if (legal[a]) {
      hi = std::max(hi, static_cast<double>(logits[a]));
      ++num_legal;
    }
  }
  for (int32_t a = 0; a < A; ++a) {
    considered_[row + a] = 0;
    if (legal[a]) {
      root_logit_[row + a] = static_cast<double>(logits[a]) - hi;
      const double g = gumbel != nullptr ? static_cast<double>(gumbel[a]) : 0.0;
      root_score_[row + a] = g + root_logit_[row + a];
    } else {
      root_logit_[row + a] = -std::numeric_limits<double>::infinity();
      root_score_[row + a] = -std::numeric_limits<double>::infinity();
    }
  }
  // Top-k by repeated argmax (k <= m, once per search); ties go to the lowest action index.
  const int32_t k = std::min(m_, num_legal);
  num_considered_[b] = k;
  for (int32_t i = 0; i < k; ++i) {
    int32_t best = -1;
    for (int32_t a = 0; a < A; ++a) {
      if (!legal[a] || considered_[row + a]) continue;
      if (best < 0 || root_score_[row + a] > root_score_[row + best]) best = a;
    }
    considered_[row + best] = 1;
  }
}

inline Tree::SigmaMap Tree::sigma_map(size_t s) const {
  const size_t e = s * A_;
  const int32_t* nv = &edge_visits_[e];
  const double* q = &edge_q_[e];
  const double* p = &prior_[e];
  const int32_t* order = &visit_order_[e];
  const int32_t num_visited = num_visited_[s];
  int32_t max_n = 0;
  double sum_pq = 0.0, sum_p = 0.0;
  double lo = std::numeric_limits<double>::infinity(), hi = -lo;  // Over visited (hence legal) Q.
  for (int32_t i = 0; i < num_visited; ++i) {  // The visited children, in order of first visit.
    const int32_t a = order[i];
    max_n = std::max(max_n, nv[a]);
    sum_pq += p[a] * q[a];
    sum_p += p[a];
    lo = std::min(lo, q[a]);
    hi = std::max(hi, q[a]);
  }
  // An expanded node's visits count itself once plus every visit of a child.
  return make_sigma_map(s, visits_[s] - 1, max_n, sum_pq, sum_p, lo, hi, num_visited < num_legal_[s]);
}

// The map from the children statistics of node s (sums over visited children; q_lo/q_hi: range of
// their Q) and whether a legal child is unvisited.
inline Tree::SigmaMap Tree::make_sigma_map(size_t s, int64_t sum_n, int32_t max_n, double sum_pq, double sum_p,
                                           double q_lo, double q_hi, bool any_unvisited) const {
  SigmaMap m;
  const double weighted_q = sum_p > 0.0 ? sum_pq / sum_p : 0.0;
  m.v_mix = (raw_value_[s] + static_cast<double>(sum_n) * weighted_q) / (1.0 + static_cast<double>(sum_n));
  m.scale = (cfg_.c_visit + static_cast<double>(max_n)) * cfg_.c_scale;
  m.sum_n = sum_n;
  if (any_unvisited) {
    q_lo = std::min(q_lo, m.v_mix);
    q_hi = std::max(q_hi, m.v_mix);
  }
  m.q_lo = q_lo;
  m.q_hi = q_hi;
  if (cfg_.rescale_values) {
    const double span = q_hi - q_lo;
    m.lo = q_lo;
    m.inv_span = span > 0.0 ? 1.0 / span : 0.0;  // All equal -> every completed Q is 0.
  } else {
    m.lo = 0.0;
    m.inv_span = 1.0;
  }
  return m;
}

// sigma(completed Q) of node s for every action (0 on illegal ones), e.g. for outputs().
inline void Tree::completed_sigma(size_t s, double* sigma) const {
  const SigmaMap m = sigma_map(s);
  const size_t e = s * A_;
  for (int32_t a = 0; a < A_; ++a) {
    sigma[a] = legal_[e + a] ? m.apply(edge_visits_[e + a] > 0 ? edge_q_[e + a] : m.v_mix) : 0.0;
  }
}

// Gumbel interior: argmax_a pi'(a) - N(a) / (1 + sum N), pi' = softmax_legal(logits + sigma) =
// prior(a) * exp(sigma(a) - max sigma) / Z. Unvisited actions share sigma(v_mix) and N = 0, so
// among them only the largest prior can win: that child and the unvisited prior mass are kept per
// node (find_best_unvisited), and the loops run over the visited children only (interior nodes
// have few; they are visited in prior order), with one exp each plus one for the unvisited ones.
inline int32_t Tree::select_gumbel_interior(size_t s) {
  // First selection from this node: every child is unvisited, so the best unvisited one wins.
  if (num_visited_[s] == 0) return best_unvisited_[s];
  // The second selection: the softmax deferred by expand() (it also refreshes best_unvisited_).
  if (!prior_ready_[s]) compute_prior(s, &logit_[s * A_], /*fresh=*/false);
  return score_gumbel_interior(s);
}

inline int32_t Tree::score_gumbel_interior(size_t s) {
  const int32_t num_visited = num_visited_[s];
  const int32_t best_unvisited = best_unvisited_[s];
  const size_t e = s * A_;
  const int32_t* nv = &edge_visits_[e];
  const double* q = &edge_q_[e];
  const double* p = &prior_[e];
  const int32_t* order = &visit_order_[e];
  double* gq = gather_q_.data();
  double* gp = gather_p_.data();
  int32_t* gn = gather_n_.data();
  int32_t max_n = 0;
  double sum_pq = 0.0, sum_p = 0.0;
  double q_lo = std::numeric_limits<double>::infinity(), q_hi = -q_lo;
  for (int32_t i = 0; i < num_visited; ++i) {  // Gather the visited children contiguously.
    const int32_t a = order[i];
    const int32_t n = nv[a];
    const double qa = q[a], pa = p[a];
    gq[i] = qa;
    gp[i] = pa;
    gn[i] = n;
    max_n = std::max(max_n, n);
    sum_pq += pa * qa;
    sum_p += pa;
    q_lo = std::min(q_lo, qa);
    q_hi = std::max(q_hi, qa);
  }
  const int64_t sum_n = visits_[s] - 1;  // Expanded: its own visit plus one per child visit.
  const SigmaMap m = make_sigma_map(s, sum_n, max_n, sum_pq, sum_p, q_lo, q_hi, best_unvisited >= 0);
  // max sigma over legal actions: an affine map attains it at an end of the completed-Q range.
  const double hi = std::max(m.apply(m.q_lo), m.apply(m.q_hi));
  // Every exp of this node in one batch: the visited children, then the shared unvisited one.
  double* weight = scratch_.data();
  for (int32_t i = 0; i < num_visited; ++i) weight[i] = m.apply(gq[i]) - hi;
  weight[num_visited] = m.apply(m.v_mix) - hi;
  fast_exp_batch(weight, weight, num_visited + 1);
  int32_t best = best_unvisited;
  double best_score = -std::numeric_limits<double>::infinity();
  double z = 0.0;
  if (best_unvisited >= 0) {
    const double exp_unvisited = weight[num_visited];
    z = unvisited_prior_[s] * exp_unvisited;
    best_score = p[best_unvisited] * exp_unvisited;  // Divided by z below.
  }
  for (int32_t i = 0; i < num_visited; ++i) {
    weight[i] *= gp[i];
    z += weight[i];
  }
  const double inv_z = 1.0 / z;
  const double inv_n = 1.0 / (1.0 + static_cast<double>(sum_n));
  best_score *= inv_z;
  for (int32_t i = 0; i < num_visited; ++i) {
    const double score = weight[i] * inv_z - static_cast<double>(gn[i]) * inv_n;
    const int32_t a = order[i];
    if (score > best_score || (score == best_score && a < best)) {  // Ties: lowest index.
      best_score = score;
      best = a;
    }
  }
  return best;
}

// Gumbel root: argmax of g + logits + sigma over considered actions whose visit count equals
// required (or, when required < 0, the most visits among considered actions: the final action).
inline int32_t Tree::gumbel_root_argmax(int32_t b, const SigmaMap& m, int32_t required) const {
  const int32_t A = A_;  // A local: -fno-strict-aliasing would reload the member per iteration.
  const size_t row = static_cast<size_t>(b) * A;
  const size_t e = slot(b, 0) * A;
  const int32_t* nv = &edge_visits_[e];
  const double* q = &edge_q_[e];
  const double* root_score = &root_score_[row];
  const uint8_t* considered = &considered_[row];
  int32_t target = required;
  if (target < 0) {
    for (int32_t a = 0; a < A; ++a) {
      if (considered[a]) target = std::max(target, nv[a]);
    }
  }
  const double sigma_unvisited = m.apply(m.v_mix);
  int32_t best = -1;
  double best_score = -std::numeric_limits<double>::infinity();
  for (int pass = 0; pass < 2 && best < 0; ++pass) {
    // Pass 1 always finds an action while the schedule is followed; pass 2 (any considered
    // action) only guards against an impossible empty set without failing mid-search.
    for (int32_t a = 0; a < A; ++a) {
      if (!considered[a] || (pass == 0 && nv[a] != target)) continue;
      const double score = root_score[a] + (nv[a] > 0 ? m.apply(q[a]) : sigma_unvisited);
      if (score > best_score || best < 0) {
        best_score = score;
        best = a;
      }
    }
  }
  return best;
}

}  // namespace mcts
}  // namespace lzlite
