// Learn (docs/web.md, "Learn"): the lessons' list, a lesson on the table (table.js draws it and takes the
// moves; each goes to the server, which judges it against the exercise), the rule sets' page and the first
// game. Stars: three for a lesson without a wrong move, two for one or two; a guest's are kept in this
// browser, an account's on the server too (a guest who signs in brings theirs along).
"use strict";

const LEARN_KEY = "koikoi.learn";  // a browser's { lesson: stars }

function starsHere() {
  let s = null;
  try { s = JSON.parse(localStorage.getItem(LEARN_KEY) || "null"); } catch (e) { s = null; }
  const out = {};
  if (s && typeof s === "object") {
    for (const p of K.pages || []) if (Number.isInteger(s[p]) && s[p] >= 1 && s[p] <= 3) out[p] = s[p];
  }
  return out;
}

// The best of this browser's stars and the account's.
function allStars() {
  const s = starsHere();
  for (const [p, n] of Object.entries(K.stars || {})) s[p] = Math.max(s[p] || 0, n);
  return s;
}

async function keepStars(changed) {
  const here = { ...starsHere(), ...changed };
  try { localStorage.setItem(LEARN_KEY, JSON.stringify(here)); } catch (e) { /* private mode: not kept */ }
  if (!K.account) return;
  try {
    const r = await api("POST", "/api/learn/progress", { stars: changed });
    K.stars = r.stars;
  } catch (e) { toast(errorText(e.code, e.message)); }
}

// A guest's stars that the account has not: the account takes them on the first page after signing in.
function bringAlong() {
  if (!K.account || !K.stars) return;
  const better = {};
  for (const [p, n] of Object.entries(starsHere())) if (n > (K.stars[p] || 0)) better[p] = n;
  if (Object.keys(better).length) keepStars(better);
}

function starText(n) { return "★".repeat(n) + "☆".repeat(3 - n); }

function showStars(el, n) {
  el.classList.toggle("none", !n);
  if (!n) {
    el.textContent = t("learn.not_started");
    el.removeAttribute("aria-label");
    el.removeAttribute("role");
    return;
  }
  el.textContent = starText(n);
  el.setAttribute("aria-label", t("learn.stars", { n }));
  el.setAttribute("role", "img");
}

// -- a lesson on the table --------------------------------------------------------------------------------

const lesson = { at: 0, done: [], wrong: 0, busy: false, over: false, exerciseOver: false, seq: 0 };
let deliver = null;  // table.js's receive(msg)

function exercise() { return K.exercises[lesson.at]; }
function words(what) { return t(`learn.${K.lesson}.${exercise().name}.${what}`); }

function named(view) {
  view.seq = ++lesson.seq;  // each answer a new table, a refused move's too (the same position again)
  view.players = [{ ...view.players[0], name: t("table.you") }, { ...view.players[1], name: t("table.opponent") }];
  return view;
}

function feedback(text, kind) {
  const el = document.getElementById("learn-feedback");
  el.textContent = text;
  el.className = "learn-feedback" + (kind ? " " + kind : "");
}

async function startExercise(i) {
  lesson.at = i;
  lesson.done = [];
  lesson.exerciseOver = false;
  lesson.busy = true;
  document.getElementById("learn-next").hidden = true;
  document.getElementById("learn-step").textContent = t("learn.exercise_of", { n: i + 1, total: K.exercises.length });
  document.getElementById("learn-goal").textContent = words("goal");
  feedback("");
  let r;
  try {
    r = await api("POST", `/api/learn/${K.lesson}/${exercise().name}`, { done: [] });
  } catch (e) {
    feedback(errorText(e.code, e.message), "wrong");
    return;
  } finally { lesson.busy = false; }
  deliver({ type: "reset" });
  deliver({ type: "state", state: named(r.view) });
}

async function judge(action) {
  lesson.busy = true;
  let r;
  try {
    r = await api("POST", `/api/learn/${K.lesson}/${exercise().name}`, { done: lesson.done, action });
  } catch (e) {
    deliver({ type: "error", code: e.code, message: e.message });
    return;
  } finally { lesson.busy = false; }
  if (!r.right) {
    lesson.wrong += 1;
    const why = r.reason.map(reasonPart).filter(Boolean).join("; ");
    feedback(why ? t("learn.wrong_because", { reason: why }) : t("learn.wrong"), "wrong");
    deliver({ type: "state", state: named(r.view) });
    return;
  }
  lesson.done.push(action);
  if (!r.done) {
    feedback(t("learn.right") + " " + t("learn.then_decide"), "right");
    deliver({ type: "state", state: named(r.view) });
    return;
  }
  lesson.exerciseOver = true;
  feedback(t("learn.right") + " " + words("done"), "right");
  deliver({ type: "state", state: named(r.view) });
  if (lesson.at + 1 < K.exercises.length) {
    const next = document.getElementById("learn-next");
    next.hidden = false;
    next.focus();
  } else finishLesson();
}

function finishLesson() {
  lesson.over = true;
  const stars = lesson.wrong === 0 ? 3 : lesson.wrong <= 2 ? 2 : 1;
  showStars(document.getElementById("learn-stars"), stars);
  document.getElementById("learn-result").hidden = false;
  const best = Math.max(stars, allStars()[K.lesson] || 0);
  keepStars({ [K.lesson]: best });
  const go = document.getElementById("learn-next-lesson") || document.getElementById("learn-again");
  go.focus();
}

if (K.page === "table learn") {
  window.KoiLocal = {
    quiet: true,  // no dialog for the hand's end: the lesson's panel says how it went
    start(receive) {
      deliver = receive;
      startExercise(0);
    },
    send(msg) {
      if (msg.type !== "action" || lesson.busy || lesson.exerciseOver) return false;
      judge(msg.action);
      return true;
    },
    status() { return lesson.exerciseOver ? words("done") : null; },
  };
}

document.addEventListener("DOMContentLoaded", () => {
  bringAlong();
  const stars = allStars();
  for (const el of document.querySelectorAll(".lesson-stars")) showStars(el, stars[el.dataset.lesson] || 0);
  const next = document.getElementById("learn-next");
  if (next) next.addEventListener("click", () => startExercise(lesson.at + 1));
  const again = document.getElementById("learn-again");
  if (again) {
    again.addEventListener("click", () => {
      lesson.wrong = 0;
      lesson.over = false;
      document.getElementById("learn-result").hidden = true;
      startExercise(0);
    });
  }
  // The rule sets' page is read, not played: reading it is the lesson.
  if (K.lesson === "rulesets") keepStars({ rulesets: 3 });
  const first = document.getElementById("learn-first-game");
  if (first) {
    first.addEventListener("click", async () => {
      first.disabled = true;
      document.getElementById("learn-error").textContent = "";
      try {
        const name = K.account || localStorage.getItem("koikoi.name") || "";
        const game = await api("POST", "/api/games", {
          name, opponent: "random", rules: { preset: "nintendo", options: { hands: 3 } },
        });
        await keepStars({ firstgame: 3 });
        window.location.href = game.url;
      } catch (e) {
        document.getElementById("learn-error").textContent = errorText(e.code, e.message);
        first.disabled = false;
      }
    });
  }
});
