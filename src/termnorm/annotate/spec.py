"""``AnnotateSpec``: everything an annotation job is, in one frozen dataclass.

It embeds the search's :class:`~termnorm.search.spec.PipelineSpec` (``search``) and adds the
detectors (names in :data:`~termnorm.annotate.detectors.DETECTORS`; ``both`` and a
comma-separated list are read too) and their settings (``ner``: the span tagger's folder;
``ner_runtime``: its runtime, the search's unless given),
the dictionary's recall rules (``variants``: a word read as the name word it inflects;
``paraphrases``: the words of the shipped groups of these rules read as one; ``coordination``: the conjuncts of "palmar and plantar pits"; ``short_forms``: the short
forms a document defines), the assertion rules (``rules`` added
to the shipped ones of the documents' ``language``),
which concepts are findings (``findings``: HPO's modifiers qualify the phenotype next to them,
its diseases are not searched),
the detectors' ``window_chars``, the longest document (``max_document_chars``) and ``k``
candidates kept per annotation. Every face builds its annotator from one
(:func:`~termnorm.annotate.detectors.build_annotator`); the CLI generates its options from
the fields, the spaCy component its config keys, the service its settings.
"""

from __future__ import annotations

# opt() returns a dataclasses.Field, as field() does
# ruff: noqa: RUF009
import dataclasses
import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from termnorm.annotate.languages import AUTO, parse_language
from termnorm.annotate.modifiers import Findings
from termnorm.annotate.pipeline import DEFAULT_MAX_DOCUMENT_CHARS
from termnorm.annotate.tagger import TaggerRuntime
from termnorm.annotate.variants import paraphrase_rules
from termnorm.annotate.windows import DEFAULT_WINDOW_CHARS
from termnorm.options import check_bounds, flag_of, opt, options_from_dict, options_to_dict
from termnorm.search.spec import PipelineSpec

__all__ = ["AnnotateSpec", "detector_names"]

_ALIASES = {"both": ("dictionary", "tagger")}
"""Detector choices of earlier versions (``--detectors both``), read as the names they mean."""


def detector_names(value: str | Sequence[str] | None, ner: Path | None) -> tuple[str, ...]:
    """The registered detector names ``value`` gives (names, each may be ``"a,b"``;
    ``both`` is dictionary and tagger), each once, in order; none given: the tagger with a
    tagger folder ``ner``, else the dictionary.

    Raises:
        UnknownNameError: a name no detector is registered under (the known ones listed).
        ValueError: the tagger without a tagger folder.
    """
    from termnorm.annotate.detectors import DETECTORS

    items = [value] if isinstance(value, str) else list(value or ())
    given = [v.strip() for item in items for v in item.split(",")]
    names = [n for v in given for n in _ALIASES.get(v, (v,)) if n]
    if not names:
        names = ["tagger" if ner is not None else "dictionary"]
    for name in names:
        DETECTORS.resolve(name)
    if "tagger" in names and ner is None:
        raise ValueError(
            "the tagger detector needs a trained span tagger: give its folder with --ner DIR "
            "(ner=DIR), trained by 'termnorm ner train'"
        )
    return tuple(dict.fromkeys(names))


