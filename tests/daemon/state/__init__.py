"""The in-memory state (daemon/postcompact/state/): the lines seen, the content ceiling."""
