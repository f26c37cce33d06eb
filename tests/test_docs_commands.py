"""Every `golden ...` command shown in the README's and docs/'s code blocks parses.

The commands in the documentation are the ones people copy. Each is parsed by click as
`golden` would parse it -- the command path resolved, every option checked to exist, values
converted (integer ranges, choices), required options present -- without running anything. A
renamed command or option, a dropped option, or a value of the wrong type in the docs fails
here, naming the file and line.

What counts as a command: a line of a fenced code block (``` or ~~~, shell-like or no
language) in README.md or docs/*.md, after joining `\\` continuations and dropping a `$ `
prompt and `# comments`, split at `&&`, `||`, `|` and `;`, whose first word (after `VAR=value`
assignments) is `golden`. Redirections (`> out.txt`, `2>&1`) and their targets are dropped;
`$(...)` is one placeholder value. Placeholders such as FILE, `<deployment>` or `path/to/kb/`
parse as ordinary values; files need not exist. A `...` word elides the rest of a command
("golden score ... --fail-under ndcg@10=0.5"): it is dropped, and options that elision may
have left out are not required.
"""

from __future__ import annotations

import contextlib
import re
import shlex
from dataclasses import dataclass
from pathlib import Path

import click
import pytest

from builder.cli import golden

ROOT = Path(__file__).resolve().parent.parent
DOC_FILES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]

SHELL_LANGUAGES = {"", "sh", "bash", "shell", "console", "zsh", "shell-session"}
FENCE = re.compile(r"^\s*(```+|~~~+)\s*([\w+-]*)")
SEPARATORS = {"&&", "||", "|", ";", "&"}
REDIRECT = re.compile(r"^(\d?>>?|&>>?|<|\d?>&\d?|\d?>&|<<<?)$")  # an operator, target next
REDIRECT_GLUED = re.compile(r"^(\d?>>?|&>|<)[^<>&]+$|^\d?>&\d$")  # operator and target in one
ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
SUBSTITUTION = re.compile(r"\$\([^()]*\)|`[^`]*`")
# a line that may hold a golden command (output lines such as "golden: error: ..." do not)
MAY_RUN_GOLDEN = re.compile(r"(^|&&|\|\||[|;])\s*([A-Za-z_]\w*=\S*\s+)*golden(\s|$)")


@dataclass(frozen=True)
class DocCommand:
    path: str  # relative to the repository
    line: int  # 1-based line of the command's first physical line
    argv: tuple[str, ...]  # the words after `golden`
    elided: bool  # a `...` word was dropped

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: golden {shlex.join(self.argv)}"


def code_block_lines(text: str) -> list[tuple[int, str]]:
    """(line number, line) of every line inside a shell-like fenced code block."""
    lines, fence, keep = [], None, False
    for number, line in enumerate(text.splitlines(), start=1):
        match = FENCE.match(line)
        if fence is None and match:
            fence, keep = match.group(1), match.group(2).lower() in SHELL_LANGUAGES
        elif fence is not None and line.strip().startswith(fence[0] * len(fence)) \
                and not line.strip().strip(fence[0]):
            fence = None
        elif fence is not None and keep:
            lines.append((number, line))
    return lines


def logical_lines(lines: list[tuple[int, str]]) -> list[tuple[int, str]]:
    """Join `\\` continuations; drop a `$ ` or `> ` prompt. Numbered by the first line."""
    joined: list[tuple[int, str]] = []
    start, parts = None, []
    for number, line in lines:
        text = line.strip()
        if not parts:
            text = re.sub(r"^[$%] ", "", text)
            start = number
        if text.endswith("\\"):
            parts.append(text[:-1])
            continue
        parts.append(text)
        joined.append((start, " ".join(parts)))
        parts = []
    if parts:
        joined.append((start, " ".join(parts)))
    return joined


