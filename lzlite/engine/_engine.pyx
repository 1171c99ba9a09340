# cython: language_level=3, boundscheck=False, wraparound=False
"""The self-play engine's binding: the only file that sees both Python and the C++ engine (engine.h).

``Engine`` holds the C++ engine; ``collect`` / ``play_games`` run a window on the calling thread with the
GIL released except inside ``infer``; ``collect_stream`` runs one on a background C++ thread and returns an
``EngineStream`` to join. ``infer`` gets zero-copy numpy views of an arena's rows (valid during the call
only) and returns (value [n], logits [n, A]).
"""
from cpython.pycapsule cimport PyCapsule_GetPointer, PyCapsule_IsValid
from libc.stdint cimport int8_t, int32_t, int64_t, uint8_t, uint64_t
from libc.string cimport memcpy
from libcpp cimport bool as cbool
from libcpp.string cimport string
from libcpp.vector cimport vector

import numpy as np

from lzlite.engine.records import Records
from lzlite.mcts.types import SearchConfig

cimport numpy as cnp

cnp.import_array()

# engine.h includes these; naming them lets cythonize rebuild the module when they change.
cdef extern from "game_api.h" namespace "lz":
    ctypedef struct GameTable:
        const char* name
        int num_actions, rows, cols, obs_planes, max_moves, state_bytes

cdef extern from "../mcts/ctree/tree.h" namespace "lzlite::mcts":
    cdef enum class Rule(int32_t):
        kPuct "lzlite::mcts::Rule::kPuct"
        kGumbel "lzlite::mcts::Rule::kGumbel"

    cdef cppclass TreeConfig:
        int32_t batch_size, num_actions, num_simulations
        Rule rule
        double pb_c_base, pb_c_init, discount, value_sign
        int32_t max_num_considered_actions
        double c_visit, c_scale
        cbool rescale_values

cdef extern from "engine.h" namespace "lzlite::engine":
    cdef enum class RowKind(int32_t):
        kObservation "lzlite::engine::RowKind::kObservation"
        kRecurrent "lzlite::engine::RowKind::kRecurrent"

    cdef cppclass FireBatch:
        int32_t player
        RowKind kind
        int64_t n
        const float* obs
        const int32_t* latent
        const int32_t* parent
        const int32_t* action
        const int32_t* child
        float* value
        float* reward
        float* logits

    ctypedef int (*InferFn)(void* ctx, const FireBatch& batch) noexcept

    cdef cppclass SearchSpec:
        TreeConfig tree
        double root_dirichlet_alpha, root_noise_weight, gumbel_scale, temperature
        int32_t temperature_moves, random_opening_plies

    cdef cppclass EngineConfig:
        SearchSpec search
        int32_t n_games, n_threads, batch_size
        int64_t cache_size
        cbool latent_model

    cdef cppclass Telemetry:
        int64_t fires, rows, full_fires, stall_fires, quiescence_fires, stall_releases
        int64_t cache_hits, cache_misses, cache_demotions, cache_aliases, terminal_leaves, positions, games
        double infer_seconds, window_seconds

    cdef cppclass GameRecord:
        int64_t game_id
        vector[float] obs
        vector[int32_t] action
        vector[float] reward
        vector[int8_t] to_play
        vector[uint8_t] legal
        vector[float] root_value, predicted_value
        vector[int32_t] visit_counts
        vector[float] improved_policy
        vector[float] qvalues
        vector[float] root_prior
        vector[int32_t] generation
        cbool done
        int32_t winner
        size_t size()

    cdef cppclass CEngine "lzlite::engine::Engine":
        CEngine(const GameTable* game, const EngineConfig& cfg) except +
        int32_t num_actions()
        int64_t obs_dim()
        cbool has_cache()
        void weights_updated() nogil
        int32_t generation() nogil
        Telemetry telemetry() nogil
        void run_window(InferFn infer, void* ctx, int32_t n_routes, cbool fresh, int64_t max_new_games,
                        int64_t floor_records, uint64_t seed, vector[GameRecord]* out) except + nogil
        void start_window_async(InferFn infer, void* ctx, int32_t n_routes, cbool fresh, int64_t max_new_games,
                                int64_t floor_records, uint64_t seed, vector[GameRecord]* out) except +
        cbool async_running()
        cbool async_done() nogil
        string join_async() nogil


