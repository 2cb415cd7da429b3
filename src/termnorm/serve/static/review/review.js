// termnorm review page: one row at a time from the project's queue (frequency × uncertainty),
// leased to this reviewer while it is shown; decide with the keyboard (the keys are listed on
// the page). Plain JavaScript against the JSON API: /v1/review/... with the reviewer's token
// (Authorization: Bearer), and the service's own /v1/normalize (search by hand) and
// /v1/concepts/ID (attributes, synonyms and KG neighbours). A candidate shows its concept's
// vocabulary attributes (attributes.js). The token stays in this tab (sessionStorage).
"use strict";

const TOKEN_KEY = "termnorm-review-token";
const SEARCH_K = 10;
const QUEUE_SHOWN = 15;
const LIST_IDS = { candidates: "candidates", search: "search-results" };  // the choice lists
const $ = (id) => document.getElementById(id);

const state = {
  token: null,
  me: null,
  row: null,          // the row shown (RowOut)
  lists: { candidates: [], search: [] },
  active: "candidates",  // which list the selection moves in
  selected: 0,
  skip: [],           // codes skipped in this session (per queue)
  flagged: false,
  renew: null,
  busy: false,
};

function setStatus(kind, text) {
  $("status").dataset.state = kind;
  $("status").textContent = text;
}

// A call of the review API: the token sent, 401 signs out. Answers {status, body}.
async function api(path, options = {}) {
  const headers = { ...(options.headers || {}), Authorization: `Bearer ${state.token}` };
  if (options.json !== undefined) {
    headers["Content-Type"] = "application/json";
    options = { ...options, body: JSON.stringify(options.json) };
  }
  let answer;
  try {
    answer = await fetch(path, { ...options, headers });
  } catch (e) {
    setStatus("unreachable", "Unreachable: the server does not answer. Try again shortly.");
    throw e;
  }
  let body = null;
  if (answer.status !== 204) {
    try { body = await answer.json(); } catch (e) { body = null; }
  }
  if (answer.status === 401) {
    signOut(errorText(body, 401));
    throw new Error("signed out");
  }
  return { status: answer.status, body };
}

async function must(path, options) {
  const { status, body } = await api(path, options);
  if (status >= 400) throw new Error(errorText(body, status));
  return body;
}

// ------------------------------------------------------------------ signing in and out
function signOut(message) {
  sessionStorage.removeItem(TOKEN_KEY);
  state.token = null;
  clearInterval(state.renew);
  $("desk").hidden = true;
  $("signin").hidden = false;
  $("signin-error").textContent = message;
  $("signin-error").hidden = !message;
  setStatus("loading", "Give your reviewer token to start.");
  $("token").focus();
}

// The token of the address (/review#token=T), taken off it; null when it names none.
function tokenFromAddress() {
  const given = new URLSearchParams(location.hash.slice(1)).get("token");
  if (given) history.replaceState(null, "", location.pathname + location.search);
  return given;
}

async function signIn(token) {
  state.token = token;
  state.skip = [];
  try {
    state.me = await must("/v1/review/me");
  } catch (e) {
    if (state.token) signOut(`Not signed in: ${e.message}`);
    return;
  }
  sessionStorage.setItem(TOKEN_KEY, token);
  $("signin").hidden = true;
  $("desk").hidden = false;
  $("project").textContent = `· ${state.me.project}`;
  await nextRow();
}

// ------------------------------------------------------------------ the queue and the row
async function refreshQueue() {
  const flagged = state.flagged ? "true" : "false";
  const body = await must(`/v1/review/queue?limit=${QUEUE_SHOWN}&flagged=${flagged}`);
  const list = $("queue");
  list.replaceChildren(...body.rows.map((r) => {
    const item = el("li", { "data-code": r.code },
      el("strong", {}, r.code), ` ${r.text} `,
      el("span", { class: "help" }, `priority ${r.priority.toPrecision(3)}`));
    if (state.row && r.code === state.row.code) item.className = "current";
    return item;
  }));
  const what = state.flagged ? "flagged rows" : "rows to review";
  $("queue-total").textContent = `${body.total} ${what} open to you (yours included).`;
  setStatus("ready", `Reviewing as ${state.me.reviewer}: ${body.total} ${what}.`);
}

