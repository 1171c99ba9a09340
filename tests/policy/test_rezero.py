"""ReZero: backward-view reuse on a hand-checked tree, whole-buffer coverage, schedule, end to end."""
from __future__ import annotations

import dataclasses
from typing import List, Sequence, Tuple

import numpy as np
import pytest
import torch

from lzlite.buffer import GameSegment, ReplayBuffer
from lzlite.policy.reanalyze import CountingLatentAdapter, reanalyze_buffer
from lzlite.config import compile_config, extend_base
from lzlite.mcts.types import SearchConfig

A = 3
GAMMA = 0.9
ROOT_Q = 0.5 + GAMMA * -1 * 0.2  # Q of any expanded root child of the fake model: reward 0.5, value 0.2, two-player


@pytest.fixture(autouse=True)
def one_torch_thread():
    # tiny networks on a shared CPU: extra intra-op threads only contend (as policy.num_threads=1 does in training)
    old = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(old)


@dataclasses.dataclass
class _Out:
    value: torch.Tensor
    reward: torch.Tensor
    policy_logits: torch.Tensor
    latent_state: torch.Tensor


class FakeModel:
    """Deterministic model: latent = (obs id, depth); root value 0.1 * id; every child reward 0.5, value 0.2;
    uniform priors. Logs (id, depth, action) of every recurrent row it evaluates."""

    def __init__(self) -> None:
        self.log: List[Tuple[int, int, int]] = []

    def parameters(self):
        return iter(())

    def initial_inference(self, obs: torch.Tensor) -> _Out:
        ids = obs[:, 0].float()
        B = len(ids)
        return _Out(0.1 * ids, torch.zeros(B), torch.zeros(B, A), torch.stack([ids, torch.zeros(B)], 1))

    def recurrent_inference(self, latent: torch.Tensor, action: torch.Tensor) -> _Out:
        B = len(latent)
        self.log += [(int(i), int(d), int(a)) for (i, d), a in zip(latent.tolist(), action.tolist())]
        nxt = torch.stack([latent[:, 0], latent[:, 1] + 1], 1)
        return _Out(torch.full((B,), 0.2), torch.full((B,), 0.5), torch.zeros(B, A), nxt)


def segment(ids: Sequence[int], actions: Sequence[int], rewards: Sequence[float], *, done: bool,
            bootstrap: float = 0.0) -> GameSegment:
    seg = GameSegment(A)
    for i, a, r in zip(ids, actions, rewards):
        seg.append(np.array([i, 0.0], np.float32), action=a, reward=r, to_play=1, legal_mask=np.ones(A, bool),
                   root_value=7.0, policy=np.full(A, 1.0 / A, np.float32))
    seg.close(np.array([ids[-1] + 1, 0.0], np.float32), done=done, bootstrap_value=None if done else bootstrap)
    return seg


def hand_buffer(td_steps: int = 9) -> ReplayBuffer:
    buf = ReplayBuffer(dict(replay_buffer_size=100, discount_factor=GAMMA, value_sign=-1, td_steps=td_steps,
                            num_unroll_steps=0, batch_size=4))
    # game 1: ids 1, 2, 3, action 1 each time, the last move wins (+1 for its mover), episode over
    # game 2: ids 4, 5, actions 0 then 1, cut after two moves with bootstrap value 0.25
    buf.push_segments([segment([1, 2, 3], [1, 1, 1], [0.0, 0.0, 1.0], done=True),
                       segment([4, 5], [0, 1], [0.0, 0.0], done=False, bootstrap=0.25)])
    return buf


def search_cfg(backend: str, num_simulations: int = 2) -> SearchConfig:
    return SearchConfig(num_simulations=num_simulations, discount=GAMMA, value_sign=-1.0, backend=backend)


