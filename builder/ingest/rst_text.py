"""reStructuredText as headings, paragraphs, lists, tables and code (docutils' own parser).

What is kept (see `document_text` for the shape of the result): section titles as headings
(level = nesting depth), paragraphs with inline markup reduced to its text, bullet and
enumerated lists (nested lists indented), definition and field lists as "term: definition",
grid and simple tables (first header row, or the first row, as the header), literal and code
blocks as fences, admonitions ("Note: ..."), block quotes, line blocks, footnotes and
citations. Sphinx roles (`:ref:`, `:doc:`, `:class:`...) keep their visible text and a few
Sphinx directives that hold prose (`versionadded`, `deprecated`, `seealso`, `glossary`,
`only`...) keep their content; other unknown directives (`toctree`, `automodule`) and
comments, substitution definitions, targets, raw blocks and images are dropped.

Nothing in the file is acted on: `include`, `raw` and file insertion are disabled, so a
document cannot read other files, and docutils' messages about broken markup are silenced
(the text around it is still kept).
"""

from __future__ import annotations

import io
import re

from builder.errors import InputError
from builder.ingest.document_text import DocumentText, Extracted, collapse_spaces

_SPHINX_ROLES = (
    "ref", "doc", "term", "class", "func", "meth", "attr", "mod", "obj", "data", "exc",
    "const", "option", "envvar", "command", "program", "file", "samp", "kbd", "guilabel",
    "menuselection", "abbr", "dfn", "download", "numref", "keyword", "token", "any",
    "py:class", "py:func", "py:meth", "py:attr", "py:mod", "py:obj", "py:data", "py:exc",
)
_PROSE_DIRECTIVES = ("versionadded", "versionchanged", "deprecated", "seealso", "glossary",
                     "only", "centered", "hlist", "tab", "tabs", "todo", "productionlist")
_TARGET = re.compile(r"^(.*?)\s*<[^<>]*>$", re.DOTALL)
_registered = False


def _register_sphinx_names() -> None:
    """Roles and directives Sphinx adds, registered once per process so docutils keeps their
    text instead of reporting them as unknown."""
    global _registered
    if _registered:
        return
    from docutils import nodes
    from docutils.parsers.rst import Directive, directives, roles

    def visible_text(name, rawtext, text, lineno, inliner, options=None, content=None):
        shown = _TARGET.match(text)
        shown_text = shown.group(1) if shown and shown.group(1) else text
        if shown_text.startswith("~"):
            shown_text = shown_text[1:].rsplit(".", 1)[-1]
        return [nodes.literal(rawtext, shown_text.lstrip("!"))], []

    for name in _SPHINX_ROLES:
        roles.register_local_role(name, visible_text)

    class ProseDirective(Directive):
        optional_arguments = 1
        final_argument_whitespace = True
        has_content = True
        option_spec = None

        def run(self):
            container = nodes.container()
            label = {"versionadded": "New in version", "versionchanged":
                     "Changed in version", "deprecated": "Deprecated since version"}
            if self.arguments and self.name in label:
                version, _, note = self.arguments[0].partition("\n")
                version, _, rest = version.partition(" ")
                note = " ".join((rest + " " + note).split())
                container += nodes.paragraph(
                    text=f"{label[self.name]} {version}" + (f": {note}" if note else "."))
            self.state.nested_parse(self.content, self.content_offset, container)
            return [container]

    for name in _PROSE_DIRECTIVES:
        directives.register_directive(name, ProseDirective)
    _registered = True


def rst_to_text(source: str, display: str) -> Extracted:
    """The document in `source` (see the module docstring). Raises InputError when docutils
    cannot parse it at all."""
    from docutils.core import publish_doctree

    _register_sphinx_names()
    settings = {
        "report_level": 5, "halt_level": 5, "warning_stream": io.StringIO(),
        "file_insertion_enabled": False, "raw_enabled": False, "doctitle_xform": False,
        "sectsubtitle_xform": False, "syntax_highlight": "none", "input_encoding": "unicode",
        "_disable_config": True, "character_level_inline_markup": False,
    }
    try:
        tree = publish_doctree(source, source_path=display, settings_overrides=settings)
    except Exception as exc:  # docutils raises a variety of types on pathological input
        raise InputError(f"cannot parse reStructuredText ({type(exc).__name__}: {exc})",
                         path=display) from None
    out = DocumentText()
    _Walker(out).body(tree, depth=0)
    title = next((b.heading for b in out.blocks if b.kind == "heading"), None)
    return out.result(title)


