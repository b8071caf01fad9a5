"""Offline text corpus for the token benchmarks (B2, B3).

Seven categories, built only from what the machine already has:

* code     — the running interpreter's stdlib ``.py`` files;
* prose    — ``pydoc_data.topics`` (the Python reference's prose) and
  ``/usr/share/common-licenses``;
* json     — generated, pretty-printed, path-heavy records (deterministic);
* cjk-zh   — Chinese: the translations of the zh_CN / zh_TW / zh_HK gettext catalogues (``.mo``)
  under ``/usr/share/locale``;
* cjk-ja   — Japanese: the ja catalogues' translations that have kana;
* cjk-ko   — Korean: the ko catalogues' translations that have Hangul;
* cjk-code — CJK in code: the catalogues' (English key, CJK message) pairs of all four written as
  gettext ``.po`` entries, JSON message files, Python with CJK comments and strings, TypeScript
  message tables and C with CJK comments, in turn (deterministic).

Each CJK sample takes the catalogues' messages round-robin, one from each catalogue in turn, so
that its first kilobytes hold many programs' messages; a message without the script's characters
(untranslated, a bare format) is left out. Generated CJK text is the fallback on a machine with too
few catalogues. ``cjk_text()`` is the four interleaved in ~4 KB blocks (B3's CJK input).

``build(total_bytes)`` mixes them 60/20/10 (code, prose, json) and 2.5% each of the CJK ones by
UTF-8 bytes as ~20 KB chunks (cut on character boundaries). Sources are repeated when the machine
has less text than asked for.
"""

from __future__ import annotations

import itertools
import json
import random
import re
import struct
import sysconfig
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

CHUNK = 20 * 1024
MIX = {
    "code": 0.6,
    "prose": 0.2,
    "json": 0.1,
    "cjk-zh": 0.025,
    "cjk-ja": 0.025,
    "cjk-ko": 0.025,
    "cjk-code": 0.025,
}
LOCALE_DIR = Path("/usr/share/locale")
# Each CJK language's catalogues, and the characters a message must have to be kept.
CJK_LANGUAGES: dict[str, tuple[tuple[str, ...], re.Pattern[str]]] = {
    "zh": (("zh_CN", "zh_TW", "zh_HK"), re.compile("[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")),
    "ja": (("ja",), re.compile("[\u3041-\u309f\u30a0-\u30ff]")),  # kana
    "ko": (("ko",), re.compile("[\uac00-\ud7af\u1100-\u11ff\u3130-\u318f]")),  # Hangul
}
# Each CJK sample's least size, generated text added when the catalogues have less: B2's
# first pass counts 600 KB of each without a repeat.
CJK_MINIMUM = 1_000_000


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


def _mo_pairs(data: bytes) -> list[tuple[str, str]]:
    """(msgid, msgstr) of each message of a GNU .mo catalogue, in the catalogue's order (sorted by
    msgid): the msgid without its context, a plural's forms each a pair of its own, the header
    (msgid "") left out."""
    if len(data) < 20:
        return []
    magic = struct.unpack("<I", data[:4])[0]
    order = "<" if magic == 0x950412DE else ">" if magic == 0xDE120495 else None
    if order is None:
        return []
    n, orig_off, trans_off = struct.unpack(order + "3I", data[8:20])
    out: list[tuple[str, str]] = []
    for i in range(n):
        orig = data[orig_off + 8 * i : orig_off + 8 * i + 8]
        trans = data[trans_off + 8 * i : trans_off + 8 * i + 8]
        if len(orig) < 8 or len(trans) < 8:
            break
        (olen, ooff), (tlen, toff) = (
            struct.unpack(order + "2I", orig),
            struct.unpack(order + "2I", trans),
        )
        try:
            msgid = data[ooff : ooff + olen].decode("utf-8")
            msgstr = data[toff : toff + tlen].decode("utf-8")
        except UnicodeDecodeError:
            continue
        msgid = msgid.split("\x04")[-1].split("\x00")[0]
        if not msgid:
            continue
        out.extend((msgid, form) for form in msgstr.split("\x00") if form.strip())
    return out


