# cython: language_level=3, boundscheck=False, wraparound=False
"""The batched game binding: one class, ``BatchGame``, over every C++ core in zoo/common/game_table.h.

This is the only file that sees both numpy and the C++ game cores. States live in a caller-owned
numpy array ``uint8 [N, state_bytes]`` (``state_bytes = sizeof(G::State)``); every method takes the
whole batch, checks dtypes/shapes once, and runs one C++ loop with the GIL released.

Step semantics (pgx-style): a running game given an illegal action raises ``IllegalActionError``
naming the batch index and the action, and no state changes (the batch is validated first); a game
that is already terminal absorbs any action: its state is unchanged, reward 0, done True.
"""
from libc.stdint cimport int8_t, int32_t, int64_t, uint8_t, uint64_t

import numpy as np

# The env contract's error (an action out of range or not legal), defined in lzlite so that lzlite
# catches it without importing the zoo; re-exported as zoo.IllegalActionError.
from lzlite.envs.base import IllegalActionError

cimport numpy as cnp
from cpython.pycapsule cimport PyCapsule_New

cnp.import_array()


cdef extern from "common/game_table.h" namespace "lz":
    ctypedef struct GameTable:
        const char* name
        int num_actions, rows, cols, obs_planes, max_moves, state_bytes
        void (*reset)(uint8_t*, int64_t, const int64_t*) noexcept nogil
        int64_t (*step)(uint8_t*, int64_t, const int64_t*, float*, uint8_t*) noexcept nogil
        void (*legal_mask)(const uint8_t*, int64_t, uint8_t*) noexcept nogil
        void (*observe)(const uint8_t*, int64_t, float*) noexcept nogil
        void (*query)(const uint8_t*, int64_t, int8_t*, uint8_t*, int8_t*, float*, uint64_t*,
                      int32_t*) noexcept nogil
        int64_t (*expand)(uint8_t*, int64_t, int64_t, const int32_t*, const int32_t*, const int32_t*,
                          float*, uint8_t*, uint8_t*, float*, int*) noexcept nogil
        uint64_t (*random_playouts)(int64_t, uint64_t) noexcept nogil
        uint64_t (*perft)(const uint8_t*, int) noexcept nogil
        int (*from_cells)(uint8_t*, const int8_t*) noexcept nogil

    const GameTable* game_tables(int* count) noexcept


def _table_names():
    cdef int count = 0
    cdef const GameTable* tables = game_tables(&count)
    return tuple(tables[i].name.decode() for i in range(count))


GAME_NAMES = _table_names()


