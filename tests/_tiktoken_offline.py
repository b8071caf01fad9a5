"""Load tiktoken encodings with no network access.

tiktoken downloads its rank files on first use and caches them in ``$TIKTOKEN_CACHE_DIR`` under
the SHA-1 of their URL. The ``bpe-openai`` wheel (a pinned dev dependency) ships the same files
gzipped; :func:`seed_cache` unpacks them into a cache directory under those names, checking each
against the SHA-256 that tiktoken itself pins (``tiktoken_ext/openai_public.py``), so
``tiktoken.get_encoding`` then loads fully offline. Used by the tests (a session fixture) and by
the benchmarks (``bench/``).
"""

from __future__ import annotations

import functools
import gzip
import hashlib
import importlib.util
import os
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import tiktoken

# name -> (cache file name = sha1 of tiktoken's download URL, sha256 of the contents)
RANK_FILES: dict[str, tuple[str, str]] = {
    "cl100k_base": (
        "9b5ad71b2ce5302211f9c61530b329a4922fc6a4",
        "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7",
    ),
    "o200k_base": (
        "fb374d419588a4632f3f557e76b4b70aebbca790",
        "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d",
    ),
}

ENCODINGS = tuple(RANK_FILES)


def default_cache_dir() -> Path:
    """A per-user directory under the system temp dir (reused across runs)."""
    return Path(tempfile.gettempdir()) / f"postcompact-tiktoken-{os.getuid()}"


def _bpe_openai_data() -> Path:
    # Locate the package without importing it: its __init__ loads every encoding eagerly (and
    # warns about a deprecated importlib.resources call).
    spec = importlib.util.find_spec("bpe_openai")
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError("bpe-openai is not installed (see requirements/dev.txt)")
    return Path(next(iter(spec.submodule_search_locations))) / "data"


def seed_cache(cache_dir: Path | None = None) -> Path:
    """Unpack both rank files into ``cache_dir`` (if not already there, verified) and point
    ``TIKTOKEN_CACHE_DIR`` at it. Returns the directory."""
    cache_dir = cache_dir or default_cache_dir()
    cache_dir.mkdir(parents=True, exist_ok=True)
    data = _bpe_openai_data()
    for name, (file_name, sha256) in RANK_FILES.items():
        target = cache_dir / file_name
        if target.exists() and hashlib.sha256(target.read_bytes()).hexdigest() == sha256:
            continue
        raw = gzip.decompress((data / f"{name}.tiktoken.gz").read_bytes())
        digest = hashlib.sha256(raw).hexdigest()
        if digest != sha256:
            raise RuntimeError(f"{name}: bundled rank file has sha256 {digest}, expected {sha256}")
        # Write atomically: parallel test processes may seed the same directory.
        tmp = target.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_bytes(raw)
        tmp.replace(target)
    os.environ["TIKTOKEN_CACHE_DIR"] = str(cache_dir)
    return cache_dir


@functools.cache
def _seed_once() -> Path:
    return seed_cache()


def rank_file(name: str) -> Path:
    """The path of ``name``'s rank file (tiktoken's ``.tiktoken`` format) in the seeded offline
    cache, for tokenizers that load the file themselves (B2's fastokens)."""
    if name not in RANK_FILES:
        raise ValueError(f"no offline data for {name!r}; have {', '.join(RANK_FILES)}")
    return _seed_once() / RANK_FILES[name][0]


def load_encoding(name: str) -> tiktoken.Encoding:
    """``tiktoken.get_encoding(name)`` from the seeded offline cache."""
    if name not in RANK_FILES:
        raise ValueError(f"no offline data for {name!r}; have {', '.join(RANK_FILES)}")
    _seed_once()
    import tiktoken

    return tiktoken.get_encoding(name)
