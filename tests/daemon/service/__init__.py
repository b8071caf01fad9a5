"""The services (daemon/postcompact/service/): files, ReadFile, CheckWrite, sessions, agents,
tokens."""
