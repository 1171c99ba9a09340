"""The cluster's wire format: versioned, self-describing binary messages; never pickle (docs/wire.md).

Every message is one ZeroMQ frame::

    header      24 bytes  magic b"LZLW", format version u16, kind u16, meta_len u32, n_arrays u32, data_len u64
    meta        meta_len bytes: the kind's fixed fields (a struct per kind, ``META``)
    descriptors n_arrays x (name_len u16, name ASCII, dtype code u8, ndim u8, ndim x dim u32)
    padding     zeros up to a multiple of 8 bytes
    data        data_len bytes: each array's raw little-endian C-order bytes, each padded to a multiple of 8

All integers are little-endian. ``decode`` checks the frame's structure (magic, version, kind, every length
against the bytes present, dtype codes, names, shapes) and ``EpisodeSpec.to_segment`` the episode's content
against the game the learner trains (shapes, dtypes, values); both raise ``WireError`` with a ``reason`` from
``DROP_REASONS``, which the learner counts.
"""
from __future__ import annotations

import math
import re
import struct
from dataclasses import dataclass, field
from typing import Dict, List, Mapping, Optional, Sequence, Tuple

import numpy as np

from lzlite.buffer.game_segment import GameSegment
from lzlite.buffer.unizero_buffer import PaddedGameSegment

__all__ = ["MAGIC", "FORMAT_VERSION", "Kind", "Control", "WireError", "DROP_REASONS", "Message", "encode", "decode",
           "encode_episode", "EpisodeSpec", "EpisodeInfo", "encode_weights", "decode_weights", "kind_prefix",
           "check_reanalyze_request", "check_reanalyze_reply"]

MAGIC = b"LZLW"
FORMAT_VERSION = 1
_HEADER = struct.Struct("<4sHHIIQ")  # magic, version, kind, meta_len, n_arrays, data_len
_DESC_HEAD = struct.Struct("<H")  # name length
_DESC_TYPE = struct.Struct("<BB")  # dtype code, ndim
MAX_NAME = 200  # bytes of an array name (state-dict keys are the longest)
MAX_NDIM = 8
MAX_ARRAYS = 4096  # a weights message holds one array per parameter / buffer
_NAME_RE = re.compile(rb"^[A-Za-z0-9_.:\-]+$")


class Kind:
    """Message kinds (the header's ``kind``)."""

    EPISODE = 1  # actor -> learner: one closed GameSegment and where it came from
    WEIGHTS_ANNOUNCE = 2  # learner PUB: a new weights version is in the weights file
    WEIGHTS = 3  # learner PUB: a weights version with its arrays (actors without the file)
    CONTROL = 4  # learner PUB: run / pause / stop, and the learner's heartbeat
    HELLO = 5  # actor -> learner: an actor (re)started and wants the latest weights
    ACTOR_STATUS = 6  # actor -> learner: counters and where the actor spends its time
    REANALYZE_REQUEST = 7  # learner -> reanalyzers (PUSH): stored positions to search again
    REANALYZE_REPLY = 8  # reanalyzer -> learner: their refreshed targets


class Control:
    """CONTROL states."""

    RUN = 0
    PAUSE = 1  # actors finish the move in hand and wait (the learner has fallen behind the replay ratio)
    STOP = 2  # the run is over: actors exit


# The fixed fields of each kind: (struct, field names).
META: Dict[int, Tuple[struct.Struct, Tuple[str, ...]]] = {
    Kind.EPISODE: (struct.Struct("<IQQqqIBxxxiid"),
                   ("actor_id", "actor_instance", "episode_seq", "version_min", "version_max", "env_steps", "flags",
                    "own_length", "num_padding", "bootstrap_value")),
    Kind.WEIGHTS_ANNOUNCE: (struct.Struct("<Qqd"), ("learner_instance", "version", "published_at")),
    Kind.WEIGHTS: (struct.Struct("<Qqd"), ("learner_instance", "version", "published_at")),
    Kind.CONTROL: (struct.Struct("<QBxxxxxxxqQd"), ("learner_instance", "state", "version", "seq", "sent_at")),
    Kind.HELLO: (struct.Struct("<IQ"), ("actor_id", "actor_instance")),
    Kind.ACTOR_STATUS: (struct.Struct("<IQQQqddddd"),
                        ("actor_id", "actor_instance", "env_steps", "episodes", "version", "pickup_latency_s",
                         "play_s", "paused_s", "send_wait_s", "load_s")),
    Kind.REANALYZE_REQUEST: (struct.Struct("<QQq"), ("learner_instance", "request_id", "version")),
    Kind.REANALYZE_REPLY: (struct.Struct("<QQqIB"), ("learner_instance", "request_id", "version", "reanalyzer_id",
                                                     "has_policy")),
}