cdef class _Window:
    """One window's callbacks and output; the C++ callback's ctx (kept alive by its owner)."""
    cdef list infers
    cdef tuple obs_shape
    cdef int A
    cdef object error
    cdef bint latent
    cdef vector[GameRecord] out

    def __init__(self, infers, obs_shape, A, latent):
        self.infers = list(infers)
        self.obs_shape = tuple(obs_shape)
        self.A = A
        self.latent = latent
        self.error = None


cdef object _int_view(const int32_t* p, int64_t n):
    cdef cnp.npy_intp dims[1]
    dims[0] = n
    return cnp.PyArray_SimpleNewFromData(1, dims, cnp.NPY_INT32, <void*>p)


cdef object _float_out(object x, tuple shape, str what):
    arr = np.ascontiguousarray(np.asarray(x, dtype=np.float32))
    if arr.shape != shape:
        if arr.size == int(np.prod(shape)) and len(shape) == 1:  # scalar heads often come as [n, 1]
            arr = arr.reshape(shape)
        else:
            raise ValueError(f"infer must return {what} of shape {list(shape)}, got {list(np.shape(x))}")
    if not np.isfinite(arr).all():
        raise ValueError(f"infer returned non-finite {what} for a batch of {shape[0]} rows")
    return arr


cdef int _infer_cb(void* ctx, const FireBatch& b) noexcept with gil:
    """Called by the scheduler for one fire: hands zero-copy views to the route's infer, copies its outputs."""
    cdef _Window w = <_Window>ctx
    cdef cnp.npy_intp dims[4]
    cdef cnp.ndarray v, lo, rw
    cdef int64_t n = b.n
    try:
        f = w.infers[b.player]
        if b.kind == RowKind.kRecurrent:
            result = f.recurrent(_int_view(b.parent, n), _int_view(b.action, n), _int_view(b.child, n))
            if not isinstance(result, tuple) or len(result) != 3:
                raise TypeError(f"recurrent must return (reward [n], value [n], logits [n, A]), got "
                                f"{type(result).__name__}")
            rw = _float_out(result[0], (n,), "rewards")
            memcpy(b.reward, rw.data, n * sizeof(float))
            result = result[1:]
        else:
            dims[0] = n
            dims[1] = w.obs_shape[0]
            dims[2] = w.obs_shape[1]
            dims[3] = w.obs_shape[2]
            view = cnp.PyArray_SimpleNewFromData(4, dims, cnp.NPY_FLOAT32, <void*>b.obs)
            result = f.initial(view, _int_view(b.latent, n)) if w.latent else f(view)
            if not isinstance(result, tuple) or len(result) != 2:
                raise TypeError(f"infer must return (value [n], logits [n, A]), got {type(result).__name__}")
        v = _float_out(result[0], (n,), "values")
        lo = _float_out(result[1], (n, w.A), "logits")
        memcpy(b.value, v.data, n * sizeof(float))
        memcpy(b.logits, lo.data, n * w.A * sizeof(float))
        return 0
    except BaseException as err:  # kept and re-raised by the caller once the window has stopped
        w.error = err
        return 1


def _to_rule(str rule):
    if rule == "puct":
        return Rule.kPuct
    if rule == "gumbel":
        return Rule.kGumbel
    raise ValueError(f"search rule must be 'puct' or 'gumbel', got {rule!r}")


