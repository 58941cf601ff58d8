// The fleet overview, the page's first view: every scale set with what an operator checks first, those
// that need a look first (GET api/v1/fleet: the server filters, sorts and pages), the fleet counted by
// phase and Ready (each count a filter), and the newest phase changes. The list is windowed: only the
// rows on screen exist. Changes of scale sets, runner sets and listeners come by the journal stream and
// make the rows on screen and the counts be asked again, at most once a second; a row is redrawn only
// when its scale set changed.

import { badge, el, plural, setStatus, shortUtc, utc } from "./format.js";
import { getJson } from "./history.js";
import { Follower, Throttle } from "./stream.js";
import { WindowedList } from "./windowed.js";

const REFRESH_MS = 1000;
const LOADING_MS = 3000; // while the server still reads the journal's history
const FILTERS = ["namespace", "search", "phase", "ready", "order"];
const RUNNER_WORDS = [
  ["Failed", "failed"],
  ["Pending", "pending"],
  ["Running", "running"],
  ["Outdated", "outdated"],
  ["Unknown", "unknown"],
];

export function scaleSetHref(namespace, name) {
  return `?scaleset=${encodeURIComponent(`${namespace}/${name}`)}`;
}

export function runnerCounts(runners) {
  const parts = RUNNER_WORDS.filter(([phase]) => runners[phase]).map(([phase, word]) => `${runners[phase]} ${word}`);
  return parts.length ? parts.join(" · ") : "no runner";
}

export class FleetView {
  constructor({ query, navigate }) {
    this.navigate = navigate;
    // null: no filter. The phase filter may be "" (no phase yet); the text filters count only when set.
    this.filters = Object.fromEntries(FILTERS.map((key) => [key, query.has(key) ? query.get(key) : null]));
    for (const key of ["namespace", "search", "order"]) this.filters[key] = this.filters[key] || null;
    this.latest = 0; // the newest answer applied (answers may come back out of order)
    this.asked = 0;
    this.lastSeq = 0;
    this.stopped = false;
    this.marked = false;
    this.counts = el("div", { class: "counts", "aria-label": "the fleet counted" });
    this.note = el("p", { class: "note", hidden: true, role: "status" });
    this.recent = el("div", { class: "recent" });
    this.list = new WindowedList({
      label: "scale sets",
      empty: "No scale set matches these filters.",
      fetchPage: (offset, limit) => this.fetchPage(offset, limit),
      renderRow: (item) => this.row(item),
      onOpen: (item) => this.navigate(scaleSetHref(item.namespace, item.name)),
    });
    this.node = el(
      "section",
      { class: "view fleet", "aria-label": "fleet overview" },
      this.form(),
      this.counts,
      this.note,
      this.recent,
      el(
        "div",
        { class: "fleet-head", "aria-hidden": "true" },
        ...["scale set", "phase", "ready", "runners", "wanted (min–max)", "listener", "last warning", "changed"].map(
          (t) => el("span", { text: t }),
        ),
      ),
      this.list.node,
    );
    this.refresher = new Throttle(() => this.list.refresh(), REFRESH_MS);
    this.follower = null;
    this.loadingTimer = null;
  }

  form() {
    const namespace = el("input", { name: "namespace", placeholder: "all", size: "12", value: this.filters.namespace || "" });
    const search = el("input", { name: "search", type: "search", placeholder: "part of a name", size: "16", value: this.filters.search || "" });
    const order = el(
      "select",
      { name: "order" },
      ...[
        ["attention", "needs a look first"],
        ["name", "by name"],
        ["changed", "changed last first"],
      ].map(([value, text]) => el("option", { value, text, selected: (this.filters.order || "attention") === value })),
    );
    const form = el(
      "form",
      { class: "filters", autocomplete: "off", role: "search" },
      el("label", {}, "Namespace ", namespace),
      el("label", {}, "Name ", search),
      el("label", {}, "Order ", order),
    );
    const apply = () => {
      this.filters.namespace = namespace.value.trim() || null;
      this.filters.search = search.value.trim() || null;
      this.filters.order = order.value === "attention" ? null : order.value;
      this.filtersChanged();
    };
    form.addEventListener("submit", (event) => {
      event.preventDefault();
      apply();
    });
    namespace.addEventListener("change", apply);
    search.addEventListener("change", apply);
    order.addEventListener("change", apply);
    return form;
  }