# dtype code <-> little-endian numpy dtype: nothing else decodes
_DTYPES = {1: np.dtype("bool"), 2: np.dtype("uint8"), 3: np.dtype("<i4"), 4: np.dtype("<i8"), 5: np.dtype("<f2"),
           6: np.dtype("<f4"), 7: np.dtype("<f8")}
_CODES = {dt: code for code, dt in _DTYPES.items()}

# EPISODE flags
F_DONE, F_PADDED, F_FINAL_OBS, F_PREDICTED = 1, 2, 4, 8

DROP_REASONS = ("too_short", "too_large", "bad_magic", "bad_version", "bad_kind", "bad_length", "bad_descriptor",
                "bad_dtype", "bad_shape", "non_finite", "bad_value", "bad_fields", "unexpected_kind", "policy_lag",
                "buffer_refused")


class WireError(ValueError):
    """A message that is not a valid lzlite wire message; ``reason`` is one of ``DROP_REASONS``."""

    def __init__(self, reason: str, message: str) -> None:
        assert reason in DROP_REASONS, reason
        super().__init__(f"{reason}: {message}")
        self.reason = reason


@dataclass
class Message:
    """A decoded frame: its kind, fixed fields and arrays (read-only views of the frame's bytes)."""

    kind: int
    meta: Dict[str, float]
    arrays: Dict[str, np.ndarray] = field(default_factory=dict)


def _pad8(n: int) -> int:
    return (-n) % 8


def kind_prefix(kind: int) -> bytes:
    """The first 8 bytes of every message of ``kind``: a SUB socket subscribes to a kind with it."""
    return MAGIC + struct.pack("<HH", FORMAT_VERSION, kind)


def encode(kind: int, meta: Mapping[str, float], arrays: Sequence[Tuple[str, np.ndarray]] = ()) -> bytes:
    """One frame of ``kind`` with its fixed fields and named arrays (C-order, little-endian on the wire)."""
    st, names = META[kind]
    meta_bytes = st.pack(*(meta[n] for n in names))
    desc, data = [], []
    for name, arr in arrays:
        arr = np.asarray(arr)
        dt = arr.dtype.newbyteorder("<") if arr.dtype.byteorder == ">" else arr.dtype
        if dt not in _CODES:
            raise TypeError(f"array {name!r}: dtype {arr.dtype} has no wire code (allowed: "
                            f"{sorted(str(d) for d in _CODES)})")
        b = name.encode("ascii")
        desc.append(_DESC_HEAD.pack(len(b)) + b + _DESC_TYPE.pack(_CODES[dt], arr.ndim)
                    + struct.pack(f"<{arr.ndim}I", *arr.shape))
        raw = np.ascontiguousarray(arr, dtype=dt).tobytes()
        data.append(raw + bytes(_pad8(len(raw))))
    desc_bytes = b"".join(desc)
    body = meta_bytes + desc_bytes
    data_bytes = b"".join(data)
    header = _HEADER.pack(MAGIC, FORMAT_VERSION, kind, len(meta_bytes), len(arrays), len(data_bytes))
    return header + body + bytes(_pad8(len(header) + len(body))) + data_bytes


