// The board registry: one module per board, none listed here. Which games there are
// and which module draws each comes from the arena's game registry (protocol.games),
// served as ../games.js; a board module exports one game object per game it draws.
//
// Every game object has: name, title, initialPosition, applyMove(position, move)
// -> position, sideToMove(position) -> 0|1, winningCells(position), formatMove(move),
// createBoard(container, {mini}) -> {element, update({position, lastMove, stats, animate})},
// and optionally moveOfCell(cell) -> move, for a board whose cells are not its moves.

import { GAMES } from "../games.js";

/** The game object called `name` among a board module's exports, if there is one. */
function exported(module, name) {
  return Object.values(module).find((value) => value && value.name === name);
}

// A board module that fails to load costs only its own games: the rest still draw.
const loaded = await Promise.allSettled(GAMES.map((spec) => import(`./${spec.board}.js`)));
const REGISTRY = new Map();
GAMES.forEach((spec, i) => {
  const game = loaded[i].status === "fulfilled" ? exported(loaded[i].value, spec.name) : null;
  if (game) REGISTRY.set(spec.name, game);
  else console.warn(`no board for ${spec.name} in boards/${spec.board}.js`);
});

/** Names of the games the viewer can draw, in display order. */
export const GAME_NAMES = [...REGISTRY.keys()];

/** The game object for `name`; throws for a game the viewer does not know. */
export function gameFor(name) {
  const game = REGISTRY.get(name);
  if (!game) throw new Error(`the viewer cannot draw ${name}`);
  return game;
}

/** Every position of a game from its start, replaying `moves`: positions[k] is after k moves. */
export function positionsAfter(game, moves) {
  const positions = [game.initialPosition];
  for (const move of moves) positions.push(game.applyMove(positions.at(-1), move));
  return positions;
}
