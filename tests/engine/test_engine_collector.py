"""'engine_collector': the episode collector's contract on the self-play engine."""
import copy

import numpy as np
import pytest
import torch

from lzlite.config import compile_config, load_config_file
from lzlite.entry.loop import build_components
from lzlite.envs.games import make_batch_game

SMALL = dict(num_simulations=8, collector_env_num=6, n_episode=6, random_opening_plies=2, temperature_moves=3,
             engine_batch_size=4)


def components(config="zoo/tictactoe/config.py", collector="engine_collector", **policy):
    main, create = load_config_file(config)
    main, create = copy.deepcopy(main), copy.deepcopy(create)
    main["policy"].update(policy)
    create["collector"] = dict(type=collector)
    return build_components(compile_config(main, create))


def test_segments_hold_every_field_of_the_lock_step_collector():
    segs, stats = components(**SMALL)["collector"].collect()
    ref, ref_stats = components(collector="episode_collector",
                                **{k: v for k, v in SMALL.items() if not k.startswith("engine")})["collector"].collect()
    assert len(segs) == 6 and set(ref_stats) <= set(stats)
    assert {"engine_fires", "engine_mean_batch_fill", "engine_cache_hit_rate", "engine_positions_per_s"} <= set(stats)
    assert stats["env_steps"] == sum(len(s) for s in segs) and stats["episodes"] == 6
    game = make_batch_game("tictactoe")
    for seg, r in zip(segs, ref):
        f, fr = seg.freeze(), r.freeze()
        for name in fr.__dataclass_fields__:  # the same fields, filled the same way
            a, b = getattr(f, name), getattr(fr, name)
            assert (a is None) == (b is None), name
            if isinstance(b, np.ndarray):
                assert a.dtype == b.dtype and a.shape[1:] == b.shape[1:], name
        assert f.done and f.bootstrap_value == 0.0
        np.testing.assert_allclose(f.policy.sum(axis=1), 1.0, rtol=1e-5)
        assert not (f.policy[~f.legal_mask] > 0).any() and f.legal_mask[np.arange(len(f.action)), f.action].all()
        # the positions are the game's: replay the moves from the recorded first position
        state = game.parse(game.render(game.new_states(1)[0]))[None].copy()
        stones = f.obs[0, 0] + f.obs[0, 1]
        assert stones.sum() <= 2  # random openings of up to 2 plies
        for t in range(len(f.action) - 1):
            if t == 0:  # rebuild the opening position from its planes
                cells = np.where(f.obs[0, 0] > 0, f.to_play[0], np.where(f.obs[0, 1] > 0, 1 - f.to_play[0], -1))
                text = "\n".join(" ".join(".XO"[c + 1] for c in row) for row in cells)
                state = game.parse(text)[None].copy()
            game.step(state, [f.action[t]])
            np.testing.assert_array_equal(game.observe(state)[0], f.obs[t + 1])
        assert f.reward[-1] in (0.0, 1.0) and (f.reward[:-1] == 0).all()


def test_cut_segments_bootstrap_from_the_next_search_and_collects_are_reproducible():
    a = components(game_segment_length=2, **SMALL)["collector"].collect()[0]
    b = components(game_segment_length=2, **SMALL)["collector"].collect()[0]
    assert len(a) == len(b) and len(a) > 6
    for x, y in zip(a, b):
        fx, fy = x.freeze(), y.freeze()
        np.testing.assert_array_equal(fx.obs, fy.obs)
        np.testing.assert_array_equal(fx.policy, fy.policy)
    for seg, nxt in zip(a, a[1:]):
        f = seg.freeze()
        if not f.done:  # a cut piece: its bootstrap is the next piece's first search
            assert len(f.action) == 2
            np.testing.assert_array_equal(f.final_obs, nxt.freeze().obs[0])
            assert f.bootstrap_value == nxt.freeze().root_value[0]


def test_should_stop_abandons_the_collect():
    c = components(**SMALL)["collector"]
    segs, stats = c.collect(should_stop=lambda: True)
    assert segs == [] and stats["episodes"] == 0
    c.weights_updated()
    assert len(c.collect()[0]) == 6  # and the next collect plays normally


