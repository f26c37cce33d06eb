"""Timestamps as stored: ISO-8601 UTC text with microseconds (sorts as text)."""

from datetime import datetime, timezone


def utcnow() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="microseconds")
