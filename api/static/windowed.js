// A windowed list: only the rows on screen (and a few either side) exist in the DOM, and only the pages
// of items they show are fetched, so a list of 20,000 runners costs what a screenful costs. The server
// pages and filters (fetchPage(offset, limit) answers {total, items}); at most MAX_PAGES pages are kept,
// the least recently used dropped first, so memory does not grow with the list.
//
// Rows have one height, measured from a rendered row (it changes with the window's width: narrow
// layouts stack a row's fields). refresh() asks the server again for the pages on screen and updates the
// rows whose item changed, in place; patch() changes items already held without asking. Keyboard: the
// list is one tab stop (role listbox); the arrow keys, Page Up/Down, Home and End move the active row,
// Enter opens it.

import { el } from "./format.js";

const PAGE = 50;
const MAX_PAGES = 20;
const OVERSCAN = 6;

let lists = 0;

export class WindowedList {
  constructor({ label, fetchPage, renderRow, onOpen, empty }) {
    this.id = `list-${(lists += 1)}`;
    this.fetchPage = fetchPage;
    this.renderRow = renderRow; // (item, index) -> element; (null, index) for a row not loaded yet
    this.onOpen = onOpen;
    this.total = 0;
    this.loaded = false;
    this.pages = new Map(); // page number -> items, in order of use (oldest first)
    this.fetching = new Map(); // page number -> promise
    this.rows = new Map(); // index -> {node, text}
    this.generation = 0;
    this.active = -1;
    this.rowHeight = 0;
    this.placedAt = 0; // the row height the rows on screen were placed with
    this.viewport = el("div", {
      class: "window",
      id: this.id,
      tabindex: "0",
      role: "listbox",
      "aria-label": label,
    });
    this.spacer = el("div", { class: "window-spacer" });
    this.empty = el("p", { class: "window-empty muted", text: empty, hidden: true });
    this.viewport.append(this.spacer);
    this.node = el("div", { class: "window-frame" }, this.viewport, this.empty);
    let scheduled = false;
    this.viewport.addEventListener("scroll", () => {
      if (scheduled) return;
      scheduled = true;
      requestAnimationFrame(() => {
        scheduled = false;
        this.render();
      });
    });
    this.viewport.addEventListener("keydown", (event) => this.key(event));
    this.viewport.addEventListener("click", (event) => this.click(event));
    if (typeof ResizeObserver !== "undefined") {
      let width = 0;
      new ResizeObserver(() => {
        if (this.viewport.clientWidth === width) return;
        width = this.viewport.clientWidth;
        this.rowHeight = 0; // measured again: a narrow window stacks a row's fields
        this.render();
      }).observe(this.viewport);
    }
  }

  // Forget every item (the filters changed) and show the top of the list.
  reset() {
    this.generation += 1;
    this.pages.clear();
    this.fetching.clear();
    for (const { node } of this.rows.values()) node.remove();
    this.rows.clear();
    this.total = 0;
    this.loaded = false;
    this.active = -1;
    this.viewport.scrollTop = 0;
    this.viewport.removeAttribute("aria-activedescendant");
  }

  item(index) {
    const items = this.pages.get(Math.floor(index / PAGE));
    return items ? items[index % PAGE] : undefined;
  }

  // Fetch a page unless held or on its way; keep MAX_PAGES, dropping those used longest ago.
  async ensure(page, { again = false } = {}) {
    if (!again && this.pages.has(page)) {
      const items = this.pages.get(page);
      this.pages.delete(page);
      this.pages.set(page, items); // most recently used last
      return;
    }
    if (this.fetching.has(page)) return this.fetching.get(page);
    const generation = this.generation;
    const promise = (async () => {
      try {
        const answer = await this.fetchPage(page * PAGE, PAGE);
        if (generation !== this.generation) return;
        this.total = answer.total;
        this.loaded = true;
        this.pages.delete(page);
        this.pages.set(page, answer.items);
        for (const old of this.pages.keys()) {
          if (this.pages.size <= MAX_PAGES) break;
          if (!this.onScreen(old)) this.pages.delete(old);
        }
      } finally {
        if (generation === this.generation) this.fetching.delete(page);
      }
      this.render();
    })();
    this.fetching.set(page, promise);
    return promise;
  }

  onScreen(page) {
    const [first, last] = this.range();
    return page >= Math.floor(first / PAGE) && page <= Math.floor(last / PAGE);
  }

  // Ask again for the pages on screen (the list changed on the server); other pages are dropped.
  async refresh() {
    if (!this.loaded) return this.ensure(0);
    const [first, last] = this.range();
    const wanted = new Set();
    for (let page = Math.floor(first / PAGE); page <= Math.floor(Math.max(first, last) / PAGE); page += 1) {
      wanted.add(page);
    }
    for (const page of [...this.pages.keys()]) if (!wanted.has(page)) this.pages.delete(page);
    await Promise.all([...wanted].map((page) => this.ensure(page, { again: true })));
  }

