"""A small, dependency-free reader for OBO 1.2/1.4 flat files.

It keeps what a terminology loader needs — ``id``, ``name``, synonyms with their scope,
``is_a``, ``relationship``, ``xref``, ``alt_id``, ``is_obsolete`` — and the header tags
(``ontology``, ``data-version``, …). Trailing ``! comments`` and ``{modifiers}`` outside
quoted strings are removed; quoted strings honour backslash escapes. The OBO 1.0 tags
``exact_synonym``/``related_synonym``/``broad_synonym``/``narrow_synonym`` are understood.
Several stanzas with the same ``id`` are merged, as the OBO specification says.

Malformed input (a tag line without ``:``, a synonym without a quoted text, a stanza
without ``id``, a ``relationship:`` without a target) raises
:class:`~termnorm.errors.InputFormatError` naming the file and line.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from termnorm.errors import InputFormatError
from termnorm.kg._text import iter_lines

SCOPES = ("EXACT", "RELATED", "BROAD", "NARROW")
_OLD_SYNONYM_TAGS = {
    "exact_synonym": "EXACT",
    "related_synonym": "RELATED",
    "broad_synonym": "BROAD",
    "narrow_synonym": "NARROW",
}
_ESCAPES = {"n": "\n", "t": "\t", "W": " "}


@dataclass
class OboStanza:
    """One ``[Term]`` (or ``[Typedef]``) stanza; ``line`` is where it starts."""

    id: str
    kind: str
    line: int
    name: str = ""
    synonyms: list[tuple[str, str]] = field(default_factory=list)  # (text, scope)
    is_a: list[str] = field(default_factory=list)
    relationships: list[tuple[str, str]] = field(default_factory=list)  # (type, target)
    xrefs: list[str] = field(default_factory=list)
    alt_ids: list[str] = field(default_factory=list)
    obsolete: bool = False


@dataclass
class OboDocument:
    """Header tags (tag → values) and the stanzas, by kind then id, in file order."""

    header: dict[str, list[str]]
    terms: dict[str, OboStanza]
    typedefs: dict[str, OboStanza]


def _unquote(value: str, path: Path, number: int) -> tuple[str, str]:
    """Split ``"quoted text" rest`` into (text, rest), honouring backslash escapes."""
    if not value.startswith('"'):
        raise InputFormatError(path, number, f"expected a quoted text, got {value[:40]!r}")
    out: list[str] = []
    i = 1
    while i < len(value):
        ch = value[i]
        if ch == "\\" and i + 1 < len(value):
            nxt = value[i + 1]
            out.append(_ESCAPES.get(nxt, nxt))
            i += 2
            continue
        if ch == '"':
            return "".join(out), value[i + 1 :].strip()
        out.append(ch)
        i += 1
    raise InputFormatError(path, number, "unterminated quoted text")


def strip_trailers(value: str) -> str:
    """Remove a trailing ``! comment`` and ``{modifiers}`` that are outside quotes."""
    if "!" not in value and "{" not in value:  # most values: nothing to strip
        return value.strip()
    in_quote = escaped = False
    brace = -1
    for i, ch in enumerate(value):
        if escaped:
            escaped = False
        elif ch == "\\":
            escaped = True
        elif ch == '"':
            in_quote = not in_quote
        elif not in_quote and ch == "!" and (i == 0 or value[i - 1] in " \t"):
            value = value[:i]
            break
        elif not in_quote and ch == "{" and brace < 0:
            brace = i
    value = value.rstrip()
    if brace >= 0 and value.endswith("}"):
        value = value[:brace]
    return value.strip()


def parse_obo(path: Path) -> OboDocument:
    """Parse ``path`` into an :class:`OboDocument`."""
    header: dict[str, list[str]] = {}
    stanzas: dict[str, dict[str, OboStanza]] = {"Term": {}, "Typedef": {}}
    kind: str | None = None
    current: OboStanza | None = None
    start = 0

    def close() -> None:
        if kind is None:
            return
        if current is None:
            raise InputFormatError(path, start, f"[{kind}] stanza without an id")
        bucket = stanzas.setdefault(kind, {})
        if current.id in bucket:
            _merge(bucket[current.id], current)
        else:
            bucket[current.id] = current

    for number, raw in iter_lines(path):
        line = raw.strip()
        if not line or line.startswith("!"):
            continue
        if line.startswith("[") and line.endswith("]"):
            close()
            kind, current, start = line[1:-1].strip(), None, number
            continue
        tag, sep, value = line.partition(":")
        if not sep:
            raise InputFormatError(path, number, f"expected 'tag: value', got {line[:60]!r}")
        tag = tag.strip()
        if kind is None:
            header.setdefault(tag, []).append(value.strip())
            continue
        value = strip_trailers(value.strip())
        if tag == "id":
            current = OboStanza(id=value, kind=kind, line=start)
        elif current is None:
            raise InputFormatError(path, number, f"'{tag}:' before the stanza's 'id:'")
        else:
            _apply(current, tag, value, path, number)
    close()
    return OboDocument(header, stanzas["Term"], stanzas["Typedef"])


def _apply(st: OboStanza, tag: str, value: str, path: Path, number: int) -> None:
    """Record one ``tag: value`` line in stanza ``st``."""
    if tag == "name":
        st.name = value
    elif tag == "synonym" or tag in _OLD_SYNONYM_TAGS:
        text, rest = _unquote(value, path, number)
        words = rest.split()
        scope = _OLD_SYNONYM_TAGS.get(tag, "RELATED")
        if tag == "synonym" and words and words[0] in SCOPES:
            scope = words[0]
        st.synonyms.append((text, scope))
    elif tag == "is_a":
        if not value:
            raise InputFormatError(path, number, "'is_a:' without a target")
        st.is_a.append(value.split()[0])
    elif tag == "relationship":
        parts = value.split()
        if len(parts) < 2:
            raise InputFormatError(path, number, "'relationship:' needs a type and a target")
        st.relationships.append((parts[0], parts[1]))
    elif tag == "xref":
        if value:
            st.xrefs.append(value.split()[0])
    elif tag == "alt_id":
        st.alt_ids.append(value)
    elif tag == "is_obsolete":
        st.obsolete = value.lower() == "true"


def _merge(into: OboStanza, other: OboStanza) -> None:
    """Merge a repeated stanza into the first one with the same id."""
    into.name = into.name or other.name
    into.synonyms += other.synonyms
    into.is_a += other.is_a
    into.relationships += other.relationships
    into.xrefs += other.xrefs
    into.alt_ids += other.alt_ids
    into.obsolete = into.obsolete or other.obsolete