def decode(buf: bytes, max_bytes: int, kinds: Optional[Sequence[int]] = None) -> Message:
    """Check a frame's structure and return its fields and arrays (views of ``buf``: copy what you keep).

    Args:
        buf: the frame.
        max_bytes: frames longer than this are refused ('too_large') before anything is read.
        kinds: the kinds the receiving socket accepts (None: any known kind).

    Raises:
        WireError: the first problem found.
    """
    n = len(buf)
    if n > max_bytes:
        raise WireError("too_large", f"{n} bytes > the cap {max_bytes}")
    if n < _HEADER.size:
        raise WireError("too_short", f"{n} bytes < the {_HEADER.size}-byte header")
    magic, version, kind, meta_len, n_arrays, data_len = _HEADER.unpack_from(buf, 0)
    if magic != MAGIC:
        raise WireError("bad_magic", f"magic {magic!r}, expected {MAGIC!r}")
    if version != FORMAT_VERSION:
        raise WireError("bad_version", f"format version {version}, this lzlite reads {FORMAT_VERSION}")
    if kind not in META:
        raise WireError("bad_kind", f"unknown message kind {kind}")
    if kinds is not None and kind not in kinds:
        raise WireError("unexpected_kind", f"kind {kind} is not accepted on this socket (accepted: {list(kinds)})")
    st, names = META[kind]
    if meta_len != st.size:
        raise WireError("bad_length", f"meta_len {meta_len}, kind {kind} has {st.size}")
    if n_arrays > MAX_ARRAYS:
        raise WireError("bad_length", f"{n_arrays} arrays > {MAX_ARRAYS}")
    pos = _HEADER.size
    if pos + meta_len > n:
        raise WireError("bad_length", f"meta runs past the frame's end ({n} bytes)")
    meta = dict(zip(names, st.unpack_from(buf, pos)))
    pos += meta_len
    descs = []
    for i in range(n_arrays):
        if pos + _DESC_HEAD.size > n:
            raise WireError("bad_length", f"descriptor {i} runs past the frame's end")
        (name_len,) = _DESC_HEAD.unpack_from(buf, pos)
        pos += _DESC_HEAD.size
        if not 0 < name_len <= MAX_NAME or pos + name_len + _DESC_TYPE.size > n:
            raise WireError("bad_descriptor", f"descriptor {i}: name length {name_len}")
        raw_name = bytes(buf[pos:pos + name_len])
        if not _NAME_RE.match(raw_name):
            raise WireError("bad_descriptor", f"descriptor {i}: name {raw_name[:40]!r} is not [A-Za-z0-9_.:-]")
        pos += name_len
        code, ndim = _DESC_TYPE.unpack_from(buf, pos)
        pos += _DESC_TYPE.size
        if code not in _DTYPES:
            raise WireError("bad_dtype", f"array {raw_name.decode()}: unknown dtype code {code}")
        if ndim > MAX_NDIM or pos + 4 * ndim > n:
            raise WireError("bad_descriptor", f"array {raw_name.decode()}: ndim {ndim}")
        shape = struct.unpack_from(f"<{ndim}I", buf, pos)
        pos += 4 * ndim
        descs.append((raw_name.decode("ascii"), _DTYPES[code], shape))
    pos += _pad8(pos)
    if pos + data_len != n:
        raise WireError("bad_length", f"header says {pos + data_len} bytes, the frame has {n}")
    arrays: Dict[str, np.ndarray] = {}
    view = memoryview(buf)
    for name, dt, shape in descs:
        if name in arrays:
            raise WireError("bad_descriptor", f"array {name} appears twice")
        count = math.prod(shape)
        nbytes = count * dt.itemsize
        if pos + nbytes > n:
            raise WireError("bad_length", f"array {name} {shape} {dt} needs {nbytes} bytes past offset {pos}; the "
                                          f"frame has {n}")
        arr = np.frombuffer(view, dtype=dt, count=count, offset=pos).reshape(shape)
        if dt == np.bool_ and count and int(arr.view(np.uint8).max()) > 1:
            raise WireError("bad_value", f"bool array {name} holds bytes other than 0 / 1")
        arrays[name] = arr
        pos += nbytes + _pad8(nbytes)
    if pos != n:
        raise WireError("bad_length", f"arrays end at byte {pos}, the frame has {n}")
    return Message(kind=kind, meta=meta, arrays=arrays)


# ---------------------------------------------------------------------------------------------- episodes
@dataclass(frozen=True)
class EpisodeInfo:
    """Where an episode came from (the EPISODE message's fixed fields)."""

    actor_id: int
    actor_instance: int  # random per actor process start
    episode_seq: int  # per actor instance, counts up
    version_min: int  # oldest weights version the collect that played it used
    version_max: int  # newest
    env_steps: int  # new env steps it brings (len(segment): a padded segment's own moves)


