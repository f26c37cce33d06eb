"""Remappable keys: every binding in the review UI has an id (`review.accept`, ...); a keymap maps
ids to key strings and is read from `[review.keys]` in golden.toml or from `--keymap FILE` (a TOML
file with the same `[review.keys]` table, or the ids at its top level).

    [review.keys]
    "review.accept" = "y"
    "review.reject" = "x"
    "edit.save_next" = "ctrl+j"

Guarantees: an unknown binding id, a value that is not a string, or a key Textual cannot name
is an `InputError` naming the file, the line and the entry, before the UI starts.
"""

from __future__ import annotations

from pathlib import Path

from textual.keys import Keys, key_to_character

from builder.config import ConfigFile, find_key_line, load_config
from builder.errors import InputError

MODIFIERS = {"ctrl", "alt", "shift", "meta", "super", "hyper"}
_NAMED = {k.value.rpartition("+")[2] for k in Keys} | {
    "enter", "tab", "space", "backspace", "escape", "delete", "insert", "home", "end",
    "pageup", "pagedown", "up", "down", "left", "right", *(f"f{i}" for i in range(1, 25)),
}


def binding_ids() -> dict[str, str]:
    """Every remappable binding id -> its default keys (gathered from the BINDINGS of every
    screen and widget of the review UI)."""
    from review_tui.screens.calibrate import CalibrationScreen
    from review_tui.screens.edit import EditScreen
    from review_tui.screens.full_text import FullTextScreen
    from review_tui.screens.help import HelpScreen
    from review_tui.screens.kb_search import KBSearchScreen
    from review_tui.screens.modals import (BulkConfirmScreen, FilterScreen, RejectScreen,
                                           StatsScreen, TagScreen)
    from review_tui.screens.review import ReviewScreen
    from review_tui.widgets.candidate_list import CandidateList
    from review_tui.widgets.chunk_search import ChunkSearch

    ids: dict[str, str] = {}
    for cls in (ReviewScreen, CandidateList, EditScreen, RejectScreen, TagScreen, FilterScreen,
                BulkConfirmScreen, StatsScreen, HelpScreen, CalibrationScreen, KBSearchScreen,
                ChunkSearch, FullTextScreen):
        for b in cls.BINDINGS:
            if getattr(b, "id", None):
                ids[b.id] = b.key
    return ids


def key_problem(keys: str) -> str | None:
    """Why `keys` (comma-separated, e.g. "ctrl+n,down") is not a key Textual can bind, or None."""
    if not isinstance(keys, str) or not keys.strip():
        return "expected a key string such as \"a\", \"ctrl+n\" or \"f2\""
    for key in keys.split(","):
        key = key.strip()
        if len(key) == 1:
            if not key.isprintable() or key == " ":
                return f"{key!r} is not a printable key (write 'space')"
            continue
        *mods, name = key.split("+")
        bad = [m for m in mods if m not in MODIFIERS]
        if bad or not name:
            return (f"{key!r}: unknown modifier {bad[0]!r} (use {', '.join(sorted(MODIFIERS))})"
                    if bad else f"{key!r}: no key after the modifier")
        if len(name) == 1 or name in _NAMED or key_to_character(name) is not None:
            continue
        return f"{key!r}: unknown key name {name!r} (e.g. a, question_mark, f1, pagedown)"
    return None


def read_keymap(config: ConfigFile, *, top_level_ok: bool = False) -> dict[str, str]:
    """The validated `[review.keys]` table of `config` (or its top level if allowed)."""
    table = config.table("review", "keys")
    prefix: tuple[str, ...] = ("review", "keys")
    if not table and top_level_ok:
        table = {k: v for k, v in config.data.items() if not isinstance(v, dict)}
        prefix = ()
    if not table:  # nothing remapped: no need to import every screen to list their ids
        return {}
    known = binding_ids()
    keymap: dict[str, str] = {}
    for binding_id, keys in table.items():
        line = find_key_line(config.text, (*prefix, binding_id)) if config.text else None
        if binding_id not in known:
            raise InputError(f"unknown key binding id {binding_id!r} (known: "
                             f"{', '.join(sorted(known))})", path=config.path, line=line)
        problem = key_problem(keys)
        if problem:
            raise InputError(f"{binding_id}: {problem}", path=config.path, line=line)
        keymap[binding_id] = ",".join(k.strip() for k in keys.split(","))
    return keymap


def load_keymap(keymap_file: str | Path | None = None) -> dict[str, str]:
    """Keymap from `--keymap FILE` if given, else from `./golden.toml` (empty if neither)."""
    if keymap_file is not None:
        return read_keymap(load_config(keymap_file), top_level_ok=True)
    return read_keymap(load_config())
