// Helpers the service's pages share (the search page and the review page): loaded first.
"use strict";

// An element with attributes ("class" sets className) and children (nodes or text).
function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (key === "class") node.className = value;
    else node.setAttribute(key, value);
  }
  for (const child of children) node.append(child);
  return node;
}

// The message of an error answer: its details' messages, else the HTTP status.
function errorText(body, status) {
  if (body && Array.isArray(body.detail)) return body.detail.map((d) => d.msg).join("; ");
  return `request failed (HTTP ${status})`;
}
