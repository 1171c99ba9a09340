"""The search loop with both adapters: determinism, forced wins, slot indexing, bad input."""
import numpy as np
import pytest
import torch

from lzlite.mcts import (AlphaZeroAdapter, LatentModelAdapter, RootOutput, SearchConfig, default_config,
                         dirichlet_noise, get_tree_class, search, select_action)
from lzlite.mcts.ptree import Tree as PTree
from lzlite.mcts.search import get_tree


class NimGame:
    """Numpy stand-in for a zoo BatchGame: take 1-3 stones, whoever takes the last stone wins.

    State bytes: [stones, player]. Observation [1, 1, 8]: one-hot stone count. A position with
    stones % 4 == 0 is lost for the player to move; otherwise taking stones % 4 wins.
    """
    num_actions = 3
    obs_shape = (1, 1, 8)

    def new_states(self, n, stones=7):
        s = np.zeros((n, 2), np.uint8)
        s[:, 0] = stones
        return s

    def observe(self, states):
        obs = np.zeros((len(states),) + self.obs_shape, np.float32)
        obs[np.arange(len(states)), 0, 0, np.minimum(states[:, 0], 7)] = 1
        return obs

    def legal_mask(self, states):
        return (np.arange(1, 4)[None, :] <= states[:, :1]).astype(np.uint8)

    def expand_slots(self, states, parent, child, actions, obs_out, legal_out, terminal_out, value_out):
        assert parent.dtype == child.dtype == actions.dtype == np.int32
        states[child] = states[parent]
        assert (actions + 1 <= states[child, 0]).all(), "illegal action"
        states[child, 0] -= (actions + 1).astype(np.uint8)
        states[child, 1] ^= 1
        obs_out[:] = self.observe(states[child])
        legal_out[:] = self.legal_mask(states[child])
        terminal_out[:] = states[child, 0] == 0
        value_out[:] = np.where(states[child, 0] == 0, -1.0, 0.0)   # the mover took the last stone


def uniform_net(num_actions):
    def net_fn(obs):
        return np.zeros(len(obs), np.float32), np.zeros((len(obs), num_actions), np.float32)
    return net_fn


def run_alphazero(game, root_states, cfg, seed=0, **kwargs):
    adapter = AlphaZeroAdapter(game, uniform_net(game.num_actions))
    adapter.prepare(len(root_states), cfg.num_simulations + 1)
    root = adapter.initial(root_states)
    return search(adapter, root, cfg, np.random.default_rng(seed), **kwargs), adapter


@pytest.mark.parametrize("rule", ["puct", "gumbel"])
def test_alphazero_adapter_finds_forced_win_in_nim(rule):
    game = NimGame()
    states = np.concatenate([game.new_states(1, n) for n in (5, 6, 7, 2)])
    cfg = SearchConfig(rule=rule, num_simulations=150, discount=1.0, value_sign=-1.0, backend="py",
                       max_num_considered_actions=3)
    out, adapter = run_alphazero(game, states, cfg, add_noise=False)
    # Winning move: take stones % 4 (action index stones % 4 - 1).
    np.testing.assert_array_equal(out.action, [0, 1, 2, 1])
    np.testing.assert_allclose(out.qvalues[3, 1], 1.0, err_msg="taking the last 2 stones wins at once")
    # Gumbel spreads root visits by sequential halving; its policy target still finds the win.
    assert out.improved_policy[3, 1] > 0.9 and out.improved_policy[2, 2] > 0.5
    np.testing.assert_array_equal(out.visit_counts.sum(axis=1), 150)
    assert out.visit_counts[3, 2] == 0, "taking 3 of 2 stones is illegal"
    # Terminal leaves are valued by the game: far fewer network rows than simulations.
    assert adapter.num_net_rows < 4 + 4 * 150


