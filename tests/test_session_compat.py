"""The compatibility settings object: presets, spec strings, and their errors."""

from __future__ import annotations

import pytest

from memeval.errors import MemevalError
from memeval.session import Compat


def test_faithful_has_every_quirk_on_and_hardened_none():
    assert set(Compat.faithful().quirks_on) == set(Compat.quirk_names())
    assert Compat.hardened().quirks_on == ()
    assert Compat() == Compat.faithful()


def test_the_named_quirks_are_the_documented_ones():
    assert set(Compat.quirk_names()) == {
        "duplicate_names_surface_twice", "quoted_agent_prefix_quirk",
        "agent_mentioned_twice_searched_twice", "exact_200_lines_marked_truncated",
        "follow_symlinks_out_of_memdir"}


@pytest.mark.parametrize(("spec", "on"), [
    ("faithful", set(Compat.quirk_names())),
    ("hardened", set()),
    ("hardened+duplicate_names_surface_twice", {"duplicate_names_surface_twice"}),
    ("faithful-follow_symlinks_out_of_memdir",
     set(Compat.quirk_names()) - {"follow_symlinks_out_of_memdir"}),
    (" hardened + quoted_agent_prefix_quirk ", {"quoted_agent_prefix_quirk"}),
])
def test_spec_strings_pick_a_preset_and_toggle_quirks(spec, on):
    assert set(Compat.from_spec(spec).quirks_on) == on


@pytest.mark.parametrize("compat", [
    Compat.faithful(), Compat.hardened(),
    Compat.hardened().with_quirks(duplicate_names_surface_twice=True),
    Compat.faithful().with_quirks(quoted_agent_prefix_quirk=False),
])
def test_preset_name_round_trips(compat):
    assert Compat.from_spec(compat.preset_name) == compat


@pytest.mark.parametrize(("spec", "message"), [
    ("strict", "unknown preset 'strict'"),
    ("hardened+no_such_quirk", "unknown quirk 'no_such_quirk'"),
])
def test_bad_spec_strings_say_what_is_known(spec, message):
    with pytest.raises(MemevalError, match=message):
        Compat.from_spec(spec)


def test_to_dict_lists_every_switch():
    assert Compat.hardened().to_dict() == {
        **dict.fromkeys(Compat.quirk_names(), False), "extra_file_tools": False,
        "compaction": "clear"}


def test_both_presets_still_clear_on_compaction_and_count_only_claude_codes_tools():
    # Restore waits for the bundled compaction scenarios to be relabelled (issue 35).
    for compat in (Compat.faithful(), Compat.hardened()):
        assert compat.compaction == "clear" and not compat.extra_file_tools
    restore = Compat.from_spec("faithful+compaction=restore")
    assert restore.compaction == "restore" and restore.preset_name == "faithful+compaction=restore"


@pytest.mark.parametrize(("spec", "expected"), [
    ("faithful+compaction=restore", Compat.faithful().with_quirks(compaction="restore")),
    ("hardened+extra_file_tools", Compat.hardened().with_quirks(extra_file_tools=True)),
    ("faithful+extra_file_tools+compaction=restore",
     Compat(extra_file_tools=True, compaction="restore")),
])
def test_spec_strings_set_the_extension_and_the_compaction_mode(spec, expected):
    compat = Compat.from_spec(spec)
    assert compat == expected
    assert Compat.from_spec(compat.preset_name) == compat


@pytest.mark.parametrize("spec", [
    "faithful+compaction=keep", "faithful-compaction=clear", "faithful+mode=clear"])
def test_bad_compaction_settings_are_refused(spec):
    with pytest.raises(MemevalError, match="compaction=<mode>"):
        Compat.from_spec(spec)
