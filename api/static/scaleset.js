// One scale set with what hangs off it, on one page: its phase, conditions, size and last Warning Event
// (GET .../autoscalingrunnersets/NAME), its phase history (history.js), its runner set and listener, and
// its runners: those alive first (failed first), the deleted ones folded under their count, each list
// windowed and paged by the server (GET .../runners?state=). Choosing a runner shows its own history.
//
// Live: the journal stream of the scale set's namespace (scale sets, runner sets, runners) and of its
// listener. A runner's new status is applied to its row as it arrives; what the server must say again
// (the counts, a runner added or gone, the scale set's own state and history) is asked at most once a
// second. A scale set that is gone shows its history to its end.

import { badge, el, plural, setStatus, shortUtc, utc } from "./format.js";
import { runnerCounts } from "./fleet.js";
import { ObjectHistory, getJson, objectPath } from "./history.js";
import { Follower, Throttle } from "./stream.js";
import { WindowedList } from "./windowed.js";

const REFRESH_MS = 1000;
const ARS = "AutoscalingRunnerSet";
const ERS = "EphemeralRunnerSet";
const ER = "EphemeralRunner";

function conditionOf(obj, type) {
  const found = ((obj.status || {}).conditions || []).find((c) => c && c.type === type);
  if (!found) return null;
  return {
    type,
    status: found.status || "Unknown",
    reason: found.reason || "",
    message: found.message || "",
    lastTransitionTime: found.lastTransitionTime || null,
  };
}

// A runner row as the API gives it, from an observed runner.
function runnerRow(obj, previous) {
  const meta = obj.metadata || {};
  const status = obj.status || {};
  return {
    ...previous,
    name: meta.name,
    namespace: meta.namespace,
    uid: meta.uid,
    phase: status.phase || null,
    ready: conditionOf(obj, "Ready"),
    runnerId: Number.isInteger(status.runnerId) ? status.runnerId : previous.runnerId,
    terminating: Boolean(meta.deletionTimestamp),
  };
}

function fact(term, ...description) {
  return [el("dt", { text: term }), el("dd", {}, ...description)];
}

function conditionText(condition) {
  if (!condition) return "not reported";
  return `${condition.status}${condition.reason ? ` — ${condition.reason}` : ""}${condition.message ? `: ${condition.message}` : ""}`;
}

export class ScaleSetView {
  constructor({ namespace, name, settings, navigate }) {
    this.namespace = namespace;
    this.name = name;
    this.settings = settings;
    this.navigate = navigate;
    this.view = null;
    this.counts = { live: 0, deleted: 0 };
    this.lastSeq = 0;
    this.stopped = false;
    this.followers = [];
    this.loading = null;
    this.summary = el("div", { class: "card summary" }, el("p", { class: "muted", text: "reading the scale set…" }));
    this.history = new ObjectHistory({ kind: ARS, namespace, name, settings });
    this.parts = el("div", { class: "parts" });
    this.runnerHeading = el("h3", { text: "Runners" });
    this.live = new WindowedList({
      label: "runners alive",
      empty: "No runner is alive.",
      fetchPage: (offset, limit) => this.runners("live", offset, limit),
      renderRow: (item) => this.runnerRowNode(item, false),
      onOpen: (item) => this.chooseRunner(item),
    });
    this.deleted = null; // built when the folded list is opened
    this.deletedFold = el("details", { class: "deleted-runners" }, el("summary", { text: "Deleted runners" }));
    this.deletedFold.addEventListener("toggle", () => this.openDeleted());
    this.runnerPanel = el("div", { class: "runner-panel", hidden: true });
    this.node = el(
      "section",
      { class: "view scaleset", "aria-label": `scale set ${namespace}/${name}` },
      this.summary,
      el("div", { class: "card" }, el("h3", { text: "Phase history" }), this.scaleControl(), this.history.node),
      this.parts,
      el("div", { class: "card runners-card" }, this.runnerHeading, this.live.node, this.runnerPanel, this.deletedFold),
    );
    this.refresher = new Throttle(() => this.refresh(), REFRESH_MS);
  }

  scaleControl() {
    const select = el(
      "select",
      { name: "scale" },
      el("option", { value: "time", text: "wall time", selected: this.settings.scale !== "steps" }),
      el("option", { value: "steps", text: "one step per transition", selected: this.settings.scale === "steps" }),
    );
    select.addEventListener("change", () => {
      this.settings.scale = select.value;
      const query = new URLSearchParams(window.location.search);
      if (select.value === "steps") query.set("scale", "steps");
      else query.delete("scale");
      window.history.replaceState(null, "", `?${query}`);
      this.history.render();
      if (this.runnerHistory) this.runnerHistory.render();
      for (const part of this.partHistories || []) part.render();
    });
    return el("label", { class: "scale" }, "Scale ", select);
  }

