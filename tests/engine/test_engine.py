"""The self-play engine (lzlite.engine.Engine): reproducible records, the same search as lzlite.mcts.search,
liveness and freshness under stress, errors that lose nothing."""
import threading
import time

import numpy as np
import pytest

from lzlite.engine import Engine
from lzlite.envs.games import make_batch_game
from lzlite.mcts.adapters import AlphaZeroAdapter
from lzlite.mcts.search import search
from lzlite.mcts.types import SearchConfig


def fake_net(obs, tag=0.0):
    """A deterministic network of each row alone (no batch-size dependent reductions): value [n], logits [n, A].

    The value is a squashed weighted count of the stones plus ``tag``; the logits favour cells by stones
    around them. Both are elementwise sums over one row, so a row's output never depends on its batch.
    """
    n = obs.shape[0]
    flat = obs.reshape(n, -1).astype(np.float64)
    w = np.linspace(-1.0, 1.0, flat.shape[1])
    value = np.tanh((flat * w).sum(axis=1)) * 0.5 + tag
    own, opp = obs[:, 0].reshape(n, -1), obs[:, 1].reshape(n, -1)
    cols = obs.shape[-1]
    A = 7 if cols == 7 and obs.shape[-2] == 6 else own.shape[1]
    if A == 7:  # Connect Four: one logit per column
        logits = own.reshape(n, 6, 7).sum(axis=1) * 0.4 - opp.reshape(n, 6, 7).sum(axis=1) * 0.3
    else:
        logits = own * 0.3 - opp * 0.2 + np.linspace(0, 0.1, own.shape[1])
    return value.astype(np.float32), logits.astype(np.float32)


def make_engine(game="tictactoe", rule="puct", **kwargs):
    cfg = dict(rule=rule, num_simulations=kwargs.pop("num_simulations", 16), max_num_considered_actions=4)
    cfg.update(kwargs.pop("search", {}))
    kwargs.setdefault("n_games", 8)
    kwargs.setdefault("batch_size", 4)
    return Engine(make_batch_game(game), SearchConfig(**cfg), **kwargs)


def assert_records_equal(a, b, skip=()):
    for name in a.__dataclass_fields__:
        if name in skip:
            continue
        np.testing.assert_array_equal(getattr(a, name), getattr(b, name), err_msg=name)


def test_game_table_capsule_and_bad_game():
    cap = make_batch_game("connect4").game_table()
    assert type(cap).__name__ == "PyCapsule" and "lzlite.GameTable" in repr(cap)
    with pytest.raises(TypeError, match="lzlite.GameTable"):
        Engine(object(), SearchConfig(), n_games=1)
    with pytest.raises(ValueError, match="n_threads must be >= 1"):
        make_engine(n_threads=0)


@pytest.mark.parametrize("rule", ["puct", "gumbel"])
def test_one_thread_fixed_seed_gives_identical_records(rule):
    runs = []
    for _ in range(2):
        eng = make_engine(rule=rule, n_threads=1, seed=5, random_opening_plies=2)
        runs.append(eng.play_games(12, fake_net, seed=11))
    assert_records_equal(*runs)
    r = runs[0]
    assert r.num_games == 12 and list(r.game_id) == list(range(12)) and r.game_done.all()  # a new engine counts from 0
    # the noise is seeded per game: another seed plays other games
    other = make_engine(rule=rule, n_threads=1, seed=5, random_opening_plies=2).play_games(12, fake_net, seed=12)
    assert len(other) != len(r) or not np.array_equal(other.action, r.action)
    # a row-wise network makes games independent of threads, batching and the cache
    more = make_engine(rule=rule, n_threads=2, seed=5, random_opening_plies=2, batch_size=3, infer_cache=1024)
    assert_records_equal(r, more.play_games(12, fake_net, seed=11))


def test_collect_keeps_games_across_windows_and_is_reproducible():
    def windows():
        eng = make_engine(n_threads=1, n_games=6, seed=3)
        return [eng.collect(20, fake_net) for _ in range(3)]

    a, b = windows(), windows()
    for x, y in zip(a, b):
        assert_records_equal(x, y)
        assert len(x) >= 20  # the floor
    ids = np.concatenate([w.game_id for w in a])
    assert len(set(ids.tolist())) == len(ids)  # a game finished in one window is never returned again


