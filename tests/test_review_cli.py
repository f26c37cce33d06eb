"""`golden review` command line and keymap loading: bad input is one line and exit 2."""

from __future__ import annotations

import pytest

from builder.cli import main
from builder.errors import InputError
from builder.store import Store
from review_tui.keymap import binding_ids, key_problem, load_keymap
from tests.support.rows import add_candidates


def run_cli(args, capsys) -> tuple[int, str]:
    with pytest.raises(SystemExit) as exc:
        main(args)
    return exc.value.code, capsys.readouterr().err


def test_every_binding_has_an_id():
    from review_tui.screens.calibrate import CalibrationScreen
    from review_tui.screens.edit import EditScreen
    from review_tui.screens.review import ReviewScreen
    from review_tui.widgets.candidate_list import CandidateList

    for cls in (ReviewScreen, EditScreen, CalibrationScreen, CandidateList):
        assert all(b.id for b in cls.BINDINGS), cls
    ids = binding_ids()
    assert ids["review.accept"] == "a" and ids["edit.save_next"] == "ctrl+n"


@pytest.mark.parametrize("keys,ok", [
    ("a", True), ("ctrl+n", True), ("f1", True), ("question_mark", True), ("A", True),
    ("ctrl+shift+left", True), ("j,down", True), ("pagedown", True),
    ("ctlr+n", False), ("ctrl+", False), ("foo", False), ("", False), ("alt+nonsense", False),
])
def test_key_names_are_checked(keys, ok):
    assert (key_problem(keys) is None) is ok


def test_keymap_file_errors_name_file_line_and_entry(tmp_path, monkeypatch):
    good = tmp_path / "keys.toml"
    good.write_text('[review.keys]\n"review.accept" = "y"\n"edit.save_next" = "ctrl+j"\n')
    assert load_keymap(good) == {"review.accept": "y", "edit.save_next": "ctrl+j"}
    flat = tmp_path / "flat.toml"
    flat.write_text('"review.skip" = "k"\n')
    assert load_keymap(flat) == {"review.skip": "k"}
    bad = tmp_path / "bad.toml"
    bad.write_text('[review.keys]\n"review.accept" = "y"\n"review.reject" = "ctlr+x"\n')
    with pytest.raises(InputError, match=r"bad.toml:3: review.reject: 'ctlr\+x': unknown "
                                         r"modifier"):
        load_keymap(bad)
    unknown = tmp_path / "unknown.toml"
    unknown.write_text('[review.keys]\n"review.acept" = "y"\n')
    with pytest.raises(InputError, match="unknown key binding id 'review.acept'"):
        load_keymap(unknown)
    monkeypatch.chdir(tmp_path)
    (tmp_path / "golden.toml").write_text('[review.keys]\n"review.undo" = 3\n')
    with pytest.raises(InputError, match="golden.toml:2: review.undo: expected a key string"):
        load_keymap()


def test_review_command_bad_input_exits_2(tmp_path, capsys):
    code, err = run_cli(["--db", str(tmp_path / "none.db"), "review"], capsys)
    assert code == 2 and "no database here" in err and "Traceback" not in err
    db = tmp_path / "g.db"
    with Store(db) as s:
        add_candidates(s, 1)
    keys = tmp_path / "k.toml"
    keys.write_text('[review.keys]\n"review.accept" = "hyperdrive"\n')
    code, err = run_cli(["--db", str(db), "review", "--keymap", str(keys)], capsys)
    assert code == 2 and f"{keys}:2: review.accept" in err
    code, err = run_cli(["--db", str(db), "review", "--run", "r1"], capsys)
    assert code == 2 and "--calibrate" in err


def test_review_command_leaves_the_gc_on_when_it_fails(tmp_path, capsys):
    """`golden review` turns the cyclic GC off for its start-up: on again however it ends."""
    import gc

    assert gc.isenabled()
    code, err = run_cli(["--db", str(tmp_path / "none.db"), "review"], capsys)
    assert code == 2 and gc.isenabled()