  async runners(state, offset, limit) {
    let page;
    try {
      page = await getJson(
        `${objectPath(ARS, this.namespace, this.name)}/runners?state=${state}&offset=${offset}&limit=${limit}`,
      );
    } catch (error) {
      if (error.status !== 404) throw error;
      // The scale set is gone, and its runners with it (its history above says when).
      page = { total: 0, offset, items: [], live: 0, deleted: 0, lastSeq: 0 };
    }
    this.counts = { live: page.live, deleted: page.deleted };
    this.lastSeq = Math.max(this.lastSeq, page.lastSeq);
    this.showCounts();
    return page;
  }

  showCounts() {
    const byPhase = this.view ? ` (${runnerCounts(this.view.runners)})` : "";
    this.runnerHeading.textContent = `Runners: ${this.counts.live.toLocaleString("en")} alive${byPhase}`;
    this.deletedFold.querySelector("summary").textContent =
      `Deleted runners: ${this.counts.deleted.toLocaleString("en")}`;
  }

  runnerRowNode(item, deleted) {
    if (!item) return el("div", { class: "runner-row placeholder" }, el("span", { class: "cell muted", text: "…" }));
    const ready = item.ready;
    const when = deleted ? item.deletedAt : item.createdAt;
    return el(
      "div",
      { class: "runner-row", dataset: { name: item.name, phase: item.phase || "", deleted: String(deleted) } },
      el("span", { class: "cell name", text: item.name }),
      el("span", { class: "cell phase" }, badge(item.phase || ""), item.terminating && !deleted ? el("span", { class: "muted", text: " deleting" }) : ""),
      el("span", { class: "cell why", title: ready ? ready.message : "", text: ready ? `${ready.reason}: ${ready.message}` : "" }),
      el("span", { class: "cell id", text: item.runnerId ? `runner ${item.runnerId}` : "" }),
      el(
        "span",
        { class: "cell when" },
        when ? el("time", { datetime: utc(when), title: utc(when), text: `${deleted ? "deleted" : "created"} ${shortUtc(when)}` }) : "",
      ),
    );
  }

  openDeleted() {
    if (!this.deletedFold.open || this.deleted) return;
    this.deleted = new WindowedList({
      label: "runners deleted, newest first",
      empty: "No runner of this runner set was deleted.",
      fetchPage: (offset, limit) => this.runners("deleted", offset, limit),
      renderRow: (item) => this.runnerRowNode(item, true),
      onOpen: (item) => this.chooseRunner(item),
    });
    this.deletedFold.append(this.deleted.node);
    this.deleted.ensure(0);
  }

  async chooseRunner(item) {
    this.runnerHistory = new ObjectHistory({ kind: ER, namespace: item.namespace, name: item.name, settings: this.settings });
    const close = el("button", { type: "button", class: "close", text: "close" });
    close.addEventListener("click", () => {
      this.runnerPanel.hidden = true;
      this.runnerHistory = null;
    });
    this.runnerPanel.hidden = false;
    this.runnerPanel.dataset.name = item.name;
    this.runnerPanel.replaceChildren(
      el("h4", {}, `Runner ${item.name} `, badge(item.phase || ""), " ", close),
      this.runnerHistory.node,
    );
    await this.runnerHistory.load();
  }

  renderSummary() {
    const view = this.view;
    const facts = [];
    const own = { status: { conditions: view.conditions } };
    facts.push(...fact("Ready", conditionText(conditionOf(own, "Ready"))));
    facts.push(...fact("Configuration", conditionText(conditionOf(own, "ConfigurationValid"))));
    const wanted = view.runnerSet ? view.runnerSet.replicas : null;
    facts.push(
      ...fact(
        "Runners",
        `${wanted ?? "?"} wanted, between ${view.minRunners ?? 0} and ${view.maxRunners ?? "no limit"}; ${runnerCounts(view.runners)}`,
      ),
    );
    const warning = view.lastWarning;
    const warningText = warning
      ? el(
          "span",
          { class: "warn" },
          `⚠ ${warning.reason}: ${warning.message} (${warning.kind} ${warning.name}, `,
          el("time", { datetime: utc(warning.at), text: utc(warning.at) }),
          ")",
        )
      : view.historyLoaded
        ? "none"
        : "still reading the journal's history…";
    facts.push(...fact("Last Warning Event", warningText));
    const r = view.revisions;
    facts.push(
      ...fact(
        "Revisions",
        `generation ${r.generation ?? "?"} (observed ${r.observedGeneration ?? "?"}), runner spec revision ${r.actionableRevision ?? "?"} (applied ${r.appliedActionableRevision ?? "?"})`,
      ),
    );
    const back = el("a", { href: "./", class: "back", text: "← fleet" });
    back.addEventListener("click", (event) => {
      if (event.ctrlKey || event.metaKey || event.shiftKey || event.button !== 0) return;
      event.preventDefault();
      this.navigate("");
    });
    this.summary.replaceChildren(
      back,
      el("h2", {}, el("span", { class: "name", text: `${this.namespace}/${this.name}` }), " ", badge(view.phase || "", "current")),
      el("dl", { class: "facts" }, ...facts),
    );
    this.renderParts();
    this.showCounts();
  }

