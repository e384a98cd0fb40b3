"""Where edit_file's old_text is in a file: exactly, or by a forgiving match that cannot change
what the edit means (line endings, Unicode normalization, indentation), said in a note.

The indentation match is the field's (OpenCode's IndentationFlexibleReplacer, Codex's
apply_patch retrying with trimmed lines), made strict: only the leading whitespace of a line may
differ, by one consistent transformation (tabs expanded or made from N spaces per level, then a
common prefix added or removed); the match must be unique; new_text is re-indented by exactly
that transformation, and when one of its lines cannot be, nothing is guessed.
"""

from __future__ import annotations

import math
import re
import unicodedata
from dataclasses import dataclass

Span = tuple[int, int, str]  # start, end, replacement
WIDTHS = (4, 2, 8, 3)  # spaces per level tried when old_text and the file indent differently


def find_occurrences(text: str, old_text: str, new_text: str, *, by_indentation: bool = True) -> tuple[list[Span], str]:
    """Where old_text occurs in text, as (start, end, replacement), and a note on how it matched.

    Exact first. Else, when the file has CR line endings, ignoring CRLF/LF differences line by
    line (the model sees read_file's lines without their endings, so it cannot copy them; a file
    with mixed endings could not be edited otherwise); new_text then takes the matched
    region's ending. Else old_text in the file's Unicode normalization (é as one character or
    as e and a combining accent look the same to the model but differ as text). Else, with
    `by_indentation`, the one region that differs from old_text only in indentation.
    """
    spans = [(m.start(), m.end(), new_text) for m in re.finditer(re.escape(old_text), text)]
    if spans:
        return spans, ""
    if ("\r" in text or "\r" in old_text) and "\n" in old_text:
        lines = old_text.replace("\r\n", "\n").split("\n")
        pattern = re.compile(r"\r?\n".join(re.escape(line) for line in lines))
        unix_new = new_text.replace("\r\n", "\n")
        for m in pattern.finditer(text):
            eol = "\r\n" if "\r\n" in m.group() else "\n"
            spans.append((m.start(), m.end(), unix_new.replace("\n", eol)))
        if spans:
            mixed = any("\r\n" in m.group() and re.search(r"(?<!\r)\n", m.group()) for m in pattern.finditer(text))
            how = "ignoring its mixed CRLF and LF line endings" if mixed else "with the file's CRLF line endings"
            return spans, f" (matched {how})"
    for form in ("NFC", "NFD"):
        normal = unicodedata.normalize(form, old_text)
        if normal != old_text and normal in text:
            replacement = unicodedata.normalize(form, new_text)
            spans = [(m.start(), m.end(), replacement) for m in re.finditer(re.escape(normal), text)]
            return spans, f" (matched in the file's Unicode normalization form {form})"
    if by_indentation:
        found = indentation_match(text, old_text, new_text)
        if found is not None:
            return [found[0]], found[1]
        if LITERAL_TAB in old_text:
            old_tabs, new_tabs = _literal_tabs(old_text), _literal_tabs(new_text)
            if old_tabs != old_text:
                spans, note = find_occurrences(text, old_tabs, new_tabs, by_indentation=True)
                if len(spans) == 1:
                    how = note.removeprefix(" (").removesuffix(")")
                    return (
                        spans,
                        f" (matched reading the \\t that starts old_text's lines as tabs{'; ' + how if how else ''})",
                    )
    return [], ""


# A model that writes its call as JSON in text escapes twice: old_text arrives with a backslash and
# a t where the file has a tab ("\\tif password ..." after edit_file's hint showed "\tif ...").
LITERAL_TAB = "\\t"
_LEADING = re.compile(r"^(?:[ \t]|\\t)+", re.MULTILINE)


def _literal_tabs(text: str) -> str:
    """`text` with each backslash-t in a line's leading whitespace read as a tab (nowhere else: a
    backslash-t inside code is code)."""
    return _LEADING.sub(lambda m: m.group().replace(LITERAL_TAB, "\t"), text)


# --- indentation ----------------------------------------------------------------------------


def _indent(line: str) -> str:
    return line[: len(line) - len(line.lstrip(" \t"))]


