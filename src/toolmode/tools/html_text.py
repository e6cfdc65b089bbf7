"""Web content to text: HTML to readable text with `html.parser` (no scripts or styles, link text kept),
charset detection, and the text-or-binary decision for fetched bodies."""

from __future__ import annotations

import re
from html.parser import HTMLParser
from urllib.parse import urldefrag, urljoin

# Content that is never shown to a reader.
_SKIP = frozenset({"script", "style", "noscript", "template", "svg", "canvas", "iframe", "object"})
# Elements that start on a new line.
_BLOCK = frozenset({
    "address", "article", "aside", "blockquote", "body", "caption", "dd", "details", "dialog", "div", "dl",
    "dt", "fieldset", "figcaption", "figure", "footer", "form", "h1", "h2", "h3", "h4", "h5", "h6", "header",
    "hr", "html", "li", "main", "nav", "ol", "p", "pre", "section", "summary", "table", "tbody", "tfoot",
    "thead", "tr", "ul",
})  # fmt: skip
_SPACES = re.compile(r"[ \t\r\f\v\n]+")


_PARAGRAPH = frozenset({"p", "h1", "h2", "h3", "h4", "h5", "h6", "table", "pre", "blockquote"})


MAX_HTML_CHARS = 4_000_000  # parsed at most (fetch_url reads 2 MB by default); the rest is not looked at
_TAIL_LIMIT = 1024  # an unterminated tag, comment or declaration longer than this at the end is dropped


class _BoundedParser(HTMLParser):
    """`html.parser`, in time linear in the page.

    Fed in one piece, the parser stops at the first construct that does not end (a `<` tag whose `>`
    never comes, a comment without `-->`) and keeps the rest as pending text. `close()` then works
    through that rest one `<` at a time, scanning to the end each time: quadratic (CPython before 3.13.4,
    gh-135462; 96 KiB of `<a<a<a...` held the host for over a minute). A pending rest longer than a
    real tag is dropped instead, as an HTML5 parser drops an unterminated tag at the end of the input.
    """

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)

    def parse(self, html: str) -> None:
        """Feed the whole page (at most MAX_HTML_CHARS of it) and close."""
        self.feed(html[:MAX_HTML_CHARS])
        if len(getattr(self, "rawdata", "")) > _TAIL_LIMIT:
            self.rawdata = ""
        self.close()


class _TextExtractor(_BoundedParser):
    def __init__(self) -> None:
        super().__init__()
        self.parts: list[str] = []
        self.title_parts: list[str] = []
        self._skip_depth = 0
        self._in_title = False
        self._pre_depth = 0
        self._newlines = 2  # newlines at the end of the text so far; the start counts as a paragraph break

    def _break(self, count: int) -> None:
        """End the current line so that at least `count` newlines separate it from what follows."""
        if self._newlines < count:
            self.parts.append("\n" * (count - self._newlines))
            self._newlines = count

    def _text(self, text: str) -> None:
        self.parts.append(text)
        if text.strip():
            self._newlines = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "title" and not self.title_parts and not self._skip_depth:
            self._in_title = True  # only the document's first title; an <svg><title> is not the page's
        elif tag in _SKIP:
            self._skip_depth += 1
        elif tag == "br":
            self.parts.append("\n")
            self._newlines += 1
        elif tag in _BLOCK:
            self._break(2 if tag in _PARAGRAPH else 1)
            if tag == "li":
                self._text("- ")
            elif tag == "pre":
                self._pre_depth += 1
        elif tag in ("td", "th") and not self._newlines:
            self._text("\t")

    def handle_endtag(self, tag: str) -> None:
        if tag == "title":
            self._in_title = False
        elif tag in _SKIP:
            self._skip_depth = max(0, self._skip_depth - 1)
        elif tag in _BLOCK:
            self._break(2 if tag in _PARAGRAPH else 1)
            if tag == "pre":
                self._pre_depth = max(0, self._pre_depth - 1)

    def handle_data(self, data: str) -> None:
        if self._in_title:
            self.title_parts.append(data)
        elif self._skip_depth:
            return
        elif self._pre_depth:
            self._text(data.replace(" ", "\x00"))  # protected from the whitespace clean-up below
        else:
            self._text(_SPACES.sub(" ", data))


