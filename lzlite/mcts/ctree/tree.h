// lzlite search tree: the C++ core behind lzlite.mcts.ctree.Tree.
//
// Header-only C++17, no Python headers. One object holds B independent search trees of N = S + 1
// nodes each, in struct-of-arrays storage allocated once in the constructor and reused by every
// reset(): nothing is allocated per search, per simulation or per node. The rules (PUCT with min-max
// normalised Q, Gumbel with sequential halving at the root, ReZero reuse, terminal leaves, in-tree
// legal masks) are those of the pure-numpy spec lzlite/mcts/ptree/tree.py; docs/ctree.md states them
// and its "C++ implementation" section explains the choices made here. The Gumbel members are
// defined in tree_gumbel.h, included at the end.
//
// Sign convention: a node's value_sum is from the view of ITS player to move. The Q of the edge
// parent -> child, from the parent's view, is reward(child) + discount * value_sign * mean(child);
// value_sign (-1 two-player zero-sum, +1 single-player) is a multiplier, never a branch.
//
// Slots: node k of root b lives at slot b * N + k; the root is node 0 and simulation s may create
// node s + 1. Per-edge statistics (child visits and Q) are mirrored in the PARENT at [slot * A + a]
// so that selection scans contiguous memory instead of chasing child indices.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <vector>

#include "fast_exp.h"
#include "gumbel_schedule.h"

namespace lzlite {
namespace mcts {

enum class Rule : int32_t { kPuct = 0, kGumbel = 1 };

struct TreeConfig {
  int32_t batch_size = 1;                   // B >= 1.
  int32_t num_actions = 1;                  // A >= 1: the full action space.
  int32_t num_simulations = 1;              // S >= 1; N = S + 1 nodes per root.
  Rule rule = Rule::kPuct;
  double pb_c_base = 19652.0;               // PUCT exploration constants (MuZero appendix B), > 0.
  double pb_c_init = 1.25;
  double discount = 0.997;                  // Per-move discount of the backup.
  double value_sign = -1.0;                 // -1: two-player alternating zero-sum; +1: single player.
  int32_t max_num_considered_actions = 16;  // Gumbel m >= 1.
  double c_visit = 50.0;                    // Gumbel sigma(q) = (c_visit + max_a N(a)) * c_scale * q.
  double c_scale = 1.0;
  bool rescale_values = false;              // Gumbel: min-max rescale completed Q to [0, 1] first.
};

class Tree {
 public:
  explicit Tree(const TreeConfig& config)
      : cfg_(config),
        B_(config.batch_size),
        A_(config.num_actions),
        S_(config.num_simulations),
        N_(config.num_simulations + 1),
        m_(std::max<int32_t>(1, std::min(config.max_num_considered_actions, config.num_actions))),
        signed_discount_(config.discount * config.value_sign) {
    if (B_ < 1 || A_ < 1 || S_ < 1) throw std::invalid_argument("batch_size, num_actions, num_simulations must be >= 1");
    const size_t nodes = static_cast<size_t>(B_) * N_;
    const size_t edges = nodes * A_;
    const size_t roots = static_cast<size_t>(B_) * A_;
    parent_.assign(nodes, -1);
    action_.assign(nodes, -1);
    visits_.assign(nodes, 0);
    value_sum_.assign(nodes, 0.0);
    reward_.assign(nodes, 0.0);
    raw_value_.assign(nodes, 0.0);
    terminal_.assign(nodes, 0);
    expanded_.assign(nodes, 0);
    child_.assign(edges, -1);
    visit_order_.assign(edges, 0);
    num_visited_.assign(nodes, 0);
    num_legal_.assign(nodes, 0);
    best_unvisited_.assign(nodes, -1);
    unvisited_prior_.assign(nodes, 0.0);
    edge_visits_.assign(edges, 0);
    edge_q_.assign(edges, 0.0);
    prior_.assign(edges, 0.0);
    logit_.assign(edges, 0.0f);
    prior_ready_.assign(nodes, 0);
    legal_.assign(edges, 0);
    root_logit_.assign(roots, 0.0);
    root_score_.assign(roots, 0.0);
    considered_.assign(roots, 0);
    num_considered_.assign(B_, 0);
    reuse_action_.assign(B_, -1);
    reuse_value_.assign(B_, 0.0);
    qmin_.assign(B_, 0.0);
    qmax_.assign(B_, 0.0);
    out_parent_.assign(B_, 0);
    out_action_.assign(B_, 0);
    out_child_.assign(B_, 0);
    out_needs_eval_.assign(B_, 0);
    schedule_.assign(static_cast<size_t>(m_ + 1) * S_, 0);
    for (int32_t k = 1; k <= m_; ++k) considered_visit_sequence(k, S_, &schedule_[static_cast<size_t>(k) * S_]);
    inv_one_plus_.resize(static_cast<size_t>(N_) + 1);
    puct_c_.resize(static_cast<size_t>(N_) + 1);
    for (size_t n = 0; n <= static_cast<size_t>(N_); ++n) {
      const double np = static_cast<double>(n);
      inv_one_plus_[n] = 1.0 / (1.0 + np);
      puct_c_[n] = std::sqrt(np) * (cfg_.pb_c_init + std::log((np + cfg_.pb_c_base + 1.0) / cfg_.pb_c_base));
    }
    scratch_.assign(static_cast<size_t>(A_) + 1, 0.0);
    gather_q_.assign(static_cast<size_t>(A_), 0.0);
    gather_p_.assign(static_cast<size_t>(A_), 0.0);
    gather_n_.assign(static_cast<size_t>(A_), 0);
  }

