"""Plot learning curves from runs' TensorBoard logs into one PNG.

    python benchmarks/plot_curves.py runs/tictactoe_alphazero --out docs/img/tictactoe_alphazero.png
    python benchmarks/plot_curves.py runs/c4_seed0 runs/c4_seed1 --labels "seed 0" "seed 1" \
        --tags eval/optimal_move_rate "eval/*/win" --x wall_minutes --out docs/img/c4.png

Reads every TensorBoard event file under each run directory (the training loop writes them to
``runs/<exp>/tb``: ``eval/*`` at each evaluation, ``learn/*`` and ``collect/*`` after each collect, all
against env steps). One panel per tag, one line per run. ``--x wall_minutes`` counts from the run's first
logged scalar, so a run paused and resumed includes the pause. Tags may be shell-style patterns
(``eval/*/win``); by default the optimal-move rate, the never-lose check's losing lines, every bot's win
rate and the mean return, whichever the run logged. ``--bar TAG=VALUE`` draws a bar as a dashed line on
that tag's panel; ``--symlog PATTERN ...`` gives the matching panels a symmetric log scale (counts such as
losing lines that fall from hundreds to a few). Needs matplotlib: ``pip install -e ".[plot]"``.
"""
from __future__ import annotations

import argparse
import fnmatch
import os
import sys
from typing import Dict, List, NoReturn, Sequence, Tuple

# tag -> [(wall_time, env_steps, value)], sorted by env steps
Scalars = Dict[str, List[Tuple[float, int, float]]]

DEFAULT_TAGS = ("eval/optimal_move_rate", "eval/losing_lines_as_*", "eval/*/win", "eval/mean_return")
EVENT_PREFIX = "events.out.tfevents"


def fail(message: str) -> NoReturn:
    """Exit with one line on stderr and status 2."""
    print(f"plot_curves.py: error: {message}", file=sys.stderr)
    sys.exit(2)


def event_dir(run_dir: str) -> str:
    """The one folder under ``run_dir`` that holds TensorBoard event files (``tb/`` for an lzlite run)."""
    if not os.path.isdir(run_dir):
        fail(f"no such run directory: {run_dir}")
    found = sorted({root for root, _, files in os.walk(run_dir) if any(f.startswith(EVENT_PREFIX) for f in files)})
    if not found:
        fail(f"no TensorBoard event files ({EVENT_PREFIX}.*) under {run_dir}; an lzlite run writes them to "
             f"{os.path.join(run_dir, 'tb')}")
    if len(found) > 1:  # a resumed run appends to the same tb/ folder, so several folders are several runs
        fail(f"event files in {len(found)} folders under {run_dir} ({', '.join(found[:3])}"
             f"{', ...' if len(found) > 3 else ''}): pass each run directory on its own")
    return found[0]


def read_run(run_dir: str) -> Scalars:
    """Every scalar of one run (a resumed run's event files included)."""
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    acc = EventAccumulator(event_dir(run_dir), size_guidance={"scalars": 0})  # 0: keep every point, no sampling
    acc.Reload()
    scalars: Scalars = {tag: [(e.wall_time, e.step, e.value) for e in acc.Scalars(tag)]
                        for tag in acc.Tags()["scalars"]}
    if not scalars:
        fail(f"the event files under {run_dir} hold no scalars")
    for points in scalars.values():
        points.sort(key=lambda p: (p[1], p[0]))
    return scalars


def resolve_tags(patterns: Sequence[str], runs: Dict[str, Scalars], explicit: bool) -> List[str]:
    """Expand patterns against the tags any run logged; an explicit pattern that matches nothing is an error."""
    available = sorted(set().union(*(s.keys() for s in runs.values())))
    tags: List[str] = []
    for pattern in patterns:
        matched = [t for t in available if fnmatch.fnmatchcase(t, pattern)]
        if not matched and explicit:
            evals = [t for t in available if t.startswith("eval/")]
            fail(f"unknown tag {pattern!r}; eval tags logged: {', '.join(evals) or 'none'} "
                 f"(plus {len(available) - len(evals)} learn/ and collect/ tags)")
        tags.extend(t for t in matched if t not in tags)
    if not tags:
        fail(f"none of the default tags {', '.join(DEFAULT_TAGS)} was logged; pick some with --tags "
             f"(logged: {', '.join(available[:12])}{' ...' if len(available) > 12 else ''})")
    return tags