class _LinkExtractor(_BoundedParser):
    def __init__(self) -> None:
        super().__init__()
        self.links: list[tuple[str, list[str]]] = []
        self._open: list[str] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        href = dict(attrs).get("href") if tag == "a" else None
        if href:
            self._open = []
            self.links.append((href, self._open))

    def handle_endtag(self, tag: str) -> None:
        if tag == "a":
            self._open = None

    def handle_data(self, data: str) -> None:
        if self._open is not None:
            self._open.append(data)


def html_links(html: str, base_url: str, limit: int = 100) -> list[dict[str, str]]:
    """The page's links as `{"text", "url"}` with absolute http(s) URLs, in page order, without duplicates.

    Links to the page itself, `javascript:` and `mailto:` links are left out; at most `limit` links are returned.
    """
    parser = _LinkExtractor()
    parser.parse(html)
    seen: set[str] = {urldefrag(base_url).url}  # links back to the page itself say nothing
    links = []
    for href, text_parts in parser.links:
        url = urldefrag(urljoin(base_url, href.strip())).url
        if not url.startswith(("http://", "https://")) or url in seen:
            continue
        seen.add(url)
        links.append({"text": _SPACES.sub(" ", "".join(text_parts)).strip(), "url": url})
        if len(links) >= limit:
            break
    return links


def html_to_text(html: str) -> tuple[str | None, str]:
    """Return (title, text) for an HTML document.

    The title is the first <title>, whitespace-collapsed, or None. The text drops scripts, styles and
    the <head>, keeps the text of links and everything else, puts block elements on their own lines,
    prefixes list items with "- ", keeps <pre> spacing, and has at most one blank line in a row.
    """
    parser = _TextExtractor()
    parser.parse(html)
    title = _SPACES.sub(" ", "".join(parser.title_parts)).strip() or None
    lines = [line.strip(" ").replace("\x00", " ") for line in "".join(parser.parts).split("\n")]
    text = re.sub(r"\n{3,}", "\n\n", "\n".join(lines)).strip("\n")
    return title, text


_TEXT_APPLICATION_TYPES = frozenset(
    {
        "application/json",
        "application/xml",
        "application/javascript",
        "application/ecmascript",
        "application/x-javascript",
        "application/x-www-form-urlencoded",
        "application/yaml",
        "application/x-yaml",
        "application/toml",
        "application/csv",
        "application/x-ndjson",
        "application/sql",
        "application/graphql",
    }
)
_HTML_TYPES = frozenset({"text/html", "application/xhtml+xml"})
_META_CHARSET = re.compile(rb"""<meta[^>]+charset\s*=\s*["']?\s*([A-Za-z0-9_.:-]+)""", re.IGNORECASE)
_SNIFF_BYTES = 4096


def content_kind(content_type: str) -> str:
    """Classify a media type such as `text/html` as "text", "binary" or "unknown" (none, or octet-stream)."""
    ct = content_type.strip().lower()
    if not ct or ct == "application/octet-stream":
        return "unknown"
    if ct.startswith("text/") or ct in _TEXT_APPLICATION_TYPES or ct.endswith(("+json", "+xml")):
        return "text"
    return "binary"


def looks_binary(data: bytes) -> bool:
    """True if the first bytes contain a NUL byte, which text in any common encoding except UTF-16/32 never has."""
    return b"\x00" in data[:_SNIFF_BYTES] and not data.startswith((b"\xff\xfe", b"\xfe\xff"))


def decode_text(body: bytes, charset: str | None) -> str:
    """Decode a body: the declared charset, else a BOM or an HTML <meta charset>, else UTF-8; bad bytes replaced."""
    candidates = [charset] if charset else []
    if body.startswith(b"\xef\xbb\xbf"):
        candidates.append("utf-8-sig")
    elif body.startswith((b"\xff\xfe", b"\xfe\xff")):
        candidates.append("utf-16")
    meta = _META_CHARSET.search(body[:_SNIFF_BYTES])
    if meta:
        candidates.append(meta.group(1).decode("ascii"))
    for encoding in [*candidates, "utf-8"]:
        try:
            return body.decode(encoding, errors="replace")
        except LookupError:  # an unknown charset name: try the next candidate
            continue
    return body.decode("utf-8", errors="replace")


def is_html(content_type: str, text: str) -> bool:
    """True for HTML media types, or an untyped body that starts like an HTML document."""
    if content_type.strip().lower() in _HTML_TYPES:
        return True
    start = text[:512].lstrip().lower()
    return not content_type and start.startswith(("<!doctype html", "<html"))
