"""The wire format: every algorithm's segments round-trip exactly; 10,000 malformed frames sent to the learner's
receiver are all dropped and counted, none reaches the buffer, nothing crashes."""
import os
import socket
import struct
import sys
import time

import numpy as np
import pytest
import zmq

from lzlite.buffer.unizero_buffer import PaddedGameSegment
from lzlite.cluster import wire
from lzlite.cluster.learner import Receiver, episode_spec
from lzlite.config import compile_config
from lzlite.worker.run import build_components

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "entry"))
from tiny_configs import tiny_config  # noqa: E402

ALGOS = ["alphazero", "gumbel_alphazero", "muzero", "gumbel_muzero", "rezero", "unizero", "grounded_gumbel_muzero"]


def free_port(count: int = 2) -> int:
    """A port with the next ``count - 1`` free too (the learner binds PORT, PORT + 1 and, reanalyzing, PORT + 2)."""
    for _ in range(50):
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        if port + count > 65000:
            continue
        try:
            for k in range(1, count):
                with socket.socket() as s2:
                    s2.bind(("127.0.0.1", port + k))
            return port
        except OSError:
            continue
    raise RuntimeError("no free ports")


def _collect(algo, **overrides):
    cfg = compile_config(*tiny_config(algo, collector_env_num=2, n_episode=2, **overrides), seed=0)
    parts = build_components(cfg)
    segs, _ = parts["collector"].collect(num_segments=2) if algo == "unizero" else parts["collector"].collect()
    return cfg, parts, segs


@pytest.mark.parametrize("algo", ALGOS)
def test_every_algorithms_segments_round_trip_exactly(algo):
    cfg, parts, segs = _collect(algo)
    spec = episode_spec(parts, cfg.policy)
    for i, seg in enumerate(segs):
        frame = wire.encode_episode(seg, actor_id=3, actor_instance=99, episode_seq=i, version_min=10, version_max=12)
        back, info = spec.to_segment(wire.decode(frame, spec.max_bytes))
        assert type(back) is type(seg) and len(back) == len(seg)
        if isinstance(seg, PaddedGameSegment):
            assert (back.own_length, back.num_padding, back.num_moves) == (seg.own_length, seg.num_padding,
                                                                           seg.num_moves)
        a, b = seg.to_arrays(), back.to_arrays()
        assert a.keys() == b.keys()
        for key, va in a.items():
            vb = b[key]
            if isinstance(va, dict):
                assert va.keys() == vb.keys() and all(np.array_equal(va[k], vb[k]) for k in va), key
            elif isinstance(va, np.ndarray):
                assert va.dtype == vb.dtype and np.array_equal(va, vb, equal_nan=True), key
            else:
                assert va == vb, key
        assert (info.actor_id, info.episode_seq, info.version_min, info.version_max) == (3, i, 10, 12)
        assert info.env_steps == len(seg)
    if algo == "grounded_gumbel_muzero":
        assert segs[0].freeze().extras, "the recipe's per-step records travel too"


def _valid_frames(n_frames=8):
    cfg, parts, segs = _collect("alphazero")
    spec = episode_spec(parts, cfg.policy)
    return cfg, parts, spec, [wire.encode_episode(s, 0, 1, i, 0, 0) for i, s in enumerate(segs[:n_frames])], segs


def _reencode(frame, spec, change):
    """Decode a valid frame, let ``change(arrays, meta)`` edit it, encode it again."""
    msg = wire.decode(frame, spec.max_bytes)
    arrays = {k: np.array(v) for k, v in msg.arrays.items()}
    meta = dict(msg.meta)
    change(arrays, meta)
    return wire.encode(wire.Kind.EPISODE, meta, list(arrays.items()))


