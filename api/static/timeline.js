// The timeline page: one bar per object, one coloured segment per phase, from the journal's phase history.
//
// Data flow: GET api/v1/phases pages through every phase transition after the last seq this page holds
// (following "next" until it is null). The journal stream (api/v1/journal/stream, server-sent events) is
// only a "something changed" signal, and asks only for what can change phases: decision records and
// observed records of the four ARC kinds (of the chosen kind and namespace, if any). Events are coalesced:
// at most one fetch runs, and any number of events while it runs make one more. While the stream is down
// the page polls instead. Items another replica decided (source "observed": this replica only saw the
// phase change) are hatched in the bar and marked in the list. A deleted object's history ends with an
// item to null, trigger "deleted": its bar ends with a mark there, its badge says deleted and its card is
// greyed. The API leaves out re-affirmations (from = to). Nothing here writes; strings from the server only
// ever reach the DOM as text.
//
// Each object has a selected transition (its last one until a segment or end mark is clicked): its reason
// is shown under the bar, and the object as the journal had it at that transition's seq is fetched once
// (api/v1/namespaces/NS/PLURAL/NAME/at?seq=N) and shown beside it: the observed phase, the objects it owned
// and the decision in force. The scale ("time": wall time; "steps": every transition the same room), the
// kind and the namespace are kept in the URL, so a link shows the same view.
"use strict";

