"""Which files flower opens, and whether a file's bytes are what it says it is.

Slack's ``mimetype`` and ``filetype`` are guesses from the name the person gave, so they decide
only what is worth downloading; the bytes decide the rest. An "image" must start like one (a
model is shown it as an image of that exact media type), a PDF or an archive must carry its magic
number, and nothing that starts like a program (ELF, Windows PE, Mach-O) is taken whatever its
name says: a workspace is where commands run, and a program there is one ``chmod`` from running.
"""

from __future__ import annotations

from typing import Literal

__all__ = ["Kind", "check_content", "image_type", "kind_of"]

Kind = Literal["image", "text", "pdf", "archive"]

_IMAGE_MIMETYPES = {"image/png", "image/jpeg", "image/jpg", "image/pjpeg", "image/gif", "image/webp"}
_IMAGE_FILETYPES = {"png", "jpg", "jpeg", "gif", "webp"}
_PDF_MIMETYPES = {"application/pdf", "application/x-pdf"}
_ARCHIVE_MIMETYPES = {"application/zip", "application/x-zip", "application/x-zip-compressed", "application/x-tar",
                      "application/gzip", "application/x-gzip", "application/x-gtar", "application/x-compressed-tar",
                      "application/tar+gzip"}
_ARCHIVE_FILETYPES = {"zip", "tar", "gzip", "gz", "tgz"}
_ARCHIVE_EXTENSIONS = {"zip", "tar", "gz", "tgz"}
# Not text/*, yet text: data, configuration and scripts as browsers and Slack label them.
_TEXT_MIMETYPES = {"application/json", "application/x-ndjson", "application/ld+json", "application/yaml",
                   "application/x-yaml", "application/xml", "application/toml", "application/x-sh",
                   "application/x-shellscript", "application/javascript", "application/x-javascript",
                   "application/typescript", "application/x-python", "application/x-python-code", "application/sql",
                   "application/x-diff", "application/x-patch", "application/csv", "application/x-httpd-php",
                   "application/x-ruby", "application/x-perl", "application/graphql", "image/svg+xml"}
# Slack's own filetype names for text, data and source code (https://docs.slack.dev/reference/objects/file-object).
_TEXT_FILETYPES = {
    "text", "csv", "tsv", "json", "yaml", "xml", "diff", "markdown", "html", "css", "svg", "log", "toml", "ini",
    "applescript", "c", "cpp", "csharp", "clojure", "coffeescript", "cfm", "d", "dart", "dockerfile", "erlang",
    "elixir", "fsharp", "fortran", "go", "groovy", "handlebars", "haskell", "haxe", "java", "javascript", "julia",
    "kotlin", "latex", "lisp", "lua", "makefile", "matlab", "mumps", "objc", "ocaml", "pascal", "perl", "php", "pig",
    "powershell", "puppet", "python", "r", "ruby", "rust", "sass", "scala", "scheme", "shell", "smalltalk", "sql",
    "swift", "typescript", "vb", "vbscript", "velocity", "verilog", "vhdl", "protobuf", "graphql",
}
# Consulted only when Slack knows nothing of the file (no mimetype or application/octet-stream).
_TEXT_EXTENSIONS = {
    "txt", "log", "md", "markdown", "rst", "adoc", "org", "csv", "tsv", "json", "jsonl", "ndjson", "ipynb", "yaml",
    "yml", "toml", "ini", "cfg", "conf", "env", "properties", "xml", "html", "htm", "css", "scss", "svg", "diff",
    "patch", "py", "pyi", "js", "mjs", "cjs", "ts", "tsx", "jsx", "vue", "svelte", "c", "h", "cc", "cpp", "hpp",
    "cs", "go", "java", "kt", "kts", "rs", "rb", "php", "pl", "sh", "bash", "zsh", "fish", "ps1", "sql", "swift",
    "scala", "hs", "lua", "r", "dart", "ex", "exs", "erl", "clj", "ml", "tex", "proto", "graphql", "gradle", "tf",
}
_UNKNOWN = {"", "application/octet-stream", "binary/octet-stream"}
_PROGRAMS = (b"\x7fELF", b"\xfe\xed\xfa\xce", b"\xfe\xed\xfa\xcf", b"\xce\xfa\xed\xfe", b"\xcf\xfa\xed\xfe")  # ELF, Mach-O


def _extension(name: str) -> str:
    return name.rsplit(".", 1)[-1].lower() if "." in name else ""


def kind_of(name: str, mimetype: str, filetype: str) -> Kind | None:
    """The kind of a file Slack describes, or None when flower does not open it.

    ``mimetype`` first, then Slack's ``filetype``, then (only for a file Slack could not place)
    the name's extension. A binary nobody can place is None.
    """
    mime = (mimetype or "").split(";", 1)[0].strip().lower()
    ftype = (filetype or "").strip().lower()
    if mime in _IMAGE_MIMETYPES or ftype in _IMAGE_FILETYPES:
        return "image"
    if mime in _PDF_MIMETYPES or ftype == "pdf":
        return "pdf"
    if mime in _ARCHIVE_MIMETYPES or ftype in _ARCHIVE_FILETYPES:
        return "archive"
    if mime.startswith("text/") or mime in _TEXT_MIMETYPES or ftype in _TEXT_FILETYPES:
        return "text"
    if mime in _UNKNOWN and ftype in ("", "binary", "auto"):
        extension = _extension(name)
        if extension in _TEXT_EXTENSIONS:
            return "text"
        if extension == "pdf":
            return "pdf"
        if extension in _ARCHIVE_EXTENSIONS:
            return "archive"
    return None


def image_type(head: bytes) -> str | None:
    """The media type of an image flower takes, read from its first bytes; None if it is none of them."""
    if head.startswith(b"\x89PNG\r\n\x1a\n"):
        return "image/png"
    if head.startswith(b"\xff\xd8\xff"):
        return "image/jpeg"
    if head.startswith((b"GIF87a", b"GIF89a")):
        return "image/gif"
    if len(head) >= 12 and head.startswith(b"RIFF") and head[8:12] == b"WEBP":
        return "image/webp"
    return None


def _is_program(head: bytes) -> bool:
    if head.startswith(_PROGRAMS):
        return True
    # "MZ" alone also starts text ("MZ,Mozambique"); a PE header holds NUL bytes no text has.
    return head.startswith(b"MZ") and b"PE\x00\x00" in head[:1024]


def _is_archive(head: bytes) -> bool:
    return head.startswith((b"PK\x03\x04", b"PK\x05\x06", b"\x1f\x8b")) or head[257:262] == b"ustar"


def check_content(kind: Kind, head: bytes) -> Literal["program", "mismatch"] | None:
    """What is wrong with a file of ``kind`` starting with ``head`` (its first 4 KiB): ``"program"``,
    ``"mismatch"`` (it is not the kind it says), or None when it is fine.

    A file whose bytes are an image is fine whatever it said (it is then treated as an image).
    """
    if image_type(head) is not None:
        return None
    if _is_program(head):
        return "program"
    if kind == "image":
        return "mismatch"
    if kind == "pdf" and b"%PDF-" not in head[:1024]:
        return "mismatch"
    if kind == "archive" and not _is_archive(head):
        return "mismatch"
    return None