// Lease the next row and show it; a refusal (say, more skips than the server takes) is shown
// with the way on: start the queue over.
async function nextRow() {
  const { status, body } = await api("/v1/review/next", {
    method: "POST", json: { skip: state.skip, flagged: state.flagged },
  });
  if (status >= 400) {
    showNoRow("No row shown");
    $("next-error").textContent = `The next row was not given: ${errorText(body, status)}. ` +
      "Start the queue over to go on.";
    $("next-error").hidden = false;
    $("restart-line").hidden = false;
    $("restart").focus();
    return;
  }
  showRow(body.row);
  reloadQueue();
}

// Forget the skipped rows and take the queue's first row again.
async function restartQueue() {
  state.skip = [];
  await nextRow();
}

function reloadQueue() {
  refreshQueue().catch((e) => setStatus("unreachable", `Queue not shown: ${e.message}`));
}

function fact(name, value) {
  return [el("dt", {}, name), el("dd", {}, value)];
}

// The row area without a row: its title, the row's parts hidden (and the messages of the
// last one gone).
function showNoRow(title) {
  state.row = null;
  clearInterval(state.renew);
  for (const id of ["conflict", "next-error", "restart-line", "row-empty", "reserved"]) {
    $(id).hidden = true;
  }
  for (const id of ["row-facts", "candidates", "decide-form", "history"]) $(id).hidden = true;
  $("row-title").textContent = title;
  $("candidates").replaceChildren();
  $("concept").hidden = true;
}

function showRow(row) {
  if (row === null) {
    showNoRow(state.flagged ? "No flagged row left" : "Queue done");
    $("row-empty").hidden = false;
    $("restart-line").hidden = state.skip.length === 0;  // the skipped rows are still there
    $("row-title").focus();
    return;
  }
  showNoRow(`${row.code}: ${row.text}`);
  state.row = row;
  for (const id of ["row-facts", "candidates", "decide-form", "history"]) $(id).hidden = false;
  const facts = [
    ...fact("State", `${row.state}, version ${row.version}`),
    ...fact("Frequency", row.frequency === null ? "—" : String(row.frequency)),
  ];
  for (const [key, value] of Object.entries(row.context || {})) facts.push(...fact(key, String(value)));
  showReservation(row.lease);
  if (row.map_error) facts.push(...fact("Mapping error", row.map_error));
  $("row-facts").replaceChildren(...facts);
  state.lists.candidates = row.candidates.map((c) => ({
    concept_id: c.concept_id, name: c.name, score: c.score, matched: c.matched_text,
    source: c.source, term_source: c.term_source, rank: c.rank, attributes: c.attributes,
  }));
  state.lists.search = [];
  $("search-results").replaceChildren();
  $("search").value = "";
  $("comment").value = "";
  setPredicate("exact");
  showHistory(row.decisions);
  renderChoices("candidates");
  select("candidates", 0);
  if (row.lease && state.me) {  // keep the lease while the row is shown
    const every = Math.max(15, state.me.lease_minutes * 60 / 3) * 1000;
    state.renew = setInterval(renewLease, every);
  }
  $("row-title").focus();
}

function showHistory(decisions) {
  $("history").replaceChildren(...decisions.map((d) => el("li", {},
    `${d.created_at.slice(0, 19).replace("T", " ")} ${d.reviewer}: ${d.action}` +
    (d.concept_id ? ` ${d.concept_id}${d.concept_name ? " " + d.concept_name : ""}` : "") +
    (d.predicate ? ` (${d.predicate})` : "") + (d.comment ? ` — “${d.comment}”` : ""))));
}

