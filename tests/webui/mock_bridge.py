"""A stand-in for `python -m lzlite.webui` used while developing the e2e script: the same WebSocket API with
made-up data (one run, a curve point and a random tic-tac-toe move every 0.3 s, a random-move agent)."""
from __future__ import annotations

import asyncio
import json
import random
import sys
import time

import uvicorn
from starlette.applications import Starlette
from starlette.routing import Mount, WebSocketRoute
from starlette.staticfiles import StaticFiles
from starlette.websockets import WebSocket, WebSocketDisconnect

RUN = "mock-1"
LINES = [(0, 1, 2), (3, 4, 5), (6, 7, 8), (0, 3, 6), (1, 4, 7), (2, 5, 8), (0, 4, 8), (2, 4, 6)]


def winner(cells):
    for a, b, c in LINES:
        if cells[a] != -1 and cells[a] == cells[b] == cells[c]:
            return cells[a]
    return -1


STATE = dict(step=0, games={}, plays={}, n=0)


def status():
    return dict(run=RUN, exp_name="mock", algorithm="alphazero", game="tictactoe", role="learner",
                env_steps=STATE["step"], train_iter=STATE["step"] // 4, losses={"total_loss": 1.0},
                win_rates={"rule": 0.5}, env_steps_per_s=123.0, buffer_size=STATE["step"], weights_version=1,
                actors_alive=0, policy_lag=0, updated_at=time.time())


async def ws_endpoint(ws: WebSocket):
    await ws.accept()
    subs = set()
    rng = random.Random(0)
    cells = [-1] * 9
    ply = 0
    gid = "g0"

    async def ticker():
        nonlocal cells, ply, gid
        while True:
            await asyncio.sleep(0.3)
            STATE["step"] += 1
            if RUN not in subs:
                continue
            s = STATE["step"]
            await ws.send_text(json.dumps(dict(type="curve", run=RUN, points=[
                dict(tag="learn/total_loss", step=s, value=2.0 / (1 + s * 0.05), t=time.time()),
                dict(tag="collect/env_steps_per_s", step=s, value=100 + rng.random() * 10, t=time.time())])))
            legal = [a for a in range(9) if cells[a] == -1]
            if winner(cells) != -1 or not legal:
                cells, ply, gid = [-1] * 9, 0, f"g{s}"
                legal = list(range(9))
            visits = [rng.randint(0, 20) for _ in legal]
            action = legal[max(range(len(legal)), key=lambda i: visits[i])]
            ev = dict(game_id=gid, game="tictactoe", ply=ply, rows=3, cols=3, cells=list(cells), to_play=ply % 2,
                      action=action, legal=legal, visits=visits, q=[rng.uniform(-1, 1) for _ in legal],
                      prior=[1 / len(legal)] * len(legal), root_value=0.1, done=False, winner=-1)
            await ws.send_text(json.dumps(dict(type="move", run=RUN, event=ev)))
            c4 = [-1] * 42
            for k, col in enumerate([3, 3, 2, 4, 4, 3]):
                r = max(r for r in range(6) if c4[r * 7 + col] == -1)
                c4[r * 7 + col] = k % 2
            await ws.send_text(json.dumps(dict(type="move", run=RUN, event=dict(
                game_id="c4", game="connect4", ply=6, rows=6, cols=7, cells=c4, to_play=0, action=2,
                legal=list(range(7)), visits=[1, 3, 30, 12, 8, 2, 1], q=[-0.5, -0.2, 0.4, 0.1, 0.0, -0.3, -0.6],
                prior=[1 / 7] * 7, root_value=0.3, done=False, winner=-1))))
            gm = [-1] * 81
            for k, a in enumerate([40, 41, 31, 49, 22]):
                gm[a] = k % 2
            gl = [a for a in range(81) if gm[a] == -1]
            await ws.send_text(json.dumps(dict(type="move", run=RUN, event=dict(
                game_id="gm", game="gomoku", ply=5, rows=9, cols=9, cells=gm, to_play=1, action=13,
                legal=gl, visits=[rng.randint(0, 3) + (40 if a == 13 else 0) for a in gl],
                q=[rng.uniform(-1, 1) for a in gl], prior=[1 / len(gl)] * len(gl), root_value=-0.2,
                done=False, winner=-1))))
            await ws.send_text(json.dumps(dict(type="status", run=RUN, status=status())))
            cells[action] = ply % 2
            ply += 1

    def play_frame(g):
        legal = [a for a in range(9) if g["cells"][a] == -1] if not g["done"] else []
        return dict(type="play", game=g["id"], game_name="tictactoe", rows=3, cols=3, cells=g["cells"],
                    to_play=g["to_play"], legal=legal, agent_side=g["agent_side"], last_move=g["last"],
                    analysis=g["analysis"], done=g["done"], winner=g["winner"])

    def step(g, a):
        g["cells"][a] = g["to_play"]
        g["last"] = a
        g["to_play"] ^= 1
        g["winner"] = winner(g["cells"])
        g["done"] = g["winner"] != -1 or all(c != -1 for c in g["cells"])

    def agent(g):
        legal = [a for a in range(9) if g["cells"][a] == -1]
        a = rng.choice(legal)
        g["analysis"] = dict(legal=legal, visits=[10 if x == a else 1 for x in legal], q=[0.0] * len(legal),
                             prior=[1 / len(legal)] * len(legal), root_value=0.0)
        step(g, a)

    task = asyncio.create_task(ticker())
    try:
        while True:
            text = await ws.receive_text()
            try:
                msg = json.loads(text)
                op = msg["op"]
            except (ValueError, KeyError, TypeError):
                await ws.send_text(json.dumps(dict(type="error", message="not a JSON object with an op", op=None)))
                continue
            if op == "runs":
                await ws.send_text(json.dumps(dict(type="runs", runs=[status()])))
            elif op == "subscribe":
                subs.add(msg["run"])
                await ws.send_text(json.dumps(dict(type="status", run=RUN, status=status())))
            elif op == "unsubscribe":
                subs.discard(msg["run"])
            elif op == "play_new":
                STATE["n"] += 1
                g = dict(id=f"p{STATE['n']}", cells=[-1] * 9, to_play=0, agent_side=msg["agent_side"], last=None,
                         analysis=None, done=False, winner=-1)
                STATE["plays"][g["id"]] = g
                if g["agent_side"] == 0:
                    agent(g)
                await ws.send_text(json.dumps(play_frame(g)))
            elif op == "play_move":
                g = STATE["plays"].get(msg["game"])
                a = msg["action"]
                if g is None or g["done"] or not (0 <= a < 9) or g["cells"][a] != -1:
                    await ws.send_text(json.dumps(dict(type="error", message=f"illegal move {a}", op="play_move")))
                    continue
                step(g, a)
                if not g["done"]:
                    await asyncio.sleep(0.2)
                    agent(g)
                await ws.send_text(json.dumps(play_frame(g)))
            else:
                await ws.send_text(json.dumps(dict(type="error", message=f"unknown op {op!r}", op=op)))
    except WebSocketDisconnect:
        pass
    finally:
        task.cancel()


app = Starlette(routes=[WebSocketRoute("/ws", ws_endpoint),
                        Mount("/", StaticFiles(directory=sys.argv[2], html=True))])

if __name__ == "__main__":
    uvicorn.run(app, host="127.0.0.1", port=int(sys.argv[1]), log_level="warning")
