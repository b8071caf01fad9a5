"""gRPC-facing services: sessions, files, tokens."""