def encode_episode(seg: GameSegment, actor_id: int, actor_instance: int, episode_seq: int, version_min: int,
                   version_max: int) -> bytes:
    """One closed GameSegment (plain or padded), every field it holds, as an EPISODE frame."""
    f = seg.freeze()
    padded = isinstance(seg, PaddedGameSegment)
    flags = F_DONE * f.done | F_PADDED * padded | F_FINAL_OBS * (f.final_obs is not None) \
        | F_PREDICTED * (f.predicted_value is not None)
    arrays: List[Tuple[str, np.ndarray]] = [
        ("obs", f.obs), ("action", f.action), ("reward", f.reward), ("to_play", f.to_play),
        ("legal_mask", f.legal_mask), ("root_value", f.root_value), ("policy", f.policy)]
    if f.predicted_value is not None:  # NaN marks a step without a prediction: sent as a mask, values finite
        given = np.isfinite(f.predicted_value)
        arrays += [("predicted_value", np.where(given, f.predicted_value, 0.0).astype(np.float32)),
                   ("predicted_given", given)]
    if f.final_obs is not None:
        arrays.append(("final_obs", f.final_obs))
    arrays += [(f"extra:{name}", x) for name, x in sorted(f.extras.items())]
    meta = dict(actor_id=actor_id, actor_instance=actor_instance, episode_seq=episode_seq, version_min=version_min,
                version_max=version_max, env_steps=len(seg), flags=flags,
                own_length=seg.own_length if padded else (seg.game_segment_length or 0),
                num_padding=seg.num_padding if padded else 0, bootstrap_value=f.bootstrap_value)
    return encode(Kind.EPISODE, meta, arrays)


