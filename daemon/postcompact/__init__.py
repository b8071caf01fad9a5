"""postcompact: restores coding agents' working state after context compaction."""

from postcompact.core import __version__

__all__ = ["__version__"]
