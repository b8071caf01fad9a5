"""The `postcompact` command line (cli.py)."""