  // ==============================================================================================
  // Search API. The binding validates every array (shapes, dtypes, finite values, non-empty legal
  // rows, call order) before calling these; they assume valid input and never allocate.
  // ==============================================================================================

  // Starts a new search. prior_logits/gumbel/noise [B, A] float32, value/reuse_value [B], legal
  // [B, A] 0/1, reuse_action [B] (-1 = none). noise, gumbel and the reuse pointers may be null.
  void reset(const float* prior_logits, const float* value, const uint8_t* legal, const float* noise,
             double noise_weight, const float* gumbel, const int32_t* reuse_action, const float* reuse_value) {
    num_done_ = 0;
    pending_ = false;
    for (int32_t b = 0; b < B_; ++b) {
      const size_t root = slot(b, 0);
      const size_t row = static_cast<size_t>(b) * A_;
      clear_node(root);
      expand(root, prior_logits + row, legal + row, /*lazy=*/false);
      if (noise != nullptr) {
        double* p = &prior_[root * A_];
        for (int32_t a = 0; a < A_; ++a) {
          if (legal_[root * A_ + a]) p[a] = (1.0 - noise_weight) * p[a] + noise_weight * noise[row + a];
        }
      }
      raw_value_[root] = value[b];
      value_sum_[root] = value[b];  // The root's own evaluation is its first visit.
      visits_[root] = 1;
      qmin_[b] = std::numeric_limits<double>::infinity();
      qmax_[b] = -std::numeric_limits<double>::infinity();
      const bool reuse = reuse_action != nullptr && reuse_action[b] >= 0;
      reuse_action_[b] = reuse ? reuse_action[b] : -1;
      reuse_value_[b] = reuse ? reuse_value[b] : 0.0;
      init_root_logits(b, prior_logits + row, gumbel != nullptr ? gumbel + row : nullptr);
    }
  }

  // One simulation's selection for every root; fills the out_* buffers. Rows that end at a terminal
  // node or at the ReZero reuse child are backed up here and get needs_eval = 0.
  void traverse() {
    const int32_t k = num_done_ + 1;  // The node this simulation may create.
    for (int32_t b = 0; b < B_; ++b) traverse_root(b, k);
    ++num_done_;
    pending_ = true;
  }

