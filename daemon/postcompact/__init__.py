"""postcompact: restores coding agents' working state after context compaction."""

from postcompact.core import __version__

__all__ = ["API_VERSION", "__version__"]

#: The protobuf package the daemon serves (`proto/postcompact/v1`), in its status answers and
#: `postcompact version`.
API_VERSION = "postcompact.v1"