cdef class Engine:
    """Self-play of ``n_games`` games at once on ``n_threads`` worker threads, batched inference.

    Args:
        game: the game, ``lzlite.envs.games.make_batch_game(name)`` (anything with ``game_table()``
            returning the "lzlite.GameTable" capsule, plus ``num_actions`` and ``obs_shape``).
        search_config: a ``lzlite.mcts.types.SearchConfig`` (or dict of its keys): rule, simulations, PUCT /
            Gumbel constants, root noise (``backend`` is ignored: the engine runs the C++ tree rules).
        n_games: episode slots (games in progress at once).
        n_threads: threads advancing the slots, the scheduler's own included (it advances slots whenever no
            batch is ready to fire): 1 runs the whole engine on the calling thread, with no hand-offs.
        batch_size: rows of a full fire.
        infer_cache: inference cache entries (positions; rounded up to a power of two); 0 turns it off.
        seed: seeds the games of windows that are given no seed of their own.
        temperature: PUCT collection's action sampling temperature (0: most visited); Gumbel ignores it.
        temperature_moves: >= 0: plies from this one on play the best move (PUCT: most visited with the root
            noise kept; Gumbel: the winner of a search without Gumbel noise); -1: never.
        random_opening_plies: each game starts after U{0..k} uniformly random, unrecorded moves.
        latent_model: the search runs over a learned model (MuZero family) instead of the game: ``infer`` is then
            an object with ``initial(obs [n, P, R, C], latent_slot int32 [n]) -> (value [n], logits [n, A])``,
            storing each root's latent at its latent slot, and ``recurrent(parent int32 [n], action int32 [n],
            child int32 [n]) -> (reward [n], value [n], logits [n, A])``, running the dynamics from the latent at
            ``parent`` and storing the result at ``child``. Latent slots lie in [0, ``latent_slots``); the
            caller keeps the latents (on the model's device). No cache: leaves are not game positions.
    """

    cdef CEngine* c
    cdef readonly object game
    cdef readonly int num_actions, n_games, n_threads, batch_size
    cdef readonly long long infer_cache
    cdef readonly tuple obs_shape
    cdef readonly object search_config
    cdef readonly bint latent_model
    cdef readonly long long latent_slots
    cdef uint64_t seed
    cdef int64_t windows
    cdef _Window stream_window

    def __cinit__(self):
        self.c = NULL

    def __init__(self, game, search_config, int n_games, int n_threads=1, int batch_size=256, *,
                 long long infer_cache=0, seed=0, double temperature=1.0, int temperature_moves=-1,
                 int random_opening_plies=0, bint latent_model=False):
        capsule = game.game_table() if hasattr(game, "game_table") else None
        if capsule is None or not PyCapsule_IsValid(capsule, b"lzlite.GameTable"):
            raise TypeError(f"game must be a batched game whose game_table() returns a 'lzlite.GameTable' capsule "
                            f"(lzlite.envs.games.make_batch_game(name)), got {type(game).__name__}")
        cfg = SearchConfig.from_any(search_config)
        for name, value, low in (("n_games", n_games, 1), ("n_threads", n_threads, 1), ("batch_size", batch_size, 1),
                                 ("infer_cache", infer_cache, 0), ("random_opening_plies", random_opening_plies, 0),
                                 ("temperature_moves", temperature_moves, -1),
                                 ("num_simulations", cfg.num_simulations, 1),
                                 ("max_num_considered_actions", cfg.max_num_considered_actions, 1)):
            if value < low:
                raise ValueError(f"{name} must be >= {low}, got {value}")
        if not temperature >= 0:
            raise ValueError(f"temperature must be >= 0, got {temperature}")
        if not 0 <= cfg.root_noise_weight <= 1 or not cfg.root_dirichlet_alpha > 0:
            raise ValueError(f"root_noise_weight must be in [0, 1] and root_dirichlet_alpha > 0, got "
                             f"{cfg.root_noise_weight} and {cfg.root_dirichlet_alpha}")
        if latent_model and infer_cache > 0:
            raise ValueError("infer_cache must be 0 with latent_model=True: the cache keys game positions, and a "
                             "learned model's leaves are latents")
        if not cfg.pb_c_base > 0:
            raise ValueError(f"pb_c_base must be > 0, got {cfg.pb_c_base}")
        cdef const GameTable* table = <const GameTable*>PyCapsule_GetPointer(capsule, b"lzlite.GameTable")
        cdef EngineConfig ec
        ec.n_games = n_games
        ec.n_threads = n_threads
        ec.batch_size = batch_size
        ec.cache_size = infer_cache
        ec.latent_model = latent_model
        ec.search.tree.batch_size = 1
        ec.search.tree.num_actions = table.num_actions
        ec.search.tree.num_simulations = cfg.num_simulations
        ec.search.tree.rule = _to_rule(cfg.rule)
        ec.search.tree.pb_c_base = cfg.pb_c_base
        ec.search.tree.pb_c_init = cfg.pb_c_init
        ec.search.tree.discount = cfg.discount
        ec.search.tree.value_sign = cfg.value_sign
        ec.search.tree.max_num_considered_actions = cfg.max_num_considered_actions
        ec.search.tree.c_visit = cfg.c_visit
        ec.search.tree.c_scale = cfg.c_scale
        ec.search.tree.rescale_values = cfg.rescale_values
        ec.search.root_dirichlet_alpha = cfg.root_dirichlet_alpha
        ec.search.root_noise_weight = cfg.root_noise_weight
        ec.search.gumbel_scale = cfg.gumbel_scale
        ec.search.temperature = temperature
        ec.search.temperature_moves = temperature_moves
        ec.search.random_opening_plies = random_opening_plies
        self.c = new CEngine(table, ec)
        self.game = game
        self.search_config = cfg
        self.num_actions = table.num_actions
        self.obs_shape = (table.obs_planes, table.rows, table.cols)
        self.n_games, self.n_threads, self.batch_size, self.infer_cache = n_games, n_threads, batch_size, infer_cache
        self.latent_model = latent_model
        self.latent_slots = n_games * (cfg.num_simulations + 1)
        self.seed = int(seed) & 0xFFFFFFFFFFFFFFFF
        self.windows = 0
        self.stream_window = None

    def __dealloc__(self):
        if self.c != NULL:
            with nogil:
                self.c.join_async()
            del self.c
            self.c = NULL

    def __repr__(self):
        return (f"Engine({self.game!r}, rule={self.search_config.rule!r}, n_games={self.n_games}, "
                f"n_threads={self.n_threads}, batch_size={self.batch_size}, infer_cache={self.infer_cache})")

    # ----------------------------------------------------------------------------- windows
    def _infers(self, infer):
        infers = list(infer) if isinstance(infer, (list, tuple)) else [infer]
        if self.latent_model:
            if len(infers) not in (1, 2) or not all(hasattr(f, "initial") and hasattr(f, "recurrent") for f in infers):
                raise TypeError("a latent-model engine's infer must have initial() and recurrent() methods (or be a "
                                "list of two such objects, one per player to move)")
        elif len(infers) not in (1, 2) or not all(callable(f) for f in infers):
            raise TypeError("infer must be a callable, or a list of two callables (one per player to move)")
        return infers

    def _window_seed(self, seed):
        if seed is None:
            self.windows += 1
            return (self.seed * 0x9E3779B97F4A7C15 + <uint64_t>self.windows) & 0xFFFFFFFFFFFFFFFF
        return int(seed) & 0xFFFFFFFFFFFFFFFF

    def _run(self, infer, bint fresh, int64_t max_new_games, int64_t floor_records, seed):
        if self.c.async_running():
            raise RuntimeError("a streamed window is running; call its result() first")
        cdef _Window w = _Window(self._infers(infer), self.obs_shape, self.num_actions, self.latent_model)
        cdef int32_t n_routes = len(w.infers)
        cdef uint64_t s = self._window_seed(seed)
        try:
            with nogil:
                self.c.run_window(_infer_cb, <void*>w, n_routes, fresh, max_new_games, floor_records, s, &w.out)
        except RuntimeError as err:
            if w.error is not None:
                raise w.error
            raise
        return _records(w, self.num_actions, self.obs_shape)

    def collect(self, long long n_records, infer, seed=None):
        """Plays until the games finished in this call hold at least ``n_records`` moves; returns their Records.

        Slots keep their games across calls: at the floor every slot completes its current search and stops
        at the move boundary, and the next call (``collect`` or ``collect_stream``) resumes there.

        Args:
            n_records: the floor (>= 1).
            infer: obs float32 [n, P, R, C] (a view of the engine's buffer, valid during the call) -> (value [n] from the
                view of the player to move, logits [n, A]); or a list of two such callables, one per player
                to move at the root of the search (e.g. against an older checkpoint).
            seed: seeds this call's new games (default: derived from the engine's seed and a call counter).
        """
        if n_records < 1:
            raise ValueError(f"n_records must be >= 1, got {n_records}")
        return self._run(infer, False, -1, n_records, seed)

    def play_games(self, long long n_episodes, infer, seed=None):
        """Plays exactly ``n_episodes`` new games to their end (games in progress are abandoned) and returns
        their Records, in the order the games started. ``infer`` and ``seed`` as ``collect``."""
        if n_episodes < 1:
            raise ValueError(f"n_episodes must be >= 1, got {n_episodes}")
        return self._run(infer, True, n_episodes, -1, seed)

    def collect_stream(self, long long n_records, infer, seed=None):
        """``collect`` on a background thread: returns an ``EngineStream`` at once.

        The scheduler takes the GIL only to call ``infer``, so the caller (a learner) runs meanwhile. Call
        ``result()`` on the stream for the Records (one streamed window at a time).
        """
        if n_records < 1:
            raise ValueError(f"n_records must be >= 1, got {n_records}")
        if self.c.async_running():
            raise RuntimeError("a streamed window is running; call its result() first")
        cdef _Window w = _Window(self._infers(infer), self.obs_shape, self.num_actions, self.latent_model)
        cdef uint64_t s = self._window_seed(seed)
        self.stream_window = w
        self.c.start_window_async(_infer_cb, <void*>w, len(w.infers), False, -1, n_records, s, &w.out)
        return EngineStream(self)

    def _join_stream(self):
        cdef string err
        with nogil:
            err = self.c.join_async()
        w = self.stream_window
        self.stream_window = None
        if w is None:
            raise RuntimeError("no streamed window to join")
        if err.size():
            if w.error is not None:
                raise w.error
            raise RuntimeError(err.decode())
        return _records(w, self.num_actions, self.obs_shape)

    def _stream_done(self):
        return self.c.async_done()

    # ----------------------------------------------------------------------------- weights, telemetry
    def weights_updated(self):
        """Starts a new weights generation (call after loading new weights): no cached prediction of an older
        generation is served again; a cache hit waiting for release is re-inferred instead. Any thread."""
        with nogil:
            self.c.weights_updated()

    @property
    def generation(self):
        """The weights generation (the number of ``weights_updated()`` calls)."""
        return self.c.generation()

    def telemetry(self):
        """Counters since the engine was made, and rates derived from them (a dict of floats)."""
        cdef Telemetry t
        with nogil:
            t = self.c.telemetry()
        lookups = t.cache_hits + t.cache_misses + t.cache_aliases
        return dict(
            fires=float(t.fires), rows=float(t.rows), full_fires=float(t.full_fires),
            stall_fires=float(t.stall_fires), quiescence_fires=float(t.quiescence_fires),
            stall_releases=float(t.stall_releases),
            mean_batch_fill=t.rows / (t.fires * self.batch_size) if t.fires else 0.0,
            cache_hits=float(t.cache_hits), cache_misses=float(t.cache_misses),
            cache_demotions=float(t.cache_demotions), cache_aliases=float(t.cache_aliases),
            cache_hit_rate=(t.cache_hits + t.cache_aliases) / lookups if lookups else 0.0,
            terminal_leaves=float(t.terminal_leaves), positions=float(t.positions), games=float(t.games),
            infer_seconds=t.infer_seconds, window_seconds=t.window_seconds,
            positions_per_s=t.positions / t.window_seconds if t.window_seconds > 0 else 0.0,
            outside_infer_share=1.0 - t.infer_seconds / t.window_seconds if t.window_seconds > 0 else 0.0,
        )