  // Creates node s + 1 for every row with needs_eval == 1 of the last traverse(), expands it unless
  // terminal, and backs its value up. legal and terminal may be null (all legal / none terminal).
  void expand_and_backup(const float* reward, const float* value, const float* prior_logits,
                         const uint8_t* legal, const uint8_t* terminal) {
    pending_ = false;
    const int32_t k = num_done_;  // traverse() already counted this simulation.
    const bool lazy = cfg_.rule == Rule::kGumbel;
    for (int32_t b = 0; b < B_; ++b) {
      if (!out_needs_eval_[b]) continue;
      const size_t leaf = slot(b, k);
      const size_t row = static_cast<size_t>(b) * A_;
      const size_t parent = static_cast<size_t>(out_parent_[b]);
      link_child(parent, out_action_[b], k, parent == slot(b, 0));
      parent_[leaf] = static_cast<int32_t>(parent - slot(b, 0));
      action_[leaf] = out_action_[b];
      reward_[leaf] = reward[b];
      raw_value_[leaf] = value[b];
      if (terminal != nullptr && terminal[b]) {
        terminal_[leaf] = 1;
      } else {
        expand(leaf, prior_logits + row, legal != nullptr ? legal + row : nullptr, lazy);
      }
      backup(b, leaf, static_cast<double>(value[b]));
    }
  }

  // Root statistics: visit_counts/qvalues/improved_policy [B, A], root_value/gumbel_action/
  // root_visits [B]. Definitions in docs/ctree.md ("Outputs").
  void outputs(int32_t* visit_counts, float* root_value, float* qvalues, float* improved_policy,
               int32_t* gumbel_action, int32_t* root_visits) {
    for (int32_t b = 0; b < B_; ++b) {
      const size_t root = slot(b, 0);
      const size_t e = root * A_;
      const size_t row = static_cast<size_t>(b) * A_;
      int64_t total = 0;
      for (int32_t a = 0; a < A_; ++a) {
        visit_counts[row + a] = edge_visits_[e + a];
        qvalues[row + a] = edge_visits_[e + a] > 0 ? static_cast<float>(edge_q_[e + a]) : 0.0f;
        total += edge_visits_[e + a];
      }
      root_value[b] = static_cast<float>(value_sum_[root] / visits_[root]);
      root_visits[b] = visits_[root];
      if (cfg_.rule == Rule::kGumbel) {
        double* sigma = scratch_.data();
        completed_sigma(root, sigma);
        // improved policy = softmax over legal actions of (logits + sigma(completed Q)).
        const uint8_t* legal = &legal_[e];
        double hi = -std::numeric_limits<double>::infinity();
        for (int32_t a = 0; a < A_; ++a) {
          if (legal[a]) hi = std::max(hi, root_logit_[row + a] + sigma[a]);
        }
        double z = 0.0;
        for (int32_t a = 0; a < A_; ++a) {
          sigma[a] = legal[a] ? fast_exp(root_logit_[row + a] + sigma[a] - hi) : 0.0;
          z += sigma[a];
        }
        for (int32_t a = 0; a < A_; ++a) improved_policy[row + a] = static_cast<float>(sigma[a] / z);
        gumbel_action[b] = gumbel_root_argmax(b, sigma_map(root), /*required_visits=*/-1);
      } else {
        const double denom = static_cast<double>(std::max<int64_t>(total, 1));
        for (int32_t a = 0; a < A_; ++a) {
          improved_policy[row + a] = static_cast<float>(edge_visits_[e + a] / denom);
        }
        gumbel_action[b] = -1;
      }
    }
  }