(() => {
  const PAGE = 500;
  const POLL_MS = 3000;
  const DEBOUNCE_MS = 250;
  const TICK_MS = 5000;
  const STREAM_RETRY_MS = 30000;
  const KNOWN_PHASES = ["Pending", "Running", "Outdated", "Failed", "Succeeded"];
  // Scale sets first, then what they own, in the order the controller builds it.
  const KINDS = ["AutoscalingRunnerSet", "EphemeralRunnerSet", "EphemeralRunner", "AutoscalingListener"];

  const state = {
    objects: new Map(), // uid -> {kind, namespace, name, uid, transitions: [item...]}
    seen: new Set(), // the key of every transition held (see add)
    lastSeq: 0,
    fetching: null,
    again: false,
    debounce: null,
    poller: null,
    stream: null,
    open: new Set(), // uids whose transition list is expanded
    selected: new Map(), // uid -> the seq of the transition clicked (default: the last one)
    at: new Map(), // "uid seq" -> {body} or {error}: the object at that seq, once fetched
    generation: 0, // bumped when the filters change: a fetch of an older generation is dropped
  };

  const $ = (id) => document.getElementById(id);

  function filters() {
    return { kind: $("kind").value, namespace: $("namespace").value.trim() };
  }

  // The last item of a deleted object's history: to null, trigger "deleted".
  function isEnd(item) {
    return item.to === null && item.trigger === "deleted";
  }

  function phaseLabel(item) {
    return isEnd(item) ? "deleted" : item.to || "(none)";
  }

  function phaseClass(phase) {
    if (phase === null) return "phase-deleted";
    if (!phase) return "phase-none";
    return KNOWN_PHASES.includes(phase) ? `phase-${phase.toLowerCase()}` : "phase-other";
  }

  function setStatus(kind, text) {
    const status = $("status");
    status.dataset.state = kind;
    status.textContent = text;
  }

  function formatTime(ms) {
    const d = new Date(ms);
    const pad = (n, w = 2) => String(n).padStart(w, "0");
    return `${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}.${pad(d.getMilliseconds(), 3)}`;
  }

  function formatRevisions(revisions) {
    if (!revisions || typeof revisions !== "object") return "";
    return Object.entries(revisions)
      .map(([key, value]) => `${key} ${value}`)
      .join(", ");
  }

  function describe(item) {
    const lines = [
      `${item.from || "(new)"} → ${isEnd(item) ? "(deleted)" : item.to || "(none)"}`,
      `trigger: ${item.trigger || "-"}`,
    ];
    if (item.reason) lines.push(`reason: ${item.reason}`);
    const revisions = formatRevisions(item.revisions);
    if (revisions) lines.push(`revisions: ${revisions}`);
    lines.push(`at ${item.at} (seq ${item.seq})`);
    if (item.source === "observed") lines.push("observed: decided by another replica");
    return lines.join("\n");
  }

  // -- fetching -----------------------------------------------------------------------------------------

  function phasesUrl(after) {
    const { kind, namespace } = filters();
    const query = new URLSearchParams({ after: String(after), limit: String(PAGE) });
    if (kind) query.set("kind", kind);
    if (namespace) query.set("namespace", namespace);
    return `api/v1/phases?${query}`;
  }

  function add(item) {
    // One decision (one seq) may record several transitions of an object, e.g. Outdated → Pending then
    // Pending → Pending when the runner spec is republished: the key is the whole transition.
    const key = JSON.stringify([item.seq, item.kind, item.namespace, item.name, item.from, item.to, item.trigger]);
    if (state.seen.has(key)) return false;
    state.seen.add(key);
    state.lastSeq = Math.max(state.lastSeq, item.seq);
    const uid = item.uid || `${item.kind}/${item.namespace}/${item.name}`;
    let object = state.objects.get(uid);
    if (!object) {
      object = { kind: item.kind, namespace: item.namespace, name: item.name, uid, transitions: [] };
      state.objects.set(uid, object);
    }
    object.transitions.push(item);
    return true;
  }

  async function fetchOnce() {
    const generation = state.generation;
    let after = state.lastSeq;
    let changed = false;
    for (;;) {
      const response = await fetch(phasesUrl(after), { headers: { Accept: "application/json" } });
      if (!response.ok) throw new Error(`GET api/v1/phases answered ${response.status}`);
      const page = await response.json();
      if (generation !== state.generation) return false;
      for (const item of page.items || []) changed = add(item) || changed;
      if (page.next === null || page.next === undefined || !(page.items || []).length) break;
      after = page.next;
    }
    return changed;
  }

  // One fetch at a time; a request while one runs makes it run once more when it ends.
  async function refresh() {
    if (state.fetching) {
      state.again = true;
      return state.fetching;
    }
    state.fetching = (async () => {
      try {
        do {
          state.again = false;
          if (await fetchOnce()) render();
        } while (state.again);
        if (!state.stream || state.stream.readyState !== EventSource.OPEN) startPolling();
        else setStatus("live", `live · last transition at seq ${state.lastSeq}`);
      } catch (error) {
        setStatus("error", `cannot read the phase history: ${error.message}; retrying`);
        startPolling();
      } finally {
        state.fetching = null;
      }
    })();
    return state.fetching;
  }

  function scheduleRefresh() {
    if (state.debounce) return;
    state.debounce = setTimeout(() => {
      state.debounce = null;
      refresh();
    }, DEBOUNCE_MS);
  }

  function startPolling() {
    if (!state.poller) state.poller = setInterval(refresh, POLL_MS);
    if ($("status").dataset.state !== "error") {
      setStatus("polling", `polling every ${POLL_MS / 1000} s · last transition at seq ${state.lastSeq}`);
    }
  }

  function stopPolling() {
    if (state.poller) clearInterval(state.poller);
    state.poller = null;
  }

  function streamUrl() {
    const { kind, namespace } = filters();
    const query = new URLSearchParams({ after: String(state.lastSeq) });
    query.append("type", "decision");
    query.append("type", "observed");
    for (const k of kind ? [kind] : KINDS) query.append("kind", k);
    if (namespace) query.set("namespace", namespace);
    return `api/v1/journal/stream?${query}`;
  }

  function connectStream() {
    if (typeof EventSource === "undefined") {
      startPolling();
      return;
    }
    if (state.stream) state.stream.close();
    const stream = new EventSource(streamUrl());
    state.stream = stream;
    stream.onopen = () => {
      stopPolling();
      setStatus("live", `live · last transition at seq ${state.lastSeq}`);
      scheduleRefresh(); // records may have landed between the last fetch and the stream opening
    };
    stream.onmessage = scheduleRefresh;
    stream.addEventListener("record", scheduleRefresh);
    stream.onerror = () => {
      if (state.stream !== stream) return; // replaced after a change of filters
      startPolling();
      if (stream.readyState === EventSource.CLOSED) {
        // The browser gave up (the endpoint is missing or refused): poll, and try the stream later.
        state.stream = null;
        setTimeout(() => {
          if (!state.stream) connectStream();
        }, STREAM_RETRY_MS);
      }
    };
  }

  // -- rendering ----------------------------------------------------------------------------------------

  function element(tag, attributes = {}, text) {
    const node = document.createElement(tag);
    for (const [key, value] of Object.entries(attributes)) {
      if (key === "dataset") Object.assign(node.dataset, value);
      else node.setAttribute(key, value);
    }
    if (text !== undefined) node.textContent = text;
    return node;
  }

  function renderLegend() {
    const legend = $("legend");
    const observed = element("li", { title: "a phase change this replica observed; another replica decided it" });
    observed.append(element("span", { class: "swatch phase-none observed" }), "observed");
    const deleted = element("li", { title: "the end of a deleted object's history" });
    deleted.append(element("span", { class: "swatch phase-deleted" }), "deleted");
    legend.replaceChildren(
      ...KNOWN_PHASES.map((phase) => {
        const li = element("li");
        li.append(element("span", { class: `swatch ${phaseClass(phase)}` }), phase);
        return li;
      }),
      observed,
      deleted,
    );
  }

  // Consecutive transitions into the same phase (a phase re-affirmed in place) make one segment.
  function runs(transitions) {
    const grouped = [];
    for (const item of transitions) {
      const last = grouped[grouped.length - 1];
      const same = last && !isEnd(item) && !isEnd(last[0]) && (last[0].to || "") === (item.to || "");
      if (same) last.push(item);
      else grouped.push([item]);
    }
    return grouped;
  }

  function renderBar(object, start, end) {
    const bar = element("div", { class: "bar" });
    const byTime = $("scale").value === "time";
    const grouped = runs(object.transitions);
    const first = Date.parse(grouped[0][0].at);
    if (byTime && first > start) {
      bar.append(element("div", { class: "spacer", style: `flex: ${first - start} 0 0` }));
    }
    grouped.forEach((run, i) => {
      const item = run[0];
      if (isEnd(item)) {
        // The object is gone: a fixed mark ends its bar, and the time after it is empty.
        const mark = { class: "end", title: describe(item), dataset: { trigger: "deleted", seq: String(item.seq) } };
        bar.append(selectable(element("div", mark, "✕"), object, item));
        const gone = Date.parse(item.at);
        if (byTime && end > gone) {
          bar.append(element("div", { class: "spacer", style: `flex: ${end - gone} 0 0` }));
        }
        return;
      }
      const from = Date.parse(item.at);
      const to = i + 1 < grouped.length ? Date.parse(grouped[i + 1][0].at) : end;
      const extra = run.length > 1 ? `\n(re-affirmed ${run.length - 1} more time${run.length > 2 ? "s" : ""})` : "";
      const segment = element(
        "div",
        {
          class: `segment ${phaseClass(item.to)}${item.source === "observed" ? " observed" : ""}`,
          style: `flex: ${byTime ? Math.max(to - from, 1) : 1} 0 0`,
          title: describe(item) + extra,
          dataset: {
            phase: item.to || "",
            trigger: item.trigger || "",
            seq: String(item.seq),
            source: item.source || "decided",
          },
        },
        phaseLabel(item),
      );
      bar.append(selectable(segment, object, item));
    });
    return bar;
  }

  function selectable(node, object, item) {
    if (selectedItem(object) === item) node.classList.add("selected");
    node.addEventListener("click", () => {
      state.selected.set(object.uid, item.seq);
      render();
    });
    return node;
  }

  function selectedItem(object) {
    const seq = state.selected.get(object.uid);
    const found = object.transitions.find((item) => item.seq === seq);
    return found || object.transitions[object.transitions.length - 1];
  }

  function atUrl(object, seq) {
    const path = [object.namespace, `${object.kind.toLowerCase()}s`, object.name].map(encodeURIComponent);
    return `api/v1/namespaces/${path[0]}/${path[1]}/${path[2]}/at?seq=${seq}`;
  }

  async function fetchAt(object, seq) {
    const key = `${object.uid} ${seq}`;
    if (state.at.has(key)) return;
    state.at.set(key, { loading: true });
    try {
      const response = await fetch(atUrl(object, seq));
      const body = await response.json();
      state.at.set(key, response.ok ? { body } : { error: body.detail || `HTTP ${response.status}` });
    } catch (error) {
      state.at.delete(key); // asked again on the next render
      return;
    }
    render();
  }

  // The selected transition's reason, and the object as the journal had it at that seq.
  function renderSelected(object) {
    const item = selectedItem(object);
    const panel = element("div", { class: "selection", dataset: { seq: String(item.seq) } });
    const arrow = `${item.from || "(new)"} → ${phaseLabel(item)}`;
    panel.append(
      element("p", { class: "selected-reason" }, `${formatTime(Date.parse(item.at))}  ${arrow}  ${item.trigger || "-"}: ${item.reason || ""}`),
    );
    const found = state.at.get(`${object.uid} ${item.seq}`);
    if (!found) fetchAt(object, item.seq);
    const at = element("div", { class: "at" });
    if (!found || found.loading) {
      at.append(element("span", { class: "muted" }, `reading the journal at seq ${item.seq}…`));
    } else if (found.error) {
      at.dataset.state = "absent";
      at.append(element("span", { class: "muted" }, found.error));
    } else {
      const body = found.body;
      at.dataset.state = "present";
      at.dataset.phase = body.phase || "";
      at.append(
        element("span", {}, `at seq ${body.seq}: observed ${body.phase || "(no phase)"} (seq ${body.observedSeq})`),
      );
      const children = body.children.map((c) => `${c.kind} ${c.name} ${c.phase || ""}`.trim());
      at.append(element("span", { class: "children" }, `owns: ${children.length ? children.join(", ") : "nothing"}`));
      const decision = body.decision;
      const line = decision
        ? `decision in force: seq ${decision.seq} ${decision.trigger || "(no transition)"}: ${decision.reason}` +
          ` (${decision.effects.length} effect${decision.effects.length === 1 ? "" : "s"})`
        : "decision in force: none (not decided by this replica)";
      at.append(element("span", { class: "decision", dataset: { trigger: decision ? decision.trigger || "" : "" } }, line));
    }
    panel.append(at);
    return panel;
  }

  function renderList(object) {
    const details = element("details", { dataset: { uid: object.uid } });
    if (state.open.has(object.uid)) details.open = true;
    details.addEventListener("toggle", () => {
      if (details.open) state.open.add(object.uid);
      else state.open.delete(object.uid);
    });
    const count = object.transitions.length;
    details.append(element("summary", {}, `${count} transition${count === 1 ? "" : "s"}`));
    const table = element("table", { class: "transitions" });
    const head = element("tr");
    for (const title of ["at", "from", "to", "trigger", "reason", "revisions", "source"]) {
      head.append(element("th", {}, title));
    }
    table.append(head);
    for (const item of object.transitions) {
      const source = item.source || "decided";
      const row = element("tr", { dataset: { seq: String(item.seq), phase: item.to || "", source } });
      if (isEnd(item)) row.classList.add("end");
      if (item.from && item.from === item.to) row.classList.add("reaffirmed");
      row.append(
        element("td", { title: item.at }, formatTime(Date.parse(item.at))),
        element("td", {}, item.from || "(new)"),
        element("td", { class: phaseClass(item.to).replace("phase-", "to-") }, phaseLabel(item)),
        element("td", {}, item.trigger || ""),
        element("td", { class: "reason" }, item.reason || ""),
        element("td", {}, formatRevisions(item.revisions)),
        element("td", { class: `source source-${source === "observed" ? "observed" : "decided"}` }, source),
      );
      table.append(row);
    }
    details.append(table);
    return details;
  }

  function render() {
    const objects = [...state.objects.values()].filter((o) => o.transitions.length);
    const kindOrder = (kind) => {
      const at = KINDS.indexOf(kind);
      return at < 0 ? KINDS.length : at;
    };
    objects.sort(
      (a, b) =>
        kindOrder(a.kind) - kindOrder(b.kind) ||
        a.kind.localeCompare(b.kind) ||
        a.namespace.localeCompare(b.namespace) ||
        a.name.localeCompare(b.name) ||
        a.transitions[0].seq - b.transitions[0].seq,
    );
    $("empty").hidden = objects.length > 0;
    if (!objects.length) {
      $("objects").replaceChildren();
      return;
    }
    const start = Math.min(...objects.map((o) => Date.parse(o.transitions[0].at)));
    const latest = Math.max(...objects.map((o) => Date.parse(o.transitions[o.transitions.length - 1].at)));
    const end = Math.max(Date.now(), latest + 1);
    const sections = objects.map((object) => {
      const last = object.transitions[object.transitions.length - 1];
      const section = element("section", {
        class: isEnd(last) ? "object deleted" : "object",
        dataset: { kind: object.kind, namespace: object.namespace, name: object.name, uid: object.uid },
      });
      const heading = element("h2");
      heading.append(
        element("span", { class: "name" }, `${object.namespace}/${object.name}`),
        element("span", { class: "kind" }, object.kind),
        element("span", { class: `current ${phaseClass(last.to)}`, title: describe(last) }, phaseLabel(last)),
      );
      const axis = element("div", { class: "axis" });
      axis.append(element("span", {}, formatTime(start)), element("span", {}, formatTime(end)));
      section.append(
        heading,
        element("div", { class: "uid" }, object.uid),
        renderBar(object, start, end),
        ...($("scale").value === "time" ? [axis] : []),
        renderSelected(object),
        renderList(object),
      );
      return section;
    });
    $("objects").replaceChildren(...sections);
  }

  // -- wiring -------------------------------------------------------------------------------------------

  function readFiltersFromUrl() {
    const query = new URLSearchParams(window.location.search);
    if (query.has("kind")) $("kind").value = query.get("kind");
    if (query.has("namespace")) $("namespace").value = query.get("namespace");
    if (query.get("scale") === "steps") $("scale").value = "steps";
  }

  function writeFiltersToUrl() {
    const { kind, namespace } = filters();
    const query = new URLSearchParams();
    if (kind !== "AutoscalingRunnerSet") query.set("kind", kind);
    if (namespace) query.set("namespace", namespace);
    if ($("scale").value !== "time") query.set("scale", $("scale").value);
    const search = query.toString();
    window.history.replaceState(null, "", search ? `?${search}` : window.location.pathname);
  }

  function resetAndRefresh() {
    state.generation += 1;
    state.objects.clear();
    state.seen.clear();
    state.lastSeq = 0;
    writeFiltersToUrl();
    render();
    refresh().then(() => {
      if (state.stream) connectStream(); // the stream's filters follow the page's
    });
  }

  document.addEventListener("DOMContentLoaded", () => {
    readFiltersFromUrl();
    renderLegend();
    $("kind").addEventListener("change", resetAndRefresh);
    $("namespace").addEventListener("change", resetAndRefresh);
    $("scale").addEventListener("change", () => {
      writeFiltersToUrl();
      render();
    });
    $("filters").addEventListener("submit", (event) => {
      event.preventDefault();
      resetAndRefresh();
    });
    refresh().then(connectStream);
    setInterval(render, TICK_MS); // the last segment of each bar grows with the clock
  });
})();
