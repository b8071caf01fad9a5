"""The restoration pipeline (daemon/postcompact/restore/): Compact's rules, profiles, policy,
outcome."""
