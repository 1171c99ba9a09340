# cython: language_level=3, boundscheck=False, wraparound=False, initializedcheck=False, cdivision=True
# distutils: language = c++
"""The one binding between Python and the C++ search tree (tree.h).

Validates every array that crosses (shape, dtype, NaN/inf, empty legal rows) and raises
ValueError/TypeError naming the argument, so no input can crash the native code; then calls the C++
core with raw pointers and the GIL released. traverse() returns zero-copy, read-only views of C++
buffers that the next traverse() overwrites. The semantics are those of lzlite.mcts.ptree.Tree (the
spec); see docs/ctree.md.

Ownership: a _Storage owns the C++ tree; the Tree and every numpy view of its buffers hold the
_Storage, never the Tree, so no reference cycle keeps a dropped Tree (and its storage) alive.
"""
from libc.stdint cimport int32_t, uint8_t, uint32_t
from libc.math cimport isfinite
from libcpp cimport bool as cbool

import numpy as np
cimport numpy as cnp

cnp.import_array()

__all__ = ["Tree", "considered_visit_sequence"]


# tree.h includes these; naming them lets cythonize rebuild the module when they change.
cdef extern from "fast_exp.h":
    pass

cdef extern from "tree_gumbel.h":
    pass

cdef extern from "gumbel_schedule.h":
    pass

cdef extern from "tree.h" namespace "lzlite::mcts":
    cdef enum class Rule(int32_t):
        kPuct
        kGumbel

    cdef cppclass TreeConfig:
        int32_t batch_size
        int32_t num_actions
        int32_t num_simulations
        Rule rule
        double pb_c_base
        double pb_c_init
        double discount
        double value_sign
        int32_t max_num_considered_actions
        double c_visit
        double c_scale
        cbool rescale_values

    cdef cppclass CTree "lzlite::mcts::Tree":
        CTree(const TreeConfig&) except +
        void reset(const float*, const float*, const uint8_t*, const float*, double, const float*,
                   const int32_t*, const float*) nogil
        void traverse() nogil
        void expand_and_backup(const float*, const float*, const float*, const uint8_t*,
                               const uint8_t*) nogil
        void outputs(int32_t*, float*, float*, float*, int32_t*, int32_t*) nogil
        cbool pending()
        int32_t num_done()
        int32_t* out_parent()
        int32_t* out_action()
        int32_t* out_child()
        uint8_t* out_needs_eval()
        const int32_t* parent()
        const int32_t* action()
        const int32_t* visits()
        const double* value_sum()
        const double* reward()
        const double* raw_value()
        const uint8_t* terminal()
        const double* prior()
        void compute_pending_priors(int32_t) nogil
        const int32_t* child()
        const uint8_t* legal()
        const uint8_t* expanded()

    void c_considered_visit_sequence "lzlite::mcts::considered_visit_sequence"(int32_t, int32_t, int32_t*)


def considered_visit_sequence(int m, int num_simulations):
    """The C++ sequential-halving schedule (for table tests against the ptree's)."""
    if m < 1 or num_simulations < 0:
        raise ValueError(f"need m >= 1 and num_simulations >= 0, got m={m}, num_simulations={num_simulations}")
    out = np.zeros(num_simulations, dtype=np.int32)
    cdef int32_t[::1] view = out
    if num_simulations > 0:
        c_considered_visit_sequence(m, num_simulations, &view[0])
    return tuple(int(v) for v in out)


# ---------------------------------------------------------------------------------------------------
# Validation: C-level checks on ndarray headers; a conversion copy only for non-float32 / strided input.
# ---------------------------------------------------------------------------------------------------
cdef tuple _shape(int ndim, Py_ssize_t d0, Py_ssize_t d1):
    if ndim == 1:
        return (int(d0),)
    return (int(d0), int(d1))