def fuzz_frames(valid, spec, n, rng):
    """``n`` frames, each wrong in one way the decoder or the spec must catch."""

    def nan_in(name):
        def change(a, m):
            a[name] = a[name].astype(np.float32) if a[name].dtype != np.float32 else a[name]
            a[name].reshape(-1)[rng.integers(a[name].size)] = np.nan
        return change

    def set_meta(key, value):
        def change(a, m):
            m[key] = value
        return change

    def retype(name, dtype):
        def change(a, m):
            a[name] = a[name].astype(dtype)
        return change

    def reshape(name):
        def change(a, m):
            x = a[name]
            a[name] = np.concatenate([x, x[..., :1]], axis=-1) if x.ndim > 1 else x[:-1] if len(x) > 1 else np.zeros(2)
        return change

    def header(field_index, value):
        def make(frame):
            parts = list(struct.unpack_from("<4sHHIIQ", frame, 0))
            parts[field_index] = value(parts[field_index])
            return struct.pack("<4sHHIIQ", *parts) + frame[24:]
        return make

    def illegal(a, m):
        bad = np.flatnonzero(~a["legal_mask"][0])
        if bad.size:
            a["action"][0] = bad[0]
        else:
            a["action"][0] = 99

    mutations = [
        lambda f: rng.bytes(int(rng.integers(0, 3000))),  # random bytes
        lambda f: f[: int(rng.integers(0, len(f)))],  # truncated
        lambda f: b"XXXX" + f[4:],  # wrong magic
        header(1, lambda v: v + 1 + int(rng.integers(100))),  # wrong format version
        header(2, lambda v: 50 + int(rng.integers(100))),  # unknown kind
        header(2, lambda v: wire.Kind.WEIGHTS),  # a kind this socket does not take
        header(3, lambda v: v + 1 + int(rng.integers(64))),  # meta length lies
        header(4, lambda v: v + 1 + int(rng.integers(5))),  # array count lies
        header(5, lambda v: v + 8 * (1 + int(rng.integers(100)))),  # data length lies
        header(5, lambda v: max(0, v - 8 * (1 + int(rng.integers(10))))),
        lambda f: f + bytes(8 * (1 + int(rng.integers(4)))),  # trailing bytes
        lambda f: bytes(spec.max_bytes + 1 + int(rng.integers(1000))),  # oversized
        lambda f: _reencode(f, spec, nan_in(["reward", "root_value", "policy", "obs"][int(rng.integers(4))])),
        lambda f: _reencode(f, spec, retype(["action", "to_play"][int(rng.integers(2))], np.int32)),
        lambda f: _reencode(f, spec, retype(["obs", "reward", "policy", "root_value"][int(rng.integers(4))],
                                            np.float64)),
        lambda f: _reencode(f, spec, reshape(["policy", "legal_mask", "obs", "action",
                                              "reward"][int(rng.integers(5))])),
        lambda f: _reencode(f, spec, illegal),
        lambda f: _reencode(f, spec, lambda a, m: a["policy"].__setitem__((0, 0), -1.0)),
        lambda f: _reencode(f, spec, lambda a, m: a["to_play"].__setitem__(0, 7)),
        lambda f: _reencode(f, spec, lambda a, m: a.pop("policy")),
        lambda f: _reencode(f, spec, lambda a, m: a.__setitem__("extra:unknown", np.zeros((len(a["action"]), 2),
                                                                                           np.float32))),
        lambda f: _reencode(f, spec, set_meta("env_steps", 10**6)),
        lambda f: _reencode(f, spec, set_meta("bootstrap_value", float("nan"))),
        lambda f: _reencode(f, spec, set_meta("flags", 1 | 64)),
        lambda f: _reencode(f, spec, set_meta("version_min", 10**9)),
        _bool_byte,  # a bool byte that is not 0 / 1
    ]
    out = []
    for i in range(n):
        frame = valid[int(rng.integers(len(valid)))]
        out.append(bytes(mutations[i % len(mutations)](frame)))
    return out


def _bool_byte(frame):
    """A legal mask byte of 2: not a bool (the frame's layout is otherwise valid)."""
    msg = wire.decode(frame, 1 << 30)
    legal = np.array(msg.arrays["legal_mask"])
    raw = bytearray(frame)
    start = bytes(frame).find(legal.tobytes())
    raw[start] = 2
    return bytes(raw)


