"""Generated from proto/postcompact/v1 by `make protos`."""
