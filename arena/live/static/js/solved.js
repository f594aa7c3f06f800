// Solved values of a match's moves, as `arena analyse` stored them (GET /api/matches/<id>,
// `solved`; docs/analysis.md): for each analysed move, from the mover's side, the score
// and outcome (1 win, 0 draw, -1 loss) of the position it moved in (`*_before`) and of
// the move it played (`*_after`), null when the solver's budget ran out, and `blunder`.
//
// Scores are Pascal Pons': 22 - s when the side to move wins with its s-th stone,
// s - 22 when the opponent wins with its s-th stone, 0 for a draw. From a position
// with `stones` stones, a win scoring v > 0 comes with the side to move's
// n = 22 - v - floor(stones / 2)-th move from now (2n - 1 plies); a loss scoring
// v < 0 with the opponent's n = 22 + v - floor((stones + 1) / 2)-th move (2n plies).

const STONES_TO_WIN = 22;
const OUTCOME_WORDS = { 1: "win", 0: "draw", "-1": "loss" };

/** The analysed moves by ply. */
export function solvedByPly(rows) {
  return new Map((rows ?? []).map((row) => [row.ply, row]));
}

/** Plies until the winning move with perfect play, for a nonzero score (see above). */
export function pliesToEnd(score, stones) {
  if (score > 0) return 2 * (STONES_TO_WIN - score - Math.floor(stones / 2)) - 1;
  return 2 * (STONES_TO_WIN + score - Math.floor((stones + 1) / 2));
}

/**
 * The value of the position after `ply` moves for its side to move, {outcome, score},
 * or null when it was not analysed (or the game is over there). It is the next move's
 * value before it, else the previous move's value after it, seen from the other side.
 */
export function positionValue(solved, ply) {
  const next = solved.get(ply);
  if (next) return { outcome: next.outcome_before, score: next.score_before };
  const previous = solved.get(ply - 1);
  if (!previous) return null;
  const flip = (x) => (x === null ? null : -x);
  const value = { outcome: flip(previous.outcome_after), score: flip(previous.score_after) };
  // The last move completed a line (the opponent "loses in 0"), or filled the board.
  if (value.score !== null && value.score < 0 && pliesToEnd(value.score, ply) <= 0) return null;
  if (ply >= 42) return null;
  return value;
}

/**
 * A value in words for the side to move: {text, detail}. "win in 3" counts the side to
 * move's own moves (the winning one included), "loss in 2" the opponent's; detail gives
 * the plies. When only win/draw/loss is known, the text says just that.
 */
export function describeValue(value, stones) {
  if (value.score !== null && value.score !== 0) {
    const plies = pliesToEnd(value.score, stones);
    const moves = Math.ceil(plies / 2);
    return {
      text: `${value.score > 0 ? "win" : "loss"} in ${moves}`,
      detail: `${plies} ${plies === 1 ? "ply" : "plies"} with perfect play`,
    };
  }
  if (value.outcome === null) return { text: "unknown", detail: "not solved within the budget" };
  return {
    text: OUTCOME_WORDS[value.outcome],
    detail: value.outcome === 0 ? "with perfect play" : "the distance was not solved within the budget",
  };
}

/** A blunder's tooltip: what the move threw away, e.g. "blunder: win → draw". */
export function blunderTitle(row) {
  return `blunder: ${OUTCOME_WORDS[row.outcome_before]} → ${OUTCOME_WORDS[row.outcome_after]}`;
}