def test_ten_thousand_malformed_frames_are_dropped_counted_and_never_reach_the_buffer():
    rng = np.random.default_rng(0)
    cfg, parts, spec, valid, segs = _valid_frames()
    frames = fuzz_frames(valid, spec, 10_000, rng)
    for frame in frames[:2000]:  # the decoder alone: every one raises WireError, nothing else
        with pytest.raises(wire.WireError):
            spec.to_segment(wire.decode(frame, spec.max_bytes, (wire.Kind.EPISODE,)))
    buffer = parts["buffer"]
    before = buffer.state_dict()
    ctx = zmq.Context()
    port = free_port()
    receiver = Receiver(ctx, f"tcp://127.0.0.1:{port}", spec, queue_size=64, hwm=1000)
    receiver.start()
    push = ctx.socket(zmq.PUSH)
    push.setsockopt(zmq.LINGER, 0)
    push.connect(f"tcp://127.0.0.1:{port}")
    try:
        for frame in frames:
            push.send(frame)
        for frame in valid:  # then the valid ones: the receiver still works
            push.send(frame)
        deadline = time.monotonic() + 60
        while receiver.received < len(frames) + len(valid) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert receiver.is_alive(), "the receiver thread died"
        assert receiver.received == len(frames) + len(valid)
        drops = receiver.drop_counts()
        assert sum(drops.values()) == len(frames), drops
        for reason in ("too_short", "too_large", "bad_magic", "bad_version", "bad_kind", "bad_length", "bad_dtype",
                       "bad_shape", "non_finite", "bad_value", "bad_fields", "unexpected_kind"):
            assert drops.get(reason, 0) > 0, (reason, drops)
        assert receiver.episodes.qsize() == len(valid)  # exactly the valid ones came through
        after = buffer.state_dict()
        assert after.keys() == before.keys() and all(after[k] == before[k] for k in ("_total", "_num_live"))
    finally:
        receiver.stopping.set()
        receiver.join(5)
        push.close(0)
        ctx.term()


def test_weights_frames_round_trip_and_are_checked_against_the_model():
    cfg = compile_config(*tiny_config("alphazero"), seed=0)
    state = build_components(cfg)["policy"].state_dict()["model"]
    frame = wire.encode_weights(wire.Kind.WEIGHTS, 5, 150, 1.0, state)
    msg = wire.decode(frame, 1 << 30)
    got = wire.decode_weights(msg, state)
    assert msg.meta["version"] == 150 and all(np.array_equal(got[k], v.numpy()) for k, v in state.items())
    bad = {k: (v.float() * np.nan if v.is_floating_point() else v) for k, v in state.items()}
    with pytest.raises(wire.WireError, match="non_finite"):
        wire.decode_weights(wire.decode(wire.encode_weights(wire.Kind.WEIGHTS, 5, 1, 1.0, bad), 1 << 30), state)
    fewer = dict(list(state.items())[1:])
    with pytest.raises(wire.WireError, match="bad_fields"):
        wire.decode_weights(wire.decode(wire.encode_weights(wire.Kind.WEIGHTS, 5, 1, 1.0, fewer), 1 << 30), state)


def test_reanalyze_replies_are_checked_field_by_field():
    def reply(positions, values, policy=None, **meta):
        arrays = [("positions", positions), ("root_value", values)] + ([("policy", policy)] if policy is not None else [])
        fields = dict(learner_instance=1, request_id=2, version=3, reanalyzer_id=0, has_policy=int(policy is not None))
        fields.update(meta)
        return wire.decode(wire.encode(wire.Kind.REANALYZE_REPLY, fields, arrays), 1 << 20)

    pos, val, pol = np.arange(4, dtype=np.int64), np.zeros(4, np.float32), np.full((4, 9), 1 / 9, np.float32)
    wire.check_reanalyze_reply(reply(pos, val, pol), 9)
    wire.check_reanalyze_reply(reply(pos, val), 9)  # values only (a policy without policy targets)
    bad = [(reply(pos, val.astype(np.float64), pol), "bad_dtype"), (reply(pos, val[:3], pol), "bad_shape"),
           (reply(pos, np.full(4, np.nan, np.float32), pol), "non_finite"), (reply(pos, val, -pol), "bad_value"),
           (reply(pos, val, pol[:, :8]), "bad_shape"), (reply(pos, val, has_policy=1), "bad_fields"),
           (reply(pos, val, pol, has_policy=2), "bad_value"), (reply(pos.astype(np.int32), val, pol), "bad_dtype")]
    for msg, reason in bad:
        with pytest.raises(wire.WireError) as e:
            wire.check_reanalyze_reply(msg, 9)
        assert e.value.reason == reason
