"""Behaviour of the MuZero networks (conv and MLP) on tictactoe-, connect4- and CartPole-like inputs."""
import inspect
import re

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from lzlite.config import ConfigError, merge_strict
from lzlite.model import AlphaZeroModel, MuZeroModel, MuZeroModelMLP, MZNetworkOutput
from lzlite.model.support import inverse_value_transform, scalar_to_support
from lzlite.registry import MODEL_REGISTRY

# name -> (class, config overrides); small, fast models.
VARIANTS = {
    "conv_tictactoe": (MuZeroModel, dict(observation_shape=[3, 3, 3], action_space_size=9)),
    "conv_connect4": (MuZeroModel, dict(observation_shape=[3, 6, 7], action_space_size=7, num_channels=16)),
    "mlp_cartpole": (MuZeroModelMLP, dict(observation_shape=4, action_space_size=2, latent_state_dim=32)),
    "mlp_tictactoe": (MuZeroModelMLP, dict(observation_shape=[3, 3, 3], action_space_size=9, latent_state_dim=32)),
}


def make(name, seed=0, **overrides):
    cls, cfg = VARIANTS[name]
    # plain update: merge_strict would reject a list observation_shape over the MLP's int default
    full = dict(cls.default_config(), **dict(cfg, **{"support_scale": 10, **overrides}))
    torch.manual_seed(seed)
    return cls(**full)


def obs_batch(model, batch, seed=1):
    g = torch.Generator().manual_seed(seed)
    return torch.randint(0, 2, (batch, *model.observation_shape), generator=g).float()


@pytest.mark.parametrize("name", list(VARIANTS))
def test_shapes_and_root_reward_is_zero(name):
    m = make(name).eval()
    b, a = 5, m.action_space_size
    with torch.no_grad():
        out = m.initial_inference(obs_batch(m, b))
        assert isinstance(out, MZNetworkOutput)
        assert out.value.shape == (b, 21) and out.reward.shape == (b, 21) and out.policy_logits.shape == (b, a)
        assert bool((m.to_scalar(out.reward) == 0).all())
        nxt = m.recurrent_inference(out.latent_state, torch.arange(b) % a)
    assert nxt.latent_state.shape == out.latent_state.shape
    assert nxt.value.shape == (b, 21) and nxt.reward.shape == (b, 21) and nxt.policy_logits.shape == (b, a)
    # fresh heads are zero-initialised: uniform prior, value 0
    torch.testing.assert_close(out.policy_logits, torch.zeros(b, a))
    torch.testing.assert_close(m.to_scalar(out.value), torch.zeros(b), atol=1e-6, rtol=0)


@pytest.mark.parametrize("name", list(VARIANTS))
def test_scalar_heads(name):
    m = make(name, categorical_distribution=False).eval()
    with torch.no_grad():
        out = m.initial_inference(obs_batch(m, 3))
        nxt = m.recurrent_inference(out.latent_state, torch.zeros(3, dtype=torch.long))
    assert out.value.shape == (3, 1) and bool((out.reward == 0).all()) and nxt.reward.shape == (3, 1)
    assert m.to_scalar(nxt.value).shape == (3,)


@pytest.mark.parametrize("name", list(VARIANTS))
def test_support_without_the_value_transform_is_a_plain_two_hot(name):
    m = make(name, support_scale=1, support_transform=False)
    logits = torch.log(torch.tensor([[1e-9, 1e-9, 1.0], [0.0, 0.65, 0.35], [0.5, 0.0, 0.5]]).clamp_min(1e-12))
    torch.testing.assert_close(m.to_scalar(logits), torch.tensor([1.0, 0.35, 0.0]), atol=1e-6, rtol=0)
    with_h = make(name, support_scale=1)  # MuZero's h: all mass on +1 stands for h^-1(1) ~ 2.99
    torch.testing.assert_close(with_h.to_scalar(logits[:1]), inverse_value_transform(torch.tensor([1.0])))
    # the loss targets match: a reward of 1 is all on the top bin, not 0.42 of it
    from lzlite.policy.muzero import MuZeroPolicy
    head = torch.zeros(2, 3, requires_grad=True)
    for model, top in ((m, 1.0), (with_h, 0.4152)):
        fake = type("P", (), {"_unwrap": staticmethod(lambda x: x), "model": model})()
        loss = MuZeroPolicy._reward_loss(fake, head, torch.tensor([1.0, 0.0]))
        (grad,) = torch.autograd.grad(loss.sum(), head)
        assert grad[0, 2].item() == pytest.approx(1 / 3 - top, abs=1e-3)  # softmax(0) - target on the top bin


