"""learner_dtype / search_dtype = 'bfloat16' / 'auto' (autocast loss, autocast search) and channels_last (NHWC
conv weights)."""
from __future__ import annotations

import os
import sys

import numpy as np
import pytest
import torch

from lzlite.config import compile_config
from lzlite.entry import train_muzero
from lzlite.entry.loop import build_components

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "entry"))
from tiny_configs import tiny_config  # noqa: E402


def _policy_and_batch(algo, **overrides):
    parts = build_components(compile_config(*tiny_config(algo, **overrides), seed=0))
    segments, _ = parts["collector"].collect(n_episode=8)
    parts["buffer"].push_segments(segments)
    return parts["policy"], parts["buffer"].sample(32, np.random.default_rng(0))


@pytest.mark.parametrize("algo", ["muzero", "alphazero", "unizero"])
def test_bfloat16_loss_is_the_float32_loss_to_bf16_precision(algo):
    policy, batch = _policy_and_batch(algo)
    torch.manual_seed(0)
    fp32, _, _ = policy.compute_loss(batch)
    policy.learner_dtype = "bfloat16"
    bf16, _, _ = policy.compute_loss(batch)
    assert fp32.dtype == bf16.dtype == torch.float32
    assert bf16.item() != fp32.item(), "autocast must be on: bf16 matmuls round differently"
    assert abs(bf16.item() - fp32.item()) < 0.02 * abs(fp32.item())
    bf16.backward()
    grads = [p.grad for p in policy.model.parameters() if p.grad is not None]
    assert grads and all(g.dtype == torch.float32 and torch.isfinite(g).all() for g in grads)


def test_channels_last_keeps_the_network_function_and_checkpoints_portable():
    plain, _ = _policy_and_batch("muzero")
    nhwc, _ = _policy_and_batch("muzero", channels_last=True)
    convs = [m.weight for m in nhwc.model.modules() if isinstance(m, torch.nn.Conv2d) and m.kernel_size != (1, 1)]
    assert convs and all(w.is_contiguous(memory_format=torch.channels_last) and not w.is_contiguous() for w in convs)
    plain.load_state_dict(nhwc.state_dict())  # an NHWC run's checkpoint loads into an NCHW policy
    obs = torch.rand(5, 3, 3, 3)
    with torch.no_grad():
        a = plain.model.eval().initial_inference(obs)
        b = nhwc.model.eval().initial_inference(obs)
    torch.testing.assert_close(a.value, b.value, rtol=1e-4, atol=1e-5)
    torch.testing.assert_close(a.policy_logits, b.policy_logits, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("algo", ["muzero", "alphazero", "unizero"])
def test_bfloat16_search_is_the_float32_search_to_bf16_precision(algo):
    parts = build_components(compile_config(*tiny_config(algo), seed=0))
    policy, venv = parts["policy"], parts["collector"].venv
    torch.manual_seed(0)
    with torch.no_grad():  # an untrained net's zero-initialised heads give exact zeros in any precision
        for p in policy.model.parameters():
            p.add_(0.1 * torch.randn_like(p))
    venv.reset()
    rng = np.random.default_rng(1)
    for _ in range(2):  # two random plies: the roots differ
        legal = venv.legal_mask()
        venv.step(np.array([rng.choice(np.flatnonzero(row)) for row in legal]))
    idx = np.arange(len(venv.legal_mask()))
    outs = {}
    for dtype in ("float32", "bfloat16"):
        policy.search_dtype = dtype
        outs[dtype] = policy.act(venv, idx, np.random.default_rng(0), mode="eval")
    a, b = outs["float32"], outs["bfloat16"]
    # the network's root values differ by bf16 rounding (the searches' trees part where visits are near-tied:
    # a few simulations of a random net, so their root values and moves are not compared)
    assert not np.array_equal(a.predicted_value, b.predicted_value), "autocast must be on: bf16 rounds differently"
    np.testing.assert_allclose(b.predicted_value, a.predicted_value, atol=0.03)
    assert np.isfinite(b.root_value).all() and b.visit_counts.sum() == a.visit_counts.sum()


@pytest.mark.parametrize("key", ["learner_dtype", "search_dtype"])
def test_bad_dtype_is_a_clear_error(key):
    with pytest.raises(ValueError, match=f"{key} must be 'float32', 'bfloat16' or 'auto'"):
        _policy_and_batch("muzero", **{key: "fp16"})


@pytest.mark.parametrize("amx, avx512_bf16", [(True, True), (False, True), (True, False), (False, False)])
def test_auto_learner_dtype_follows_the_hardware_probe(monkeypatch, amx, avx512_bf16):
    import lzlite.policy.base as base

    monkeypatch.setattr(torch.cpu, "_is_amx_tile_supported", lambda: amx, raising=False)
    monkeypatch.setattr(torch.cpu, "_is_avx512_bf16_supported", lambda: avx512_bf16, raising=False)
    fast = amx or avx512_bf16
    assert base.fast_bfloat16(torch.device("cpu")) is fast
    policy, _ = _policy_and_batch("muzero", learner_dtype="auto", search_dtype="auto")
    assert policy.learner_dtype == policy.search_dtype == ("bfloat16" if fast else "float32")


def test_train_muzero_in_bfloat16_with_channels_last(tmp_path):
    cfg = tiny_config("muzero", learner_dtype="bfloat16", search_dtype="bfloat16", channels_last=True)
    policy = train_muzero(cfg, seed=0,
                          max_env_step=150, run_dir=str(tmp_path), progress=False)
    assert all(torch.isfinite(p).all() for p in policy.model.parameters())
    assert abs(sum(policy.final_eval[f"random/{k}"] for k in ("win", "draw", "loss")) - 1.0) < 1e-6
