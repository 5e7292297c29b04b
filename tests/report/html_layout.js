// The layout checks of test_html_layout.py, run by headless Chromium in a page of pages: each report page
// sits in an <iframe srcdoc> of the width under test (its viewport), and once all have loaded this script
// writes what it found, per page and width, as JSON into <pre id="result">, which --dump-dom prints.
"use strict";

const CHARTS = ["whatif", "busy", "breakdown", "idle", "overlap", "kernel-types", "top-kernels", "roofline",
                "launch-delay", "queue", "membw", "critical-path", "lateness"];
const TOL = 1; // px: rounding of sub-pixel layouts
// a number written with an exponent: 1.52e+03, 2e-05 (a word such as a kernel's name_1e5 is no number)
const EXPONENT = /(^|[^\w.])[-+]?\d+(\.\d+)?[eE][-+]?\d+(?![\w.])/;

function short(el) {
  const id = el.id ? "#" + el.id : "";
  const cls = el.getAttribute && el.getAttribute("class") ? "." + el.getAttribute("class").split(" ")[0] : "";
  const text = (el.textContent || "").trim().slice(0, 40);
  return el.tagName.toLowerCase() + id + cls + (text ? " '" + text + "'" : "");
}

function inside(a, b) {
  return a.left >= b.left - TOL && a.right <= b.right + TOL && a.top >= b.top - TOL && a.bottom <= b.bottom + TOL;
}

function overlap(a, b) {
  return Math.min(a.right, b.right) - Math.max(a.left, b.left) > TOL &&
         Math.min(a.bottom, b.bottom) - Math.max(a.top, b.top) > TOL;
}

// The problems of one report page laid out in frame (its window and document).
function check(win, doc) {
  const out = [];
  const root = doc.documentElement;
  if (root.scrollWidth > root.clientWidth + TOL)
    out.push("the page scrolls sideways: " + root.scrollWidth + " px of content in " + root.clientWidth);
  // HTML boxes: none wider than its content box allows, none beyond its parent or the viewport; a box
  // that scrolls by design (class scroll: the wide tables) may hold more than it shows, within itself
  for (const el of doc.body.querySelectorAll("*")) {
    if (el instanceof win.SVGElement && el.tagName.toLowerCase() !== "svg") continue;
    const cs = win.getComputedStyle(el);
    if (cs.display === "inline" || cs.display === "none" || el.tagName === "WBR" || el.tagName === "BR") continue;
    const scroller = el.closest(".scroll");
    if (scroller === el) {
      if (cs.overflowX !== "auto" && cs.overflowX !== "scroll") out.push("does not scroll: " + short(el));
    } else if (el.clientWidth > 0 && el.scrollWidth > el.clientWidth + TOL && el.tagName !== "svg") {
      out.push("content wider than its box (" + el.scrollWidth + " > " + el.clientWidth + "): " + short(el));
    }
    const r = el.getBoundingClientRect();
    if (r.width === 0 && r.height === 0) continue;
    if (scroller && scroller !== el) continue; // seen through the scrolling box, which is checked itself
    const p = el.parentElement.getBoundingClientRect();
    if (r.left < p.left - TOL || r.right > p.right + TOL)
      out.push("beyond its container (" + Math.round(r.left) + ".." + Math.round(r.right) + " in " +
               Math.round(p.left) + ".." + Math.round(p.right) + "): " + short(el));
    if (r.left < -TOL || r.right > root.clientWidth + TOL)
      out.push("beyond the viewport (" + Math.round(r.right) + " > " + root.clientWidth + "): " + short(el));
  }
  // charts: every one there, drawn or said why not; inside each, all text within the drawing (an SVG
  // clips what runs past its edge), legends whole, labels one per bar, at least one mark
  for (const id of CHARTS) {
    const svg = doc.getElementById("chart-" + id), why = doc.getElementById("chart-" + id + "-empty");
    if (!svg && !why) out.push("chart " + id + " neither drawn nor said why");
    if (svg && why) out.push("chart " + id + " drawn and said empty");
    if (why && why.textContent.trim().length < 20) out.push("chart " + id + " empty without a reason");
  }
  for (const svg of doc.querySelectorAll("svg.chart")) {
    const box = svg.getBoundingClientRect(), name = svg.id;
    for (const t of svg.querySelectorAll("text")) {
      const r = t.getBoundingClientRect();
      if (r.width > 0 && !inside(r, box)) out.push(name + ": text cut at the chart's edge: " + short(t));
    }
    for (const g of svg.querySelectorAll("g.legend")) {
      const items = [...g.querySelectorAll("text, rect")].map(e => [e, e.getBoundingClientRect()]);
      for (let i = 0; i < items.length; i++)
        for (let j = i + 1; j < items.length; j++)
          if (overlap(items[i][1], items[j][1]))
            out.push(name + ": legend entries overlap: " + short(items[i][0]) + " / " + short(items[j][0]));
    }
    const lbs = [...svg.querySelectorAll("text.lb")].map(t => [t, t.getBoundingClientRect()]);
    for (let i = 0; i < lbs.length; i++) // labels in order: a neighbour overlaps, if any does
      for (let j = i + 1; j < lbs.length && j < i + 4; j++)
        if (overlap(lbs[i][1], lbs[j][1]))
          out.push(name + ": labels overlap: " + short(lbs[i][0]) + " / " + short(lbs[j][0]));
    const labels = lbs.map(([t]) => t.textContent);
    const seen = new Set();
    for (const l of labels) {
      if (seen.has(l)) out.push(name + ": two bars labelled '" + l + "'");
      seen.add(l);
    }
    let marks = 0;
    for (const m of svg.querySelectorAll("rect, path, circle")) {
      if (m.closest("g.legend") || m.closest("defs")) continue;
      const c = m.getAttribute("class") || "";
      if (c === "ax" || c === "st" || c === "fr") continue;
      const r = m.getBoundingClientRect(), cs = win.getComputedStyle(m);
      if (r.width > 0 && r.height > 0 && (cs.fill !== "none" || cs.stroke !== "none")) marks++;
    }
    if (!marks) out.push(name + ": drawn without a mark (an empty chart)");
  }
  const late = doc.getElementById("chart-lateness");
  if (late && late.querySelectorAll("text.lb").length < 2) out.push("a straggler heat map of fewer than 2 ranks");
  // numbers: never an exponent, never step "#-1"; in the text, the tooltips (<title>) and title attributes
  const texts = [];
  const walk = doc.createTreeWalker(doc.body, win.NodeFilter.SHOW_TEXT);
  while (walk.nextNode()) texts.push(walk.currentNode.nodeValue);
  for (const el of doc.querySelectorAll("[title]")) texts.push(el.getAttribute("title"));
  for (const s of texts) {
    const m = EXPONENT.exec(s);
    if (m) out.push("a number with an exponent: '" + s.slice(Math.max(0, m.index - 30), m.index + 30) + "'");
    if (s.includes("#-1")) out.push("a step named #-1");
  }
  return out;
}

window.addEventListener("load", () => {
  const res = [];
  for (const f of document.querySelectorAll("iframe")) {
    let problems;
    try {
      problems = check(f.contentWindow, f.contentDocument);
    } catch (e) {
      problems = ["the check failed: " + e];
    }
    res.push({page: f.dataset.page, width: +f.dataset.width, problems: problems});
  }
  document.getElementById("result").textContent = JSON.stringify(res);
});
