#!/usr/bin/env node
// A complete Koi-Koi bot in JavaScript (Node.js, no packages): a greedy player speaking version 2 of
// the bot protocol (docs/bot-protocol.md), to show that a bot can be written in any language.
//
// Run it in the arena:
//     koikoi arena --rules nintendo --games 100 --seed 1 --players "cmd:node examples/greedy_bot.js,easy"
//
// Its policy: take the most valuable capture (brights 20, animals 10, ribbons 5, plain cards 1, the
// card played or drawn counting too); with nothing to take, give the table the least valuable card;
// declare a dealt hand bonus; stop as soon as a yaku scores. Equal choices go to the card dealt
// earliest, which version 2's positions tell (the hand itself comes sorted).
"use strict";

const readline = require("readline");

const BRIGHTS = new Set(["pine-crane", "cherry-curtain", "pampas-moon", "willow-rainman", "paulownia-phoenix"]);
const ANIMALS = new Set([
  "plum-warbler", "wisteria-cuckoo", "iris-bridge", "peony-butterflies", "clover-boar",
  "pampas-geese", "chrysanthemum-sake", "maple-deer", "willow-swallow",
]);

function value(card) {
  if (BRIGHTS.has(card)) return 20;
  if (ANIMALS.has(card)) return 10;
  if (/-(poetry|ribbon|blue)$/.test(card)) return 5;
  return 1;
}

// Card names start with their month: pine-crane, pine-plain-1, ...
function month(card) {
  return card.split("-")[0];
}

function score(action, observation) {
  const words = action.name.split(" ");
  if (action.name === "declare") return 1000;
  if (action.name === "stop") return 1; // the points now rather than the risk of koi-koi
  if (action.name === "koikoi") return 0;
  if (words[0] === "take") return value(words[1]); // the drawn card matched two: take the better one
  // "play CARD" or "play CARD take CARD"
  const card = words[1];
  const taken = words.length === 4 ? [words[3]] : observation.table.filter((t) => month(t) === month(card));
  const gain = taken.length ? taken.reduce((sum, t) => sum + value(t), value(card)) : -value(card);
  // Less than one point apart, so only a tie is broken: the card dealt earliest goes first.
  return gain - observation.positions.hand.indexOf(card) / 100;
}

function choose(observation) {
  if (typeof observation.rules !== "object" || !Array.isArray(observation.positions.hand)) {
    throw new Error("this bot needs protocol version 2 (positions, and the rule set as rules)");
  }
  let best = null;
  let bestScore = -Infinity;
  for (const action of observation.legal_actions) {
    const s = score(action, observation);
    if (s > bestScore) {
      best = action;
      bestScore = s;
    }
  }
  return best.id;
}

function answer(reply) {
  // No flush is needed: on Linux a write to a pipe is done when this returns, elsewhere Node's event
  // loop sends it at once; and the bot never calls process.exit, which could drop what is not sent yet.
  process.stdout.write(JSON.stringify(reply) + "\n");
}

const input = readline.createInterface({ input: process.stdin, terminal: false });
input.on("line", (line) => {
  if (!line.trim()) return;
  const message = JSON.parse(line);
  if (message.type === "hello") {
    answer({ name: "greedy_bot.js", author: "the koikoi developers", version: 2 });
  } else if (message.type === "choose") {
    answer({ action: choose(message.observation) });
  } else if (message.type === "quit") {
    input.close();
  }
  // hand_end, match_end and any newer notice need no answer
});