  // ==============================================================================================
  // Read access for the binding (zero-copy traverse outputs, node_arrays for tests).
  // ==============================================================================================
  bool pending() const { return pending_; }
  int32_t num_done() const { return num_done_; }
  int32_t* out_parent() { return out_parent_.data(); }
  int32_t* out_action() { return out_action_.data(); }
  int32_t* out_child() { return out_child_.data(); }
  uint8_t* out_needs_eval() { return out_needs_eval_.data(); }
  const int32_t* parent() const { return parent_.data(); }
  const int32_t* action() const { return action_.data(); }
  const int32_t* visits() const { return visits_.data(); }
  const double* value_sum() const { return value_sum_.data(); }
  const double* reward() const { return reward_.data(); }
  const double* raw_value() const { return raw_value_.data(); }
  const uint8_t* terminal() const { return terminal_.data(); }
  const uint8_t* expanded() const { return expanded_.data(); }
  const double* prior() const { return prior_.data(); }  // Call compute_pending_priors() first.
  // Computes the priors that expand() deferred for root b's nodes (Gumbel non-root nodes not
  // selected from twice yet), so that prior() is complete there; the search itself would compute
  // the same values when it needs them.
  void compute_pending_priors(int32_t b) {
    for (int32_t k = 0; k <= num_done_; ++k) {  // Slots past num_done_ hold an older search.
      const size_t s = slot(b, k);
      if (expanded_[s] && !prior_ready_[s]) compute_prior(s, &logit_[s * A_], /*fresh=*/false);
    }
  }
  const int32_t* child() const { return child_.data(); }
  const uint8_t* legal() const { return legal_.data(); }

 private:
  size_t slot(int32_t b, int32_t k) const { return static_cast<size_t>(b) * N_ + k; }

  // A fresh, unlinked node: what every slot looks like before its simulation creates it.
  void clear_node(size_t s) {
    parent_[s] = -1;
    action_[s] = -1;
    visits_[s] = 0;
    value_sum_[s] = 0.0;
    reward_[s] = 0.0;
    raw_value_[s] = 0.0;
    terminal_[s] = 0;
    expanded_[s] = 0;
  }

  // Gives node s its children: legal mask (null = all legal), empty edge statistics and the prior =
  // softmax over legal actions of the logits, computed once and never during selection. With
  // `lazy` (Gumbel non-root nodes) the softmax waits: the first selection from a node needs only
  // its best child, the first argmax of the legal logits, so the logits are kept and compute_prior
  // runs at the second selection; most leaves never get one. Only expanded nodes' edge arrays are
  // meaningful; others keep stale data from older searches. Every pointer is a local: with
  // -fno-strict-aliasing a store through one would otherwise force member reloads in every loop.
  void expand(size_t s, const float* logits, const uint8_t* legal, bool lazy) {
    const int32_t A = A_;
    const size_t e = s * A;
    uint8_t* lg = &legal_[e];
    int32_t num_legal = A;
    if (legal == nullptr) {  // MuZero style: every action legal, no mask tests in the loops.
      std::memset(lg, 1, static_cast<size_t>(A));
    } else {
      num_legal = 0;
      for (int32_t a = 0; a < A; ++a) {
        lg[a] = legal[a] ? 1 : 0;
        num_legal += lg[a];
      }
    }
    num_legal_[s] = num_legal;
    if (lazy) {
      std::memcpy(&logit_[e], logits, static_cast<size_t>(A) * sizeof(float));
      best_unvisited_[s] = first_argmax_legal(logits, legal != nullptr ? lg : nullptr, A);
      prior_ready_[s] = 0;
    } else {
      compute_prior(s, logits, /*fresh=*/true);
    }
    std::fill_n(&child_[e], A, -1);
    std::fill_n(&edge_visits_[e], A, 0);  // edge_q_ is not cleared: it is read only where visited.
    expanded_[s] = 1;
    num_visited_[s] = 0;
  }

