"""Synchronous loop vs a learner with 1 and 2 actors, side by side in one run; then a flood of the learner.

    python benchmarks/bench_async.py                      # Connect Four AlphaZero, default net, ~15 minutes
    python benchmarks/bench_async.py --env-steps 3000 --modes 0,1,2 --flood-s 10

Every mode trains the same config (zoo/connect4/alphazero_config.py's network, in float32 at replay ratio 0.1 as
when docs/benchmarks.md's figures were measured) for the same number of env steps from scratch, as
`python -m lzlite.entry` does, with smaller collects
(``--games`` games per collect in every mode; the rate limiter's least band is one such collect's learner steps) and
no evaluation until the final one. Printed per mode: env steps/s and learner steps/s (wall, start to end, the
actors' start-up included), their ratios to the synchronous loop, the achieved replay ratio, the mean / max
policy lag (learner steps), the learner's idle fraction (``idle``: of the whole run; ``idle*``: from the moment its
buffer first held a batch, the actors' start-up left out) and where the actors spend their time. Modes ending in
``e`` (``0e``, ``1e``) collect with the self-play engine (``engine_collector``, inference cache on) instead of the
lock-step collector: the engine in the synchronous loop, and in the actor.

The flood: ``--flood-actors`` processes PUSH the same valid Connect Four episode as fast as they can at one
learner receiver, whose consumer moves every episode into a replay buffer as the learner loop does; printed:
bytes per episode and the episodes/s that reach the buffer (the learner's maximum ingest rate).
"""
from __future__ import annotations

import argparse
import os
import queue
import re
import subprocess
import sys
import tempfile
import time

import zmq

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, REPO)

from lzlite.cluster import wire  # noqa: E402
from lzlite.cluster.learner import Receiver, episode_spec  # noqa: E402
from lzlite.config import compile_config, load_config_file, save_config  # noqa: E402
from lzlite.worker.run import build_components  # noqa: E402

CONFIG = os.path.join(REPO, "zoo", "connect4", "alphazero_config.py")
ENGINE_CACHE = 1 << 16  # positions the engine's inference cache holds in the 'e' modes


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1] if s.getsockname()[1] < 65000 else _free_port()


def _bench_config(tmp: str, games: int, port: int, engine: bool = False) -> str:
    main, create = load_config_file(CONFIG)
    # the figures in docs/benchmarks.md: float32 and replay ratio 0.1 (the recipe before it took bfloat16 and 0.06)
    main["policy"].update(learner_dtype="float32", search_dtype="float32", channels_last=False, replay_ratio=0.1)
    if engine:  # the self-play engine with its inference cache, in the loop's collector or the actors'
        create["collector"] = dict(type="engine_collector")
        main["policy"].update(engine_infer_cache=ENGINE_CACHE, engine_batch_size=min(256, games))
    else:
        create["collector"] = dict(type="episode_collector")
    # the rate limiter's least band: one collect's learner steps (games x ~30 Connect Four moves x replay_ratio), so
    # the ratio is held that closely over a short run while an actor's burst of episodes does not pause the others
    slack = max(1, round(games * 30 * main["policy"]["replay_ratio"]))
    main["policy"].update(collector_env_num=games, n_episode=games, eval_freq=10**7, eval_episodes=2,
                          eval_bots=["random"], eval_optimal_move_rate=False, save_ckpt_freq=10**7,
                          cluster_port=port, rate_limit_slack=slack)
    cfg = compile_config(main, create, seed=0)
    path = os.path.join(tmp, "bench_config_engine.py" if engine else "bench_config.py")
    save_config(cfg, path)
    return path


def _run(cfg_path: str, env_steps: int, actors: int, run_dir: str) -> dict:
    cmd = [sys.executable, "-m", "lzlite.entry", "--cfg", cfg_path, "--max-env-step", str(env_steps), "--run-dir",
           run_dir, "--force", "--actors", str(actors)]
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in (REPO, os.environ.get("PYTHONPATH", "")) if p))
    t0 = time.perf_counter()
    out = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=REPO)
    wall = time.perf_counter() - t0
    if out.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed:\n{out.stderr[-3000:]}")
    s = {m.group(1): float(m.group(2)) for m in re.finditer(r"^\s+(\w[\w/]*)\s+(-?[\d.e+-]+)\s*$", out.stdout, re.M)}
    seconds = s["wall_minutes"] * 60.0
    s["learner_steps_per_s"] = s["train_iter"] / seconds
    s["env_steps_per_s"] = s["env_steps"] / seconds
    s["process_wall_s"] = wall
    return s


# a flooder is a bare process (zmq only: it starts in a moment) pushing one frame as fast as the learner takes it
_FLOODER = """
import sys, time, zmq
address, path, seconds = sys.argv[1], sys.argv[2], float(sys.argv[3])
frame = open(path, "rb").read()
ctx = zmq.Context()
push = ctx.socket(zmq.PUSH)
push.setsockopt(zmq.SNDHWM, 64)
push.setsockopt(zmq.LINGER, 0)
push.connect(address)
end = time.monotonic() + seconds
while time.monotonic() < end:
    try:
        push.send(frame, zmq.NOBLOCK)
    except zmq.Again:
        time.sleep(0.0005)
"""