@dataclass
class EpisodeSpec:
    """What an episode of the game the learner trains looks like; ``to_segment`` holds a message to it.

    Args:
        obs_shape: one observation's shape.
        obs_dtype: the env's observation dtype (float32 or uint8).
        action_space_size: A.
        max_steps: the most moves a segment may hold (the collector's segment length plus padding).
        extras: name -> per-step shape of the records the policy declares (``Policy.record_step``).
        padded: whether the config's collector makes padded segments (UniZero's) rather than plain ones.
    """

    obs_shape: Tuple[int, ...]
    obs_dtype: np.dtype
    action_space_size: int
    max_steps: int
    extras: Dict[str, Tuple[int, ...]] = field(default_factory=dict)
    padded: bool = False

    @property
    def max_bytes(self) -> int:
        """The largest EPISODE frame such an episode can make (the receiver's size cap)."""
        L, A = self.max_steps, self.action_space_size
        obs = math.prod(self.obs_shape) * np.dtype(self.obs_dtype).itemsize
        step = obs + 8 + 4 + 8 + A + 4 + 4 * A + 4 + 1 + sum(4 * math.prod(s) for s in self.extras.values())
        arrays = 10 + len(self.extras)
        return 4096 + arrays * (MAX_NAME + 64) + L * step + obs + 8 * arrays

    def to_segment(self, msg: Message) -> Tuple[GameSegment, EpisodeInfo]:
        """The GameSegment an EPISODE message holds, checked field by field.

        Raises:
            WireError: 'bad_fields' (missing / unknown arrays), 'bad_dtype', 'bad_shape', 'non_finite',
                'bad_value' (an illegal action, a negative policy, a bad to_play, inconsistent counts).
        """
        if msg.kind != Kind.EPISODE:
            raise WireError("unexpected_kind", f"kind {msg.kind} is not an episode")
        m, a = msg.meta, msg.arrays
        flags = int(m["flags"])
        if flags & ~(F_DONE | F_PADDED | F_FINAL_OBS | F_PREDICTED):
            raise WireError("bad_value", f"unknown flag bits {flags:#x}")
        padded = bool(flags & F_PADDED)
        if padded != self.padded:
            raise WireError("bad_fields", f"a {'padded' if padded else 'plain'} segment, but this run's collector "
                                          f"makes {'padded' if self.padded else 'plain'} ones")
        want = {"obs", "action", "reward", "to_play", "legal_mask", "root_value", "policy"}
        if flags & F_PREDICTED:
            want |= {"predicted_value", "predicted_given"}
        if flags & F_FINAL_OBS:
            want.add("final_obs")
        want |= {f"extra:{name}" for name in self.extras}
        if set(a) != want:
            raise WireError("bad_fields", f"arrays {sorted(a)}, expected {sorted(want)}")
        L = a["action"].shape[0] if a["action"].ndim == 1 else -1
        if not 1 <= L <= self.max_steps:
            raise WireError("bad_shape", f"{L} steps; a segment holds 1..{self.max_steps}")
        A = self.action_space_size
        expect = {"obs": ((L,) + tuple(self.obs_shape), np.dtype(self.obs_dtype)),
                  "action": ((L,), np.dtype("<i8")), "reward": ((L,), np.dtype("<f4")),
                  "to_play": ((L,), np.dtype("<i8")), "legal_mask": ((L, A), np.dtype(bool)),
                  "root_value": ((L,), np.dtype("<f4")), "policy": ((L, A), np.dtype("<f4")),
                  "predicted_value": ((L,), np.dtype("<f4")), "predicted_given": ((L,), np.dtype(bool)),
                  "final_obs": (tuple(self.obs_shape), np.dtype(self.obs_dtype))}
        expect.update({f"extra:{k}": ((L,) + tuple(s), np.dtype("<f4")) for k, s in self.extras.items()})
        for name, arr in a.items():
            shape, dt = expect[name]
            if arr.dtype != dt:
                raise WireError("bad_dtype", f"{name} is {arr.dtype}, expected {dt}")
            if arr.shape != shape:
                raise WireError("bad_shape", f"{name} has shape {arr.shape}, expected {shape}")
            if arr.dtype.kind == "f" and not np.isfinite(arr).all():
                raise WireError("non_finite", f"{name} holds NaN or inf")
        bootstrap = float(m["bootstrap_value"])
        if not math.isfinite(bootstrap):
            raise WireError("non_finite", "bootstrap_value is NaN or inf")
        action, legal, policy = a["action"], a["legal_mask"], a["policy"]
        if (action < 0).any() or (action >= A).any():
            raise WireError("bad_value", f"an action outside [0, {A})")
        if not legal[np.arange(L), action].all():
            raise WireError("bad_value", "an action that its step's legal mask forbids")
        if (policy < 0).any():
            raise WireError("bad_value", "a negative policy target")
        if not np.isin(a["to_play"], (-1, 0, 1)).all():
            raise WireError("bad_value", "to_play outside {-1, 0, 1}")
        done = bool(flags & F_DONE)
        if done and bootstrap != 0.0:
            raise WireError("bad_value", f"a finished episode with bootstrap_value {bootstrap} (must be 0)")
        env_steps = int(m["env_steps"])
        if padded:
            own, pad = int(m["own_length"]), int(m["num_padding"])
            if own < 1 or pad < 0 or L > own + pad or env_steps != min(L, own):
                raise WireError("bad_value", f"padded segment: own_length {own}, num_padding {pad}, {L} moves, "
                                             f"env_steps {env_steps}")
            seg: GameSegment = PaddedGameSegment(A, own, pad)
        else:
            if env_steps != L:
                raise WireError("bad_value", f"env_steps {env_steps} but {L} moves")
            seg = GameSegment(A, None)
        if int(m["version_min"]) > int(m["version_max"]):
            raise WireError("bad_value", f"weights versions {m['version_min']} > {m['version_max']}")
        pred = a.get("predicted_value")
        given = a.get("predicted_given")
        extras = {k[len("extra:"):]: v for k, v in a.items() if k.startswith("extra:")}
        try:  # GameSegment repeats its own per-step checks; anything it refuses is a bad message
            for t in range(L):
                seg.append(a["obs"][t], int(action[t]), float(a["reward"][t]), int(a["to_play"][t]), legal[t],
                           float(a["root_value"][t]), policy[t],
                           None if pred is None or not given[t] else float(pred[t]),
                           extras={k: v[t] for k, v in extras.items()})
            seg.close(a.get("final_obs"), done=done, bootstrap_value=None if done else bootstrap)
        except ValueError as e:
            raise WireError("bad_value", str(e)[:200]) from None
        info = EpisodeInfo(actor_id=int(m["actor_id"]), actor_instance=int(m["actor_instance"]),
                           episode_seq=int(m["episode_seq"]), version_min=int(m["version_min"]),
                           version_max=int(m["version_max"]), env_steps=env_steps)
        return seg, info


# ---------------------------------------------------------------------------------------------- weights
def encode_weights(kind: int, learner_instance: int, version: int, published_at: float,
                   model_state: Optional[Mapping[str, "object"]] = None) -> bytes:
    """A WEIGHTS_ANNOUNCE frame, or a WEIGHTS frame carrying ``model_state`` (name -> tensor) as arrays."""
    arrays = []
    if kind == Kind.WEIGHTS:
        for name, t in model_state.items():
            arrays.append((name, t.detach().cpu().contiguous().numpy()))
    return encode(kind, dict(learner_instance=learner_instance, version=version, published_at=published_at), arrays)


