"""UniZero world model: KV-cache decoding, causality, inference vs teacher forcing, the joint loss, errors."""
import inspect
import re

import numpy as np
import pytest
import torch

from lzlite.model.support import scalar_to_support
from lzlite.model.transformer import GPT, KVCache
from lzlite.model.unizero import UniZeroModel
from lzlite.registry import MODEL_REGISTRY


def small_model(seed=0, **overrides):
    torch.manual_seed(seed)
    cfg = UniZeroModel.default_config()
    cfg.update(embed_dim=32, head_hidden=32, encoder_channels=8, last_linear_layer_init_zero=False)
    cfg.update(overrides)
    return UniZeroModel(**cfg).eval()


def gpt(seed=0):
    torch.manual_seed(seed)
    return GPT(embed_dim=16, num_layers=2, num_heads=2, max_tokens=32, dropout=0.0).eval()


def test_incremental_decoding_equals_full_forward():
    net = gpt()
    tokens = torch.randn(3, 11, 16, generator=torch.Generator().manual_seed(1))
    full, full_cache = net(tokens)
    chunks, cache, start = [], None, 0
    for size in (1, 3, 1, 4, 2):   # mixed chunk sizes exercise the causal mask inside a chunk
        hidden, cache = net(tokens[:, start:start + size], cache)
        chunks.append(hidden)
        start += size
    assert cache.length == 11 and cache.next_position.tolist() == [11, 11, 11]
    torch.testing.assert_close(torch.cat(chunks, 1), full, atol=1e-5, rtol=0)
    for k_inc, k_full in zip(cache.keys, full_cache.keys):
        torch.testing.assert_close(k_inc, k_full, atol=1e-5, rtol=0)


def test_later_tokens_do_not_change_earlier_hidden_states():
    net = gpt()
    tokens = torch.randn(2, 8, 16, generator=torch.Generator().manual_seed(2))
    before, _ = net(tokens)
    edited = tokens.clone()
    edited[:, 5] = torch.randn(2, 16, generator=torch.Generator().manual_seed(9))
    after, _ = net(edited)
    assert torch.equal(after[:, :5], before[:, :5])   # causal: positions 0..4 never see token 5
    assert (after[:, 5:] - before[:, 5:]).abs().amax() > 1e-2   # and later positions do


def test_padded_cache_rows_match_rows_run_alone():
    """Rows of different real lengths in one cache (key_valid) compute what each row computes alone."""
    net = gpt()
    g = torch.Generator().manual_seed(3)
    long_row, short_row, new = torch.randn(1, 6, 16, generator=g), torch.randn(1, 3, 16, generator=g), \
        torch.randn(2, 2, 16, generator=g)
    _, c_long = net(long_row)
    _, c_short = net(short_row)
    pad = lambda t: torch.cat([t, torch.randn(1, t.shape[1], 3, t.shape[3], generator=g)], 2)  # garbage columns
    batch = KVCache([torch.cat([a, pad(b)]) for a, b in zip(c_long.keys, c_short.keys)],
                    [torch.cat([a, pad(b)]) for a, b in zip(c_long.values, c_short.values)],
                    torch.tensor([[True] * 6, [True] * 3 + [False] * 3]), torch.tensor([6, 3]), 6)
    out, _ = net(new, batch)
    alone_long, _ = net(new[:1], c_long)
    alone_short, _ = net(new[1:], c_short)
    torch.testing.assert_close(out, torch.cat([alone_long, alone_short]), atol=1e-5, rtol=0)


