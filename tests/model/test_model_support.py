"""Tables for the value transform h, its inverse, and the two-hot support encoding."""
import math

import pytest
import torch

from lzlite.model.support import (
    decode_scalar,
    inverse_value_transform,
    scalar_to_support,
    support_size,
    support_to_scalar,
    value_transform,
    zero_logits,
)

# x -> h(x) = sign(x)(sqrt(|x|+1) - 1) + 0.001 x, computed by hand.
H_TABLE = [
    (0.0, 0.0),
    (3.0, 1.003),
    (-3.0, -1.003),
    (8.0, 2.008),
    (99.0, 9.099),
    (-99.0, -9.099),
    (0.21, 0.1 + 0.00021),  # sqrt(1.21) - 1 = 0.1
    (9999.0, 99.0 + 9.999),
]


@pytest.mark.parametrize("x,hx", H_TABLE)
def test_value_transform_known_values(x, hx):
    x_t = torch.tensor([x], dtype=torch.float64)
    hx_t = torch.tensor([hx], dtype=torch.float64)
    assert value_transform(x_t).item() == pytest.approx(hx, abs=1e-12)
    assert inverse_value_transform(hx_t).item() == pytest.approx(x, rel=1e-12, abs=1e-12)


def _wide_range(dtype):
    mags = torch.logspace(-6, 6, 2001, dtype=torch.float64)
    return torch.cat([-mags.flip(0), torch.zeros(1, dtype=torch.float64), mags]).to(dtype)


def test_round_trip_float32_wide_range():
    x = _wide_range(torch.float32)
    back = inverse_value_transform(value_transform(x))
    torch.testing.assert_close(back, x, rtol=1e-4, atol=1e-4)
    # and the other direction: h(h^-1(y)) == y
    y = torch.linspace(-1000.0, 1000.0, 4001)
    torch.testing.assert_close(value_transform(inverse_value_transform(y)), y, rtol=1e-5, atol=1e-5)


def test_round_trip_float64_is_tight_and_small_values_keep_precision():
    x = _wide_range(torch.float64)
    torch.testing.assert_close(inverse_value_transform(value_transform(x)), x, rtol=1e-12, atol=1e-15)
    # float32 near zero: the stable closed form keeps relative precision (naive form loses ~4 digits)
    small = torch.tensor([1e-6, -3e-5, 1e-3], dtype=torch.float32)
    torch.testing.assert_close(inverse_value_transform(value_transform(small)), small, rtol=1e-5, atol=0.0)


def test_value_transform_is_strictly_increasing_and_odd():
    x = _wide_range(torch.float64)
    hx = value_transform(x)
    assert bool((hx[1:] > hx[:-1]).all())
    torch.testing.assert_close(value_transform(-x), -hx)


@pytest.mark.parametrize(
    "x,expected",  # raw two-hot (transform=False) over S = 5: {integer: weight}
    [
        (2.3, {2: 0.7, 3: 0.3}),
        (-2.3, {-3: 0.3, -2: 0.7}),
        (0.0, {0: 1.0}),
        (4.0, {4: 1.0}),
        (5.0, {5: 1.0}),  # top edge
        (7.5, {5: 1.0}),  # clipped
        (-9.0, {-5: 1.0}),  # clipped
        (-0.25, {-1: 0.25, 0: 0.75}),
    ],
)
def test_two_hot_before_transform(x, expected):
    s = 5
    probs = scalar_to_support(torch.tensor([x]), s, transform=False)[0]
    want = torch.zeros(2 * s + 1)
    for k, w in expected.items():
        want[k + s] = w
    torch.testing.assert_close(probs, want)


def test_two_hot_after_transform():
    s = 10
    # h(3) = 1.003 -> 0.997 on 1, 0.003 on 2
    p = scalar_to_support(torch.tensor([3.0, -3.0], dtype=torch.float64), s)
    assert p[0, s + 1].item() == pytest.approx(0.997, abs=1e-9)
    assert p[0, s + 2].item() == pytest.approx(0.003, abs=1e-9)
    assert p[1, s - 1].item() == pytest.approx(0.997, abs=1e-9)
    assert p[1, s - 2].item() == pytest.approx(0.003, abs=1e-9)
    # a value whose h is exactly 2.5 splits evenly
    x = inverse_value_transform(torch.tensor([2.5], dtype=torch.float64))
    p = scalar_to_support(x, s)[0]
    assert p[s + 2].item() == pytest.approx(0.5, abs=1e-9) and p[s + 3].item() == pytest.approx(0.5, abs=1e-9)
    assert p.sum().item() == pytest.approx(1.0)


def test_two_hot_batched_shape_rows_sum_to_one_and_expectation_is_exact():
    s = 10
    x = torch.linspace(-80.0, 80.0, 24, dtype=torch.float64).view(2, 3, 4)
    p = scalar_to_support(x, s)
    assert p.shape == (2, 3, 4, 2 * s + 1)
    torch.testing.assert_close(p.sum(-1), torch.ones(2, 3, 4, dtype=torch.float64))
    atoms = torch.arange(-s, s + 1, dtype=torch.float64)
    torch.testing.assert_close((p * atoms).sum(-1), value_transform(x))


def test_support_to_scalar_inverts_two_hot():
    s = 300
    x = torch.tensor([-5000.0, -12.5, -1.0, 0.0, 0.37, 1.0, 42.0, 9000.0], dtype=torch.float64)
    logits = torch.log(scalar_to_support(x, s))  # log 0 = -inf is fine for softmax
    torch.testing.assert_close(support_to_scalar(logits, s), x, rtol=1e-9, atol=1e-9)
    assert support_to_scalar(logits.view(2, 4, -1), s).shape == (2, 4)


def test_support_to_scalar_uniform_logits_and_zero_logits_decode_to_zero():
    s = 10
    assert support_to_scalar(torch.zeros(3, 2 * s + 1), s).abs().max().item() < 1e-6
    z = zero_logits(4, s)
    assert z.shape == (4, 2 * s + 1)
    assert bool((support_to_scalar(z, s) == 0).all())
    assert bool((torch.softmax(z, -1)[:, s] == 1).all())


def test_decode_scalar_both_head_types():
    s = 10
    x = torch.tensor([1.5, -2.0], dtype=torch.float64)
    torch.testing.assert_close(decode_scalar(torch.log(scalar_to_support(x, s)), s, True), x)
    torch.testing.assert_close(decode_scalar(x.unsqueeze(1), s, False), x)
    with pytest.raises(ValueError, match="last axis 1"):
        decode_scalar(torch.zeros(2, 21), s, False)


def test_bad_support_scale_and_mismatched_bins_are_clear_errors():
    assert support_size(300) == 601
    for bad in (0, -3, 2.5, True):
        with pytest.raises(ValueError, match="support_scale must be a positive int"):
            scalar_to_support(torch.zeros(1), bad)
    with pytest.raises(ValueError, match=r"expected 2\*support_scale\+1 = 21"):
        support_to_scalar(torch.zeros(2, 601), 10)


def test_integer_input_is_encoded_as_float():
    p = scalar_to_support(torch.tensor([2, -1]), 3, transform=False)
    assert p.dtype == torch.float32
    assert p[0, 5].item() == 1.0 and p[1, 2].item() == 1.0
    assert math.isclose(p.sum().item(), 2.0)
