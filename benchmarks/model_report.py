"""What a checkpoint's network knows without search, on a game's solver-graded positions.

    python benchmarks/model_report.py --cfg runs/<exp>/config.py --ckpt runs/<exp>/ckpt/last.pt

Prints, over the positions the optimal-move rate is graded on (``zoo/<game>/eval_positions.py``):

* prior: how often the policy head's favourite legal move is optimal;
* lookahead (MuZero family): how often argmax_a [r(s, a) - v(g(s, a))] through the learned model is
  optimal, i.e. a one-simulation-per-action search; lookahead_real: the same with the real game's reward
  and the value head on the real position after each move (the lookahead exact dynamics would give), and
  child_value_gap: the mean |v(g(s, a)) - v(real position after a)| over legal moves (0 after a final move);
* value (when the positions carry solver scores, e.g. Connect Four): how often the sign of the value
  head agrees with the solver on decided positions, and the mean |v|;
* search values (with solver scores): one evaluation search per position; for the root's visit-weighted
  mean return (``search_mean_*``, the stored root value) and the Q of the move the search played
  (``search_move_q_*``), the squared error to the sign of the solver's score and the sign agreement on
  decided positions.

With ``--line 3,3,3,3`` (repeatable) it also prints, after each move sequence, the network's value
and prior and the eval search's improved policy, Q values, visits and move: what the agent believes
on a line that the graded (10-26 ply) positions never reach, such as the opening.

With ``--selfplay N`` it plays N self-play games the way the collector does (the config's random opening
plies, moves sampled by the collect search up to ``temperature_moves``, then its best move) and prints
the mean game length and, per move, how often the mover missed an immediate win or handed the opponent
one while a move that does not existed: what the training data is about (Connect Four: AlphaZero's
games last ~30 plies, 2% handed wins in the best-move plies; the Gumbel MuZero recipe's ~23, ~4%).
For the MuZero family it also probes, for every move in those best-move plies that would hand the
opponent a win (while some move does not), whether the model's reward head sees the opponent's winning
reply: ``win_seen_learned`` through two dynamics steps from the root (what the search sees),
``win_seen_real`` one step from the real position's observation; ``_played`` over the moves the
search chose (Gumbel MuZero recipe + prioritized replay at 20k env steps: 0.56 / 0.73 over all, 0.25 /
0.44 over the played blunders: the reward head misses immediate wins, even one step from a real position).
These are 1-ply checks, not solver grades: with discount 1 a search is indifferent between winning now
and later, and between moves in a lost position, so some of them cost nothing.

With ``--real-search N`` (MuZero family) it plays N games against each evaluation bot with the network's
representation and prediction heads searched over the REAL game (AlphaZero's search, Gumbel root when the
config's is; the config's simulations and c_scale) and grades that search's moves on the positions: what
the agent would play if its learned dynamics were exact. Far stronger than the run's own evaluation means
the learned model's dynamics, not its value and policy, is what holds the agent back (a 32-channel
Connect Four Gumbel MuZero at 16k env steps: optimal-move rate 0.89 and 35% of 40 games against
alpha-beta through the real game, 0.735 and 0% through its dynamics).

With ``--games N`` (Connect Four) it plays N games against the depth-4 alpha-beta bot as the evaluator
does and prints each distinct game once, with its count and the agent's moves that the exact solver says
threw a result away (win -> draw or loss, draw -> loss): whether the losses are opening knowledge or late
tactics (a Connect Four Gumbel MuZero checkpoint lost every first-player game by one move at ply 2, 3,3,4
where only 3,3,3 keeps the win).

With ``--buffer`` it also counts each ``--line``'s position in the checkpoint's replay buffer (see
``buffer_line_report``): whether self-play reaches the lines the evaluation games run through.

It tells a weak network from a weak search: ``optimal_move_rate`` in training logs is the search's.
"""
from __future__ import annotations