  // Change the held items ``match`` selects (fn returns the new item); rows on screen follow.
  patch(match, fn) {
    let found = false;
    for (const items of this.pages.values()) {
      items.forEach((item, i) => {
        if (item && match(item)) {
          items[i] = fn(item);
          found = true;
        }
      });
    }
    if (found) this.render();
    return found;
  }

  measure() {
    if (this.rowHeight) return this.rowHeight;
    const probe = this.renderRow(this.item(0) || null, 0);
    probe.style.visibility = "hidden";
    this.viewport.append(probe);
    this.rowHeight = probe.offsetHeight || 40;
    probe.remove();
    return this.rowHeight;
  }

  range() {
    const height = this.rowHeight || 40;
    const first = Math.max(0, Math.floor(this.viewport.scrollTop / height) - OVERSCAN);
    const shown = Math.ceil((this.viewport.clientHeight || height * 10) / height);
    const last = Math.min(this.total - 1, first + shown + 2 * OVERSCAN);
    return [first, last];
  }

  render() {
    this.empty.hidden = !this.loaded || this.total > 0;
    this.viewport.hidden = this.loaded && this.total === 0;
    if (!this.total) {
      for (const { node } of this.rows.values()) node.remove();
      this.rows.clear();
      return;
    }
    const height = this.measure();
    if (height !== this.placedAt) {
      for (const { node } of this.rows.values()) node.remove(); // placed for another row height
      this.rows.clear();
      this.placedAt = height;
    }
    this.spacer.style.height = `${this.total * height}px`;
    const [first, last] = this.range();
    for (const [index, { node }] of this.rows) {
      if (index < first || index > last) {
        node.remove();
        this.rows.delete(index);
      }
    }
    for (let index = first; index <= last; index += 1) {
      const page = Math.floor(index / PAGE);
      if (!this.pages.has(page)) this.ensure(page);
      const item = this.item(index);
      const text = item === undefined ? "" : JSON.stringify(item);
      const held = this.rows.get(index);
      if (held && held.text === text) continue;
      const node = this.renderRow(item || null, index);
      node.id = `${this.id}-${index}`;
      node.setAttribute("role", "option");
      node.dataset.index = String(index);
      node.classList.add("window-row");
      node.classList.toggle("active", index === this.active);
      node.setAttribute("aria-selected", String(index === this.active));
      node.style.transform = `translateY(${index * height}px)`;
      if (held) held.node.replaceWith(node);
      else this.viewport.append(node);
      this.rows.set(index, { node, text });
    }
  }

  setActive(index) {
    if (!this.total) return;
    const next = Math.max(0, Math.min(this.total - 1, index));
    const old = this.rows.get(this.active);
    if (old) {
      old.node.classList.remove("active");
      old.node.setAttribute("aria-selected", "false");
    }
    this.active = next;
    const height = this.measure();
    const top = next * height;
    if (top < this.viewport.scrollTop) this.viewport.scrollTop = top;
    else if (top + height > this.viewport.scrollTop + this.viewport.clientHeight) {
      this.viewport.scrollTop = top + height - this.viewport.clientHeight;
    }
    this.render();
    const row = this.rows.get(next);
    if (row) {
      row.node.classList.add("active");
      row.node.setAttribute("aria-selected", "true");
    }
    this.viewport.setAttribute("aria-activedescendant", `${this.id}-${next}`);
  }

  key(event) {
    const height = this.measure();
    const screen = Math.max(1, Math.floor(this.viewport.clientHeight / height) - 1);
    const moves = {
      ArrowDown: this.active + 1,
      ArrowUp: this.active - 1,
      PageDown: this.active + screen,
      PageUp: this.active - screen,
      Home: 0,
      End: this.total - 1,
    };
    if (event.key in moves) {
      event.preventDefault();
      this.setActive(this.active < 0 && event.key !== "End" ? 0 : moves[event.key]);
    } else if (event.key === "Enter" || event.key === " ") {
      const item = this.item(this.active);
      if (item) {
        event.preventDefault();
        this.onOpen(item, this.rows.get(this.active)?.node);
      }
    }
  }

  click(event) {
    const row = event.target.closest(".window-row");
    if (!row) return;
    const link = event.target.closest("a");
    if (link && (event.ctrlKey || event.metaKey || event.shiftKey || event.button !== 0)) return;
    const index = Number(row.dataset.index);
    const item = this.item(index);
    if (!item) return;
    event.preventDefault();
    this.active = index;
    this.viewport.setAttribute("aria-activedescendant", row.id);
    this.onOpen(item, row);
  }
}
