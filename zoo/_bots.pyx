# cython: language_level=3, boundscheck=False, wraparound=False
"""Native bots and the Connect Four solver (zoo/common/bots.h, zoo/connect4/solver.h).

The only file that sees both numpy and the bot C++. States are rows of the batched game binding
(``zoo._zoo.BatchGame``): ``uint8 [state_bytes]`` or ``uint8 [N, state_bytes]``. The friendly API is
zoo/bots.py; this module checks shapes once per call and runs the C++ loop with the GIL released.
"""
from libc.stdint cimport int32_t, int64_t, uint8_t, uint64_t
from libcpp cimport bool as cbool

import numpy as np


cdef extern from "common/game.h" namespace "lz":
    cdef cppclass Rng:
        uint64_t state
        Rng(uint64_t seed)


cdef extern from "tictactoe/tictactoe.h" namespace "lz":
    cdef cppclass TicTacToe:
        pass

cdef extern from "connect4/connect4.h" namespace "lz":
    cdef cppclass Connect4:
        pass

cdef extern from "gomoku/gomoku.h" namespace "lz":
    cdef cppclass Gomoku:
        pass


cdef extern from "common/bots.h" namespace "lz::bots":
    int state_bytes[G]() noexcept nogil
    cbool row_is_terminal[G](const uint8_t* row) noexcept nogil
    void act_batch[G](const uint8_t* rows, int64_t n, int kind, int depth, Rng& rng, int32_t* out) noexcept nogil
    int optimal_moves[G](const uint8_t* row, uint8_t* mask_out) noexcept nogil


cdef extern from "connect4/solver.h" namespace "lz::c4":
    cdef cppclass Position:
        int moves
    cdef cppclass Solver:
        Solver(int log2_tt_entries) except +
        int solve(const Position& p, cbool weak) noexcept nogil
        void move_scores(const Position& p, int* scores, uint8_t* valid, cbool weak) noexcept nogil
        int64_t nodes() noexcept
        void reset() noexcept
    Position from_bytes(const uint8_t* row) noexcept nogil
    cbool c4_row_is_terminal "lz::c4::row_is_terminal"(const uint8_t* row) noexcept nogil


GAMES = ("tictactoe", "connect4", "gomoku")
KINDS = {"random": 0, "rule": 1, "alpha_beta": 2}
# Games whose full-depth search is feasible (optimal_moves); connect4 goes through the solver.
_FULL_SEARCH = ("tictactoe",)


cdef int _game_id(str game_name) except -1:
    if game_name not in GAMES:
        raise ValueError(f"unknown game {game_name!r}; bots know {list(GAMES)}")
    return GAMES.index(game_name)


def game_state_bytes(str game_name) -> int:
    """Bytes per state row of ``game_name`` (equals ``BatchGame.state_bytes``)."""
    cdef int g = _game_id(game_name)
    if g == 0:
        return state_bytes[TicTacToe]()
    if g == 1:
        return state_bytes[Connect4]()
    return state_bytes[Gomoku]()


def as_rows(str game_name, states, str arg="states"):
    """Validate ``states`` as uint8 [N, state_bytes] (a single row [state_bytes] becomes [1, ...])."""
    width = game_state_bytes(game_name)
    arr = np.asarray(states)
    if arr.dtype != np.uint8:
        raise ValueError(f"{arg} must be uint8 rows of a {game_name} BatchGame, got dtype {arr.dtype}")
    if arr.ndim == 1:
        arr = arr.reshape(1, -1)
    if arr.ndim != 2 or arr.shape[1] != width:
        raise ValueError(f"{arg} must have shape [N, {width}] (or [{width}]) for {game_name}, got "
                         f"{np.asarray(states).shape}; pass rows of make_batch_game({game_name!r})")
    return np.ascontiguousarray(arr)


def is_terminal_rows(str game_name, states):
    """bool [N]: whether each row is a finished game."""
    cdef int g = _game_id(game_name)
    cdef const uint8_t[:, ::1] s = as_rows(game_name, states)
    out = np.zeros(s.shape[0], dtype=np.uint8)
    cdef uint8_t[::1] o = out
    cdef int64_t i
    for i in range(s.shape[0]):
        if g == 0:
            o[i] = row_is_terminal[TicTacToe](&s[i, 0])
        elif g == 1:
            o[i] = row_is_terminal[Connect4](&s[i, 0])
        else:
            o[i] = row_is_terminal[Gomoku](&s[i, 0])
    return out.view(np.bool_)


