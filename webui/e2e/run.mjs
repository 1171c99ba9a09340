// The browser half of tests/webui/test_e2e.py: drives the built UI, served by the bridge, in headless
// Chromium (Debian's, through playwright-core) and writes what it saw as JSON.
//
//   node e2e/run.mjs '{"url": "http://127.0.0.1:8000/", "run": "<run id>", "shots": "../docs/img", "out": "e2e.json"}'
//
// It checks that the run is listed, that a curve gains points and a live board changes on the run page, and
// plays one full game of tic-tac-toe against the agent (clicking the first empty cell each turn); it takes a
// screenshot of each page (desktop, and the run and play pages at phone width, 375 px) and measures the
// page's width there. Each spectated decision's arrival on the page (game id, ply, the wall clock in ms) is
// recorded by a MutationObserver, for the latency figure that test_e2e.py computes against Redis.

import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { chromium } from "playwright-core";

const cfg = JSON.parse(process.argv[2]);
const chromiumPath = cfg.chromium ?? "/usr/bin/chromium";
const timeout = cfg.timeout_ms ?? 60_000;
const result = { steps: [] };
const log = (msg) => {
  result.steps.push(msg);
  console.log(msg);
};

// Runs in the page before its scripts: note when each (game id, ply) first shows on a spectator board.
function watchBoards() {
  window.__lzSeen = [];
  const seen = new Set();
  const scan = () => {
    const now = Date.now();
    for (const el of document.querySelectorAll('[data-testid="spectator"]')) {
      const key = `${el.dataset.gameId}|${el.dataset.ply}`;
      if (!seen.has(key)) {
        seen.add(key);
        window.__lzSeen.push([el.dataset.gameId, Number(el.dataset.ply), now]);
      }
    }
  };
  new MutationObserver(scan).observe(document, { subtree: true, childList: true, attributes: true, attributeFilter: ["data-ply"] });
}

const chartPoints = (page) =>
  page.evaluate(() => [...document.querySelectorAll("figure.chart")].reduce((n, f) => n + Number(f.dataset.points ?? 0), 0));

const boardKeys = (page) =>
  page.evaluate(() => [...document.querySelectorAll('[data-testid="spectator"]')].map((el) => `${el.dataset.gameId}|${el.dataset.ply}`).join(","));

async function pageWidth(page) {
  return page.evaluate(() => document.documentElement.scrollWidth);
}

async function playOneGame(page) {
  await page.getByText("I move first").click();
  const moves = [];
  for (let turn = 0; turn < 9; turn++) {
    // The page's answer: our turn (an empty cell is a button) or the end.
    await page.waitForFunction(
      () => {
        const p = document.querySelector('[data-testid="play"]');
        return p && (p.dataset.done === "true" || document.querySelector('[data-testid="play-line"]')?.textContent?.startsWith("Your move"));
      },
      null,
      { timeout },
    );
    const done = await page.getAttribute('[data-testid="play"]', "data-done");
    if (done === "true") break;
    const cell = page.locator('[data-testid="play"] button.cell').first();
    const id = await cell.getAttribute("data-testid");
    moves.push(Number(id.slice("cell-".length)));
    await cell.click();
    // Wait until the bridge has answered this move (the clicked cell holds a stone).
    await page.waitForFunction((sel) => document.querySelector(sel)?.getAttribute("data-cell") !== "-1", `[data-testid="play"] [data-testid="${id}"]`, { timeout });
  }
  await page.waitForSelector('[data-testid="play"][data-done="true"]', { timeout });
  const winner = Number(await page.getAttribute('[data-testid="play"]', "data-winner"));
  const line = await page.textContent('[data-testid="play-line"]');
  const cells = await page.evaluate(() =>
    [...document.querySelectorAll('[data-testid="play"] [data-testid^="cell-"]')].map((c) => Number(c.getAttribute("data-cell"))),
  );
  return { moves, winner, line, cells };
}

