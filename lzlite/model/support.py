"""Categorical value/reward supports: the MuZero value transform and two-hot encodings.

MuZero (Appendix F, after Pohlen et al. 2018) squashes scalar targets with the invertible transform

    h(x) = sign(x) * (sqrt(|x| + 1) - 1) + eps * x,     eps = 0.001

and predicts a categorical distribution over the integers ``-S .. S`` (``S = support_scale``, so
``V = 2 * S + 1`` bins) of ``h(x)``. A scalar becomes a *two-hot* target (its weight split between the
two neighbouring integers so that the expectation is exact); logits become a scalar by the softmax
expectation followed by ``h^-1``.

Everything here is a pure, batched torch function over any leading shape ``[...]``; there is no
support object to carry around. ``transform=False`` skips ``h`` (a plain two-hot over the raw value).
"""
from __future__ import annotations

import torch

__all__ = [
    "VALUE_TRANSFORM_EPS",
    "support_size",
    "value_transform",
    "inverse_value_transform",
    "scalar_to_support",
    "support_to_scalar",
    "decode_scalar",
    "zero_logits",
]

VALUE_TRANSFORM_EPS = 0.001  # MuZero's eps in h(x); also keeps h strictly increasing, hence invertible


def _check_scale(support_scale: int) -> int:
    if isinstance(support_scale, bool) or not isinstance(support_scale, int) or support_scale < 1:
        raise ValueError(
            f"support_scale must be a positive int (the support is -S..S with 2*S+1 bins), "
            f"got {support_scale!r}; LightZero uses 300, small board games 10"
        )
    return support_scale


def support_size(support_scale: int) -> int:
    """Number of bins ``V = 2 * support_scale + 1`` of the categorical support."""
    return 2 * _check_scale(support_scale) + 1


def value_transform(x: torch.Tensor, eps: float = VALUE_TRANSFORM_EPS) -> torch.Tensor:
    """h(x) = sign(x) * (sqrt(|x| + 1) - 1) + eps * x, elementwise.

    Args:
        x: any shape [...], floating point.
        eps: the linear term that makes h invertible for large |x|.

    Returns:
        h(x), same shape and dtype as ``x``.
    """
    a = torch.abs(x)
    # sqrt(a + 1) - 1 written as a / (sqrt(a + 1) + 1): no cancellation for small |x| in float32.
    return torch.sign(x) * a / (torch.sqrt(a + 1.0) + 1.0) + eps * x


def inverse_value_transform(y: torch.Tensor, eps: float = VALUE_TRANSFORM_EPS) -> torch.Tensor:
    """Exact closed-form inverse of :func:`value_transform`, elementwise.

    For y >= 0, with s = sqrt(x + 1), h is the quadratic ``eps*s^2 + s - (1 + eps + y) = 0``. The
    textbook root ``((sqrt(1 + 4 eps (1 + eps + y)) - 1) / (2 eps))^2 - 1`` loses most float32 digits
    near 0 (two cancellations), so it is rearranged (multiplying by conjugates) into a form with only
    positive terms: x = (s - 1)(s + 1) with

        s     = 2 (1 + eps + y) / (sqrt(D) + 1)
        s - 1 = 4 y (1 + eps + y) / ((1 + 2 eps + 2 y + sqrt(D)) (sqrt(D) + 1)),
        D     = (1 + 2 eps)^2 + 4 eps y.

    Args:
        y: any shape [...], floating point.
        eps: must match the eps of the forward transform.

    Returns:
        x with h(x) = y, same shape and dtype as ``y``.
    """
    a = torch.abs(y)
    sqrt_d = torch.sqrt((1.0 + 2.0 * eps) ** 2 + 4.0 * eps * a)
    s = 2.0 * (1.0 + eps + a) / (sqrt_d + 1.0)
    s_minus_1 = 4.0 * a * (1.0 + eps + a) / ((1.0 + 2.0 * eps + 2.0 * a + sqrt_d) * (sqrt_d + 1.0))
    return torch.sign(y) * s_minus_1 * (s + 1.0)