@dataclass(frozen=True)
class AnnotateSpec:
    """How documents are annotated (module doc); every field has a default."""

    search: PipelineSpec = field(default_factory=PipelineSpec)
    detectors: tuple[str, ...] = opt(
        (),
        "Detectors that find the mentions, repeatable or comma-separated: dictionary, tagger "
        "(both: the two; default: the tagger with --ner, else the dictionary).",
        metavar="NAME",
    )
    ner: Path | None = opt(None, "Span tagger folder (termnorm ner train) that finds mentions.")
    ner_runtime: TaggerRuntime | None = opt(
        None,
        "Runtime of the span tagger alone: torch (fp32), bf16, or onnx-int8 (its int8 graph, "
        "CPU only, needs the onnx extra); default: the search's --runtime (bf16 and onnx-int8 "
        "carry over, the others run torch).",
    )
    k: int = opt(5, "Candidates kept per annotation.", "--k", aliases=("-k",), min=1)
    window_chars: int = opt(
        DEFAULT_WINDOW_CHARS,
        "Longest window (characters) the detectors read at once; windows end on sentence "
        "boundaries and overlap, so a mention across an edge is found once.",
        min=2,
    )
    max_document_chars: int = opt(
        DEFAULT_MAX_DOCUMENT_CHARS,
        "Longest document accepted; a longer one is refused by its id.",
        min=1,
    )
    rules: Path | None = opt(
        None,
        "Assertion trigger rules (TSV) added to the default ones (a literal they share is "
        "replaced).",
    )
    language: str = opt(
        AUTO,
        "The documents' language for the assertion rules (negated, hypothetical, historical, "
        "family): en, fr, de, es or nl (a tag like fr-CA is read as fr); auto detects it per "
        'document. A JSON Lines document\'s own "lang" field wins.',
    )
    spelling: bool = opt(
        False,
        "The dictionary also reads a misspelled word (5+ letters, not an English word) as the "
        "one name word within one edit of it (headake: headache); needs the spelling extra.",
    )
    shorthand_spans: bool = opt(
        False,
        "The dictionary also finds shorthand (HTN, T2DM, SOB: capitals or letters with digits, "
        "in the --shorthand list, not a common English word) when a sense of it is one of "
        "its names; the normalizer expands it. None with --shorthand none.",
    )
    variants: bool = opt(
        True,
        "Dictionary: read a text word that no name holds as the name word it inflects or "
        "derives (nevi as nevus, phalanges as phalanx, ataxic as ataxia), when that word is in "
        "a name.",
    )
    paraphrases: str = opt(
        "quantity,optional",
        "Dictionary: read the words of each shipped group of these rules as one name word "
        "(comma-separated, or none): generic (abnormal, anomaly, malformation, defect as "
        "abnormality), organ (cutaneous as skin, ocular as eye), quantity (multiple as "
        "numerous, reduced as decreased); optional: a longer name may leave out a qualifier "
        "(skin lesions finds Localized skin lesion).",
    )
    coordination: bool = opt(
        True,
        "Dictionary: find each conjunct of a coordination that shares a part with a found "
        "name (palmar and plantar pits: palmar pits; hypoplastic nails and teeth: hypoplastic "
        "teeth), its span running across the conjunction.",
    )
    short_forms: bool = opt(
        False,
        "Find the short forms the document defines (Ab3P) wherever it uses them, when the "
        "long form is itself a found mention: myotonic dystrophy (DM) ... DM patients.",
    )
    findings: Findings = opt(
        Findings.PHENOTYPES,
        "Which concepts are findings. phenotypes: HPO's clinical modifiers (mild, severe, "
        "progressive, onset...) and frequency become the modifiers of the finding next to "
        "them, its other non-phenotype branches (mode of inheritance, blood group, past "
        "medical history, biospecimen) are not reported, and the diseases of an HPO index "
        "(OMIM, ORPHA) are not searched; all: every concept found is a finding.",
    )

    def __post_init__(self) -> None:
        """Coerce plain values (a path or a choice as a string, ``"dictionary,tagger"``) and refuse what
        cannot run, naming the option (``ValueError``; an unknown detector is an
        :class:`~termnorm.errors.UnknownNameError`)."""
        for name in ("ner", "rules"):
            if isinstance(value := getattr(self, name), str):
                object.__setattr__(self, name, Path(value))
        object.__setattr__(self, "detectors", detector_names(self.detectors, self.ner))
        for name, kind in (("findings", Findings), ("ner_runtime", TaggerRuntime)):
            if (value := getattr(self, name)) is None:
                continue
            try:
                object.__setattr__(self, name, kind(value))
            except ValueError:
                known = ", ".join(k.value for k in kind)
                raise ValueError(f"{flag_of(name)}: {value!r} is not one of {known}") from None
        check_bounds(self)
        try:
            paraphrase_rules(self.paraphrases)
        except ValueError as exc:
            raise ValueError(f"{flag_of('paraphrases')}: {exc}") from None
        if self.language.strip().lower() != AUTO:
            try:
                parse_language(self.language)
            except ValueError as exc:
                raise ValueError(f"{flag_of('language')}: {exc}") from None

    def replace(self, **changes: Any) -> AnnotateSpec:
        """A copy with ``changes`` (field names), checked like a new spec."""
        return dataclasses.replace(self, **changes)

    def runnable_detectors(self) -> list[str]:
        """The detector names (registered, then the aliases) this spec could run instead of
        its own: not the tagger without a tagger folder, say."""
        from termnorm.annotate.detectors import DETECTORS

        runnable = []
        for name in [*DETECTORS.names(), *_ALIASES]:
            try:
                self.replace(detectors=(name,))
            except ValueError:
                continue
            runnable.append(name)
        return runnable

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form (``search`` as :meth:`PipelineSpec.to_dict` writes it);
        :meth:`from_dict` reads it."""
        return {**options_to_dict(self), "search": self.search.to_dict()}

    @classmethod
    def from_dict(
        cls, values: Mapping[str, Any] | None, where: str = "an annotate spec"
    ) -> AnnotateSpec:
        """The spec of ``values`` (field names, ``search`` a pipeline spec's); an unknown
        key is a ``ValueError`` listing the known ones."""
        values = dict(values or {})
        search = PipelineSpec.from_dict(values.pop("search", None), where)
        return options_from_dict(cls, {**values, "search": search}, where)

    def record(self) -> dict[str, Any]:
        """These settings, less the search, as a job records them (the rules file and the
        tagger's card by their content digests)."""
        from termnorm.encoders.token_tagger import CARD_NAME

        def digest(path: Path | None) -> str | None:  # a missing file: refused when loaded
            if path is None or not path.is_file():
                return None
            return hashlib.sha256(path.read_bytes()).hexdigest()[:16]

        shown = {k: v for k, v in options_to_dict(self).items() if k != "search"}
        tagger = None if self.ner is None else self.ner / CARD_NAME
        chosen = next((a for a, names in _ALIASES.items() if names == self.detectors), None)
        detectors = chosen or ",".join(self.detectors)  # "both", as earlier runs recorded it
        return {**shown, "rules": digest(self.rules), "ner": digest(tagger), "detectors": detectors}