cdef class BatchGame:
    """Batched access to one game core. Make one with ``make_batch_game(name)``.

    Attributes:
        name: the game's registry name.
        num_actions: A, the size of the full action space.
        obs_shape: (P, R, C) of one observation.
        state_bytes: bytes per state row.
        rows, cols: board shape. max_moves: an upper bound on plies per game.
    """

    cdef const GameTable* t
    cdef readonly str name
    cdef readonly int num_actions, rows, cols, state_bytes, max_moves
    cdef readonly tuple obs_shape

    def __init__(self, str name):
        cdef int count = 0
        cdef const GameTable* tables = game_tables(&count)
        for i in range(count):
            if tables[i].name.decode() == name:
                self.t = &tables[i]
                break
        else:
            raise ValueError(f"unknown game {name!r}; known games: {', '.join(GAME_NAMES)}")
        self.name = name
        self.num_actions = self.t.num_actions
        self.rows = self.t.rows
        self.cols = self.t.cols
        self.state_bytes = self.t.state_bytes
        self.max_moves = self.t.max_moves
        self.obs_shape = (self.t.obs_planes, self.t.rows, self.t.cols)

    def __repr__(self):
        return (f"BatchGame({self.name!r}, num_actions={self.num_actions}, obs_shape={self.obs_shape}, "
                f"state_bytes={self.state_bytes})")

    def __reduce__(self):
        return (BatchGame, (self.name,))

    def game_table(self):
        """The game's function table (lzlite/engine/game_api.h) as a PyCapsule named "lzlite.GameTable".

        Native lzlite code (the self-play engine) reaches the game through it; the table is static, so
        the capsule stays valid for the life of the process.
        """
        return PyCapsule_New(<void*>self.t, b"lzlite.GameTable", NULL)

    # ----------------------------------------------------------------------------- input checks
    def _states(self, states, str arg="states"):
        """The states array, checked: uint8, C-contiguous, [N, state_bytes]."""
        if not isinstance(states, np.ndarray):
            raise TypeError(f"{arg} must be a numpy uint8 array [N, {self.state_bytes}], "
                            f"got {type(states).__name__}; make one with new_states(n)")
        if states.dtype != np.uint8 or states.ndim != 2 or states.shape[1] != self.state_bytes:
            raise ValueError(f"{arg} must be uint8 [N, {self.state_bytes}] for {self.name}, got "
                             f"{states.dtype} {list(states.shape)}; make one with new_states(n)")
        if not states.flags.c_contiguous:
            raise ValueError(f"{arg} must be C-contiguous (np.ascontiguousarray), got a strided view")
        return states

    def _writable(self, states):
        self._states(states)
        if not states.flags.writeable:
            raise ValueError("states is read-only; pass a writable array (states.copy())")
        return states

    def _ints(self, values, str arg, n, dtype):
        arr = np.asarray(values)
        if arr.dtype.kind not in "iu" and not (arr.size == 0 and arr.dtype.kind == "f"):
            raise TypeError(f"{arg} must be an integer array, got dtype {arr.dtype}")
        arr = np.ascontiguousarray(arr.reshape(-1) if arr.ndim == 0 else arr, dtype=dtype)
        if arr.ndim != 1 or (n is not None and arr.shape[0] != n):
            raise ValueError(f"{arg} must have shape [{n if n is not None else 'B'}], got {list(arr.shape)}")
        return arr

    def _out(self, out, str arg, shape, dtypes):
        if out is None:
            return np.empty(shape, dtype=dtypes[0])
        if not isinstance(out, np.ndarray) or out.dtype not in dtypes or out.shape != tuple(shape) \
                or not out.flags.c_contiguous or not out.flags.writeable:
            got = f"{out.dtype} {list(out.shape)}" if isinstance(out, np.ndarray) else type(out).__name__
            raise ValueError(f"{arg} must be a writable C-contiguous {' or '.join(str(np.dtype(d)) for d in dtypes)} "
                             f"array of shape {list(shape)}, got {got}")
        return out

    # ----------------------------------------------------------------------------- state creation
    def new_states(self, Py_ssize_t n):
        """Return ``n`` initial positions as uint8 [n, state_bytes]."""
        if n < 0:
            raise ValueError(f"n must be >= 0, got {n}")
        states = np.zeros((n, self.state_bytes), dtype=np.uint8)
        self.reset(states)
        return states

    def reset(self, states, indices=None):
        """Reset every row of ``states`` (uint8 [N, state_bytes]), or only rows ``indices`` [K]."""
        self._writable(states)
        cdef uint8_t[:, ::1] s = states
        cdef int64_t n = states.shape[0]
        cdef int64_t[::1] idx
        cdef const int64_t* pidx = NULL
        if indices is not None:
            arr = self._ints(indices, "indices", None, np.int64)
            if arr.size and (arr.min() < 0 or arr.max() >= n):
                raise IndexError(f"indices must lie in [0, {n}), got values {arr.min()}..{arr.max()}")
            idx = arr
            n = arr.shape[0]
            if n:
                pidx = &idx[0]
        if n == 0 or states.shape[0] == 0:
            return
        with nogil:
            self.t.reset(&s[0, 0], n, pidx)

    # ----------------------------------------------------------------------------- stepping
    def step(self, states, actions):
        """Play ``actions`` [N] (any integer dtype) in ``states`` [N, state_bytes], in place.

        Returns:
            (rewards float32 [N] for the player who moved: +1 win else 0, done bool [N]).

        Raises:
            IllegalActionError: a running game got an illegal action (no state changed).
        """
        self._writable(states)
        cdef int64_t n = states.shape[0]
        acts = self._ints(actions, "actions", n, np.int64)
        rewards = np.zeros(n, dtype=np.float32)
        done = np.zeros(n, dtype=np.bool_)
        if n == 0:
            return rewards, done
        cdef uint8_t[:, ::1] s = states
        cdef int64_t[::1] a = acts
        cdef float[::1] r = rewards
        cdef uint8_t[::1] d = done.view(np.uint8)
        cdef int64_t bad
        with nogil:
            bad = self.t.step(&s[0, 0], n, &a[0], &r[0], &d[0])
        if bad >= 0:
            legal = np.flatnonzero(self.legal_mask(states[bad:bad + 1])[0]).tolist()
            raise IllegalActionError(f"{self.name}: game {bad} got illegal action {int(acts[bad])}; legal "
                                     f"actions there: {legal} (no state was changed)")
        return rewards, done

    def legal_mask(self, states, out=None):
        """Boolean legal-action mask [N, A] (all False for terminal games)."""
        self._states(states)
        cdef int64_t n = states.shape[0]
        out = self._out(out, "out", (n, self.num_actions), (np.bool_, np.uint8))
        if n == 0:
            return out
        cdef const uint8_t[:, ::1] s = states
        cdef uint8_t[:, ::1] o = out.view(np.uint8)
        with nogil:
            self.t.legal_mask(&s[0, 0], n, &o[0, 0])
        return out

    def observe(self, states, out=None):
        """Observations float32 [N, P, R, C]: own stones, opponent stones, constant to_play plane."""
        self._states(states)
        cdef int64_t n = states.shape[0]
        out = self._out(out, "out", (n,) + self.obs_shape, (np.float32,))
        if n == 0:
            return out
        cdef const uint8_t[:, ::1] s = states
        cdef float[:, :, :, ::1] o = out
        with nogil:
            self.t.observe(&s[0, 0], n, &o[0, 0, 0, 0])
        return out

    def _query(self, states, field):
        self._states(states)
        cdef int64_t n = states.shape[0]
        dtypes = dict(to_play=np.int8, terminal=np.bool_, winner=np.int8, value=np.float32,
                      hash=np.uint64, num_moves=np.int32)
        out = np.zeros(n, dtype=dtypes[field])
        if n == 0:
            return out
        cdef const uint8_t[:, ::1] s = states
        cdef int8_t* tp = NULL
        cdef uint8_t* term = NULL
        cdef int8_t* win = NULL
        cdef float* val = NULL
        cdef uint64_t* h = NULL
        cdef int32_t* mv = NULL
        cdef cnp.ndarray buf = out
        if field == "to_play":
            tp = <int8_t*>buf.data
        elif field == "terminal":
            term = <uint8_t*>buf.data
        elif field == "winner":
            win = <int8_t*>buf.data
        elif field == "value":
            val = <float*>buf.data
        elif field == "hash":
            h = <uint64_t*>buf.data
        else:
            mv = <int32_t*>buf.data
        with nogil:
            self.t.query(&s[0, 0], n, tp, term, win, val, h, mv)
        return out

    def to_play(self, states):
        """Player to move, int8 [N] (0: first player)."""
        return self._query(states, "to_play")

    def is_terminal(self, states):
        """bool [N]: won or drawn."""
        return self._query(states, "terminal")

    def winner(self, states):
        """int8 [N]: 0 or 1 for the winner, -1 for none (running or drawn)."""
        return self._query(states, "winner")

    def terminal_value(self, states):
        """float32 [N] for the player to move: -1 lost (terminal), 0 draw or running."""
        return self._query(states, "value")

    def hash(self, states):
        """uint64 [N] position hashes (equal positions give equal hashes)."""
        return self._query(states, "hash")

    def num_moves(self, states):
        """int32 [N] plies played."""
        return self._query(states, "num_moves")

    # ----------------------------------------------------------------------------- search hook
    def expand_slots(self, states, parent, child, actions, obs_out, legal_out, terminal_out, value_out):
        """The AlphaZero search hook, one call per simulation batch.

        For each b: ``states[child[b]] = states[parent[b]]``, then play ``actions[b]`` there, and write
        the child's observation, legal mask, terminal flag and terminal value (for the player to move).

        Args:
            states: uint8 [N_slots, state_bytes], modified in place (child rows only).
            parent, child, actions: int32 [B].
            obs_out: float32 [B, P, R, C]. legal_out: bool or uint8 [B, A].
            terminal_out: bool or uint8 [B]. value_out: float32 [B].

        Raises:
            IndexError: a slot outside [0, N_slots). IllegalActionError: an illegal action.
            Both are detected before any row changes.
        """
        self._writable(states)
        cdef int64_t n_slots = states.shape[0]
        cdef int64_t B
        for arg, arr in (("parent", parent), ("child", child), ("actions", actions)):
            if not isinstance(arr, np.ndarray) or arr.dtype != np.int32 or arr.ndim != 1 \
                    or not arr.flags.c_contiguous:
                got = f"{arr.dtype} {list(arr.shape)}" if isinstance(arr, np.ndarray) else type(arr).__name__
                raise TypeError(f"{arg} must be a C-contiguous int32 array [B], got {got}")
        B = parent.shape[0]
        if child.shape[0] != B or actions.shape[0] != B:
            raise ValueError(f"parent, child and actions must all have shape [B]; got {parent.shape[0]}, "
                             f"{child.shape[0]}, {actions.shape[0]}")
        self._out(obs_out, "obs_out", (B,) + self.obs_shape, (np.float32,))
        self._out(legal_out, "legal_out", (B, self.num_actions), (np.bool_, np.uint8))
        self._out(terminal_out, "terminal_out", (B,), (np.bool_, np.uint8))
        self._out(value_out, "value_out", (B,), (np.float32,))
        if B == 0:
            return
        cdef uint8_t[:, ::1] s = states
        cdef const int32_t[::1] p = parent
        cdef const int32_t[::1] c = child
        cdef const int32_t[::1] a = actions
        cdef float[:, :, :, ::1] o = obs_out
        cdef uint8_t[:, ::1] lg = legal_out.view(np.uint8)
        cdef uint8_t[::1] te = terminal_out.view(np.uint8)
        cdef float[::1] v = value_out
        cdef int kind = 0
        cdef int64_t bad
        with nogil:
            bad = self.t.expand(&s[0, 0], n_slots, B, &p[0], &c[0], &a[0], &o[0, 0, 0, 0], &lg[0, 0],
                                &te[0], &v[0], &kind)
        if bad >= 0:
            if kind == 1:
                raise IndexError(f"expand_slots: entry {bad} has parent {parent[bad]} / child {child[bad]}; "
                                 f"slots must lie in [0, {n_slots})")
            raise IllegalActionError(f"{self.name}: expand_slots entry {bad} (parent slot {parent[bad]}) got "
                                     f"illegal action {actions[bad]}")

    # ----------------------------------------------------------------------------- benchmarks, tests
    def random_playouts(self, int64_t n_games, uint64_t seed):
        """Play ``n_games`` uniformly random games in C++ (GIL released); return the total plies."""
        cdef uint64_t total
        with nogil:
            total = self.t.random_playouts(n_games, seed)
        return int(total)

    def perft(self, state_row, int depth):
        """Number of move sequences of length ``depth`` from ``state_row`` (uint8 [state_bytes])."""
        row = self._states(np.asarray(state_row).reshape(1, -1), "state_row")
        if depth < 0:
            raise ValueError(f"depth must be >= 0, got {depth}")
        cdef const uint8_t[:, ::1] s = row
        cdef uint64_t total
        with nogil:
            total = self.t.perft(&s[0, 0], depth)
        return int(total)

    # ----------------------------------------------------------------------------- text notation
    def render(self, state_row):
        """The board as text, top row first: 'X' first player, 'O' second, '.' empty."""
        row = self._states(np.asarray(state_row).reshape(1, -1), "state_row")
        obs = self.observe(row)[0]
        x_plane = obs[0] if self.to_play(row)[0] == 0 else obs[1]
        o_plane = obs[1] if self.to_play(row)[0] == 0 else obs[0]
        lines = []
        for r in range(self.rows):
            lines.append(" ".join("X" if x_plane[r, c] else "O" if o_plane[r, c] else "."
                                  for c in range(self.cols)))
        return "\n".join(lines)

    def parse(self, str text):
        """Parse ``render``'s notation into a state row uint8 [state_bytes].

        The player to move follows from the stone counts (X moves first); a finished line sets the
        winner. Raises ValueError for a malformed board, inconsistent counts, two winners, play after a
        win, or (connect4) floating stones.
        """
        rows = [line.replace(" ", "").replace("\t", "") for line in text.strip().splitlines()]
        rows = [r for r in rows if r]
        if len(rows) != self.rows:
            raise ValueError(f"{self.name} text must have {self.rows} rows of {self.cols} cells, got "
                             f"{len(rows)} rows")
        cells = np.full((self.rows, self.cols), -1, dtype=np.int8)
        for r, line in enumerate(rows):
            if len(line) != self.cols:
                raise ValueError(f"{self.name} row {r} ({line!r}) has {len(line)} cells, expected {self.cols}")
            for c, ch in enumerate(line.upper()):
                if ch not in "XO.":
                    raise ValueError(f"{self.name} row {r} col {c}: unexpected {ch!r}; use X, O or .")
                cells[r, c] = {"X": 0, "O": 1, ".": -1}[ch]
        n_x, n_o = int((cells == 0).sum()), int((cells == 1).sum())
        if n_x not in (n_o, n_o + 1):
            raise ValueError(f"{self.name}: {n_x} X and {n_o} O stones; X moves first, so X must equal O "
                             f"or O + 1")
        if self.name == "connect4":
            for c in range(self.cols):
                col = cells[:, c]
                filled = np.flatnonzero(col >= 0)
                if filled.size and filled[0] + filled.size != self.rows:
                    raise ValueError(f"connect4 column {c} has a floating stone (gravity): stones must "
                                     f"stack from the bottom row up")
        out = np.zeros((1, self.state_bytes), dtype=np.uint8)
        cdef uint8_t[:, ::1] o = out
        cdef int8_t[:, ::1] cv = cells
        cdef int lines = self.t.from_cells(&o[0, 0], &cv[0, 0])
        if lines == 3:
            raise ValueError(f"{self.name}: both players have a winning line; not a reachable position")
        if lines == 1 and n_x != n_o + 1:
            raise ValueError(f"{self.name}: X has a winning line but O moved after it")
        if lines == 2 and n_x != n_o:
            raise ValueError(f"{self.name}: O has a winning line but X moved after it")
        return out[0]


def make_batch_game(str name) -> BatchGame:
    """Return the ``BatchGame`` for ``name`` (one of ``GAME_NAMES``)."""
    return BatchGame(name)
