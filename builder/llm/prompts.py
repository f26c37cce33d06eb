"""Prompt templates: one file per stage in `prompts/`, loaded at run time, plus the sentence files
beside them (`refusals.md`, `ambiguous.md`).

File format (plain text, UTF-8)::

    name: roundtrip
    version: 2
    max_tokens: 256
    --- system
    You answer a question using only the numbered passages ...
    --- user
    {{passages}}
    --- list passages
    <passage number="{{number}}">
    {{text}}
    </passage>

The header names the prompt and its version, and may give `max_tokens`: the longest reply the
stage needs. A short-reply stage says so because a runaway reply (the model opening a string
with `"C:\"` and never closing it) otherwise runs to the global 1024 tokens, which a 1.5B model
on one CPU thread takes longer to write than the 120 s timeout; every retry then queues behind
the abandoned generation on the local server (measured: one call lost 12 minutes). Settings
for the stage or its role in `golden.toml` override it; the global `--max-tokens` does not.

Placeholders are `{{name}}`. Sections:

- `--- system`, `--- user`, `--- assistant`: the chat messages, in order. Consecutive sections
  of one role are one message, their texts joined by a newline.
- `--- system example` (or `user example`): part of that message, marked as the prompt's worked
  example; `Prompt.examples` returns these texts (the verifier checks that a question did not
  copy words from them, so they are found by this mark, never by guessing).
- `--- list NAME`: how one element of the list variable NAME is written. The code passes the
  data (a list of dicts, e.g. `[{"text": ...}]`; `number`, counting from 1, is added), the file
  says how the model reads it. Lines before the first line with a placeholder are a heading,
  written once before the elements and only when there are any. Elements of one line are
  written one per line; elements of several lines are separated by a blank line. An empty
  list renders as nothing. A plain string given for a list variable is used as it is.

So every word the model reads is in a prompt file: Python passes data only.

Rendering substitutes each value once, in a single pass, so text from the knowledge base or an
LLM that happens to contain `{{...}}` stays data and is never expanded again.

Where files come from (one rule, for prompt and sentence files alike): the override folder --
`--prompts DIR`, else the `GOLDEN_PROMPTS` environment variable -- when it has a file of that
name, else the copy bundled with golden.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path

from builder.errors import InputError

_PLACEHOLDER = re.compile(r"\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}")
_SECTION = re.compile(
    r"^--- *(?:(system|user|assistant)(?: +(example))?|list +([A-Za-z_][A-Za-z0-9_]*)) *$",
    re.MULTILINE)
_SENTENCE_LINE = re.compile(r"^([a-z]{2}(?:-[A-Za-z]+)?):\s+(\S.*)$")


@dataclass(frozen=True)
class ListTemplate:
    """How one element of a list variable is written (see the module doc)."""

    heading: str
    item: str

    def fields(self) -> set[str]:
        return {m.group(1) for m in _PLACEHOLDER.finditer(self.item)}

    def render(self, items: list[dict]) -> str:
        if not items:
            return ""
        joiner = "\n\n" if "\n" in self.item else "\n"
        body = joiner.join(_fill(self.item, {"number": n, **item}) for n, item in
                           enumerate(items, 1))
        return f"{self.heading}\n{body}" if self.heading else body


@dataclass(frozen=True)
class Prompt:
    name: str
    version: str
    sections: tuple[tuple[str, str], ...]  # (role, template), one per message, in order
    source: str
    examples: tuple[str, ...] = ()
    lists: dict[str, ListTemplate] = field(default_factory=dict)
    max_tokens: int | None = None  # the longest reply the stage needs (header `max_tokens:`)

    def placeholders(self) -> set[str]:
        """The variables the messages use (a list variable counts once, by its name)."""
        return {m.group(1) for _, text in self.sections for m in _PLACEHOLDER.finditer(text)}

    def fill(self, variables: dict[str, object]) -> dict[str, str]:
        """Every variable as the text it becomes in the messages: list variables written through
        their `--- list` section, everything else as `str(value)`."""
        out = {}
        for name, value in variables.items():
            if isinstance(value, list):
                if name not in self.lists:
                    raise KeyError(f"prompt {self.name!r} has no '--- list {name}' section")
                out[name] = self.lists[name].render(value)
            else:
                out[name] = str(value)
        return out

    def render(self, variables: dict[str, object]) -> list[dict[str, str]]:
        """Chat messages with every placeholder filled; a missing variable is an error."""
        missing = self.placeholders() - set(variables)
        if missing:
            raise KeyError(f"prompt {self.name!r} needs {sorted(missing)}")
        values = self.fill(variables)
        return [{"role": role, "content": _fill(text, values)} for role, text in self.sections]


def _fill(template: str, values: dict[str, object]) -> str:
    return _PLACEHOLDER.sub(lambda m: str(values[m.group(1)]), template)


def _list_template(text: str) -> ListTemplate:
    lines = text.split("\n")
    first = next((i for i, line in enumerate(lines) if _PLACEHOLDER.search(line)), 0)
    return ListTemplate(heading="\n".join(lines[:first]), item="\n".join(lines[first:]))


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
    max_tokens = meta.get("max_tokens")
    if max_tokens is not None and not (max_tokens.isdigit() and int(max_tokens) > 0):
        raise InputError(f"max_tokens in the prompt header must be a positive whole number, "
                         f"got {max_tokens!r}", path=source)
    parts = _SECTION.split(text)
    messages: list[list[str]] = []  # [role, text]
    examples: list[str] = []
    lists: dict[str, ListTemplate] = {}
    for i in range(1, len(parts) - 1, 4):
        role, example, list_name, body = parts[i:i + 4]
        body = body.strip("\n")
        if list_name:
            lists[list_name] = _list_template(body)
            continue
        if example:
            examples.append(body)
        if messages and messages[-1][0] == role:
            messages[-1][1] += "\n" + body
        else:
            messages.append([role, body])
    if not messages:
        raise InputError("prompt has no '--- system' / '--- user' sections", path=source)
    return Prompt(name=meta["name"], version=meta["version"],
                  sections=tuple((role, body) for role, body in messages), source=source,
                  examples=tuple(examples), lists=lists,
                  max_tokens=int(max_tokens) if max_tokens else None)


def bundled_prompts_dir() -> Path:
    """The prompts shipped with golden (inside the wheel as `builder/prompts`)."""
    return Path(str(resources.files("builder.prompts")))


def prompt_file(filename: str, prompts_dir: str | Path | None = None) -> tuple[Path, Path | None]:
    """(the file to use, the bundled file when an override replaces it) for a file of the
    prompts folder, by the one rule of the module doc. Raises InputError when neither exists."""
    override = prompts_dir or os.environ.get("GOLDEN_PROMPTS")
    bundled = bundled_prompts_dir() / filename
    if override and (Path(override) / filename).is_file():
        return Path(override) / filename, bundled if bundled.is_file() else None
    if bundled.is_file():
        return bundled, None
    raise InputError(f"no {filename} found", path=str(Path(override) / filename if override
                                                       else bundled))


def load_prompt(name: str, prompts_dir: str | Path | None = None) -> Prompt:
    """Load `<name>.prompt` from the override folder if it has one, else the bundled copy."""
    path, replaced = prompt_file(f"{name}.prompt", prompts_dir)
    prompt = _read_prompt(path)
    if replaced is not None:
        _check_override(prompt, _read_prompt(replaced))
    return prompt


def load_sentences(filename: str, prompts_dir: str | Path | None = None,
                   needs: str | None = None) -> dict[str, str]:
    """{language: sentence} from a sentence file of the prompts folder (`refusals.md`,
    `threshold_ceiling.md`): its `xx: sentence` lines; other lines are ignored. It must have
    `en`, and every sentence must hold `needs` once (a placeholder such as "{amount}") when
    given: an override without it would write items that never state what they ask about."""
    path, _ = prompt_file(filename, prompts_dir)
    out = {}
    for n, line in enumerate(_read_text(path).splitlines(), 1):
        m = _SENTENCE_LINE.match(line.strip())
        if m:
            out[m.group(1)] = m.group(2).strip()
            if needs and out[m.group(1)].count(needs) != 1:
                raise InputError(f"the {m.group(1)} sentence must hold {needs} once",
                                 path=str(path), line=n)
    if "en" not in out:
        raise InputError("needs an 'en: <sentence>' line", path=str(path))
    return out


def _read_text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"cannot read prompt ({exc})", path=str(path)) from exc


def _read_prompt(path: Path) -> Prompt:
    return parse_prompt(_read_text(path), str(path))


def _check_override(override: Prompt, bundled: Prompt) -> None:
    """An override may leave placeholders out but not invent new ones: the stage only passes
    the variables (and list fields) its bundled prompt uses, so an unknown `{{x}}` would fail
    mid-run. A list variable it uses needs its `--- list` section."""
    unknown = sorted(override.placeholders() - bundled.placeholders())
    if unknown:
        _refuse_unknown(override, unknown[0], f"the {bundled.name} prompt is given",
                        bundled.placeholders())
    for name, template in sorted(override.lists.items()):
        known = (bundled.lists[name].fields() if name in bundled.lists else set()) | {"number"}
        extra = sorted(template.fields() - known)
        if extra:
            _refuse_unknown(override, extra[0], f"each of the {bundled.name} prompt's {name} has",
                            known)
    for name in sorted((override.placeholders() & set(bundled.lists)) - set(override.lists)):
        raise InputError(f"{{{{{name}}}}} is a list: the prompt needs a '--- list {name}' "
                         "section saying how one element is written", path=override.source)


def _refuse_unknown(override: Prompt, placeholder: str, owner: str, known: set[str]) -> None:
    text = Path(override.source).read_text(encoding="utf-8")
    first = re.search(r"\{\{\s*" + re.escape(placeholder) + r"\s*\}\}", text)
    line = text.count("\n", 0, first.start()) + 1 if first else None
    raise InputError(f"unknown placeholder {{{{{placeholder}}}}}; {owner} "
                     f"{', '.join(sorted(known)) or 'nothing'}", path=override.source, line=line)
