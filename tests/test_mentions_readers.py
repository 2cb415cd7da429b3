"""Mention readers on small files in each real format (tests/fixtures/mentions)."""

from __future__ import annotations

from pathlib import Path

import pytest

from termnorm.errors import EmptyResultError, InputFormatError
from termnorm.mentions import (
    MentionFormat,
    MentionKind,
    Target,
    detect_format,
    make_mention,
    parse_gold_ids,
    read_mentions,
    read_targets,
)

FIXTURES = Path(__file__).parent / "fixtures" / "mentions"


def test_fixture_line_ends_are_as_in_the_real_files() -> None:
    assert b"\r\n" in (FIXTURES / "gscplus.tsv").read_bytes()
    assert b"\r\n" in (FIXTURES / "cadec_fold" / "test.txt").read_bytes()
    assert not (FIXTURES / "phenobert" / "ann" / "102350").read_bytes().endswith(b"\n")
    assert not (FIXTURES / "biosyn" / "1002.concept").read_bytes().endswith(b"\n")


@pytest.mark.parametrize(
    ("gold", "ids"),
    [
        ("D001943", ("D001943",)),
        ("D001943|D010051", ("D001943", "D010051")),
        ("D007153+D040181", ("D007153", "D040181")),
        ("OMIM:312080+OMIM:312920", ("OMIM:312080", "OMIM:312920")),
        ("-1", ()),
        ("CUI-less", ()),
        ("", ()),
        (" D1 | D1 |-1", ("D1",)),
    ],
)
def test_parse_gold_ids(gold: str, ids: tuple[str, ...]) -> None:
    assert parse_gold_ids(gold) == ids


def test_make_mention_kind_follows_the_number_of_ids() -> None:
    assert make_mention("a", "D1", "d").kind is MentionKind.SIMPLE
    assert make_mention("a", "D1|D2", "d").kind is MentionKind.COMPOSITE
    assert make_mention("a", "-1", "d").kind is MentionKind.UNLINKABLE
    assert make_mention("a", "D1|D1", "d").kind is MentionKind.SIMPLE
    part_unlinkable = make_mention("a and b", "D1|-1", "d")
    assert part_unlinkable.kind is MentionKind.COMPOSITE and part_unlinkable.gold_ids == ("D1",)
    # parts only make sense for composite mentions
    assert make_mention("a or b", "D1", "d", parts=("a", "b")).parts == ()
    assert make_mention("a or b", "D1|D2", "d", parts=("a", " b ")).parts == ("a", "b")


def test_pubtator() -> None:
    mentions = read_mentions(FIXTURES / "pubtator.txt", MentionFormat.PUBTATOR)
    assert [m.text for m in mentions] == [
        "Breast and ovarian cancer",
        "breast cancer",
        "X-linked immunodeficiency disease",
        "Anemia or pain",
        "Fanconi anemia",
        "surgery",
    ]
    first, second, plus, anemia_pain, omim, surgery = mentions
    assert first.kind is MentionKind.COMPOSITE and first.gold_ids == ("D001943", "D010051")
    assert (first.doc_id, first.start, first.end) == ("100", 0, 25)
    assert second.kind is MentionKind.SIMPLE and second.location.endswith("pubtator.txt:4")
    assert plus.gold_ids == ("D007153", "D040181")
    assert anemia_pain.parts == ("Anemia", "pain")  # BC5CDR's 7th column
    assert omim.gold_ids == ("OMIM:227650",)
    assert surgery.kind is MentionKind.UNLINKABLE


def test_pubtator_entity_type_filter() -> None:
    mentions = read_mentions(FIXTURES / "pubtator.txt", entity_types={"Disease"})
    assert [m.text for m in mentions] == ["Anemia or pain", "Fanconi anemia"]


def test_biosyn_folder_reads_concept_files_in_name_order() -> None:
    mentions = read_mentions(FIXTURES / "biosyn")
    assert [(m.doc_id, m.text, m.kind) for m in mentions] == [
        ("1001", "myopathy", MentionKind.SIMPLE),
        ("1001", "necrotizing myopathy", MentionKind.COMPOSITE),
        ("1001", "tics", MentionKind.UNLINKABLE),
        ("1002", "hypertension", MentionKind.SIMPLE),  # file without a final newline
    ]
    assert mentions[1].gold_ids == ("D009336", "D009135")
    assert (mentions[0].start, mentions[0].end) == (48, 56)


def test_biosyn_preprocessed_composite_keeps_its_parts(tmp_path: Path) -> None:
    path = tmp_path / "9.concept"
    path.write_text("9||0|25||Disease||breast cancer|ovarian cancer||D001943|D010051\n")
    (mention,) = read_mentions(path)
    assert mention.parts == ("breast cancer", "ovarian cancer")
    assert mention.text == "breast cancer and ovarian cancer"


def test_tsv_fold_folder_reads_test_txt_with_crlf_and_csv_quotes() -> None:
    mentions = read_mentions(FIXTURES / "cadec_fold")
    assert [(m.text, m.gold_ids) for m in mentions] == [
        ("headache", ("1001",)),
        ('felt "sick"', ("1002",)),
        ("sleepy", ("1003",)),
        ("HEADACHE!", ("1001",)),
    ]
    assert all(m.start is None and m.kind is MentionKind.SIMPLE for m in mentions)
    assert len(read_mentions(FIXTURES / "cadec_fold" / "train.txt")) == 2


def test_read_targets_drops_duplicates() -> None:
    assert read_targets(FIXTURES / "cadec_fold") == [
        Target("1001", "headache"),
        Target("1002", "nausea"),
        Target("1003", "feeling sleepy"),
    ]


