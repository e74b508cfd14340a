// A finished game step by step, both hands open: from the server (a game of yours) or a record file.
"use strict";

let frames = [], record = null, at = 0;
const $ = (id) => document.getElementById(id);

function names() {
  return record.players.map((p, i) => p.name || t("replay.player", { n: i }));
}

function eventText(e) {
  const who = names()[e.player];
  if (e.kind === "play" || e.kind === "draw") {
    const took = e.captured.filter((c) => c !== e.card).map(cardName);
    return t("event." + e.kind + (took.length ? "_took" : ""), { who, card: cardName(e.card), took: took.join(", ") });
  }
  return t("event." + e.kind, { who });
}

function row(label, cards, cls) {
  return h("div", { class: "replay-row " + (cls || "") }, h("div", { class: "row-label" }, label),
    h("div", { class: "row-cards" }, ...cards.map((c) => cardEl(c, { small: cls === "pile" }))));
}

function pileRow(p, v) {
  const all = [].concat(...KIND_KEYS.map((k) => v.piles[p][k]));
  const yaku = v.yaku[p].map(yakuLabel).join(", ");
  return row(t("replay.captures", { name: names()[p] }) + (yaku ? " — " + yaku : ""), all, "pile");
}

function render() {
  const f = frames[at], v = f.view;
  const n = names();
  $("step-label").textContent = t("replay.step_of", { n: at, total: frames.length - 1 });
  $("scrub").value = String(at);
  const parts = [t("replay.hand_header", { n: v.hand_number, month: t("month." + v.month), a: n[0], sa: v.scores[0],
    b: n[1], sb: v.scores[1] })];
  for (const e of f.events) parts.push(eventText(e));
  for (const r of f.results) {
    parts.push(r.winner === null ? t("replay.no_winner")
      : t("replay.hand_won", { name: n[r.winner], points: r.points, yaku: r.yaku.map(yakuLabel).join(", ") }));
  }
  $("replay-text").textContent = parts.join(" · ");
  fill($("replay-board"), 
    row(t("replay.hand_of", { name: n[1] }), v.hands[1]),
    pileRow(1, v),
    row(t("table.table") + " · " + tn("replay.stock", v.stock_count, { n: v.stock_count }), v.table, "field"),
    pileRow(0, v),
    row(t("replay.hand_of", { name: n[0] }), v.hands[0]),
  );
}

function go(i) { at = Math.max(0, Math.min(frames.length - 1, i)); render(); }

function start(data) {
  frames = data.frames;
  record = data.record;
  $("replay-load").hidden = true;
  $("replay-view").hidden = false;
  $("scrub").max = String(frames.length - 1);
  go(0);
}

document.addEventListener("DOMContentLoaded", async () => {
  $("first").addEventListener("click", () => go(0));
  $("prev").addEventListener("click", () => go(at - 1));
  $("next").addEventListener("click", () => go(at + 1));
  $("last").addEventListener("click", () => go(frames.length - 1));
  $("scrub").addEventListener("input", () => go(Number($("scrub").value)));
  document.addEventListener("keydown", (ev) => {
    if (!frames.length) return;
    if (ev.key === "ArrowRight") go(at + 1);
    else if (ev.key === "ArrowLeft") go(at - 1);
    else if (ev.key === "Home") go(0);
    else if (ev.key === "End") go(frames.length - 1);
  });
  $("record-file").addEventListener("change", async () => {
    const file = $("record-file").files[0];
    if (!file) return;
    try {
      const res = await fetch("/api/replay", { method: "POST", body: await file.text(),
        headers: { "Content-Type": "application/json" } });
      const data = await res.json();
      if (!res.ok) throw Object.assign(new Error(data.message), { code: data.error });
      start(data);
    } catch (e) {
      $("form-error").textContent = errorText(e.code, e.message) + (e.message ? " — " + e.message : "");
    }
  });
  if (K.game_id) {
    try {
      start(await api("GET", `/api/games/${K.game_id}/replay?token=${encodeURIComponent(K.token || "")}`));
    } catch (e) {
      $("form-error").textContent = errorText(e.code, e.message);
    }
  }
});
