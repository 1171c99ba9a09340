"""Behaviour of the AlphaZero policy-value network."""
import pytest
import torch
import torch.nn.functional as F

from lzlite.config import merge_strict
from lzlite.model import AlphaZeroModel
from lzlite.registry import MODEL_REGISTRY

BOARDS = {"tictactoe": ([3, 3, 3], 9), "connect4": ([3, 6, 7], 7)}


def make(board, seed=0, **overrides):
    shape, actions = BOARDS[board]
    cfg = merge_strict(AlphaZeroModel.default_config(), dict(observation_shape=shape, action_space_size=actions,
                                                              **overrides))
    torch.manual_seed(seed)
    return AlphaZeroModel(**cfg)


def boards(model, batch, seed=1):
    g = torch.Generator().manual_seed(seed)
    return torch.randint(0, 2, (batch, *model.observation_shape), generator=g).float()


@pytest.mark.parametrize("board", list(BOARDS))
def test_outputs_are_a_distribution_and_a_bounded_value(board):
    m = make(board, last_linear_layer_init_zero=False).eval()
    x = boards(m, 6) * 10.0
    with torch.no_grad():
        logits, value = m(x)
        probs, value2 = m.compute_policy_value(x)
    assert logits.shape == (6, m.action_space_size) and value.shape == (6, 1)
    assert float(value.abs().max()) <= 1.0
    torch.testing.assert_close(probs, torch.softmax(logits, -1))
    torch.testing.assert_close(probs.sum(-1), torch.ones(6))
    torch.testing.assert_close(value, value2)


def test_zero_init_heads_give_uniform_prior_and_zero_value():
    m = make("tictactoe").eval()
    with torch.no_grad():
        probs, value = m.compute_policy_value(boards(m, 3))
    torch.testing.assert_close(probs, torch.full((3, 9), 1 / 9))
    torch.testing.assert_close(value, torch.zeros(3, 1))


def test_legal_mask_zeroes_illegal_actions():
    m = make("tictactoe", last_linear_layer_init_zero=False).eval()
    mask = torch.zeros(3, 9, dtype=torch.bool)
    mask[0, [2, 4]] = True
    mask[1, :] = True
    # row 2: no legal action at all -> left unmasked rather than NaN
    with torch.no_grad():
        probs, _ = m.compute_policy_value(boards(m, 3), legal_mask=mask)
    assert bool((probs[0, ~mask[0]] == 0).all()) and probs[0, [2, 4]].sum().item() == pytest.approx(1.0)
    assert bool((probs[1] > 0).all())
    assert torch.isfinite(probs[2]).all() and probs[2].sum().item() == pytest.approx(1.0)
    with pytest.raises(ValueError, match=r"legal_mask must have shape \[B, A\]"):
        m.compute_policy_value(boards(m, 3), legal_mask=mask[:, :8])


@pytest.mark.parametrize("board", list(BOARDS))
def test_overfits_a_fixed_batch(board):
    m = make(board).train()
    g = torch.Generator().manual_seed(5)
    x = torch.randn(16, *m.observation_shape, generator=g)
    target_action = torch.randint(0, m.action_space_size, (16,), generator=g)
    target_value = torch.rand(16, 1, generator=g) * 1.6 - 0.8
    opt = torch.optim.Adam(m.parameters(), lr=1e-2)

    def loss_fn():
        logits, value = m(x)
        return F.cross_entropy(logits, target_action) + F.mse_loss(value, target_value)

    first = loss_fn().item()
    for _ in range(60):
        opt.zero_grad()
        loss_fn().backward()
        opt.step()
    with torch.no_grad():
        last = loss_fn().item()
    assert last < 0.1 * first, f"loss {first:.3f} -> {last:.3f}"


def test_seeded_construction_is_deterministic():
    x = boards(make("connect4"), 4)
    outs = []
    for seed in (11, 11, 12):
        m = make("connect4", seed=seed, last_linear_layer_init_zero=False).eval()
        with torch.no_grad():
            outs.append(m(x))
    assert torch.equal(outs[0][0], outs[1][0]) and torch.equal(outs[0][1], outs[1][1])
    assert not torch.equal(outs[0][0], outs[2][0])


@pytest.mark.parametrize("norm_type", ["LN", "none"])
def test_other_norms(norm_type):
    m = make("connect4", norm_type=norm_type, activation="silu", num_res_blocks=2).train()
    logits, value = m(boards(m, 1))
    assert torch.isfinite(logits).all() and value.shape == (1, 1)


def test_registry_default_config_and_errors():
    assert MODEL_REGISTRY.get("AlphaZeroModel") is AlphaZeroModel
    m = AlphaZeroModel(**AlphaZeroModel.default_config())
    assert m(torch.zeros(2, 27))[0].shape == (2, 9)  # flat observations are reshaped
    with pytest.raises(ValueError, match="categorical_distribution=True is not supported"):
        AlphaZeroModel(categorical_distribution=True)
    with pytest.raises(ValueError, match=r"observation_shape \[C, H, W\]"):
        AlphaZeroModel(observation_shape=[9])
    with pytest.raises(ValueError, match=r"observations must have shape \[B, 3, 3, 3\]"):
        m(torch.zeros(2, 3, 6, 7))
