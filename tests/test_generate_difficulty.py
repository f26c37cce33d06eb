"""difficulty.measure: each signal moves the level the way the rule in its docstring says."""

from __future__ import annotations

import pytest

from builder.generate.difficulty import level, measure
from tests.support.rows import chunk_row, document_row, insert_rows
from builder.store import Store

CHUNKS = {
    "hol": "We offer 25 days of holiday plus bank holidays each calendar year.",
    "exp": "Expenses are paid at the end of each month through the payroll.",
    "dev": "Client data may only be accessed on a work device.",
    **{f"pad{i}": f"Filler paragraph number {i} about office plants and coffee machines."
       for i in range(25)},
}


@pytest.fixture
def store(tmp_path):
    s = Store(tmp_path / "d.db")
    insert_rows(s, "documents", [document_row(f"{cid}.md", content_hash=cid, n_chars=len(t),
                                              n_tokens=len(t) // 4, language="en", metadata={})
                                 for cid, t in CHUNKS.items()])
    insert_rows(s, "chunks", [chunk_row(cid, f"{cid}.md", t, 0, title=cid, heading_path=[],
                                        language="en", metadata={}) for cid, t in CHUNKS.items()])
    yield s
    s.close()


def cand(ctype, question, chunk_ids, quotes):
    return {"type": ctype, "question": question, "chunk_ids": chunk_ids,
            "evidence": [{"chunk_id": c, "quote": q} for c, q in zip(chunk_ids, quotes)]}


def test_a_lookup_found_by_keyword_search_is_easy(store):
    lvl, sig = measure(store, cand("single_hop", "How many days of holiday do we offer each "
                                   "calendar year?", ["hol"], [CHUNKS["hol"]]))
    assert sig["gold_rank"] == 1 and sig["lexical_overlap"] >= 0.5
    assert sig["points"] == 0 and lvl == "easy"


def test_a_paraphrase_the_baseline_misses_is_hard(store):
    # no word in common with its evidence: overlap 0 (+2) and no FTS hit at all (+2)
    lvl, sig = measure(store, cand("single_hop", "Which gadget is allowed for customer "
                                   "records?", ["dev"], [CHUNKS["dev"]]))
    assert sig["gold_rank"] is None and sig["lexical_overlap"] < 0.25
    assert sig["points"] == 4 and lvl == "hard"


def test_one_mild_weakness_keeps_a_lookup_easy_and_two_make_it_medium(store):
    # 1 of 3 terms in the evidence (+1), found at rank 1 (+0): one mild weakness
    lvl, sig = measure(store, cand("single_hop", "When do staff get reimbursed for "
                                   "expenses?", ["exp"], [CHUNKS["exp"]]))
    assert sig["gold_rank"] == 1 and 0.25 <= sig["lexical_overlap"] < 0.5
    assert sig["points"] == 1 and lvl == "easy"
    # partial overlap (+1) and a gold chunk the search ranks 6-20 (+1): medium. The filler
    # chunks tie on these words, and ties go by chunk id, so pad14 comes after pad0-pad13.
    lvl, sig = measure(store, cand("single_hop", "Which office plants and coffee machines do "
                                   "reimbursed staff expenses cover monthly?", ["pad14"],
                                   [CHUNKS["pad14"]]))
    assert 6 <= sig["gold_rank"] <= 20 and 0.25 <= sig["lexical_overlap"] < 0.5
    assert sig["points"] == 2 and lvl == "medium"


def test_a_second_hop_or_a_reasoning_step_adds_a_level(store):
    q = "How many days of holiday do we offer and when are expenses paid?"
    lvl_multi, sig = measure(store, cand("multi_hop", q, ["hol", "exp"],
                                         [CHUNKS["hol"], CHUNKS["exp"]]))
    assert sig["hops"] == 2 and sig["reasoning_step"] == 0 and sig["points"] >= 2
    assert lvl_multi in ("medium", "hard")
    _, sig_cmp = measure(store, cand("comparative", q, ["hol", "exp"],
                                     [CHUNKS["hol"], CHUNKS["exp"]]))
    assert sig_cmp["reasoning_step"] == 1 and sig_cmp["points"] == sig["points"] + 2
    assert level(sig_cmp["points"]) == "hard"


def test_unanswerable_near_misses_are_harder_than_far_ones(store):
    near_lvl, near = measure(store, {"type": "unanswerable", "chunk_ids": [], "evidence": [],
                                     "question": "How many days of holiday do interns get each "
                                                 "calendar year?"})
    far_lvl, far = measure(store, {"type": "unanswerable", "chunk_ids": [], "evidence": [],
                                   "question": "Is there a company choir?"})
    assert near["top_overlap"] >= 0.6 and near["points"] == 4 and near_lvl == "hard"
    assert far["top_overlap"] < 0.3 and far["points"] == 2 and far_lvl == "medium"


@pytest.mark.parametrize("points,expected", [(0, "easy"), (1, "easy"), (2, "medium"),
                                             (3, "medium"), (4, "hard"), (6, "hard")])
def test_levels_cut_at_one_and_four_points(points, expected):
    assert level(points) == expected