import argparse
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
            logits, value = root.policy_logits.numpy(), model.value_to_scalar(root.value).numpy().reshape(-1)
            q = np.full(legal.shape, -np.inf)
            q_real = np.full(legal.shape, -np.inf)
            through = np.zeros(legal.shape)  # value of the latent after each move, through the dynamics
            real = np.zeros(legal.shape)  # value of the real position after it (0 where the move ends the game)
            for a in range(legal.shape[1]):
                nxt = model.recurrent_inference(root.latent_state, torch.full((len(states),), a, dtype=torch.int64))
                through[:, a] = model.value_to_scalar(nxt.value).numpy().reshape(-1)
                q[:, a] = model.to_scalar(nxt.reward).numpy().reshape(-1) - through[:, a]
                sel = np.flatnonzero(legal[:, a])
                after = np.ascontiguousarray(venv.states[sel])  # a copy, played on by the game core
                reward, done = venv.game.step(after, np.full(len(sel), a, dtype=np.int32))
                after_obs = torch.as_tensor(venv.game.observe(after))
                v = model.value_to_scalar(model.initial_inference(after_obs).value).numpy().reshape(-1)
                real[sel, a] = np.where(done, 0.0, v)
                q_real[sel, a] = reward - real[sel, a]
            q[~legal], q_real[~legal] = -np.inf, -np.inf
            out["lookahead"] = float(optimal[rows, q.argmax(1)].mean())
            out["lookahead_real"] = float(optimal[rows, q_real.argmax(1)].mean())
            out["child_value_gap"] = float(np.abs(through - real)[legal].mean())
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
    """Value estimates of one eval-mode search per graded position, against the solver's sign: the root value
    (the visit-weighted mean) and the played move's Q (the mean where that move has no visits)."""
    states, _ = graded_positions(game)
    venv = BoardVectorEnv(game, len(states))
    venv.states[:] = states
    rows = np.arange(len(states))
    searched = policy.act(venv, rows, np.random.default_rng(0), mode="eval")
    visited = searched.visit_counts[rows, searched.action] > 0
    move_q = np.where(visited, searched.qvalues[rows, searched.action], searched.root_value)
    out = {}
    target, decided = np.sign(scores), scores != 0
    for kind, v in (("mean", searched.root_value), ("move_q", move_q)):
        out[f"search_{kind}_sq_err"] = float(((v - target) ** 2).mean())
        out[f"search_{kind}_sign"] = float((np.sign(v[decided]) == target[decided]).mean())
    return out


class _HeadsAsPolicyValueNet(torch.nn.Module):
    """A MuZero-family network's representation + prediction as an AlphaZero net: obs -> (logits, value [B, 1])."""

    def __init__(self, model: torch.nn.Module) -> None:
        super().__init__()
        self.model = model

    def forward(self, obs: torch.Tensor) -> tuple:
        out = self.model.initial_inference(obs)
        return out.policy_logits, self.model.value_to_scalar(out.value).view(-1, 1)


def real_search_report(policy, cfg, episodes: int, seed: int = 0) -> dict:
    """The evaluator's statistics for the policy's network searched over the real game (see ``--real-search``)."""
    from lzlite.config import extend_base
    from lzlite.entry.eval import evaluate

    p = cfg.policy
    gumbel = p.search_rule == "gumbel"
    keys = dict(num_simulations=int(p.eval_num_simulations or p.num_simulations), eval_episodes=int(episodes),
                eval_bots=list(p.eval_bots), eval_bot_depth=int(p.eval_bot_depth),
                eval_optimal_move_rate=bool(p.eval_optimal_move_rate), learner_dtype="float32", search_dtype="float32")
    if gumbel:
        keys.update(max_num_considered_actions=int(p.max_num_considered_actions), c_scale=float(p.c_scale))
    main, create = extend_base("gumbel_alphazero" if gumbel else "alphazero", dict(policy=keys),
                               dict(env=dict(type=cfg.create.env.type)))
    net = _HeadsAsPolicyValueNet(policy.model.float().eval())
    stats = evaluate([main, create], seed=seed, model=net)
    return {f"real_search/{k}": v for k, v in stats.items()}


def _after(game: str, line: list) -> BoardVectorEnv:
    """A one-game vector env after the move sequence ``line`` from the initial position."""
    venv = BoardVectorEnv(game, 1)
    venv.reset()
    for a in line:
        venv.step(np.array([a]), np.array([0]))
    return venv


def line_report(policy, game: str, lines: list) -> list:
    """One eval-mode search after each move sequence (a list of actions from the initial position)."""
    rows = []
    for line in lines:
        venv = _after(game, line)
        out = policy.act(venv, np.array([0]), np.random.default_rng(0), mode="eval")
        rows.append(dict(line=",".join(map(str, line)) or "(start)", value=float(out.predicted_value[0]),
                         search_value=float(out.root_value[0]), prior=out.root_prior[0],
                         improved=out.improved_policy[0], q=out.qvalues[0], visits=out.visit_counts[0],
                         move=int(out.action[0])))
    return rows


