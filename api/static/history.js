// One object's phase history: its bar, the selected transition told in words, and the list of every
// phase change (built when opened). The history is one object's (GET .../phases, a few pages at most);
// update() asks only for what came after the last item held.
//
// The selected transition (the last one until another is chosen) says what happened and why, and what
// the journal held then (GET .../at?seq=N): what the object owned and what the decision did. A decision is
// journaled before its status write comes back, so the status read at its own seq still shows the phase
// before; rather than print that as if it contradicted the transition, the panel says where the write is
// seen (the object's next observed record in the new phase, GET /api/v1/journal).

import { axis, phaseBar } from "./bar.js";
import { badge, el, isEnd, kindWord, phaseWord, plural, story, utc } from "./format.js";

const PAGE = 500;

export function objectPath(kind, namespace, name) {
  const plural = `${kind.toLowerCase()}s`;
  return `api/v1/namespaces/${encodeURIComponent(namespace)}/${plural}/${encodeURIComponent(name)}`;
}

export async function getJson(url) {
  const response = await fetch(url, { headers: { Accept: "application/json" } });
  let body = null;
  try {
    body = await response.json();
  } catch {
    body = null;
  }
  if (!response.ok) {
    const error = new Error((body && body.detail) || `GET ${url} answered ${response.status}`);
    error.status = response.status;
    throw error;
  }
  return body;
}

export class ObjectHistory {
  constructor({ kind, namespace, name, settings }) {
    this.kind = kind;
    this.namespace = namespace;
    this.name = name;
    this.settings = settings;
    this.items = [];
    this.selected = null;
    this.pinned = false; // a transition chosen by the user stays chosen when more arrive
    this.at = new Map(); // seq -> {body} | {error} | {loading}
    this.node = el("div", { class: "history", dataset: { kind, namespace, name } });
    this.barHolder = el("div", { class: "bar-holder" });
    this.panel = el("div", { class: "selection", "aria-live": "polite" });
    this.list = el("details", { class: "transitions" }, el("summary", { text: "every phase change" }));
    this.list.addEventListener("toggle", () => this.renderList());
    this.node.append(this.barHolder, this.panel, this.list);
  }

  get path() {
    return objectPath(this.kind, this.namespace, this.name);
  }

  async load() {
    await this.update();
  }

  // Fetch the items after the last one held; re-render only when some arrived.
  async update() {
    let after = this.items.length ? this.items[this.items.length - 1].seq : 0;
    const added = [];
    try {
      for (;;) {
        const page = await getJson(`${this.path}/phases?after=${after}&limit=${PAGE}`);
        added.push(...page.items); // after the last seq held: a page never splits a record's items
        if (page.next === null || !page.items.length) break;
        after = page.next;
      }
    } catch (error) {
      if (!this.items.length) {
        this.barHolder.replaceChildren(el("p", { class: "muted", text: error.message }));
      }
      return;
    }
    if (!added.length && this.items.length) return;
    this.items.push(...added);
    if (!this.pinned || !this.selected) this.selected = this.items[this.items.length - 1] || null;
    this.render();
  }

  end() {
    const last = this.items[this.items.length - 1];
    return last && isEnd(last) ? Date.parse(last.at) : Math.max(Date.now(), last ? Date.parse(last.at) + 1 : 0);
  }

  render({ focus = false } = {}) {
    if (!this.items.length) {
      this.barHolder.replaceChildren(el("p", { class: "muted", text: "No phase change recorded yet." }));
      this.panel.replaceChildren();
      return;
    }
    const start = Date.parse(this.items[0].at);
    const end = this.end();
    const bar = phaseBar(this.items, {
      end,
      scale: this.settings.scale,
      selected: this.selected,
      name: `${kindWord(this.kind)} ${this.namespace}/${this.name}`,
      onSelect: (item, options = {}) => this.select(item, options),
    });
    this.barHolder.replaceChildren(bar, ...(this.settings.scale === "steps" ? [] : [axis(start, end)]));
    if (focus) bar.querySelector('[tabindex="0"]')?.focus();
    this.explain();
    if (this.list.open) this.renderList();
  }

  select(item, { focus = false } = {}) {
    this.selected = item;
    this.pinned = item !== this.items[this.items.length - 1];
    this.render({ focus });
  }

  explain() {
    const item = this.selected;
    const arrow = `${item.from || "(new)"} → ${isEnd(item) ? "deleted" : phaseWord(item.to)}`;
    this.panel.dataset.seq = String(item.seq);
    this.panel.replaceChildren(
      el(
        "p",
        { class: "selected-reason" },
        el("time", { datetime: utc(item.at), text: utc(item.at) }),
        " ",
        el("strong", { text: arrow }),
        " ",
        el("code", { class: "trigger", text: item.trigger || "-" }),
      ),
      el("p", { class: "story", text: story(item) }),
      this.atNode(item),
    );
  }