@pytest.mark.parametrize("config", ["zoo/tictactoe/muzero_config.py", "zoo/tictactoe/gumbel_muzero_config.py"])
def test_muzero_family_collects_through_the_latent_engine(config):
    """The MuZero family: the engine searches the learned model, its latents in the collector's store."""
    segs, stats = components(config, num_simulations=6, collector_env_num=5, n_episode=5)["collector"].collect()
    assert len(segs) == 5 and stats["engine_fires"] > 0 and stats["env_steps"] == sum(len(s) for s in segs)
    for seg in segs:
        f = seg.freeze()
        assert f.done and f.predicted_value is not None and np.isfinite(f.root_value).all()
        np.testing.assert_allclose(f.policy.sum(axis=1), 1.0, rtol=1e-5)
        assert f.legal_mask[np.arange(len(f.action)), f.action].all()


@pytest.mark.parametrize("config, policy, match", [
    ("zoo/tictactoe/muzero_config.py", dict(engine_infer_cache=64), "engine_infer_cache=0"),
    ("zoo/tictactoe/config.py", dict(collect_bot="random", collect_bot_fraction=0.5), "self-play only"),
])
def test_refuses_what_it_cannot_do(config, policy, match):
    with pytest.raises(ValueError, match=match):
        components(config, **policy)


def test_refuses_a_policy_of_another_search():
    """UniZero searches with its own adapter (a transformer's KV cache): refused, naming its own collector."""
    from lzlite.worker.engine_collector import EngineCollector

    parts = components("zoo/tictactoe/unizero_config.py", collector="segment_collector", num_simulations=2)
    with pytest.raises(ValueError, match="segment_collector"):
        EngineCollector(parts["policy"], parts["venv"], parts["policy"].cfg, np.random.default_rng(0))


def _peaked(policy, seed=0):
    """Random last layers (the model starts them at zero): peaked priors and values far from 0, so that the root
    noise, action sampling and random openings shape the games."""
    gen = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for m in policy.model.modules():
            if isinstance(m, torch.nn.Linear) and m.out_features in (1, 9):
                m.weight.copy_(torch.randn(m.weight.shape, generator=gen) * 0.5)


def test_the_engine_plays_the_lock_step_collectors_games_in_distribution():
    """Same network, Dirichlet noise, sampling at temperature 1 and random openings: 1,280 games from each collector
    agree in length, outcome, policy-target entropy, root value, openings and first moves. An engine searching without
    root noise, or with Dirichlet alpha 1 instead of 0.3, fails it (policy-target entropy at z = 12 and 5)."""
    torch.manual_seed(0)
    kw = dict(num_simulations=16, collector_env_num=32, n_episode=32, random_opening_plies=4)
    games = {}
    state = None
    for name in ("episode_collector", "engine_collector"):
        c = components(collector=name, **kw)
        if state is None:
            _peaked(c["policy"])
            state = copy.deepcopy(c["policy"].model.state_dict())
        c["policy"].model.load_state_dict(state)
        games[name] = [s.freeze() for _ in range(40) for s in c["collector"].collect()[0]]

    def features(segs):
        return dict(
            length=np.array([len(f.action) for f in segs], float),
            decisive=np.array([f.reward[-1] != 0 for f in segs], float),
            entropy=np.array([-(f.policy * np.log(np.clip(f.policy, 1e-12, 1))).sum(1).mean() for f in segs]),
            root_value=np.array([f.root_value.mean() for f in segs]),
            opening=np.bincount([int(f.obs[0, :2].sum()) for f in segs], minlength=5),
            first_move=np.bincount([int(f.action[0]) for f in segs if f.obs[0, :2].sum() == 0], minlength=9))

    a, b = features(games["episode_collector"]), features(games["engine_collector"])
    assert len(a["length"]) == len(b["length"]) == 1280
    for k in ("length", "decisive", "entropy", "root_value"):
        z = (a[k].mean() - b[k].mean()) / np.sqrt(a[k].var() / len(a[k]) + b[k].var() / len(b[k]))
        assert abs(z) < 4.0, (k, a[k].mean(), b[k].mean(), z)
    for k in ("opening", "first_move"):  # chi-square of two histograms; p = 0.001 at 18.5 (4 dof) and 26.1 (8 dof)
        expected = (a[k] + b[k]) / 2
        chi2 = (((a[k] - expected) ** 2 + (b[k] - expected) ** 2) / np.maximum(expected, 1)).sum()
        assert chi2 < {"opening": 18.5, "first_move": 26.1}[k], (k, a[k], b[k], chi2)