def golden_argvs(line: str) -> list[list[str]]:
    """The argument lists of the `golden` commands of one shell line (after `golden`).
    A line that runs golden but is not valid shell (an unclosed quote) raises ValueError."""
    if not MAY_RUN_GOLDEN.search(line):
        return []
    words = shlex.split(SUBSTITUTION.sub("X", line), comments=True)
    commands, segment = [], []
    for word in [*words, ";"]:
        if word in SEPARATORS or word.endswith(";") and word != ";":
            if word.endswith(";") and word != ";":
                segment.append(word[:-1])
            commands.append(segment)
            segment = []
        else:
            segment.append(word)
    found = []
    for words in commands:
        while words and ASSIGNMENT.match(words[0]):
            words = words[1:]
        if not words or words[0] != "golden":
            continue
        argv, skip_next = [], False
        for word in words[1:]:
            if skip_next:
                skip_next = False
            elif REDIRECT.match(word):
                skip_next = True
            elif not REDIRECT_GLUED.match(word):
                argv.append(word)
        found.append(argv)
    return found


def doc_commands(path: Path, name: str | None = None) -> list[DocCommand]:
    """The `golden` commands of one Markdown file, named by `name` (default: its path in the
    repository)."""
    name = name or str(path.relative_to(ROOT))
    commands = []
    for number, line in logical_lines(code_block_lines(path.read_text(encoding="utf-8"))):
        try:
            argvs = golden_argvs(line)
        except ValueError as exc:
            raise ValueError(f"{name}:{number}: not a shell line ({exc}): {line}") from None
        commands += [DocCommand(name, number, tuple(w for w in argv if w != "..."), "..." in argv)
                     for argv in argvs]
    return commands


@contextlib.contextmanager
def _files_need_not_exist(command: click.Command):
    """Docs name files that exist only on the reader's machine: lift `exists=True` for the
    parse (restored after), keep every other check."""
    lifted = [p.type for p in command.params
              if isinstance(p.type, click.Path) and p.type.exists]
    for path_type in lifted:
        path_type.exists = False
    try:
        yield
    finally:
        for path_type in lifted:
            path_type.exists = True


def parse_golden(argv: list[str], *, elided: bool = False) -> click.Context:
    """Parse `golden ARGV` as the command line would, to `--help`-level validation, running
    nothing: resolve the command path group by group, then let click parse and convert every
    option and argument (`make_context`). Raises click's UsageError (unknown command or option,
    a bad value, a missing required option) like `golden` would. `--help` and `--version`
    parse fine (they stop before the command runs)."""
    command: click.Command = golden
    name, args, parent = "golden", list(argv), None
    while True:
        try:
            with _files_need_not_exist(command):
                ctx = command.make_context(name, args, parent=parent)
        except click.exceptions.Exit as exit_:  # --help, --version: printed, then stop
            if exit_.exit_code:
                raise
            return parent or click.Context(command)
        except click.MissingParameter:
            if not elided:
                raise
            return parent or click.Context(command)
        if not isinstance(command, click.Group):
            return ctx
        rest = [*getattr(ctx, "_protected_args", []), *ctx.args]
        if not rest:
            return ctx
        name, sub, args = command.resolve_command(ctx, rest)
        assert sub is not None, f"no command {rest[0]!r}"
        command, parent = sub, ctx


def command_paths(command: click.Command = golden, path: tuple[str, ...] = ()) -> list[tuple]:
    """Every command path of the CLI: ("ingest",), ("batch", "submit"), ..."""
    found = [path] if path else []
    if isinstance(command, click.Group):
        ctx = click.Context(command)
        for name in command.list_commands(ctx):
            found += command_paths(command.get_command(ctx, name), (*path, name))
    return found


ALL_COMMANDS = [c for path in DOC_FILES for c in doc_commands(path)]


@pytest.mark.parametrize("doc", ALL_COMMANDS, ids=[f"{c.path}:{c.line}" for c in ALL_COMMANDS])
def test_documented_command_parses(doc, capsys):
    try:
        parse_golden(list(doc.argv), elided=doc.elided)
    except click.UsageError as exc:
        pytest.fail(f"{doc}\n  does not parse: {exc.format_message()}")