// "Reserved for you until …" for the lease held on the row shown (none: nothing shown).
function showReservation(lease) {
  $("reserved").hidden = !lease;
  $("reserved").textContent = lease
    ? `Reserved for you until ${new Date(lease.expires_at).toLocaleTimeString()}.` : "";
}

async function renewLease() {
  if (!state.row) return;
  const code = state.row.code;
  const { status, body } = await api(`/v1/review/rows/${encodeURIComponent(code)}/lease`,
    { method: "POST" });
  if (status === 409) showConflict(body);
  else if (status < 400 && state.row && state.row.code === code) {
    state.row.lease = body.lease;
    showReservation(body.lease);
  }
}

// ------------------------------------------------------------------ candidates and search
// The choices of a list as its options; each list is one Tab stop (see select).
function renderChoices(kind) {
  $(LIST_IDS[kind]).replaceChildren(...state.lists[kind].map((c, i) => {
    const pct = Math.max(0, Math.min(100, Math.round(c.score * 100)));
    const item = el("li", { role: "option", class: "result choice", "aria-selected": "false",
                            "data-concept": c.concept_id, id: `${kind}-${i}`,
                            tabindex: i === 0 ? "0" : "-1" },
      el("span", {}, el("span", { class: "num" }, `${i + 1}. `), el("strong", {}, c.name), " ",
        el("span", { class: "id" }, c.concept_id)),
      el("span", { class: "bar", role: "img", "aria-label": `score ${c.score.toFixed(3)}` },
        el("span")),
      el("span", { class: "matched" },
        `matched “${c.matched ?? ""}” (${c.source ?? "?"}${c.term_source ? ": " + c.term_source : ""}) · ${c.score.toFixed(3)}`));
    const attributes = attributeSummary(c.attributes, `${kind}-${i}-attributes`);
    if (attributes) item.append(attributes);  // in the option's text: read with it
    item.querySelector(".bar span").style.width = `${pct}%`;
    item.addEventListener("click", () => select(kind, i));
    item.addEventListener("dblclick", () => { select(kind, i); choose(); });
    return item;
  }));
}

// Select choice ``index`` of list ``kind``. A list is one Tab stop, its selected choice (else
// its first); the focus follows the selection while it is in a list, or when ``focus``.
function select(kind, index, focus = false) {
  const items = state.lists[kind];
  if (items.length === 0) return;
  const inList = Object.values(LIST_IDS).some((id) => $(id).contains(document.activeElement));
  state.active = kind;
  state.selected = Math.max(0, Math.min(items.length - 1, index));
  for (const [name, id] of Object.entries(LIST_IDS)) {
    $(id).querySelectorAll(".choice").forEach((node, i) => {
      const on = name === kind && i === state.selected;
      node.setAttribute("aria-selected", on ? "true" : "false");
      node.classList.toggle("selected", on);
      node.tabIndex = (name === kind ? on : i === 0) ? 0 : -1;
    });
  }
  const node = $(`${kind}-${state.selected}`);
  if (focus || inList) node.focus();
  else node.scrollIntoView({ block: "nearest" });
  showConcept(items[state.selected].concept_id);
}

async function search(event) {
  if (event) event.preventDefault();
  const text = $("search").value.trim();
  $("search-error").hidden = true;
  if (!text) return;
  try {
    const answer = await fetch("/v1/normalize", {
      method: "POST", headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ texts: [text], k: SEARCH_K }),
    });
    const body = await answer.json();
    if (!answer.ok) throw new Error(errorText(body, answer.status));
    state.lists.search = body.results[0].candidates.map((c) => ({
      concept_id: c.concept_id, name: c.name, score: c.score, matched: c.matched_term,
      source: c.source, term_source: c.term_source, attributes: c.attributes,
    }));
    renderChoices("search");
  } catch (e) {
    $("search-error").textContent = `Search failed: ${e.message}`;
    $("search-error").hidden = false;
  }
}

