// Following the journal: server-sent events of the records a view shows (api/v1/journal/stream, filtered
// by kind, type and namespace on the server), handed to the view in batches. The browser dispatches every
// event of a chunk it received in one task, so a burst of a thousand records arrives at once: an event
// only queues its text, and the queue is parsed and handed over a slice at a time (SLICE_MS of work, then
// the main thread is given back), so no burst holds the page. The status says "connecting" until the
// stream opens, "live" while it is open, "reconnecting" while the browser retries by itself; only once the
// browser gave up (the stream refused) does the view poll instead, and a new stream is tried later. A
// view applies a batch at once and coalesces what it must ask the server again (``Throttle``): never a
// request, nor a re-render of everything, per record.

import { setStatus } from "./format.js";

const POLL_MS = 5000;
const RETRY_MS = 30000;
const SLICE_MS = 8;

export class Follower {
  // ``query``: the stream's filters (URLSearchParams); ``onRecords(records)`` per batch, in journal order,
  // ``onRecords([])`` per poll while the stream is down; ``quiet``: leave the page's status alone (a
  // second stream).
  constructor(query, onRecords, { quiet = false } = {}) {
    this.query = query;
    this.onRecords = onRecords;
    this.quiet = quiet;
    this.source = null;
    this.poller = null;
    this.retry = null;
    this.after = 0;
    this.stopped = false;
    this.queue = []; // the text of records received, not yet handed over
    this.draining = false;
  }

  status(state, text) {
    if (!this.quiet) setStatus(state, text);
  }

  start(after) {
    this.after = Math.max(this.after, after || 0);
    if (typeof EventSource === "undefined") {
      this.poll();
      return;
    }
    const query = new URLSearchParams(this.query);
    query.set("after", String(this.after));
    this.status("connecting", "connecting to the journal stream…");
    const source = new EventSource(`api/v1/journal/stream?${query}`);
    this.source = source;
    source.onopen = () => {
      if (this.poller) clearInterval(this.poller);
      this.poller = null;
      this.status("live", "live");
    };
    source.addEventListener("record", (event) => {
      this.after = Math.max(this.after, Number(event.lastEventId) || 0);
      this.queue.push(event.data);
      if (!this.draining) {
        this.draining = true;
        setTimeout(() => this.drain(), 0);
      }
    });
    source.onerror = () => {
      if (this.source !== source || this.stopped) return;
      if (source.readyState === EventSource.CLOSED) {
        this.source = null;
        this.poll();
        this.retry = setTimeout(() => {
          if (!this.stopped && !this.source) this.start(this.after);
        }, RETRY_MS);
      } else {
        this.status("connecting", "reconnecting to the journal stream…");
      }
    };
  }

  // Parse and hand over the queued records for SLICE_MS at most, then give the main thread back.
  drain() {
    if (this.stopped) return;
    const began = performance.now();
    const batch = [];
    let taken = 0;
    while (taken < this.queue.length && performance.now() - began < SLICE_MS) {
      batch.push(JSON.parse(this.queue[taken]));
      taken += 1;
    }
    this.queue.splice(0, taken);
    this.onRecords(batch);
    if (this.queue.length) setTimeout(() => this.drain(), 0);
    else this.draining = false;
  }

  poll() {
    this.status("polling", `the journal stream is refused: polling every ${POLL_MS / 1000} s`);
    if (!this.poller) this.poller = setInterval(() => this.onRecords([]), POLL_MS);
  }

  stop() {
    this.stopped = true;
    if (this.source) this.source.close();
    if (this.poller) clearInterval(this.poller);
    if (this.retry) clearTimeout(this.retry);
    this.source = this.poller = this.retry = null;
  }
}

// Run ``work`` at most once per ``ms``, one run at a time; asks while it runs make one more run after.
export class Throttle {
  constructor(work, ms) {
    this.work = work;
    this.ms = ms;
    this.timer = null;
    this.running = false;
    this.again = false;
    this.last = 0;
  }

  ask() {
    if (this.running) {
      this.again = true;
      return;
    }
    if (this.timer) return;
    const wait = Math.max(0, this.last + this.ms - performance.now());
    this.timer = setTimeout(() => this.run(), wait);
  }

  async run() {
    this.timer = null;
    this.running = true;
    this.last = performance.now();
    try {
      await this.work();
    } catch (error) {
      setStatus("error", `cannot read the API: ${error.message}; retrying`);
      this.again = true;
    } finally {
      this.running = false;
    }
    if (this.again) {
      this.again = false;
      this.ask();
    }
  }

  cancel() {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.again = false;
  }
}
