"""Declared ranges of numeric config keys.

Each component declares the ranges of its own keys beside its defaults, in a classmethod
``config_ranges()`` returning ``{key: Range}``, and the rules that tie its keys to others in
``check_config(cfg, path)``; ``compile_config`` checks every composed key against the range of the component
that declares it, then runs every component's rules. A value outside its range is one ``ConfigError`` line
naming the key path, the value and the allowed range, instead of a hang, a run that trains nothing, or a
traceback an hour later::

    @classmethod
    def config_ranges(cls) -> Dict[str, Range]:
        return dict(batch_size=at_least(1), discount_factor=between(0, 1), learning_rate=above(0))
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Dict, Optional

__all__ = ["Range", "at_least", "above", "between", "ranges_of"]


@dataclass(frozen=True)
class Range:
    """An interval of allowed values; ``None`` is an open end (the value must still be finite).

    Written as an interval in messages: ``[1, inf)``, ``(0, 1]``. A closed ``high=math.inf`` admits infinity
    (``grad_clip_value``: no clipping); NaN is never in a range.
    """

    low: Optional[float] = None
    high: Optional[float] = None
    low_open: bool = False  # True: low itself is excluded
    high_open: bool = False  # True: high itself is excluded

    def __contains__(self, value: Any) -> bool:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            return False
        if math.isnan(value):
            return False
        if self.low is None and value == -math.inf or self.high is None and value == math.inf:
            return False
        if self.low is not None and (value < self.low or self.low_open and value == self.low):
            return False
        if self.high is not None and (value > self.high or self.high_open and value == self.high):
            return False
        return True

    def __str__(self) -> str:
        low = "-inf" if self.low is None else _number(self.low)
        high = "inf" if self.high is None else _number(self.high)
        left = "(" if self.low is None or self.low_open else "["
        right = ")" if self.high is None or self.high_open else "]"
        return f"{left}{low}, {high}{right}"


def _number(x: float) -> str:
    if x == math.inf:
        return "inf"
    return str(int(x)) if float(x).is_integer() and abs(x) < 1e15 else repr(x)


def at_least(low: float) -> Range:
    """``[low, inf)``: counts (``at_least(1)``), weights and sentinels (``at_least(-1)``)."""
    return Range(low=low)


def above(low: float) -> Range:
    """``(low, inf)``: strictly positive reals such as a learning rate or a Dirichlet concentration."""
    return Range(low=low, low_open=True)


def between(low: float, high: float) -> Range:
    """``[low, high]``: probabilities, fractions, discounts."""
    return Range(low=low, high=high)


def ranges_of(cls: Any) -> Dict[str, Range]:
    """The ranges a component class declares (``config_ranges()``; none when it has no such method)."""
    fn = getattr(cls, "config_ranges", None)
    return dict(fn()) if fn is not None else {}