let conceptAsked = 0;
async function showConcept(id) {
  const ask = ++conceptAsked;
  try {
    const answer = await fetch(`/v1/concepts/${encodeURIComponent(id)}`);
    const c = await answer.json();
    if (ask !== conceptAsked) return;
    if (!answer.ok) {
      $("concept").hidden = false;
      $("concept-title").textContent = id;
      showAttributes({});
      $("concept-synonyms").replaceChildren();
      $("concept-relations").replaceChildren();
      $("concept-note").textContent = errorText(c, answer.status);
      return;
    }
    $("concept-title").textContent = `${c.name} (${c.concept_id})`;
    showAttributes(c.attributes);
    $("concept-synonyms").replaceChildren(
      ...c.synonyms.map((s) => el("li", {}, `${s.term} (${s.source}${s.is_preferred ? ", preferred" : ""})`)),
      ...c.domain_synonyms.map((t) => el("li", {}, `${t} (added)`)));
    const relations = c.relations || [];
    $("concept-relations").replaceChildren(...relations.map((r) => el("li", {},
      `${r.direction === "out" ? "→" : "←"} ${r.relation}: `, el("strong", {}, r.name), " ",
      el("span", { class: "id" }, r.concept_id))));
    $("concept-note").textContent = c.relations === null ? "This index keeps no KG relations."
      : relations.length === 0 ? "No KG relations." : "";
    $("concept").hidden = false;
  } catch (e) {
    if (ask === conceptAsked) $("concept-note").textContent = `Concept not shown: ${e.message}`;
  }
}

// The concept's vocabulary attributes, all of them, whole (hidden when it has none).
function showAttributes(attributes) {
  const facts = attributeFacts(attributes);
  $("concept-attributes").replaceChildren(...facts);
  $("concept-attributes").hidden = facts.length === 0;
  $("concept-attributes-title").hidden = facts.length === 0;
}

// ------------------------------------------------------------------ decisions
function predicate() {
  return document.querySelector('input[name="predicate"]:checked').value;
}

function setPredicate(value) {
  document.querySelector(`input[name="predicate"][value="${value}"]`).checked = true;
}

function selectedConcept() {
  return state.lists[state.active][state.selected] || null;
}

function choose() {
  const c = selectedConcept();
  if (!c) return;
  if (state.active === "candidates" && state.selected === 0) decide("approve");
  else decide("pick", c);
}

async function decide(action, concept = null) {
  if (!state.row || state.busy) return;
  const comment = $("comment").value.trim();
  if (action === "comment" && !comment) { $("comment").focus(); return; }
  const body = { action, version: state.row.version };
  if (["approve", "pick"].includes(action)) body.predicate = predicate();
  if (concept) { body.concept_id = concept.concept_id; body.concept_name = concept.name; }
  if (comment) body.comment = comment;
  state.busy = true;
  try {
    const code = state.row.code;
    const { status, body: answer } = await api(
      `/v1/review/rows/${encodeURIComponent(code)}/decisions`, { method: "POST", json: body });
    if (status === 409) { showConflict(answer); return; }
    if (status >= 400) throw new Error(errorText(answer, status));
    const what = answer.concept_id ? ` ${answer.concept_id} ${answer.concept_name || ""}` : "";
    $("decide-result").textContent = `${code}: ${answer.action}${what} (by ${answer.reviewer}).`;
    if (action === "comment") {
      showRow({ ...(await must(`/v1/review/rows/${encodeURIComponent(code)}`)), lease: state.row.lease });
    } else {
      await nextRow();
    }
  } catch (e) {
    $("conflict").textContent = `Not recorded: ${e.message}`;
    $("conflict").hidden = false;
  } finally {
    state.busy = false;
  }
}