def _columns(indent: str, width: int) -> int:
    column = 0
    for ch in indent:
        column = (column // width + 1) * width if ch == "\t" else column + 1
    return column


@dataclass(frozen=True)
class Reindent:
    """How old_text's leading whitespace becomes the file's: restyled (`tabs`: N spaces per
    level become a tab; `spaces`: a tab becomes N spaces; `""`: as it is), then `prefix`
    added in front (`adds`) or removed from the front."""

    style: str
    width: int
    prefix: str
    adds: bool

    def apply(self, indent: str) -> str | None:
        """The indent this transformation makes of `indent`, or None when it cannot."""
        if self.style:
            column = _columns(indent, self.width)
            tabs, spaces = divmod(column, self.width) if self.style == "tabs" else (0, column)
            indent = "\t" * tabs + " " * spaces
        if self.adds:
            return self.prefix + indent
        return indent[len(self.prefix) :] if indent.startswith(self.prefix) else None

    def describe(self) -> str:
        parts = []
        if self.style == "tabs":
            parts.append(f"the file indents with tabs where old_text uses {self.width} spaces per level")
        elif self.style == "spaces":
            parts.append(f"the file indents with {self.width} spaces per level where old_text uses tabs")
        if self.prefix:
            more = "more" if self.adds else "fewer"
            amounts = [
                f"{'one' if n == 1 else n} {more} {what}{'s' if n > 1 else ''}"
                for n, what in ((self.prefix.count("\t"), "tab"), (self.prefix.count(" "), "space"))
                if n
            ]
            parts.append(f"old_text's lines are indented with {' and '.join(amounts)} in the file")
        return "; ".join(parts) or "only the indentation differs"


def _fit(found: list[str], old: list[str], style: str, width: int) -> Reindent | None:
    """The transformation of `style` and `width` that maps old's indents onto found's, if any
    (the lines' texts are already known to be equal). An unindented first line of old_text is
    free (see _first_free): it may start after the file line's indentation."""
    skip = 1 if _first_free(old) else 0
    pairs = [(_indent(f), _indent(o)) for f, o in zip(found[skip:], old[skip:], strict=True) if o.strip(" \t")]
    if not pairs:
        return None
    restyle = Reindent(style, width, "", True)
    file_indent, old_indent = pairs[0][0], restyle.apply(pairs[0][1]) or ""
    if file_indent.endswith(old_indent):
        reindent = Reindent(style, width, file_indent[: len(file_indent) - len(old_indent)], True)
    elif old_indent.endswith(file_indent):
        reindent = Reindent(style, width, old_indent[: len(old_indent) - len(file_indent)], False)
    else:
        return None
    return reindent if all(reindent.apply(o) == f for f, o in pairs) else None


def _first_free(old: list[str]) -> bool:
    """Whether old_text's first line may start mid-line: it has no indentation and more lines
    follow (models write old_text from the first line's first word, as an exact match allows)."""
    return len(old) > 1 and bool(old[0].strip(" \t")) and not _indent(old[0])


def _width_hint(indents: list[str]) -> list[int]:
    """WIDTHS, led by the step that the space-only indents given suggest."""
    counts = [len(x) for x in indents if x and not x.strip(" ")]
    step = math.gcd(*counts) if counts else 0
    return [step, *(w for w in WIDTHS if w != step)] if step in WIDTHS else list(WIDTHS)


def _transformations(found: list[str], old: list[str], new: list[str]) -> list[Reindent]:
    """Every transformation that maps old onto found, the likeliest first: none of style, then
    the one that needs no prefix, then the widths the texts suggest."""
    tabs = _width_hint([_indent(x) for x in old + new])
    spaces = _width_hint([_indent(x) for x in found])
    tried = [("", 1)] + [("tabs", w) for w in tabs] + [("spaces", w) for w in spaces]
    fits = [fit for style, width in tried if (fit := _fit(found, old, style, width)) is not None]
    return sorted(fits, key=lambda r: (r.style != "", r.prefix != ""))  # stable: width order kept


def indentation_match(text: str, old_text: str, new_text: str) -> tuple[Span, str] | None:
    """The one region of whole lines that differs from old_text only in its lines' leading
    whitespace, with new_text re-indented the same way, and the note that says so; None when
    there is no such region, more than one, or new_text cannot be re-indented that way."""
    old = old_text.replace("\r\n", "\n").split("\n")
    with_newline = len(old) > 1 and old[-1] == ""
    if with_newline:
        old.pop()
    anchor = next((i for i, x in enumerate(old) if x.strip(" \t")), None)
    if anchor is None:
        return None
    raw = text.split("\n")
    lines = [x.removesuffix("\r") for x in raw]
    want = [x.lstrip(" \t") for x in old]
    n = len(old)
    regions: list[int] = []
    for i, line in enumerate(lines):
        start = i - anchor
        if line.lstrip(" \t") != want[anchor] or start < 0 or start + n > len(lines) - (1 if with_newline else 0):
            continue
        if all(lines[start + k].lstrip(" \t") == want[k] for k in range(n)):
            if _transformations(lines[start : start + n], old, []):
                regions.append(start)
                if len(regions) > 1:
                    return None  # ambiguous: the edit could land in either place
    if not regions:
        return None
    start = regions[0]
    found = lines[start : start + n]
    new = new_text.replace("\r\n", "\n").split("\n")
    eol = "\r\n" if raw[start].endswith("\r") else "\n"
    begin = sum(len(x) + 1 for x in raw[:start])
    last = begin + sum(len(x) + 1 for x in raw[start : start + n - 1])  # where the region's last line starts
    end = last + len(raw[start + n - 1]) + 1 if with_newline else last + len(found[-1])
    free = _first_free(old)
    if free:  # the region starts at the first line's text: the file's indentation before it stays
        begin += len(_indent(raw[start]))
    for reindent in _transformations(found, old, new):
        out = []
        for number, line in enumerate(new):
            if free and number == 0:
                out.append(line.lstrip(" \t"))
                continue
            indent = reindent.apply(_indent(line))
            if line.strip(" \t"):
                if indent is None:
                    break  # a line of new_text indented less than the prefix removed: no guessing
                out.append(indent + line.lstrip(" \t"))
            else:  # a blank line stays blank; whitespace alone is re-indented when it can be
                out.append((indent or "") if line else "")
        else:
            note = f" (matched ignoring indentation: {reindent.describe()}; new_text was re-indented the same way)"
            return (begin, end, eol.join(out)), note
    return None


__all__ = ["Reindent", "Span", "find_occurrences", "indentation_match"]
