"""Frontmatter as Claude Code reads it: boundary, YAML 1.2 via the JS `yaml` package, retry.

Every expected value below was produced by the JavaScript reference (yaml 2.8.1 on
Node 20) from the same input; the `description` column is the text the manifest shows
(None: no description), `type` the raw string value (None: missing or not a string).
"""

from __future__ import annotations

import pytest

from memeval.memdir.frontmatter import parse_frontmatter, quote_problematic_values
from memeval.memdir.jsvalue import js_string, js_truthy
from memeval.memdir.types import MemoryType, parse_memory_type

CASES = [
    ("yes_is_a_string", "---\ndescription: yes\ntype: user\n---\n", "yes", "user"),
    ("no_is_a_string", "---\ndescription: no\n---\n", "no", None),
    ("date_is_a_string", "---\ndescription: 2024-01-01\n---\n", "2024-01-01", None),
    (
        "datetime_is_a_string",
        "---\ndescription: 2024-01-01T10:00:00Z\n---\n",
        "2024-01-01T10:00:00Z",
        None,
    ),
    ("leading_zero_is_decimal", "---\ndescription: 012\n---\n", "12", None),
    ("octal_0o", "---\ndescription: 0o17\n---\n", "15", None),
    ("hex", "---\ndescription: 0x1F\n---\n", "31", None),
    ("underscore_number_is_a_string", "---\ndescription: 1_000\n---\n", "1_000", None),
    ("float_prints_short", "---\ndescription: 1.50\n---\n", "1.5", None),
    (
        "big_int_loses_precision",
        "---\ndescription: 9007199254740993\n---\n",
        "9007199254740992",
        None,
    ),
    ("exp_overflow_is_infinity", "---\ndescription: 1e400\n---\n", "Infinity", None),
    ("zero_is_no_description", "---\ndescription: 0\ntype: user\n---\n", None, "user"),
    ("false_is_no_description", "---\ndescription: false\n---\n", None, None),
    ("true_prints", "---\ndescription: true\n---\n", "true", None),
    ("nan_is_no_description", "---\ndescription: .nan\n---\n", None, None),
    ("empty_list_is_an_empty_description", "---\ndescription: []\n---\n", "", None),
    (
        "list_joined_by_commas",
        "---\ndescription: [one, two, [three]]\n---\n",
        "one,two,three",
        None,
    ),
    ("block_list", "---\ndescription:\n  - listed\n  - items\n---\n", "listed,items", None),
    ("mapping", "---\ndescription: {a: 1, b: [2, 3]}\n---\n", "[object Object]", None),
    ("binary", "---\ndescription: !!binary aGVsbG8=\n---\n", "hello", None),
    (
        "timestamp_tag",
        "---\ndescription: !!timestamp 2024-01-01\n---\n",
        "Mon Jan 01 2024 00:00:00 GMT+0000 (Coordinated Universal Time)",
        None,
    ),
    ("str_tag", "---\ndescription: !!str 42\ntype: !!str user\n---\n", "42", "user"),
    ("custom_tag", "---\ndescription: !custom tagged value\n---\n", "tagged value", None),
    ("int_tag_on_text_keeps_text", "---\ndescription: !!int x\n---\n", "x", None),
    (
        "tab_after_colon",
        "---\ndescription:\ttab after colon\ntype:\tuser\n---\n",
        "tab after colon",
        "user",
    ),
    ("trailing_tab", "---\ndescription: x\ntype: user\t\n---\n", "x", "user"),
    ("tab_indented_key_is_broken", "---\n\tdescription: tab indented\n---\n", None, None),
    (
        "duplicate_key_empties_all",
        "---\ndescription: one\ntype: user\ndescription: two\n---\n",
        None,
        None,
    ),
    ("duplicate_type", "---\ntype: user\ntype: project\ndescription: dup type\n---\n", None, None),
    (
        "retry_quotes_at",
        "---\ndescription: @reserved at\ntype: user\n---\n",
        "@reserved at",
        "user",
    ),
    (
        "retry_quotes_backtick",
        "---\ndescription: `backtick`\ntype: project\n---\n",
        "`backtick`",
        "project",
    ),
    (
        "retry_quotes_colon_space",
        "---\ndescription: foo: bar\ntype: feedback\n---\n",
        "foo: bar",
        "feedback",
    ),
    (
        "retry_escapes_quotes_and_backslashes",
        '---\ndescription: say "hi" @ C:\\dir\n---\n',
        'say "hi" @ C:\\dir',
        None,
    ),
    ("comment_only", "---\ndescription: #only comment\ntype: user\n---\n", None, "user"),
    ("unterminated_quote", '---\ndescription: "unterminated double\n---\n', None, None),
    ("unclosed_flow", "---\ndescription: [a, b\ntype: user\n---\n", "[a, b", "user"),
    (
        "undefined_alias",
        "---\ndescription: *undefined_alias\ntype: reference\n---\n",
        "*undefined_alias",
        "reference",
    ),
    (
        "alias",
        "---\nanchor: &x anchored value\ndescription: *x\ntype: user\n---\n",
        "anchored value",
        "user",
    ),
    ("not_a_mapping", "---\njust a plain string\n---\n", None, None),
    ("sequence_top", "---\n- a\n- b\n---\n", None, None),
    ("dashes_mid_value_end_the_block", "---\ndescription: a---b\ntype: user\n---\n", "a", None),
    ("doc_end_marker", "---\ndescription: x\n...\ntype: user\n---\n", None, None),
    (
        "nel_and_ls_are_content",
        "---\ndescription: \x85nel \u2028ls\ntype: user\n---\n",
        "\x85nel \u2028ls",
        "user",
    ),
    ("control_char_is_content", "---\ndescription: \x07bell\n---\n", "\x07bell", None),
    ("lone_cr_is_content", "---\ndescription: a\rb\ntype: user\n---\n", "a\rb", "user"),
    (
        "folded_block",
        "---\ndescription: >\n  folded block\n  second line\n\n  para\ntype: project\n---\n",
        "folded block second line\npara\n",
        "project",
    ),
    ("literal_block_cut_by_dashes", "---\ndescription: |\n  a---b\n---\n", "a\n", None),
    ("type_is_case_sensitive", "---\ndescription: d\ntype: User\n---\n", "d", "User"),
    ("type_not_a_string", "---\ndescription: d\ntype: {kind: user}\n---\n", "d", None),
    ("homoglyph_key", "---\ndescrіption: Ukrainian i\ntyрe: user\n---\n", None, None),
    (
        "leading_blank_lines",
        "---\n\n\ndescription: blank lines after open\n---\n",
        "blank lines after open",
        None,
    ),
    ("open_with_trailing_ws", "---   \ndescription: ws\n---\n", "ws", None),
    ("four_dashes_is_no_block", "----\ndescription: four\n---\n", None, None),
    ("leading_space_is_no_block", " ---\ndescription: x\n---\n", None, None),
    ("never_closed", "---\ndescription: never closed\ntype: user\n", None, None),
    ("bom_in_value", "---\ndescription: \ufeffbom inside\n---\n", "\ufeffbom inside", None),
    ("quoted_tab_in_continuation", "---\ndescription: 'x\n\ty'\n---\n", None, None),
    ("multiline_plain", "---\ndescription: first\n  second\n---\n", "first second", None),
    ("multiline_plain_tab_at_column_0", "---\ndescription: first\n\tsecond\n---\n", None, None),
    ("time_sexagesimal_is_a_string", "---\ndescription: 12:30\n---\n", "12:30", None),
    ("multiple_documents", "---\ndescription: x\n--- \n", "x", None),
    ("yaml_directive", "---\n%YAML 1.1\n---\n", None, None),
    (
        "block_header_then_tab",
        "---\ndescription: >-\t\n  folded\ntype: user\n---\n",
        "folded",
        "user",
    ),
    ("tag_then_tab", "---\ndescription: !!str\t42\ntype: user\n---\n", "42", "user"),
    (
        "tab_line_inside_block_scalar",
        "---\ndescription: |\n  text\n\t\ntype: user\n---\n",
        None,
        None,
    ),
    ("tab_then_comment_line", "---\ndescription: x\n\t #c\ntype: user\n---\n", "x", "user"),
    ("flow_continued_too_far_left", "---\n- [a,\nb]\n---\n", None, None),
    ("flow_continued_indented", "---\ndescription: [a,\n b]\n---\n", "a,b", None),
    ("quoted_continuation_needs_indent", "---\ndescription: 'x\ny'\ntype: user\n---\n", None, None),
    ("quoted_continuation_indented", "---\ndescription: 'x\n y'\ntype: user\n---\n", "x y", "user"),
    ("set_tag", "---\ndescription: !!set {a, b}\n---\n", "[object Set]", None),
    ("omap_tag", "---\ndescription: !!omap [a: 1]\n---\n", "[object Map]", None),
    ("nonspecific_tag", "---\ndescription: ! 12\n---\n", "12", None),
    ("float_tag_on_int_keeps_text", "---\ndescription: !!float 1\n---\n", "1", None),
    ("negative_zero_is_no_description", "---\ndescription: -0\n---\n", None, None),
    ("inf_prints", "---\ndescription: -.inf\n---\n", "-Infinity", None),
    (
        "key_order_irrelevant_duplicate_null",
        "---\n~: a\nnull: b\ndescription: d\n---\n",
        None,
        None,
    ),
    ("numeric_duplicate_keys", "---\n1: a\n1.0: b\ndescription: d\n---\n", None, None),
    ("flow_value_then_colon", "---\ndescription: [a, b]: c\ntype: user\n---\n", "a,b", "user"),
    (
        "tag_with_flow_indicator_retries",
        "---\ndescription: ![b x\ntype: user\n---\n",
        "![b x",
        "user",
    ),
    ("empty_secondary_tag_retries", "---\ndescription: !!\ntype: user\n---\n", "!!", "user"),
    ("hash_glued_to_quoted_scalar", "---\ndescription: 'a'#b\ntype: user\n---\n", "'a'#b", "user"),
    ("plane16_text_survives", "---\ndescription: x\U00100007y\n---\n", "x\U00100007y", None),
]


