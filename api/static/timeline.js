// The timeline page: the fleet first (fleet.js), a scale set with its runner set, runners and listener
// next (scaleset.js), each object's phases over time (history.js, bar.js). The view and its filters live
// in the URL (?scaleset=NAMESPACE/NAME, ?namespace=&search=&phase=&ready=&order=, &scale=steps), so a
// link shows the same view; the back button goes back. Times are UTC, with the zone shown.
//
// Nothing here writes; every list is paged and filtered by the server, and only the rows on screen are
// drawn (windowed.js); the journal stream (stream.js) brings what changes.

import { ScaleSetView } from "./scaleset.js";
import { FleetView } from "./fleet.js";
import { el } from "./format.js";

const settings = { scale: "time" };
let current = null;

function navigate(search) {
  window.history.pushState(null, "", search || window.location.pathname);
  route();
  window.scrollTo(0, 0);
}

function crumbs(target) {
  const nav = document.getElementById("crumbs");
  const fleet = el("a", { href: "./", text: "fleet" });
  fleet.addEventListener("click", (event) => {
    if (event.ctrlKey || event.metaKey || event.shiftKey || event.button !== 0) return;
    event.preventDefault();
    navigate("");
  });
  nav.replaceChildren(fleet, ...(target ? [" › ", el("span", { "aria-current": "page", text: target })] : []));
}

function route() {
  const query = new URLSearchParams(window.location.search);
  settings.scale = query.get("scale") === "steps" ? "steps" : "time";
  if (current) current.stop();
  const target = query.get("scaleset");
  if (target && target.includes("/")) {
    const slash = target.indexOf("/");
    const namespace = target.slice(0, slash);
    const name = target.slice(slash + 1);
    current = new ScaleSetView({ namespace, name, settings, navigate });
    document.title = `arcsm — ${target}`;
  } else {
    current = new FleetView({ query, navigate });
    document.title = "arcsm — fleet";
  }
  crumbs(target);
  document.body.dataset.view = target ? "scaleset" : "fleet";
  document.getElementById("main").replaceChildren(current.node);
  current.start();
}

document.addEventListener("DOMContentLoaded", () => {
  window.addEventListener("popstate", route);
  route();
});