def flood(cfg_path: str, actors: int, seconds: float) -> dict:
    main, create = load_config_file(cfg_path)
    main["policy"].update(collector_env_num=4, n_episode=4)
    cfg = compile_config(main, create, seed=0)
    parts = build_components(cfg)
    segs, _ = parts["collector"].collect()
    seg = max(segs, key=len)
    spec = episode_spec(parts, cfg.policy)
    frame = wire.encode_episode(seg, 0, 1, 0, 0, 0)
    ctx = zmq.Context()
    port = _free_port()
    receiver = Receiver(ctx, f"tcp://127.0.0.1:{port}", spec, int(cfg.policy.ingest_queue_size),
                        int(cfg.policy.socket_hwm))
    receiver.start()
    frame_path = os.path.join(os.path.dirname(cfg_path), "episode.bin")
    with open(frame_path, "wb") as fh:
        fh.write(frame)
    procs = [subprocess.Popen([sys.executable, "-c", _FLOODER, f"tcp://127.0.0.1:{port}", frame_path, str(seconds)])
             for _ in range(actors)]
    buffer, pushed = parts["buffer"], 0
    while receiver.episodes.empty():  # the flooders' start-up
        time.sleep(0.01)
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < seconds - 1.0:
        try:
            s, info, _ = receiver.episodes.get(timeout=0.1)
        except queue.Empty:
            continue
        buffer.push_segments([s])
        pushed += 1
    elapsed = time.perf_counter() - t0
    for p in procs:
        p.wait()
    receiver.stopping.set()
    receiver.join(5)
    ctx.term()
    return dict(bytes_per_episode=len(frame), moves_per_episode=len(seg), ingest_episodes_per_s=pushed / elapsed,
                ingest_env_steps_per_s=pushed * len(seg) / elapsed, drops=sum(receiver.drop_counts().values()))


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--env-steps", type=int, default=6000, help="env steps each mode trains for")
    p.add_argument("--games", type=int, default=32, help="games per collect (every mode)")
    p.add_argument("--modes", default="0,1,2,0e,1e",
                   help="actor counts to run (0: the synchronous loop); a trailing e collects with the self-play "
                        "engine and its inference cache instead of the lock-step collector")
    p.add_argument("--flood-actors", type=int, default=2)
    p.add_argument("--flood-s", type=float, default=15.0)
    args = p.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        port = _free_port()
        cfg_paths = {False: _bench_config(tmp, args.games, port), True: _bench_config(tmp, args.games, port, True)}
        rows = {}
        for mode in args.modes.split(","):
            actors, engine = int(mode.rstrip("e")), mode.endswith("e")
            rows[mode] = _run(cfg_paths[engine], args.env_steps, actors, os.path.join(tmp, f"run{mode}"))
            print(f"done: {mode}: {rows[mode]}", flush=True)
        base = rows.get("0")
        nan = float("nan")
        print(f"\nConnect Four AlphaZero (default net), {args.env_steps} env steps per mode, {args.games} games per "
              f"collect, {os.cpu_count()} CPUs")
        print(f"{'mode':<25}{'env st/s':>10}{'x sync':>8}{'learn st/s':>11}{'x sync':>8}{'ratio':>8}{'lag mean':>9}"
              f"{'lag max':>8}{'idle':>7}{'idle*':>7}{'act play':>9}{'act pause':>10}{'act send':>9}")
        for mode, s in rows.items():
            actors = int(mode.rstrip("e"))
            name = "synchronous" if actors == 0 else f"learner+{actors} actor" + ("s" if actors > 1 else "")
            name += ", engine" if mode.endswith("e") else ""
            ratio = s["train_iter"] / max(s["env_steps"], 1)
            rel = (lambda k: s[k] / base[k]) if base else (lambda k: float("nan"))
            print(f"{name:<25}{s['env_steps_per_s']:>10.1f}{rel('env_steps_per_s'):>8.2f}"
                  f"{s['learner_steps_per_s']:>11.2f}{rel('learner_steps_per_s'):>8.2f}{ratio:>8.3f}"
                  f"{s.get('policy_lag_mean', 0):>9.1f}{s.get('policy_lag_max', 0):>8.0f}"
                  f"{s.get('learner_idle_fraction', nan):>7.2f}"
                  f"{s.get('learner_idle_fraction_after_first_batch', nan):>7.2f}{s.get('actor_play_fraction', nan):>9.2f}"
                  f"{s.get('actor_paused_fraction', nan):>10.2f}{s.get('actor_send_wait_fraction', nan):>9.2f}")
        if args.flood_actors:
            f = flood(cfg_paths[False], args.flood_actors, args.flood_s)
            print(f"\nflood: {args.flood_actors} local actors pushing one {f['moves_per_episode']}-move episode: "
                  f"{f['bytes_per_episode']} bytes per episode; the learner ingests {f['ingest_episodes_per_s']:.0f} "
                  f"episodes/s ({f['ingest_env_steps_per_s']:.0f} env steps/s) into its buffer; drops {f['drops']}")


if __name__ == "__main__":
    main()
