// A concept's vocabulary attributes (the API's "attributes": key → value, absent when it has
// none) as the service's pages show them, always as text (never parsed as HTML): LOINC's six
// axes in their order (Component, Property, Time, System, Scale, Method), OMOP's vocabulary and
// code, the other known keys, then the rest as the KG gives them. A candidate shows a compact
// line (attributeSummary); the concept's details show them all (attributeFacts). Loaded after
// dom.js (el) by the search page and the review page.
"use strict";

const ATTRIBUTE_LABELS = new Map([  // a Map: a key such as "constructor" is just a key
  ["component", "Component"], ["property", "Property"], ["time_aspect", "Time"],
  ["system", "System"], ["scale_type", "Scale"], ["method_type", "Method"],
  ["vocabulary_id", "Vocabulary"], ["concept_code", "Code"], ["domain_id", "Domain"],
  ["concept_class_id", "Concept class"], ["standard_concept", "Standard"],
  ["class", "Class"], ["status", "Status"],
]);
// What a candidate's line shows: LOINC's axes, OMOP's vocabulary and code (a concept with none
// of them shows all its attributes).
const ATTRIBUTE_HEADLINE = new Set(["component", "property", "time_aspect", "system",
  "scale_type", "method_type", "vocabulary_id", "concept_code"]);
const ATTRIBUTE_SHORT = 80;  // characters of a value a candidate's line shows

// [key, label, value] of each attribute, in the order above.
function attributeEntries(attributes) {
  const known = [...ATTRIBUTE_LABELS.keys()];
  const rank = (key) => (ATTRIBUTE_LABELS.has(key) ? known.indexOf(key) : known.length);
  return Object.entries(attributes || {})
    .map(([key, value], given) => ({ key, value: String(value), given }))
    .sort((a, b) => rank(a.key) - rank(b.key) || a.given - b.given)
    .map(({ key, value }) => [key, ATTRIBUTE_LABELS.get(key) || key, value]);
}

function shortened(value) {
  return value.length > ATTRIBUTE_SHORT ? `${value.slice(0, ATTRIBUTE_SHORT - 1)}…` : value;
}

// A candidate's compact line (phrasing content: it may sit in a button), with ``id`` for
// aria-describedby; null when the concept has no attribute to show. Long values are cut
// (the concept's details show them whole); empty ones are left out.
function attributeSummary(attributes, id) {
  const entries = attributeEntries(attributes).filter(([, , value]) => value !== "");
  const headline = entries.filter(([key]) => ATTRIBUTE_HEADLINE.has(key));
  const shown = headline.length ? headline : entries;
  if (shown.length === 0) return null;
  return el("span", { class: "attrs", id, "data-attributes": "" },
    ...shown.map(([key, label, value]) => el("span", { class: "attr", "data-key": key },
      el("span", { class: "attr-key" }, label), " ",
      el("span", { class: "attr-value" }, shortened(value)))));
}

// Every attribute as <dt>/<dd> pairs for a <dl>, values whole ("—" when empty).
function attributeFacts(attributes) {
  return attributeEntries(attributes).flatMap(([key, label, value]) => [
    el("dt", { "data-key": key }, label), el("dd", {}, value || "—")]);
}
