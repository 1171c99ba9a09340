"""UniZeroAdapter: KV-cached steps equal the from-scratch reference, search outputs are identical with
and without the cache (both tree backends), slot bookkeeping matches a manual rollout, bad input."""
import numpy as np
import pytest
import torch

from lzlite.mcts import default_config, search
from lzlite.mcts.unizero_adapter import UniZeroAdapter
from lzlite.model.unizero import UniZeroModel


@pytest.fixture(autouse=True)
def _single_thread():
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


def make_model(seed=0, **overrides):
    torch.manual_seed(seed)
    cfg = UniZeroModel.default_config()
    # Non-zero last layers: priors, values and rewards differ per node, so the trees are not trivial.
    cfg.update(embed_dim=32, head_hidden=32, encoder_channels=8, last_linear_layer_init_zero=False)
    cfg.update(overrides)
    return UniZeroModel(**cfg).eval()


def roots(B, seed, history_steps):
    g = torch.Generator().manual_seed(seed)
    obs = torch.rand(B, 3, 3, 3, generator=g)
    if history_steps == 0:
        return obs, None
    return obs, (torch.rand(B, history_steps, 3, 3, 3, generator=g),
                 torch.randint(0, 9, (B, history_steps), generator=g))


@pytest.mark.parametrize("history_steps", [0, 2])
def test_cached_steps_equal_full_recompute_on_random_trees(history_steps):
    """Random trees grown by hand (random parent among existing nodes, random action, some rows
    skipped): every output and every stored latent agrees to 1e-5."""
    B, S = 5, 12
    model = make_model()
    obs, history = roots(B, 1, history_steps)
    cached, full = UniZeroAdapter(model), UniZeroAdapter(model, use_kv_cache=False)
    outs = []
    for ad in (cached, full):
        ad.prepare(B, S + 1)
        outs.append(ad.initial(obs, history=history))
    np.testing.assert_allclose(outs[0].value, outs[1].value, atol=1e-5)
    rng = np.random.default_rng(0)
    N = S + 1
    for s in range(S):
        parent = np.arange(B) * N + rng.integers(0, s + 1, B)   # nodes 0..s exist
        action = rng.integers(0, 9, B).astype(np.int32)
        child = np.arange(B) * N + s + 1
        needs_eval = (rng.random(B) < 0.85).astype(np.uint8)
        a = cached.recurrent(parent.astype(np.int32), action, child.astype(np.int32), needs_eval)
        b = full.recurrent(parent.astype(np.int32), action, child.astype(np.int32), needs_eval)
        rows = needs_eval.astype(bool)
        for field in ("reward", "value", "prior_logits"):
            np.testing.assert_allclose(getattr(a, field)[rows], getattr(b, field)[rows], atol=1e-5, err_msg=field)
    assert cached.depth.max() >= 3   # the random trees did go deep
    torch.testing.assert_close(cached.latents, full.latents, atol=1e-5, rtol=0)


@pytest.mark.parametrize("backend", ["py", "c"])
@pytest.mark.parametrize("rule", ["puct", "gumbel"])
def test_search_outputs_identical_with_and_without_cache(backend, rule):
    B, S = 4, 20
    model = make_model(seed=2)
    obs, history = roots(B, 3, history_steps=1)
    cfg = default_config()
    cfg.update(num_simulations=S, backend=backend, rule=rule, max_num_considered_actions=4)
    results = []
    for use_kv in (True, False):
        ad = UniZeroAdapter(model, use_kv_cache=use_kv)
        ad.prepare(B, S + 1)
        root = ad.initial(obs, history=history)
        results.append((search(ad, root, cfg, np.random.default_rng(7), temperature=1.0), ad))
    (a, ad_a), (b, ad_b) = results
    np.testing.assert_array_equal(a.visit_counts, b.visit_counts)
    np.testing.assert_array_equal(a.action, b.action)
    np.testing.assert_allclose(a.root_value, b.root_value, atol=1e-5)
    np.testing.assert_allclose(a.qvalues, b.qvalues, atol=1e-5)
    np.testing.assert_allclose(a.improved_policy, b.improved_policy, atol=1e-5)
    assert a.visit_counts.sum(1).tolist() == [S] * B
    np.testing.assert_array_equal(ad_a.depth, ad_b.depth)
    assert ad_a.depth.max() >= 2


