"""GameSegment: recording, freezing and clear errors on bad steps."""
import numpy as np
import pytest

from lzlite.buffer import GameSegment


def _step(seg, t, **kw):
    args = dict(obs=np.full((2, 2), t, np.uint8), action=t % 3, reward=float(t), to_play=1 + t % 2,
                legal_mask=np.ones(3, bool), root_value=0.5 * t, policy=np.array([0.2, 0.3, 0.5]))
    args.update(kw)
    seg.append(**args)


def test_append_and_freeze():
    seg = GameSegment(3)
    for t in range(4):
        _step(seg, t, predicted_value=0.1 * t if t != 2 else None)
    seg.close(np.full((2, 2), 9, np.uint8), done=True)
    f = seg.freeze()
    assert len(f) == 4 and f.obs.dtype == np.uint8 and f.obs.shape == (4, 2, 2)
    np.testing.assert_array_equal(f.action, [0, 1, 2, 0])
    np.testing.assert_array_equal(f.to_play, [1, 2, 1, 2])
    np.testing.assert_allclose(f.root_value, [0, 0.5, 1.0, 1.5])
    np.testing.assert_allclose(f.predicted_value, [0.0, 0.1, np.nan, 0.3])
    assert f.done and f.bootstrap_value == 0.0 and f.final_obs[0, 0] == 9
    assert seg.to_arrays()["reward"].tolist() == [0, 1, 2, 3]
    assert seg.freeze() is f  # cached


def test_fixed_length_segments():
    seg = GameSegment(3, game_segment_length=2)
    _step(seg, 0)
    assert not seg.is_full
    _step(seg, 1)
    assert seg.is_full
    with pytest.raises(ValueError, match="full"):
        _step(seg, 2)
    with pytest.raises(ValueError, match="bootstrap_value"):
        seg.close(done=False)
    seg.close(done=False, bootstrap_value=0.25)
    assert seg.freeze().bootstrap_value == 0.25 and seg.freeze().final_obs is None


@pytest.mark.parametrize(
    "kw,match",
    [
        (dict(obs=np.zeros(3, np.uint8)), "same obs layout"),
        (dict(legal_mask=np.ones(4, bool)), r"legal_mask must be a bool array of shape \(3,\)"),
        (dict(legal_mask=np.ones(3)), "bool"),
        (dict(policy=np.ones(2)), r"policy must have shape \(3,\)"),
        (dict(policy=np.array([-1.0, 1, 1])), "non-negative"),
        (dict(action=3), r"outside \[0, 3\)"),
        (dict(legal_mask=np.array([True, False, True]), action=1), "illegal"),
        (dict(reward=float("nan")), "reward must be finite"),
    ],
)
def test_bad_steps(kw, match):
    seg = GameSegment(3)
    _step(seg, 0)
    with pytest.raises(ValueError, match=match):
        _step(seg, 1, **kw)


def test_close_errors():
    with pytest.raises(ValueError, match="action_space_size"):
        GameSegment(0)
    seg = GameSegment(3)
    with pytest.raises(ValueError, match="empty"):
        seg.close(done=True)
    _step(seg, 0)
    with pytest.raises(ValueError, match="not closed"):
        seg.freeze()
    with pytest.raises(ValueError, match="terminal state has value 0"):
        seg.close(done=True, bootstrap_value=1.0)
    with pytest.raises(ValueError, match="final_obs has shape"):
        seg.close(np.zeros(5), done=True)
    seg.close(done=True)
    with pytest.raises(ValueError, match="closed"):
        _step(seg, 1)


def test_extras_at_every_step_in_one_shape():
    seg = GameSegment(3)
    mask = np.ones(3, bool)
    seg.append(np.zeros(2, np.float32), 0, 0.0, 0, mask, 0.0, np.ones(3), extras={"r": [0, 1, 0]})
    with pytest.raises(ValueError, match="give the same records at every step"):
        seg.append(np.zeros(2, np.float32), 1, 0.0, 1, mask, 0.0, np.ones(3))
    with pytest.raises(ValueError, match=r"extras\['r'\] must be a finite array of shape \(3,\)"):
        seg.append(np.zeros(2, np.float32), 1, 0.0, 1, mask, 0.0, np.ones(3), extras={"r": [0, 1]})
    with pytest.raises(ValueError, match="finite"):
        seg.append(np.zeros(2, np.float32), 1, 0.0, 1, mask, 0.0, np.ones(3), extras={"r": [0, np.nan, 0]})
    seg.append(np.zeros(2, np.float32), 1, 1.0, 1, mask, 0.0, np.ones(3), extras={"r": [0, 1, 0]})
    seg.close(None, done=True)
    np.testing.assert_array_equal(seg.freeze().extras["r"], [[0, 1, 0], [0, 1, 0]])
    plain = GameSegment(3)
    plain.append(np.zeros(2, np.float32), 0, 1.0, 0, mask, 0.0, np.ones(3))
    plain.close(None, done=True)
    assert plain.freeze().extras == {}
