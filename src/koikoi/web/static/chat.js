// The chat beside the table: the players' room on a player's page, the spectators' room on a spectator's,
// over the table's own socket (table.js hands it every message it does not know: KoiChat.take). Every
// message goes into the page as text (textContent, through h()), never as HTML; a phrase is shown in the
// reader's own language. Also how many watch, and on a player's page the link spectators use.
"use strict";

const KoiChat = (() => {
  const byId = (id) => document.getElementById(id);
  const MAX = 200;          // characters of a message, as the server counts them
  const KEPT = 200;         // messages kept on the page (the newest)
  const seen = new Set();   // message ids shown: a message comes once however often it is sent
  let unread = 0;
  let lastSent = null;      // the text just sent, put back if the server refuses it

  const wide = window.matchMedia("(min-width: 1000px)");

  function isOpen() { return !byId("chat").hidden; }

  function setOpen(open) {
    const panel = byId("chat"), toggle = byId("chat-toggle");
    panel.hidden = !open;
    toggle.setAttribute("aria-expanded", String(open));
    document.body.classList.toggle("chat-open", open);
    if (open) {
      unread = 0;
      showUnread();
      const log = byId("chat-log");
      log.scrollTop = log.scrollHeight;
    }
  }

  function showUnread() {
    byId("chat-unread").textContent = unread ? ` (${unread})` : "";
  }

  function note(text) { byId("chat-note").textContent = text || ""; }

  // Mine: on a player's page, my seat's; on a spectator's, my account's.
  function mine(m) {
    if (K.watch) return Boolean(K.account && m.account && m.name === K.account);
    return typeof truth !== "undefined" && truth !== null && m.seat === truth.seat;
  }

  function words(m) {
    return m.phrase ? t("phrase." + m.phrase) : String(m.text || "");
  }

  function messageEl(m) {
    const own = mine(m);
    const flag = !own && (!K.watch || K.account)
      ? h("button", { type: "button", class: "chat-report", title: t("chat.report"),
        "aria-label": t("chat.report_from", { name: m.name }), onclick: () => report(m.id) }, "⚑")
      : null;
    return h("li", { class: "chat-line" + (own ? " mine" : "") + (m.phrase ? " phrase" : ""), "data-id": String(m.id) },
      h("span", { class: "chat-name" }, m.name), " ",
      h("span", { class: "chat-text" }, words(m)), flag);
  }

  function add(messages) {
    const log = byId("chat-log");
    const atBottom = log.scrollHeight - log.scrollTop - log.clientHeight < 40;
    let fresh = 0;
    for (const m of messages) {
      if (seen.has(m.id)) continue;
      seen.add(m.id);
      log.appendChild(messageEl(m));
      if (!mine(m)) fresh += 1;
    }
    while (log.children.length > KEPT) log.removeChild(log.firstChild);
    if (atBottom || isOpen()) log.scrollTop = log.scrollHeight;
    if (!isOpen() && fresh) { unread += fresh; showUnread(); }
  }

  function hello(msg) {
    byId("chat-toggle").hidden = !msg.can_chat && !K.watch;  // a game against the computer: no players' chat
    if (!msg.can_chat && !K.watch) setOpen(false);
    fill(byId("chat-log"));
    seen.clear();
    add(msg.messages);
    unread = 0;
    showUnread();
    byId("chat-write").hidden = !msg.can_chat;
    const mute = byId("chat-mute");
    if (mute) mute.checked = Boolean(msg.muted);
  }

  function showWatchers(msg) {
    const el = byId("watchers");
    el.textContent = tn("watch.watching", msg.n, { n: msg.n });
    el.hidden = !K.watch && msg.n === 0;
    const link = byId("chat-watch-link");
    if (link && msg.private !== undefined) {
      link.hidden = msg.private;
      const a = byId("watch-link");
      a.href = `/watch/${encodeURIComponent(K.game_id)}`;
      a.textContent = `${location.origin}/watch/${K.game_id}`;
    }
  }

  function report(id) {
    if (send({ type: "report", id })) note("");
  }

  // What the table's socket was sent that is the chat's: true when taken here.
  function take(msg) {
    if (msg.type === "chat") {
      if (msg.history) hello(msg);
      else add(msg.messages);
      return true;
    }
    if (msg.type === "watchers") { showWatchers(msg); return true; }
    if (msg.type === "muted") { byId("chat-mute").checked = msg.muted; note(t(msg.muted ? "chat.muted" : "chat.unmuted")); return true; }
    if (msg.type === "reported") {
      note(t("chat.reported"));
      const b = document.querySelector(`#chat-log li[data-id="${Number(msg.id)}"] .chat-report`);
      if (b) { b.disabled = true; b.classList.add("done"); }
      return true;
    }
    if (msg.type === "error" && msg.about === "chat") {
      note(errorText(msg.code, msg.message));
      const input = byId("chat-input");
      if (lastSent !== null && !input.value) input.value = lastSent;
      lastSent = null;
      if (!isOpen()) toast(errorText(msg.code, msg.message));
      return true;
    }
    return false;
  }

  function submit(ev) {
    ev.preventDefault();
    const input = byId("chat-input");
    const text = input.value.trim();
    if (!text) return;
    // The server counts characters as Python does (code points); a 10 KB paste is refused here first.
    if ([...text].length > MAX) { note(t("error.chat_too_long")); return; }
    if (send({ type: "chat", text })) { lastSent = text; input.value = ""; note(""); }
  }

  document.addEventListener("DOMContentLoaded", () => {
    const toggle = byId("chat-toggle");
    if (!toggle) return;
    toggle.hidden = false;
    toggle.addEventListener("click", () => setOpen(!isOpen()));
    byId("chat-close").addEventListener("click", () => { setOpen(false); toggle.focus(); });
    byId("chat-form").addEventListener("submit", submit);
    fill(byId("phrases"), ...(K.phrases || []).map((id) => h("button", { type: "button", class: "phrase", "data-phrase": id,
      onclick: () => { if (send({ type: "chat", phrase: id })) note(""); } }, t("phrase." + id))));
    const mute = byId("chat-mute");
    if (mute) mute.addEventListener("change", () => send({ type: "mute", muted: mute.checked }));
    setOpen(wide.matches);  // beside the table on a wide screen; on a phone, behind its button
  });

  return { take, setOpen };
})();
window.KoiChat = KoiChat;