const browser = await chromium.launch({
  executablePath: chromiumPath,
  headless: true,
  args: ["--no-sandbox", "--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run"],
});
try {
  const desktop = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const page = await desktop.newPage();
  page.on("pageerror", (e) => log(`page error: ${e.message}`));
  await page.addInitScript(watchBoards);
  await page.goto(cfg.url);
  await page.waitForSelector('[data-testid="connection"][data-state="open"]', { timeout });

  // Run list.
  const card = cfg.run ? `[data-run="${cfg.run}"]` : "[data-run]";
  await page.waitForSelector(card, { timeout });
  const run = cfg.run ?? (await page.getAttribute(card, "data-run"));
  result.run = run;
  log(`run listed: ${run}`);
  await page.screenshot({ path: join(cfg.shots, "webui_runs.png") });

  // Run page: the curve gains points, a live board changes.
  result.watch_start_ms = Date.now();
  await page.click(`${card} a:has-text("Watch")`);
  await page.waitForSelector("figure.chart[data-points]", { timeout });
  await page.waitForSelector('[data-testid="spectator"]', { timeout });
  result.points_first = await chartPoints(page);
  const boardsFirst = await boardKeys(page);
  await page.waitForFunction((n) => [...document.querySelectorAll("figure.chart")].reduce((s, f) => s + Number(f.dataset.points ?? 0), 0) > n, result.points_first, { timeout });
  result.points_later = await chartPoints(page);
  log(`curve points: ${result.points_first} -> ${result.points_later}`);
  await page.waitForFunction(
    (first) => [...document.querySelectorAll('[data-testid="spectator"]')].map((el) => `${el.dataset.gameId}|${el.dataset.ply}`).join(",") !== first,
    boardsFirst,
    { timeout },
  );
  result.boards_first = boardsFirst;
  result.boards_later = await boardKeys(page);
  log(`boards: ${result.boards_first} -> ${result.boards_later}`);
  result.overlay_cells = await page.locator('[data-testid="spectator"] [data-visits]').count();
  result.status_text = await page.textContent('[data-testid="status"]');
  // Let the boards run a while longer, for the latency sample.
  await page.waitForTimeout(cfg.watch_ms ?? 5000);
  // The picture shows games under way where it can (between collects every board holds a finished game).
  await page.waitForSelector('[data-testid="spectator"][data-done="false"]', { timeout: 20_000 }).catch(() => {});
  await page.screenshot({ path: join(cfg.shots, "webui_run.png"), fullPage: true });
  result.seen = await page.evaluate(() => window.__lzSeen);
  log(`decisions seen on boards: ${result.seen.length}`);

  // Play page: one full game.
  await page.goto(`${cfg.url}#/play/${encodeURIComponent(run)}`);
  await page.waitForSelector('[data-testid="connection"][data-state="open"]', { timeout });
  result.game = await playOneGame(page);
  log(`game over: ${result.game.line} (our moves ${result.game.moves.join(" ")})`);
  await page.screenshot({ path: join(cfg.shots, "webui_play.png"), fullPage: true });

  // Phone width: the run and play pages fit 375 px.
  const phone = await browser.newContext({ viewport: { width: 375, height: 812 }, deviceScaleFactor: 1, isMobile: true, hasTouch: true });
  const small = await phone.newPage();
  await small.goto(`${cfg.url}#/run/${encodeURIComponent(run)}`);
  await small.waitForSelector('[data-testid="spectator"]', { timeout });
  await small.waitForSelector("figure.chart[data-points]", { timeout });
  await small.waitForSelector('[data-testid="spectator"][data-done="false"]', { timeout: 20_000 }).catch(() => {});
  result.phone_run_width = await pageWidth(small);
  await small.screenshot({ path: join(cfg.shots, "webui_run_phone.png"), fullPage: true });
  await small.goto(`${cfg.url}#/play/${encodeURIComponent(run)}`);
  await small.getByText("The agent moves first").click();
  await small.waitForSelector('[data-testid="play"]', { timeout });
  result.phone_play_width = await pageWidth(small);
  await small.screenshot({ path: join(cfg.shots, "webui_play_phone.png"), fullPage: true });
  log(`page width at 375 px: run ${result.phone_run_width}, play ${result.phone_play_width}`);
  result.ok = true;
} catch (e) {
  result.ok = false;
  result.error = String(e?.stack ?? e);
  console.error(result.error);
  process.exitCode = 1;
} finally {
  writeFileSync(cfg.out, JSON.stringify(result, null, 1));
  await browser.close();
}
