"""The repository's own rules: make lint's house checks, the README."""
