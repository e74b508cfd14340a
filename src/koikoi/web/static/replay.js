// A finished game step by step, both hands open: from the server (a game of yours) or a record file.
"use strict";

let frames = [], record = null, at = 0;
const $ = (id) => document.getElementById(id);

function names() {
  // A computer's seat is stored under its level ("Easy"): it is shown by the computer's name ("Hana").
  return record.players.map((p, i) => (p.kind === "ai" && p.name ? computerName(p.name.toLowerCase(), p.name) : p.name)
    || t("replay.player", { n: i }));
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

function go(i) { at = Math.max(0, Math.min(frames.length - 1, i)); render(); markReviewRow(); }

// -- the game review (a finished game of the player's own: the page has its seat token) ------------------

let reviewTimer = null;
let uploaded = null;  // the text of a record opened from a file: its review is asked for with it

function reviewUrl() {
  return `/api/games/${encodeURIComponent(K.game_id)}/review?token=${encodeURIComponent(K.token || "")}`;
}

function points(x) { return (x > 0 ? "+" : "") + x.toFixed(2); }
// A value with the playouts' standard error: "+1.97 ± 0.29" (an exact one, such as a stop, has none).
function withError(text, err) {
  if (err === undefined || err === 0) return text;
  return `${text} ± ${err === null ? "?" : err.toFixed(2)}`;
}
function renderReview(doc) {
  const s = doc.summary;
  const numeric = [true, true, false, true, false, true, true, false];
  const head = ["review.col_hand", "review.col_move", "review.col_played", "review.col_value", "review.col_best",
    "review.col_value", "review.col_loss", "review.col_reason"]
    .map((k, i) => h("th", { scope: "col", class: numeric[i] ? "num" : null }, t(k)));
  const rows = doc.decisions.map((e) => {
    const same = e.best.action === e.played.action;
    const marks = e.marks.map((m) => h("span", { class: "mark" }, t(m === "koikoi" ? "review.mark_koikoi" : "review.mark_mistake")));
    if (e.verdict === "equal") marks.push(h("span", { class: "mark equal" }, t("review.mark_equal")));
    const why = e.reason_parts.map(reasonPart).filter((x) => x).join("; ");
    return h("tr", { class: e.marks.length ? "mistake" : "", "data-step": e.step },
      h("td", { class: "num" }, String(e.hand)),
      h("td", { class: "num" }, h("button", { class: "secondary step", type: "button",
        "aria-label": t("review.go", { n: e.move, hand: e.hand }), onclick: () => go(e.step) }, String(e.move))),
      h("td", {}, describeAction(e.played.action)),
      h("td", { class: "num" }, withError(points(e.played.points), e.played.stderr)),
      h("td", {}, same ? t("review.same") : describeAction(e.best.action)),
      h("td", { class: "num" }, same ? "" : withError(points(e.best.points), e.best.stderr)),
      h("td", { class: "num loss" }, same ? "" : withError(e.loss.toFixed(2), e.loss_stderr)),
      h("td", { class: "reason" }, ...marks, why));
  });
  fill($("review-result"),
    h("p", { class: "hint-text" }, t("review.intro", { threshold: doc.threshold, factor: doc.noise_factor })),
    h("p", { class: "review-summary", id: "review-summary" }, t("review.summary", { name: doc.name,
      lost: s.points_lost.toFixed(2), decisions: s.decisions, mistakes: s.mistakes })),
    h("div", { class: "review-table-wrap" },
      h("table", { class: "review-table", id: "review-table" }, h("thead", {}, h("tr", {}, ...head)),
        h("tbody", {}, ...rows))));
  markReviewRow();
}

function markReviewRow() {
  for (const tr of document.querySelectorAll("#review-table tbody tr")) {
    tr.classList.toggle("current", Number(tr.dataset.step) === at);
  }
}

function showReview(st) {
  const bar = $("review-progress"), button = $("review-button"), status = $("review-status");
  $("review").hidden = false;
  clearTimeout(reviewTimer);
  if (st.status === "done") {
    bar.hidden = true;
    // A record from a file may be reviewed again for its other player; a game's review is kept as it is.
    button.hidden = uploaded === null;
    $("review-seat-label").hidden = uploaded === null;
    status.textContent = "";
    renderReview(st.review);
    return;
  }
  if (st.status === "running") {
    button.hidden = true;
    $("review-seat-label").hidden = true;
    bar.hidden = false;
    if (st.total) {
      bar.max = st.total;
      bar.value = st.done;
      status.textContent = t("review.progress", { done: st.done, total: st.total });
    } else {
      bar.removeAttribute("value");
      status.textContent = t("review.starting");
    }
    if (uploaded === null) reviewTimer = setTimeout(pollReview, 1000);  // a record's review streams in
    return;
  }
  bar.hidden = true;
  button.hidden = false;
  $("review-seat-label").hidden = uploaded === null;
  status.textContent = st.status === "failed" ? t("review.failed") : "";
}

function reviewFailed(e) {
  $("review-progress").hidden = true;
  $("review-button").hidden = false;
  $("review-seat-label").hidden = uploaded === null;
  $("review-status").textContent = "";
  // A record's problem is named (the server's message says what is wrong with it).
  $("review-error").textContent = errorText(e.code, e.message) + (["bad_record", "record_too_long"].includes(e.code) && e.message ? " — " + e.message : "");
}

async function pollReview() {
  try { showReview(await api("GET", reviewUrl())); } catch (e) { reviewFailed(e); }
}

async function startReview() {
  $("review-error").textContent = "";
  $("review-button").disabled = true;
  try { showReview(uploaded === null ? await api("POST", reviewUrl()) : await reviewRecord()); }
  catch (e) { reviewFailed(e); }
  finally { $("review-button").disabled = false; }
}

// The review of a record opened from a file: the server reads it again and answers a line of JSON after
// each decision it judged, the review itself last (koikoi/web/routes/records.py); nothing is kept there.
async function reviewRecord() {
  const res = await fetch("/api/replay/review?seat=" + encodeURIComponent($("review-seat").value),
    { method: "POST", body: uploaded, headers: { "Content-Type": "application/json" }, credentials: "same-origin" });
  if (!res.ok) {
    let data = null;
    try { data = await res.json(); } catch (e) { data = null; }
    throw Object.assign(new Error((data && data.message) || res.statusText), { code: data && data.error });
  }
  const reader = res.body.getReader(), decoder = new TextDecoder();
  let buffered = "", last = null;
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buffered += decoder.decode(value, { stream: true });
    let nl;
    while ((nl = buffered.indexOf("\n")) >= 0) {
      last = JSON.parse(buffered.slice(0, nl));
      buffered = buffered.slice(nl + 1);
      if (last.status === "running") showReview(last);
    }
  }
  if (last === null || last.status === "running") throw Object.assign(new Error(""), { code: "network" });
  return last;
}

