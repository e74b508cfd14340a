// The rule options of a table: every option of the chosen preset as a control with its description, the
// ones changed from the preset marked and counted. The new-game form (lobby.js) and the new-tournament form
// (tournament.js) each hold one; what they send is the preset's name and `changes`.
"use strict";

// What the chosen value of a choice means, where the option's own description does not say it.
function choiceDoc(spec, value) {
  const key = "choicedoc." + spec.name + "." + value;
  return Object.prototype.hasOwnProperty.call(CATALOG, key) ? t(key) : "";
}

class RuleOptions {
  // `box`: where the controls go; `counter`: where "n changed" is said; `skip`: options the form asks for
  // with a control of its own (the match length); `onChange(name)`: after an option changed.
  constructor(box, counter, { skip = [], onChange = () => {} } = {}) {
    this.box = box;
    this.counter = counter;
    this.skip = skip;
    this.onChange = onChange;
    this.base = null;  // the chosen preset's options
    this.changes = {};  // options changed from it
  }

  current(name) { return name in this.changes ? this.changes[name] : this.base[name]; }

  set(name, value) {
    if (value === this.base[name]) delete this.changes[name]; else this.changes[name] = value;
  }

  // A preset chosen: its options, none changed.
  choose(base) { this.base = base; this.changes = {}; this.render(); }

  render() {
    fill(this.box, ...K.options.filter((spec) => !this.skip.includes(spec.name))
      .map((spec) => this.input(spec, this.current(spec.name))));
    this.count();
  }

  // The rule options changed from the preset's (not those the form asks for itself: no rules).
  count() {
    const n = Object.keys(this.changes).filter((name) => !this.skip.includes(name)).length;
    this.counter.textContent = n ? t("lobby.changed", { n }) : "";
  }

  input(spec, value) {
    const id = "opt-" + spec.name;
    const chosen = spec.choices.length ? h("small", { class: "choice-doc", id: "choice-doc-" + spec.name },
      choiceDoc(spec, value)) : null;
    let input;
    if (spec.type === "bool") {
      input = h("input", { type: "checkbox", id, checked: value });
    } else if (spec.choices.length) {
      input = h("select", { id }, ...spec.choices.map((c) => h("option", { value: c, selected: c === value },
        t("choice." + spec.name + "." + c))));
    } else {
      input = h("input", { type: "number", id, value: String(value), min: spec.minimum ?? 0, step: 1 });
    }
    input.addEventListener("change", () => {
      let v = spec.type === "bool" ? input.checked : spec.type === "int" ? Number(input.value) : input.value;
      if (spec.type === "int" && !Number.isInteger(v)) { input.value = this.base[spec.name]; v = this.base[spec.name]; }
      this.set(spec.name, v);
      input.closest(".option").classList.toggle("changed", spec.name in this.changes);
      if (chosen) chosen.textContent = choiceDoc(spec, v);
      this.onChange(spec.name);
      this.count();
    });
    input.setAttribute("aria-describedby", "doc-" + spec.name + (chosen ? " choice-doc-" + spec.name : ""));
    return h("div", { class: "option" + (spec.name in this.changes ? " changed" : "") },
      h("label", { for: id }, t("opt." + spec.name)), input,
      h("small", { id: "doc-" + spec.name }, t("optdoc." + spec.name)), chosen);
  }
}
