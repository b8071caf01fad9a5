"""The state database (daemon/postcompact/persist/): both stores, failed writes, restarts,
the fleet."""