@pytest.mark.parametrize("game, rule", [("tictactoe", "puct"), ("tictactoe", "gumbel"), ("connect4", "puct"),
                                        ("connect4", "gumbel")])
def test_engine_search_equals_lzlite_search(game, rule):
    """Every recorded position's search (no root noise, greedy) equals lzlite.mcts.search's on that position."""
    S = 24
    noiseless = dict(root_noise_weight=0.0, gumbel_scale=0.0)
    eng = make_engine(game, rule, num_simulations=S, search=noiseless, n_games=3, n_threads=2, temperature=0.0)
    rec = eng.play_games(3, fake_net, seed=1)
    g = make_batch_game(game)
    cfg = SearchConfig(rule=rule, num_simulations=S, max_num_considered_actions=4, **noiseless)
    adapter = AlphaZeroAdapter(g, fake_net)
    checked = 0
    for rows in rec.games():
        state = g.new_states(1)
        for t in range(rows.start, rows.stop):
            np.testing.assert_array_equal(g.observe(state)[0], rec.obs[t])
            adapter.prepare(1, S + 1)
            out = search(adapter, adapter.initial(state), cfg, np.random.default_rng(0), temperature=0.0,
                         add_noise=False)
            np.testing.assert_array_equal(out.visit_counts[0], rec.visit_counts[t])
            np.testing.assert_array_equal(out.root_value[0], rec.root_value[t])
            np.testing.assert_array_equal(out.qvalues[0], rec.qvalues[t])
            np.testing.assert_allclose(out.improved_policy[0], rec.improved_policy[t], rtol=1e-6, atol=1e-7)
            np.testing.assert_array_equal(out.predicted_value[0], rec.predicted_value[t])
            np.testing.assert_allclose(out.root_prior[0], rec.root_prior[t], rtol=1e-5, atol=1e-7)
            assert int(out.action[0]) == int(rec.action[t])
            _, done = g.step(state, [int(rec.action[t])])
            checked += 1
        assert done[0]
    assert checked == len(rec) > 10


def tagged_net(version):
    """A fake network whose values carry the generation of the weights it has loaded (0.01 per generation)."""
    def infer(obs):
        value, logits = fake_net(obs)
        return np.full_like(value, 0.01 * version[0]), logits
    return infer


def generation_tags(rec):
    return np.round(rec.predicted_value * 100).astype(np.int64)


def test_stress_routes_of_unequal_speed_cache_and_weights_updates():
    """Per-player routes (one slow), the cache on, weights_updated() mid-window from a fire and from another
    thread while a streamed window runs: every game completes and no value older than its search is served."""
    rng = np.random.default_rng(0)
    version = [0]
    eng = make_engine("tictactoe", n_games=24, n_threads=2, batch_size=8, infer_cache=4096, num_simulations=12,
                      random_opening_plies=1, seed=9)
    fast = tagged_net(version)
    calls = [0]

    def bumping(obs):  # player 0's route: loads new weights every 5th fire (new version, then the generation)
        out = fast(obs)
        calls[0] += 1
        if calls[0] % 5 == 0:
            version[0] += 1
            eng.weights_updated()
        return out

    def slow(obs):  # player 1's route: random delays
        time.sleep(float(rng.uniform(0, 0.002)))
        return fast(obs)

    rec = eng.play_games(60, [bumping, slow], seed=2)
    assert rec.num_games == 60 and rec.game_done.all()
    assert (generation_tags(rec) >= rec.generation).all()
    t = eng.telemetry()
    assert t["cache_hits"] > 0 and t["cache_demotions"] > 0, t

    # a streamed window while this thread keeps loading weights
    stream = eng.collect_stream(150, [fast, slow])
    while not stream.done():
        version[0] += 1
        eng.weights_updated()
        time.sleep(0.002)
    rec = stream.result()
    assert len(rec) >= 150 and rec.game_done.all()
    assert (generation_tags(rec) >= rec.generation).all()
    assert eng.generation == version[0]