cdef cnp.ndarray _float_array(str name, object x, int ndim, Py_ssize_t d0, Py_ssize_t d1):
    """Returns x as a C-contiguous float32 ndarray of shape (d0,) or (d0, d1)."""
    cdef cnp.ndarray arr
    if cnp.PyArray_Check(x):
        arr = <cnp.ndarray>x
    else:
        arr = np.asarray(x)
    cdef int typ = cnp.PyArray_TYPE(arr)
    if typ != cnp.NPY_FLOAT32:
        if not (typ == cnp.NPY_FLOAT64 or typ == cnp.NPY_FLOAT16 or typ == cnp.NPY_LONGDOUBLE):
            shape = _shape(ndim, d0, d1)
            raise TypeError(f"{name} must be a floating-point array of shape {shape}, got dtype {arr.dtype}; "
                            f"convert it with .astype(np.float32)")
    if (cnp.PyArray_NDIM(arr) != ndim or cnp.PyArray_DIMS(arr)[0] != d0
            or (ndim == 2 and cnp.PyArray_DIMS(arr)[1] != d1)):
        shape = _shape(ndim, d0, d1)
        raise ValueError(f"{name} must have shape {shape}, got {(<object>arr).shape}")
    if typ != cnp.NPY_FLOAT32 or not cnp.PyArray_IS_C_CONTIGUOUS(arr):
        arr = np.ascontiguousarray(arr, dtype=np.float32)
    return arr


cdef cnp.ndarray _mask_array(str name, object x, int ndim, Py_ssize_t d0, Py_ssize_t d1):
    """Returns x (bool or uint8) as a C-contiguous 1-byte ndarray of shape (d0,) or (d0, d1)."""
    cdef cnp.ndarray arr
    if cnp.PyArray_Check(x):
        arr = <cnp.ndarray>x
    else:
        arr = np.asarray(x)
    cdef int typ = cnp.PyArray_TYPE(arr)
    shape = _shape(ndim, d0, d1)
    if typ != cnp.NPY_BOOL and typ != cnp.NPY_UINT8:
        raise TypeError(f"{name} must be a bool or uint8 array of shape {shape}, got dtype {arr.dtype}")
    if (cnp.PyArray_NDIM(arr) != ndim or cnp.PyArray_DIMS(arr)[0] != d0
            or (ndim == 2 and cnp.PyArray_DIMS(arr)[1] != d1)):
        raise ValueError(f"{name} must have shape {shape}, got {(<object>arr).shape}")
    if not cnp.PyArray_IS_C_CONTIGUOUS(arr):
        arr = np.ascontiguousarray(arr)
    return arr


cdef cnp.ndarray _int_array(str name, object x, Py_ssize_t d0):
    cdef cnp.ndarray arr = np.asarray(x)
    if not np.issubdtype(arr.dtype, np.integer):
        raise TypeError(f"{name} must be an integer array of shape ({d0},), got dtype {arr.dtype}")
    if arr.ndim != 1 or arr.shape[0] != d0:
        raise ValueError(f"{name} must have shape ({d0},), got {(<object>arr).shape}")
    return np.ascontiguousarray(arr, dtype=np.int32)


cdef bint _all_finite(const float* x, Py_ssize_t n) noexcept nogil:
    """True when no float has an all-ones exponent (inf/NaN): a branch-free integer test the compiler
    vectorises, the fast path of every finiteness check."""
    cdef const uint32_t* bits = <const uint32_t*>x
    cdef uint32_t bad = 0
    cdef Py_ssize_t i
    for i in range(n):
        bad |= (bits[i] & 0x7f800000u) == 0x7f800000u
    return bad == 0


cdef Py_ssize_t _first_bad_float(const float* x, const uint8_t* rows, const uint8_t* where,
                                 Py_ssize_t n_rows, Py_ssize_t n_cols) noexcept nogil:
    """Flat index of the first non-finite x[r, c] with rows[r] (or all rows if null) and where[r, c]
    (or everywhere if null); -1 when all finite."""
    cdef Py_ssize_t r, c, i
    for r in range(n_rows):
        if rows != NULL and rows[r] == 0:
            continue
        for c in range(n_cols):
            i = r * n_cols + c
            if where != NULL and where[i] == 0:
                continue
            if not isfinite(x[i]):
                return i
    return -1


cdef Py_ssize_t _bad_mask_row(const uint8_t* mask, const uint8_t* rows, Py_ssize_t n_rows,
                              Py_ssize_t n_cols) noexcept nogil:
    """First row (restricted to rows[r] != 0) that is all zero, or -(1 + flat index) of a value > 1;
    n_rows when every row is fine."""
    cdef Py_ssize_t r, c
    cdef int any_legal
    for r in range(n_rows):
        if rows != NULL and rows[r] == 0:
            continue
        any_legal = 0
        for c in range(n_cols):
            if mask[r * n_cols + c] > 1:
                return -(1 + r * n_cols + c)
            if mask[r * n_cols + c]:
                any_legal = 1
        if not any_legal:
            return r
    return n_rows