def _shows(commands: list[DocCommand], path: tuple[str, ...]) -> bool:
    """Whether one of `commands` runs the command at `path` (global `--db X` aside)."""
    for command in commands:
        argv = command.argv[2:] if command.argv[:1] == ("--db",) else command.argv
        if argv[: len(path)] == path:
            return True
    return False


def test_every_command_is_documented_in_commands_md():
    """docs/commands.md shows each command of the CLI, so a new command gets documented; the
    README's walk-through shows the way from zero to a score."""
    in_commands_md = [c for c in ALL_COMMANDS if c.path == "docs/commands.md"]
    missing = [" ".join(p) for p in command_paths() if not _shows(in_commands_md, p)]
    assert not missing, f"commands docs/commands.md does not show in a code block: {missing}"
    readme = [c for c in ALL_COMMANDS if c.path == "README.md"]
    for step in ("demo", "ingest", "generate", "review", "export", "baseline-run", "score"):
        assert _shows(readme, (step,)), step


# ------------------------------------------------ the checker itself rejects what it should

@pytest.mark.parametrize("argv", [
    ["generate", "--facts", "text"],                       # an option that was removed
    ["generate", "--made-up-option"],
    ["injest", "samples/"],                                # a command that does not exist
    ["batch", "sumbit", "jobs/"],                          # nor a subcommand
    ["review", "export-log", "a.jsonl", "b.jsonl"],        # an extra argument
    ["generate", "--n", "many"],                           # a value of the wrong type
    ["generate", "--n", "0"],                              # out of its range
    ["logs", "promote", "--cause", "weather"],             # not one of the choices
    ["export", "--format", "native"],                      # --out is required
    ["score", "--no-judge", "--golden"],                   # an option without its value
])
def test_the_checker_rejects_a_bad_command(argv):
    with pytest.raises(click.UsageError):
        parse_golden(argv)


def test_the_checker_finds_the_commands_of_a_shell_block(tmp_path):
    (tmp_path / "page.md").write_text("\n".join([
        "```sh",
        "$ golden generate --n 5 \\",
        "      --types single_hop   # a comment --not-an-option",
        "pip install -e . && golden demo --n 3 > demo.log 2>&1",
        "golden --db x.db stats | head -3; golden export --out FILE",
        "GOLDEN_DB=other.db golden ingest path/to/kb/",
        "golden logs import /var/log/rag/$(date -d yesterday +%F).jsonl",
        "golden: error: not a command, output",
        "```",
        "```toml",
        "golden = 'not shell'",
        "```",
        "    golden ingest indented-but-not-fenced/",
    ]))
    found = [(c.line, c.argv) for c in doc_commands(tmp_path / "page.md", "page.md")]
    assert found == [
        (2, ("generate", "--n", "5", "--types", "single_hop")),
        (4, ("demo", "--n", "3")),
        (5, ("--db", "x.db", "stats")),
        (5, ("export", "--out", "FILE")),
        (6, ("ingest", "path/to/kb/")),
        (7, ("logs", "import", "/var/log/rag/X.jsonl")),
    ]
    for _, argv in found:
        parse_golden(list(argv))


def test_an_elision_tolerates_only_missing_options():
    parse_golden(["score", "--fail-under", "ndcg@10=0.5"], elided=True)
    parse_golden(["export", "--split", "train=0.8,test=0.2"], elided=True)
    with pytest.raises(click.UsageError):
        parse_golden(["score", "--fail-unde", "ndcg@10=0.5"], elided=True)
    with pytest.raises(click.UsageError):
        parse_golden(["export", "--split", "train=0.8,test=0.2"])


def test_help_parses_and_files_need_not_exist(capsys):
    parse_golden(["--help"])
    parse_golden(["batch", "import", "--help"])
    parse_golden(["batch", "status", "no/such/folder/"])
    parse_golden(["demo", "--kb", "no/such/kb/"])
    demo = golden.get_command(click.Context(golden), "demo")
    assert next(p for p in demo.params if p.name == "kb").type.exists  # restored after the parse

