// A spectator's page (/watch/<game id>): what table.js asks of it where a player's page speaks to "you".
// Both players are named; nothing is said of anyone's hand but its size, and there is nothing to act on.
// Both clocks tick as at the players' table (table.js), and the end says why the match ended.
"use strict";

function watchName(p) {
  const player = state.players[p];
  return player.level ? computerName(player.level, player.name) : player.name;
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

// Why the match ended: a player ran out of time, resigned, left (victory claimed), or it was aborted; or it
// was played out (every hand, the target score, a player's points run out).
function watchEnding() {
  const e = state.ending;
  if (e) {
    if (e.no_show !== undefined) return t("ending.no_show", { name: watchName(e.no_show) });
    const loser = e.winner === null || e.winner === undefined ? null : 1 - e.winner;
    return t("ending." + e.reason, { name: loser === null ? "" : watchName(loser) });
  }
  return state.outcome ? t("ending." + state.outcome.reason) : null;
}

// The end of the match: who won and why, each hand's points by name, and the replay (public once the
// match is over, whether played out or ended early: nothing is left to hide).
function watchSummary() {
  const o = state.outcome || { winner: state.match_winner, scores: state.scores };
  const noResult = state.ending && ["abort", "expired", "closed"].includes(state.ending.reason);
  const headline = noResult ? t("match.no_result")
    : o.winner === null || o.winner === undefined ? t("match.draw")
    : t("match.they_won", { name: watchName(o.winner) });
  const why = watchEnding();
  const signed = (d) => (d > 0 ? "+" : "") + d;
  const rows = state.results.map((r, i) => h("tr", {},
    h("td", {}, String(i + 1)),
    h("td", {}, r.yaku.map((y) => t("yaku." + y.name)).join(", ") || "—"),
    h("td", {}, signed(r.deltas[0])),
    h("td", {}, signed(r.deltas[1]))));
  openDialog("match",
    h("h2", {}, headline),
    why ? h("p", { class: "ending", id: "ending" }, why) : null,
    h("p", { class: "scores" }, watchScores(o.scores)),
    ratingLines(state.rating, watchName, [0, 1]),
    rows.length ? h("table", { class: "hands-table" },
      h("thead", {}, h("tr", {}, h("th", {}, "#"), h("th", {}, t("rules.yaku")), h("th", {}, watchName(0)),
        h("th", {}, watchName(1)))),
      h("tbody", {}, ...rows)) : null,
    h("div", { class: "buttons" },
      h("a", { class: "button primary", href: `/replay/${encodeURIComponent(K.game_id)}`, id: "replay-link" }, t("match.replay")),
      h("a", { class: "button secondary", href: "/lobby" }, t("watch.back"))));
}
