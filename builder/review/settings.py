"""The `[review]` table of golden.toml: the overlap setting (and `[review.keys]`, read by the
review UI's keymap). Precedence: `golden review --overlap` > golden.toml > the setting the
database already holds (builder/store/review_overlap.py)."""

from __future__ import annotations

from functools import cache
from typing import Any

from builder.config import ConfigFile, config_section, load_config
from builder.errors import InputError
from builder.store.review_overlap import Overlap

DEFAULT_SHARE = 0.1
"""Share of the items routed to k annotators when only k is given (10%: a common sample for
measuring agreement without doubling the work)."""


@cache
def review_settings() -> type:
    """The pydantic model of `[review]`, built when a file has that table: `golden review`
    starts without importing pydantic (~0.1 s) when there is nothing to validate."""
    from pydantic import BaseModel, ConfigDict, Field

    class ReviewSettings(BaseModel):
        model_config = ConfigDict(extra="forbid")

        overlap: int | None = Field(default=None, ge=1, le=20)
        overlap_share: float | None = Field(default=None, ge=0.0, le=1.0)
        keys: dict[str, Any] = Field(default_factory=dict)

    return ReviewSettings


def overlap_setting(k: int | None, share: float | None,
                    config: ConfigFile | None = None) -> Overlap | None:
    """The overlap to store in the database, or None to keep the one it holds: the command
    line's, else golden.toml's `[review] overlap` / `overlap_share`."""
    config = config or load_config()
    if config.table("review"):
        settings = config_section(config, ("review",), review_settings())
        k = k if k is not None else settings.overlap
        share = share if share is not None else settings.overlap_share
    if k is None:
        if share is not None:
            raise InputError("--overlap-share needs --overlap K (or overlap in golden.toml)")
        return None
    return Overlap(k, (DEFAULT_SHARE if share is None else share) if k > 1 else 0.0)
