// The board registry: one module per game, one line here (like protocol/games).
//
// Every game object has: name, title, initialPosition, applyMove(position, move)
// -> position, sideToMove(position) -> 0|1, winningCells(position), formatMove(move),
// createBoard(container, {mini}) -> {element, update({position, lastMove, stats, animate})}.

import { connect4 } from "./connect4.js";
import { othello } from "./othello.js";
import { tictactoe } from "./tictactoe.js";
import { uttt, utttQuick } from "./uttt.js";

const REGISTRY = new Map([connect4, tictactoe, uttt, utttQuick, othello].map((game) => [game.name, game]));

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
