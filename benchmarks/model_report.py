"""What a checkpoint's network knows without search, on a game's solver-graded positions.

    python benchmarks/model_report.py --cfg runs/<exp>/config.py --ckpt runs/<exp>/ckpt/last.pt

Prints, over the positions the optimal-move rate is graded on (``zoo/<game>/eval_positions.py``):

* prior: how often the policy head's favourite legal move is optimal;
* lookahead (MuZero family): how often argmax_a [r(s, a) - v(g(s, a))] through the learned model is
  optimal, i.e. a one-simulation-per-action search;
* value (when the positions carry solver scores, e.g. Connect Four): how often the sign of the value
  head agrees with the solver on decided positions, and the mean |v|;
* search values (with solver scores): one evaluation search per position; for the root's visit-weighted
  mean return (``root_value='mean'``) and the chosen move's Q (``'chosen_q'``), the squared error to the
  sign of the solver's score and the sign agreement on decided positions: which one to bootstrap from.

With ``--line 3,3,3,3`` (repeatable) it also prints, after each move sequence, the network's value
and prior and the eval search's improved policy, Q values, visits and move: what the agent believes
on a line that the graded (10-26 ply) positions never reach, such as the opening.

It tells a weak network from a weak search: ``optimal_move_rate`` in training logs is the search's.
"""
from __future__ import annotations

import argparse
import dataclasses
import json
import os
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from lzlite.config import compile_config, load_config_file  # noqa: E402
from lzlite.entry.loop import build_components  # noqa: E402
from lzlite.envs.vector import BoardVectorEnv  # noqa: E402
from lzlite.worker.checkpoint import load_checkpoint  # noqa: E402
from lzlite.worker.metrics import graded_positions  # noqa: E402


def solver_scores(game: str) -> np.ndarray | None:
    """Per-position solver scores (> 0: the player to move wins) if the game's set stores them."""
    path = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "zoo", game, "eval_positions.json")
    if not os.path.exists(path):
        return None
    with open(path, encoding="utf-8") as f:
        items = json.load(f)["positions"]
    return np.array([item["score"] for item in items]) if all("score" in item for item in items) else None


def report(model: torch.nn.Module, game: str) -> dict:
    states, optimal = graded_positions(game)
    venv = BoardVectorEnv(game, len(states))
    venv.states[:] = states
    obs = torch.as_tensor(venv.observe())
    legal = venv.legal_mask().astype(bool)
    rows = np.arange(len(states))
    out = {"positions": len(states)}
    with torch.no_grad():
        if hasattr(model, "initial_inference"):  # MuZero family
            root = model.initial_inference(obs)
            logits, value = root.policy_logits.numpy(), model.to_scalar(root.value).numpy().reshape(-1)
            q = np.full(legal.shape, -np.inf)
            for a in range(legal.shape[1]):
                nxt = model.recurrent_inference(root.latent_state, torch.full((len(states),), a, dtype=torch.int64))
                q[:, a] = (model.to_scalar(nxt.reward) - model.to_scalar(nxt.value)).numpy().reshape(-1)
            q[~legal] = -np.inf
            out["lookahead"] = float(optimal[rows, q.argmax(1)].mean())
        else:  # AlphaZero: (logits, value)
            logits, value = (t.numpy() for t in model(obs))
            value = value.reshape(-1)
    out["prior"] = float(optimal[rows, np.where(legal, logits, -np.inf).argmax(1)].mean())
    scores = solver_scores(game)
    if scores is not None and len(scores) == len(states):
        decided = scores != 0
        out["value_sign"] = float((np.sign(value[decided]) == np.sign(scores[decided])).mean())
        out["mean_abs_value"] = float(np.abs(value).mean())
    return out


def search_report(policy, game: str, scores: np.ndarray) -> dict:
    """Value estimates of one eval-mode search per graded position, against the solver's sign."""
    states, _ = graded_positions(game)
    venv = BoardVectorEnv(game, len(states))
    venv.states[:] = states
    out = {}
    target, decided = np.sign(scores), scores != 0
    base = policy.eval_search_cfg
    for kind in ("mean", "chosen_q"):
        policy.eval_search_cfg = dataclasses.replace(base, root_value=kind)
        try:
            v = policy.act(venv, np.arange(len(states)), np.random.default_rng(0), mode="eval").root_value
        finally:
            policy.eval_search_cfg = base
        out[f"search_{kind}_sq_err"] = float(((v - target) ** 2).mean())
        out[f"search_{kind}_sign"] = float((np.sign(v[decided]) == target[decided]).mean())
    return out


def line_report(policy, game: str, lines: list) -> list:
    """One eval-mode search after each move sequence (a list of actions from the initial position)."""
    rows = []
    for line in lines:
        venv = BoardVectorEnv(game, 1)
        venv.reset()
        for a in line:
            venv.step(np.array([a]), np.array([0]))
        out = policy.act(venv, np.array([0]), np.random.default_rng(0), mode="eval")
        rows.append(dict(line=",".join(map(str, line)) or "(start)", value=float(out.predicted_value[0]),
                         search_value=float(out.root_value[0]), prior=out.root_prior[0],
                         improved=out.improved_policy[0], q=out.qvalues[0], visits=out.visit_counts[0],
                         move=int(out.action[0])))
    return rows


def _moves(text: str) -> list:
    try:
        return [int(a) for a in text.split(",") if a.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"--line wants comma-separated actions like 3,3,2, got {text!r}") from None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cfg", required=True, help="the run's config file (runs/<exp>/config.py)")
    parser.add_argument("--ckpt", required=True, help="checkpoint (runs/<exp>/ckpt/last.pt)")
    parser.add_argument("--line", action="append", type=_moves, default=[], metavar="A,B,...",
                        help="also search after this move sequence ('' is the initial position); repeatable")
    args = parser.parse_args()
    torch.set_num_threads(1)
    cfg = compile_config(*load_config_file(args.cfg))
    policy = build_components(cfg)["policy"]
    policy.load_state_dict(load_checkpoint(args.ckpt)["policy"])
    game = cfg.create.env.type
    try:  # first: an illegal move sequence fails before the long part
        lines = line_report(policy, game, args.line)
    except ValueError as e:  # IllegalActionError is a ValueError
        parser.error(f"--line: {e}")
    stats = report(policy.model.eval(), game)
    scores = solver_scores(game)
    if scores is not None and len(scores) == stats["positions"]:
        stats.update(search_report(policy, game, scores))
    for key, val in stats.items():
        print(f"{key:24s} {val:.4f}" if isinstance(val, float) else f"{key:24s} {val}")
    with np.printoptions(precision=2, suppress=True, floatmode="fixed"):
        for row in lines:
            print(f"after {row['line']}: value {row['value']:+.2f}, search value {row['search_value']:+.2f}, "
                  f"move {row['move']}\n  prior    {row['prior']}\n  improved {row['improved']}\n"
                  f"  q        {row['q']}\n  visits   {row['visits']}")


if __name__ == "__main__":
    main()
