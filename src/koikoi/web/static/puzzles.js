// Puzzles (docs/web.md, "Puzzles"): the table (table.js) shows the puzzle's position and takes the moves;
// each move goes to the server, which alone knows the solution and answers right or wrong. A guest's puzzle
// rating and best streak stay in this browser; an account's are on the server.
"use strict";

const GUEST_KEY = "koikoi.puzzles";  // a guest's { rating, rd, best_streak }
let attempt = null;  // the try under way: { token, puzzle, mode, done, over }
let recent = [];  // the puzzles shown lately, not to be served again at once
let deliver = null;  // table.js's receive(msg)

function guest() {
  let g = null;
  try { g = JSON.parse(localStorage.getItem(GUEST_KEY) || "null"); } catch (e) { g = null; }
  if (!g || typeof g.rating !== "number" || typeof g.rd !== "number") g = { rating: 1500, rd: 500, best_streak: 0 };
  g.rating = Math.min(4000, Math.max(400, g.rating));
  g.rd = Math.min(500, Math.max(45, g.rd));
  return g;
}

function keepGuest(g) {
  try { localStorage.setItem(GUEST_KEY, JSON.stringify(g)); } catch (e) { /* private mode: for this page only */ }
}

function mode() { return K.mode || "rated"; }

// The opponent of a puzzle has no name: the table calls them so.
function named(view) {
  view.players = view.players.map((p, i) => i === view.seat ? p : { ...p, name: t("puzzle.opponent") });
  return view;
}

function guestFields() {
  if (K.account) return {};
  const g = guest();
  return { rating: g.rating, rd: g.rd };
}

function showSolver(solver, streak) {
  const parts = [];
  if (K.account && solver) {
    parts.push(t("puzzle.your_rating", { n: solver.rating + (solver.provisional ? "?" : "") }));
    if (solver.best_streak) parts.push(t("puzzle.best_streak", { n: solver.best_streak }));
  } else if (!K.account) {
    const g = guest();
    parts.push(t("puzzle.your_rating", { n: Math.round(g.rating) + (g.rd >= 110 ? "?" : "") }));
    if (g.best_streak) parts.push(t("puzzle.best_streak", { n: g.best_streak }));
  }
  if (mode() === "streak" && streak !== undefined && streak !== null) parts.unshift(t("puzzle.streak", { n: streak }));
  document.getElementById("puzzle-solver").textContent = parts.join(" · ");
}

function task() {
  if (!attempt) return t("puzzle.loading");
  if (attempt.over) return attempt.correct ? t("puzzle.solved") : t("puzzle.wrong");
  return attempt.done === 0 ? t("puzzle.find_best") : t("puzzle.find_next");
}

async function nextPuzzle() {
  document.getElementById("puzzle-result").hidden = true;
  attempt = null;
  document.getElementById("puzzle-task").textContent = task();
  let got;
  try {
    got = await api("POST", "/api/puzzles/next", { mode: mode(), avoid: recent, ...guestFields() });
  } catch (e) {
    document.getElementById("puzzle-task").textContent = errorText(e.code, e.message);
    return;
  }
  attempt = { token: got.token, puzzle: got.puzzle, mode: got.mode, done: 0, over: false, correct: false };
  recent = [got.puzzle.id, ...recent].slice(0, 20);
  const p = got.puzzle;
  document.getElementById("puzzle-panel").dataset.puzzle = p.id;  // public: for tests and for sharing
  document.getElementById("puzzle-task").textContent = task();
  document.getElementById("puzzle-meta").textContent = [
    t("puzzle.puzzle_rating", { n: p.rating }),
    tn("puzzle.moves", p.moves, { n: p.moves }),
    rulesLabel(p.rules, LIST_CHANGES),
  ].join(" · ");
  showSolver(got.solver, got.streak);
  deliver({ type: "reset" });
  deliver({ type: "state", state: named(got.view) });
}

async function answer(action) {
  const a = attempt;
  let r;
  try {
    r = await api("POST", `/api/puzzles/attempts/${encodeURIComponent(a.token)}`, { move: a.done, action, ...guestFields() });
  } catch (e) {
    deliver({ type: "error", code: e.code, message: e.message });
    return;
  }
  if (!r.over) {
    a.done = r.done;
    toast(t("puzzle.correct"));
    deliver({ type: "state", state: named(r.view) });
    document.getElementById("puzzle-task").textContent = task();
    return;
  }
  a.over = true;
  a.correct = r.correct;
  if (r.guest_rating) {
    const g = guest();
    g.rating = r.guest_rating.rating;
    g.rd = r.guest_rating.rd;
    keepGuest(g);
  }
  if (!K.account && r.streak !== null && r.streak !== undefined) {
    const g = guest();
    if (r.streak > (g.best_streak || 0)) { g.best_streak = r.streak; keepGuest(g); }
  }
  deliver({ type: "state", state: named(r.view) });
  showResult(r);
}

function showResult(r) {
  document.getElementById("puzzle-task").textContent = task();
  document.getElementById("puzzle-verdict").textContent = r.correct ? t("puzzle.solved") : t("puzzle.wrong");
  document.getElementById("puzzle-verdict").className = "puzzle-verdict " + (r.correct ? "right" : "wrong");
  fill(document.getElementById("puzzle-solution"), ...r.solution.map((m) => {
    const reasons = m.reason.map(reasonPart).filter(Boolean);
    return h("li", {},
      h("strong", {}, describeAction(m.action)),
      " ", t("puzzle.worth", { best: shortPoints(m.points), second: shortPoints(m.runner_up_points), other: describeAction(m.runner_up) }),
      reasons.length ? h("span", { class: "puzzle-reason" }, " ", t("puzzle.why_not", { other: describeAction(m.runner_up), why: reasons.join("; ") })) : null);
  }));
  document.getElementById("puzzle-themes").textContent = r.themes.length
    ? t("puzzle.themes", { themes: r.themes.map((x) => t("theme." + x)).join(", ") }) : "";
  const change = r.rating ? t("puzzle.rating_change", { before: r.rating.before, after: r.rating.after }) : "";
  document.getElementById("puzzle-rating-change").textContent = change;
  const next = document.getElementById("puzzle-next");
  next.textContent = attempt.mode === "streak" && !r.correct ? t("puzzle.new_streak") : attempt.mode === "daily" ? t("puzzle.more") : t("puzzle.next");
  document.getElementById("puzzle-result").hidden = false;
  showSolver(r.solver, r.streak);
  next.focus();
}

window.KoiLocal = {
  quiet: true,  // no dialog for the hand's or the match's end: the puzzle's panel says how it went
  start(receive) {
    deliver = receive;
    nextPuzzle();
  },
  send(msg) {
    if (msg.type !== "action" || !attempt || attempt.over) return false;
    answer(msg.action);
    return true;
  },
  status() { return attempt && attempt.over ? task() : null; },
};

document.addEventListener("DOMContentLoaded", () => {
  const current = document.getElementById("mode-" + mode());
  if (current) current.setAttribute("aria-current", "page");
  document.getElementById("puzzle-next").addEventListener("click", () => {
    if (attempt && attempt.mode === "daily") { K.mode = "rated"; history.replaceState(null, "", "/puzzles?mode=rated"); }
    nextPuzzle();
  });
});