@cache
def _catalogue_pairs(language: str) -> list[tuple[str, str]]:
    """A CJK language's (English msgid, translation) pairs from this machine's catalogues, one
    from each catalogue in turn; translations without the language's characters left out."""
    locales, script = CJK_LANGUAGES[language]
    catalogues: list[list[tuple[str, str]]] = []
    names = sorted(
        {p.name for loc in locales for p in (LOCALE_DIR / loc / "LC_MESSAGES").glob("*.mo")}
    )
    for name in names:
        for loc in locales:
            path = LOCALE_DIR / loc / "LC_MESSAGES" / name
            try:
                pairs = _mo_pairs(path.read_bytes())
            except OSError:
                continue
            kept = [(k, v) for k, v in pairs if script.search(v)]
            if kept:
                catalogues.append(kept)
    return [pair for row in itertools.zip_longest(*catalogues) for pair in row if pair is not None]


def _cjk_language_text(language: str, minimum: int) -> str:
    text = "\n".join(v for _, v in _catalogue_pairs(language))
    if len(text.encode()) < minimum:
        text += "\n" + _generated_cjk(minimum, language)
    return text


@cache
def cjk_zh_text(minimum: int = CJK_MINIMUM) -> str:
    """Chinese: the zh_CN / zh_TW / zh_HK catalogues' translations."""
    return _cjk_language_text("zh", minimum)


@cache
def cjk_ja_text(minimum: int = CJK_MINIMUM) -> str:
    """Japanese with kana: the ja catalogues' translations that have kana."""
    return _cjk_language_text("ja", minimum)


@cache
def cjk_ko_text(minimum: int = CJK_MINIMUM) -> str:
    """Korean: the ko catalogues' translations that have Hangul."""
    return _cjk_language_text("ko", minimum)


def _words(msgid: str, limit: int = 4) -> list[str]:
    return [w.lower() for w in re.findall(r"[A-Za-z]{2,}", msgid)[:limit]] or ["message"]


def _one_line(text: str) -> str:
    return " ".join(text.split())


def _lit(text: str) -> str:
    """A double-quoted string literal (valid Python, JSON, TypeScript and, mostly, C and .po)."""
    return json.dumps(text, ensure_ascii=False)


def _po(pairs: list[tuple[str, str]], n: int) -> str:
    return "".join(
        f"#: src/{_words(k, 1)[0]}.c:{n + 17 * i}\nmsgid {_lit(k)}\nmsgstr {_lit(v)}\n\n"
        for i, (k, v) in enumerate(pairs)
    )


def _json_messages(pairs: list[tuple[str, str]], n: int) -> str:
    body = ",\n".join(
        f'  "{"_".join(_words(k))}_{n + i}": {_lit(v)}' for i, (k, v) in enumerate(pairs)
    )
    return "{\n" + body + "\n}\n"


def _python(pairs: list[tuple[str, str]], n: int) -> str:
    out = []
    for i, (k, v) in enumerate(pairs):
        name = "_".join(_words(k))
        out.append(
            f"def check_{name}_{n + i}(path: str, *, strict: bool = False) -> str:\n"
            f"    # {_one_line(v)}\n"
            f"    if strict and not os.path.exists(path):\n"
            f"        raise ValueError(_({_lit(k)}))\n"
            f"    logger.debug({_lit(_one_line(v) + ': %s')}, path)\n"
            f"    return _({_lit(v)})\n\n\n"
        )
    return "".join(out)


def _typescript(pairs: list[tuple[str, str]], n: int) -> str:
    lines = [f"export const messages{n} = {{"]
    for k, v in pairs:
        w = _words(k)
        key = w[0] + "".join(x.capitalize() for x in w[1:])
        lines.append(f"  // {_one_line(k)}")
        lines.append(f"  {key}: t({_lit(k)}, {{ defaultValue: {_lit(v)} }}),")
    return "\n".join(lines) + "\n} as const;\n\n"


def _c(pairs: list[tuple[str, str]], n: int) -> str:
    out = []
    for i, (k, v) in enumerate(pairs):
        out.append(
            f"/* {_one_line(v).replace('*/', '* /')} */\n"
            f"if (rc_{n + i} != 0) {{\n"
            f"    fprintf(stderr, _({_lit(k)}), name);\n"
            f"    return -{1 + i % 7};\n"
            f"}}\n"
        )
    return "".join(out)


