"""Prompt templates: one file per stage in `prompts/`, loaded at run time.

File format (plain text, UTF-8)::

    name: facts
    version: 3
    --- system
    You extract atomic facts ...
    --- user
    Chunk:
    {{chunk}}

Placeholders are `{{name}}`. Rendering substitutes each value once, in a single pass, so text
from the knowledge base or an LLM that happens to contain `{{...}}` stays data and is never
expanded again. `--prompts DIR` (or `GOLDEN_PROMPTS`) points at a folder whose files override
the bundled ones by name.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from builder.errors import InputError

_PLACEHOLDER = re.compile(r"\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}")
_SECTION = re.compile(r"^--- *(system|user|assistant) *$", re.MULTILINE)


@dataclass(frozen=True)
class Prompt:
    name: str
    version: str
    sections: tuple[tuple[str, str], ...]  # (role, template) in order
    source: str

    def placeholders(self) -> set[str]:
        return {m.group(1) for _, text in self.sections for m in _PLACEHOLDER.finditer(text)}

    def render(self, variables: dict[str, object]) -> list[dict[str, str]]:
        """Chat messages with every placeholder filled; a missing variable is an error."""
        missing = self.placeholders() - set(variables)
        if missing:
            raise KeyError(f"prompt {self.name!r} needs {sorted(missing)}")

        def fill(m: re.Match) -> str:
            return str(variables[m.group(1)])

        return [{"role": role, "content": _PLACEHOLDER.sub(fill, text)} for role, text in self.sections]


def bundled_prompts_dir() -> Path:
    """The prompts shipped with golden (inside the wheel as `builder/prompts`)."""
    return Path(str(resources.files("builder.prompts")))


def parse_prompt(text: str, source: str) -> Prompt:
    header, _, _ = text.partition("\n---")
    meta: dict[str, str] = {}
    for n, line in enumerate(header.splitlines(), 1):
        if not line.strip() or line.startswith("#"):
            continue
        key, sep, value = line.partition(":")
        if not sep:
            raise InputError(f"expected 'key: value' in the prompt header, got {line!r}", path=source, line=n)
        meta[key.strip()] = value.strip()
    if "version" not in meta or "name" not in meta:
        raise InputError("prompt header needs 'name:' and 'version:' lines", path=source)
    parts = _SECTION.split(text)
    sections = []
    for i in range(1, len(parts) - 1, 2):
        sections.append((parts[i], parts[i + 1].strip("\n")))
    if not sections:
        raise InputError("prompt has no '--- system' / '--- user' sections", path=source)
    return Prompt(name=meta["name"], version=meta["version"], sections=tuple(sections), source=source)


def load_prompt(name: str, prompts_dir: str | Path | None = None) -> Prompt:
    """Load `<name>.prompt` from the override folder if it has one, else the bundled copy."""
    override = prompts_dir or os.environ.get("GOLDEN_PROMPTS")
    candidates = []
    if override:
        candidates.append(Path(override) / f"{name}.prompt")
    candidates.append(bundled_prompts_dir() / f"{name}.prompt")
    for path in candidates:
        if path.is_file():
            prompt = _read_prompt(path)
            if len(candidates) > 1 and path == candidates[0] and candidates[1].is_file():
                _check_override(prompt, _read_prompt(candidates[1]))
            return prompt
    raise InputError(f"no prompt named {name!r}", path=str(candidates[0]))


def _read_prompt(path: Path) -> Prompt:
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"cannot read prompt ({exc})", path=str(path)) from exc
    return parse_prompt(text, str(path))


def _check_override(override: Prompt, bundled: Prompt) -> None:
    """An override may leave placeholders out but not invent new ones: the stage only passes
    the variables its bundled prompt uses, so an unknown `{{x}}` would fail mid-run."""
    unknown = sorted(override.placeholders() - bundled.placeholders())
    if unknown:
        text = Path(override.source).read_text(encoding="utf-8")
        first = re.search(r"\{\{\s*" + re.escape(unknown[0]) + r"\s*\}\}", text)
        line = text.count("\n", 0, first.start()) + 1 if first else None
        raise InputError(f"unknown placeholder {{{{{unknown[0]}}}}}; the {bundled.name} prompt "
                         f"is given {', '.join(sorted(bundled.placeholders())) or 'nothing'}",
                         path=override.source, line=line)