def buffer_line_report(ckpt: dict, game: str, lines: list) -> list:
    """How often the checkpoint's replay buffer holds the position after each line (or its mirror image).

    Per line: the number of sampleable rows (moves, not final states) whose observation is that position or
    its left-right mirror, out of all live rows, with the mean stored search value (mover's view) and mean
    policy target over those rows (mirrored rows' targets mirrored back). A line the evaluation games run
    through but self-play hardly reaches is one the network has not been taught (Connect Four Gumbel MuZero
    self-play: 3,3 held 13-19 times in 50k).
    """
    arrays = (ckpt.get("buffer") or {}).get("arrays")
    if arrays is None:
        raise ValueError("the checkpoint holds no replay buffer (saved before the first collect?)")
    live = arrays["_sampleable"].numpy()
    obs = arrays["_obs"].numpy()[live]
    flat = obs.reshape(len(obs), -1)
    mirror = obs[..., ::-1].reshape(len(obs), -1)
    value, policy = arrays["_value"].numpy()[live], arrays["_policy"].numpy()[live]
    rows = []
    for line in lines:
        target = _after(game, line).observe()[0].astype(obs.dtype).reshape(-1)
        same = np.all(flat == target, axis=1)
        flipped = ~same & np.all(mirror == target, axis=1)  # its policy target is in the mirror's columns
        hit = same | flipped
        n = int(hit.sum())
        pi = np.concatenate([policy[same], policy[flipped][:, ::-1]])
        rows.append(dict(line=",".join(map(str, line)) or "(start)", count=n, live=len(obs),
                         value=float(value[hit].mean()) if n else float("nan"),
                         policy=pi.mean(axis=0) if n else np.full(policy.shape[1], np.nan)))
    return rows


def _children(game, state: np.ndarray) -> tuple:
    """Every legal move played from ``state`` (one state row): (legal [A], next states [A], reward [A], done [A]);
    an illegal move's row is a copy of a legal one's, masked out by ``legal``."""
    legal = game.legal_mask(state[None])[0].astype(bool)
    nxt = np.repeat(state[None], len(legal), axis=0)
    reward, done = game.step(nxt, np.where(legal, np.arange(len(legal)), int(legal.argmax())).astype(np.int32))
    return legal, nxt, reward, done


def immediate_wins(game, state: np.ndarray) -> np.ndarray:
    """bool [A]: the legal moves that win at once for the player to move in ``state`` (one state row)."""
    legal, _, reward, _ = _children(game, state)
    return (reward > 0) & legal


def tactical_errors(game, state: np.ndarray, action: int) -> tuple[bool, bool]:
    """(missed, handed) for playing ``action`` in ``state``: it passes up an immediate win; or, with no
    win on offer, it lets the opponent win at once where some legal move would not."""
    legal, _, reward, _ = _children(game, state)
    wins = (reward > 0) & legal
    if wins.any():
        return not wins[action], False
    return False, any(b == action for b, _ in handing_pairs(game, state))


def handing_pairs(game, state: np.ndarray) -> list:
    """[(b, y)] for one state row: the legal moves b that let the opponent win at once, with one such winning
    reply y each; empty when the mover can win at once or every legal move hands a win (nothing to avoid)."""
    legal, nxt, reward, done = _children(game, state)
    if ((reward > 0) & legal).any():
        return []
    pairs = []
    for b in np.flatnonzero(legal & ~done):
        wins = np.flatnonzero(immediate_wins(game, nxt[b]))
        if len(wins):
            pairs.append((int(b), int(wins[0])))
    return pairs if len(pairs) < legal.sum() else []


@torch.no_grad()
def win_perception(policy, game, state: np.ndarray, pairs: list) -> tuple[np.ndarray, np.ndarray]:
    """The model's reward for the opponent's winning reply y after each handing move b (from the mover's
    view of y: 1 means the win is seen): (learned [P]: s -> b -> y through the dynamics, real [P]: from the
    observation of the real position after b, one dynamics step)."""
    model = policy.model
    was_training = model.training
    model.eval()  # batch-norm models: running statistics, as in search
    try:
        return _win_perception(policy, model, game, state, pairs)
    finally:
        model.train(was_training)


def _win_perception(policy, model, game, state: np.ndarray, pairs: list) -> tuple[np.ndarray, np.ndarray]:
    b, y = (torch.as_tensor([p[i] for p in pairs], device=policy.device) for i in (0, 1))
    root = model.initial_inference(policy.to_tensor(game.observe(state[None]))).latent_state
    after_b = model.recurrent_inference(root.expand(len(pairs), *root.shape[1:]), b).latent_state
    learned = model.to_scalar(model.recurrent_inference(after_b, y).reward)
    nxt = np.repeat(state[None], len(pairs), axis=0)
    game.step(nxt, b.cpu().numpy().astype(np.int32))
    real_root = model.initial_inference(policy.to_tensor(game.observe(nxt))).latent_state
    real = model.to_scalar(model.recurrent_inference(real_root, y).reward)
    return learned.float().view(-1).cpu().numpy(), real.float().view(-1).cpu().numpy()