# 'spatial' needs a board: conv models only (the MLP's rejection is in test_bad_inputs_give_clear_errors)
@pytest.mark.parametrize("name, encoding", [
    (name, encoding) for name, (cls, _) in VARIANTS.items()
    for encoding in cls.action_encodings
])
def test_recurrent_inference_depends_on_the_action(name, encoding):
    m = make(name, last_linear_layer_init_zero=False, discrete_action_encoding_type=encoding).eval()
    a = m.action_space_size
    with torch.no_grad():
        root = m.initial_inference(obs_batch(m, 1))
        latent = root.latent_state.expand(a, *root.latent_state.shape[1:])
        nxt = m.recurrent_inference(latent, torch.arange(a))
    flat = nxt.latent_state.flatten(1)
    rewards = m.to_scalar(nxt.reward)
    for i in range(a):
        for j in range(i + 1, a):
            assert (flat[i] - flat[j]).abs().max() > 1e-4, f"actions {i} and {j} give the same next latent"
            assert abs(rewards[i] - rewards[j]) > 1e-6, f"actions {i} and {j} give the same reward"


def test_spatial_action_planes_mark_the_cell_or_the_column():
    ttt = make("conv_tictactoe", discrete_action_encoding_type="spatial")
    for a in range(9):
        expected = torch.zeros(3, 3)
        expected[a // 3, a % 3] = 1.0
        torch.testing.assert_close(ttt.action_board[a, 0], expected)
    c4 = make("conv_connect4", discrete_action_encoding_type="spatial")
    for a in range(7):
        expected = torch.zeros(6, 7)
        expected[:, a] = 1.0
        torch.testing.assert_close(c4.action_board[a, 0], expected)
    # one input plane instead of A; nothing new in the state dict (the planes are rebuilt, not saved)
    assert c4.dynamics_conv.in_channels == c4.latent_shape[0] + 1
    assert not any("action_board" in k for k in c4.state_dict())


def test_spatial_action_encoding_is_mirror_equivariant():
    """A spatial action plane moves with the board: with left-right symmetric weights, mirroring the
    observation and the column gives the mirrored next latent and the same reward (constant one-hot
    planes cannot do this: which column a plane means is not written on the board)."""
    m = make("conv_connect4", discrete_action_encoding_type="spatial", last_linear_layer_init_zero=False,
             norm_type="none").eval()
    with torch.no_grad():
        for mod in m.modules():  # symmetrise every conv kernel left-right
            if isinstance(mod, torch.nn.Conv2d):
                mod.weight.copy_((mod.weight + mod.weight.flip(-1)) / 2)
        obs = obs_batch(m, 4)
        actions = torch.tensor([0, 2, 3, 6])
        lat = m.initial_inference(obs).latent_state
        lat_m = m.initial_inference(obs.flip(-1)).latent_state
        torch.testing.assert_close(lat_m, lat.flip(-1))
        nxt = m.recurrent_inference(lat, actions)
        nxt_m = m.recurrent_inference(lat_m, 6 - actions)
    torch.testing.assert_close(nxt_m.latent_state, nxt.latent_state.flip(-1))


@pytest.mark.parametrize("name", list(VARIANTS))
def test_state_norm_bounds_latents_to_unit_interval(name):
    m = make(name, state_norm=True).eval()
    with torch.no_grad():
        out = m.initial_inference(obs_batch(m, 6) * 50.0)
        latents = [out.latent_state]
        for step in range(3):
            out = m.recurrent_inference(out.latent_state, torch.full((6,), step % m.action_space_size))
            latents.append(out.latent_state)
    for lat in latents:
        flat = lat.flatten(1)
        assert float(flat.min()) >= 0.0 and float(flat.max()) <= 1.0
        torch.testing.assert_close(flat.min(1).values, torch.zeros(6))  # per sample: spans [0, 1]
        torch.testing.assert_close(flat.max(1).values, torch.ones(6))


@pytest.mark.parametrize("name", list(VARIANTS))
def test_overfits_a_fixed_batch(name):
    """obs -> (policy, value) on 16 fixed samples: the KL-style loss falls by more than 90%."""
    m = make(name).train()
    b, s = 16, 10
    g = torch.Generator().manual_seed(7)
    obs = torch.randn(b, *m.observation_shape, generator=g)
    target_action = torch.randint(0, m.action_space_size, (b,), generator=g)
    # integer points of the transformed support give one-hot value targets, so the loss minimum is 0
    target_value = inverse_value_transform(torch.randint(-4, 5, (b,), generator=g).float())
    value_target = scalar_to_support(target_value, s)
    opt = torch.optim.Adam(m.parameters(), lr=1e-2)

    def loss_fn():
        out = m.initial_inference(obs)
        policy_loss = F.cross_entropy(out.policy_logits, target_action)
        value_loss = -(value_target * F.log_softmax(out.value, -1)).sum(-1).mean()
        return policy_loss + value_loss

    first = loss_fn().item()
    for _ in range(60):
        opt.zero_grad()
        loss = loss_fn()
        loss.backward()
        opt.step()
    with torch.no_grad():  # same (train) mode as the first measurement
        last = loss_fn().item()
    assert last < 0.1 * first, f"loss {first:.3f} -> {last:.3f}"


@pytest.mark.parametrize("name", list(VARIANTS))
def test_seeded_construction_is_deterministic(name):
    x = obs_batch(make(name), 4)
    outs = []
    for seed in (3, 3, 4):
        m = make(name, seed=seed, last_linear_layer_init_zero=False).eval()
        with torch.no_grad():
            root = m.initial_inference(x)
            outs.append(m.recurrent_inference(root.latent_state, torch.tensor([0, 1, 1, 0])))
    for a, b in zip(outs[0], outs[1]):
        assert torch.equal(a, b)
    assert not torch.equal(outs[0].value, outs[2].value)


@pytest.mark.parametrize("name", list(VARIANTS))
def test_gradients_flow_through_the_dynamics_unroll(name):
    m = make(name, last_linear_layer_init_zero=False).train()
    out = m.initial_inference(obs_batch(m, 8))
    for k in range(3):
        out = m.recurrent_inference(out.latent_state, (torch.arange(8) + k) % m.action_space_size)
    # a loss on the 3rd unrolled step only must reach the representation through three dynamics steps
    loss = out.value.logsumexp(-1).sum() + out.reward.logsumexp(-1).sum() + out.policy_logits.pow(2).sum()
    loss.backward()
    groups = {"representation": m.representation, "reward_head": m.reward_head, "value_head": m.value_head}
    groups["dynamics"] = m.dynamics if name.startswith("mlp") else m.dynamics_conv
    for group, module in groups.items():
        norm = sum(p.grad.abs().sum().item() for p in module.parameters() if p.grad is not None)
        assert norm > 0, f"no gradient reached {group}"


@pytest.mark.parametrize("name", ["conv_tictactoe", "mlp_cartpole"])
def test_eval_outputs_are_batch_independent(name):
    m = make(name, last_linear_layer_init_zero=False).eval()
    x = obs_batch(m, 6)
    act = torch.tensor([1, 0, 1, 1, 0, 1])
    with torch.no_grad():
        full = m.recurrent_inference(m.initial_inference(x).latent_state, act)
        row = m.recurrent_inference(m.initial_inference(x[2:3]).latent_state, act[2:3])
    for a, b in zip(full, row):
        torch.testing.assert_close(a[2:3], b, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("norm_type", ["LN", "none"])
@pytest.mark.parametrize("name", ["conv_connect4", "mlp_cartpole"])
def test_other_norms_and_activations(name, norm_type):
    m = make(name, norm_type=norm_type, activation="gelu", last_linear_layer_init_zero=False).train()
    out = m.initial_inference(obs_batch(m, 1))  # batch 1 in train mode works without batch norm
    out = m.recurrent_inference(out.latent_state, torch.zeros(1, dtype=torch.long))
    assert torch.isfinite(out.value).all()
    assert not any(isinstance(mod, (torch.nn.BatchNorm1d, torch.nn.BatchNorm2d)) for mod in m.modules())


@pytest.mark.parametrize("name", ["conv_tictactoe", "mlp_cartpole"])
def test_project_for_consistency_loss(name):
    m = make(name, self_supervised_learning_loss=True, proj_hid=32, proj_out=16, pred_hid=8, pred_out=16).train()
    latent = m.initial_inference(obs_batch(m, 4)).latent_state
    online = m.project(latent, with_grad=True)
    target = m.project(latent, with_grad=False)
    assert online.shape == (4, 16) and target.shape == (4, 16)
    assert online.requires_grad and not target.requires_grad
    loss = -F.cosine_similarity(online, target, dim=-1).mean()
    loss.backward()
    assert any(p.grad is not None and p.grad.abs().sum() > 0 for p in m.representation.parameters())
    with pytest.raises(RuntimeError, match="self_supervised_learning_loss=True"):
        make(name).project(latent)
    with pytest.raises(ValueError, match="must equal proj_out"):
        make(name, self_supervised_learning_loss=True, proj_out=16, pred_out=8)


def test_observation_forms_are_accepted():
    m = make("conv_tictactoe", last_linear_layer_init_zero=False).eval()
    x = obs_batch(m, 3)
    with torch.no_grad():
        ref = m.initial_inference(x).value
        for form in (x.view(3, 27), x.to(torch.int8), x.numpy().astype(np.uint8)):
            torch.testing.assert_close(m.initial_inference(form).value, ref)


def test_bad_inputs_give_clear_errors():
    m = make("conv_tictactoe").eval()
    with pytest.raises(ValueError, match=r"observations must have shape \[B, 3, 3, 3\]"):
        m.initial_inference(torch.zeros(2, 3, 4, 4))
    latent = m.initial_inference(torch.zeros(2, 3, 3, 3)).latent_state
    with pytest.raises(ValueError, match=r"shape \[B\] = \[2\]"):
        m.recurrent_inference(latent, torch.zeros(3, dtype=torch.long))
    with pytest.raises(ValueError, match=r"in \[0, 9\)"):
        m.recurrent_inference(latent, torch.tensor([0, 9]))
    with pytest.raises(ValueError, match="integer tensor"):
        m.recurrent_inference(latent, torch.tensor([0.0, 1.0]))
    # [B, 1] actions (LightZero's layout) are accepted
    m.recurrent_inference(latent, torch.tensor([[0], [8]]))
    with pytest.raises(ValueError, match="use MuZeroModelMLP"):
        MuZeroModel(model_type="mlp")
    with pytest.raises(ValueError, match=r"observation_shape \[C, H, W\]"):
        MuZeroModel(observation_shape=4)
    with pytest.raises(ValueError, match="norm_type"):
        MuZeroModel(norm_type="batch")
    with pytest.raises(ValueError, match="activation"):
        MuZeroModelMLP(activation="swishy")
    with pytest.raises(ValueError, match=r"one of 'one_hot', 'not_one_hot' for MuZeroModelMLP, got 'spatial'"):
        MuZeroModelMLP(discrete_action_encoding_type="spatial")
    with pytest.raises(ValueError, match="action_space_size=10 is neither"):
        MuZeroModel(observation_shape=[3, 3, 3], action_space_size=10, discrete_action_encoding_type="spatial")
    with pytest.raises(ValueError, match="downsample=True"):
        MuZeroModel(observation_shape=[3, 16, 16], action_space_size=256, downsample=True,
                    discrete_action_encoding_type="spatial")


@pytest.mark.parametrize("cls", [MuZeroModel, MuZeroModelMLP])
def test_default_config_builds_the_registered_model(cls):
    cfg = cls.default_config()
    assert MODEL_REGISTRY.get(cls.__name__) is cls
    m = cls(**cfg)  # every config key is a constructor keyword
    assert m.value_support_size == 2 * cfg.support_scale + 1
    # LightZero's nn.Module activation is accepted too
    cls(**dict(cfg, activation=torch.nn.ReLU(inplace=True), image_channel=3, frame_stack_num=4))


@pytest.mark.parametrize("cls", [MuZeroModel, MuZeroModelMLP, AlphaZeroModel])
def test_every_default_config_key_has_a_one_line_comment(cls):
    source = inspect.getsource(inspect.getmodule(cls))
    for key in cls.default_config():
        assert re.search(rf"^\s*{key}=.*#\s*\S", source, re.M), f"{cls.__name__}.default_config: '{key}' has no comment"


def test_strict_merge_of_a_user_config_builds_the_model():
    cfg = merge_strict(MuZeroModel.default_config(), dict(observation_shape=(3, 6, 7), action_space_size=7,
                                                          num_channels=8, support_scale=10, state_norm=True))
    m = MuZeroModel(**cfg).eval()
    assert m.latent_shape == (8, 6, 7) and m.value_support_size == 21
    with pytest.raises(ConfigError, match="Did you mean 'num_res_blocks'"):
        merge_strict(MuZeroModel.default_config(), dict(num_res_block=2))


def test_downsample_shrinks_image_latents():
    m = MuZeroModel(observation_shape=[3, 10, 10], action_space_size=4, num_channels=8, support_scale=5,
                    downsample=True).eval()
    with torch.no_grad():
        out = m.initial_inference(torch.rand(2, 3, 10, 10))
        nxt = m.recurrent_inference(out.latent_state, torch.tensor([0, 3]))
    assert out.latent_state.shape == (2, 8, 3, 3) == nxt.latent_state.shape  # ceil(ceil(10 / 2) / 2) = 3
    assert nxt.value.shape == (2, 11)


@pytest.mark.parametrize("name", list(VARIANTS))
def test_dynamics_step_is_recurrent_inference_without_the_prediction(name):
    m = make(name, state_norm=True).eval()
    with torch.no_grad():
        latent = m.initial_inference(obs_batch(m, 6)).latent_state
        action = torch.arange(6) % m.action_space_size
        nxt, reward = m.dynamics_step(latent, action)
        out = m.recurrent_inference(latent, action)
    assert torch.equal(nxt, out.latent_state) and torch.equal(reward, out.reward)
