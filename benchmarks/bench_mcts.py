"""Search-tree throughput through the Python API: C++ tree (ctree) vs numpy spec (ptree) [vs LightZero].

    python benchmarks/bench_mcts.py                     # full grid: B {64,256} x A {7,9,81} x S {25,50,200}
    python benchmarks/bench_mcts.py --quick             # < 60 s
    python benchmarks/bench_mcts.py --callgrind         # instructions per root-simulation (valgrind)
    python benchmarks/bench_mcts.py --lightzero PATH    # also LightZero's MuZero / Gumbel ctree, same loop

Workload: each search is reset(...) then S times traverse() / expand_and_backup(...) called from a
Python loop, exactly as lzlite.mcts.search does, with a zero-cost fake network (rewards, values and
logits precomputed as random arrays, no in-tree masks, MuZero style). "root-sims/s" = B * S / time
of one search (median over repeats); one thread.

Instructions (--callgrind): every configuration runs in two processes under
`valgrind --tool=callgrind`: one performs R searches, the other runs the same Python loop with the
same precomputed arrays but without any tree call (baseline). instr/root-sim = (search - baseline) /
(R * B * S), so it counts everything a Python caller pays per simulation: interpreter dispatch,
argument checks in the binding and the C++ core (reset and outputs included). The same search run
also reports the instructions collected only inside the Tree methods (`--toggle-collect` on the
Cython wrappers), which is the binding + C++ share alone.
"""
from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from typing import Callable, Optional

import numpy as np