def test_leaf_latent_equals_manual_rollout_along_its_path():
    """Log every (parent, action, child) the search asks for; rebuild each node's path from the log
    alone and roll the model along it with initial_inference / recurrent_inference."""
    B, S = 3, 16
    model = make_model(seed=4)
    obs, history = roots(B, 5, history_steps=1)
    ad = UniZeroAdapter(model)
    log = {}
    step = ad.recurrent

    def logged(parent, action, child, needs_eval):
        for p, a, c, e in zip(parent, action, child, needs_eval):
            if e:
                log[int(c)] = (int(p), int(a))
        return step(parent, action, child, needs_eval)

    ad.recurrent = logged
    ad.prepare(B, S + 1)
    root = ad.initial(obs, history=history)
    cfg = default_config()
    cfg.update(num_simulations=S, backend="py")
    search(ad, root, cfg, np.random.default_rng(0), add_noise=False)
    N = S + 1
    with torch.no_grad():
        for slot in sorted(log, key=lambda c: -ad.depth[c])[:6]:   # the deepest nodes
            actions, node = [], slot
            while node in log:
                node, a = log[node]
                actions.append(a)
            actions = actions[::-1]
            assert node == (slot // N) * N   # the path ends at the root of the same row
            np.testing.assert_array_equal(ad.path_actions(slot), actions)
            b = slot // N
            out = model.initial_inference(obs[b:b + 1], history=(history[0][b:b + 1], history[1][b:b + 1]))
            for a in actions:
                out = model.recurrent_inference(out.cache, torch.tensor([a]))
            torch.testing.assert_close(ad.latents[slot], out.latent_state[0], atol=1e-5, rtol=0)
    assert max(ad.depth[c] for c in log) >= 3


def test_context_longer_than_max_tokens_is_a_clear_error():
    model = make_model(max_tokens=5)   # root (1 token) + 2 moves
    ad = UniZeroAdapter(model)
    ad.prepare(1, 4)
    ad.initial(torch.rand(1, 3, 3, 3))
    one = np.ones(1, np.uint8)
    ad.recurrent(np.array([0], np.int32), np.array([0], np.int32), np.array([1], np.int32), one)
    ad.recurrent(np.array([1], np.int32), np.array([0], np.int32), np.array([2], np.int32), one)
    with pytest.raises(ValueError, match=r"depth 3 needs 7 tokens .* max_tokens=5"):
        ad.recurrent(np.array([2], np.int32), np.array([0], np.int32), np.array([3], np.int32), one)
    # A row that needs no evaluation never counts against the budget.
    out = ad.recurrent(np.array([2], np.int32), np.array([0], np.int32), np.array([3], np.int32),
                       np.zeros(1, np.uint8))
    assert out.value.shape == (1,)


def test_bad_input_errors():
    model = make_model()
    ad = UniZeroAdapter(model)
    with pytest.raises(RuntimeError, match="prepare"):
        ad.initial(torch.rand(2, 3, 3, 3))
    with pytest.raises(ValueError, match="num_slots >= 2"):
        ad.prepare(2, 1)
    ad.prepare(2, 3)
    with pytest.raises(RuntimeError, match="initial"):
        ad.recurrent(np.array([0, 3]), np.array([0, 0]), np.array([1, 4]), np.ones(2, np.uint8))
    with pytest.raises(ValueError, match="batch_size=2"):
        ad.initial(torch.rand(3, 3, 3, 3))
    ad.initial(torch.rand(2, 3, 3, 3))
    with pytest.raises(ValueError, match="must belong to root b"):
        ad.recurrent(np.array([0, 0]), np.array([0, 0]), np.array([1, 4]), np.ones(2, np.uint8))
    with pytest.raises(ValueError, match=r"lie in \[0, 9\)"):
        ad.recurrent(np.array([0, 3]), np.array([0, 9]), np.array([1, 4]), np.ones(2, np.uint8))
