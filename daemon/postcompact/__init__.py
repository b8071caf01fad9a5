"""postcompact: restores coding agents' working state after context compaction."""

from postcompact._core import __version__

__all__ = ["__version__"]