// A record from a file: whose moves to review, the record's one human player first chosen.
function offerRecordReview() {
  const players = record.players;
  const humans = players.map((p, i) => i).filter((i) => players[i].kind === "human");
  fill($("review-seat"), ...names().map((n, i) => h("option", { value: String(i) }, n)));
  $("review-seat").value = String(humans.length === 1 ? humans[0] : 0);
  $("review-button").textContent = t("review.button_record");
  showReview({ status: "none" });
}

// A match that ended before its last hand (time, resignation, claim...): its record says why, and the
// replay says it. A record from a file may say anything: only the server's own endings are told.
const ENDINGS = ["time", "resign", "claim", "abort", "expired", "closed"];

function showEnding() {
  const m = record.metadata || {};
  const box = $("replay-ending");
  box.hidden = !(ENDINGS.includes(m.ending) && [0, 1, null].includes(m.winner));
  if (box.hidden) return;
  box.textContent = t("ending." + m.ending, { name: m.winner === null ? "" : names()[1 - m.winner] });
}

function start(data) {
  frames = data.frames;
  record = data.record;
  showEnding();
  const r = record.rules || {};
  const length = r.hands ? tn("lobby.hands", r.hands, { n: r.hands })
    : r.target_score ? tn("lobby.until_target", r.target_score, { target: r.target_score }) : "";
  $("replay-rules").textContent = rulesLabel(data.rules_label) + (length ? " · " + length : "");
  $("replay-load").hidden = true;
  if ($("replay-list")) $("replay-list").hidden = true;
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
      const text = await file.text();
      const res = await fetch("/api/replay", { method: "POST", body: text,
        headers: { "Content-Type": "application/json" } });
      const data = await res.json();
      if (!res.ok) throw Object.assign(new Error(data.message), { code: data.error });
      uploaded = text;
      start(data);
      offerRecordReview();
    } catch (e) {
      $("form-error").textContent = errorText(e.code, e.message) + (e.message ? " — " + e.message : "");
    }
  });
  $("review-button").addEventListener("click", startReview);
  if (K.game_id) {
    try {
      start(await api("GET", `/api/games/${K.game_id}/replay?token=${encodeURIComponent(K.token || "")}`));
    } catch (e) {
      $("form-error").textContent = errorText(e.code, e.message);
      return;
    }
    // The replay of a game is served to its players once it is over: the same may ask for its review.
    if (K.token) {
      await pollReview();
      // The Replays page's "Review" link: the review is what the player came for.
      if (location.hash === "#review") $("review").scrollIntoView();
    }
  }
});