  // The lowest index of the largest legal logit (lg null: all legal). exp is increasing, so this is
  // the child with the largest prior. Illegal logits may be anything (even NaN or inf).
  static int32_t first_argmax_legal(const float* logits, const uint8_t* lg, int32_t A) {
    if (lg == nullptr) {
      const float hi = max_float(logits, A);  // Exact: one of the logits.
      int32_t a = 0;
      while (logits[a] != hi) ++a;
      return a;
    }
    int32_t best = -1;
    for (int32_t a = 0; a < A; ++a) {
      if (lg[a] && (best < 0 || logits[a] > logits[best])) best = a;  // Strict >: lowest index.
    }
    return best;
  }

  // prior_ of expanded node s from its logits and legal_ row. fresh: no child visited yet (expand),
  // so the Gumbel bookkeeping comes out of the normalisation loop; otherwise it is rescanned.
  void compute_prior(size_t s, const float* logits, bool fresh) {
    const int32_t A = A_;
    const size_t e = s * A;
    const uint8_t* lg = &legal_[e];
    double* p = &prior_[e];
    double total = 0.0;
    if (num_legal_[s] == A) {
      total = fast_exp_shifted(logits, max_float(logits, A), p, A);
    } else {
      float hi = -std::numeric_limits<float>::infinity();
      for (int32_t a = 0; a < A; ++a) hi = lg[a] && logits[a] > hi ? logits[a] : hi;
      // Illegal logits may be anything (even NaN or inf): their exp is computed and discarded.
      fast_exp_shifted(logits, hi, p, A);
      for (int32_t a = 0; a < A; ++a) {
        p[a] = lg[a] ? p[a] : 0.0;
        total += p[a];
      }
    }
    const double inv_total = 1.0 / total;
    prior_ready_[s] = 1;
    if (cfg_.rule != Rule::kGumbel) {
      scale_in_place(p, A, inv_total);
    } else {
      // The Gumbel bookkeeping of find_best_unvisited, fused with the normalisation: the best
      // unvisited child is the largest prior (lowest index among equal ones; illegal priors are 0,
      // legal ones > 0) among children not created yet (all of them when fresh).
      const int32_t* kids = &child_[e];
      int32_t best = -1;
      double best_prior = 0.0, mass = 0.0;
      for (int32_t a = 0; a < A; ++a) {
        const double pa = p[a] * inv_total;
        p[a] = pa;
        const double pu = fresh || kids[a] < 0 ? pa : 0.0;
        mass += pu;
        const bool better = pu > best_prior;  // Strict >: the lowest index among equal priors.
        best_prior = better ? pu : best_prior;
        best = better ? a : best;
      }
      best_unvisited_[s] = best;
      unvisited_prior_[s] = mass;
    }
  }

  // Gumbel: the legal unvisited child of node s with the largest prior (lowest index among equal
  // priors; -1 if none) and the prior mass of all legal unvisited children, summed in index order.
  // Interior selection needs only these two of its unvisited children (they share v_mix and N = 0),
  // and they change only when a child is created, so they are kept per node instead of rescanned.
  void find_best_unvisited(size_t s) {
    const int32_t A = A_;
    const size_t e = s * A;
    const int32_t* kids = &child_[e];
    const double* p = &prior_[e];
    int32_t best = -1;
    double best_prior = 0.0, mass = 0.0;
    for (int32_t a = 0; a < A; ++a) {
      // A child exists exactly when its edge has been visited; illegal priors are 0, legal ones > 0.
      const double pa = kids[a] < 0 ? p[a] : 0.0;
      mass += pa;
      const bool better = pa > best_prior;  // Strict >: the lowest index among equal priors.
      best_prior = better ? pa : best_prior;
      best = better ? a : best;
    }
    best_unvisited_[s] = best;
    unvisited_prior_[s] = mass;
  }

  // Links node index k as child a of the node at slot `parent` (just before its first backup):
  // records the edge's first visit in the parent's visit order, and for the Gumbel rule refreshes
  // the parent's best unvisited child (the root never needs it: it selects by the schedule).
  void link_child(size_t parent, int32_t a, int32_t k, bool at_root) {
    child_[parent * A_ + a] = k;
    visit_order_[parent * A_ + num_visited_[parent]++] = a;
    if (cfg_.rule == Rule::kGumbel && !at_root && prior_ready_[parent]) find_best_unvisited(parent);
  }

