// What the page says, and how: times in UTC with the zone shown, phases with a word and a pattern (never
// by colour alone), DOM nodes built with text only (strings from the server never reach the DOM as HTML).

export const PHASES = ["Pending", "Running", "Outdated", "Failed", "Succeeded"];

// An RFC 3339 time as the API gives it, in UTC with milliseconds: 2026-12-01T23:25:38.123Z.
export function utc(at) {
  const ms = typeof at === "number" ? at : Date.parse(at);
  return Number.isFinite(ms) ? new Date(ms).toISOString() : String(at || "");
}

// The short form for a cell: 2026-12-01 23:25 UTC (the full time in its title).
export function shortUtc(at) {
  const full = utc(at);
  return full.length >= 16 ? `${full.slice(0, 10)} ${full.slice(11, 16)} UTC` : full;
}

// A duration as people read it: 9 s, 13 min, 2 h 05 min, 3 d 4 h.
export function duration(ms) {
  const s = Math.max(0, Math.round(ms / 1000));
  if (s < 90) return `${s} s`;
  const min = Math.round(s / 60);
  if (min < 90) return `${min} min`;
  const h = Math.floor(min / 60);
  if (h < 48) return `${h} h ${String(min % 60).padStart(2, "0")} min`;
  return `${Math.floor(h / 24)} d ${h % 24} h`;
}

export function phaseClass(phase) {
  if (phase === null) return "phase-deleted";
  if (!phase) return "phase-none";
  return PHASES.includes(phase) ? `phase-${phase.toLowerCase()}` : "phase-other";
}

export function phaseWord(phase) {
  if (phase === null) return "deleted";
  return phase || "no phase yet";
}

// The last item of a deleted object's history: to null, trigger "deleted".
export function isEnd(item) {
  return item.to === null && item.trigger === "deleted";
}

// A node with attributes (dataset as an object) and text.
export function el(tag, attributes = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attributes)) {
    if (value === undefined || value === null || value === false) continue;
    if (key === "dataset") Object.assign(node.dataset, value);
    else if (key === "text") node.textContent = value;
    else node.setAttribute(key, value === true ? "" : String(value));
  }
  for (const child of children) {
    if (child !== null && child !== undefined && child !== false) node.append(child);
  }
  return node;
}

// A phase badge: its word on a coloured, patterned ground (null: deleted; "": no phase yet).
export function badge(phase, extra = "") {
  return el("span", { class: `badge ${phaseClass(phase)} ${extra}`.trim(), text: phaseWord(phase) });
}

// A condition as a short line: "Ready: False — RunnersRejectedSpec".
export function conditionLine(condition, name) {
  if (!condition) return `${name}: not reported`;
  const reason = condition.reason ? ` — ${condition.reason}` : "";
  return `${name}: ${condition.status}${reason}`;
}

export function kindWord(kind) {
  return (
    {
      AutoscalingRunnerSet: "scale set",
      EphemeralRunnerSet: "runner set",
      EphemeralRunner: "runner",
      AutoscalingListener: "listener",
    }[kind] || kind
  );
}

// The transition in plain words: "went from Running to Outdated: <reason>".
export function story(item) {
  const what = kindWord(item.kind);
  if (isEnd(item)) return `The ${what} was deleted: ${item.reason || "its history ends here"}.`;
  const from = item.from ? `went from ${item.from} to ${item.to}` : `started in ${item.to}`;
  const reason = item.reason ? `: ${item.reason}` : "";
  const who =
    item.source === "observed" ? " Another replica decided it; this one saw the status change." : "";
  return `The ${what} ${from}${reason}.${who}`;
}

export function plural(count, word) {
  return `${count} ${word}${count === 1 ? "" : "s"}`;
}

export function setStatus(state, text) {
  const status = document.getElementById("status");
  status.dataset.state = state;
  status.textContent = text;
}