  // What the journal held about the object at the transition's seq, fetched once per seq.
  atNode(item) {
    const node = el("div", { class: "at" });
    const found = this.at.get(item.seq);
    if (!found) {
      this.at.set(item.seq, { loading: true });
      this.fetchAt(item);
    }
    if (!found || found.loading) {
      node.append(el("span", { class: "muted", text: `reading the journal at seq ${item.seq}…` }));
      return node;
    }
    if (found.error) {
      node.dataset.state = "absent";
      node.append(el("span", { class: "muted", text: found.error }));
      return node;
    }
    node.dataset.state = "present";
    const { body, seen } = found;
    node.dataset.phase = body.phase || "";
    node.append(el("span", { class: "status-write", text: this.written(item, body, seen) }));
    const children = summarise(body.children);
    node.append(el("span", { class: "children", text: `It owned then: ${children}.` }));
    const decision = body.decision;
    if (decision && decision.seq === item.seq) {
      const kinds = decision.effects.map((key) => key.split(":")[0]);
      const effects = kinds.length ? `${plural(kinds.length, "effect")}: ${[...new Set(kinds)].join(", ")}` : "no effect";
      node.append(
        el("span", {
          class: "decision",
          dataset: { trigger: decision.trigger || "" },
          text: `The decision (seq ${decision.seq}) recorded ${effects}.`,
        }),
      );
    } else if (item.source === "observed") {
      node.append(el("span", { class: "decision", text: "This replica recorded no decision for it." }));
    }
    return node;
  }

  written(item, body, seen) {
    if (isEnd(item) || item.to === null || this.kind === "AutoscalingListener") {
      return `The journal had observed it by seq ${body.observedSeq}.`;
    }
    if (body.phase === item.to) return `Its status said ${item.to} (observed at seq ${body.observedSeq}).`;
    const before = body.phase ? `Its status still said ${body.phase} when this was decided` : "Its status had no phase yet when this was decided";
    if (seen) return `${before}; the status write for this decision is seen at seq ${seen.seq} (${utc(seen.at)}).`;
    return `${before}; the status write for this decision is not in the journal yet.`;
  }

  async fetchAt(item) {
    try {
      const body = await getJson(`${this.path}/at?seq=${item.seq}`);
      let seen = null;
      if (!isEnd(item) && item.to && body.phase !== item.to && this.kind !== "AutoscalingListener") {
        seen = await this.statusWrite(item);
      }
      this.at.set(item.seq, { body, seen });
    } catch (error) {
      this.at.set(item.seq, { error: error.message });
    }
    if (this.selected && this.selected.seq === item.seq) this.explain();
  }

  // The object's first observed record after the decision whose status shows the new phase.
  async statusWrite(item) {
    const query = new URLSearchParams({
      kind: this.kind,
      namespace: this.namespace,
      name: this.name,
      type: "observed",
      after: String(item.seq),
      limit: "50",
    });
    const page = await getJson(`api/v1/journal?${query}`);
    return page.items.find((record) => ((record.body.object || {}).status || {}).phase === item.to) || null;
  }

  renderList() {
    if (!this.list.open) return;
    const table = el("table");
    table.append(
      el("tr", {}, ...["at (UTC)", "from", "to", "trigger", "reason", "source"].map((t) => el("th", { text: t }))),
    );
    for (const item of this.items) {
      const source = item.source || "decided";
      const row = el("tr", { dataset: { seq: String(item.seq), phase: item.to || "", source } });
      if (isEnd(item)) row.classList.add("end");
      row.append(
        el("td", {}, el("time", { datetime: utc(item.at), text: utc(item.at) })),
        el("td", { text: item.from || "(new)" }),
        el("td", {}, badge(isEnd(item) ? null : item.to)),
        el("td", { text: item.trigger || "" }),
        el("td", { class: "reason", text: item.reason || "" }),
        el("td", { class: `source-${source}`, text: source }),
      );
      table.append(row);
    }
    const count = this.items.length;
    this.list.replaceChildren(
      el("summary", { text: `every phase change (${count})` }),
      el("div", { class: "table-scroll" }, table),
    );
  }
}

function summarise(children) {
  if (!children.length) return "nothing";
  const byKind = new Map();
  for (const child of children) {
    const phases = byKind.get(child.kind) || new Map();
    phases.set(child.phase || "no phase", (phases.get(child.phase || "no phase") || 0) + 1);
    byKind.set(child.kind, phases);
  }
  return [...byKind]
    .map(([kind, phases]) => {
      const count = [...phases.values()].reduce((a, b) => a + b, 0);
      const parts = [...phases].map(([phase, n]) => `${n} ${phase}`).join(", ");
      return `${plural(count, kindWord(kind))} (${parts})`;
    })
    .join("; ");
}