  // ==============================================================================================
  // Selection.
  // ==============================================================================================
  void traverse_root(int32_t b, int32_t k) {
    const size_t base = slot(b, 0);
    const size_t new_slot = base + k;
    clear_node(new_slot);
    // Descend while the chosen child exists and is not a leaf forever (terminal / reuse).
    size_t s = base;
    int32_t a = select_root(b, k - 1);
    int32_t c = child_[s * A_ + a];
    while (c >= 0 && !terminal_[base + c]) {
      s = base + c;
      a = select_interior(b, s);
      c = child_[s * A_ + a];
    }
    out_parent_[b] = static_cast<int32_t>(s);
    out_action_[b] = a;
    out_child_[b] = static_cast<int32_t>(new_slot);
    if (c >= 0) {  // A terminal leaf: back its stored value up again.
      out_needs_eval_[b] = 0;
      backup(b, base + c, raw_value_[base + c]);
    } else if (s == base && a == reuse_action_[b]) {
      // ReZero: the reuse child becomes a terminal node whose reward is the reuse value and whose
      // value is 0, so Q(root, reuse_action) = reuse_value exactly; later visits revisit it.
      link_child(s, a, k, /*at_root=*/true);
      parent_[new_slot] = 0;
      action_[new_slot] = a;
      reward_[new_slot] = reuse_value_[b];
      terminal_[new_slot] = 1;
      out_needs_eval_[b] = 0;
      backup(b, new_slot, 0.0);
    } else {
      out_needs_eval_[b] = 1;
    }
  }

  int32_t select_root(int32_t b, int32_t sim) {
    if (cfg_.rule == Rule::kGumbel) {
      const int32_t required = schedule_[static_cast<size_t>(num_considered_[b]) * S_ + sim];
      return gumbel_root_argmax(b, sigma_map(slot(b, 0)), required);
    }
    return select_puct(b, slot(b, 0));
  }

  int32_t select_interior(int32_t b, size_t s) {
    return cfg_.rule == Rule::kGumbel ? select_gumbel_interior(s) : select_puct(b, s);
  }

  // PUCT: argmax_a Qn(a) + P(a) * sqrt(Np) / (1 + N(a)) * (pb_c_init + log((Np + pb_c_base + 1) / pb_c_base))
  // with Qn = min-max normalised Q for visited children when the root's range is non-empty, else 0.
  int32_t select_puct(int32_t b, size_t s) const {
    const int32_t A = A_;  // A local: -fno-strict-aliasing would reload the member per iteration.
    const size_t e = s * A_;
    // The exploration factor depends only on the parent's visit count (<= N): a table lookup
    // replaces sqrt and log per node; 1 / (1 + N(a)) is a table too, and the min-max division is
    // one multiplication per child.
    const double c = puct_c_[static_cast<size_t>(visits_[s])];
    const double span = qmax_[b] - qmin_[b];
    // With an empty range every Qn is 0: lo = 0 and inv_span = 0 keep (q - lo) * inv_span finite.
    const double lo = span > 0.0 ? qmin_[b] : 0.0;
    const double inv_span = span > 0.0 ? 1.0 / span : 0.0;
    const uint8_t* legal = &legal_[e];
    const int32_t* nv = &edge_visits_[e];
    const double* q = &edge_q_[e];
    const double* p = &prior_[e];
    const double* inv1p = inv_one_plus_.data();
    int32_t best = 0;
    double best_score = -std::numeric_limits<double>::infinity();
    for (int32_t a = 0; a < A; ++a) {
      const int32_t n = nv[a];
      const double qn = n > 0 ? (q[a] - lo) * inv_span : 0.0;
      const double score = qn + p[a] * c * inv1p[n];
      if (legal[a] && score > best_score) {  // Strict >: ties keep the lowest action index.
        best_score = score;
        best = a;
      }
    }
    return best;
  }

