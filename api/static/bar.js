// One object's phase bar: a segment per phase it was in, from its first transition to now (or to its
// deletion, a fixed end mark). On the "wall time" scale a segment's width is its share of the time; a
// phase held too briefly to see gets a sliver (SLIVER_PX), taken from the others in proportion, so nine
// seconds of flapping in thirteen minutes stay nine seconds wide. On the "steps" scale each segment has
// the same room. Each segment is a button with its phase as text and as a pattern (colour is never the
// only sign), and the bar is one tab stop: the arrow keys, Home and End move between segments and select
// them, as a click does.

import { duration, el, isEnd, phaseClass, phaseWord, utc } from "./format.js";

const SLIVER_PX = 3;

// Consecutive transitions into the same phase make one segment.
export function runs(items) {
  const grouped = [];
  for (const item of items) {
    const last = grouped[grouped.length - 1];
    const same = last && !isEnd(item) && !isEnd(last[0]) && (last[0].to || "") === (item.to || "");
    if (same) last.push(item);
    else grouped.push([item]);
  }
  return grouped;
}

// Widths in percent of the bar for spans of ``times`` (ms): proportional, slivers made visible.
export function widths(times, barPx) {
  const total = times.reduce((sum, t) => sum + t, 0);
  if (!total) return times.map(() => 100 / Math.max(1, times.length));
  const sliver = (SLIVER_PX / Math.max(barPx, 1)) * 100;
  const share = times.map((t) => (t / total) * 100);
  const small = share.map((s) => s < sliver);
  const taken = small.filter(Boolean).length * sliver;
  const rest = share.reduce((sum, s, i) => sum + (small[i] ? 0 : s), 0);
  if (!rest || taken >= 100) return times.map(() => 100 / times.length);
  return share.map((s, i) => (small[i] ? sliver : (s / rest) * (100 - taken)));
}

function label(item, from, to) {
  const span = Number.isFinite(to - from) ? ` for ${duration(to - from)}` : "";
  const source = item.source === "observed" ? " (observed: another replica decided it)" : "";
  return `${phaseWord(item.to)} from ${utc(from)}${span}; ${item.trigger || "no trigger"}: ${item.reason || ""}${source}`;
}

// The bar for ``items`` (oldest first). ``end``: ms the last phase lasts until; ``selected``: the item
// shown; ``onSelect(item)`` when another is chosen.
export function phaseBar(items, { end, scale, selected, onSelect, name }) {
  const bar = el("div", { class: "bar", role: "toolbar", "aria-label": `${name}: phases over time` });
  if (!items.length) return bar;
  const grouped = runs(items);
  const starts = grouped.map((run) => Date.parse(run[0].at));
  const spans = grouped.map((run, i) => {
    if (isEnd(run[0])) return 0;
    const until = i + 1 < grouped.length ? starts[i + 1] : end;
    return Math.max(0, until - starts[i]);
  });
  const live = grouped.filter((run) => !isEnd(run[0]));
  const shares =
    scale === "steps"
      ? live.map(() => 100 / live.length)
      : widths(
          spans.filter((_, i) => !isEnd(grouped[i][0])),
          bar.clientWidth || document.body.clientWidth || 800,
        );
  const buttons = [];
  let k = 0;
  grouped.forEach((run, i) => {
    const item = run[0];
    const chosen = run.includes(selected);
    const common = {
      type: "button",
      tabindex: chosen ? "0" : "-1",
      "aria-pressed": String(chosen),
      dataset: { seq: String(item.seq), trigger: item.trigger || "", source: item.source || "decided" },
    };
    let node;
    if (isEnd(item)) {
      node = el("button", {
        ...common,
        class: `end${chosen ? " selected" : ""}`,
        "aria-label": `deleted at ${utc(item.at)}: ${item.reason || ""}`,
        title: `deleted at ${utc(item.at)}\n${item.reason || ""}`,
        text: "✕",
      });
      node.dataset.trigger = "deleted";
    } else {
      const text = label(item, starts[i], i + 1 < grouped.length ? starts[i + 1] : end);
      const again = run.length > 1 ? ` (re-affirmed ${run.length - 1} more times)` : "";
      node = el("button", {
        ...common,
        class: `segment ${phaseClass(item.to)}${item.source === "observed" ? " observed" : ""}${chosen ? " selected" : ""}`,
        style: `width: ${shares[k].toFixed(4)}%`,
        "aria-label": text + again,
        title: text + again,
        text: phaseWord(item.to),
      });
      node.dataset.phase = item.to || "";
      k += 1;
    }
    node.addEventListener("click", () => onSelect(run[run.length - 1]));
    buttons.push([node, run[run.length - 1]]);
    bar.append(node);
  });
  if (!buttons.some(([node]) => node.tabIndex === 0)) buttons[buttons.length - 1][0].tabIndex = 0;
  bar.addEventListener("keydown", (event) => {
    const at = buttons.findIndex(([node]) => node === document.activeElement);
    const moves = { ArrowRight: at + 1, ArrowLeft: at - 1, Home: 0, End: buttons.length - 1 };
    if (at < 0 || !(event.key in moves)) return;
    event.preventDefault();
    const next = Math.max(0, Math.min(buttons.length - 1, moves[event.key]));
    onSelect(buttons[next][1], { focus: true });
  });
  return bar;
}

export function axis(start, end) {
  return el("div", { class: "axis" }, el("span", { text: utc(start) }), el("span", { text: utc(end) }));
}