# By hand, for the fake model with S = 2 and uniform priors: simulation 1 takes the lowest action (0),
# simulation 2 then prefers the unvisited action 1 (exploration term sqrt(2)/1 beats sqrt(2)/2, and Qn
# is 0 while only one Q was seen). So with the taken action in {0, 1} the root sees the expanded child
# (Q = ROOT_Q) and the reused child (Q = q_t):  V(t) = (0.1 * id + ROOT_Q + q_t) / 3,
# q_t = r_t + gamma * (-1) * V(t + 1).
def hand_values() -> Tuple[dict, dict]:
    q, v = {}, {}
    q[3] = 1.0 + GAMMA * -1 * 0.0                      # final state terminal: V = 0
    v[3] = (0.3 + ROOT_Q + q[3]) / 3                    # = 0.54
    q[2] = 0.0 - GAMMA * v[3]
    v[2] = (0.2 + ROOT_Q + q[2]) / 3
    q[1] = 0.0 - GAMMA * v[2]
    v[1] = (0.1 + ROOT_Q + q[1]) / 3
    q[5] = 0.0 - GAMMA * 0.25                           # cut segment: its bootstrap value
    v[5] = (0.5 + ROOT_Q + q[5]) / 3
    q[4] = 0.0 - GAMMA * v[5]
    v[4] = (0.4 + ROOT_Q + q[4]) / 3
    return q, v


@pytest.mark.parametrize("backend", ["py", "c"])
def test_backward_view_matches_hand_computed_tree(backend):
    buf = hand_buffer()
    model = FakeModel()
    adapter = CountingLatentAdapter(model, lambda x: x, lambda x: x, "cpu")
    seen = []
    stats = reanalyze_buffer(buf, adapter, search_cfg(backend), batch_size=2, backward_view=True,
                             policy_target_fn=lambda out: out.visit_counts / 2.0,
                             on_search=lambda pos, out, ra, rv: seen.append((pos.tolist(), ra.tolist(), rv.tolist())))
    q, v = hand_values()
    assert v[3] == pytest.approx(0.54)
    # positions 0..2 are ids 1..3, 3 is game 1's final row, 4..5 are ids 4..5, 6 is game 2's final row
    pos_id = {0: 1, 1: 2, 2: 3, 4: 4, 5: 5}
    # two lanes walk the games backwards; the shorter game's lane retires after its first position
    assert [s[0] for s in seen] == [[2, 5], [1, 4], [0]]
    for positions, reuse_action, reuse_value in seen:
        for p, a, rv in zip(positions, reuse_action, reuse_value):
            assert a == buf.read_rows([p])["action"][0]
            assert rv == pytest.approx(q[pos_id[p]], abs=1e-6)
    rows = buf.read_rows(np.array([0, 1, 2, 4, 5]))
    np.testing.assert_allclose(rows["root_value"], [v[i] for i in (1, 2, 3, 4, 5)], atol=1e-6)
    np.testing.assert_allclose(rows["policy"], np.tile([0.5, 0.5, 0.0], (5, 1)))
    # the reused child (depth-0 child of the taken action) was never expanded: the network saw one
    # root child per position, the untaken one of actions {0, 1} (id 4 took 0, the others took 1)
    assert sorted(model.log) == [(1, 0, 0), (2, 0, 0), (3, 0, 0), (4, 0, 1), (5, 0, 0)]
    assert (stats.positions, stats.segments, stats.searches) == (5, 2, 3)
    assert stats.network_rows == 5 + 5 and stats.reused_visits == 5 and stats.rows_per_position == 2.0
    # final-state rows keep their stored values (0 terminal, 0.25 bootstrap) and zero policies
    final = buf.read_rows(np.array([3, 6]))
    np.testing.assert_array_equal(final["root_value"], [0.0, 0.25])
    assert not final["policy"].any()


@pytest.mark.parametrize("backend", ["py", "c"])
def test_plain_reanalyze_expands_every_simulation(backend):
    buf = hand_buffer()
    model = FakeModel()
    adapter = CountingLatentAdapter(model, lambda x: x, lambda x: x, "cpu")
    stats = reanalyze_buffer(buf, adapter, search_cfg(backend), batch_size=8, backward_view=False)
    rows = buf.read_rows(np.array([0, 1, 2, 4, 5]))
    # both simulations expand a real child: V = (0.1 * id + 2 * ROOT_Q) / 3
    np.testing.assert_allclose(rows["root_value"], [(0.1 * i + 2 * ROOT_Q) / 3 for i in (1, 2, 3, 4, 5)], atol=1e-6)
    np.testing.assert_allclose(rows["policy"], 1.0 / A)  # policy_target_fn=None keeps the stored targets
    # same lanes as the backward view (one per game), so the same 3 batched searches
    assert stats.network_rows == 5 * 3 and stats.reused_visits == 0 and stats.searches == 3
    assert sorted(model.log) == sorted((i, 0, a) for i in (1, 2, 3, 4, 5) for a in (0, 1))