def test_inference_matches_teacher_forced_segment():
    """initial_inference(history) / recurrent_inference agree with forward_segment position by position."""
    model = small_model()
    g = torch.Generator().manual_seed(4)
    obs = torch.rand(4, 4, 3, 3, 3, generator=g)
    actions = torch.randint(0, 9, (4, 3), generator=g)
    with torch.no_grad():
        seg = model.forward_segment(obs, actions)
        for t in range(4):
            root = model.initial_inference(obs[:, t], history=(obs[:, :t], actions[:, :t]))
            assert root.cache.length == 2 * t + 1
            torch.testing.assert_close(root.policy_logits, seg.policy_logits[:, t], atol=1e-5, rtol=0)
            torch.testing.assert_close(root.value, seg.value[:, t], atol=1e-5, rtol=0)
            if t < 3:
                step = model.recurrent_inference(root.cache, actions[:, t])
                torch.testing.assert_close(step.latent_state, seg.next_latent[:, t], atol=1e-5, rtol=0)
                torch.testing.assert_close(step.reward, seg.reward[:, t], atol=1e-5, rtol=0)
                assert step.cache.length == 2 * t + 3


def test_root_reward_is_exactly_zero_and_latents_are_simnormed():
    model = small_model()
    out = model.initial_inference(np.zeros((2, 27), np.float32))   # flat obs are reshaped
    assert torch.equal(model.to_scalar(out.reward), torch.zeros(2))
    groups = out.latent_state.view(2, -1, 8).sum(-1)
    torch.testing.assert_close(groups, torch.ones_like(groups))


def test_mlp_encoder_for_vector_observations():
    model = small_model(model_type="mlp", observation_shape=[4], action_space_size=2, latent_norm="layernorm")
    out = model.initial_inference(torch.rand(5, 4))
    step = model.recurrent_inference(out.cache, torch.tensor([0, 1, 1, 0, 1]))
    assert step.policy_logits.shape == (5, 2) and step.latent_state.shape == (5, 32)
    torch.testing.assert_close(step.latent_state.mean(-1), torch.zeros(5), atol=1e-5, rtol=0)  # LayerNorm


def _loss_floor(model, tv, tr, tp, mask):
    """The loss of a perfect model: the entropy of every target (CE floor), latent term 0."""
    def ent(p):
        return -(p * torch.log(p.clamp_min(1e-12))).sum(-1)
    def per_sample(term, m):
        return (term * m).sum(1) / m.sum(1).clamp_min(1)
    s = model.support_scale
    w = model.loss_weights
    return (w["value"] * per_sample(ent(scalar_to_support(tv, s)), mask)
            + w["reward"] * per_sample(ent(scalar_to_support(tr, s)), mask[:, 1:])
            + w["policy"] * per_sample(ent(tp), mask)).mean()


def test_joint_loss_overfits_a_fixed_batch():
    model = small_model(seed=5).train()
    g = torch.Generator().manual_seed(5)
    B, T = 6, 3
    obs = torch.rand(B, T + 1, 3, 3, 3, generator=g)
    actions = torch.randint(0, 9, (B, T), generator=g)
    tv = torch.randint(-1, 2, (B, T + 1), generator=g).float()
    tr = torch.randint(-1, 2, (B, T), generator=g).float()
    tp = torch.nn.functional.one_hot(torch.randint(0, 9, (B, T + 1), generator=g), 9).float()
    mask = torch.ones(B, T + 1)
    mask[0, -1] = 0   # one padded step
    floor = float(_loss_floor(model, tv, tr, tp, mask))
    opt = torch.optim.Adam(model.parameters(), lr=3e-3)
    first = None
    for _ in range(100):
        loss, stats = model.compute_loss(obs, actions, tv, tr, tp, mask, torch.ones(B))
        first = float(loss.detach()) if first is None else first
        opt.zero_grad()
        loss.backward()
        opt.step()
    last, stats = model.compute_loss(obs, actions, tv, tr, tp, mask, torch.ones(B))
    assert set(stats) == {"loss", "latent_loss", "reward_loss", "policy_loss", "value_loss", "policy_entropy"}
    assert float(last.detach()) - floor < 0.2 * (first - floor), (first, float(last), floor)


