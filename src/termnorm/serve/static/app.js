// termnorm web page: search as you type (debounced), each candidate with its vocabulary
// attributes (attributes.js), concept details and KG neighbours on click, a CSV/TSV file
// mapped for download, add a synonym.
// Plain JavaScript against the JSON API (/v1/...); no build step. Searches name no strategy:
// the service's default (its domain synonyms once it has some). When the server cannot be
// reached the status says so, stale results are cleared, and /v1/ready is polled until the
// server answers again.
"use strict";

const DEBOUNCE_MS = 250;
const RETRY_MS = 2000;
const $ = (id) => document.getElementById(id);
let timer = null;
let latest = 0;
let readyTimer = null;
let reachable = true;

// A request that got no HTTP answer at all (server down, network gone).
class Unreachable extends Error {}

function setStatus(state, text) {
  const status = $("status");
  status.dataset.state = state;
  status.textContent = text;
}

// fetch, keeping the status indicator honest: no answer marks the server unreachable (and
// polls until it answers), any answer after that marks it reachable again.
async function send(path, options = {}) {
  let answer;
  try {
    answer = await fetch(path, options);
  } catch (e) {
    if (reachable) {
      reachable = false;
      setStatus("unreachable", "Unreachable: the server does not answer. Retrying…");
      retryReady();
    }
    throw new Unreachable("cannot reach the termnorm server: is it running? The page retries.");
  }
  if (!reachable || answer.status === 503) {  // back, or (re)loading: refresh the status
    reachable = true;
    if (path !== "/v1/ready") checkReady();
  }
  return answer;
}

async function call(path, options = {}) {
  const answer = await send(path, options);
  let body = null;
  try { body = await answer.json(); } catch (e) { body = null; }
  if (!answer.ok) throw new Error(errorText(body, answer.status));
  return body;
}

function retryReady() {
  clearTimeout(readyTimer);
  readyTimer = setTimeout(checkReady, RETRY_MS);
}

async function checkReady() {
  try {
    const info = await call("/v1/ready");
    setStatus("ready",
      `Ready: ${info.concepts} concepts, ${info.terms} terms, ${info.domain_synonyms} added ` +
      `synonyms; searching with ${info.strategy}.`);
  } catch (e) {
    if (!(e instanceof Unreachable)) setStatus("loading", `Not ready: ${e.message}`);
    retryReady();
  }
}

function showResults(candidates) {
  const list = $("results");
  list.replaceChildren();
  candidates.forEach((c, i) => {
    const pct = Math.max(0, Math.min(100, Math.round(c.score * 100)));
    const attributes = attributeSummary(c.attributes, `result-attributes-${i}`);
    const described = attributes ? { "aria-describedby": attributes.id } : {};
    const button = el(
      "button",
      { type: "button", class: "result", "data-concept": c.concept_id, ...described,
        "aria-label": `${c.name}, ${c.concept_id}, score ${c.score.toFixed(3)}` },
      el("span", {}, el("strong", {}, c.name), " ", el("span", { class: "id" }, c.concept_id)),
      el("span", { class: "bar", role: "img", "aria-label": `score ${c.score.toFixed(3)}` },
        el("span")),
      el("span", { class: "matched" },
        `matched “${c.matched_term}” (${c.source}${c.term_source ? ": " + c.term_source : ""}) · ${c.score.toFixed(3)}`),
    );
    if (attributes) button.append(attributes);
    button.querySelector(".bar span").style.width = `${pct}%`;
    button.addEventListener("click", () => showConcept(c.concept_id));
    list.append(el("li", {}, button));
  });
}

async function search() {
  const text = $("query").value.trim();
  const error = $("search-error");
  error.hidden = true;
  if (!text) { $("results").replaceChildren(); return; }
  const ask = ++latest;
  const k = Number($("k").value) || 5;
  try {
    const body = await call("/v1/normalize", {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ texts: [text], k }),
    });
    if (ask === latest) showResults(body.results[0].candidates);
  } catch (e) {
    if (ask !== latest) return;
    $("results").replaceChildren();  // they answered another query: not shown as this one's
    error.textContent = `Search failed: ${e.message}`;
    error.hidden = false;
  }
}