def scalar_to_support(x: torch.Tensor, support_scale: int, transform: bool = True) -> torch.Tensor:
    """Two-hot encode scalars over the integer support ``-S .. S``.

    The weight of ``z = h(x)`` (or ``x`` when ``transform=False``), clipped to ``[-S, S]``, is split
    between ``floor(z)`` and ``floor(z) + 1`` so that the expectation of the result is exactly ``z``:
    e.g. z = 2.3 puts 0.7 on bin 2 and 0.3 on bin 3.

    Args:
        x: scalars, shape [...].
        support_scale: S; the result has V = 2 * S + 1 bins, bin i standing for the integer i - S.
        transform: apply h before encoding (MuZero); False encodes the raw value.

    Returns:
        Probabilities, shape [..., V], rows summing to 1, dtype of ``x`` (float32 for integer input).
    """
    scale = _check_scale(support_scale)
    if not torch.is_floating_point(x):
        x = x.to(torch.float32)
    z = value_transform(x) if transform else x
    z = z.clamp(-scale, scale)
    floor = torch.floor(z)
    upper_weight = z - floor
    lower_index = (floor + scale).long()  # in 0 .. 2S
    # At z == S the upper bin would be 2S + 1; its weight is 0 there, so clamping the index is exact.
    upper_index = (lower_index + 1).clamp(max=2 * scale)
    out = torch.zeros(*x.shape, 2 * scale + 1, dtype=x.dtype, device=x.device)
    out.scatter_add_(-1, lower_index.unsqueeze(-1), (1.0 - upper_weight).unsqueeze(-1))
    out.scatter_add_(-1, upper_index.unsqueeze(-1), upper_weight.unsqueeze(-1))
    return out


def support_to_scalar(logits: torch.Tensor, support_scale: int, transform: bool = True) -> torch.Tensor:
    """Decode categorical logits into scalars: softmax expectation over ``-S .. S``, then ``h^-1``.

    Args:
        logits: shape [..., V] with V = 2 * S + 1 (unnormalised log-probabilities).
        support_scale: S.
        transform: apply ``h^-1`` after the expectation (MuZero); False returns the expectation.

    Returns:
        Scalars, shape [...] (the support axis is dropped).
    """
    scale = _check_scale(support_scale)
    if logits.shape[-1] != 2 * scale + 1:
        raise ValueError(
            f"support_to_scalar: logits have {logits.shape[-1]} bins in the last axis (shape "
            f"{tuple(logits.shape)}), expected 2*support_scale+1 = {2 * scale + 1}; check that the "
            f"model and the decoder use the same support_scale"
        )
    probs = torch.softmax(logits, dim=-1)
    atoms = torch.arange(-scale, scale + 1, dtype=probs.dtype, device=probs.device)
    z = (probs * atoms).sum(-1)
    return inverse_value_transform(z) if transform else z


def decode_scalar(output: torch.Tensor, support_scale: int, categorical_distribution: bool,
                  transform: bool = True) -> torch.Tensor:
    """Turn a value/reward head output into scalars [B], whichever head type produced it.

    Args:
        output: [B, V] logits when ``categorical_distribution`` else [B, 1] scalars.
        support_scale: S (ignored for scalar heads).
        categorical_distribution: the model's head type.
        transform: categorical heads only: apply ``h^-1`` after the expectation (see :func:`support_to_scalar`).

    Returns:
        Scalars, shape [B].
    """
    if categorical_distribution:
        return support_to_scalar(output, support_scale, transform)
    if output.shape[-1] != 1:
        raise ValueError(
            f"decode_scalar: a scalar head output must have last axis 1, got shape {tuple(output.shape)}; "
            f"pass categorical_distribution=True for [B, V] logits"
        )
    return output.squeeze(-1)


# exp(-1e4) underflows to exactly 0 in float16/32/64, so softmax of these logits is one-hot.
_MASKED_LOGIT = -1.0e4


def zero_logits(batch_size: int, support_scale: int, device=None, dtype=torch.float32) -> torch.Tensor:
    """Logits [B, V] that decode to exactly 0: softmax is one-hot on the middle bin.

    Used as the "no reward" output of ``initial_inference`` with categorical heads.
    """
    scale = _check_scale(support_scale)
    out = torch.full((batch_size, 2 * scale + 1), _MASKED_LOGIT, dtype=dtype, device=device)
    out[:, scale] = 0.0
    return out