def test_a_route_whose_every_lookup_hits_completes_without_inference():
    """Deterministic games replayed: every lookup of both routes hits; the gated hits are released without any
    infer call (at quiescence), and the games complete with the same records."""
    version = [0]
    net = tagged_net(version)
    eng = make_engine("tictactoe", n_games=2, n_threads=2, infer_cache=4096, temperature=0.0,
                      search=dict(root_noise_weight=0.0))
    first = eng.play_games(2, [net, net], seed=4)
    before = eng.telemetry()
    again = eng.play_games(2, [net, net], seed=4)
    after = eng.telemetry()
    assert_records_equal(first, again, skip=("game_id",))  # ids count the engine's games
    assert after["rows"] == before["rows"] and after["cache_misses"] == before["cache_misses"]
    assert after["cache_hits"] > before["cache_hits"] and after["stall_releases"] > before["stall_releases"]
    # a new generation: nothing cached is served; everything is inferred again
    eng.weights_updated()
    version[0] = 1
    third = eng.play_games(2, [net, net], seed=4)
    assert eng.telemetry()["rows"] > after["rows"] and (generation_tags(third) == 1).all()


def test_infer_errors_propagate_and_lose_nothing():
    eng = make_engine(n_threads=2)
    calls = [0]

    def failing(obs):
        calls[0] += 1
        if calls[0] == 3:
            raise KeyError("network exploded")
        return fake_net(obs)

    with pytest.raises(KeyError, match="network exploded"):
        eng.play_games(5, failing)
    with pytest.raises(ValueError, match=r"logits of shape \[\d+, 9\], got \[\d+, 3\]"):
        eng.play_games(5, lambda obs: (np.zeros(len(obs)), np.zeros((len(obs), 3))))
    with pytest.raises(ValueError, match="non-finite"):
        eng.play_games(5, lambda obs: (np.full(len(obs), np.nan), np.zeros((len(obs), 9))))
    with pytest.raises(TypeError, match="infer must be a callable"):
        eng.play_games(5, [fake_net, fake_net, fake_net])
    stream = eng.collect_stream(10, fake_net)
    with pytest.raises(RuntimeError, match="streamed window is running"):
        eng.play_games(5, fake_net)
    assert len(stream.result()) >= 10
    rec = eng.play_games(5, fake_net)  # the engine still works
    assert rec.num_games == 5 and rec.game_done.all()


def test_zero_copy_views_and_batches():
    eng = make_engine(n_games=16, batch_size=8, n_threads=1)
    sizes, bases = [], set()

    def infer(obs):
        assert obs.dtype == np.float32 and obs.shape[1:] == (3, 3, 3) and obs.flags.c_contiguous
        assert not obs.flags.owndata  # a view of the engine's arena, not a copy
        sizes.append(len(obs))
        return fake_net(obs)

    eng.play_games(16, infer)
    t = eng.telemetry()
    assert max(sizes) == 8 and t["full_fires"] > 0 and t["fires"] == len(sizes)
    assert 0 < t["mean_batch_fill"] <= 1 and t["positions_per_s"] > 0


def test_streamed_window_releases_the_gil():
    """While a streamed window runs, this thread keeps running Python (the scheduler takes the GIL only in infer)."""
    eng = make_engine("connect4", n_games=8, n_threads=1, num_simulations=16)

    def slow(obs):
        time.sleep(0.001)
        return fake_net(obs)

    stream = eng.collect_stream(40, slow)
    ticks = 0
    while not stream.done():
        ticks += 1
        threading.Event().wait(0.001)
    assert ticks > 5 and len(stream.result()) >= 40