// A 409: the row changed meanwhile (shown as it is now) or another reviewer holds it. Either
// way it is no longer reserved for this reviewer as shown, and the queue has changed.
function showConflict(body) {
  const message = errorText(body, 409);
  if (body && body.row) {  // changed meanwhile: show it as it is now
    const last = body.row.decisions[body.row.decisions.length - 1];
    const who = last ? ` (${last.reviewer}: ${last.action}${last.concept_id ? " " + last.concept_id : ""})` : "";
    showRow({ ...body.row, lease: null });
    $("conflict").textContent = `Changed meanwhile${who}: ${message} Press s to move on.`;
  } else {
    clearInterval(state.renew);
    if (state.row) state.row.lease = null;
    showReservation(null);
    $("conflict").textContent = `${message} Press s to take the next row.`;
  }
  $("conflict").hidden = false;
  reloadQueue();
}

async function skip() {
  if (!state.row) return nextRow();
  const code = state.row.code;
  state.skip.push(code);
  await api(`/v1/review/rows/${encodeURIComponent(code)}/lease`, { method: "DELETE" });
  await nextRow();
}

async function switchQueue() {
  state.flagged = $("flagged-queue").checked;
  state.skip = [];
  await nextRow();
}

// ------------------------------------------------------------------ the keyboard
function inField(target) {
  return target && (target.tagName === "TEXTAREA" ||
    (target.tagName === "INPUT" && !["radio", "checkbox"].includes(target.type)));
}

function onKey(event) {
  if ($("desk").hidden || event.altKey || event.metaKey) return;
  const target = event.target;
  if (event.key === "Escape") { target.blur(); $("row-title").focus(); return; }
  if (target.id === "comment" && event.key === "Enter" && event.ctrlKey) {
    event.preventDefault(); decide("comment"); return;
  }
  if (target.id === "search" && event.key === "ArrowDown" && state.lists.search.length) {
    event.preventDefault(); select("search", 0, true); return;
  }
  if (inField(target) || event.ctrlKey) return;
  if (target.tagName === "BUTTON" && event.key === "Enter") return;  // the button's own action
  const moves = { j: 1, ArrowDown: 1, k: -1, ArrowUp: -1 };
  const keys = {
    a: () => decide("approve"),
    Enter: choose,
    n: () => decide("no_match"),
    f: () => decide("flag"),
    s: skip,
    r: restartQueue,
    c: () => $("comment").focus(),
    "/": () => $("search").focus(),
    e: () => setPredicate("exact"),
    b: () => setPredicate("broad"),
    w: () => setPredicate("narrow"),
    g: () => { $("flagged-queue").checked = !$("flagged-queue").checked; switchQueue(); },
  };
  if (event.key in moves) {
    event.preventDefault();
    select(state.active, state.selected + moves[event.key]);
  } else if (/^[1-9]$/.test(event.key)) {
    event.preventDefault();
    select("candidates", Number(event.key) - 1);
  } else if (event.key in keys) {
    event.preventDefault();
    keys[event.key]();
  }
}

document.addEventListener("DOMContentLoaded", () => {
  $("signin-form").addEventListener("submit", (event) => {
    event.preventDefault();
    signIn($("token").value.trim());
  });
  $("search-form").addEventListener("submit", search);
  $("approve").addEventListener("click", () => decide("approve"));
  $("choose").addEventListener("click", choose);
  $("no-match").addEventListener("click", () => decide("no_match"));
  $("flag").addEventListener("click", () => decide("flag"));
  $("save-comment").addEventListener("click", () => decide("comment"));
  $("skip").addEventListener("click", skip);
  $("restart").addEventListener("click", restartQueue);
  $("flagged-queue").addEventListener("change", switchQueue);
  document.addEventListener("keydown", onKey);
  window.addEventListener("hashchange", () => {  // /review#token=T opened in this tab
    const given = tokenFromAddress();
    if (given) signIn(given);
  });
  const token = tokenFromAddress() || sessionStorage.getItem(TOKEN_KEY);
  if (token) signIn(token); else signOut("");
});