@pytest.mark.parametrize("rule", ["puct", "gumbel"])
def test_per_root_noise_mask_leaves_unmarked_roots_noise_free(rule):
    """add_noise as a bool [B] array: roots marked False search exactly as a noise-free search does."""
    game = NimGame()
    states = game.new_states(4, 7)
    cfg = SearchConfig(rule=rule, num_simulations=12, discount=1.0, value_sign=-1.0, backend="py",
                       max_num_considered_actions=3, root_noise_weight=0.5)
    clean, _ = run_alphazero(game, states, cfg, add_noise=False)
    mask = np.array([True, False, True, False])
    noisy_differs = False
    for seed in range(5):
        out, _ = run_alphazero(game, states, cfg, seed=seed, add_noise=mask)
        for field in ("visit_counts", "improved_policy", "root_prior", "action"):
            np.testing.assert_array_equal(getattr(out, field)[~mask], getattr(clean, field)[~mask], err_msg=field)
        noisy_differs |= not np.array_equal(out.visit_counts[mask], clean.visit_counts[mask])
        if rule == "puct":
            assert not np.allclose(out.root_prior[mask], clean.root_prior[mask]), "marked roots get Dirichlet noise"
    assert noisy_differs, "marked roots must be searched with noise"


def test_alphazero_adapter_terminal_leaves_cost_no_network_call():
    game = NimGame()
    calls = []

    def net_fn(obs):
        calls.append(obs.copy())
        return np.zeros(len(obs), np.float32), np.zeros((len(obs), 3), np.float32)

    adapter = AlphaZeroAdapter(game, net_fn)
    cfg = SearchConfig(num_simulations=10, discount=1.0, backend="py")
    adapter.prepare(1, 11)
    out = search(adapter, adapter.initial(game.new_states(1, 1)), cfg, np.random.default_rng(0), add_noise=False)
    # One stone: the only move wins. The root call is the only network call.
    assert len(calls) == 1
    assert out.action[0] == 0 and out.visit_counts[0, 0] == 10
    np.testing.assert_allclose(out.root_value[0], 10 / 11)


def test_alphazero_adapter_on_real_tictactoe():
    import zoo   # needs the built extension zoo._zoo
    game = zoo.make_batch_game("tictactoe")
    states = game.new_states(2)
    # Root 0: X 0, O 3, X 1, O 4 -> X to move wins with 2. Root 1: X 0, O 4, X 8, O 2 -> X must block 6.
    game.step(states, np.array([0, 0]))
    game.step(states, np.array([3, 4]))
    game.step(states, np.array([1, 8]))
    game.step(states, np.array([4, 2]))
    for rule in ("puct", "gumbel"):
        cfg = SearchConfig(rule=rule, num_simulations=200, discount=1.0, value_sign=-1.0, backend="py")
        out, _ = run_alphazero(game, states, cfg, add_noise=False)
        assert out.action[0] == 2, (rule, out.visit_counts[0])
        assert out.action[1] == 6, (rule, out.visit_counts[1])
        np.testing.assert_allclose(out.qvalues[0, 2], 1.0)


@pytest.mark.parametrize("rule", ["puct", "gumbel"])
def test_seeded_search_is_reproducible(rule):
    game = NimGame()
    states = np.concatenate([game.new_states(1, n) for n in (5, 6, 7, 9, 10)])
    cfg = SearchConfig(rule=rule, num_simulations=20, backend="py", max_num_considered_actions=2)
    a, _ = run_alphazero(game, states, cfg, seed=3, temperature=1.0)
    b, _ = run_alphazero(game, states, cfg, seed=3, temperature=1.0)
    for field in ("action", "visit_counts", "root_value", "qvalues", "improved_policy", "root_prior"):
        np.testing.assert_array_equal(getattr(a, field), getattr(b, field), err_msg=field)
    outs = [run_alphazero(game, states, cfg, seed=s, temperature=1.0)[0] for s in range(4)]
    assert any(not np.array_equal(outs[0].root_prior if rule == "puct" else outs[0].visit_counts,
                                  o.root_prior if rule == "puct" else o.visit_counts) for o in outs[1:])