class EngineStream:
    """A window running on the engine's background thread (``Engine.collect_stream``)."""

    def __init__(self, engine):
        self._engine = engine
        self._records = None

    def done(self):
        """True once the window has ended (``result()`` then returns without waiting)."""
        return self._records is not None or self._engine._stream_done()

    def result(self):
        """Waits for the window (GIL released) and returns its Records; raises what ``infer`` raised."""
        if self._records is None:
            self._records = self._engine._join_stream()
        return self._records


cdef object _records(_Window w, int A, tuple obs_shape):
    """The window's finished games as one Records (in the order the games started)."""
    cdef size_t g, n_games = w.out.size()
    cdef GameRecord* r
    order = sorted(range(n_games), key=lambda i: w.out[i].game_id)
    lengths = np.array([w.out[i].size() for i in order], dtype=np.int64)
    R = int(lengths.sum())
    obs_dim = int(np.prod(obs_shape))
    obs = np.empty((R, obs_dim), np.float32)
    action = np.empty(R, np.int64)
    reward = np.empty(R, np.float32)
    to_play = np.empty(R, np.int64)
    legal = np.empty((R, A), np.bool_)
    root_value = np.empty(R, np.float32)
    predicted = np.empty(R, np.float32)
    visits = np.empty((R, A), np.int32)
    improved = np.empty((R, A), np.float32)
    qvalues = np.empty((R, A), np.float32)
    prior = np.empty((R, A), np.float32)
    generation = np.empty(R, np.int32)
    game_id = np.empty(len(order), np.int64)
    done = np.empty(len(order), np.bool_)
    winner = np.empty(len(order), np.int8)
    cdef float[:, ::1] o = obs
    cdef float[::1] rw = reward, rv = root_value, pv = predicted
    cdef int32_t[:, ::1] vc = visits
    cdef float[:, ::1] ip = improved
    cdef float[:, ::1] qv = qvalues
    cdef float[:, ::1] rp = prior
    cdef uint8_t[:, ::1] lg = legal.view(np.uint8)
    cdef int32_t[::1] ge = generation
    cdef size_t at = 0, L
    for j, i in enumerate(order):
        g = i
        r = &w.out[g]
        L = r.size()
        game_id[j] = r.game_id
        done[j] = r.done
        winner[j] = r.winner
        if L == 0:
            continue
        memcpy(&o[at, 0], r.obs.data(), L * obs_dim * sizeof(float))
        memcpy(&rw[at], r.reward.data(), L * sizeof(float))
        memcpy(&rv[at], r.root_value.data(), L * sizeof(float))
        memcpy(&pv[at], r.predicted_value.data(), L * sizeof(float))
        memcpy(&vc[at, 0], r.visit_counts.data(), L * A * sizeof(int32_t))
        memcpy(&ip[at, 0], r.improved_policy.data(), L * A * sizeof(float))
        memcpy(&qv[at, 0], r.qvalues.data(), L * A * sizeof(float))
        memcpy(&rp[at, 0], r.root_prior.data(), L * A * sizeof(float))
        memcpy(&lg[at, 0], r.legal.data(), L * A)
        memcpy(&ge[at], r.generation.data(), L * sizeof(int32_t))
        action[at:at + L] = np.asarray(<int32_t[:L]>r.action.data())
        to_play[at:at + L] = np.asarray(<int8_t[:L]>r.to_play.data())
        at += L
    starts = np.zeros(len(order) + 1, np.int64)
    starts[1:] = np.cumsum(lengths)
    w.out.clear()
    return Records(obs=obs.reshape((R,) + obs_shape), action=action, reward=reward, to_play=to_play,
                   legal_mask=legal, root_value=root_value, predicted_value=predicted, visit_counts=visits,
                   improved_policy=improved, qvalues=qvalues, root_prior=prior, generation=generation, game_start=starts, game_id=game_id,
                   game_done=done, game_winner=winner)