def test_gscplus_crlf_and_blank_line_separated_docs() -> None:
    mentions = read_mentions(FIXTURES / "gscplus.tsv")
    assert [(m.doc_id, m.text, m.gold_ids[0], m.start, m.end) for m in mentions] == [
        ("11312426", "Basal cell carcinoma", "HP:0002671", 0, 20),
        ("11312426", "skin tags", "HP:0010609", 25, 34),
        ("12345678", "Short stature", "HP:0004322", 0, 13),
    ]
    assert not any("\r" in m.text or "\r" in m.gold_ids[0] for m in mentions)


def test_phenobert_split_folder_missing_final_newline_and_neg_column() -> None:
    mentions = read_mentions(FIXTURES / "phenobert")
    assert [(m.doc_id, m.text, m.gold_ids) for m in mentions] == [
        ("102350", "bi-acromial dimples", ("HP:0010782",)),
        ("112250", "hypermetropia", ("HP:0000540",)),
        ("112250", "tubular bones", ("HP:0011314",)),
    ]
    assert read_mentions(FIXTURES / "phenobert" / "ann") == mentions


def test_phenobert_status_columns_are_kept_as_the_mentions_note(tmp_path: Path) -> None:
    ann = tmp_path / "ann"
    ann.mkdir()
    (ann / "600001").write_text(
        "0\t7\tptosis.\tHP:0000508\n"
        "8\t14\tmyopia\tHP:0000545\tRelated\n"
        "15\t22\tanosmia\tHP:0000458\tNeg\tRelated\n",
        encoding="utf-8",
    )
    mentions = read_mentions(tmp_path, "phenobert")
    assert [(m.text, m.gold_ids, m.start, m.end, m.note) for m in mentions] == [
        ("ptosis.", ("HP:0000508",), 0, 7, ""),
        ("myopia", ("HP:0000545",), 8, 14, "Related"),
        ("anosmia", ("HP:0000458",), 15, 22, "Neg\tRelated"),
    ]


@pytest.mark.parametrize(
    ("path", "fmt"),
    [
        ("pubtator.txt", MentionFormat.PUBTATOR),
        ("biosyn", MentionFormat.BIOSYN),
        ("biosyn/1001.concept", MentionFormat.BIOSYN),
        ("cadec_fold", MentionFormat.TSV),
        ("cadec_fold/test.txt", MentionFormat.TSV),
        ("gscplus.tsv", MentionFormat.GSCPLUS),
        ("phenobert", MentionFormat.PHENOBERT),
        ("phenobert/ann/112250", MentionFormat.PHENOBERT),
    ],
)
def test_detect_format(path: str, fmt: MentionFormat) -> None:
    assert detect_format(FIXTURES / path) is fmt


def test_missing_file_is_named(tmp_path: Path) -> None:
    with pytest.raises(InputFormatError, match=r"nope\.txt: no such file"):
        read_mentions(tmp_path / "nope.txt")


def test_fold_without_test_file_is_named(tmp_path: Path) -> None:
    with pytest.raises(InputFormatError, match=r"test\.txt: no such file"):
        read_mentions(tmp_path, MentionFormat.TSV)


def test_wrong_format_names_file_line_and_format() -> None:
    with pytest.raises(
        InputFormatError, match=r"pubtator\.txt:1: expected 'id<TAB>text' \(format tsv\)"
    ):
        read_mentions(FIXTURES / "pubtator.txt", MentionFormat.TSV)
    with pytest.raises(InputFormatError, match=r"test\.txt:1: .*\(format phenobert\)"):
        read_mentions(FIXTURES / "cadec_fold" / "test.txt", "phenobert")


def test_bad_offset_is_reported(tmp_path: Path) -> None:
    path = tmp_path / "ann.tsv"
    path.write_text("1\t5\tfever\tHP:0001945\nx\t9\tcough\tHP:0012735\n")
    with pytest.raises(InputFormatError, match=r"ann\.tsv:2: start offset must be an integer"):
        read_mentions(path, MentionFormat.PHENOBERT)


def test_undetectable_format_lists_the_known_ones() -> None:
    with pytest.raises(InputFormatError, match=r"unknown\.txt: cannot detect .*pubtator, biosyn"):
        read_mentions(FIXTURES / "unknown.txt")


def test_unknown_format_name() -> None:
    with pytest.raises(ValueError, match=r"unknown mention format 'brat'; known formats: pubtator"):
        read_mentions(FIXTURES / "pubtator.txt", "brat")


def test_empty_dataset_is_an_error(tmp_path: Path) -> None:
    path = tmp_path / "empty.tsv"
    path.write_text("\n\n")
    with pytest.raises(EmptyResultError, match=r"empty\.tsv: no mention found \(format tsv\)"):
        read_mentions(path, MentionFormat.TSV)
    with pytest.raises(InputFormatError, match="cannot detect"):
        read_mentions(path)


def test_folder_without_concept_files(tmp_path: Path) -> None:
    with pytest.raises(InputFormatError, match=r"no \*\.concept file"):
        read_mentions(tmp_path, MentionFormat.BIOSYN)


def test_non_utf8_file_is_named(tmp_path: Path) -> None:
    path = tmp_path / "latin1.txt"
    path.write_bytes("1\tfièvre\n".encode("latin-1"))
    with pytest.raises(InputFormatError, match=r"latin1\.txt: not UTF-8"):
        read_mentions(path, MentionFormat.TSV)