async function showConcept(id) {
  const section = $("concept");
  try {
    const c = await call(`/v1/concepts/${encodeURIComponent(id)}`);
    $("concept-title").textContent = `${c.name} (${c.concept_id})`;
    const facts = $("concept-facts");
    facts.replaceChildren(
      el("dt", {}, "Semantic types"), el("dd", {}, c.semantic_types.join(", ") || "none"),
      el("dt", {}, "Alternative IDs"), el("dd", {}, c.alt_ids.join(", ") || "none"),
      ...attributeFacts(c.attributes),
    );
    const syns = $("concept-synonyms");
    syns.replaceChildren(
      ...c.synonyms.map((s) => el("li", {}, `${s.term} (${s.source}${s.is_preferred ? ", preferred" : ""})`)),
      ...c.domain_synonyms.map((t) => el("li", {}, `${t} (added)`)),
    );
    showRelations(c);
    $("add-concept").value = c.concept_id;
    section.hidden = false;
    $("concept-title").focus();
  } catch (e) {
    $("search-error").textContent = e.message;
    $("search-error").hidden = false;
  }
}

function showRelations(c) {
  const list = $("concept-relations");
  const note = $("relations-note");
  list.replaceChildren();
  if (c.relations === null) {
    note.textContent = "This index was built before termnorm kept the KG's relations: " +
      "rebuild it with “termnorm index build” to see the neighbours.";
    return;
  }
  for (const r of c.relations) {
    const out = r.direction === "out";
    const sentence = out ? `${c.name} ${r.relation} ${r.name}` : `${r.name} ${r.relation} ${c.name}`;
    const button = el(
      "button",
      { type: "button", class: "neighbour", "data-concept": r.concept_id, title: sentence },
      `${out ? "→" : "←"} ${r.relation}: `, el("strong", {}, r.name), " ",
      el("span", { class: "id" }, r.concept_id),
    );
    button.addEventListener("click", () => showConcept(r.concept_id));
    list.append(el("li", {}, button));
  }
  if (c.relations.length === 0) note.textContent = "No KG relations.";
  else if (c.relations_total > c.relations.length) {
    note.textContent = `Showing ${c.relations.length} of ${c.relations_total} relations.`;
  } else note.textContent = "";
}

function downloadName(answer, fallback) {
  const header = answer.headers.get("Content-Disposition") || "";
  const match = /filename="?([^";]+)"?/.exec(header);
  return match ? match[1] : fallback;
}

async function uploadFile(event) {
  event.preventDefault();
  const file = $("upload-file").files[0];
  const result = $("upload-result");
  const error = $("upload-error");
  const link = $("upload-download");
  error.hidden = true;
  link.hidden = true;
  if (link.href) URL.revokeObjectURL(link.href);
  if (!file) return;
  const form = new FormData();
  form.append("file", file);
  const column = $("upload-column").value.trim();
  if (column) form.append("column", column);
  $("upload-button").disabled = true;
  result.textContent = `Mapping ${file.name}…`;
  try {
    const answer = await send("/v1/normalize/file", { method: "POST", body: form });
    if (!answer.ok) {
      let body = null;
      try { body = await answer.json(); } catch (e) { body = null; }
      throw new Error(errorText(body, answer.status));
    }
    const report = JSON.parse(answer.headers.get("X-Termnorm-Report") || "{}");
    const name = downloadName(answer, `mapped-${file.name}`);
    link.href = URL.createObjectURL(await answer.blob());
    link.download = name;
    link.textContent = `Download ${name}`;
    link.hidden = false;
    result.textContent = `Mapped ${report.rows} rows of column “${report.column}” ` +
      `(${report.errors} without a usable text, ${report.abstained} below the minimum score).`;
    link.focus();
  } catch (e) {
    result.textContent = "";
    error.textContent = `Not mapped: ${e.message}`;
    error.hidden = false;
  } finally {
    $("upload-button").disabled = false;
  }
}

async function addSynonym(event) {
  event.preventDefault();
  const out = $("add-result");
  try {
    const body = await call("/v1/synonyms", {
      method: "POST",
      headers: { "Content-Type": "application/json",
                 Authorization: `Bearer ${$("add-token").value}` },
      body: JSON.stringify({ pairs: [{ concept_id: $("add-concept").value, text: $("add-text").value }] }),
    });
    out.textContent = body.kept ? `Added (${body.total} added synonyms in all).` : "Already there.";
    checkReady();
  } catch (e) {
    out.textContent = `Not added: ${e.message}`;
  }
}

document.addEventListener("DOMContentLoaded", () => {
  $("query").addEventListener("input", () => {
    clearTimeout(timer);
    timer = setTimeout(search, DEBOUNCE_MS);
  });
  $("k").addEventListener("change", search);
  $("search-form").addEventListener("submit", (event) => { event.preventDefault(); search(); });
  $("add-form").addEventListener("submit", addSynonym);
  $("upload-form").addEventListener("submit", uploadFile);
  checkReady();
});
