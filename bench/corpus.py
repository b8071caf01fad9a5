"""Offline text corpus for the token benchmarks (B2, B3).

Four categories, built only from what the machine already has:

* code  — the running interpreter's stdlib ``.py`` files;
* prose — ``pydoc_data.topics`` (the Python reference's prose) and ``/usr/share/common-licenses``;
* json  — generated, pretty-printed, path-heavy records (deterministic);
* cjk   — translations from the zh_CN / zh_TW / ja / ko gettext catalogues (``.mo``) under
  ``/usr/share/locale``, falling back to generated CJK sentences if there are too few.

``build(total_bytes)`` mixes them about 60/20/10/10 by UTF-8 bytes as ~20 KB chunks (cut on
character boundaries). Sources are repeated when the machine has less text than asked for.
"""

from __future__ import annotations

import json
import random
import struct
import sysconfig
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

CHUNK = 20 * 1024
MIX = {"code": 0.6, "prose": 0.2, "json": 0.1, "cjk": 0.1}
CJK_LOCALES = ("zh_CN", "zh_TW", "ja", "ko")


@dataclass
class Corpus:
    chunks: dict[str, list[str]] = field(default_factory=dict)

    @property
    def categories(self) -> list[str]:
        return list(self.chunks)

    def all_chunks(self) -> list[str]:
        return [c for chunks in self.chunks.values() for c in chunks]

    def nbytes(self, category: str | None = None) -> int:
        cats = [category] if category else self.categories
        return sum(len(c.encode()) for cat in cats for c in self.chunks[cat])


@cache
def code_text(limit: int = 12_000_000) -> str:
    lib = Path(sysconfig.get_paths()["stdlib"])
    parts: list[str] = []
    size = 0
    for path in sorted(lib.rglob("*.py")):
        if "site-packages" in path.parts:
            continue
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        parts.append(text)
        size += len(text)
        if size >= limit:
            break
    return "".join(parts) or "def f(x):\n    return [i * 2 for i in range(x) if i % 3]\n" * 1000


@cache
def prose_text() -> str:
    parts: list[str] = []
    try:
        from pydoc_data.topics import topics

        parts.extend(topics[k] for k in sorted(topics))
    except ImportError:
        pass
    licenses = Path("/usr/share/common-licenses")
    if licenses.is_dir():
        for path in sorted(licenses.iterdir()):
            if path.is_file():
                try:
                    parts.append(path.read_text(encoding="utf-8"))
                except (OSError, UnicodeDecodeError):
                    continue
    return "\n\n".join(parts) or "The quick brown fox jumps over the lazy dog. " * 5000


@cache
def json_text(records: int = 20_000) -> str:
    rng = random.Random(1234)
    words = ["alpha", "beta", "gamma", "delta", "config", "build", "test", "src", "lib", "util"]
    rows = []
    for i in range(records):
        depth = rng.randint(1, 5)
        path = "/".join(rng.choice(words) for _ in range(depth))
        rows.append(
            {
                "id": i,
                "path": f"/home/user/projects/{path}/file_{i}.{rng.choice(['py', 'ts', 'go'])}",
                "size": rng.randint(0, 10**6),
                "mtime": 1_700_000_000_000 + rng.randint(0, 10**9),
                "tags": rng.sample(words, rng.randint(0, 4)),
                "partial": rng.random() < 0.2,
                "ratio": round(rng.random(), 4),
            }
        )
    return json.dumps(rows, indent=2)


def _mo_translations(data: bytes) -> list[str]:
    """msgstr strings of a GNU .mo catalogue."""
    if len(data) < 20:
        return []
    magic = struct.unpack("<I", data[:4])[0]
    order = "<" if magic == 0x950412DE else ">" if magic == 0xDE120495 else None
    if order is None:
        return []
    n, _, trans_off = struct.unpack(order + "3I", data[8:20])
    out: list[str] = []
    for i in range(n):
        entry = data[trans_off + 8 * i : trans_off + 8 * i + 8]
        if len(entry) < 8:
            break
        length, off = struct.unpack(order + "2I", entry)
        try:
            out.append(data[off : off + length].decode("utf-8"))
        except UnicodeDecodeError:
            continue
    return out


@cache
def cjk_text(minimum: int = 200_000) -> str:
    parts: list[str] = []
    for loc in CJK_LOCALES:
        d = Path("/usr/share/locale") / loc / "LC_MESSAGES"
        if not d.is_dir():
            continue
        for path in sorted(d.glob("*.mo")):
            try:
                parts.extend(_mo_translations(path.read_bytes()))
            except OSError:
                continue
    # Skip the catalogue headers (the translation of "": Project-Id-Version and friends).
    text = "\n".join(p for p in parts if p.strip() and "Project-Id-Version:" not in p)
    if len(text.encode()) < minimum:
        text += "\n" + _generated_cjk(minimum)
    return text


def _generated_cjk(nbytes: int) -> str:
    rng = random.Random(99)
    # Frequent-ish CJK ideographs, hiragana/katakana and Hangul syllables, by code point.
    zh = "".join(chr(c) for c in range(0x4E00, 0x9FA5, 41))
    ja = "".join(chr(c) for c in [*range(0x3041, 0x3097), *range(0x30A1, 0x30FB)])
    ko = "".join(chr(c) for c in range(0xAC00, 0xD7A4, 97))
    stops = ["\u3002", "\u3001", "\uff0c", "\uff01", "\uff1f", " ", "\n"]
    out: list[str] = []
    size = 0
    while size < nbytes:
        alphabet = rng.choice([zh, ja, ko])
        sentence = "".join(rng.choice(alphabet) for _ in range(rng.randint(6, 30)))
        piece = sentence + rng.choice(stops)
        out.append(piece)
        size += len(piece.encode())
    return "".join(out)


SOURCES = {"code": code_text, "prose": prose_text, "json": json_text, "cjk": cjk_text}


def chunks_of(text: str, nbytes: int, chunk: int = CHUNK, offset: int = 0) -> list[str]:
    """`nbytes` of `text` (repeated if needed) as chunks of ~`chunk` UTF-8 bytes."""
    data = text.encode()
    if not data:
        return []
    out: list[str] = []
    total = 0
    pos = offset % len(data)
    while total < nbytes:
        if pos >= len(data) - 4:
            pos = 0
        end = min(pos + chunk, len(data))
        while end < len(data) and (data[end] & 0xC0) == 0x80:
            end -= 1
        while pos < end and (data[pos] & 0xC0) == 0x80:
            pos += 1
        piece = data[pos:end].decode()
        out.append(piece)
        total += end - pos
        pos = end
    return out


def build(total_bytes: int, mix: dict[str, float] | None = None) -> Corpus:
    """A corpus of about `total_bytes` UTF-8 bytes mixed by `mix` (default 60/20/10/10)."""
    mix = mix or MIX
    return Corpus(
        {cat: chunks_of(SOURCES[cat](), int(total_bytes * share)) for cat, share in mix.items()}
    )


def sample(category: str, nbytes: int) -> str:
    """One contiguous text of about `nbytes` from a category (for the truncation benchmark)."""
    return "".join(chunks_of(SOURCES[category](), nbytes, chunk=nbytes))