class _Walker:
    def __init__(self, out: DocumentText) -> None:
        self.out = out
        from docutils import nodes

        self.nodes = nodes
        self.dropped = (nodes.comment, nodes.substitution_definition, nodes.target,
                        nodes.system_message, nodes.raw, nodes.image, nodes.pending,
                        nodes.transition, nodes.problematic, nodes.meta
                        if hasattr(nodes, "meta") else nodes.comment)

    def body(self, node, depth: int) -> None:
        for child in node.children:
            self.element(child, depth)

    def element(self, node, depth: int) -> None:
        n = self.nodes
        out = self.out
        if isinstance(node, self.dropped):
            return
        if isinstance(node, n.section):
            title = node.next_node(n.title)
            if title is not None:
                out.heading(title.astext(), depth + 1)
            for child in node.children:
                if child is not title:
                    self.element(child, depth + 1)
        elif isinstance(node, n.topic) and "contents" in node.get("classes", []):
            return  # a generated table of contents
        elif isinstance(node, (n.title, n.subtitle, n.rubric)):
            out.paragraph(node.astext())
        elif isinstance(node, n.paragraph):
            out.paragraph(collapse_spaces(node.astext()))
        elif isinstance(node, (n.literal_block, n.doctest_block)):
            classes = [c for c in node.get("classes", []) if c != "code"]
            out.code(node.astext(), classes[0] if classes else "")
        elif isinstance(node, (n.bullet_list, n.enumerated_list)):
            items: list[tuple[int, str, str]] = []
            self.list_items(node, 0, items)
            out.items(items)
        elif isinstance(node, (n.definition_list, n.field_list, n.option_list)):
            items = []
            for entry in node.children:
                label = entry.children[0].astext() if entry.children else ""
                rest = " ".join(c.astext() for c in entry.children[1:])
                items.append((0, "-", f"{collapse_spaces(label)}: {collapse_spaces(rest)}"))
            out.items(items)
        elif isinstance(node, n.table):
            out.table(self.table_rows(node))
        elif isinstance(node, n.line_block):
            out.paragraph("\n".join(line.astext() for line in node.findall(n.line)))
        elif isinstance(node, n.Admonition):
            label = node.tagname.capitalize() if node.tagname != "admonition" else ""
            body = [c for c in node.children if not isinstance(c, n.title)]
            title = node.next_node(n.title)
            if title is not None and node.tagname == "admonition":
                label = collapse_spaces(title.astext())
            if body and isinstance(body[0], n.paragraph) and label:
                out.paragraph(f"{label}: {collapse_spaces(body[0].astext())}")
                body = body[1:]
            for child in body:
                self.element(child, depth)
        elif isinstance(node, (n.footnote, n.citation)):
            label = node.next_node(n.label)
            text = " ".join(c.astext() for c in node.children if c is not label)
            out.paragraph(f"[{label.astext() if label else ''}] {collapse_spaces(text)}")
        elif isinstance(node, n.Element) and node.children:
            self.body(node, depth)  # containers, block quotes, figures, compound, ...
        elif isinstance(node, n.Text) and node.astext().strip():
            out.paragraph(node.astext())

    def list_items(self, node, level: int, items: list) -> None:
        n = self.nodes
        enumerated = isinstance(node, n.enumerated_list)
        start = node.get("start", 1)
        for k, item in enumerate(c for c in node.children if isinstance(c, n.list_item)):
            marker = f"{start + k}." if enumerated else "-"
            text = " ".join(collapse_spaces(c.astext()) for c in item.children
                            if not isinstance(c, (n.bullet_list, n.enumerated_list)))
            items.append((level, marker, text))
            for sub in item.children:
                if isinstance(sub, (n.bullet_list, n.enumerated_list)):
                    self.list_items(sub, level + 1, items)

    def table_rows(self, table) -> list[list[str]]:
        n = self.nodes
        rows = []
        for group in table.findall(n.tgroup):
            for part in group.children:
                if isinstance(part, (n.thead, n.tbody)):
                    for row in part.children:
                        rows.append([collapse_spaces(entry.astext()) for entry in row.children])
        return rows
