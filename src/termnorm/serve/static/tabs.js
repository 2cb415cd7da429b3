// The page's tabs (Search, Annotate): the WAI-ARIA tabs pattern. Click, or the arrow keys,
// Home and End on a focused tab, show its panel; only the selected tab is in the Tab order.
"use strict";

function selectTab(tab) {
  for (const other of document.querySelectorAll('[role="tab"]')) {
    const chosen = other === tab;
    other.setAttribute("aria-selected", String(chosen));
    other.tabIndex = chosen ? 0 : -1;
    document.getElementById(other.getAttribute("aria-controls")).hidden = !chosen;
  }
}

function tabKey(event) {
  const tabs = [...document.querySelectorAll('[role="tab"]')];
  const at = tabs.indexOf(event.currentTarget);
  const next = {
    ArrowRight: (at + 1) % tabs.length,
    ArrowLeft: (at - 1 + tabs.length) % tabs.length,
    Home: 0,
    End: tabs.length - 1,
  }[event.key];
  if (next === undefined) return;
  event.preventDefault();
  selectTab(tabs[next]);
  tabs[next].focus();
}

document.addEventListener("DOMContentLoaded", () => {
  for (const tab of document.querySelectorAll('[role="tab"]')) {
    tab.addEventListener("click", () => selectTab(tab));
    tab.addEventListener("keydown", tabKey);
  }
});