def parse_bars(texts: Sequence[str], tags: Sequence[str]) -> Dict[str, float]:
    """``TAG=VALUE`` -> {tag: value}; the tag must be one of the plotted panels."""
    bars = {}
    for text in texts:
        tag, sep, value = text.partition("=")
        try:
            bars[tag] = float(value)
        except ValueError:
            sep = ""
        if not sep:
            fail(f"bad --bar {text!r}: expected TAG=VALUE, e.g. eval/optimal_move_rate=0.99")
        if tag not in tags:
            fail(f"--bar tag {tag!r} is not a plotted panel; panels: {', '.join(tags)}")
    return bars


def plot(runs: Dict[str, Scalars], labels: Sequence[str], tags: Sequence[str], x: str, out: str,
         title: str, bars: Dict[str, float], symlog: Sequence[str] = ()) -> None:
    try:
        import matplotlib
    except ImportError:
        fail('matplotlib is not installed: pip install -e ".[plot]"')
    matplotlib.use("Agg")  # files only, no display needed
    import matplotlib.pyplot as plt

    starts = {d: min(p[0] for points in s.values() for p in points) for d, s in runs.items()}
    fig, axes = plt.subplots(len(tags), 1, sharex=True, squeeze=False, figsize=(7.0, 1.2 + 1.9 * len(tags)))
    for ax, tag in zip(axes[:, 0], tags):
        for i, ((run_dir, scalars), label) in enumerate(zip(runs.items(), labels)):
            points = scalars.get(tag)
            if not points:
                continue
            if x == "wall_minutes":
                xs = [(w - starts[run_dir]) / 60.0 for w, _, _ in points]
            else:
                xs = [s for _, s, _ in points]
            ax.plot(xs, [v for _, _, v in points], marker="o" if len(points) <= 60 else None, markersize=3,
                    linewidth=1.4, label=label, color=f"C{i}")  # one colour per run in every panel
        if any(fnmatch.fnmatchcase(tag, pattern) for pattern in symlog):
            ax.set_yscale("symlog", linthresh=1.0)  # linear from 0 to 1, logarithmic above
            ax.set_ylim(-0.3, max(ax.get_ylim()[1], 1.5))  # an all-zero panel keeps readable ticks
        if tag in bars:
            ax.axhline(bars[tag], color="grey", linestyle="--", linewidth=1.0)
        ax.set_ylabel(tag.replace("eval/", ""), fontsize=9)
        ax.grid(True, alpha=0.3)
        if len(runs) > 1:
            ax.legend(fontsize=8, loc="best")
    axes[-1, 0].set_xlabel("env steps" if x == "env_steps" else "wall-clock minutes")
    if x == "env_steps":
        axes[-1, 0].ticklabel_format(axis="x", style="plain")
    if title:
        fig.suptitle(title, fontsize=11)
    fig.tight_layout()
    os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
    fig.savefig(out, dpi=110)
    plt.close(fig)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("run_dirs", nargs="+", metavar="RUN_DIR", help="run directories (e.g. runs/<exp>), one line each")
    p.add_argument("--out", required=True, help="PNG file to write")
    p.add_argument("--x", choices=("env_steps", "wall_minutes"), default="env_steps", help="x axis")
    p.add_argument("--tags", nargs="+", default=None, metavar="TAG",
                   help=f"tags or patterns, one panel each (default: {' '.join(DEFAULT_TAGS)}, those logged)")
    p.add_argument("--bar", action="append", default=[], metavar="TAG=VALUE",
                   help="a dashed horizontal line on that tag's panel (repeatable)")
    p.add_argument("--symlog", nargs="+", default=[], metavar="PATTERN",
                   help="tags or patterns whose panels get a symmetric log scale")
    p.add_argument("--labels", nargs="+", default=None, help="legend label per run (default: the folder names)")
    p.add_argument("--title", default=None, help="figure title (default: the run folder names)")
    args = p.parse_args(argv)
    if args.labels is not None and len(args.labels) != len(args.run_dirs):
        fail(f"--labels gives {len(args.labels)} labels for {len(args.run_dirs)} run directories")
    runs = {d: read_run(d) for d in args.run_dirs}
    tags = resolve_tags(args.tags or DEFAULT_TAGS, runs, explicit=args.tags is not None)
    labels = args.labels or [os.path.basename(os.path.normpath(d)) for d in args.run_dirs]
    title = args.title if args.title is not None else ", ".join(labels)
    plot(runs, labels, tags, args.x, args.out, title, parse_bars(args.bar, tags), args.symlog)
    print(f"wrote {args.out}: {', '.join(tags)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
