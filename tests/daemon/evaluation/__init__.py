"""`postcompact eval` (daemon/postcompact/evaluation/)."""