class TinyLatentModel(torch.nn.Module):
    """MuZero-shaped toy: latent [B, 4]; dynamics mixes in a one-hot action."""

    def __init__(self, num_actions=3):
        super().__init__()
        torch.manual_seed(0)
        self.num_actions = num_actions
        self.rep = torch.nn.Linear(5, 4)
        self.dyn = torch.nn.Linear(4 + num_actions, 4)
        self.pol = torch.nn.Linear(4, num_actions)
        self.val = torch.nn.Linear(4, 1)

    def _out(self, latent, reward):
        class Out:
            pass
        out = Out()
        out.latent_state, out.reward = latent, reward
        out.value, out.policy_logits = self.val(latent), self.pol(latent)
        return out

    def initial_inference(self, obs):
        return self._out(torch.tanh(self.rep(obs)), torch.zeros(obs.shape[0], 1))

    def recurrent_inference(self, latent, action):
        onehot = torch.nn.functional.one_hot(action.long(), self.num_actions).float()
        nxt = torch.tanh(self.dyn(torch.cat([latent, onehot], dim=1)))
        return self._out(nxt, nxt.sum(dim=1, keepdim=True) * 0.1)


def test_latent_adapter_indexes_slots():
    model = TinyLatentModel()
    adapter = LatentModelAdapter(model, value_to_scalar=lambda v: v.squeeze(-1),
                                 reward_to_scalar=lambda r: r.squeeze(-1))
    B, S = 3, 6
    N = S + 1
    obs = torch.randn(B, 5, generator=torch.Generator().manual_seed(1))
    adapter.prepare(B, N)
    root = adapter.initial(obs.numpy())
    with torch.no_grad():
        root_latent = model.initial_inference(obs).latent_state
        np.testing.assert_allclose(root.value, model.val(root_latent).squeeze(-1).numpy(), rtol=1e-6)
    torch.testing.assert_close(adapter.latents[::N], root_latent)
    tree = PTree(B, 3, S, value_sign=1.0)
    tree.reset(root.prior_logits, root.value, root.legal_mask)
    for _ in range(S):
        parent, action, child, needs = tree.traverse()
        parent, action, child = parent.copy(), action.copy(), child.copy()
        rec = adapter.recurrent(parent, action, child, needs)
        tree.expand_and_backup(rec.reward, rec.value, rec.prior_logits)
        with torch.no_grad():   # the child's latent = dynamics(latent of the parent slot, action)
            want = model.recurrent_inference(adapter.latents[torch.as_tensor(parent, dtype=torch.long)].clone(),
                                             torch.as_tensor(action, dtype=torch.long))
        torch.testing.assert_close(adapter.latents[torch.as_tensor(child, dtype=torch.long)], want.latent_state)
        np.testing.assert_allclose(rec.reward, want.reward.squeeze(-1).numpy(), rtol=1e-6)
        assert (child == np.arange(B) * N + tree._sim).all()
    # Through the search loop too (one batched call per simulation).
    cfg = SearchConfig(num_simulations=S, value_sign=1.0, backend="py")
    out = search(adapter, adapter.initial(obs), cfg, np.random.default_rng(0))
    assert out.visit_counts.sum() == B * S
    np.testing.assert_allclose(out.predicted_value, root.value, rtol=1e-6)


