// The Annotate tab: the pasted text sent to POST /v1/annotate, shown back with each concept
// found as a <mark>. A mark is focusable (Tab moves between them in text order); its concept,
// flags and ranked candidates are in a tooltip that it names with aria-describedby, shown
// while the mark has focus or the pointer is over the mark or its tooltip, one tooltip at a
// time; Escape hides it, however it was shown (WCAG 1.4.13). Each mark, and every text of the
// document or the KG in a tooltip, is a bidi isolate (style.css, <bdi>): a direction control
// in the document (an RLO) never reverses a mark, nor leaks out of one. Negated concepts are
// struck through; hypothetical, historical and family ones carry a badge. The tooltip shows the
// chosen concept's vocabulary attributes (attributeSummary, attributes.js). Uses el/errorText
// (dom.js) and call (app.js).
"use strict";

const FLAGS = ["negated", "hypothetical", "historical", "family"];

// A text of the document or the KG, isolated from the bidi controls around it and in it.
const isolated = (text) => el("bdi", {}, text);

function tipFor(a, id) {
  const flags = FLAGS.filter((f) => a[f]);
  const list = el("ol", { class: "tip-candidates" });
  for (const c of a.candidates) {
    list.append(el("li", {}, isolated(c.name), " ", el("bdi", { class: "id" }, c.concept_id),
      ` · ${c.score.toFixed(3)}`));
  }
  const expanded = a.provenance.expanded_from
    ? [" · expanded from “", isolated(a.provenance.expanded_from), "”"] : [];
  const chosen = a.candidates.find((c) => c.concept_id === a.concept_id);
  const attributes = chosen ? attributeSummary(chosen.attributes, `${id}-attributes`) : null;
  return el(
    "span", { id, role: "tooltip", class: "tip", hidden: "" },
    el("strong", {}, isolated(a.name)), " ", el("bdi", { class: "id" }, a.concept_id),
    ` · score ${a.score.toFixed(3)}${flags.length ? " · " + flags.join(", ") : ""}`,
    ...(attributes ? [attributes] : []),
    el("span", { class: "tip-note" }, "matched “", isolated(a.provenance.matched_term),
      `” (${a.provenance.detector})`, ...expanded),
    el("span", { class: "tip-title" }, "Candidates:"),
    list,
  );
}

// The tooltip shown, if any: one at a time, so a focused mark's and a pointed-at mark's never
// stack over the text.
let shownTip = null;

function showTip(tip) {
  if (shownTip && shownTip !== tip) shownTip.hidden = true;
  tip.hidden = false;
  shownTip = tip;
}

function hideTip(tip) {
  tip.hidden = true;
  if (shownTip === tip) shownTip = null;
}

function markFor(a, text, n) {
  const tipId = `annotation-tip-${n}`;
  const tip = tipFor(a, tipId);
  const flags = FLAGS.filter((f) => a[f]);
  const mark = el(
    "mark",
    { tabindex: "0", class: ["concept", ...flags].join(" "), "data-concept": a.concept_id,
      "data-name": a.name, "aria-describedby": tipId },
    text.slice(a.start, a.end),
  );
  const badges = flags.filter((f) => f !== "negated")
    .map((f) => el("span", { class: `badge ${f}`, "aria-hidden": "true" }, f));
  const annotation = el("span", { class: "annotation" }, mark, ...badges, tip);
  mark.addEventListener("focus", () => showTip(tip));
  mark.addEventListener("blur", () => hideTip(tip));
  // the whole annotation, its tooltip included: the pointer can move onto the tooltip
  annotation.addEventListener("mouseenter", () => showTip(tip));
  annotation.addEventListener("mouseleave", () => {
    if (document.activeElement !== mark) hideTip(tip);
  });
  return annotation;
}

// Offsets are code points (the service's, Python's); JavaScript strings index UTF-16 units.
function toUnits(text, annotations) {
  const units = [];
  let unit = 0;
  for (const ch of text) { units.push(unit); unit += ch.length; }
  units.push(unit);
  return annotations.map((a) => ({ ...a, start: units[a.start], end: units[a.end] }));
}

function showAnnotated(text, annotations) {
  const out = $("annotated");
  const nodes = [];
  let at = 0;
  toUnits(text, annotations).forEach((a, n) => {
    if (a.start < at) return;  // never overlapping: the service merges the spans
    nodes.push(text.slice(at, a.start), markFor(a, text, n));
    at = a.end;
  });
  nodes.push(text.slice(at));
  shownTip = null;  // the old marks' tooltips go with them
  out.replaceChildren(...nodes);
  out.hidden = false;
}

async function annotateText(event) {
  event.preventDefault();
  const text = $("annotate-text").value;
  const result = $("annotate-result");
  const error = $("annotate-error");
  error.hidden = true;
  $("annotated").hidden = true;
  if (!text.trim()) { result.textContent = "Paste a text to annotate first."; return; }
  $("annotate-button").disabled = true;
  result.textContent = "Annotating…";
  try {
    const body = await call("/v1/annotate", {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ documents: [{ id: "text", text }], k: 5 }),
    });
    const doc = body.results[0];
    if (doc.error) throw new Error(doc.error);
    showAnnotated(text, doc.annotations);
    const n = doc.annotations.length;
    result.textContent = n ? `${n} concept${n === 1 ? "" : "s"} found; Tab moves between them.`
      : "No concept found.";
  } catch (e) {
    result.textContent = "";
    error.textContent = `Not annotated: ${e.message}`;
    error.hidden = false;
  } finally {
    $("annotate-button").disabled = false;
  }
}

document.addEventListener("DOMContentLoaded", () => {
  $("annotate-form").addEventListener("submit", annotateText);
  document.addEventListener("keydown", (event) => {  // wherever the focus is
    if (event.key === "Escape" && shownTip) hideTip(shownTip);
  });
});