  filtersChanged() {
    const query = new URLSearchParams();
    for (const key of FILTERS) if (this.filters[key] !== null) query.set(key, this.filters[key]);
    const search = query.toString();
    window.history.replaceState(null, "", search ? `?${search}` : window.location.pathname);
    this.list.reset();
    this.list.ensure(0);
    if (this.follower) {
      this.follower.stop();
      this.follow();
    }
  }

  async fetchPage(offset, limit) {
    const query = new URLSearchParams({ offset: String(offset), limit: String(limit) });
    for (const key of FILTERS) if (this.filters[key] !== null) query.set(key, this.filters[key]);
    const asked = (this.asked += 1);
    const page = await getJson(`api/v1/fleet?${query}`);
    if (asked > this.latest && !this.stopped) {
      this.latest = asked;
      this.show(page);
    }
    return page;
  }

  // The counts, the recent changes and the history's progress from the newest answer.
  show(page) {
    this.lastSeq = Math.max(this.lastSeq, page.history.lastSeq);
    const total = Object.values(page.phases).reduce((a, b) => a + b, 0);
    const chip = (key, value, text, count) => {
      const on = this.filters[key] === value;
      const button = el("button", {
        type: "button",
        class: `chip${on ? " on" : ""}`,
        "aria-pressed": String(on),
        dataset: { filter: key, value },
        text: `${text} ${count.toLocaleString("en")}`,
      });
      button.addEventListener("click", () => {
        this.filters[key] = on ? null : value;
        this.filtersChanged();
      });
      return button;
    };
    const phases = Object.entries(page.phases).sort(([a], [b]) => (a === "" ? 1 : b === "" ? -1 : a.localeCompare(b)));
    this.counts.replaceChildren(
      el("span", { class: "count-title", text: `${plural(total, "scale set")}:` }),
      ...phases.map(([phase, count]) => chip("phase", phase, phase || "no phase", count)),
      el("span", { class: "count-title", text: "Ready:" }),
      ...Object.entries(page.ready).map(([status, count]) => chip("ready", status, status, count)),
      el("span", { class: "count-runners", text: `Runners: ${runnerCounts(page.runners)}` }),
    );
    const history = page.history;
    this.note.hidden = history.live;
    if (!history.live) {
      const share = history.lastSeq ? Math.floor((100 * history.folded) / history.lastSeq) : 0;
      this.note.textContent =
        `Reading the journal's history (${share}% of ${history.lastSeq.toLocaleString("en")} records): ` +
        "Warning Events and recent changes show once it is read.";
      this.whileLoading();
    }
    this.recent.replaceChildren(
      ...(page.recent.length
        ? [
            el("h2", { text: "Recent phase changes" }),
            el(
              "ol",
              {},
              ...page.recent.map((item) =>
                el(
                  "li",
                  {},
                  el("time", { datetime: utc(item.at), title: utc(item.at), text: shortUtc(item.at) }),
                  " ",
                  el("a", { href: scaleSetHref(item.namespace, item.name), text: `${item.namespace}/${item.name}` }),
                  ` ${item.from || "(new)"} → ${item.to} `,
                  el("code", { text: item.trigger }),
                ),
              ),
            ),
          ]
        : []),
    );
    this.recent.querySelectorAll("a").forEach((link) =>
      link.addEventListener("click", (event) => {
        if (event.ctrlKey || event.metaKey || event.shiftKey || event.button !== 0) return;
        event.preventDefault();
        this.navigate(link.getAttribute("href"));
      }),
    );
  }