  renderParts() {
    const view = this.view;
    const cards = [];
    this.partHistories = [];
    const part = (title, kind, namespace, name, lines) => {
      const history = new ObjectHistory({ kind, namespace, name, settings: this.settings });
      const fold = el("details", { class: "part-history" }, el("summary", { text: "its phase history" }), history.node);
      fold.addEventListener("toggle", () => {
        if (fold.open && !history.items.length) history.load();
      });
      this.partHistories.push(history);
      cards.push(el("div", { class: "card part", dataset: { kind } }, el("h3", { text: title }), ...lines.map((l) => el("p", { text: l })), fold));
    };
    if (view.runnerSet) {
      const ers = view.runnerSet;
      part(`Runner set ${ers.name}`, ERS, this.namespace, ers.name, [
        `phase ${ers.phase || "none yet"}, ${ers.replicas ?? "?"} replicas`,
      ]);
    }
    if (view.listener) {
      const al = view.listener;
      part(`Listener ${al.name}`, "AutoscalingListener", al.namespace, al.name, [
        `state ${al.state || "unknown"}; Ready ${conditionText(al.ready)}; pod ${al.podPhase || "none"}`,
      ]);
    } else {
      cards.push(el("div", { class: "card part" }, el("h3", { text: "Listener" }), el("p", { text: "No listener now." })));
    }
    this.parts.replaceChildren(...cards);
  }

  async loadView() {
    try {
      this.view = await getJson(objectPath(ARS, this.namespace, this.name));
      this.renderSummary();
      if (!this.view.historyLoaded && !this.loading) {
        // The server is still reading the journal's history: ask again until the Warning Events are known.
        this.loading = setTimeout(() => {
          this.loading = null;
          if (!this.stopped) this.refresher.ask();
        }, 3000);
      }
    } catch (error) {
      if (error.status !== 404) throw error;
      this.view = null;
      this.summary.replaceChildren(
        el("h2", {}, el("span", { class: "name", text: `${this.namespace}/${this.name}` }), " ", badge(null, "current")),
        el("p", { class: "gone", text: error.message }),
      );
      this.parts.replaceChildren();
    }
  }

  async refresh() {
    await Promise.all([this.loadView(), this.history.update(), this.live.refresh(), this.deleted ? this.deleted.refresh() : null]);
    if (this.runnerHistory) await this.runnerHistory.update();
  }

  ours(record) {
    const obj = (record.body || {}).object || {};
    const owners = (obj.metadata || {}).ownerReferences || [];
    const set = this.view && this.view.runnerSet ? this.view.runnerSet.name : null;
    return owners.some((ref) => ref && ref.kind === ERS && ref.name === set);
  }

  // A batch of the namespace's records: each runner's newest status straight into its row (one redraw of
  // the rows on screen for the batch); anything else of this scale set makes the server be asked again
  // (coalesced). An empty batch (a poll while the stream is down) asks again.
  apply(records) {
    const newest = new Map(); // runner name -> its last observed object in the batch
    let ask = !records.length;
    const set = this.view && this.view.runnerSet ? this.view.runnerSet.name : null;
    for (const record of records) {
      if (record.kind === ER) {
        if (record.type === "observed" && this.ours(record)) {
          if (record.body.event === "MODIFIED") newest.set(record.name, record.body.object);
          ask = true; // the counts, and a runner added or gone
        } else if (this.runnerHistory && record.name === this.runnerHistory.name) {
          ask = true;
        }
      } else if ((record.kind === ARS && record.name === this.name) || (record.kind === ERS && record.name === set)) {
        ask = true;
      }
    }
    if (newest.size) {
      this.live.patch(
        (item) => newest.has(item.name),
        (item) => runnerRow(newest.get(item.name), item),
      );
    }
    if (ask) this.refresher.ask();
  }

  async start() {
    setStatus("connecting", "reading the scale set…");
    try {
      await Promise.all([this.loadView(), this.history.load(), this.live.ensure(0)]);
    } catch (error) {
      setStatus("error", `cannot read the scale set: ${error.message}`);
    }
    if (this.stopped) return;
    performance.mark("arcsm:scaleset-rendered");
    document.body.dataset.rendered = "scaleset";
    const query = new URLSearchParams({ namespace: this.namespace });
    for (const type of ["observed", "decision", "effect"]) query.append("type", type);
    for (const kind of [ARS, ERS, ER]) query.append("kind", kind);
    const main = new Follower(query, (records) => this.apply(records));
    main.start(this.lastSeq);
    this.followers.push(main);
    if (this.view && this.view.listener) {
      const al = this.view.listener;
      const listener = new URLSearchParams({ namespace: al.namespace, name: al.name, kind: "AutoscalingListener" });
      const follower = new Follower(listener, () => this.refresher.ask(), { quiet: true });
      follower.start(this.lastSeq);
      this.followers.push(follower);
    }
  }

  stop() {
    this.stopped = true;
    this.refresher.cancel();
    if (this.loading) clearTimeout(this.loading);
    for (const follower of this.followers) follower.stop();
  }
}
