"""A `from:` folder that is a link out of the memdirs root is refused, with file and line."""

from __future__ import annotations

from pathlib import Path

from memeval.scenarios import load_many

SCENARIO = """\
id: linked
now: 2026-11-30T12:00:00Z
mode: recall
project_root: /home/dev/linked
memdirs:
  project:
    from: shop
turns:
  - id: t1
    query: how do I run the tests?
    category: direct
    why: testing.md
    relevant: [testing.md]
"""


def test_a_symlinked_from_folder_is_refused_with_its_line(tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "testing.md").write_text("---\ndescription: planted\n---\nsecret\n")
    fixtures = tmp_path / "fixtures"
    (fixtures / "scenarios").mkdir(parents=True)
    (fixtures / "memdirs").mkdir()
    (fixtures / "memdirs" / "shop").symlink_to(elsewhere, target_is_directory=True)
    scenario = fixtures / "scenarios" / "linked.yaml"
    scenario.write_text(SCENARIO)
    loaded = load_many([str(scenario)])
    assert not loaded.scenarios
    (error,) = loaded.errors
    assert f"{scenario}:7:" in str(error) and "link" in str(error)
    assert "copy the memdir" in str(error)


def test_a_from_path_passing_through_a_link_out_is_refused(tmp_path: Path) -> None:
    """`from: via/shop` where `via` links out: the folder itself is real, the way is not."""
    elsewhere = tmp_path / "elsewhere" / "shop"
    elsewhere.mkdir(parents=True)
    (elsewhere / "testing.md").write_text("---\ndescription: planted\n---\nsecret\n")
    fixtures = tmp_path / "fixtures"
    (fixtures / "scenarios").mkdir(parents=True)
    (fixtures / "memdirs").mkdir()
    (fixtures / "memdirs" / "via").symlink_to(elsewhere.parent, target_is_directory=True)
    scenario = fixtures / "scenarios" / "linked.yaml"
    scenario.write_text(SCENARIO.replace("from: shop", "from: via/shop"))
    loaded = load_many([str(scenario)])
    assert not loaded.scenarios
    (error,) = loaded.errors
    assert f"{scenario}:7:" in str(error) and str(elsewhere) in str(error)
    assert "planted" not in str(error)


def test_a_link_that_stays_inside_the_memdirs_root_is_followed(tmp_path: Path) -> None:
    fixtures = tmp_path / "fixtures"
    (fixtures / "scenarios").mkdir(parents=True)
    (fixtures / "memdirs" / "real").mkdir(parents=True)
    (fixtures / "memdirs" / "real" / "testing.md").write_text(
        "---\ndescription: run the tests on postgres\n---\nbody\n")
    (fixtures / "memdirs" / "shop").symlink_to(fixtures / "memdirs" / "real",
                                               target_is_directory=True)
    scenario = fixtures / "scenarios" / "linked.yaml"
    scenario.write_text(SCENARIO)
    loaded = load_many([str(scenario)])
    assert loaded.errors == ()
    assert "testing.md" in loaded.scenarios[0].project.files