def test_samples_use_the_reanalysed_values():
    buf = hand_buffer(td_steps=1)
    reanalyze_buffer(buf, CountingLatentAdapter(FakeModel(), lambda x: x, lambda x: x, "cpu"), search_cfg("py"),
                     policy_target_fn=lambda out: out.visit_counts / 2.0)
    _, v = hand_values()
    # one-step target of position t: r_t - gamma * V(t + 1), V of the final row = its stored value
    expect = {0: -GAMMA * v[2], 1: -GAMMA * v[3], 2: 1.0, 4: -GAMMA * v[5], 5: -GAMMA * 0.25}
    batch = buf.sample(5, np.random.default_rng(0))
    assert len(set(batch.indices.tolist())) >= 3
    for p, tv, pol in zip(batch.indices, batch.target_value[:, 0], batch.target_policy[:, 0]):
        assert tv == pytest.approx(expect[int(p)], abs=1e-6)
        np.testing.assert_allclose(pol, [0.5, 0.5, 0.0])


def test_every_sampleable_row_once_with_eviction():
    rng = np.random.default_rng(0)
    buf = ReplayBuffer(dict(replay_buffer_size=40, discount_factor=1.0, value_sign=-1))
    next_id, game_start = 1, []
    for _ in range(6):  # 6 pushes of 2 games of 2..7 moves overflow 40 rows: the oldest live game is cut
        segs = []
        for _ in range(2):
            n = int(rng.integers(2, 8))
            game_start.append(next_id)
            segs.append(segment(list(range(next_id, next_id + n)), rng.integers(0, A, n).tolist(),
                                rng.uniform(-1, 1, n).round(2).tolist(), done=bool(rng.integers(0, 2)), bootstrap=0.3))
            next_id += n
        buf.push_segments(segs)
    first, end = buf.live_segments()
    live = [p for p in range(buf._total - buf.capacity, buf._total) if buf._sampleable[p % buf.capacity]]
    first_id = buf.read_rows(first)["obs"][:, 0].astype(int).tolist()
    # the oldest live game (ids 25..30) lost its first two moves to eviction; the others are whole
    assert first[0] == buf._total - buf.capacity and first_id == [27, 31, 37, 44, 51, 54]
    assert first_id[1:] == game_start[-5:] and 25 in game_start
    assert sorted(np.concatenate([np.arange(f, e) for f, e in zip(first, end)]).tolist()) == live
    final_before = buf.read_rows(end)
    seen = []
    for backward in (True, False):
        seen.clear()
        stats = reanalyze_buffer(buf, CountingLatentAdapter(FakeModel(), lambda x: x, lambda x: x, "cpu"),
                                 search_cfg("c", 4), batch_size=3, backward_view=backward,
                                 policy_target_fn=lambda out: out.visit_counts / 4.0,
                                 on_search=lambda pos, *_: seen.extend(pos.tolist()))
        assert sorted(seen) == live and stats.positions == len(live)  # each sampleable row exactly once
        assert not set(seen) & set(end.tolist())
    after = buf.read_rows(end)
    np.testing.assert_array_equal(after["root_value"], final_before["root_value"])
    np.testing.assert_array_equal(after["policy"], final_before["policy"])
    assert np.all(buf.read_rows(np.array(live))["root_value"] != 7.0)


def test_write_targets_rejects_final_and_evicted_rows():
    buf = hand_buffer()
    with pytest.raises(ValueError, match="position 3 is not a live sampleable"):
        buf.write_targets(np.array([3]), np.array([0.0]))
    with pytest.raises(ValueError, match="position 99 is not a live"):
        buf.read_rows(np.array([99]))
    with pytest.raises(ValueError, match="policies must have shape"):
        buf.write_targets(np.array([0]), np.array([0.0]), np.zeros((1, 2)))