  // ==============================================================================================
  // The Gumbel rule (root: Gumbel-top-k and sequential halving; interior: the improved policy minus
  // visit share). Defined in tree_gumbel.h.
  // ==============================================================================================
  // sigma(completed Q) of one node is an affine map of its children's completed Q (Q for visited
  // children, v_mix for unvisited ones): sigma(x) = scale * (x - lo) * inv_span with the optional
  // min-max rescale over legal actions, else scale * x. One pass over the children yields the map.
  struct SigmaMap {
    double v_mix;       // Completed Q of every unvisited child.
    double scale;       // (c_visit + max_a N(a)) * c_scale.
    double lo;          // Rescale: min completed Q over legal actions (0 without rescale).
    double inv_span;    // Rescale: 1 / (max - min), 0 when all equal (1 without rescale).
    int64_t sum_n;      // Sum of child visits.
    double q_lo, q_hi;  // Min / max of the completed Q over legal actions (the range sigma maps).
    double apply(double x) const { return scale * ((x - lo) * inv_span); }
  };

  void init_root_logits(int32_t b, const float* logits, const float* gumbel);
  SigmaMap sigma_map(size_t s) const;
  SigmaMap make_sigma_map(size_t s, int64_t sum_n, int32_t max_n, double sum_pq, double sum_p, double q_lo,
                          double q_hi, bool any_unvisited) const;
  void completed_sigma(size_t s, double* sigma) const;
  int32_t select_gumbel_interior(size_t s);
  int32_t score_gumbel_interior(size_t s);
  int32_t gumbel_root_argmax(int32_t b, const SigmaMap& m, int32_t required) const;

  // ==============================================================================================
  // Backup: G = leaf value (leaf's view); per node up the parent chain: visits += 1, value_sum += G,
  // mirror the node's new N and Q into its parent's edge arrays, widen the root's min-max range with
  // that Q, then G = reward + discount * value_sign * G for the parent.
  // ==============================================================================================
  void backup(int32_t b, size_t leaf, double value) {
    const size_t base = slot(b, 0);
    double lo = qmin_[b], hi = qmax_[b];
    size_t s = leaf;
    double g = value;
    for (;;) {
      value_sum_[s] += g;
      const int32_t n = ++visits_[s];
      const int32_t parent = parent_[s];
      if (parent < 0) break;
      const double r = reward_[s];
      const double q = r + signed_discount_ * (value_sum_[s] / n);
      const size_t e = (base + parent) * A_ + action_[s];
      edge_visits_[e] = n;
      edge_q_[e] = q;
      lo = std::min(lo, q);
      hi = std::max(hi, q);
      g = r + signed_discount_ * g;
      s = base + parent;
    }
    qmin_[b] = lo;
    qmax_[b] = hi;
  }

  // ----------------------------------------------------------------------------------------------
  // Constant during search (set in the constructor).
  // ----------------------------------------------------------------------------------------------
  const TreeConfig cfg_;
  const int32_t B_, A_, S_, N_;         // N_ = S_ + 1 nodes per root.
  const int32_t m_;                     // Gumbel m clamped to [1, A].
  const double signed_discount_;        // discount * value_sign: the only place the sign enters.
  std::vector<int32_t> schedule_;       // [(m + 1) * S]: row k = considered_visit_sequence(k, S).
  std::vector<double> inv_one_plus_;    // [N + 1]: 1 / (1 + n) for every reachable child visit count n.
  std::vector<double> puct_c_;          // [N + 1]: sqrt(n) * (pb_c_init + log((n + pb_c_base + 1) / pb_c_base)).