def test_search_bad_input_errors():
    game = NimGame()
    adapter = AlphaZeroAdapter(game, uniform_net(3))
    cfg = SearchConfig(num_simulations=4, backend="py")
    adapter.prepare(1, 5)
    root = adapter.initial(game.new_states(1, 5))
    with pytest.raises(TypeError, match="rng must be a numpy Generator"):
        search(adapter, root, cfg, 0)
    with pytest.raises(ValueError, match="unknown search config keys"):
        search(adapter, root, dict(num_simulation=4), np.random.default_rng(0))
    with pytest.raises(ValueError, match="prepared for 5 slots"):
        search(adapter, root, SearchConfig(num_simulations=8, backend="py"), np.random.default_rng(0))
    bad = RootOutput(root.value, root.prior_logits, np.zeros((1, 3), bool))
    with pytest.raises(ValueError, match="legal_mask row 0 has no legal action"):
        search(adapter, bad, cfg, np.random.default_rng(0))
    bad = RootOutput(np.array([np.nan], np.float32), root.prior_logits, root.legal_mask)
    with pytest.raises(ValueError, match="value must be finite"):
        search(adapter, bad, cfg, np.random.default_rng(0))
    bad = RootOutput(root.value, root.prior_logits[:, :2], root.legal_mask)
    with pytest.raises(ValueError, match="legal_mask must have shape"):
        search(adapter, bad, cfg, np.random.default_rng(0))
    with pytest.raises(ValueError, match="backend must be 'c' or 'py'"):
        get_tree_class("cuda")
    with pytest.raises(ValueError, match="temperature must be >= 0"):
        select_action(np.ones((1, 3)), -1.0, np.random.default_rng(0))


def test_tree_cache_and_config_defaults():
    cfg = SearchConfig(num_simulations=4, backend="py")
    assert get_tree(cfg, 2, 3) is get_tree(cfg, 2, 3)
    assert get_tree(cfg, 2, 3) is not get_tree(SearchConfig(num_simulations=5, backend="py"), 2, 3)
    assert get_tree_class("py") is PTree
    assert set(default_config()) == set(SearchConfig.__dataclass_fields__)
    assert SearchConfig.from_any(default_config()) == SearchConfig()


def test_dirichlet_noise_and_action_selection():
    rng = np.random.default_rng(0)
    legal = np.array([[True, False, True, True], [False, True, False, False]])
    noise = dirichlet_noise(legal, 0.3, rng)
    assert (noise[~legal] == 0).all()
    np.testing.assert_allclose(noise.sum(axis=1), 1.0, rtol=1e-6)
    np.testing.assert_array_equal(noise[1], [0, 1, 0, 0])
    visits = np.array([[3, 5, 5, 0]] * 4000)
    np.testing.assert_array_equal(select_action(visits[:1], 0.0, rng), [1])   # ties: lowest index
    sampled = select_action(visits, 1.0, rng)
    freq = np.bincount(sampled, minlength=4) / len(sampled)
    np.testing.assert_allclose(freq, [3 / 13, 5 / 13, 5 / 13, 0], atol=0.03)
    cold = select_action(np.array([[3, 5, 4, 0]] * 100), 0.05, rng)
    assert (cold == 1).all()


@pytest.mark.parametrize("rule", ["puct", "gumbel"])
def test_backends_give_the_same_search(rule):
    import zoo
    game = zoo.make_batch_game("tictactoe")
    states = game.new_states(3)
    game.step(states, np.array([4, 0, 8]))
    rng = np.random.default_rng(5)
    w = rng.normal(size=(27, 10)).astype(np.float32)

    def net_fn(obs):   # a fixed random linear "network" so that priors and values vary
        y = obs.reshape(len(obs), -1) @ w
        return np.tanh(y[:, 0]), y[:, 1:]

    outs = []
    for backend in ("py", "c"):
        cfg = SearchConfig(rule=rule, num_simulations=40, backend=backend)
        adapter = AlphaZeroAdapter(game, net_fn)
        adapter.prepare(3, 41)
        outs.append(search(adapter, adapter.initial(states), cfg, np.random.default_rng(9), temperature=1.0))
    py, c = outs
    np.testing.assert_array_equal(py.action, c.action)
    np.testing.assert_array_equal(py.visit_counts, c.visit_counts)
    for field in ("root_value", "qvalues", "improved_policy", "root_prior"):
        np.testing.assert_allclose(getattr(py, field), getattr(c, field), rtol=1e-5, atol=1e-6, err_msg=field)