cdef class NativeBot:
    """One bot kind for one game, holding its own seeded generator (advanced by every call).

    Args:
        game_name: one of GAMES.
        kind: 'random', 'rule' or 'alpha_beta'.
        depth: alpha-beta depth in plies (-1: to the end of the game); ignored by other kinds.
        seed: generator seed; equal seeds and call sequences give equal moves.
    """
    cdef Rng* rng
    cdef int game, kind_id
    cdef readonly int depth
    cdef readonly str game_name, kind

    def __cinit__(self, str game_name, str kind, int depth=1, uint64_t seed=0):
        self.game = _game_id(game_name)
        if kind not in KINDS:
            raise ValueError(f"unknown bot kind {kind!r}; expected one of {list(KINDS)}")
        self.kind_id = KINDS[kind]
        self.game_name, self.kind, self.depth = game_name, kind, depth
        self.rng = new Rng(seed)

    def __dealloc__(self):
        del self.rng

    def act_batch(self, states):
        """int32 [N]: one move per row of uint8 [N, state_bytes]; -1 for finished games."""
        cdef const uint8_t[:, ::1] s = as_rows(self.game_name, states)
        cdef int64_t n = s.shape[0]
        out = np.full(n, -1, dtype=np.int32)
        if n == 0:
            return out
        cdef int32_t[::1] o = out
        with nogil:
            if self.game == 0:
                act_batch[TicTacToe](&s[0, 0], n, self.kind_id, self.depth, self.rng[0], &o[0])
            elif self.game == 1:
                act_batch[Connect4](&s[0, 0], n, self.kind_id, self.depth, self.rng[0], &o[0])
            else:
                act_batch[Gomoku](&s[0, 0], n, self.kind_id, self.depth, self.rng[0], &o[0])
        return out


def full_search_optimal_mask(str game_name, state_row):
    """bool [A]: moves that keep the game-theoretic value (win / draw / loss), by full search.

    Only for games in _FULL_SEARCH (tictactoe); all False for a finished game.
    """
    if _game_id(game_name) != 0:
        raise ValueError(f"full-depth search is only feasible for {list(_FULL_SEARCH)}, not {game_name!r}")
    cdef const uint8_t[:, ::1] s = as_rows(game_name, state_row, "state_row")
    if s.shape[0] != 1:
        raise ValueError(f"state_row must be one row, got {s.shape[0]} rows")
    out = np.zeros(9, dtype=np.uint8)
    cdef uint8_t[::1] o = out
    with nogil:
        optimal_moves[TicTacToe](&s[0, 0], &o[0])
    return out.view(np.bool_)


cdef class C4Solver:
    """The exact Connect Four solver; its transposition table persists across calls.

    Args:
        tt_log2: log2 of the transposition-table entry count (8 bytes each; 22 -> 32 MiB).
    """
    cdef Solver* solver

    def __cinit__(self, int tt_log2=22):
        if not 10 <= tt_log2 <= 28:
            raise ValueError(f"tt_log2 must be in [10, 28] (1 KiB .. 2 GiB of table), got {tt_log2}")
        self.solver = new Solver(tt_log2)

    def __dealloc__(self):
        del self.solver

    def _check(self, state_row):
        rows = as_rows("connect4", state_row, "state_row")
        if rows.shape[0] != 1:
            raise ValueError(f"state_row must be one connect4 row, got {rows.shape[0]} rows")
        cdef const uint8_t[:, ::1] s = rows
        if c4_row_is_terminal(&s[0, 0]):
            raise ValueError("the connect4 position is already finished (a four or a full board); the "
                             "solver scores live positions only")
        return rows

    def score(self, state_row, cbool weak=False) -> int:
        """Exact score for the player to move (see solver.h); weak: only its sign (-1, 0, 1)."""
        cdef const uint8_t[:, ::1] s = self._check(state_row)
        cdef Position p = from_bytes(&s[0, 0])
        cdef int r
        with nogil:
            r = self.solver.solve(p, weak)
        return r

    def move_scores(self, state_row, cbool weak=False):
        """(int32 [7] scores, bool [7] legal): each column's exact score for the player to move now."""
        cdef const uint8_t[:, ::1] s = self._check(state_row)
        cdef Position p = from_bytes(&s[0, 0])
        scores = np.zeros(7, dtype=np.int32)
        valid = np.zeros(7, dtype=np.uint8)
        cdef int[::1] sc = scores
        cdef uint8_t[::1] va = valid
        with nogil:
            self.solver.move_scores(p, &sc[0], &va[0], weak)
        return scores, valid.view(np.bool_)

    @property
    def nodes(self) -> int:
        """Positions searched since construction or the last clear()."""
        return self.solver.nodes()

    def clear(self):
        """Empty the transposition table and the node counter."""
        self.solver.reset()
