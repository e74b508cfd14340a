// The table's appearance (issue 33): contrast, the cards' paper grain, the light's warmth and a high-contrast
// table, chosen in a small panel and remembered by this browser.
//
// This script is loaded in the page's <head> without `defer`, so that the saved choice is on <html> before
// the first paint: no flash of the default table. It only sets data attributes on <html> (data-contrast,
// data-grain, data-warmth, data-high-contrast); style.css turns each step into the CSS custom properties that
// the felt and the card faces use. Nothing here writes a style attribute, so the page's Content-Security-Policy
// (style-src 'self', no inline styles) holds as it is.
"use strict";

(function () {
  const STORE_KEY = "koikoi.appearance";
  // Each slider's steps, 0..max, and its usual step (no attribute on <html> at the usual step, so the page
  // looks exactly as it does without this script). style.css has one rule per other step.
  const SLIDERS = {
    contrast: { max: 8, normal: 4 },
    grain: { max: 5, normal: 0 },
    warmth: { max: 8, normal: 4 },
  };
  const root = document.documentElement;

  function defaults() {
    const out = { high_contrast: false };
    for (const [name, s] of Object.entries(SLIDERS)) out[name] = s.normal;
    return out;
  }

  // What this browser saved, checked: a missing, damaged or out-of-range entry is the usual look, never an error.
  function load() {
    const out = defaults();
    let saved = null;
    try { saved = JSON.parse(window.localStorage.getItem(STORE_KEY) || "null"); } catch (e) { saved = null; }
    if (!saved || typeof saved !== "object") return out;
    for (const [name, s] of Object.entries(SLIDERS)) {
      const v = saved[name];
      if (Number.isInteger(v) && v >= 0 && v <= s.max) out[name] = v;
    }
    out.high_contrast = saved.high_contrast === true;
    return out;
  }

  function isDefault(a) {
    return !a.high_contrast && Object.entries(SLIDERS).every(([name, s]) => a[name] === s.normal);
  }

  function save(a) {
    try {
      if (isDefault(a)) window.localStorage.removeItem(STORE_KEY);
      else window.localStorage.setItem(STORE_KEY, JSON.stringify(a));
    } catch (e) { /* storage off (a private window): the choice lasts for this page only */ }
  }

  function apply(a) {
    for (const [name, s] of Object.entries(SLIDERS)) {
      if (a[name] === s.normal) root.removeAttribute("data-" + name);
      else root.setAttribute("data-" + name, String(a[name]));
    }
    root.toggleAttribute("data-high-contrast", a.high_contrast);
  }

  let current = load();
  apply(current);

  // Words for a slider's position, for its <output> and for screen readers (aria-valuetext).
  function valueText(name, v) {
    const percent = (x) => new Intl.NumberFormat((window.KOIKOI && window.KOIKOI.lang) || "en", { style: "percent" }).format(x);
    if (name === "contrast") return percent([0.8, 0.85, 0.9, 0.95, 1, 1.1, 1.2, 1.35, 1.5][v]);
    if (name === "grain") return v === 0 ? t("appearance.grain_none") : percent(v / SLIDERS.grain.max);
    if (v === SLIDERS.warmth.normal) return t("appearance.warmth_neutral");
    return v < SLIDERS.warmth.normal
      ? t("appearance.warmth_cooler", { n: SLIDERS.warmth.normal - v })
      : t("appearance.warmth_warmer", { n: v - SLIDERS.warmth.normal });
  }

  let refresh = () => {};  // the open panel's sliders, once wired

  // The gear in the header and its panel, on the pages that have them (appearance.html).
  function wire() {
    const button = document.getElementById("appearance-button");
    const panel = document.getElementById("appearance-panel");
    if (!button || !panel) return;
    const sliders = {};
    for (const [name, s] of Object.entries(SLIDERS)) {
      const input = document.getElementById("appearance-" + name);
      input.min = "0";
      input.max = String(s.max);
      input.step = "1";
      sliders[name] = input;
      input.addEventListener("input", () => change({ [name]: Number(input.value) }));
    }
    const high = document.getElementById("appearance-high-contrast");
    high.addEventListener("change", () => change({ high_contrast: high.checked }));

    function show() {
      for (const [name, input] of Object.entries(sliders)) {
        input.value = String(current[name]);
        const words = valueText(name, current[name]);
        input.setAttribute("aria-valuetext", words);
        document.getElementById("appearance-" + name + "-value").textContent = words;
      }
      high.checked = current.high_contrast;
      document.getElementById("appearance-reset").disabled = isDefault(current);
    }

    function change(part) {
      current = Object.assign({}, current, part);
      apply(current);
      save(current);
      show();
    }

    function close(refocus = true) {
      if (!panel.open) return;
      panel.close();
      button.setAttribute("aria-expanded", "false");
      if (refocus) button.focus();
    }

    button.addEventListener("click", () => {
      if (panel.open) { close(); return; }
      show();
      panel.show();  // not modal: the table stays in sight while it changes
      button.setAttribute("aria-expanded", "true");
      sliders.contrast.focus();
    });
    document.getElementById("appearance-close").addEventListener("click", () => close());
    // A press anywhere else closes it too (it covers part of a phone's table), leaving the focus where it went.
    document.addEventListener("pointerdown", (ev) => {
      if (panel.open && !panel.contains(ev.target) && !button.contains(ev.target)) close(false);
    });
    document.getElementById("appearance-reset").addEventListener("click", () => {
      change(defaults());
      sliders.contrast.focus();  // the reset button has just been disabled: keep the focus in the panel
    });
    panel.addEventListener("keydown", (ev) => {
      if (ev.key === "Escape") { ev.preventDefault(); ev.stopPropagation(); close(); }
    });
    refresh = () => { if (panel.open) show(); };
  }

  // Another tab of this browser changed it: follow, on every page.
  window.addEventListener("storage", (ev) => {
    if (ev.key !== null && ev.key !== STORE_KEY) return;
    current = load();
    apply(current);
    refresh();
  });

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", wire);
  else wire();
})();