class FakeLatentModel:
    """A deterministic MuZero-style model of each row alone (elementwise torch ops only): latent [n, 9]."""

    def __init__(self, A):
        self.A = A

    def parameters(self):
        return iter(())

    def initial_inference(self, obs):
        import torch
        from types import SimpleNamespace
        n = obs.shape[0]
        flat = obs.reshape(n, -1)
        latent = flat[:, :9] * 0.7 - flat[:, 9:18] * 0.4 + 0.05
        return SimpleNamespace(latent_state=latent, value=torch.tanh(latent.sum(1, keepdim=True) * 0.3),
                               policy_logits=self._logits(latent))

    def recurrent_inference(self, latent, action):
        import torch
        from types import SimpleNamespace
        onehot = torch.nn.functional.one_hot(action % 9, 9).to(latent.dtype)
        nxt = torch.tanh(latent * 0.8 + onehot * 0.5 - 0.1)
        return SimpleNamespace(latent_state=nxt, value=torch.tanh(nxt.sum(1) * 0.2 - 0.1),
                               reward=(onehot * latent).sum(1) * 0.1, policy_logits=self._logits(nxt))

    def _logits(self, latent):
        import torch
        return torch.cat([latent, latent[:, :1]], 1)[:, :self.A] if self.A > 9 or self.A == 7 else latent[:, :self.A]


@pytest.mark.parametrize("rule", ["puct", "gumbel"])
def test_latent_model_search_equals_lzlite_search(rule):
    """A latent-model engine (MuZero family) searches each recorded position as lzlite.mcts.search does with the
    LatentModelAdapter; the latents stay in the caller's store, indexed by latent slot."""
    import torch
    from lzlite.mcts.adapters import LatentModelAdapter
    from lzlite.worker.engine_collector import LatentStore

    S = 12
    model = FakeLatentModel(7)
    adapter = LatentModelAdapter(model, lambda v: v.reshape(-1), lambda r: r.reshape(-1), "cpu")
    noiseless = dict(root_noise_weight=0.0, gumbel_scale=0.0, discount=0.997)
    eng = make_engine("connect4", rule, num_simulations=S, search=noiseless, n_games=3, n_threads=2, batch_size=2,
                      temperature=0.0, latent_model=True)
    rec = eng.play_games(3, LatentStore(adapter, eng.latent_slots), seed=1)
    g = make_batch_game("connect4")
    cfg = SearchConfig(rule=rule, num_simulations=S, max_num_considered_actions=4, **noiseless)
    for rows in rec.games():
        state = g.new_states(1)
        for t in range(rows.start, rows.stop):
            adapter.prepare(1, S + 1)
            root = adapter.initial(torch.as_tensor(g.observe(state)), legal_mask=g.legal_mask(state))
            out = search(adapter, root, cfg, np.random.default_rng(0), temperature=0.0, add_noise=False)
            np.testing.assert_array_equal(out.visit_counts[0], rec.visit_counts[t])
            np.testing.assert_allclose(out.root_value[0], rec.root_value[t], rtol=1e-6, atol=1e-7)
            np.testing.assert_allclose(out.root_prior[0], rec.root_prior[t], rtol=1e-5, atol=1e-7)
            assert int(out.action[0]) == int(rec.action[t])
            g.step(state, [int(rec.action[t])])
    with pytest.raises(ValueError, match="infer_cache must be 0"):
        make_engine("connect4", rule, latent_model=True, infer_cache=64)
    with pytest.raises(TypeError, match="initial\\(\\) and recurrent\\(\\)"):
        eng.play_games(1, fake_net)


def test_the_cache_keeps_routes_apart():
    """Per-player routes may be different networks: a position inferred by one route's network (a leaf of its
    search) is never served to the other's (as a root there)."""
    def route_net(tag):
        def infer(obs):
            _, logits = fake_net(obs)
            return np.full(len(obs), tag, np.float32), logits
        return infer

    eng = make_engine("tictactoe", n_games=8, n_threads=2, infer_cache=1 << 12, num_simulations=16)
    rec = eng.play_games(40, [route_net(0.25), route_net(-0.5)], seed=3)
    assert eng.telemetry()["cache_hits"] > 0
    np.testing.assert_array_equal(rec.predicted_value[rec.to_play == 0], 0.25)
    np.testing.assert_array_equal(rec.predicted_value[rec.to_play == 1], -0.5)