cdef _check_finite(str name, cnp.ndarray arr, const uint8_t* rows, const uint8_t* where, Py_ssize_t n_cols):
    cdef Py_ssize_t n_rows = cnp.PyArray_DIMS(arr)[0]
    cdef const float* data = <const float*>cnp.PyArray_DATA(arr)
    cdef Py_ssize_t bad = -1
    with nogil:
        if not _all_finite(data, n_rows * n_cols):   # only then look for a bad value in a used entry
            bad = _first_bad_float(data, rows, where, n_rows, n_cols)
    if bad >= 0:
        pos = _shape(cnp.PyArray_NDIM(arr), bad // n_cols, bad % n_cols) if cnp.PyArray_NDIM(arr) == 2 else _shape(1, bad, 0)
        raise ValueError(f"{name} must be finite, got {data[bad]} at index {pos}"
                         + (" (a legal action)" if where != NULL else ""))


cdef _check_mask(str name, cnp.ndarray arr, const uint8_t* rows, Py_ssize_t n_cols):
    cdef Py_ssize_t n_rows = cnp.PyArray_DIMS(arr)[0]
    cdef Py_ssize_t res
    with nogil:
        res = _bad_mask_row(<const uint8_t*>cnp.PyArray_DATA(arr), rows, n_rows, n_cols)
    if res < 0:
        flat = -res - 1
        raise ValueError(f"{name} (uint8) must hold only 0 and 1, found {int(arr.reshape(-1)[flat])} "
                         f"at index {_shape(2, flat // n_cols, flat % n_cols)}")
    if res < n_rows:
        raise ValueError(f"{name} row {res} has no legal action; every non-terminal node needs at least one "
                         f"(mark the state terminal instead)")


cdef class _Storage:
    """Owns the C++ tree; deleted when the last holder (the Tree or a view of its buffers) lets go.

    It holds no Python object, so the views that reference it form no cycle: numpy arrays are not
    tracked by the garbage collector, and a view whose base were the Tree itself (which holds the
    views) would keep the Tree alive forever.
    """

    cdef CTree* tree

    def __cinit__(self):
        self.tree = NULL

    def __dealloc__(self):
        if self.tree != NULL:
            del self.tree
            self.tree = NULL


cdef cnp.ndarray _view(void* data, int typenum, Py_ssize_t n, _Storage owner):
    """A read-only 1-D numpy view of C++ memory that keeps `owner` alive."""
    cdef cnp.npy_intp dims[1]
    dims[0] = n
    cdef cnp.ndarray arr = cnp.PyArray_SimpleNewFromData(1, dims, typenum, data)
    cnp.PyArray_SetBaseObject(arr, owner)
    cnp.Py_INCREF(owner)
    arr.flags.writeable = False
    return arr


_RULES = {"puct": Rule.kPuct, "gumbel": Rule.kGumbel}


cdef class Tree:
    """B independent search trees in C++; same API and semantics as lzlite.mcts.ptree.Tree.

    Storage for B x (S + 1) nodes x A children is allocated once here and reused by every reset(); it
    is freed when the Tree and every array returned by traverse() are dropped.
    """

    cdef _Storage _storage   # owns the C++ tree
    cdef CTree* _tree        # borrowed from _storage, which lives at least as long as self
    cdef object __weakref__
    cdef readonly int batch_size, num_actions, num_simulations
    cdef readonly str rule
    cdef readonly double value_sign, discount
    cdef tuple _traverse_out
    cdef cnp.ndarray _needs_eval_view
    cdef bint _has_search

    def __cinit__(self, int batch_size, int num_actions, int num_simulations, *, str rule="puct",
                  double pb_c_base=19652.0, double pb_c_init=1.25, double discount=0.997,
                  double value_sign=-1.0, int max_num_considered_actions=16, double c_visit=50.0,
                  double c_scale=1.0, bint rescale_values=False):
        self._tree = NULL
        if batch_size < 1 or num_actions < 1 or num_simulations < 1:
            raise ValueError(f"batch_size, num_actions and num_simulations must be >= 1, got "
                             f"{batch_size}, {num_actions}, {num_simulations}")
        if rule not in _RULES:
            raise ValueError(f"rule must be one of {sorted(_RULES)}, got {rule!r}")
        if value_sign not in (-1.0, 1.0):
            raise ValueError(f"value_sign must be -1.0 (two-player) or +1.0 (single-player), got {value_sign}")
        if max_num_considered_actions < 1:
            raise ValueError(f"max_num_considered_actions must be >= 1, got {max_num_considered_actions}")
        for name, v in (("pb_c_base", pb_c_base), ("pb_c_init", pb_c_init), ("discount", discount),
                        ("c_visit", c_visit), ("c_scale", c_scale)):
            if not isfinite(v):
                raise ValueError(f"{name} must be finite, got {v}")
        if pb_c_base <= 0:
            raise ValueError(f"pb_c_base must be > 0, got {pb_c_base}")
        if <long long>batch_size * (num_simulations + 1) > 2147483647:
            raise ValueError(f"batch_size * (num_simulations + 1) = {batch_size * (num_simulations + 1)} slots do "
                             f"not fit the int32 slot indices; use a smaller batch or fewer simulations")
        cdef TreeConfig cfg
        cfg.batch_size = batch_size
        cfg.num_actions = num_actions
        cfg.num_simulations = num_simulations
        cfg.rule = _RULES[rule]
        cfg.pb_c_base = pb_c_base
        cfg.pb_c_init = pb_c_init
        cfg.discount = discount
        cfg.value_sign = value_sign
        cfg.max_num_considered_actions = max_num_considered_actions
        cfg.c_visit = c_visit
        cfg.c_scale = c_scale
        cfg.rescale_values = rescale_values
        self._storage = _Storage()
        self._storage.tree = new CTree(cfg)
        self._tree = self._storage.tree
        self.batch_size = batch_size
        self.num_actions = num_actions
        self.num_simulations = num_simulations
        self.rule = rule
        self.value_sign = value_sign
        self.discount = discount
        self._has_search = False
        self._needs_eval_view = _view(self._tree.out_needs_eval(), cnp.NPY_UINT8, batch_size, self._storage)
        self._traverse_out = (
            _view(self._tree.out_parent(), cnp.NPY_INT32, batch_size, self._storage),
            _view(self._tree.out_action(), cnp.NPY_INT32, batch_size, self._storage),
            _view(self._tree.out_child(), cnp.NPY_INT32, batch_size, self._storage),
            self._needs_eval_view,
        )

    def reset(self, prior_logits, value, legal_mask, *, noise=None, double noise_weight=0.0, gumbel=None,
              reuse_action=None, reuse_value=None) -> None:
        """Starts a new search from B roots; see lzlite.mcts.ptree.Tree.reset."""
        cdef Py_ssize_t B = self.batch_size, A = self.num_actions, b
        cdef cnp.ndarray logits = _float_array("prior_logits", prior_logits, 2, B, A)
        cdef cnp.ndarray val = _float_array("value", value, 1, B, 0)
        cdef cnp.ndarray mask = _mask_array("legal_mask", legal_mask, 2, B, A)
        cdef const uint8_t* mp = <const uint8_t*>cnp.PyArray_DATA(mask)
        _check_mask("legal_mask", mask, NULL, A)
        _check_finite("value", val, NULL, NULL, 1)
        _check_finite("prior_logits", logits, NULL, mp, A)
        cdef cnp.ndarray nz = None, gb = None, rv = None
        cdef cnp.ndarray ra = None
        cdef const float* nz_ptr = NULL
        cdef const float* gb_ptr = NULL
        cdef const int32_t* ra_ptr = NULL
        cdef const float* rv_ptr = NULL
        if noise is not None:
            if self.rule != "puct":
                raise ValueError("noise (Dirichlet) is for rule 'puct'; rule 'gumbel' explores with `gumbel`")
            nz = _float_array("noise", noise, 2, B, A)
            _check_finite("noise", nz, NULL, NULL, A)
            if not (0.0 <= noise_weight <= 1.0):
                raise ValueError(f"noise_weight must be in [0, 1], got {noise_weight}")
            nz_ptr = <const float*>cnp.PyArray_DATA(nz)
        if gumbel is not None:
            if self.rule != "gumbel":
                raise ValueError("gumbel noise is for rule 'gumbel'; rule 'puct' explores with `noise`")
            gb = _float_array("gumbel", gumbel, 2, B, A)
            _check_finite("gumbel", gb, NULL, mp, A)
            gb_ptr = <const float*>cnp.PyArray_DATA(gb)
        if (reuse_action is None) != (reuse_value is None):
            raise ValueError("reuse_action and reuse_value must be given together (or both None)")
        if reuse_action is not None:
            ra64 = _int_array("reuse_action", reuse_action, B)
            rv = _float_array("reuse_value", reuse_value, 1, B, 0)
            for b in range(B):
                a = int(ra64[b])
                if a < -1 or a >= A:
                    raise ValueError(f"reuse_action[{b}] = {a} is out of range; expected -1 (none) "
                                     f"or an action in [0, {A})")
                if a >= 0 and not mp[b * A + a]:
                    raise ValueError(f"reuse_action[{b}] = {a} is illegal at root {b}")
            for b in range(B):
                if ra64[b] >= 0 and not isfinite((<const float*>cnp.PyArray_DATA(rv))[b]):
                    raise ValueError(f"reuse_value must be finite, got {rv[b]} at index ({b},)")
            ra = np.ascontiguousarray(ra64, dtype=np.int32)
            ra_ptr = <const int32_t*>cnp.PyArray_DATA(ra)
            rv_ptr = <const float*>cnp.PyArray_DATA(rv)
        cdef const float* lp = <const float*>cnp.PyArray_DATA(logits)
        cdef const float* vp = <const float*>cnp.PyArray_DATA(val)
        with nogil:
            self._tree.reset(lp, vp, mp, nz_ptr, noise_weight, gb_ptr, ra_ptr, rv_ptr)
        self._has_search = True

    def traverse(self):
        """One simulation's selection for every root.

        Returns:
            (parent_slot int32 [B], action int32 [B], child_slot int32 [B], needs_eval uint8 [B]):
            read-only views of the tree's buffers, overwritten by the next call.
        """
        if not self._has_search:
            raise RuntimeError("call reset() before traverse()")
        if self._tree.pending():
            raise RuntimeError("traverse() called twice without expand_and_backup() in between")
        if self._tree.num_done() >= self.num_simulations:
            raise RuntimeError(f"traverse() called more than num_simulations={self.num_simulations} times; "
                               f"call reset() to start a new search")
        with nogil:
            self._tree.traverse()
        return self._traverse_out

    def expand_and_backup(self, reward, value, prior_logits, legal_mask=None, terminal=None) -> None:
        """Expands the leaves of the last traverse() and backs up; rows with needs_eval == 0 are ignored."""
        if not self._tree.pending():
            raise RuntimeError("expand_and_backup() must follow traverse()")
        cdef Py_ssize_t B = self.batch_size, A = self.num_actions
        cdef const uint8_t* rows = <const uint8_t*>cnp.PyArray_DATA(self._needs_eval_view)
        cdef cnp.ndarray rw = _float_array("reward", reward, 1, B, 0)
        _check_finite("reward", rw, rows, NULL, 1)
        cdef cnp.ndarray val = _float_array("value", value, 1, B, 0)
        _check_finite("value", val, rows, NULL, 1)
        cdef cnp.ndarray logits = _float_array("prior_logits", prior_logits, 2, B, A)
        cdef cnp.ndarray mask = None, term = None
        cdef const uint8_t* mp = NULL
        cdef const uint8_t* tp = NULL
        cdef const uint8_t* expand_rows = rows
        cdef uint8_t[::1] live
        cdef Py_ssize_t b
        if terminal is not None:
            term = _mask_array("terminal", terminal, 1, B, 0)
            tp = <const uint8_t*>cnp.PyArray_DATA(term)
            for b in range(B):
                if tp[b] > 1:
                    raise ValueError(f"terminal (uint8) must hold only 0 and 1, found {tp[b]} at index ({b},)")
            # Terminal children are never expanded: their logits and masks are not read.
            live = np.empty(B, dtype=np.uint8)
            for b in range(B):
                live[b] = rows[b] and not tp[b]
            expand_rows = &live[0]
        if legal_mask is not None:
            mask = _mask_array("legal_mask", legal_mask, 2, B, A)
            _check_mask("legal_mask", mask, expand_rows, A)
            mp = <const uint8_t*>cnp.PyArray_DATA(mask)
        _check_finite("prior_logits", logits, expand_rows, mp, A)
        cdef const float* rp = <const float*>cnp.PyArray_DATA(rw)
        cdef const float* vp = <const float*>cnp.PyArray_DATA(val)
        cdef const float* lp = <const float*>cnp.PyArray_DATA(logits)
        with nogil:
            self._tree.expand_and_backup(rp, vp, lp, mp, tp)

    def outputs(self) -> dict:
        """Root statistics (fresh arrays, safe to keep after the next search); see ptree.Tree.outputs."""
        if not self._has_search:
            raise RuntimeError("outputs called before reset")
        cdef Py_ssize_t B = self.batch_size, A = self.num_actions
        visit_counts = np.empty((B, A), dtype=np.int32)
        root_value = np.empty(B, dtype=np.float32)
        qvalues = np.empty((B, A), dtype=np.float32)
        improved_policy = np.empty((B, A), dtype=np.float32)
        gumbel_action = np.empty(B, dtype=np.int32)
        root_visits = np.empty(B, dtype=np.int32)
        cdef int32_t* vc = <int32_t*>cnp.PyArray_DATA(visit_counts)
        cdef float* rv = <float*>cnp.PyArray_DATA(root_value)
        cdef float* qv = <float*>cnp.PyArray_DATA(qvalues)
        cdef float* ip = <float*>cnp.PyArray_DATA(improved_policy)
        cdef int32_t* ga = <int32_t*>cnp.PyArray_DATA(gumbel_action)
        cdef int32_t* rvis = <int32_t*>cnp.PyArray_DATA(root_visits)
        with nogil:
            self._tree.outputs(vc, rv, qv, ip, ga, rvis)
        return {"visit_counts": visit_counts, "root_value": root_value, "qvalues": qvalues,
                "improved_policy": improved_policy, "gumbel_action": gumbel_action, "root_visits": root_visits}

    cdef _grab(self, size_t ptr, int typenum, Py_ssize_t lo, Py_ssize_t n, bint per_action):
        """Copy of rows lo .. lo + n of a node array ([n]) or an edge array ([n, A])."""
        cdef Py_ssize_t width = self.num_actions if per_action else 1
        full = _view(<void*>ptr, typenum, self.batch_size * (self.num_simulations + 1) * width,
                     self._storage)
        arr = full[lo * width:(lo + n) * width].copy()
        return arr.reshape(n, self.num_actions) if per_action else arr

    def node_arrays(self, int b) -> dict:
        """Copies of root b's node arrays for the nodes created so far (nodes 0 .. s); see ptree.

        Rows of nodes that were never expanded (terminal, reuse or unused slots) show an empty child
        list (prior 0, legal False, children -1), as in the ptree; the C++ tree leaves such rows stale.
        """
        if not self._has_search:
            raise RuntimeError("call reset() before node_arrays()")
        if b < 0 or b >= self.batch_size:
            raise ValueError(f"b must be in [0, {self.batch_size}), got {b}")
        cdef Py_ssize_t lo = b * (self.num_simulations + 1)
        cdef Py_ssize_t n = self._tree.num_done() + 1 - (1 if self._tree.pending() else 0)
        self._tree.compute_pending_priors(b)   # the Gumbel rule defers some softmaxes (tree.h expand)
        out = {
            "parent": self._grab(<size_t>self._tree.parent(), cnp.NPY_INT32, lo, n, False),
            "action": self._grab(<size_t>self._tree.action(), cnp.NPY_INT32, lo, n, False),
            "visits": self._grab(<size_t>self._tree.visits(), cnp.NPY_INT32, lo, n, False),
            "value_sum": self._grab(<size_t>self._tree.value_sum(), cnp.NPY_FLOAT64, lo, n, False),
            "reward": self._grab(<size_t>self._tree.reward(), cnp.NPY_FLOAT64, lo, n, False),
            "raw_value": self._grab(<size_t>self._tree.raw_value(), cnp.NPY_FLOAT64, lo, n, False),
            "expanded": self._grab(<size_t>self._tree.expanded(), cnp.NPY_UINT8, lo, n, False).astype(bool),
            "terminal": self._grab(<size_t>self._tree.terminal(), cnp.NPY_UINT8, lo, n, False).astype(bool),
            "prior": self._grab(<size_t>self._tree.prior(), cnp.NPY_FLOAT64, lo, n, True),
            "legal": self._grab(<size_t>self._tree.legal(), cnp.NPY_UINT8, lo, n, True).astype(bool),
            "children": self._grab(<size_t>self._tree.child(), cnp.NPY_INT32, lo, n, True),
        }
        stale = ~out["expanded"]
        out["prior"][stale] = 0.0
        out["legal"][stale] = False
        out["children"][stale] = -1
        return out
