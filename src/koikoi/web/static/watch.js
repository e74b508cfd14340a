// A spectator's page (/watch/<game id>): what table.js asks of it where a player's page speaks to "you".
// Both players are named; nothing is said of anyone's hand but its size, and there is nothing to act on.
"use strict";

function watchName(p) {
  const player = state.players[p];
  return player.level ? t("level." + player.level) : player.name;
}

// The status line: who is to move, or how the game stands.
function watchStatus() {
  if (state.match_over) return t("status.match_over");
  if (state.status === "waiting") return t("watch.waiting");
  if (state.status === "broken") return t("error.broken");
  return t("watch.to_move", { name: watchName(state.current_player) });
}

// The scores by name: "Ann 5 · Bob 3".
function watchScores(scores) {
  return t("watch.scores", { a: watchName(0), sa: scores[0], b: watchName(1), sb: scores[1] });
}

// The end of the match: who won, each hand's points by name, and the replay (public now that it is over).
function watchSummary() {
  const o = state.outcome || { winner: state.match_winner, scores: state.scores };
  const headline = o.winner === null || o.winner === undefined ? t("match.draw")
    : t("match.they_won", { name: watchName(o.winner) });
  const signed = (d) => (d > 0 ? "+" : "") + d;
  const rows = state.results.map((r, i) => h("tr", {},
    h("td", {}, String(i + 1)),
    h("td", {}, r.yaku.map((y) => t("yaku." + y.name)).join(", ") || "—"),
    h("td", {}, signed(r.deltas[0])),
    h("td", {}, signed(r.deltas[1]))));
  openDialog("match",
    h("h2", {}, headline),
    h("p", { class: "scores" }, watchScores(o.scores)),
    h("table", { class: "hands-table" },
      h("thead", {}, h("tr", {}, h("th", {}, "#"), h("th", {}, t("rules.yaku")), h("th", {}, watchName(0)),
        h("th", {}, watchName(1)))),
      h("tbody", {}, ...rows)),
    h("div", { class: "buttons" },
      h("a", { class: "button primary", href: `/replay/${encodeURIComponent(K.game_id)}`, id: "replay-link" }, t("match.replay")),
      h("a", { class: "button secondary", href: "/lobby" }, t("watch.back"))));
}