_CODE_FORMS = (_po, _json_messages, _python, _typescript, _c)


@cache
def cjk_code_text(minimum: int = CJK_MINIMUM) -> str:
    """CJK in code: the four languages' (English key, message) pairs, a language at a time in
    groups of 8, each group written as the next of .po entries, a JSON message file, Python
    with CJK comments and strings, a TypeScript message table and C with CJK comments."""
    languages = [_catalogue_pairs(lang) or _generated_pairs(lang) for lang in CJK_LANGUAGES]
    if sum(len(p) for p in languages) < 64:
        languages = [_generated_pairs(lang) for lang in CJK_LANGUAGES]
    out: list[str] = []
    size = 0
    group = 0
    while size < minimum or group < 4 * len(_CODE_FORMS):
        pairs = languages[group % len(languages)]
        start = (group // len(languages)) * 8 % max(len(pairs) - 8, 1)
        part = _CODE_FORMS[group % len(_CODE_FORMS)](pairs[start : start + 8], group * 8)
        out.append(part)
        size += len(part.encode())
        group += 1
    return "".join(out)


@cache
def cjk_text(minimum: int = CJK_MINIMUM) -> str:
    """The four CJK samples (Chinese, Japanese, Korean, CJK in code) interleaved in ~4 KB blocks,
    at least `minimum` UTF-8 bytes."""
    per_sample = -(-minimum // 4)
    samples = [
        chunks_of(f(max(per_sample, CJK_MINIMUM)), per_sample, chunk=4096)
        for f in (cjk_zh_text, cjk_ja_text, cjk_ko_text, cjk_code_text)
    ]
    return "".join(
        block for row in itertools.zip_longest(*samples) for block in row if block is not None
    )


# Frequent-ish CJK ideographs, hiragana/katakana and Hangul syllables, by code point.
_ZH = "".join(chr(c) for c in range(0x4E00, 0x9FA5, 41))
_KANA = "".join(chr(c) for c in [*range(0x3041, 0x3097), *range(0x30A1, 0x30FB)])
_KO = "".join(chr(c) for c in range(0xAC00, 0xD7A4, 97))


def _generated_sentence(rng: random.Random, language: str) -> str:
    if language == "ja":  # kanji runs between kana, as Japanese is written
        return "".join(
            rng.choice(_ZH) * rng.randint(0, 1) + rng.choice(_KANA)
            for _ in range(rng.randint(4, 20))
        )
    alphabet = {"zh": _ZH, "ko": _KO}.get(language) or rng.choice([_ZH, _KANA, _KO])
    return "".join(rng.choice(alphabet) for _ in range(rng.randint(6, 30)))


def _generated_cjk(nbytes: int, language: str = "") -> str:
    rng = random.Random(99)
    stops = ["\u3002", "\u3001", "\uff0c", "\uff01", "\uff1f", " ", "\n"]
    out: list[str] = []
    size = 0
    while size < nbytes:
        piece = _generated_sentence(rng, language) + rng.choice(stops)
        out.append(piece)
        size += len(piece.encode())
    return "".join(out)


def _generated_pairs(language: str, n: int = 2000) -> list[tuple[str, str]]:
    rng = random.Random(41)
    words = ["file", "open", "cannot", "read", "write", "invalid", "option", "missing", "argument"]
    return [
        (
            " ".join(rng.choice(words) for _ in range(rng.randint(2, 6))).capitalize(),
            _generated_sentence(rng, language),
        )
        for _ in range(n)
    ]


SOURCES = {
    "code": code_text,
    "prose": prose_text,
    "json": json_text,
    "cjk-zh": cjk_zh_text,
    "cjk-ja": cjk_ja_text,
    "cjk-ko": cjk_ko_text,
    "cjk-code": cjk_code_text,
    "cjk": cjk_text,
}


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
    """A corpus of about `total_bytes` UTF-8 bytes mixed by `mix` (default MIX)."""
    mix = mix or MIX
    return Corpus(
        {cat: chunks_of(SOURCES[cat](), int(total_bytes * share)) for cat, share in mix.items()}
    )


def sample(category: str, nbytes: int) -> str:
    """One contiguous text of about `nbytes` from a category (for the truncation benchmark)."""
    return "".join(chunks_of(SOURCES[category](), nbytes, chunk=nbytes))