def _load_ctree_alone():
    """lzlite.mcts.ctree._ctree loaded straight from its file, without `import lzlite` (which pulls in
    torch): under callgrind that keeps each worker process short and its baseline small."""
    import glob
    import importlib.util

    here = os.path.dirname(os.path.abspath(__file__))
    path = glob.glob(os.path.join(here, "..", "lzlite", "mcts", "ctree", "_ctree*.so"))[0]
    spec = importlib.util.spec_from_file_location("_ctree", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


GRID_B = (64, 256)
GRID_A = (7, 9, 81)
GRID_S = (25, 50, 200)
RULES = ("puct", "gumbel")
PTREE_MAX_WORK = 64 * 9 * 50   # the ptree runs only where B * A * S is at most this (it is slow)


class FakeNetwork:
    """Precomputed random evaluations: one row per simulation, so the 'network' costs nothing."""

    def __init__(self, B: int, A: int, S: int, rule: str, seed: int = 0, two_player: bool = True):
        rng = np.random.default_rng(seed)
        self.root_logits = rng.normal(size=(B, A)).astype(np.float32)
        self.root_value = rng.uniform(-1, 1, B).astype(np.float32)
        self.legal = np.ones((B, A), bool)
        self.gumbel = rng.gumbel(size=(B, A)).astype(np.float32) if rule == "gumbel" else None
        self.noise = None
        if rule == "puct":
            self.noise = rng.dirichlet(np.full(A, 0.3), size=B).astype(np.float32)
        self.reward = (np.zeros((S, B)) if two_player else rng.uniform(-1, 1, (S, B))).astype(np.float32)
        self.value = rng.uniform(-1, 1, (S, B)).astype(np.float32)
        self.logits = rng.normal(size=(S, B, A)).astype(np.float32)


def run_search(tree, net: FakeNetwork, S: int) -> None:
    """One search through the public API, as lzlite.mcts.search drives it."""
    tree.reset(net.root_logits, net.root_value, net.legal, noise=net.noise,
               noise_weight=0.25 if net.noise is not None else 0.0, gumbel=net.gumbel)
    for s in range(S):
        tree.traverse()
        tree.expand_and_backup(net.reward[s], net.value[s], net.logits[s], None, None)
    tree.outputs()


def run_baseline(tree, net: FakeNetwork, S: int) -> None:
    """The same Python loop and array indexing without any tree call (the callgrind baseline)."""
    for s in range(S):
        (net.reward[s], net.value[s], net.logits[s], None, None)


def median_rate(search: Callable[[], None], work: int, min_time: float, min_repeats: int = 3) -> float:
    """Median root-sims/s over repeated searches (at least min_repeats, at least min_time seconds)."""
    rates = []
    start = time.perf_counter()
    while len(rates) < min_repeats or time.perf_counter() - start < min_time:
        t0 = time.perf_counter()
        search()
        rates.append(work / (time.perf_counter() - t0))
    return statistics.median(rates)


# ------------------------------------------------------------------------------------------- LightZero
class LightZeroRunner:
    """Drives an already-built LightZero's MuZero / Gumbel MuZero ctree with the same loop and arrays.

    LightZero's bindings take Python lists, so each simulation converts the fake network's arrays
    with .tolist(), as LightZero's own search loop (lzero/mcts/tree_search/mcts_ctree.py) does; that
    conversion is part of its per-simulation cost. Signatures follow LightZero's mz_tree.pyx and
    gmz_tree.pyx; an incompatible version is reported and skipped.
    """

    def __init__(self, path: str, rule: str, B: int, A: int, S: int, net: FakeNetwork):
        if path not in sys.path:
            sys.path.insert(0, path)
        self.rule, self.B, self.A, self.S, self.net = rule, B, A, S, net
        if rule == "puct":
            from lzero.mcts.ctree.ctree_muzero import mz_tree as lz_tree
        else:
            from lzero.mcts.ctree.ctree_gumbel_muzero import gmz_tree as lz_tree
        self.lz = lz_tree
        self.legal_actions = [list(range(A)) for _ in range(B)]
        self.to_play = [-1] * B
        self.root_logits = net.root_logits.tolist()
        self.root_value = net.root_value.tolist()
        self.noise = (net.noise if net.noise is not None else np.zeros((B, A), np.float32)).tolist()

    def search(self) -> None:
        lz, B, S, net = self.lz, self.B, self.S, self.net
        roots = lz.Roots(B, self.legal_actions)
        if self.rule == "puct":
            roots.prepare(0.25, self.noise, [0.0] * B, self.root_logits, self.to_play)
        else:
            try:   # newer LightZero: prepare(noise_weight, noises, value_prefixes, values, logits, to_play)
                roots.prepare(0.0, self.noise, [0.0] * B, self.root_value, self.root_logits, self.to_play)
            except TypeError:   # older: without the root values
                roots.prepare(0.0, self.noise, [0.0] * B, self.root_logits, self.to_play)
        min_max = lz.MinMaxStatsList(B)
        min_max.set_delta(0.01)
        for s in range(S):
            results = lz.ResultsWrapper(num=B)
            if self.rule == "puct":
                out = lz.batch_traverse(roots, 19652, 1.25, 0.997, min_max, results, list(self.to_play))
                lz.batch_backpropagate(s + 1, 0.997, net.reward[s].tolist(), net.value[s].tolist(),
                                       net.logits[s].tolist(), min_max, results, list(out[3]))
            else:
                out = lz.batch_traverse(roots, S, 16, 0.997, results, list(self.to_play))
                lz.batch_back_propagate(s + 1, 0.997, net.reward[s].tolist(), net.value[s].tolist(),
                                        net.logits[s].tolist(), min_max, results, list(out[3]))
        roots.get_distributions()


def lightzero_rate(path: str, rule: str, B: int, A: int, S: int, net: FakeNetwork, min_time: float) -> Optional[float]:
    try:
        runner = LightZeroRunner(path, rule, B, A, S, net)
        return median_rate(runner.search, B * S, min_time)
    except Exception as err:   # an incompatible LightZero version must not abort the whole benchmark
        print(f"  LightZero {rule} failed: {type(err).__name__}: {err}", file=sys.stderr)
        return None


# ------------------------------------------------------------------------------------------- callgrind
def _worker(args) -> None:
    """Inner process of --callgrind: build, warm up, then R searches (or the baseline loop)."""
    B, A, S = args.worker_shape
    net = FakeNetwork(B, A, S, args.worker_rule)
    tree = _load_ctree_alone().Tree(B, A, S, rule=args.worker_rule)
    run_search(tree, net, S)   # warm-up: first-call costs (imports, caches) land in both runs alike
    run_baseline(tree, net, S)
    body = run_search if args.worker_mode == "search" else run_baseline
    for _ in range(args.worker_repeats):
        body(tree, net, S)


def _callgrind_count(rule: str, B: int, A: int, S: int, mode: str, repeats: int) -> tuple[int, int]:
    """(total instructions, instructions inside Tree methods) of one worker process under callgrind."""
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "cg.out")
        cmd = ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", "--dump-instr=no",
               sys.executable, os.path.abspath(__file__), "--worker-rule", rule, "--worker-shape",
               str(B), str(A), str(S), "--worker-mode", mode, "--worker-repeats", str(repeats)]
        env = dict(os.environ, PYTHONHASHSEED="0", OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1")
        subprocess.run(cmd, check=True, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        total = _callgrind_total(out)
        # Inclusive cost of the Cython Tree methods, from the same profile.
        annotate = subprocess.run(["callgrind_annotate", "--inclusive=yes", "--threshold=100", out],
                                  check=True, capture_output=True, text=True).stdout
        inside = 0
        for line in annotate.splitlines():   # "Ir (pct)  file:function", not the "=> callee" lines
            m = re.match(r"\s*([\d,]+) \([ \d.]+%\)\s+\S*_ctree\.cpp:__pyx_pw_\w+_4Tree_\d+(\w+)\(", line)
            if m and m.group(2) in ("reset", "traverse", "expand_and_backup", "outputs"):
                inside += int(m.group(1).replace(",", ""))
        return total, inside


def _callgrind_total(path: str) -> int:
    with open(path) as f:
        for line in f:
            if line.startswith("totals:") or line.startswith("summary:"):
                return int(line.split()[1])
    raise RuntimeError(f"no totals in {path}")


def callgrind_table(configs, repeats: int) -> None:
    print("| rule | B | A | S | instr/root-sim (Python API) | instr/root-sim (inside Tree methods) |")
    print("|---|---|---|---|---|---|")
    for rule, B, A, S in configs:
        search_total, inside = _callgrind_count(rule, B, A, S, "search", repeats)
        base_total, _ = _callgrind_count(rule, B, A, S, "baseline", repeats)
        work = repeats * B * S
        # The warm-up search runs in both processes; only the R timed searches differ.
        print(f"| {rule} | {B} | {A} | {S} | {(search_total - base_total) / work:,.0f} | {inside / ((repeats + 1) * B * S):,.0f} |",
              flush=True)


# ------------------------------------------------------------------------------------------------ main
def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="a small grid, < 60 s")
    parser.add_argument("--callgrind", action="store_true", help="instructions per root-simulation (valgrind)")
    parser.add_argument("--lightzero", metavar="PATH", help="root of an already-built LightZero checkout")
    parser.add_argument("--min-time", type=float, default=None, help="seconds per measurement")
    parser.add_argument("--worker-rule", help=argparse.SUPPRESS)
    parser.add_argument("--worker-shape", type=int, nargs=3, help=argparse.SUPPRESS)
    parser.add_argument("--worker-mode", help=argparse.SUPPRESS)
    parser.add_argument("--worker-repeats", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker_rule:
        _worker(args)
        return

    from lzlite.mcts import ctree, ptree

    if args.callgrind:
        configs = [(rule, 256, 7, 50) for rule in RULES]
        if not args.quick:
            configs += [(rule, B, A, S) for rule in RULES for B, A, S in ((64, 9, 25), (256, 81, 50), (64, 7, 200))]
        callgrind_table(configs, repeats=3)
        return

    if args.quick:
        configs = [(rule, B, A, S) for rule in RULES for B, A, S in ((64, 7, 25), (256, 7, 50), (256, 81, 50))]
    else:
        configs = [(rule, B, A, S) for rule in RULES for B in GRID_B for A in GRID_A for S in GRID_S]
    min_time = args.min_time if args.min_time is not None else (0.5 if args.quick else 1.0)

    header = "| rule | B | A | S | ctree root-sims/s | ptree root-sims/s | ctree/ptree |"
    if args.lightzero:
        header += " LightZero root-sims/s | ctree/LightZero |"
    print(header)
    print("|" + "---|" * (header.count("|") - 1))
    for rule, B, A, S in configs:
        net = FakeNetwork(B, A, S, rule)
        tree = ctree.Tree(B, A, S, rule=rule)
        c_rate = median_rate(lambda: run_search(tree, net, S), B * S, min_time)
        p_cell = ratio = "-"
        if B * A * S <= PTREE_MAX_WORK or (args.quick and B * A * S <= 256 * 7 * 50):
            ptr = ptree.Tree(B, A, S, rule=rule)
            p_rate = median_rate(lambda: run_search(ptr, net, S), B * S, min_time, min_repeats=1)
            p_cell, ratio = f"{p_rate:,.0f}", f"{c_rate / p_rate:,.1f}x"
        row = f"| {rule} | {B} | {A} | {S} | {c_rate:,.0f} | {p_cell} | {ratio} |"
        if args.lightzero:
            lz = lightzero_rate(args.lightzero, rule, B, A, S, net, min_time)
            row += f" {lz:,.0f} | {c_rate / lz:,.1f}x |" if lz else " - | - |"
        print(row, flush=True)


if __name__ == "__main__":
    main()