def _shown(text: str) -> tuple[str | None, str | None]:
    meta, _ = parse_frontmatter(text)
    raw = meta.get("description")
    kind = meta.get("type")
    return (js_string(raw) if js_truthy(raw) else None, kind if isinstance(kind, str) else None)


@pytest.mark.parametrize(("name", "text", "description", "type_"), CASES, ids=[c[0] for c in CASES])
def test_frontmatter_reads_like_the_system(
    name: str, text: str, description: str | None, type_: str | None
) -> None:
    assert _shown(text) == (description, type_)


def test_block_ends_at_the_first_dashes_even_mid_line() -> None:
    meta, rest = parse_frontmatter("---\ndescription: a---b\ntype: user\n---\nbody")
    assert meta == {"description": "a"}
    assert rest == "b\ntype: user\n---\nbody"


def test_text_without_a_block_is_returned_whole() -> None:
    assert parse_frontmatter("# title\n---\nx: 1\n---\n") == ({}, "# title\n---\nx: 1\n---\n")


def test_retry_quotes_only_risky_simple_lines() -> None:
    text = "description: @x \"q\" \\\nname: plain\n  nested: @y\nquoted: '@z'"
    assert quote_problematic_values(text) == (
        'description: "@x \\"q\\" \\\\"\nname: plain\n  nested: @y\nquoted: \'@z\''
    )


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("user", MemoryType.USER),
        ("feedback", MemoryType.FEEDBACK),
        ("project", MemoryType.PROJECT),
        ("reference", MemoryType.REFERENCE),
        ("User", None),
        (" user", None),
        ("references", None),
        (1, None),
        (None, None),
        (["user"], None),
    ],
)
def test_memory_types_are_exact(value: object, expected: MemoryType | None) -> None:
    assert parse_memory_type(value) is expected
