"""Print a run's learning curve from its TensorBoard log, and when it first met a bar.

    python benchmarks/learning_report.py runs/tictactoe_alphazero \
        --bar "eval/optimal_move_rate>=0.99" --bar "eval/perfect/loss<=0"

Each row is one evaluation: env steps, wall-clock minutes since the run started, and the chosen tags.
The bar is met at the first evaluation where every --bar condition holds.
"""
from __future__ import annotations

import argparse
import operator
import os
import re
import struct
import sys
from typing import Dict, List, Tuple

_OPS = {">=": operator.ge, "<=": operator.le, ">": operator.gt, "<": operator.lt, "==": operator.eq}


def read_scalars(tb_dir: str) -> Dict[str, List[Tuple[float, int, float]]]:
    """tag -> [(wall_time, step, value)] from every event file under ``tb_dir``."""
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    acc = EventAccumulator(tb_dir, size_guidance={"scalars": 0})
    acc.Reload()
    return {tag: [(e.wall_time, e.step, e.value) for e in acc.Scalars(tag)] for tag in acc.Tags()["scalars"]}


def as_logged(x: float) -> float:
    """``x`` rounded to float32, as TensorBoard stores scalars: a bar of 0.95 must hold for a logged 0.95."""
    return struct.unpack("f", struct.pack("f", x))[0]


def parse_bar(text: str) -> Tuple[str, str, float]:
    m = re.fullmatch(r"\s*([\w/.-]+)\s*(>=|<=|==|>|<)\s*([-\d.eE+]+)\s*", text)
    if not m:
        raise SystemExit(f"bad --bar {text!r}: expected TAG OP NUMBER, e.g. 'eval/optimal_move_rate>=0.99'")
    return m.group(1), m.group(2), float(m.group(3))


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("run_dir", help="a run directory (its tb/ folder is read)")
    p.add_argument("--bar", action="append", default=[], help="TAG OP NUMBER; all must hold (repeatable)")
    p.add_argument("--tags", nargs="*", default=None, help="eval tags to print (default: the bar tags)")
    args = p.parse_args(argv)
    tb = os.path.join(args.run_dir, "tb")
    if not os.path.isdir(tb):
        print(f"no TensorBoard log in {tb}", file=sys.stderr)
        return 2
    scalars = read_scalars(tb)
    bars = [parse_bar(b) for b in args.bar]
    tags = args.tags or [t for t, _, _ in bars] or [t for t in scalars if t.startswith("eval/")]
    tags = tags + [t for t, _, _ in bars if t not in tags]  # a bar's tag is printed too, after the asked ones
    missing = [t for t in tags if t not in scalars]
    if missing:
        print(f"tags not in the log: {missing}; available: {sorted(scalars)}", file=sys.stderr)
        return 2
    start = min(ev[0][0] for ev in scalars.values() if ev)
    by_step: Dict[int, Dict[str, Tuple[float, float]]] = {}
    for t in tags:
        for wall, step, value in scalars[t]:
            by_step.setdefault(step, {})[t] = (wall, value)
    print(f"{'env_steps':>10} {'minutes':>8} " + " ".join(f"{t:>24}" for t in tags))
    met = None
    for step in sorted(by_step):
        row = by_step[step]
        if len(row) < len(tags):
            continue
        minutes = (max(w for w, _ in row.values()) - start) / 60.0
        print(f"{step:>10} {minutes:>8.2f} " + " ".join(f"{row[t][1]:>24.4f}" for t in tags))
        if met is None and bars and all(_OPS[op](row[t][1], as_logged(x)) for t, op, x in bars):
            met = (step, minutes)
    if bars:
        cond = " and ".join(f"{t}{op}{x:g}" for t, op, x in bars)
        print(f"bar ({cond}): " + (f"first met at {met[0]} env steps, {met[1]:.2f} minutes" if met else "not met"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
