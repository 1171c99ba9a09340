"""The pure-numpy search tree: the executable specification of docs/ctree.md.

Written for clarity first; every per-node loop is vectorised over the batch of roots. The C++ tree
(lzlite.mcts.ctree) must reproduce this class exactly: same visit counts and actions, values within
float tolerance. All arithmetic is float64; outputs are cast to float32.

Storage is struct-of-arrays, preallocated once per (B, A, S): root b owns nodes b*N .. b*N + N - 1
(N = S + 1); node 0 of a root is the root, the node created by simulation s is node s + 1.
"""
from __future__ import annotations

import numpy as np

from lzlite.mcts.ptree import checks
from lzlite.mcts.ptree.gumbel import completed_q_sigma, considered_visit_sequence, masked_softmax

__all__ = ["Tree"]

RULES = ("puct", "gumbel")


class Tree:
    """A batch of B search trees over a full action space of A actions, S simulations each.

    Usage per search: reset(...) once, then S times: traverse() -> evaluate the rows with
    needs_eval == 1 -> expand_and_backup(...); finally outputs().
    """

    def __init__(self, batch_size: int, num_actions: int, num_simulations: int, *, rule: str = "puct",
                 pb_c_base: float = 19652.0, pb_c_init: float = 1.25, discount: float = 0.997,
                 value_sign: float = -1.0, max_num_considered_actions: int = 16, c_visit: float = 50.0,
                 c_scale: float = 1.0, rescale_values: bool = False):
        if rule not in RULES:
            raise ValueError(f"rule must be one of {RULES}, got {rule!r}")
        for name, val in (("batch_size", batch_size), ("num_actions", num_actions),
                          ("num_simulations", num_simulations), ("max_num_considered_actions",
                                                                 max_num_considered_actions)):
            if not isinstance(val, (int, np.integer)) or isinstance(val, bool) or val < 1:
                raise ValueError(f"{name} must be an int >= 1, got {val!r}")
        if value_sign not in (-1.0, 1.0):
            raise ValueError(f"value_sign must be -1.0 (two-player alternating) or +1.0 (single-player), "
                             f"got {value_sign!r}")
        for name, val in (("pb_c_base", pb_c_base), ("pb_c_init", pb_c_init), ("discount", discount),
                          ("c_visit", c_visit), ("c_scale", c_scale)):
            if not np.isfinite(val):
                raise ValueError(f"{name} must be finite, got {val!r}")
        if pb_c_base <= 0:
            raise ValueError(f"pb_c_base must be > 0, got {pb_c_base}")
        self.batch_size = B = int(batch_size)
        self.num_actions = A = int(num_actions)
        self.num_simulations = S = int(num_simulations)
        self.num_nodes = N = S + 1
        self.rule = rule
        self.pb_c_base = float(pb_c_base)
        self.pb_c_init = float(pb_c_init)
        self.discount = float(discount)
        self.value_sign = float(value_sign)
        self.max_num_considered_actions = int(max_num_considered_actions)
        self.c_visit = float(c_visit)
        self.c_scale = float(c_scale)
        self.rescale_values = bool(rescale_values)

        # Per node [B, N] (mutated during search).
        self.parent = np.full((B, N), -1, np.int32)      # node index of the parent; -1: root or unused
        self.action = np.full((B, N), -1, np.int32)      # action that led here from the parent
        self.visits = np.zeros((B, N), np.int32)         # 0 <=> node unused
        self.value_sum = np.zeros((B, N), np.float64)    # sum of returns, this node's player-to-move view
        self.reward = np.zeros((B, N), np.float64)       # reward of parent -> node, mover's view
        self.raw_value = np.zeros((B, N), np.float64)    # network (or terminal / 0 for reuse) value
        self.expanded = np.zeros((B, N), bool)           # has priors and may get children
        self.terminal = np.zeros((B, N), bool)           # a leaf forever: terminal state or ReZero reuse child
        # Per node and action [B, N, A].
        self.prior = np.zeros((B, N, A), np.float64)     # PUCT prior probabilities (root: after noise)
        self.logits = np.full((B, N, A), -np.inf)        # logits minus their legal max; -inf if illegal
        self.legal = np.zeros((B, N, A), bool)
        self.children = np.full((B, N, A), -1, np.int32)
        # Per root (constant during a search, set by reset).
        self.qmin = np.full(B, np.inf)                   # min-max stats over the Q values backed up
        self.qmax = np.full(B, -np.inf)
        self.gumbel = np.zeros((B, A))
        self.considered = np.zeros((B, A), bool)         # Gumbel: the top-m actions of g + logits
        self.schedule = np.zeros((B, S), np.int64)       # Gumbel: required child visits per simulation
        self.reuse_action = np.full(B, -1, np.int64)
        self.reuse_value = np.zeros(B)
        # Search progress and the pending simulation (owned by the tree, returned to the caller).
        self._sim = 0
        self._ready = False
        self._pending = False
        self._parent_slot = np.zeros(B, np.int32)
        self._action = np.zeros(B, np.int32)
        self._child_slot = np.zeros(B, np.int32)
        self._needs_eval = np.zeros(B, np.uint8)
        self._path = np.full((B, N + 1), -1, np.int64)  # node index per depth of the pending path
        self._depth = np.zeros(B, np.int64)              # depth of each row's leaf in _path
        self._rows = np.arange(B)

    # ------------------------------------------------------------------ reset
    def reset(self, prior_logits, value, legal_mask, *, noise=None, noise_weight: float = 0.0, gumbel=None,
              reuse_action=None, reuse_value=None) -> None:
        """Starts a new search from B roots. See docs/ctree.md for every argument's contract."""
        B, A = self.batch_size, self.num_actions
        all_rows = np.ones(B, bool)
        logits = checks.as_float("prior_logits", prior_logits, (B, A))
        value = checks.as_float("value", value, (B,))
        legal = checks.as_mask("legal_mask", legal_mask, (B, A))
        checks.check_nonempty_rows("legal_mask", legal, all_rows)
        checks.check_finite_rows("value", value, all_rows)
        checks.check_finite_rows("prior_logits", logits, all_rows, where=legal)
        if noise is not None:
            if self.rule != "puct":
                raise ValueError("noise (Dirichlet) is for rule 'puct'; rule 'gumbel' explores with `gumbel`")
            noise = checks.as_float("noise", noise, (B, A))
            checks.check_finite_rows("noise", noise, all_rows)
            if not 0.0 <= noise_weight <= 1.0:
                raise ValueError(f"noise_weight must be in [0, 1], got {noise_weight}")
        if gumbel is not None:
            if self.rule != "gumbel":
                raise ValueError("gumbel noise is for rule 'gumbel'; rule 'puct' explores with `noise`")
            gumbel = checks.as_float("gumbel", gumbel, (B, A))
            checks.check_finite_rows("gumbel", gumbel, all_rows, where=legal)
        if (reuse_action is None) != (reuse_value is None):
            raise ValueError("reuse_action and reuse_value must be given together (or both None)")
        if reuse_action is not None:
            reuse_action = checks.as_int("reuse_action", reuse_action, (B,))
            reuse_value = checks.as_float("reuse_value", reuse_value, (B,))
            on = reuse_action >= 0
            if (reuse_action < -1).any() or (reuse_action >= A).any():
                bad = int(np.flatnonzero((reuse_action < -1) | (reuse_action >= A))[0])
                raise ValueError(f"reuse_action[{bad}] = {reuse_action[bad]} is out of range; expected -1 (none) "
                                 f"or an action in [0, {A})")
            if (on & ~legal[self._rows, np.clip(reuse_action, 0, A - 1)]).any():
                bad = int(np.flatnonzero(on & ~legal[self._rows, np.clip(reuse_action, 0, A - 1)])[0])
                raise ValueError(f"reuse_action[{bad}] = {reuse_action[bad]} is illegal at root {bad}")
            checks.check_finite_rows("reuse_value", reuse_value, on)

        for arr, fill in ((self.parent, -1), (self.action, -1), (self.visits, 0), (self.value_sum, 0.0),
                          (self.reward, 0.0), (self.raw_value, 0.0), (self.expanded, False),
                          (self.terminal, False), (self.prior, 0.0), (self.logits, -np.inf),
                          (self.legal, False), (self.children, -1), (self.qmin, np.inf), (self.qmax, -np.inf),
                          (self.gumbel, 0.0), (self.considered, False), (self.reuse_action, -1),
                          (self.reuse_value, 0.0)):
            arr.fill(fill)
        self._set_priors(self._rows, np.zeros(B, np.int64), logits, legal)
        if noise is not None:
            mixed = (1.0 - noise_weight) * self.prior[:, 0] + noise_weight * noise
            self.prior[:, 0] = np.where(legal, mixed, 0.0)
        self.raw_value[:, 0] = value
        self.value_sum[:, 0] = value   # the root's own evaluation is its first visit
        self.visits[:, 0] = 1
        if reuse_action is not None:
            self.reuse_action[:] = reuse_action
            self.reuse_value[:] = np.where(reuse_action >= 0, reuse_value, 0.0)
        if self.rule == "gumbel":
            if gumbel is not None:
                self.gumbel[:] = np.where(legal, gumbel, 0.0)
            self._choose_considered(legal)
        self._sim = 0
        self._ready = True
        self._pending = False

    def _set_priors(self, rows: np.ndarray, nodes: np.ndarray, logits: np.ndarray, legal: np.ndarray) -> None:
        """Expands nodes: stores legal mask, normalised logits and softmax prior."""
        self.legal[rows, nodes] = legal
        shifted = np.where(legal, logits, -np.inf)
        shifted = shifted - shifted.max(axis=-1, keepdims=True)
        self.logits[rows, nodes] = shifted
        self.prior[rows, nodes] = masked_softmax(logits, legal)
        self.expanded[rows, nodes] = True

    def _choose_considered(self, legal: np.ndarray) -> None:
        """Gumbel-top-m at the root (ties: lowest index) and each root's halving schedule."""
        m = np.minimum(self.max_num_considered_actions, legal.sum(axis=1))
        score = np.where(legal, self.gumbel + self.logits[:, 0], -np.inf)
        order = np.argsort(-score, axis=1, kind="stable")   # stable: equal scores keep index order
        for b in range(self.batch_size):
            self.considered[b, order[b, :m[b]]] = True
            self.schedule[b] = considered_visit_sequence(int(m[b]), self.num_simulations)

    # --------------------------------------------------------------- children
    def _child_stats(self, rows: np.ndarray, nodes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Visit counts [k, A] and Q [k, A] (parent's view; 0 where unvisited) of the nodes' children."""
        child = self.children[rows, nodes]
        safe = np.maximum(child, 0)
        r = rows[:, None]
        visits = np.where(child >= 0, self.visits[r, safe], 0)
        mean = self.value_sum[r, safe] / np.maximum(visits, 1)
        q = self.reward[r, safe] + self.discount * self.value_sign * mean
        return visits, np.where(visits > 0, q, 0.0)

    def _sigma(self, rows: np.ndarray, nodes: np.ndarray, visits: np.ndarray, q: np.ndarray) -> np.ndarray:
        return completed_q_sigma(q, visits, self.prior[rows, nodes], self.raw_value[rows, nodes],
                                 self.legal[rows, nodes], c_visit=self.c_visit, c_scale=self.c_scale,
                                 rescale_values=self.rescale_values)

    def _select(self, rows: np.ndarray, nodes: np.ndarray, at_root: bool) -> np.ndarray:
        """The action chosen at each (row, node); every node here is expanded and not terminal."""
        visits, q = self._child_stats(rows, nodes)
        legal = self.legal[rows, nodes]
        if self.rule == "puct":
            lo, hi = self.qmin[rows, None], self.qmax[rows, None]
            span = hi - lo
            qn = np.where((visits > 0) & (span > 0), (q - lo) / np.where(span > 0, span, 1.0), 0.0)
            n_parent = self.visits[rows, nodes].astype(np.float64)[:, None]
            pb_c = self.pb_c_init + np.log((n_parent + self.pb_c_base + 1.0) / self.pb_c_base)
            score = qn + self.prior[rows, nodes] * np.sqrt(n_parent) / (1.0 + visits) * pb_c
        elif at_root:
            sigma = self._sigma(rows, nodes, visits, q)
            target = self.schedule[rows, self._sim][:, None]
            legal = legal & self.considered[rows] & (visits == target)
            if not legal.any(axis=1).all():   # cannot happen while the schedule is followed
                raise RuntimeError("Gumbel root: no considered action has the scheduled visit count")
            score = self.gumbel[rows] + self.logits[rows, nodes] + sigma
        else:
            sigma = self._sigma(rows, nodes, visits, q)
            pi = masked_softmax(self.logits[rows, nodes] + sigma, legal)
            score = pi - visits / (1.0 + visits.sum(axis=1, keepdims=True))
        return np.argmax(np.where(legal, score, -np.inf), axis=1)   # argmax: first max = lowest index

    # --------------------------------------------------------------- traverse
    def traverse(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Selects one leaf per root; see docs/ctree.md. Returns (parent_slot, action, child_slot, needs_eval)."""
        if not self._ready:
            raise RuntimeError("call reset() before traverse()")
        if self._pending:
            raise RuntimeError("traverse() called twice without expand_and_backup() in between")
        if self._sim >= self.num_simulations:
            raise RuntimeError(f"traverse() called more than num_simulations={self.num_simulations} times; "
                               f"call reset() to start a new search")
        B, N = self.batch_size, self.num_nodes
        k = self._sim + 1                 # the node this simulation may create
        path, depth = self._path, self._depth
        path.fill(-1)
        path[:, 0] = 0
        depth.fill(0)
        parent = np.zeros(B, np.int64)
        act = np.zeros(B, np.int64)
        new = np.zeros(B, bool)           # the leaf is node k, still to be created
        active = np.ones(B, bool)         # still descending
        while active.any():
            rows = np.flatnonzero(active)
            node = path[rows, depth[rows]]
            a = self._select(rows, node, at_root=bool(depth[rows[0]] == 0))
            child = self.children[rows, node, a]
            parent[rows], act[rows] = node, a
            depth[rows] += 1
            path[rows, depth[rows]] = np.where(child >= 0, child, k)
            new[rows] = child < 0
            # Stop at a new child, or at a child that is a leaf forever (terminal / reuse).
            active[rows[(child < 0) | self.terminal[rows, np.maximum(child, 0)]]] = False
        self._parent_slot[:] = self._rows * N + parent
        self._action[:] = act
        self._child_slot[:] = self._rows * N + k
        # A reuse child selected for the first time becomes a terminal node with reward = reuse value
        # and value 0, so that Q(root, reuse_action) = reuse_value exactly.
        first_reuse = new & (parent == 0) & (act == self.reuse_action)
        if first_reuse.any():
            r = np.flatnonzero(first_reuse)
            self._link(r, parent[r], act[r], k)
            self.reward[r, k] = self.reuse_value[r]
            self.terminal[r, k] = True
        done = ~new | first_reuse         # ends at a terminal or reuse node: no network call
        self._needs_eval[:] = ~done
        if done.any():
            r = np.flatnonzero(done)
            self._backup(r, self.raw_value[r, path[r, depth[r]]])
        self._pending = True
        return self._parent_slot, self._action, self._child_slot, self._needs_eval

    def _link(self, rows: np.ndarray, parents: np.ndarray, actions: np.ndarray, k: int) -> None:
        self.children[rows, parents, actions] = k
        self.parent[rows, k] = parents
        self.action[rows, k] = actions

    # ------------------------------------------------------------------ backup
    def _backup(self, rows: np.ndarray, leaf_value: np.ndarray) -> None:
        """Adds one visit along each row's pending path, starting from the leaf's value (leaf's view)."""
        depth = self._depth[rows]
        g = leaf_value.astype(np.float64).copy()
        for d in range(int(depth.max()), -1, -1):
            on = depth >= d
            r, gd = rows[on], g[on]
            nodes = self._path[r, d]
            self.value_sum[r, nodes] += gd
            self.visits[r, nodes] += 1
            if d > 0:
                # Q of this node from its parent's view, now updated: feeds the min-max stats.
                q = self.reward[r, nodes] + self.discount * self.value_sign * (
                    self.value_sum[r, nodes] / self.visits[r, nodes])
                self.qmin[r] = np.minimum(self.qmin[r], q)
                self.qmax[r] = np.maximum(self.qmax[r], q)
                g[on] = self.reward[r, nodes] + self.discount * self.value_sign * gd

    def expand_and_backup(self, reward, value, prior_logits, legal_mask=None, terminal=None) -> None:
        """Creates node s + 1 for every row with needs_eval == 1 and backs its value up to the root."""
        if not self._pending:
            raise RuntimeError("expand_and_backup() must follow traverse()")
        B, A = self.batch_size, self.num_actions
        rows_mask = self._needs_eval.astype(bool)
        reward = checks.as_float("reward", reward, (B,))
        value = checks.as_float("value", value, (B,))
        logits = checks.as_float("prior_logits", prior_logits, (B, A))
        legal = np.ones((B, A), bool) if legal_mask is None else checks.as_mask("legal_mask", legal_mask, (B, A))
        term = np.zeros(B, bool) if terminal is None else checks.as_mask("terminal", terminal, (B,))
        live = rows_mask & ~term
        checks.check_finite_rows("reward", reward, rows_mask)
        checks.check_finite_rows("value", value, rows_mask)
        checks.check_nonempty_rows("legal_mask", legal, live)
        checks.check_finite_rows("prior_logits", logits, live, where=legal)
        self._pending = False
        k = self._sim + 1
        self._sim += 1
        if not rows_mask.any():
            return
        r = np.flatnonzero(rows_mask)
        parents = (self._parent_slot[r] - r * self.num_nodes).astype(np.int64)
        self._link(r, parents, self._action[r].astype(np.int64), k)
        self.reward[r, k] = reward[r]
        self.raw_value[r, k] = value[r]
        self.terminal[r, k] = term[r]
        lr = np.flatnonzero(live)
        if len(lr):
            self._set_priors(lr, np.full(len(lr), k, np.int64), logits[lr], legal[lr])
        self._backup(r, value[r])

    # ----------------------------------------------------------------- outputs
    def outputs(self) -> dict:
        """Root statistics; see docs/ctree.md for the exact definitions."""
        if not self._ready:
            raise RuntimeError("call reset() before outputs()")
        rows, root = self._rows, np.zeros(self.batch_size, np.int64)
        visits, q = self._child_stats(rows, root)
        legal = self.legal[:, 0]
        root_visits = self.visits[:, 0]
        out = {
            "visit_counts": visits.astype(np.int32),
            "root_value": (self.value_sum[:, 0] / root_visits).astype(np.float32),
            "qvalues": q.astype(np.float32),
            "root_visits": root_visits.astype(np.int32),
        }
        if self.rule == "gumbel":
            sigma = self._sigma(rows, root, visits, q)
            out["improved_policy"] = masked_softmax(self.logits[:, 0] + sigma, legal).astype(np.float32)
            most = np.where(self.considered, visits, -1).max(axis=1, keepdims=True)
            eligible = self.considered & (visits == most)
            score = np.where(eligible, self.gumbel + self.logits[:, 0] + sigma, -np.inf)
            out["gumbel_action"] = np.argmax(score, axis=1).astype(np.int32)
        else:
            total = visits.sum(axis=1, keepdims=True)
            out["improved_policy"] = (visits / np.maximum(total, 1)).astype(np.float32)
            out["gumbel_action"] = np.full(self.batch_size, -1, np.int32)
        return out

    def node_arrays(self, b: int) -> dict:
        """Copies of root b's node arrays for the nodes created so far (nodes 0 .. s)."""
        if not 0 <= b < self.batch_size:
            raise ValueError(f"b must be in [0, {self.batch_size}), got {b}")
        n = self._sim + 1
        return {
            "parent": self.parent[b, :n].copy(), "action": self.action[b, :n].copy(),
            "visits": self.visits[b, :n].copy(), "value_sum": self.value_sum[b, :n].copy(),
            "reward": self.reward[b, :n].copy(), "raw_value": self.raw_value[b, :n].copy(),
            "expanded": self.expanded[b, :n].copy(), "terminal": self.terminal[b, :n].copy(),
            "prior": self.prior[b, :n].copy(), "legal": self.legal[b, :n].copy(),
            "children": self.children[b, :n].copy(),
        }