@torch.no_grad()
def test_masked_steps_and_weights():
    model = small_model()
    g = torch.Generator().manual_seed(6)
    obs = torch.rand(2, 3, 3, 3, 3, generator=g)
    actions = torch.randint(0, 9, (2, 2), generator=g)
    tv, tr, tp = torch.zeros(2, 3), torch.zeros(2, 2), torch.full((2, 3, 9), 1 / 9)
    mask = torch.tensor([[1.0, 1.0, 0.0], [1.0, 1.0, 1.0]])
    base, _ = model.compute_loss(obs, actions, tv, tr, tp, mask)
    tv2, tr2 = tv.clone(), tr.clone()
    tv2[0, 2], tr2[0, 1] = 5.0, -3.0   # targets of the padded step of row 0
    same, _ = model.compute_loss(obs, actions, tv2, tr2, tp, mask)
    assert float(same) == pytest.approx(float(base), abs=1e-6)
    zero_first, _ = model.compute_loss(obs, actions, tv2, tr2, tp, mask, torch.tensor([0.0, 1.0]))
    only_second, _ = model.compute_loss(obs[1:], actions[1:], tv[1:], tr[1:], tp[1:], mask[1:])
    assert float(zero_first) == pytest.approx(float(only_second) / 2, abs=1e-6)   # batch mean over 2 rows


def test_default_config_documents_every_key_and_matches_init():
    cfg = UniZeroModel.default_config()
    params = set(inspect.signature(UniZeroModel.__init__).parameters) - {"self"}
    assert set(cfg) == params
    src = inspect.getsource(UniZeroModel.default_config)
    for key in cfg:
        assert re.search(rf"^\s*{key}=.*#\s*\S", src, re.M), f"key {key} has no one-line comment"
    assert MODEL_REGISTRY.get("UniZeroModel") is UniZeroModel
    UniZeroModel(**cfg)   # the defaults build


@pytest.mark.parametrize("kwargs, match", [
    (dict(model_type="rnn"), "model_type"),
    (dict(embed_dim=30, num_heads=4, latent_norm="none"), "divisible by num_heads"),
    (dict(embed_dim=36, num_heads=2), "simnorm_group_size"),
    (dict(latent_norm="batchnorm"), "latent_norm"),
    (dict(observation_shape=[4]), "observation_shape"),
])
def test_bad_config_errors(kwargs, match):
    with pytest.raises(ValueError, match=match):
        small_model(**kwargs)


def test_bad_input_errors():
    model = small_model(max_tokens=5)
    with pytest.raises(ValueError, match=r"obs must have shape \[B, 3, 3, 3\]"):
        model.initial_inference(torch.rand(2, 3, 3))
    out = model.initial_inference(torch.rand(2, 3, 3, 3))
    with pytest.raises(ValueError, match=r"lie in \[0, 9\)"):
        model.recurrent_inference(out.cache, torch.tensor([0, 9]))
    with pytest.raises(ValueError, match="integer"):
        model.recurrent_inference(out.cache, torch.tensor([0.0, 1.0]))
    with pytest.raises(ValueError, match=r"shape \[2\]"):
        model.recurrent_inference(out.cache, torch.tensor([0, 1, 2]))
    with pytest.raises(TypeError, match="KVCache"):
        model.recurrent_inference(out.latent_state, torch.tensor([0, 1]))
    step = model.recurrent_inference(out.cache, torch.tensor([0, 1]))   # 3 tokens
    step = model.recurrent_inference(step.cache, torch.tensor([0, 1]))   # 5 tokens
    with pytest.raises(ValueError, match="max_tokens=5"):
        model.recurrent_inference(step.cache, torch.tensor([0, 1]))
    obs, actions = torch.rand(2, 3, 3, 3, 3), torch.zeros(2, 2, dtype=torch.long)
    with pytest.raises(ValueError, match=r"target_policy must have shape \[2, 3, 9\]"):
        model.compute_loss(obs, actions, torch.zeros(2, 3), torch.zeros(2, 2), torch.zeros(2, 3, 8), torch.ones(2, 3))
    with pytest.raises(ValueError, match=r"actions must have shape \[2, 2\]"):
        model.compute_loss(obs, actions[:, :1], torch.zeros(2, 3), torch.zeros(2, 2), torch.zeros(2, 3, 9),
                           torch.ones(2, 3))