  whileLoading() {
    if (this.loadingTimer || this.stopped) return;
    this.loadingTimer = setTimeout(() => {
      this.loadingTimer = null;
      this.refresher.ask();
    }, LOADING_MS);
  }

  row(item) {
    if (!item) return el("div", { class: "fleet-row placeholder" }, el("span", { class: "cell muted", text: "…" }));
    const ready = item.ready;
    const valid = item.configurationValid;
    const warning = item.lastWarning;
    const listener = item.listener;
    const size = `${item.desired ?? "?"} (${item.minRunners ?? 0}–${item.maxRunners ?? "∞"})`;
    const link = el("a", { href: scaleSetHref(item.namespace, item.name), text: `${item.namespace}/${item.name}` });
    const readyText = ready ? `${ready.status === "True" ? "Ready" : "not Ready"}${ready.status === "True" ? "" : `: ${ready.reason}`}` : "not reported";
    const invalid = valid && valid.status === "False";
    return el(
      "div",
      {
        class: `fleet-row${invalid || item.phase === "Outdated" ? " attention" : ""}`,
        dataset: { namespace: item.namespace, name: item.name, phase: item.phase || "" },
      },
      el("span", { class: "cell name" }, link),
      el("span", { class: "cell phase" }, badge(item.phase || "")),
      el(
        "span",
        { class: `cell ready ready-${ready ? ready.status.toLowerCase() : "unknown"}`, title: ready ? ready.message : "" },
        readyText,
        invalid ? el("span", { class: "invalid", title: valid.message, text: ` · config: ${valid.reason}` }) : null,
      ),
      el("span", { class: "cell runners", text: runnerCounts(item.runners) }),
      el("span", { class: "cell size", title: "the runner set's replicas (minRunners–maxRunners)", text: size }),
      el("span", {
        class: "cell listener",
        title: listener && listener.ready ? listener.ready.message : "",
        text: listener ? `listener ${listener.ready ? listener.ready.reason : listener.podPhase || "?"}` : "no listener",
      }),
      el(
        "span",
        { class: "cell warning", title: warning ? `${warning.kind} ${warning.name}: ${warning.message}` : "" },
        warning ? el("span", { class: "warn", text: `⚠ ${warning.reason}` }) : "",
        warning ? el("time", { datetime: utc(warning.at), text: ` ${shortUtc(warning.at)}` }) : "",
      ),
      el(
        "span",
        { class: "cell changed" },
        item.changedAt ? el("time", { datetime: utc(item.changedAt), title: utc(item.changedAt), text: shortUtc(item.changedAt) }) : "",
      ),
    );
  }

  follow() {
    const query = new URLSearchParams();
    for (const type of ["observed", "decision", "effect"]) query.append("type", type);
    for (const kind of ["AutoscalingRunnerSet", "EphemeralRunnerSet", "AutoscalingListener"]) query.append("kind", kind);
    if (this.filters.namespace) query.set("namespace", this.filters.namespace);
    this.follower = new Follower(query, () => this.refresher.ask());
    this.follower.start(this.lastSeq);
  }

  async start() {
    setStatus("connecting", "reading the fleet…");
    try {
      await this.list.ensure(0);
    } catch (error) {
      setStatus("error", `cannot read the fleet: ${error.message}`);
      this.refresher.ask();
    }
    if (this.stopped) return;
    if (!this.marked && this.list.loaded) {
      this.marked = true;
      performance.mark("arcsm:fleet-rendered");
      document.body.dataset.rendered = "fleet";
    }
    this.follow();
  }

  stop() {
    this.stopped = true;
    this.refresher.cancel();
    if (this.follower) this.follower.stop();
    if (this.loadingTimer) clearTimeout(this.loadingTimer);
  }
}