def selfplay_report(policy, game_name: str, games: int, random_opening_plies: int, temperature_moves: int,
                    seed: int = 0) -> dict:
    """``games`` self-play games as the collector plays them (``temperature_moves < 0``: every move sampled);
    length and tactical-error rates per move."""
    rng = np.random.default_rng(seed)
    venv = BoardVectorEnv(game_name, games)
    venv.reset()
    for i, k in enumerate(rng.integers(0, random_opening_plies + 1, games)):  # unrecorded random openings
        for _ in range(k):
            if venv.done[i]:
                break
            legal = np.flatnonzero(venv.legal_mask()[i])
            venv.step(np.array([rng.choice(legal)]), np.array([i]))
    venv.reset(np.flatnonzero(venv.done))  # an opening that ended the game starts over from the empty board
    ply = np.zeros(games, dtype=np.int64)
    counts = {k: np.zeros(2) for k in ("moves", "missed", "handed")}  # [sampled plies, best-move plies]
    learned_model = hasattr(policy.model, "recurrent_inference")
    seen = {"learned": [], "real": [], "played": []}  # per handing move in the best-move plies
    lengths, draws = [], 0
    while not venv.done.all():
        idx = np.flatnonzero(~venv.done)
        greedy = ply[idx] >= temperature_moves if temperature_moves >= 0 else np.zeros(len(idx), dtype=bool)
        out = policy.act(venv, idx, rng, mode="collect", temperature=policy.collect_temperature(0), greedy=greedy)
        for j, i in enumerate(idx):
            missed, handed = tactical_errors(venv.game, venv.states[i], int(out.action[j]))
            g = int(greedy[j])
            counts["moves"][g] += 1
            counts["missed"][g] += missed
            counts["handed"][g] += handed
            pairs = handing_pairs(venv.game, venv.states[i]) if learned_model and g else []
            if pairs:
                learned, real = win_perception(policy, venv.game, venv.states[i], pairs)
                seen["learned"] += learned.tolist()
                seen["real"] += real.tolist()
                seen["played"] += [b == int(out.action[j]) for b, _ in pairs]
        reward, done = venv.step(out.action, idx)
        ply[idx] += 1
        lengths += ply[idx[done]].tolist()
        draws += int((reward[done] == 0).sum())
    moves = counts["moves"]
    out = dict(selfplay_games=games, selfplay_length=float(np.mean(lengths)), selfplay_draws=draws / games)
    for key in ("missed", "handed"):
        out[f"selfplay_{key}_win"] = float(counts[key].sum() / moves.sum())
        out[f"selfplay_{key}_win_best_move_plies"] = float(counts[key][1] / max(moves[1], 1))
    if learned_model and seen["played"]:
        played = np.array(seen["played"])
        for kind in ("learned", "real"):
            hit = np.array(seen[kind]) > 0.5
            out[f"selfplay_win_seen_{kind}"] = float(hit.mean())
            if played.any():
                out[f"selfplay_win_seen_{kind}_played"] = float(hit[played].mean())
        out["selfplay_handing_moves"] = len(played)
    return out


