"""Typed surface of the Rust extension `postcompact._core` (checked by mypy.stubtest)."""

__version__: str

# --- cache: LruCache, FileState, FileStateCache, expand_path (rust_core/src/py/py_cache.rs) ---

# --- tokens: estimate, count, truncate_to_tokens and batch forms (rust_core/src/py/py_tokens.rs) ---