  // ----------------------------------------------------------------------------------------------
  // Owned by caller: copied from reset()'s arguments, read-only during the search. Per root [B] or
  // per root action [B * A].
  // ----------------------------------------------------------------------------------------------
  std::vector<int32_t> reuse_action_;   // ReZero reuse root action, or -1.
  std::vector<double> reuse_value_;     // Its fixed Q from the root's view (0 when unused).
  std::vector<double> root_logit_;      // Gumbel: root logits minus their legal max; -inf if illegal.
  std::vector<double> root_score_;      // Gumbel: g + root_logit_; -inf if illegal.
  std::vector<uint8_t> considered_;     // Gumbel: 1 for the top-m legal actions of root_score_.
  std::vector<int32_t> num_considered_; // Gumbel: min(m, number of legal root actions) >= 1.

  // ----------------------------------------------------------------------------------------------
  // Mutated during search. Node arrays [B * N]; edge arrays [B * N * A] (edge a of slot s at s*A+a).
  // Valid: nodes 0..num_done_ of each root; edge arrays only of expanded nodes.
  // ----------------------------------------------------------------------------------------------
  int32_t num_done_ = 0;                // Simulations traversed so far, in [0, S].
  bool pending_ = false;                // A traverse() awaits its expand_and_backup().
  std::vector<int32_t> parent_;         // Parent node index within the root; -1: root or unused.
  std::vector<int32_t> action_;         // Action from the parent; -1: root or unused.
  std::vector<int32_t> visits_;         // Visit count; for expanded nodes 1 + sum of edge_visits_.
  std::vector<double> value_sum_;       // Sum of backed-up returns, this node's player-to-move view.
  std::vector<double> reward_;          // Reward of the move parent -> node, mover's view.
  std::vector<double> raw_value_;       // Network / terminal value at creation (0 for a reuse node).
  std::vector<uint8_t> terminal_;       // 1: a leaf forever (terminal state or reuse child).
  std::vector<uint8_t> expanded_;       // 1: prior_/legal_/edge arrays of this node are set.
  std::vector<int32_t> child_;          // Child node index, or -1 while not created.
  std::vector<int32_t> edge_visits_;    // == visits_[child] (0 if none): mirrored for contiguous scans.
  std::vector<double> edge_q_;          // == Q(node, a) from this node's view; stale while unvisited.
  std::vector<double> prior_;           // Softmax over legal actions (root: after noise); 0 if illegal.
                                        //   Valid where prior_ready_ (see expand's `lazy`).
  std::vector<float> logit_;            // Gumbel non-root: the logits kept until compute_prior.
  std::vector<uint8_t> prior_ready_;    // 1 once prior_ (and the Gumbel bookkeeping) is computed.
  std::vector<uint8_t> legal_;          // 1 for legal actions.
  std::vector<double> qmin_, qmax_;     // [B]: range of every Q backed up in root b's tree (+inf/-inf).
  std::vector<int32_t> visit_order_;    // [B * N * A]: row s lists node s's visited children in order
                                        //   of first visit (entries 0 .. num_visited_[s] - 1).
  std::vector<int32_t> num_visited_;    // Number of visited (= created) children; 0 at expansion.
  std::vector<int32_t> num_legal_;      // Number of legal actions of an expanded node.
  std::vector<int32_t> best_unvisited_; // Gumbel, non-root: legal unvisited child with the largest
                                        //   prior (lowest index among equal), -1 if none.
  std::vector<double> unvisited_prior_; // Gumbel, non-root: prior mass of the legal unvisited children.
  std::vector<double> scratch_;         // [A + 1]: sigma / weights of the node being scored.
  std::vector<double> gather_q_, gather_p_;  // [A]: Q and prior of the visited children being scored.
  std::vector<int32_t> gather_n_;       // [A]: their visit counts.

  // Outputs of the last traverse(), [B] each; the binding exposes them as zero-copy numpy views.
  std::vector<int32_t> out_parent_, out_action_, out_child_;
  std::vector<uint8_t> out_needs_eval_;
};

}  // namespace mcts
}  // namespace lzlite

#include "tree_gumbel.h"  // the Gumbel members, defined after the class