def decode_weights(msg: Message, expected: Mapping[str, "object"]) -> Dict[str, np.ndarray]:
    """The arrays of a WEIGHTS message checked against a model's state dict (same names, shapes, dtypes, finite).

    Raises:
        WireError: 'bad_fields', 'bad_shape', 'bad_dtype' or 'non_finite'.
    """
    if msg.kind != Kind.WEIGHTS:
        raise WireError("unexpected_kind", f"kind {msg.kind} is not weights")
    if set(msg.arrays) != set(expected):
        missing = sorted(set(expected) - set(msg.arrays))[:3]
        raise WireError("bad_fields", f"weights do not match the model (missing e.g. {missing})")
    out = {}
    for name, ref in expected.items():
        arr = msg.arrays[name]
        want = ref.detach().cpu().numpy()
        if arr.shape != want.shape:
            raise WireError("bad_shape", f"{name}: {arr.shape}, the model has {want.shape}")
        if arr.dtype != want.dtype.newbyteorder("<"):
            raise WireError("bad_dtype", f"{name}: {arr.dtype}, the model has {want.dtype}")
        if arr.dtype.kind == "f" and not np.isfinite(arr).all():
            raise WireError("non_finite", f"{name} holds NaN or inf")
        out[name] = arr.copy()
    return out


# ---------------------------------------------------------------------------------------------- reanalyze
def _check_arrays(msg: Message, expect: Mapping[str, Tuple[Tuple[int, ...], np.dtype]]) -> int:
    """Exactly ``expect``'s arrays (shape with -1 for M, the shared first dimension) and dtypes, finite; returns M."""
    if set(msg.arrays) != set(expect):
        raise WireError("bad_fields", f"arrays {sorted(msg.arrays)}, expected {sorted(expect)}")
    m = msg.arrays["positions"].shape[0] if msg.arrays["positions"].ndim == 1 else -1
    if m < 1:
        raise WireError("bad_shape", "positions must be a non-empty vector")
    for name, (shape, dt) in expect.items():
        arr = msg.arrays[name]
        if arr.dtype != dt:
            raise WireError("bad_dtype", f"{name} is {arr.dtype}, expected {dt}")
        if arr.shape != tuple(m if d == -1 else d for d in shape):
            raise WireError("bad_shape", f"{name} has shape {arr.shape}")
        if arr.dtype.kind == "f" and not np.isfinite(arr).all():
            raise WireError("non_finite", f"{name} holds NaN or inf")
    return m


def check_reanalyze_request(msg: Message, spec: EpisodeSpec) -> None:
    """A REANALYZE_REQUEST: ``positions`` int64 [M], ``obs`` [M, *obs_shape], ``legal_mask`` bool [M, A]."""
    if msg.kind != Kind.REANALYZE_REQUEST:
        raise WireError("unexpected_kind", f"kind {msg.kind} is not a reanalyze request")
    _check_arrays(msg, {"positions": ((-1,), np.dtype("<i8")),
                        "obs": ((-1,) + tuple(spec.obs_shape), np.dtype(spec.obs_dtype)),
                        "legal_mask": ((-1, spec.action_space_size), np.dtype(bool))})


def check_reanalyze_reply(msg: Message, action_space_size: int) -> None:
    """A REANALYZE_REPLY: ``positions`` int64 [M], ``root_value`` float32 [M], and with ``has_policy``
    ``policy`` float32 [M, A] (non-negative)."""
    if msg.kind != Kind.REANALYZE_REPLY:
        raise WireError("unexpected_kind", f"kind {msg.kind} is not a reanalyze reply")
    expect = {"positions": ((-1,), np.dtype("<i8")), "root_value": ((-1,), np.dtype("<f4"))}
    if msg.meta["has_policy"] not in (0, 1):
        raise WireError("bad_value", f"has_policy {msg.meta['has_policy']}")
    if msg.meta["has_policy"]:
        expect["policy"] = ((-1, action_space_size), np.dtype("<f4"))
    _check_arrays(msg, expect)
    if msg.meta["has_policy"] and (msg.arrays["policy"] < 0).any():
        raise WireError("bad_value", "a negative policy target")
