"""Loading `golden.toml`: one optional file of defaults, validated section by section.

Precedence everywhere in golden is CLI > environment > golden.toml > built-in defaults; this
module only reads the file. Each part of golden validates its own table with a pydantic model
through `config_section`, so a wrong type is reported as one line naming the file, the line
(when it can be found) and the dotted key, e.g.
``golden.toml:4: llm.temperature: Input should be a valid number``.

Guarantees: reading never writes anything; a missing default file is not an error (an empty
config); a missing file named explicitly (`--config x.toml`) is.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from builder.errors import InputError

DEFAULT_CONFIG_NAME = "golden.toml"

if TYPE_CHECKING:
    from pydantic import BaseModel

M = TypeVar("M", bound="BaseModel")


@dataclass(frozen=True)
class ConfigFile:
    """The parsed file (or an empty one). `path` is None when no file was read."""

    path: str | None = None
    data: dict[str, Any] = field(default_factory=dict)
    text: str = ""

    def table(self, *keys: str) -> dict[str, Any]:
        """The nested table at `keys` ({} if absent); a non-table there is an InputError."""
        node: Any = self.data
        for depth, key in enumerate(keys):
            if not isinstance(node, dict):
                break
            node = node.get(key, {})
            if not isinstance(node, dict):
                dotted = ".".join(keys[: depth + 1])
                raise InputError(f"{dotted}: expected a table", path=self.path,
                                 line=find_key_line(self.text, keys[: depth + 1]))
        return node


def load_config(path: str | Path | None = None) -> ConfigFile:
    """Read `path`, or `./golden.toml` if it exists, or return an empty config."""
    explicit = path is not None
    target = Path(path) if explicit else Path(DEFAULT_CONFIG_NAME)
    if not target.is_file():
        if explicit:
            raise InputError("config file not found", path=str(target))
        return ConfigFile()
    try:
        text = target.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"cannot read config ({exc})", path=str(target)) from exc
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        m = re.search(r"line (\d+)", str(exc))
        raise InputError(f"invalid TOML: {exc}", path=str(target),
                         line=int(m.group(1)) if m else None) from exc
    return ConfigFile(path=str(target), data=data, text=text)


def config_section(config: ConfigFile, keys: tuple[str, ...], model: type[M]) -> M:
    """Validate the table at `keys` with `model`; the first error becomes an InputError."""
    from pydantic import ValidationError  # here: reading a config must not cost its import

    raw = config.table(*keys)
    try:
        return model.model_validate(raw)
    except ValidationError as exc:
        err = exc.errors()[0]
        loc = tuple(keys) + tuple(str(p) for p in err["loc"])
        got = err.get("input")
        detail = err["msg"]
        if err["type"] not in ("missing", "extra_forbidden") and not isinstance(got, dict):
            detail += f", got {got!r}"
        raise InputError(f"{'.'.join(loc)}: {detail}", path=config.path,
                         line=find_key_line(config.text, loc)) from None


_HEADER = re.compile(r"^\s*\[\[?\s*([^\]]+?)\s*\]\]?\s*(#.*)?$")
_ASSIGN = re.compile(r"""^\s*("[^"]*"|'[^']*'|[A-Za-z0-9_-]+)\s*=""")


def _split_dotted(header: str) -> tuple[str, ...]:
    parts = re.findall(r'"([^"]*)"|\'([^\']*)\'|([A-Za-z0-9_-]+)', header)
    return tuple(a or b or c for a, b, c in parts)


def find_key_line(text: str, keys: tuple[str, ...]) -> int | None:
    """Best-effort line number of a dotted key (tables with `[a.b]` headers, `k = v` lines).

    Only used to point error messages at a line; returns None when unsure.
    """
    current: tuple[str, ...] = ()
    keys = tuple(keys)
    header_line = None
    for n, line in enumerate(text.splitlines(), 1):
        m = _HEADER.match(line)
        if m:
            current = _split_dotted(m.group(1))
            if current == keys:
                header_line = n
            continue
        m = _ASSIGN.match(line)
        if m and current + (m.group(1).strip("\"'"),) == keys[: len(current) + 1]:
            return n  # the key itself, or an inline table / dotted key that holds it
    if header_line is not None:
        return header_line
    if len(keys) > 1:
        return find_key_line(text, keys[:-1])
    return None