def game_traces(policy, cfg, games: int, from_ply: int = 2, seed: int = 0) -> list:
    """Plays ``games`` games (half as each side) against the config's depth-``eval_bot_depth`` alpha-beta bot as
    the evaluator does and grades each distinct game's agent moves with the exact Connect Four solver.

    Returns one dict per distinct game, most frequent first: count, agent ('first' / 'second'), result
    ('win' / 'draw' / 'loss'), moves (the columns, both sides), graded (agent moves graded) and errors: (ply, move, verdict before,
    verdict after) for each agent move from ply ``from_ply`` on that turned the solver's verdict for the
    agent (+1 win, 0 draw, -1 loss under perfect play) worse. The agent's search is deterministic in eval
    mode and the bot's only randomness is its tie-breaks, so a few lines make up most of the games."""
    from zoo.bots import Connect4Solver, make_bot
    from lzlite.worker.evaluator import play_against_bot

    venv = BoardVectorEnv("connect4", games)
    bot = make_bot("connect4", "alpha_beta", depth=int(cfg.policy.eval_bot_depth), seed=seed)
    winner, agent_player, moves = play_against_bot(policy, venv, bot, np.random.default_rng(seed))
    distinct: dict = {}
    for w, side, line in zip(winner, agent_player, moves):
        key = (int(side), tuple(line))
        distinct.setdefault(key, [0, "draw" if w < 0 else "win" if w == side else "loss"])[0] += 1
    solver, verdicts = Connect4Solver(), {}
    rows = []
    for (side, line), (count, result) in sorted(distinct.items(), key=lambda kv: -kv[1][0]):
        replay = BoardVectorEnv("connect4", 1)
        replay.reset()
        errors, graded = [], 0
        for ply, a in enumerate(line):
            if ply % 2 == side and ply >= from_ply:
                key = replay.states[0].tobytes()
                if key not in verdicts:
                    verdicts[key] = solver.move_values(replay.states[0])
                values = verdicts[key]
                graded += 1
                if values[a] < np.nanmax(values):
                    errors.append((ply, a, int(np.nanmax(values)), int(values[a])))
            replay.step(np.array([a]))
        rows.append(dict(count=count, agent="first" if side == 0 else "second",
                         result=result, moves="".join(map(str, line)), graded=graded,
                         errors=errors))
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
    parser.add_argument("--selfplay", type=int, default=0, metavar="N",
                        help="also play N self-play games as the collector does and count tactical errors")
    parser.add_argument("--real-search", type=int, default=0, metavar="N",
                        help="MuZero family: also play N games per eval bot with the network's heads searched over "
                             "the real game, and grade that search on the positions")
    parser.add_argument("--games", type=int, default=0, metavar="N",
                        help="Connect Four: also play N games against the depth-eval_bot_depth alpha-beta bot and walk "
                             "each distinct game with the exact solver: where the agent's moves threw a result away")
    parser.add_argument("--games-from-ply", type=int, default=2, metavar="P",
                        help="--games: grade the agent's moves from ply P on (the first plies can take the solver "
                             "minutes)")
    parser.add_argument("--buffer", action="store_true",
                        help="also count each --line's position (or its mirror) in the checkpoint's replay buffer, "
                             "with its mean stored search value and policy target: does self-play reach it?")
    parser.add_argument("--device", default=None, help="torch device, e.g. cpu (default: the config's)")
    args = parser.parse_args()
    torch.set_num_threads(1)
    cfg = compile_config(*load_config_file(args.cfg))
    if args.device is not None:
        cfg.policy.device = args.device
    policy = build_components(cfg)["policy"]
    ckpt = load_checkpoint(args.ckpt)
    policy.load_state_dict(ckpt["policy"])
    game = cfg.create.env.type
    try:  # first: an illegal move sequence fails before the long part
        lines = line_report(policy, game, args.line)
        held = buffer_line_report(ckpt, game, args.line) if args.buffer else []
    except ValueError as e:  # IllegalActionError is a ValueError
        parser.error(f"--line / --buffer: {e}")
    del ckpt
    stats = report(policy.model.eval(), game)
    scores = solver_scores(game)
    if scores is not None and len(scores) == stats["positions"]:
        stats.update(search_report(policy, game, scores))
    if args.selfplay > 0:
        pcfg = cfg.policy
        stats.update(selfplay_report(policy, game, args.selfplay, int(pcfg.random_opening_plies),
                                     int(pcfg.temperature_moves)))
    if args.real_search > 0:
        if not hasattr(policy.model, "initial_inference"):
            parser.error("--real-search: the checkpoint's network has no learned model (AlphaZero already searches "
                         "the real game)")
        stats.update(real_search_report(policy, cfg, args.real_search))
    traces = []
    if args.games > 0:
        if game != "connect4":
            parser.error("--games needs the exact solver: Connect Four only")
        traces = game_traces(policy, cfg, args.games, args.games_from_ply)
    for key, val in stats.items():
        print(f"{key:36s} {val:.4f}" if isinstance(val, float) else f"{key:36s} {val}")
    with np.printoptions(precision=2, suppress=True, floatmode="fixed"):
        for row in lines:
            print(f"after {row['line']}: value {row['value']:+.2f}, search value {row['search_value']:+.2f}, "
                  f"move {row['move']}\n  prior    {row['prior']}\n  improved {row['improved']}\n"
                  f"  q        {row['q']}\n  visits   {row['visits']}")
        for row in held:
            print(f"buffer, after {row['line']}: {row['count']} of {row['live']} positions (mirror included), "
                  f"mean stored value {row['value']:+.2f}, mean policy target {row['policy']}")
    names = {1: "win", 0: "draw", -1: "loss"}
    for t in traces:
        where = "; ".join(f"ply {p} column {a}: {names[b]} -> {names[c]}" for p, a, b, c in t["errors"]) or "none"
        print(f"{t['count']:4d} x agent {t['agent']:6s} {t['result']:4s} {t['moves']}\n"
              f"       verdict-losing agent moves: {where}")


if __name__ == "__main__":
    main()