# ------------------------------------------------------------------ with the real policy
def tiny_rezero(**policy):
    model = dict(observation_shape=[3, 3, 3], action_space_size=9, num_res_blocks=1, num_channels=8,
                 support_scale=5, reward_head_channels=4, value_head_channels=4, policy_head_channels=4,
                 fc_reward_layers=[8], fc_value_layers=[8], fc_policy_layers=[8])
    p = dict(model=model, num_simulations=8, collector_env_num=8, n_episode=8, batch_size=32, replay_ratio=0.25,
             replay_buffer_size=2000, eval_freq=1000, eval_episodes=4, eval_bots=["random"], save_ckpt_freq=1000,
             num_unroll_steps=3, td_steps=5, discount_factor=1.0, num_threads=1, reanalyze_batch_size=64)
    p.update(policy)
    return list(extend_base("rezero", dict(exp_name="tiny_rezero", policy=p), dict(env=dict(type="tictactoe"))))


def test_flag_off_equals_muzero_reanalyze_fn():
    from lzlite.entry.loop import build_components

    torch.manual_seed(0)
    policy = build_components(compile_config(*tiny_rezero(), seed=0))["policy"]
    rng = np.random.default_rng(1)
    buf = ReplayBuffer(dict(replay_buffer_size=200, value_sign=-1))
    segs = []
    for _ in range(6):
        seg = GameSegment(9)
        for t in range(5):
            seg.append(rng.integers(0, 2, (3, 3, 3)).astype(np.float32), action=int(rng.integers(9)), reward=0.0,
                       to_play=1 + t % 2, legal_mask=np.ones(9, bool), root_value=0.0, policy=np.full(9, 1 / 9))
        seg.close(None, done=True)
        segs.append(seg)
    buf.push_segments(segs)
    first, end = buf.live_segments()
    pos = np.concatenate([np.arange(f, e) for f, e in zip(first, end)])
    rows = buf.read_rows(pos)
    expect, _ = policy.reanalyze_fn()(rows["obs"], rows["legal_mask"])
    stats = policy.reanalyze_buffer(buf, backward_view=False)
    np.testing.assert_allclose(buf.read_rows(pos)["root_value"], expect, rtol=1e-5, atol=1e-6)
    assert stats.rows_per_position == 1 + 8
    back = policy.reanalyze_buffer(buf, backward_view=True, write=False)
    assert back.rows_per_position == pytest.approx(1 + 8 - back.reused_visits / back.positions)
    assert back.rows_per_position < 1 + 8


def test_schedule_and_resume_state():
    from lzlite.entry.loop import build_components

    policy = build_components(compile_config(*tiny_rezero(reanalyze_interval=10), seed=0))["policy"]
    buf = hand_buffer()
    runs = []
    policy.reanalyze_buffer = lambda b, **kw: runs.append(b)  # count calls only
    for it in (0, 5, 10, 12, 19, 20, 35):
        policy.after_collect(buf, it)
    assert len(runs) == 3  # at 10, 20 and 35
    state = policy.state_dict()
    assert state["last_reanalyze_iter"] == 35
    fresh = build_components(compile_config(*tiny_rezero(reanalyze_interval=10), seed=0))["policy"]
    fresh.load_state_dict(state)
    assert fresh._last_reanalyze_iter == 35
    with pytest.raises(ValueError, match=r"reanalyze_interval' must be in \[0, inf\)"):
        build_components(compile_config(*tiny_rezero(reanalyze_interval=-1), seed=0))


def test_train_rezero_end_to_end(tmp_path):
    from lzlite.entry import train_rezero

    policy = train_rezero(tiny_rezero(reanalyze_interval=2), seed=0, max_env_step=200, run_dir=str(tmp_path),
                          progress=False)
    assert policy.num_reanalyzes >= 1
    s = policy.last_reanalyze
    assert s.positions >= 100 and s.segments >= 10
    assert 1.0 <= s.rows_per_position < 1 + 8  # the backward view saved network rows
    assert abs(sum(policy.final_eval[k] for k in ("random/win", "random/draw", "random/loss")) - 1.0) < 1e-6
