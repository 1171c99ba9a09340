// A board for the zoo's games, drawn from the seam's cells (row-major, top row first, -1 empty, 0 / 1 a
// stone of player 0 / 1). Over it, optionally, the search's numbers for one decision: visits (the cell's
// shade and its big number) and Q (small, from the view of the player to move) per legal action, with the
// chosen action outlined. Cell games (tic-tac-toe, gomoku) number actions row * cols + col; drop games
// (Connect Four) number them by column, so their numbers sit in a row above the board.

export interface SearchOverlay {
  legal: readonly number[];
  visits: readonly number[];
  q: readonly number[];
}

export interface BoardProps {
  game: string;
  rows: number;
  cols: number;
  cells: readonly number[];
  overlay?: SearchOverlay | null;
  /** The action to outline (the move chosen at this decision, or the last move played). */
  chosen?: number | null;
  /** When given, empty cells (or columns) are buttons that call it with their action. */
  onAction?: (action: number) => void;
}

/** Games whose actions are columns (a stone drops to the lowest empty cell). */
const DROP_GAMES = new Set(["connect4"]);

export const isDropGame = (game: string): boolean => DROP_GAMES.has(game);

/** Human name of an action: "b3" style for cells (row 1 at the bottom), "column 4" for drop games. */
export function actionName(game: string, cols: number, rows: number, action: number): string {
  if (isDropGame(game)) return `column ${action + 1}`;
  const r = Math.floor(action / cols);
  const c = action % cols;
  return `${String.fromCharCode(97 + c)}${rows - r}`;
}

/** What a player is called in a game: X / O, red / yellow, black / white. */
export function sideName(game: string, player: number): string {
  const names: Record<string, [string, string]> = { tictactoe: ["X", "O"], connect4: ["red", "yellow"], gomoku: ["black", "white"] };
  return names[game]?.[player] ?? `player ${player}`;
}

// A blue layer over the cell's own colour, as strong as the action's share of the visits.
const shade = (alpha: number) => {
  const c = `rgba(37, 99, 235, ${alpha.toFixed(3)})`;
  return `linear-gradient(${c}, ${c})`;
};

function stoneLabel(game: string, v: number): string {
  if (game === "tictactoe") return v === 0 ? "X" : "O";
  return "";
}

const fmtQ = (q: number) => (q >= 0 ? "+" : "") + q.toFixed(2);

export function Board({ game, rows, cols, cells, overlay, chosen, onAction }: BoardProps) {
  const drop = isDropGame(game);
  const stats = new Map<number, { visits: number; q: number }>();
  let maxVisits = 0;
  if (overlay) {
    overlay.legal.forEach((a, i) => {
      stats.set(a, { visits: overlay.visits[i], q: overlay.q[i] });
      maxVisits = Math.max(maxVisits, overlay.visits[i]);
    });
  }

  const searchCell = (action: number, key: string, extraClass = "") => {
    const s = stats.get(action);
    const share = s && maxVisits > 0 ? s.visits / maxVisits : 0;
    return (
      <div
        key={key}
        className={`overlay ${extraClass} ${chosen === action ? "chosen" : ""}`}
        style={s ? { backgroundImage: shade(0.1 + 0.6 * share) } : undefined}
        data-testid={`search-${action}`}
        data-visits={s?.visits}
        data-q={s?.q}
      >
        {s && (
          <>
            <span className="visits">{Math.round(s.visits)}</span>
            <span className="q">{fmtQ(s.q)}</span>
          </>
        )}
      </div>
    );
  };

  // A drop game's move without its search row: outline the stone it left, the column's top one.
  let droppedAt = -1;
  if (drop && !overlay && chosen != null && chosen >= 0 && chosen < cols) {
    for (let r = 0; r < rows && droppedAt < 0; r++) if (cells[r * cols + chosen] !== -1) droppedAt = r * cols + chosen;
  }

  const items = [];
  if (drop && overlay) {
    for (let c = 0; c < cols; c++) items.push(searchCell(c, `h${c}`, "column-head"));
  }
  for (let r = 0; r < rows; r++) {
    for (let c = 0; c < cols; c++) {
      const i = r * cols + c;
      const v = cells[i];
      const action = drop ? c : i;
      const name = actionName(game, cols, rows, action);
      const stone = v === 0 || v === 1 ? <span className={`stone p${v}`}>{stoneLabel(game, v)}</span> : null;
      const inner = stone ?? (!drop && overlay && stats.has(action) ? searchCell(action, `o${i}`) : null);
      const outlined = (!drop && chosen === action && stone !== null) || i === droppedAt;
      const cls = `cell ${outlined ? "chosen" : ""}`;
      if (onAction && (drop || v === -1)) {
        items.push(
          <button key={i} type="button" className={`${cls} clickable`} data-testid={`cell-${i}`} data-cell={v} aria-label={`play ${name}`} onClick={() => onAction(action)}>
            {inner}
          </button>,
        );
      } else {
        items.push(
          <div key={i} className={cls} data-testid={`cell-${i}`} data-cell={v} aria-label={v === -1 ? `${name} empty` : `${name} player ${v}`}>
            {inner}
          </div>,
        );
      }
    }
  }
  return (
    <div
      className={`board game-${game}`}
      style={{ gridTemplateColumns: `repeat(${cols}, 1fr)`, maxWidth: `${Math.max(240, Math.min(cols * 56, 520))}px` }}
      data-testid="board"
    >
      {items}
    </div>
  );
}
