"""The OMOP concepts a project's decisions name, as the OMOP-shaped exports write them.

An index built from an Athena download (``termnorm kg build --format omop``) names concepts
``OMOP:<concept_id>`` and keeps each concept's ``vocabulary_id``, ``concept_code`` and
``domain_id`` as attributes (:mod:`termnorm.kg.omop`). :func:`omop_target` turns a decided
concept ID into the integer ``concept_id`` and those facts, read from the project's index
(an :data:`~termnorm.projects.concepts.AttributeLookup`); the OMOP ``source_to_concept_map``,
the SSSOM (vocabulary CURIE beside the OMOP ID) and the Usagi exports share it.

A concept ID whose local part is not an integer, or a concept the index holds without a
``vocabulary_id`` (an index not built from OMOP vocabularies), is refused naming the code.
"""

from __future__ import annotations

from dataclasses import dataclass

from termnorm.errors import DecisionError, ProjectError
from termnorm.kg.omop import NAMESPACE, vocabulary_curie
from termnorm.projects.concepts import AttributeLookup

__all__ = ["NAMESPACE", "OmopTarget", "check_integer", "is_omop", "omop_target"]


@dataclass(frozen=True)
class OmopTarget:
    """An OMOP concept as the exports write it: ``concept_id`` (OMOP's integer), its
    ``vocabulary_id``, the vocabulary's own ``concept_code`` and its ``domain_id``."""

    concept_id: int
    vocabulary_id: str
    concept_code: str
    domain_id: str

    @property
    def curie(self) -> str:
        """The vocabulary's own CURIE: ``SNOMEDCT:22298006``, ``LOINC:2160-0``."""
        return vocabulary_curie(self.vocabulary_id, self.concept_code)


def is_omop(concept_id: str) -> bool:
    """Whether ``concept_id`` is in the namespace the ``omop`` loader writes (``OMOP:``)."""
    return concept_id.startswith(f"{NAMESPACE}:")


def _refused(code: str, concept_id: str, why: str) -> ProjectError:
    return ProjectError(
        f"OMOP's source_to_concept_map needs integer concept IDs, but code {code!r} maps to "
        f"{concept_id!r}{why}: map against an index built from OMOP vocabularies (concept_id "
        "numbers), or export --format sssom / csv"
    )


def check_integer(concept_id: str, code: str) -> int:
    """The integer local part of ``concept_id`` (decided for source ``code``);
    :class:`ProjectError` naming both when it is none (checked for every row before the
    index is read: a project on another vocabulary is told at once)."""
    local = concept_id.partition(":")[2] if ":" in concept_id else concept_id
    if not local.isdigit():
        raise _refused(code, concept_id, "")
    return int(local)


def omop_target(concept_id: str, code: str, attributes: AttributeLookup) -> OmopTarget:
    """The :class:`OmopTarget` of ``concept_id`` (decided for source ``code``), its facts
    from ``attributes``; :class:`ProjectError` naming the code when it is no OMOP concept."""
    number = check_integer(concept_id, code)
    try:
        facts = attributes(concept_id)
    except DecisionError as exc:
        raise ProjectError(f"code {code!r} maps to {concept_id!r}: {exc}") from None
    vocabulary = facts.get("vocabulary_id", "")
    if not vocabulary:
        raise _refused(
            code,
            concept_id,
            ", which the project's index holds without an OMOP vocabulary_id (build the "
            "index from termnorm kg build --format omop)",
        )
    return OmopTarget(number, vocabulary, facts.get("concept_code", ""), facts.get("domain_id", ""))
